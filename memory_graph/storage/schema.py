"""Migrations: an ordered list of SQL strings. A string's position is its version.

Entries are never removed or reordered; every statement is idempotent. ``setup()`` applies
the ones not yet recorded in ``mg_migrations`` under an advisory lock, each in its own
transaction together with its ``mg_migrations`` row.

Every table except the two bookkeeping tables (``mg_migrations``, ``mg_meta``) is keyed by
``scope_id`` first, so that a sharded deployment can distribute rows by it.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "RECALL_STATS_REFRESH", "SETUP_LOCK_KEY"]

SETUP_LOCK_KEY = 0x6D656D6F7279  # "memory": pg_advisory_xact_lock key for setup()

# Migration v6's recount of its statistics: part of v6's text, which never changes (v13 drops
# mg_term_df and mg_postings).
_V6_STATS_REFRESH = """
    INSERT INTO mg_term_df (scope_id, token, agent_key, workspace_key, sensitivity, df)
    SELECT scope_id, token, agent_key, workspace_key, sensitivity, count(*)
    FROM mg_postings GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (scope_id, token, agent_key, workspace_key, sensitivity)
    DO UPDATE SET df = EXCLUDED.df;
    UPDATE mg_term_df t SET df = 0 WHERE df <> 0 AND NOT EXISTS (
        SELECT 1 FROM mg_postings p WHERE p.scope_id = t.scope_id AND p.token = t.token
        AND p.agent_key = t.agent_key AND p.workspace_key = t.workspace_key
        AND p.sensitivity = t.sensitivity);
    INSERT INTO mg_pool_stats (scope_id, agent_key, workspace_key, sensitivity, n)
    SELECT scope_id, agent_key, workspace_key, sensitivity, count(*)
    FROM mg_records WHERE status = 'active' GROUP BY 1, 2, 3, 4
    ON CONFLICT (scope_id, agent_key, workspace_key, sensitivity)
    DO UPDATE SET n = EXCLUDED.n;
"""
RECALL_STATS_REFRESH = """
    INSERT INTO mg_pool_stats (scope_id, agent_key, workspace_key, sensitivity, n)
    SELECT scope_id, agent_key, workspace_key, sensitivity, count(*)
    FROM mg_records WHERE status = 'active' GROUP BY 1, 2, 3, 4
    ON CONFLICT (scope_id, agent_key, workspace_key, sensitivity)
    DO UPDATE SET n = EXCLUDED.n;
    UPDATE mg_pool_stats s SET n = 0 WHERE n <> 0 AND NOT EXISTS (
        SELECT 1 FROM mg_records r WHERE r.status = 'active' AND r.scope_id = s.scope_id
        AND r.agent_key = s.agent_key AND r.workspace_key = s.workspace_key
        AND r.sensitivity = s.sensitivity);
