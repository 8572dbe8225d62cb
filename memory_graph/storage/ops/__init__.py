"""The store's operations: one generator per operation, no I/O.

Each operation yields :class:`~memory_graph.storage.driver.Query` objects (SQL and
parameters as data) and receives their results; :mod:`memory_graph.storage.driver` runs the
same generator on a sync or an async connection inside one transaction. Beside the
operations by area live the pieces they share: row mapping (:mod:`.rows`), the commit
statement (:mod:`.commit`), the per-owner recall pool (:mod:`.recall_cache`).
"""
