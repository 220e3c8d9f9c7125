-- Webhook delivery at volume (issue 16; README, Webhooks).
--
-- The claim no longer sweeps every due row of a disabled endpoint before
-- it claims: with thousands of rows queued that sweep read them all on
-- every claim.  Rows are taken in due order with their endpoint, and
-- those of a disabled endpoint are settled failed in the same statement
-- (the same outcome, as each comes due).
--
-- Outcomes are recorded in batches: a sender under load collects the
-- outcomes that finished while its previous batch was being written and
-- writes them in one statement (cms_webhook_delivery_results, a JSON array
-- of {id, attempt, code, ms, error}), each through
-- cms_webhook_delivery_result as before.
BEGIN;

CREATE OR REPLACE FUNCTION cms_webhook_deliveries_claim(p_limit integer,
    p_lease interval)
    RETURNS TABLE (id uuid, webhook_id uuid, event_id uuid,
                   event_type text, payload text, attempt integer,
                   url text, secret text, previous_secret text)
    LANGUAGE sql
    AS $$
    WITH due AS (
        SELECT x.id, h.enabled
          FROM webhook_deliveries x JOIN webhooks h ON h.id = x.webhook_id
         WHERE x.status = 'pending' AND x.next_attempt_at <= now()
           AND (x.locked_until IS NULL OR x.locked_until < now())
         ORDER BY x.next_attempt_at
         LIMIT p_limit
           FOR UPDATE OF x SKIP LOCKED),
    off AS (
        UPDATE webhook_deliveries d
           SET status = 'failed', next_attempt_at = NULL,
               locked_until = NULL, updated_at = now(),
               last_error = 'the endpoint is disabled'
          FROM due
         WHERE d.id = due.id AND NOT due.enabled),
    c AS (
        UPDATE webhook_deliveries d
           SET locked_until = now() + p_lease, attempt = d.attempt + 1,
               updated_at = now()
          FROM due
         WHERE d.id = due.id AND due.enabled
        RETURNING d.*)
    SELECT c.id, c.webhook_id, c.event_id, c.event_type, c.payload,
           c.attempt, h.url, encode(h.secret_sealed, 'hex'),
           CASE WHEN h.previous_secret_expires_at > now()
                THEN encode(h.previous_secret_sealed, 'hex') END
      FROM c JOIN webhooks h ON h.id = c.webhook_id $$;


-- The outcomes of several attempts: p_results a JSON array of
-- {"id", "attempt", "code" (absent or null: no answer), "ms", "error"};
-- returns how many were recorded.
CREATE FUNCTION cms_webhook_delivery_results(p_results jsonb,
    p_scale float8)
    RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    r  record;
    n  integer := 0;
BEGIN
    FOR r IN SELECT * FROM jsonb_to_recordset(p_results)
                 AS x(id uuid, attempt integer, code integer, ms integer,
                      error text)
    LOOP
        -- one outcome that cannot be written (a deadlock with an endpoint
        -- being deleted) drops itself, not the batch: its row is sent
        -- again once its lease ends
        BEGIN
            PERFORM cms_webhook_delivery_result(r.id, r.attempt, r.code,
                                                r.ms, r.error, p_scale);
            n := n + 1;
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'webhook delivery %: its outcome was not recorded: %',
                r.id, SQLERRM;
        END;
    END LOOP;

    RETURN n;
END $$;

COMMIT;