"""
"""Recomputes ``mg_pool_stats`` (the capacity bound of migration v6) from ``mg_records``
(idempotent; for loaders that write ``mg_records`` with triggers disabled)."""

MIGRATIONS: list[str] = [
    # v0: bookkeeping
    """
    CREATE TABLE IF NOT EXISTS mg_migrations (
        v integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS mg_meta (
        key text PRIMARY KEY,
        value text NOT NULL
    );
    """,
    # v1: records (memories and keyed preferences), with their token index
    """
    CREATE TABLE IF NOT EXISTS mg_records (
        scope_id text NOT NULL,
        id uuid NOT NULL,
        level text NOT NULL,
        agent_key text NOT NULL DEFAULT '',
        workspace_key text NOT NULL DEFAULT '',
        kind text NOT NULL,
        key text,
        content text NOT NULL,
        trust text NOT NULL,
        sensitivity text NOT NULL,
        confidence double precision NOT NULL,
        source text NOT NULL,
        source_event_id text,
        observed_at timestamptz,
        quote text,
        thread_id text,
        uri text,
        knowledge jsonb,
        claim_key text,
        claim_value text,
        expires_at timestamptz,
        supersedes uuid,
        status text NOT NULL DEFAULT 'active',
        version integer NOT NULL DEFAULT 1,
        content_hash text NOT NULL,
        tokens text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope_id, id)
    );
    CREATE INDEX IF NOT EXISTS mg_records_identity
        ON mg_records (scope_id, agent_key, workspace_key, status);
    CREATE UNIQUE INDEX IF NOT EXISTS mg_records_pref_key
        ON mg_records (scope_id, agent_key, workspace_key, key)
        WHERE kind = 'preference';
    CREATE INDEX IF NOT EXISTS mg_records_hash
        ON mg_records (scope_id, agent_key, workspace_key, content_hash);
    CREATE INDEX IF NOT EXISTS mg_records_claim
        ON mg_records (scope_id, claim_key) WHERE claim_key IS NOT NULL;
    CREATE TABLE IF NOT EXISTS mg_record_tokens (
        scope_id text NOT NULL,
        token text NOT NULL,
        record_id uuid NOT NULL,
        PRIMARY KEY (scope_id, token, record_id)
    );
    CREATE INDEX IF NOT EXISTS mg_record_tokens_record
        ON mg_record_tokens (scope_id, record_id);
    """,
    # v2: profile and persona
    """
    CREATE TABLE IF NOT EXISTS mg_profiles (
        scope_id text NOT NULL PRIMARY KEY,
        fields jsonb NOT NULL DEFAULT '{}'::jsonb,
        revision integer NOT NULL DEFAULT 0,
        updated_at timestamptz,
        recorded_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS mg_personas (
        scope_id text NOT NULL,
        agent_key text NOT NULL DEFAULT '',
        assistant_values text,
        assistant_identity text,
        bootstrap text,
        onboarded_at timestamptz,
        revision integer NOT NULL DEFAULT 0,
        updated_at timestamptz,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope_id, agent_key)
    );
    """,
    # v3: proposals, grants and the audit log
    """
    CREATE TABLE IF NOT EXISTS mg_proposals (
        scope_id text NOT NULL,
        id text NOT NULL,
        level text NOT NULL,
        agent_key text NOT NULL DEFAULT '',
        workspace_key text NOT NULL DEFAULT '',
        operation text NOT NULL,
        target_id text,
        base_version integer,
        args jsonb NOT NULL,
        payload_hash text NOT NULL,
        diff text NOT NULL,
        evidence jsonb NOT NULL DEFAULT '{}'::jsonb,
        guard jsonb NOT NULL DEFAULT '{}'::jsonb,
        status text NOT NULL DEFAULT 'pending',
        idempotency_key text NOT NULL,
        thread_id text,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        decided_at timestamptz,
        actor text,
        decision jsonb,
        result jsonb,
        grant_id text,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope_id, id)
    );
    CREATE INDEX IF NOT EXISTS mg_proposals_status
        ON mg_proposals (scope_id, status, created_at);
    CREATE TABLE IF NOT EXISTS mg_grants (
        scope_id text NOT NULL,
        id text NOT NULL,
        agent_key text NOT NULL DEFAULT '',
        workspace_key text NOT NULL DEFAULT '',
        expires_at timestamptz NOT NULL,
        kinds text[] NOT NULL,
        operations text[] NOT NULL,
        max_mutations integer NOT NULL,
        max_bytes integer NOT NULL,
        used_mutations integer NOT NULL DEFAULT 0,
        used_bytes integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz,
        PRIMARY KEY (scope_id, id)
    );
    CREATE TABLE IF NOT EXISTS mg_audit (
        scope_id text NOT NULL,
        seq bigserial NOT NULL,
        target_kind text NOT NULL,
        target_id text,
        action text NOT NULL,
        before jsonb,
        after jsonb,
        version integer,
        proposal_id text,
        actor text NOT NULL,
        at timestamptz NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope_id, seq)
    );
    """,
    # v4: audit rows carry the identity, so audit_log() shows an owner only what it can see
    """
    ALTER TABLE mg_audit ADD COLUMN IF NOT EXISTS agent_key text NOT NULL DEFAULT '';
    ALTER TABLE mg_audit ADD COLUMN IF NOT EXISTS workspace_key text NOT NULL DEFAULT '';
    CREATE INDEX IF NOT EXISTS mg_audit_target ON mg_audit (scope_id, target_id);
    """,
    # v5: recall postings. mg_record_tokens rows copied with the record's identity and filter
    # columns, so that search scores and counts document frequencies with an index-only scan
    # over the owner's visible identities only (other users' and identities' rows are never
    # read). Kept in step with mg_record_tokens by statement triggers, in the same transaction
    # as every token write (record writes and the tokenizer rebuild alike). Plus a covering
    # partial index for the pool size and one for kind-filtered reads (standing guidance).
    """
    CREATE TABLE IF NOT EXISTS mg_postings (
        scope_id text NOT NULL,
        token text NOT NULL,
        agent_key text NOT NULL,
        workspace_key text NOT NULL,
        record_id uuid NOT NULL,
        sensitivity text NOT NULL,
        kind text NOT NULL,
        trust text NOT NULL,
        expires_at timestamptz,
        PRIMARY KEY (scope_id, token, agent_key, workspace_key, record_id)
            INCLUDE (sensitivity, kind, trust, expires_at)
    );
    CREATE INDEX IF NOT EXISTS mg_postings_record ON mg_postings (scope_id, record_id);
    CREATE OR REPLACE FUNCTION mg_postings_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO mg_postings (scope_id, token, agent_key, workspace_key, record_id,
                                 sensitivity, kind, trust, expires_at)
        SELECT n.scope_id, n.token, r.agent_key, r.workspace_key, n.record_id,
               r.sensitivity, r.kind, r.trust, r.expires_at
        FROM mg_new_tokens n JOIN mg_records r ON r.scope_id = n.scope_id AND r.id = n.record_id
        ON CONFLICT (scope_id, token, agent_key, workspace_key, record_id) DO UPDATE
        SET sensitivity = EXCLUDED.sensitivity, kind = EXCLUDED.kind,
            trust = EXCLUDED.trust, expires_at = EXCLUDED.expires_at;
        RETURN NULL;
    END $$;
    CREATE OR REPLACE FUNCTION mg_postings_drop() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM mg_postings p USING mg_old_tokens o
        WHERE p.scope_id = o.scope_id AND p.token = o.token AND p.record_id = o.record_id;
        RETURN NULL;
    END $$;
    DROP TRIGGER IF EXISTS mg_record_tokens_add ON mg_record_tokens;
    CREATE TRIGGER mg_record_tokens_add AFTER INSERT ON mg_record_tokens
        REFERENCING NEW TABLE AS mg_new_tokens
        FOR EACH STATEMENT EXECUTE FUNCTION mg_postings_add();
    DROP TRIGGER IF EXISTS mg_record_tokens_drop ON mg_record_tokens;
    CREATE TRIGGER mg_record_tokens_drop AFTER DELETE ON mg_record_tokens
        REFERENCING OLD TABLE AS mg_old_tokens
        FOR EACH STATEMENT EXECUTE FUNCTION mg_postings_drop();
    INSERT INTO mg_postings (scope_id, token, agent_key, workspace_key, record_id,
                             sensitivity, kind, trust, expires_at)
    SELECT t.scope_id, t.token, r.agent_key, r.workspace_key, t.record_id,
           r.sensitivity, r.kind, r.trust, r.expires_at
    FROM mg_record_tokens t JOIN mg_records r ON r.scope_id = t.scope_id AND r.id = t.record_id
    ON CONFLICT DO NOTHING;
    CREATE INDEX IF NOT EXISTS mg_records_pool
        ON mg_records (scope_id, agent_key, workspace_key, sensitivity) INCLUDE (expires_at)
        WHERE status = 'active';
    CREATE INDEX IF NOT EXISTS mg_records_kind
        ON mg_records (scope_id, agent_key, workspace_key, kind, trust, confidence DESC, id)
        WHERE status = 'active';
    """,
    # v6: recall statistics without scanning. mg_term_df holds each token's document frequency
    # per identity and sensitivity, kept in step with mg_postings by statement triggers (so in
    # the same transaction as every token write); mg_pool_stats holds the number of active
    # records per identity and sensitivity, kept in step with mg_records. Both count active
    # rows regardless of expiry (expiry is time-dependent): IDF statistics may include a
    # record that expired since its last write, while candidates and results still apply
    # expiry exactly. Both are keyed by scope_id first and read only for the owner's
    # identities, like mg_postings.
    """
    CREATE TABLE IF NOT EXISTS mg_term_df (
        scope_id text NOT NULL,
        token text NOT NULL,
        agent_key text NOT NULL,
        workspace_key text NOT NULL,
        sensitivity text NOT NULL,
        df bigint NOT NULL,
        PRIMARY KEY (scope_id, token, agent_key, workspace_key, sensitivity) INCLUDE (df)
    );
    CREATE TABLE IF NOT EXISTS mg_pool_stats (
        scope_id text NOT NULL,
        agent_key text NOT NULL,
        workspace_key text NOT NULL,
        sensitivity text NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (scope_id, agent_key, workspace_key, sensitivity) INCLUDE (n)
    );
    CREATE OR REPLACE FUNCTION mg_term_df_sync() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        -- Only the branch for this event is planned, so the missing transition table of
        -- the other events is never referenced.
        IF TG_OP = 'INSERT' THEN
            INSERT INTO mg_term_df AS t
                (scope_id, token, agent_key, workspace_key, sensitivity, df)
            SELECT scope_id, token, agent_key, workspace_key, sensitivity, count(*)
            FROM mg_df_new GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
            ON CONFLICT (scope_id, token, agent_key, workspace_key, sensitivity)
            DO UPDATE SET df = t.df + EXCLUDED.df;
        ELSIF TG_OP = 'DELETE' THEN
            INSERT INTO mg_term_df AS t
                (scope_id, token, agent_key, workspace_key, sensitivity, df)
            SELECT scope_id, token, agent_key, workspace_key, sensitivity, -count(*)
            FROM mg_df_old GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
            ON CONFLICT (scope_id, token, agent_key, workspace_key, sensitivity)
            DO UPDATE SET df = t.df + EXCLUDED.df;
        ELSE
            INSERT INTO mg_term_df AS t
                (scope_id, token, agent_key, workspace_key, sensitivity, df)
            SELECT scope_id, token, agent_key, workspace_key, sensitivity, sum(d)
            FROM (SELECT scope_id, token, agent_key, workspace_key, sensitivity, 1 AS d
                  FROM mg_df_new
                  UNION ALL
                  SELECT scope_id, token, agent_key, workspace_key, sensitivity, -1
                  FROM mg_df_old) x
            GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4, 5
            ON CONFLICT (scope_id, token, agent_key, workspace_key, sensitivity)
            DO UPDATE SET df = t.df + EXCLUDED.df;
        END IF;
        RETURN NULL;
    END $$;
    DROP TRIGGER IF EXISTS mg_postings_df_ins ON mg_postings;
    CREATE TRIGGER mg_postings_df_ins AFTER INSERT ON mg_postings
        REFERENCING NEW TABLE AS mg_df_new
        FOR EACH STATEMENT EXECUTE FUNCTION mg_term_df_sync();
    DROP TRIGGER IF EXISTS mg_postings_df_del ON mg_postings;
    CREATE TRIGGER mg_postings_df_del AFTER DELETE ON mg_postings
        REFERENCING OLD TABLE AS mg_df_old
        FOR EACH STATEMENT EXECUTE FUNCTION mg_term_df_sync();
    DROP TRIGGER IF EXISTS mg_postings_df_upd ON mg_postings;
    CREATE TRIGGER mg_postings_df_upd AFTER UPDATE ON mg_postings
        REFERENCING OLD TABLE AS mg_df_old NEW TABLE AS mg_df_new
        FOR EACH STATEMENT EXECUTE FUNCTION mg_term_df_sync();
    CREATE OR REPLACE FUNCTION mg_pool_stats_sync() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO mg_pool_stats AS s (scope_id, agent_key, workspace_key, sensitivity, n)
            SELECT scope_id, agent_key, workspace_key, sensitivity, count(*)
            FROM mg_pool_new WHERE status = 'active'
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
            ON CONFLICT (scope_id, agent_key, workspace_key, sensitivity)
            DO UPDATE SET n = s.n + EXCLUDED.n;
        ELSIF TG_OP = 'DELETE' THEN
            INSERT INTO mg_pool_stats AS s (scope_id, agent_key, workspace_key, sensitivity, n)
            SELECT scope_id, agent_key, workspace_key, sensitivity, -count(*)
            FROM mg_pool_old WHERE status = 'active'
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
            ON CONFLICT (scope_id, agent_key, workspace_key, sensitivity)
            DO UPDATE SET n = s.n + EXCLUDED.n;
        ELSE
            INSERT INTO mg_pool_stats AS s (scope_id, agent_key, workspace_key, sensitivity, n)
            SELECT scope_id, agent_key, workspace_key, sensitivity, sum(d)
            FROM (SELECT scope_id, agent_key, workspace_key, sensitivity, 1 AS d
                  FROM mg_pool_new WHERE status = 'active'
                  UNION ALL
                  SELECT scope_id, agent_key, workspace_key, sensitivity, -1
                  FROM mg_pool_old WHERE status = 'active') x
            GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
            ON CONFLICT (scope_id, agent_key, workspace_key, sensitivity)
            DO UPDATE SET n = s.n + EXCLUDED.n;
        END IF;
        RETURN NULL;
    END $$;
    DROP TRIGGER IF EXISTS mg_records_pool_ins ON mg_records;
    CREATE TRIGGER mg_records_pool_ins AFTER INSERT ON mg_records
        REFERENCING NEW TABLE AS mg_pool_new
        FOR EACH STATEMENT EXECUTE FUNCTION mg_pool_stats_sync();
    DROP TRIGGER IF EXISTS mg_records_pool_del ON mg_records;
    CREATE TRIGGER mg_records_pool_del AFTER DELETE ON mg_records
        REFERENCING OLD TABLE AS mg_pool_old
        FOR EACH STATEMENT EXECUTE FUNCTION mg_pool_stats_sync();
    DROP TRIGGER IF EXISTS mg_records_pool_upd ON mg_records;
    CREATE TRIGGER mg_records_pool_upd AFTER UPDATE ON mg_records
        REFERENCING OLD TABLE AS mg_pool_old NEW TABLE AS mg_pool_new
        FOR EACH STATEMENT EXECUTE FUNCTION mg_pool_stats_sync();
    """
    + _V6_STATS_REFRESH,
    # v7: thread owners. The first turn of a LangGraph thread records the principal that
    # started it (user scope, workspace and agent digests); any other principal is refused
    # (``ThreadOwnerError``). The raw thread id is kept (it is the application's id, needed to
    # find and erase the thread's checkpoints) and is unique across owners.
    """
    CREATE TABLE IF NOT EXISTS mg_threads (
        scope_id text NOT NULL,
        thread_id text NOT NULL,
        agent_key text NOT NULL,
        workspace_key text NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (scope_id, thread_id)
    );
    CREATE UNIQUE INDEX IF NOT EXISTS mg_threads_thread ON mg_threads (thread_id)
        INCLUDE (scope_id, agent_key, workspace_key);
    """,
    # v8: tool evidence. An index of tool results that stay re-readable after trimming; the
    # raw result stays in the thread's checkpointed history, never here (digests only).
    """
    CREATE TABLE IF NOT EXISTS mg_evidence (
        scope_id text NOT NULL,
        ref text NOT NULL,
        agent_key text NOT NULL,
        workspace_key text NOT NULL,
        thread_id text NOT NULL,
        message_id text NOT NULL,
        position integer NOT NULL,
        step integer,
        tool_name text NOT NULL,
        call_id text NOT NULL,
        args_digest text NOT NULL,
        result_digest text NOT NULL,
        size bigint NOT NULL,
        arg_summary text NOT NULL,
        file_path text,
        file_size bigint,
        file_mtime_ns bigint,
        file_digest text,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (scope_id, ref)
    );
    CREATE UNIQUE INDEX IF NOT EXISTS mg_evidence_message
        ON mg_evidence (scope_id, thread_id, message_id);
    """,
    # v9: issue 8 §1, a replace/remove proposal lives at its target's level. Earlier versions
    # stored it at 'user' by default; move such rows (and their proposal audit rows) to the
    # target record's identity, so they are seen exactly by those who see the target.
    """
    UPDATE mg_audit a SET agent_key = r.agent_key, workspace_key = r.workspace_key
    FROM mg_proposals p JOIN mg_records r ON r.scope_id = p.scope_id AND r.id::text = p.target_id
    WHERE p.operation IN ('replace', 'remove')
      AND (p.agent_key, p.workspace_key) IS DISTINCT FROM (r.agent_key, r.workspace_key)
      AND a.scope_id = p.scope_id AND a.proposal_id = p.id AND a.target_kind = 'proposal';
    UPDATE mg_proposals p SET level = r.level, agent_key = r.agent_key,
        workspace_key = r.workspace_key
    FROM mg_records r
    WHERE r.scope_id = p.scope_id AND r.id::text = p.target_id
      AND p.operation IN ('replace', 'remove')
      AND (p.agent_key, p.workspace_key) IS DISTINCT FROM (r.agent_key, r.workspace_key);
    """,
    # v10: remembered rejections: a proposal a person rejected is not proposed
    # again while its row is unexpired. Keyed by scope_id first (erasing a user deletes by
    # scope_id); the fingerprint covers the target identity, operation, target and the
    # folded args (see ops/rejections.py).
    """
    CREATE TABLE IF NOT EXISTS mg_rejections (
        scope_id      text NOT NULL,
        fingerprint   text NOT NULL,
        agent_key     text NOT NULL,
        workspace_key text NOT NULL,
        level         text NOT NULL,
        operation     text NOT NULL,
        target_key    text,
        proposal_id   text NOT NULL,
        rejected_at   timestamptz NOT NULL,
        expires_at    timestamptz NOT NULL,
        PRIMARY KEY (scope_id, fingerprint)
    );
    """,
    # v11 (privacy): what the retention sweep looks for, indexed so that each bounded batch
    # reads only due rows: pending proposals by expiry, inactive records by removal time,
    # expiring records, audit rows that still have content by time.
    """
    CREATE INDEX IF NOT EXISTS mg_proposals_due ON mg_proposals (expires_at)
        WHERE status = 'pending';
    CREATE INDEX IF NOT EXISTS mg_proposals_decided
        ON mg_proposals ((coalesce(decided_at, expires_at))) WHERE status <> 'pending';
    CREATE INDEX IF NOT EXISTS mg_records_inactive ON mg_records (recorded_at)
        WHERE status <> 'active';
    CREATE INDEX IF NOT EXISTS mg_records_expiry ON mg_records (expires_at)
        WHERE expires_at IS NOT NULL;
    CREATE INDEX IF NOT EXISTS mg_audit_content ON mg_audit (at)
        WHERE before IS NOT NULL OR after IS NOT NULL;
    """,
    # v12: the recall version stamp. Every insert or update of a record takes the next stamp
    # of its identity (a row lock on mg_recall_stamp, held to commit, so an identity's stamps
    # commit in order) into mg_records.rseq; a delete, or a row leaving its identity, bumps
    # ``resets``. A recall reads its owner's stamps and the rows newer than the ones it holds
    # in one statement, so an in-process pool is kept coherent across processes.
    """
    ALTER TABLE mg_records ADD COLUMN IF NOT EXISTS rseq bigint NOT NULL DEFAULT 0;
    CREATE INDEX IF NOT EXISTS mg_records_rseq
        ON mg_records (scope_id, agent_key, workspace_key, rseq);
    CREATE TABLE IF NOT EXISTS mg_recall_stamp (
        scope_id text NOT NULL,
        agent_key text NOT NULL,
        workspace_key text NOT NULL,
        stamp bigint NOT NULL DEFAULT 0,
        resets bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (scope_id, agent_key, workspace_key) INCLUDE (stamp, resets)
    );
    CREATE OR REPLACE FUNCTION mg_recall_stamp_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND (OLD.scope_id, OLD.agent_key, OLD.workspace_key)
                IS DISTINCT FROM (NEW.scope_id, NEW.agent_key, NEW.workspace_key) THEN
            INSERT INTO mg_recall_stamp AS s (scope_id, agent_key, workspace_key, stamp, resets)
            VALUES (OLD.scope_id, OLD.agent_key, OLD.workspace_key, 1, 1)
            ON CONFLICT (scope_id, agent_key, workspace_key)
            DO UPDATE SET stamp = s.stamp + 1, resets = s.resets + 1;
        END IF;
        INSERT INTO mg_recall_stamp AS s (scope_id, agent_key, workspace_key, stamp)
        VALUES (NEW.scope_id, NEW.agent_key, NEW.workspace_key, 1)
        ON CONFLICT (scope_id, agent_key, workspace_key) DO UPDATE SET stamp = s.stamp + 1
        RETURNING s.stamp INTO NEW.rseq;
        RETURN NEW;
    END $$;
    DROP TRIGGER IF EXISTS mg_records_stamp ON mg_records;
    CREATE TRIGGER mg_records_stamp BEFORE INSERT OR UPDATE ON mg_records
        FOR EACH ROW EXECUTE FUNCTION mg_recall_stamp_row();
    CREATE OR REPLACE FUNCTION mg_recall_stamp_del() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO mg_recall_stamp AS s (scope_id, agent_key, workspace_key, stamp, resets)
        SELECT DISTINCT scope_id, agent_key, workspace_key, 1, 1 FROM mg_stamp_old
        ORDER BY 1, 2, 3
        ON CONFLICT (scope_id, agent_key, workspace_key)
        DO UPDATE SET stamp = s.stamp + 1, resets = s.resets + 1;
        RETURN NULL;
    END $$;
    DROP TRIGGER IF EXISTS mg_records_stamp_del ON mg_records;
    CREATE TRIGGER mg_records_stamp_del AFTER DELETE ON mg_records
        REFERENCING OLD TABLE AS mg_stamp_old
        FOR EACH STATEMENT EXECUTE FUNCTION mg_recall_stamp_del();
    """,
    # v13: issue 14, the server-side token index is gone. Recall tokenizes and ranks in
    # process (storage/ops/recall_cache.py), so nothing reads mg_record_tokens, mg_postings or
    # mg_term_df, and their statement triggers were a third of an approval's commit
    # statement. Dropping a table drops its triggers; then the trigger functions go.
    # mg_pool_stats (the capacity bound) and mg_recall_stamp stay.
    """
    DROP TABLE IF EXISTS mg_term_df;
    DROP TABLE IF EXISTS mg_postings;
    DROP TABLE IF EXISTS mg_record_tokens;
    DROP FUNCTION IF EXISTS mg_term_df_sync();
    DROP FUNCTION IF EXISTS mg_postings_add();
    DROP FUNCTION IF EXISTS mg_postings_drop();
    """,
    # v14: issue 14, the write path's counters. (1) An update keeps mg_pool_stats with a row
    # trigger that fires only when the row enters, leaves or moves within the counted pool
    # (status, sensitivity or identity changed). The statement trigger it replaces captured
    # both transition tables of every update, a preference value change included, to add
    # nothing. Every update of mg_records changes one row (by scope_id and id), so no
    # statement takes two stats rows in an order another one could reverse. Inserts and
    # deletes keep their statement triggers (a bulk load counts once per statement).
    # (2) The counter tables' keys no longer INCLUDE the counters: a counter in the index
    # made every bump of mg_recall_stamp (each record write) and of mg_pool_stats (each
    # add) a non-HOT update with a new index entry; the readers fetch one heap row per key.
    """
    ALTER TABLE mg_recall_stamp DROP CONSTRAINT IF EXISTS mg_recall_stamp_pkey;
    ALTER TABLE mg_recall_stamp ADD CONSTRAINT mg_recall_stamp_pkey
        PRIMARY KEY (scope_id, agent_key, workspace_key);
    ALTER TABLE mg_pool_stats DROP CONSTRAINT IF EXISTS mg_pool_stats_pkey;
    ALTER TABLE mg_pool_stats ADD CONSTRAINT mg_pool_stats_pkey
        PRIMARY KEY (scope_id, agent_key, workspace_key, sensitivity);
    CREATE OR REPLACE FUNCTION mg_pool_stats_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF OLD.status = 'active' THEN
            INSERT INTO mg_pool_stats AS s (scope_id, agent_key, workspace_key, sensitivity, n)
            VALUES (OLD.scope_id, OLD.agent_key, OLD.workspace_key, OLD.sensitivity, -1)
            ON CONFLICT (scope_id, agent_key, workspace_key, sensitivity)
            DO UPDATE SET n = s.n - 1;
        END IF;
        IF NEW.status = 'active' THEN
            INSERT INTO mg_pool_stats AS s (scope_id, agent_key, workspace_key, sensitivity, n)
            VALUES (NEW.scope_id, NEW.agent_key, NEW.workspace_key, NEW.sensitivity, 1)
            ON CONFLICT (scope_id, agent_key, workspace_key, sensitivity)
            DO UPDATE SET n = s.n + 1;
        END IF;
        RETURN NULL;
    END $$;
    DROP TRIGGER IF EXISTS mg_records_pool_upd ON mg_records;
    CREATE TRIGGER mg_records_pool_upd AFTER UPDATE ON mg_records FOR EACH ROW
        WHEN ((OLD.status = 'active' OR NEW.status = 'active')
              AND (OLD.status, OLD.sensitivity, OLD.scope_id, OLD.agent_key, OLD.workspace_key)
                  IS DISTINCT FROM
                  (NEW.status, NEW.sensitivity, NEW.scope_id, NEW.agent_key, NEW.workspace_key))
        EXECUTE FUNCTION mg_pool_stats_row();
    """,
    # v15: issue 25, a thread claim lives in the space of the checkpointer holding the thread
    # (ops/threads.py): ``""`` for persistent savers (this database's checkpoint tables and
    # any saver memory-graph cannot tell apart), ``mem:<token>`` for one InMemorySaver. The
    # unique key becomes (space, thread_id), so an in-memory thread "1" of one application no
    # longer collides with another application's; existing claims stay database-wide ("").
    """
    ALTER TABLE mg_threads ADD COLUMN IF NOT EXISTS space text NOT NULL DEFAULT '';
    ALTER TABLE mg_threads DROP CONSTRAINT IF EXISTS mg_threads_pkey;
    ALTER TABLE mg_threads ADD CONSTRAINT mg_threads_pkey
        PRIMARY KEY (scope_id, space, thread_id);
    CREATE UNIQUE INDEX IF NOT EXISTS mg_threads_space ON mg_threads (space, thread_id)
        INCLUDE (scope_id, agent_key, workspace_key);
    DROP INDEX IF EXISTS mg_threads_thread;
    """,
]
