-- The content outbox's retention (issue 35).
--
-- A content event reaches the webhook deliveries in the transaction that
-- writes it (sql/0029's fan-out trigger), so nothing was ever left to mark
-- delivered: delivered_at stayed NULL on every row and the "pending"
-- partial index held every event, written on every insert and never read.
-- The column and that index go; a BRIN index on created_at (the rows come
-- in time order: a few pages for millions of rows, next to nothing per
-- insert) serves the purge, which drops events older than the webhook
-- deliveries' retention (cms_webhook_delivery retention=, 30 days) in the
-- cms_purge_interval job, beside the settled deliveries.  A delivery
-- carries its own copy of the payload: it never needs its event's row.
BEGIN;

DROP INDEX outbox_events_pending_idx;
ALTER TABLE outbox_events DROP COLUMN delivered_at;

CREATE INDEX outbox_events_created_brin ON outbox_events
    USING brin (created_at);

-- Events older than the retention go; returns how many.
CREATE FUNCTION cms_outbox_events_purge(retention interval)
    RETURNS integer
    LANGUAGE sql
    AS $$
    WITH e AS (DELETE FROM outbox_events
                WHERE created_at < now() - retention
                RETURNING 1)
    SELECT count(*)::integer FROM e $$;

COMMIT;
