-- Articles scheduled for a time already past leave the announcer's index
-- (issue 35).
--
-- cms_articles_announce_due() (sql/0024) announces a scheduled article
-- whose time came after its last write (published_at > updated_at); one
-- whose time had already come when it was saved got its event from that
-- save and is never announced.  Its index (sql/0039) left out the
-- announced articles only, so those stayed in it for good, and each pass
-- of the job (every cms_events_interval) read all of them to find none:
-- 25,000 such articles made every pass read 25,000 rows.  The save now
-- marks them announced (announced_for, sql/0051), which takes them out of
-- the index; the rows already there are marked here.  (The index keeps
-- updated_at out of its predicate, so that an edit stays a heap-only
-- update: docs/fleet.md.)
BEGIN;

UPDATE articles SET announced_for = published_at
 WHERE status = 'scheduled' AND deleted_at IS NULL
   AND announced_for IS DISTINCT FROM published_at
   AND published_at <= updated_at;

COMMIT;
