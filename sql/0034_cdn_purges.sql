-- Purges of a shared cache in front of the public surface (issue 31,
-- docs/public-surface.md "Purging on publish").  Every answer of
-- /v1/public carries Surrogate-Key "site-<id>"; whatever changes what the
-- site answers queues a purge of that key here, in the transaction of the
-- change: the site row itself changing (a publish raises its
-- content_version, and so does a page created, changed or deleted, or the
-- default locale; a key rotated, a name, origin or status changed; the
-- site deleted), and a custom module's published entries changing (the
-- entries routes read them, and no content_version names them).
--
-- Worker 0 of a host with "cms_cdn_purge" claims due rows for a lease
-- (FOR UPDATE SKIP LOCKED: two hosts never send one row), sends
-- "PURGE" with "xkey: <keys>" to every target, and deletes the rows once
-- every target said 2xx; otherwise the rows wait again, later each time,
-- and are dropped after 12 attempts (a cache keeps an answer minutes, not
-- hours).  One waiting row per key: a change while a purge of its key
-- waits makes it due now and adds nothing, one while a purge is in flight
-- queues the next.
-- Rows no host sends are removed a day after they were queued by the
-- periodic purge job (cms_purge_interval).
BEGIN;

CREATE TABLE cdn_purges (
    id             bigserial PRIMARY KEY,
    keys           text NOT NULL CHECK (length(keys) BETWEEN 1 AND 200),
    attempts       integer NOT NULL DEFAULT 0,
    next_at        timestamptz NOT NULL DEFAULT now(),
    claimed_until  timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX cdn_purges_waiting_key ON cdn_purges (keys)
    WHERE claimed_until IS NULL;
CREATE INDEX cdn_purges_due_idx ON cdn_purges (next_at);


-- a waiting row of the key covers the change, due now (a retry's row
-- waiting out its delay is made due again, its count started over)
CREATE FUNCTION cms_cdn_purge_queue(p_keys text)
    RETURNS void
    LANGUAGE sql
    AS $$
        INSERT INTO cdn_purges (keys) VALUES (p_keys)
        ON CONFLICT (keys) WHERE claimed_until IS NULL
        DO UPDATE SET next_at = now(), attempts = 0, created_at = now()
         WHERE cdn_purges.next_at > now() $$;


CREATE FUNCTION cms_cdn_purge_site_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM cms_cdn_purge_queue('site-' || OLD.id);
    RETURN NULL;
END $$;

CREATE TRIGGER sites_cdn_purge
    AFTER UPDATE OR DELETE ON sites
    FOR EACH ROW EXECUTE FUNCTION cms_cdn_purge_site_changed();


-- an entry published, changed while published, unpublished or deleted;
-- a module changed (renamed, disabled) or deleted: the workspace's site
-- (one at most)
CREATE FUNCTION cms_cdn_purge_workspace(p_workspace uuid)
    RETURNS void
    LANGUAGE sql
    AS $$
        SELECT cms_cdn_purge_queue('site-' || s.id)
          FROM sites s WHERE s.workspace_id = p_workspace $$;

CREATE FUNCTION cms_cdn_purge_entries_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.status = 'published' THEN
            PERFORM cms_cdn_purge_workspace(OLD.workspace_id);
        END IF;
    ELSIF NEW.status = 'published'
          OR (TG_OP = 'UPDATE' AND OLD.status = 'published')
    THEN
        PERFORM cms_cdn_purge_workspace(NEW.workspace_id);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER custom_entries_cdn_purge
    AFTER INSERT OR UPDATE OR DELETE ON custom_entries
    FOR EACH ROW EXECUTE FUNCTION cms_cdn_purge_entries_changed();

CREATE FUNCTION cms_cdn_purge_module_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM cms_cdn_purge_workspace(OLD.workspace_id);
    RETURN NULL;
END $$;

CREATE TRIGGER custom_modules_cdn_purge
    AFTER UPDATE OR DELETE ON custom_modules
    FOR EACH ROW EXECUTE FUNCTION cms_cdn_purge_module_changed();


-- Up to p_limit due rows (never claimed, or their lease run out), leased
-- for p_lease.
CREATE FUNCTION cms_cdn_purges_claim(p_limit integer, p_lease interval)
    RETURNS TABLE (id bigint, keys text)
    LANGUAGE sql
    AS $$
        UPDATE cdn_purges c SET claimed_until = now() + p_lease
         WHERE c.id IN (SELECT d.id FROM cdn_purges d
                         WHERE d.next_at <= now()
                           AND (d.claimed_until IS NULL
                                OR d.claimed_until < now())
                         ORDER BY d.next_at
                         LIMIT p_limit
                         FOR UPDATE SKIP LOCKED)
        RETURNING c.id, c.keys $$;


-- A send that failed: the rows wait again, 2^attempts seconds (at most
-- five minutes), unless a waiting row has their key already; the 12th
-- failure drops them.
CREATE FUNCTION cms_cdn_purges_retry(p_ids bigint[])
    RETURNS void
    LANGUAGE sql
    AS $$
        WITH gone AS (DELETE FROM cdn_purges WHERE id = ANY (p_ids)
                      RETURNING keys, attempts, created_at)
        INSERT INTO cdn_purges (keys, attempts, next_at, created_at)
        SELECT keys, attempts + 1,
               now() + least(interval '1 second' * power(2, attempts + 1),
                             interval '5 minutes'),
               created_at
          FROM gone WHERE attempts + 1 < 12
        ON CONFLICT (keys) WHERE claimed_until IS NULL DO NOTHING $$;


-- rows no host sent, a day after they were queued
CREATE FUNCTION cms_cdn_purges_expire()
    RETURNS integer
    LANGUAGE sql
    AS $$
    WITH d AS (DELETE FROM cdn_purges
                WHERE created_at < now() - interval '1 day'
                RETURNING 1)
    SELECT count(*)::integer FROM d $$;

COMMIT;
