-- Stored objects removed for certain (issue 32, docs/object-storage.md
-- "Deletes and orphans").  Whatever stops naming an object queues its
-- key here, in the transaction of the change: a media asset deleted (a
-- studio DELETE, an expired reservation, its workspace deleted) or its
-- key given up (finalized with a URL instead), a user's avatar replaced,
-- removed, or the user deleted.  The request that made the change removes
-- the object at once as before; worker 0's sweeper
-- (ngx_http_cms_store_sweep.c) removes every queued key once it is due,
-- again (a removal is idempotent: an object already gone is no failure),
-- and retries a failure later each time (2^attempts seconds, at most five
-- minutes), never giving up: a removal is never lost.
--
-- The sweeper also lists the bucket (or walks the folder) now and then
-- and queues the keys of objects no row names that are older than the
-- longest an upload may take (docs): objects a crash left behind.  A key
-- a row names again is never removed (claiming skips and drops it).
BEGIN;

CREATE TABLE object_removals (
    storage_key    text PRIMARY KEY
                   CHECK (length(storage_key) BETWEEN 1 AND 512),
    attempts       integer NOT NULL DEFAULT 0,
    next_at        timestamptz NOT NULL,
    claimed_until  timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX object_removals_due_idx ON object_removals (next_at);

-- what names an object: looked up per key by the sweeper
CREATE INDEX media_assets_storage_key_idx ON media_assets (storage_key)
    WHERE storage_key <> '';
CREATE INDEX users_avatar_key_idx ON users (avatar_key)
    WHERE avatar_key IS NOT NULL;


CREATE FUNCTION cms_object_named(p_key text)
    RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT EXISTS (SELECT 1 FROM media_assets WHERE storage_key = p_key)
            OR EXISTS (SELECT 1 FROM users WHERE avatar_key = p_key) $$;


-- the request removes the object at once; the sweeper's removal follows
-- ten seconds later (a queued key stays queued: it is due already)
CREATE FUNCTION cms_object_removal_queue(p_key text)
    RETURNS void
    LANGUAGE sql
    AS $$
        INSERT INTO object_removals (storage_key, next_at)
        VALUES (p_key, now() + interval '10 seconds')
        ON CONFLICT (storage_key) DO NOTHING $$;


-- the trigger of a table whose column (TG_ARGV[0]) names an object
CREATE FUNCTION cms_object_gone() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    gone  text := to_jsonb(OLD) ->> TG_ARGV[0];
BEGIN
    IF coalesce(gone, '') <> ''
       AND (TG_OP = 'DELETE'
            OR (to_jsonb(NEW) ->> TG_ARGV[0]) IS DISTINCT FROM gone)
    THEN
        PERFORM cms_object_removal_queue(gone);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER media_assets_object_gone
    AFTER UPDATE OF storage_key OR DELETE ON media_assets
    FOR EACH ROW EXECUTE FUNCTION cms_object_gone('storage_key');

CREATE TRIGGER users_avatar_object_gone
    AFTER UPDATE OF avatar_key OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION cms_object_gone('avatar_key');


-- Up to p_limit due keys, leased for p_lease; a due key a row names
-- again is dropped, never handed out.
CREATE FUNCTION cms_object_removals_claim(p_limit integer, p_lease interval)
    RETURNS TABLE (storage_key text)
    LANGUAGE sql
    AS $$
        WITH due AS (
            SELECT d.storage_key, cms_object_named(d.storage_key) AS named
              FROM object_removals d
             WHERE d.next_at <= now()
               AND (d.claimed_until IS NULL OR d.claimed_until < now())
             ORDER BY d.next_at
             LIMIT p_limit
               FOR UPDATE SKIP LOCKED
        ), dropped AS (
            DELETE FROM object_removals o USING due
             WHERE o.storage_key = due.storage_key AND due.named
        )
        UPDATE object_removals o SET claimed_until = now() + p_lease
          FROM due
         WHERE o.storage_key = due.storage_key AND NOT due.named
        RETURNING o.storage_key $$;


-- A round's end: the removed keys' rows deleted; the keys whose removal
-- failed wait again, 2^attempts seconds (at most five minutes).
CREATE FUNCTION cms_object_removals_settle(p_removed text[],
                                           p_failed text[])
    RETURNS void
    LANGUAGE sql
    AS $$
        DELETE FROM object_removals WHERE storage_key = ANY (p_removed);
        UPDATE object_removals
           SET attempts = attempts + 1, claimed_until = NULL,
               next_at = now() + make_interval(
                   secs => least(power(2, least(attempts + 1, 9)), 300))
         WHERE storage_key = ANY (p_failed) $$;


-- A listing's keys older than the longest upload: those no row names are
-- queued, due now; how many were.
CREATE FUNCTION cms_object_orphans(p_keys text[])
    RETURNS bigint
    LANGUAGE sql
    AS $$
        WITH queued AS (
            INSERT INTO object_removals (storage_key, next_at)
            SELECT k, now() FROM unnest(p_keys) k
             WHERE NOT cms_object_named(k)
            ON CONFLICT (storage_key) DO NOTHING
            RETURNING 1)
        SELECT count(*) FROM queued $$;

COMMIT;
