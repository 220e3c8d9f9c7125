-- The subscribers list's total from counters kept by the writes, as the
-- video and media lists' (sql/0014): a counter per (workspace, status),
-- kept by statement triggers in the writing transaction, so that a page of
-- 20 does not count a workspace's 10,000 subscribers (issue 35).
BEGIN;

CREATE TRIGGER subscribers_count_insert AFTER INSERT ON subscribers
    REFERENCING NEW TABLE AS cms_new
    FOR EACH STATEMENT
    EXECUTE FUNCTION cms_record_counts_apply('subscribers', 'status');
CREATE TRIGGER subscribers_count_update AFTER UPDATE ON subscribers
    REFERENCING OLD TABLE AS cms_old NEW TABLE AS cms_new
    FOR EACH STATEMENT
    EXECUTE FUNCTION cms_record_counts_apply('subscribers', 'status');
CREATE TRIGGER subscribers_count_delete AFTER DELETE ON subscribers
    REFERENCING OLD TABLE AS cms_old
    FOR EACH STATEMENT
    EXECUTE FUNCTION cms_record_counts_apply('subscribers', 'status');

-- the counters of what is there already: CREATE TRIGGER holds a lock
-- that keeps writers out until the commit, so no write falls between the
-- count and the triggers

DELETE FROM record_counts WHERE kind = 'subscribers';

INSERT INTO record_counts (kind, workspace_id, value, n)
    SELECT 'subscribers', workspace_id, status, count(*) FROM subscribers
     GROUP BY workspace_id, status;

COMMIT;
