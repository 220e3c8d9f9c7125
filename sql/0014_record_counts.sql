-- List totals without counting the workspace, for the videos and media
-- lists, as sql/0006 does for articles: a counter per (kind, workspace,
-- value of the list's filter: a video's status, an asset's type), kept in
-- the writing transaction by statement triggers over transition tables
-- (one statement that moves many rows changes each counter once, in key
-- order, so writers lock counters in the same order and never deadlock).
-- A list's total is then at most a handful of counter rows, whatever the
-- workspace holds (counting 10,000 assets cost more than the page itself).
--
-- No foreign key to workspaces, as for article_counts: rows of a deleted
-- workspace stay, unread.
BEGIN;

CREATE TABLE record_counts (
    kind          text NOT NULL,             -- 'videos', 'media'
    workspace_id  uuid NOT NULL,
    value         text NOT NULL,             -- the filtered column's value
    n             bigint NOT NULL,
    PRIMARY KEY (kind, workspace_id, value)
);

-- The trigger's arguments: the kind, then the filtered column's name.
CREATE FUNCTION cms_record_counts_apply() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    d text;
BEGIN
    -- each branch names only the transition tables its event has
    IF TG_OP = 'INSERT' THEN
        d := format('SELECT workspace_id, %I AS value, 1 AS d FROM cms_new',
                    TG_ARGV[1]);
    ELSIF TG_OP = 'DELETE' THEN
        d := format('SELECT workspace_id, %I AS value, -1 AS d FROM cms_old',
                    TG_ARGV[1]);
    ELSE
        d := format('SELECT workspace_id, %1$I AS value, 1 AS d FROM cms_new'
                    ' UNION ALL'
                    ' SELECT workspace_id, %1$I, -1 FROM cms_old',
                    TG_ARGV[1]);
    END IF;

    EXECUTE format(
        'INSERT INTO record_counts AS c (kind, workspace_id, value, n)'
        ' SELECT %L, workspace_id, value, sum(d) FROM (%s) x'
        '  GROUP BY workspace_id, value HAVING sum(d) <> 0'
        '  ORDER BY workspace_id, value'
        ' ON CONFLICT (kind, workspace_id, value)'
        '  DO UPDATE SET n = c.n + EXCLUDED.n', TG_ARGV[0], d);

    RETURN NULL;
END $$;

CREATE TRIGGER videos_count_insert AFTER INSERT ON videos
    REFERENCING NEW TABLE AS cms_new
    FOR EACH STATEMENT EXECUTE FUNCTION cms_record_counts_apply('videos', 'status');
CREATE TRIGGER videos_count_update AFTER UPDATE ON videos
    REFERENCING OLD TABLE AS cms_old NEW TABLE AS cms_new
    FOR EACH STATEMENT EXECUTE FUNCTION cms_record_counts_apply('videos', 'status');
CREATE TRIGGER videos_count_delete AFTER DELETE ON videos
    REFERENCING OLD TABLE AS cms_old
    FOR EACH STATEMENT EXECUTE FUNCTION cms_record_counts_apply('videos', 'status');

CREATE TRIGGER media_count_insert AFTER INSERT ON media_assets
    REFERENCING NEW TABLE AS cms_new
    FOR EACH STATEMENT EXECUTE FUNCTION cms_record_counts_apply('media', 'type');
CREATE TRIGGER media_count_update AFTER UPDATE ON media_assets
    REFERENCING OLD TABLE AS cms_old NEW TABLE AS cms_new
    FOR EACH STATEMENT EXECUTE FUNCTION cms_record_counts_apply('media', 'type');
CREATE TRIGGER media_count_delete AFTER DELETE ON media_assets
    REFERENCING OLD TABLE AS cms_old
    FOR EACH STATEMENT EXECUTE FUNCTION cms_record_counts_apply('media', 'type');

INSERT INTO record_counts (kind, workspace_id, value, n)
    SELECT 'videos', workspace_id, status, count(*) FROM videos
     GROUP BY workspace_id, status
    UNION ALL
    SELECT 'media', workspace_id, type, count(*) FROM media_assets
     GROUP BY workspace_id, type;

-- The number of records of a kind a list holds: all, or those whose
-- filtered column is p_value.
CREATE FUNCTION cms_record_total(p_kind text, p_workspace uuid,
                                 p_value text)
    RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(sum(n), 0)::bigint FROM record_counts
     WHERE kind = p_kind AND workspace_id = p_workspace
       AND (p_value IS NULL OR value = p_value) $$;

COMMIT;
