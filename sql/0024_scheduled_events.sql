-- The event a scheduled article owes (issue 16).  A "scheduled" article
-- whose time has come reads as published (cms_article_status) without a
-- write, so no save is there to put article.published in the outbox:
-- worker 0's job (src/ngx_http_cms_jobs.c) calls
-- cms_articles_announce_due() instead.
--
-- Exactly once, across workers, hosts and restarts: the article's row is
-- claimed FOR UPDATE SKIP LOCKED, and "announced_for" (the published_at
-- announced) is set in the transaction that writes the event; a second
-- caller either skips the locked row or, once the first committed, finds
-- it announced.  Only a row last saved before its time is due: a save
-- made after the time had passed saw the article published and wrote the
-- event itself (cms_article_save).  Rescheduling (a new published_at)
-- owes a new announcement.
BEGIN;

ALTER TABLE articles ADD COLUMN announced_for timestamptz;

-- what the job scans: due scheduled rows, oldest first
CREATE INDEX articles_scheduled_due_idx ON articles (published_at)
    WHERE status = 'scheduled' AND deleted_at IS NULL;

-- articles whose time passed before this migration are not announced late
UPDATE articles SET announced_for = published_at
 WHERE status = 'scheduled' AND published_at <= now();

-- Announces up to p_limit due articles; returns how many.
CREATE FUNCTION cms_articles_announce_due(p_limit integer) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    a  articles;
    n  integer := 0;
BEGIN
    FOR a IN
        SELECT * FROM articles
         WHERE status = 'scheduled' AND deleted_at IS NULL
           AND published_at <= now() AND published_at > updated_at
           AND announced_for IS DISTINCT FROM published_at
         ORDER BY published_at
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED
    LOOP
        UPDATE articles SET announced_for = a.published_at WHERE id = a.id;
        INSERT INTO outbox_events (workspace_id, type, data)
            VALUES (a.workspace_id, 'article.published',
                    cms_article_json(a)::jsonb);
        n := n + 1;
    END LOOP;

    RETURN n;
END $$;

COMMIT;
