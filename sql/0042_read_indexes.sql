-- migrate: no transaction
--
-- Indexes the performance pass found missing (issue 35, docs/benchmarks.md),
-- built without locking writes.  Each step may run again: a failed run is
-- run again whole.  A line "-- step" ends a statement the migrators send
-- alone.
--
-- The members list reads a workspace's members in the order they joined
-- (created_at, user_id): without this index a page of 20 sorted the whole
-- membership.  A podcast feed's channel date is the newest change of the
-- show's episodes: max(updated_at) read from the end of this index rather
-- than from every episode of the show.
-- step
-- a build that failed part way leaves its index invalid, which IF NOT
-- EXISTS would keep: dropped first, by name (for later migrations too)
CREATE OR REPLACE FUNCTION cms_drop_invalid_indexes(p_names text[])
    RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    i  regclass;
BEGIN
    FOR i IN SELECT x.indexrelid::regclass FROM pg_index x
              WHERE NOT x.indisvalid
                AND x.indexrelid::regclass::text = ANY (p_names)
    LOOP
        EXECUTE format('DROP INDEX %s', i);
    END LOOP;
END $$;
-- step
SELECT cms_drop_invalid_indexes('{members_list_idx,podcast_episodes_updated_idx}');
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS members_list_idx
    ON members (workspace_id, created_at, user_id);
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS podcast_episodes_updated_idx
    ON podcast_episodes (show_id, updated_at);
