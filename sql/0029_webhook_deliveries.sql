-- Webhook delivery (issue 16; README, Webhooks and "Verifying webhooks").
--
-- Fan-out: an outbox event (outbox_events, written in the transaction of
-- the change) becomes one webhook_deliveries row per enabled endpoint of
-- its workspace whose "events" name it (or "*"), by a trigger, so in the
-- same transaction: an event committed is never lost, a rolled back one
-- is never sent.  Account messages (account_outbox) are another table and
-- never reach a webhook.  The payload {id, type, created_at,
-- workspace_id, data} is made here, once, as text: the body and its id
-- are the same bytes on every attempt.
--
-- Delivery: worker 0 of every host claims due rows
-- (cms_webhook_deliveries_claim: FOR UPDATE SKIP LOCKED, a lease in
-- locked_until, the attempt counted), posts them, and records each
-- attempt (cms_webhook_delivery_result).  A lease that ran out (a worker
-- killed, or quitting, mid-delivery) makes the row due again: at least
-- once, never one attempt sent by two hosts while its lease holds.
-- Retries follow Standard Webhooks' schedule (now, 5 s, 5 min, 30 min,
-- 2 h, 5 h, 10 h, 14 h, 20 h, 24 h), each delay scaled (tests) and
-- jittered by up to 10 %; after the tenth attempt the row is failed.
BEGIN;

CREATE TABLE webhook_deliveries (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    webhook_id        uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    workspace_id      uuid NOT NULL
                      REFERENCES workspaces (id) ON DELETE CASCADE,
    event_id          uuid NOT NULL,
    event_type        text NOT NULL,
    payload           text NOT NULL,
    attempt           integer NOT NULL DEFAULT 0,   -- attempts made
    status            text NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'delivered', 'failed')),
    next_attempt_at   timestamptz DEFAULT now(),    -- NULL once settled
    locked_until      timestamptz,                  -- a sender's lease
    last_status_code  integer,
    last_error        text,
    last_duration_ms  integer,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    delivered_at      timestamptz,
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);

-- what the senders scan: due pending rows
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries
    (next_attempt_at) WHERE status = 'pending';
-- the log of an endpoint, newest first
CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries
    (webhook_id, created_at DESC, id DESC);
-- what the purge scans: settled rows
CREATE INDEX webhook_deliveries_settled_idx ON webhook_deliveries
    (updated_at) WHERE status <> 'pending';

