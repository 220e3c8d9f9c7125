-- Writes by id find their rows by the key, whatever the statistics say
-- (issue 35).
--
-- Four statements looked rows up by id and also asked for the state their
-- queue's partial index is made of: a delivery's outcome (status =
-- 'pending', webhook_deliveries_due_idx), the relay's mark and release of
-- an extension's events (relayed_at IS NULL, ext_events_pending_idx), and
-- the release of an upload's finalization claim (status = 'pending',
-- media_assets_reserved_idx).  When the last ANALYZE saw the queue empty
-- (a quiet hour, or a VACUUM ANALYZE before a burst), the planner takes
-- that partial index for the smallest path to the row and filters it by
-- id: each outcome, each batch of 16 events, read every row waiting in the
-- queue.  The module's connections keep their plans, so this lasted until
-- autovacuum's next ANALYZE; a burst of 10,000 deliveries sent its
-- outcomes in batches that read 10,000 rows an outcome, ran past the
-- statement timeout and were lost (the deliveries went again when their
-- leases ran out: 67 s for 10,000 instead of 4), and the relay fell
-- behind a payment load by the backlog it had itself.
--
-- Now the state is asked in a form no partial index is made of (a
-- delivery not yet settled, an upload not ready), so only the primary key
-- can find the rows.  The relay's mark and release are the module's own
-- statements (src/ngx_http_cms_jobs.c): they now ask for no state at all
-- (a mark or a release of an event another host relayed meanwhile
-- changes nothing that is read again).
BEGIN;

CREATE OR REPLACE FUNCTION cms_webhook_delivery_result(p_id uuid,
    p_attempt integer, p_code integer, p_ms integer, p_error text,
    p_scale float8)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    d     webhook_deliveries;
    ok    boolean := coalesce(p_code BETWEEN 200 AND 299, false);
    gone  boolean := coalesce(p_code = 410, false);
    mine  boolean;
    v_next  timestamptz;
BEGIN
    IF NOT ok AND NOT gone THEN
        v_next := cms_webhook_retry_at(p_attempt, p_scale);
    END IF;

    -- "not settled" is "pending" (the status's CHECK), in a form that
    -- webhook_deliveries_due_idx's predicate is not: the row by its key
    UPDATE webhook_deliveries
       SET status = CASE WHEN ok THEN 'delivered'
                         WHEN v_next IS NULL THEN 'failed'
                         ELSE 'pending' END,
           next_attempt_at = v_next, locked_until = NULL,
           last_status_code = p_code, last_error = p_error,
           last_duration_ms = p_ms, updated_at = now(),
           delivered_at = CASE WHEN ok THEN now() END
     WHERE id = p_id AND attempt = p_attempt
       AND status NOT IN ('delivered', 'failed')
    RETURNING * INTO d;

    mine := FOUND;
    IF NOT mine THEN
        v_next := NULL;
    END IF;

    INSERT INTO webhook_delivery_attempts (delivery_id, attempt,
                                           status_code, duration_ms, error,
                                           next_attempt_at)
    SELECT p_id, p_attempt, p_code, p_ms, p_error, v_next
     WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = p_id)
    ON CONFLICT DO NOTHING;

    IF gone AND mine THEN
        UPDATE webhooks
           SET enabled = false, updated_at = now(),
               disabled_reason = 'the endpoint answered 410 Gone'
         WHERE id = d.webhook_id AND enabled;
    END IF;
END $$;


-- A failed finalization gives its claim back ("pending" is "not ready",
-- the status's CHECK, in a form media_assets_reserved_idx is not made of)
CREATE OR REPLACE FUNCTION cms_media_release(p_workspace uuid, p_id uuid)
    RETURNS void
    LANGUAGE sql
    AS $$
        UPDATE media_assets SET finalizing_until = NULL
         WHERE workspace_id = p_workspace AND id = p_id
           AND status <> 'ready' $$;

COMMIT;
