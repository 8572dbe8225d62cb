"""Where the database comes from: DSN resolution, ``setup()``, the embedded server launcher."""
