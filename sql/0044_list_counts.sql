-- List totals from counters for the custom entries of a module and the
-- podcast episodes of a show (issue 35), as for videos, media and
-- subscribers (sql/0014, sql/0043): counting a module's 10,000 entries
-- cost more than reading the page of 20.  Their counter's value is
-- "<parent id>:<status>" (a module's or a show's), so that a list's total
-- is the sum of a few counter rows of the workspace: all of a parent's,
-- one status of it, or one status of all.  A list filtered by an entry's
-- data (filter[...]) still counts what it matches.
BEGIN;

-- The trigger's arguments: the kind, then the counted column's name, or
-- the parent's column and the status column (value "<parent>:<status>").
CREATE OR REPLACE FUNCTION cms_record_counts_apply() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v text;
    d text;
BEGIN
    IF TG_NARGS = 3 THEN
        v := format('%I::text || '':'' || %I', TG_ARGV[1], TG_ARGV[2]);
    ELSE
        v := format('%I', TG_ARGV[1]);
    END IF;

    -- each branch names only the transition tables its event has
    IF TG_OP = 'INSERT' THEN
        d := format('SELECT workspace_id, %s AS value, 1 AS d FROM cms_new', v);
    ELSIF TG_OP = 'DELETE' THEN
        d := format('SELECT workspace_id, %s AS value, -1 AS d FROM cms_old',
                    v);
    ELSE
        d := format('SELECT workspace_id, %1$s AS value, 1 AS d FROM cms_new'
                    ' UNION ALL'
                    ' SELECT workspace_id, %1$s, -1 FROM cms_old', v);
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

-- each table's three triggers: "<table>_count_insert", _update, _delete
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES ('custom_entries', 'entries', 'module_id'),
                                   ('podcast_episodes', 'episodes', 'show_id'))
                          AS v (tab, kind, parent)
    LOOP
        EXECUTE format('CREATE TRIGGER %1$s_count_insert AFTER INSERT ON %1$I'
            ' REFERENCING NEW TABLE AS cms_new FOR EACH STATEMENT'
            ' EXECUTE FUNCTION cms_record_counts_apply(%2$L, %3$L, ''status'')',
            t.tab, t.kind, t.parent);
        EXECUTE format('CREATE TRIGGER %1$s_count_update AFTER UPDATE ON %1$I'
            ' REFERENCING OLD TABLE AS cms_old NEW TABLE AS cms_new'
            ' FOR EACH STATEMENT'
            ' EXECUTE FUNCTION cms_record_counts_apply(%2$L, %3$L, ''status'')',
            t.tab, t.kind, t.parent);
        EXECUTE format('CREATE TRIGGER %1$s_count_delete AFTER DELETE ON %1$I'
            ' REFERENCING OLD TABLE AS cms_old FOR EACH STATEMENT'
            ' EXECUTE FUNCTION cms_record_counts_apply(%2$L, %3$L, ''status'')',
            t.tab, t.kind, t.parent);
    END LOOP;
END $$;

-- the counters of what is there already: CREATE TRIGGER holds a lock
-- that keeps writers out until the commit, so no write falls between the
-- count and the triggers

DELETE FROM record_counts WHERE kind IN ('entries', 'episodes');

INSERT INTO record_counts (kind, workspace_id, value, n)
    SELECT 'entries', workspace_id, module_id::text || ':' || status, count(*)
      FROM custom_entries GROUP BY workspace_id, module_id, status
    UNION ALL
    SELECT 'episodes', workspace_id, show_id::text || ':' || status, count(*)
      FROM podcast_episodes GROUP BY workspace_id, show_id, status;

-- The number of records of a kind counted by parent and status: those of
-- parent p_parent (NULL: every parent) whose status is p_status (NULL:
-- any).
CREATE FUNCTION cms_record_total_of(p_kind text, p_workspace uuid,
                                    p_parent uuid, p_status text)
    RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(sum(n), 0)::bigint FROM record_counts
     WHERE kind = p_kind AND workspace_id = p_workspace
       AND (p_parent IS NULL OR starts_with(value, p_parent::text || ':'))
       AND (p_status IS NULL OR split_part(value, ':', 2) = p_status) $$;

COMMIT;
