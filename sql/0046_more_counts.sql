-- List totals from counters (issue 35), as the other lists' (sql/0014,
-- sql/0043, sql/0044): a site's pages and a workspace's members.  Counting
-- a site's 10,000 pages cost more than reading the page of 20.
--
--   pages       value "<site id>"       the pages list of a site
--   members     value "<role>"          the members list
--
-- Read with cms_record_total() (pages: the site's value; members: every
-- value).  A webhook's deliveries keep their count: their counter rows
-- would be taken, in no fixed order, by transactions of many statements
-- (the scheduled articles' announcements, the senders' batches of
-- outcomes, on several hosts), which could then deadlock on them.
BEGIN;

DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES ('pages', 'pages', '''site_id'''),
                                   ('members', 'members', '''role'''))
                          AS v (tab, kind, cols)
    LOOP
        EXECUTE format('CREATE TRIGGER %1$s_count_insert AFTER INSERT ON %1$I'
            ' REFERENCING NEW TABLE AS cms_new FOR EACH STATEMENT'
            ' EXECUTE FUNCTION cms_record_counts_apply(%2$L, %3$s)',
            t.tab, t.kind, t.cols);
        EXECUTE format('CREATE TRIGGER %1$s_count_update AFTER UPDATE ON %1$I'
            ' REFERENCING OLD TABLE AS cms_old NEW TABLE AS cms_new'
            ' FOR EACH STATEMENT'
            ' EXECUTE FUNCTION cms_record_counts_apply(%2$L, %3$s)',
            t.tab, t.kind, t.cols);
        EXECUTE format('CREATE TRIGGER %1$s_count_delete AFTER DELETE ON %1$I'
            ' REFERENCING OLD TABLE AS cms_old FOR EACH STATEMENT'
            ' EXECUTE FUNCTION cms_record_counts_apply(%2$L, %3$s)',
            t.tab, t.kind, t.cols);
    END LOOP;
END $$;

-- the counters of what is there already: CREATE TRIGGER holds a lock
-- that keeps writers out until the commit, so no write falls between the
-- count and the triggers

DELETE FROM record_counts WHERE kind IN ('pages', 'members');

INSERT INTO record_counts (kind, workspace_id, value, n)
    SELECT 'pages', workspace_id, site_id::text, count(*)
      FROM pages GROUP BY workspace_id, site_id
    UNION ALL
    SELECT 'members', workspace_id, role, count(*)
      FROM members GROUP BY workspace_id, role;

COMMIT;
