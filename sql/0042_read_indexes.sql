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
CREATE INDEX CONCURRENTLY IF NOT EXISTS members_list_idx
    ON members (workspace_id, created_at, user_id);
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS podcast_episodes_updated_idx
    ON podcast_episodes (show_id, updated_at);