-- one row per attempt made (the delivery log's detail)
CREATE TABLE webhook_delivery_attempts (
    delivery_id      uuid NOT NULL
                     REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt          integer NOT NULL,
    status_code      integer,
    duration_ms      integer NOT NULL,
    error            text,
    next_attempt_at  timestamptz,          -- the retry it led to, if any
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (delivery_id, attempt)
);


-- The body of an event as delivered.
CREATE FUNCTION cms_webhook_payload(p_id uuid, p_type text,
    p_created timestamptz, p_workspace uuid, p_data jsonb) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object('id', p_id, 'type', p_type,
              'created_at', cms_ts(p_created), 'workspace_id', p_workspace,
              'data', p_data)::text $$;

CREATE FUNCTION cms_webhook_fan_out() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO webhook_deliveries (webhook_id, workspace_id, event_id,
                                    event_type, payload)
    SELECT h.id, NEW.workspace_id, NEW.id, NEW.type,
           cms_webhook_payload(NEW.id, NEW.type, NEW.created_at,
                               NEW.workspace_id, NEW.data)
      FROM webhooks h
     WHERE h.workspace_id = NEW.workspace_id AND h.enabled
       AND (NEW.type = ANY (h.events) OR '*' = ANY (h.events));
    RETURN NULL;
END $$;

CREATE TRIGGER outbox_events_webhooks AFTER INSERT ON outbox_events
    FOR EACH ROW EXECUTE FUNCTION cms_webhook_fan_out();


-- The retry delay after attempt p_attempt failed (Standard Webhooks),
-- scaled and jittered; NULL when no attempt is left.
CREATE FUNCTION cms_webhook_retry_at(p_attempt integer, p_scale float8)
    RETURNS timestamptz
    LANGUAGE sql VOLATILE
    AS $$ SELECT now() + make_interval(secs => d * p_scale
                                            * (0.9 + random() * 0.2))
            FROM (SELECT ('{5,300,1800,7200,18000,36000,50400,72000,86400}'
                          ::float8[])[p_attempt] AS d) s
           WHERE d IS NOT NULL $$;


-- Claims up to p_limit due deliveries for p_lease; the endpoint's url and
-- sealed secrets (hex; the previous one only while it still signs).
-- Pending rows of a disabled endpoint are settled failed first.
CREATE FUNCTION cms_webhook_deliveries_claim(p_limit integer,
    p_lease interval)
    RETURNS TABLE (id uuid, webhook_id uuid, event_id uuid,
                   event_type text, payload text, attempt integer,
                   url text, secret text, previous_secret text)
    LANGUAGE sql
    AS $$
    UPDATE webhook_deliveries d
       SET status = 'failed', next_attempt_at = NULL, locked_until = NULL,
           last_error = 'the endpoint is disabled', updated_at = now()
      FROM webhooks h
     WHERE h.id = d.webhook_id AND NOT h.enabled AND d.status = 'pending'
       AND d.next_attempt_at <= now();

    WITH c AS (
        UPDATE webhook_deliveries d
           SET locked_until = now() + p_lease, attempt = d.attempt + 1,
               updated_at = now()
         WHERE d.id IN (SELECT x.id FROM webhook_deliveries x
                         WHERE x.status = 'pending'
                           AND x.next_attempt_at <= now()
                           AND (x.locked_until IS NULL
                                OR x.locked_until < now())
                         ORDER BY x.next_attempt_at
                         LIMIT p_limit
                         FOR UPDATE SKIP LOCKED)
        RETURNING d.*)
    SELECT c.id, c.webhook_id, c.event_id, c.event_type, c.payload,
           c.attempt, h.url, encode(h.secret_sealed, 'hex'),
           CASE WHEN h.previous_secret_expires_at > now()
                THEN encode(h.previous_secret_sealed, 'hex') END
      FROM c JOIN webhooks h ON h.id = c.webhook_id $$;


-- Records attempt p_attempt of delivery p_id: its status code (NULL when
-- none came), duration and error.  2xx delivers; 410 fails the delivery
-- and disables the endpoint; anything else retries, or fails after the
-- last attempt.  A result for an attempt that is no longer the row's (its
-- lease ran out and another sender took it) is logged only; one for a row
-- gone meanwhile (its webhook deleted) is dropped.
CREATE FUNCTION cms_webhook_delivery_result(p_id uuid, p_attempt integer,
    p_code integer, p_ms integer, p_error text, p_scale float8)
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

    UPDATE webhook_deliveries
       SET status = CASE WHEN ok THEN 'delivered'
                         WHEN v_next IS NULL THEN 'failed'
                         ELSE 'pending' END,
           next_attempt_at = v_next, locked_until = NULL,
           last_status_code = p_code, last_error = p_error,
           last_duration_ms = p_ms, updated_at = now(),
           delivered_at = CASE WHEN ok THEN now() END
     WHERE id = p_id AND attempt = p_attempt AND status = 'pending'
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


-- Settled deliveries older than the retention go; returns how many.
CREATE FUNCTION cms_webhook_deliveries_purge(retention interval)
    RETURNS integer
    LANGUAGE sql
    AS $$
    WITH d AS (DELETE FROM webhook_deliveries
                WHERE status <> 'pending' AND updated_at < now() - retention
                RETURNING 1)
    SELECT count(*)::integer FROM d $$;

COMMIT;
