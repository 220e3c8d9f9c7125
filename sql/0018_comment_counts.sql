-- The total of one article's comment list without counting its comments:
-- a counter per (article, status), kept in the writing transaction by
-- statement triggers over transition tables, as sql/0014 keeps the videos'
-- and media's list totals.  One statement that moves many comments (a
-- thread deleted with its root, an article's cascade) changes each counter
-- once, in key order, so writers lock counters in the same order and never
-- deadlock; a new comment adds one to its article's 'pending' counter.
-- The list's total is then at most three counter rows, where a COUNT read
-- every comment of the article from the heap (their rows lie in as many
-- pages as comments, as comments of many articles interleave).
--
-- No foreign key to articles: the counters of a deleted article go with
-- the cascade of its comments (the DELETE trigger), and a row left at 0 is
-- harmless.
BEGIN;

CREATE TABLE comment_counts (
    article_id  uuid NOT NULL,
    status      text NOT NULL,
    n           bigint NOT NULL,
    PRIMARY KEY (article_id, status)
);

CREATE FUNCTION cms_comment_counts_apply() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- each branch names only the transition tables its event has
    IF TG_OP = 'INSERT' THEN
        INSERT INTO comment_counts AS c (article_id, status, n)
            SELECT article_id, status, count(*) FROM cms_new
             GROUP BY article_id, status ORDER BY article_id, status
            ON CONFLICT (article_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO comment_counts AS c (article_id, status, n)
            SELECT article_id, status, -count(*) FROM cms_old
             GROUP BY article_id, status ORDER BY article_id, status
            ON CONFLICT (article_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSE
        INSERT INTO comment_counts AS c (article_id, status, n)
            SELECT article_id, status, sum(d) FROM (
                SELECT article_id, status, 1 AS d FROM cms_new
                UNION ALL
                SELECT article_id, status, -1 FROM cms_old) x
             GROUP BY article_id, status HAVING sum(d) <> 0
             ORDER BY article_id, status
            ON CONFLICT (article_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER comments_count_insert AFTER INSERT ON comments
    REFERENCING NEW TABLE AS cms_new
    FOR EACH STATEMENT EXECUTE FUNCTION cms_comment_counts_apply();
CREATE TRIGGER comments_count_update AFTER UPDATE ON comments
    REFERENCING OLD TABLE AS cms_old NEW TABLE AS cms_new
    FOR EACH STATEMENT EXECUTE FUNCTION cms_comment_counts_apply();
CREATE TRIGGER comments_count_delete AFTER DELETE ON comments
    REFERENCING OLD TABLE AS cms_old
    FOR EACH STATEMENT EXECUTE FUNCTION cms_comment_counts_apply();

INSERT INTO comment_counts (article_id, status, n)
    SELECT article_id, status, count(*) FROM comments
     GROUP BY article_id, status;

-- The number of comments of an article: all, or those in p_status.
CREATE FUNCTION cms_comment_total(p_article uuid, p_status text)
    RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(sum(n), 0)::bigint FROM comment_counts
     WHERE article_id = p_article
       AND (p_status IS NULL OR status = p_status) $$;

COMMIT;
