-- The article list's total without counting the workspace: a counter per
-- (workspace, locale, stored status) of the articles not deleted, kept in
-- the writing transaction by statement triggers.  The list answers its
-- total from at most five counter rows, whatever the workspace holds.
--
-- Why statement triggers with transition tables: one statement that moves
-- many articles (an import, a purge) changes each counter once, and the
-- counters of one statement are written in key order, so two writers
-- moving articles in opposite directions (draft -> published and back)
-- lock them in the same order and never deadlock.  Writers of the same
-- workspace and locale wait on the counter row until commit: article
-- writes are not a hot path (each one is a revision and an event too).
--
-- No foreign key to workspaces: deleting a workspace cascades to its
-- articles, whose trigger would then write counters of a workspace being
-- deleted.  Counter rows of a deleted workspace stay, unread; counters
-- that reach zero stay too (the next article reuses the row).
BEGIN;

CREATE TABLE article_counts (
    workspace_id  uuid NOT NULL,
    locale        text NOT NULL,
    status        text NOT NULL,
    n             bigint NOT NULL,
    PRIMARY KEY (workspace_id, locale, status)
);

-- "scheduled" whose time has come reads as "published"
-- (cms_article_status): the list counts those few from this index.
CREATE INDEX articles_scheduled_idx
    ON articles (workspace_id, locale, published_at)
    WHERE status = 'scheduled' AND deleted_at IS NULL;

CREATE FUNCTION cms_article_counts_apply() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- each branch names only the transition tables its event has
    IF TG_OP = 'INSERT' THEN
        INSERT INTO article_counts AS c (workspace_id, locale, status, n)
            SELECT workspace_id, locale, status, count(*) FROM cms_new
             WHERE deleted_at IS NULL
             GROUP BY workspace_id, locale, status
             ORDER BY workspace_id, locale, status
        ON CONFLICT (workspace_id, locale, status)
            DO UPDATE SET n = c.n + EXCLUDED.n;

    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO article_counts AS c (workspace_id, locale, status, n)
            SELECT workspace_id, locale, status, -count(*) FROM cms_old
             WHERE deleted_at IS NULL
             GROUP BY workspace_id, locale, status
             ORDER BY workspace_id, locale, status
        ON CONFLICT (workspace_id, locale, status)
            DO UPDATE SET n = c.n + EXCLUDED.n;

    ELSE
        INSERT INTO article_counts AS c (workspace_id, locale, status, n)
            SELECT workspace_id, locale, status, sum(d)
              FROM (SELECT workspace_id, locale, status, 1 AS d FROM cms_new
                     WHERE deleted_at IS NULL
                    UNION ALL
                    SELECT workspace_id, locale, status, -1 FROM cms_old
                     WHERE deleted_at IS NULL) x
             GROUP BY workspace_id, locale, status
            HAVING sum(d) <> 0
             ORDER BY workspace_id, locale, status
        ON CONFLICT (workspace_id, locale, status)
            DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;

    RETURN NULL;
END $$;

CREATE TRIGGER articles_count_insert AFTER INSERT ON articles
    REFERENCING NEW TABLE AS cms_new
    FOR EACH STATEMENT EXECUTE FUNCTION cms_article_counts_apply();
CREATE TRIGGER articles_count_update AFTER UPDATE ON articles
    REFERENCING OLD TABLE AS cms_old NEW TABLE AS cms_new
    FOR EACH STATEMENT EXECUTE FUNCTION cms_article_counts_apply();
CREATE TRIGGER articles_count_delete AFTER DELETE ON articles
    REFERENCING OLD TABLE AS cms_old
    FOR EACH STATEMENT EXECUTE FUNCTION cms_article_counts_apply();

INSERT INTO article_counts (workspace_id, locale, status, n)
    SELECT workspace_id, locale, status, count(*) FROM articles
     WHERE deleted_at IS NULL
     GROUP BY workspace_id, locale, status;

-- The number of articles a list with these filters holds ("status" as the
-- API shows it, NULL for all).  Only the published and scheduled filters
-- look at articles (the due scheduled ones); CASE keeps that count from
-- running for the others.
CREATE FUNCTION cms_article_total(p_workspace uuid, p_locale text,
                                  p_status text)
    RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce((SELECT sum(n) FROM article_counts
                      WHERE workspace_id = p_workspace AND locale = p_locale
                        AND (p_status IS NULL OR status = p_status)), 0)
           + CASE WHEN p_status IN ('published', 'scheduled') THEN
                 CASE p_status WHEN 'published' THEN 1 ELSE -1 END
                 * (SELECT count(*) FROM articles
                     WHERE workspace_id = p_workspace
                       AND locale = p_locale AND status = 'scheduled'
                       AND deleted_at IS NULL AND published_at <= now())
             ELSE 0 END $$;

COMMIT;
