-- The extension events' retention (issue 35).
--
-- An extension event (ext_events, sql/0004) is relayed to its facility's
-- Redis Stream and kept, marked relayed; nothing removed it, so the table
-- grew by one row a payment for good (the bench's record row alone writes
-- hundreds of thousands).  Relayed events now go once they are older than
-- the events' retention (cms_webhook_delivery retention=, 30 days, which
-- the content events and the settled deliveries already follow), in the
-- cms_purge_interval job.  An event not yet relayed is never removed: it
-- has still to reach its stream.  A BRIN index on created_at (rows come in
-- time order) serves the purge for next to nothing per insert; the
-- pending partial index serves the relay, as before.
BEGIN;

CREATE INDEX ext_events_created_brin ON ext_events USING brin (created_at);

-- Relayed events older than the retention go; returns how many.
CREATE FUNCTION cms_ext_events_purge(retention interval)
    RETURNS integer
    LANGUAGE sql
    AS $$
    WITH e AS (DELETE FROM ext_events
                WHERE created_at < now() - retention
                  AND relayed_at IS NOT NULL
                RETURNING 1)
    SELECT count(*)::integer FROM e $$;

COMMIT;
