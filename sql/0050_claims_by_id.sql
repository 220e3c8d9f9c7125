-- The background jobs' claims find their batch's rows by id (issue 35).
--
-- Each claim picked its batch with "ORDER BY ... LIMIT n FOR UPDATE SKIP
-- LOCKED" and then updated the rows it picked by joining the table to
-- that batch.  The batch's size is a parameter, and a LIMIT whose value
-- the planner does not know is taken for a tenth of the rows below it: a
-- batch of 16 out of 100,000 waiting events was planned as 10,000 rows,
-- so the update read the whole table into a hash and joined the 16 to
-- it.  An extension's events (kept after they are relayed) and a
-- webhook's deliveries (kept as its log) only grow, so every batch cost
-- more than the last: 26-60 ms a batch of events at 200,000 rows, the
-- relay fell behind the payments that wrote them, and the webhook sender
-- stalled the same way.  The batch's ids are now taken into an array and
-- the rows updated by "id = ANY (ids)", which reads the primary key's
-- index whatever the table holds; the same for the CDN purges and the
-- object removals, whose queues are short until a mass delete fills
-- them.  In PL/pgSQL, so each connection keeps the plans.  What a claim
-- returns, its leases and its order are unchanged (t/148 counts what
-- each reads).
BEGIN;

CREATE OR REPLACE FUNCTION cms_ext_events_claim(n integer, lease interval)
    RETURNS TABLE (id uuid, facility_id uuid, livemode boolean, payload text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    ids  uuid[];
BEGIN
    ids := ARRAY(SELECT x.id FROM ext_events x
                  WHERE x.relayed_at IS NULL
                    AND (x.claimed_until IS NULL OR x.claimed_until < now())
                  ORDER BY x.created_at
                  LIMIT n
                    FOR UPDATE SKIP LOCKED);

    -- relayed in the order they were written
    RETURN QUERY
    WITH c AS (
        UPDATE ext_events e SET claimed_until = now() + lease
         WHERE e.id = ANY (ids)
        RETURNING e.*)
    SELECT c.id, c.facility_id, c.livemode,
           json_build_object('id', c.id, 'type', c.type,
                             'created_at', cms_ts(c.created_at),
                             'facility_id', c.facility_id,
                             'livemode', c.livemode,
                             'data', c.data)::text
      FROM c
     ORDER BY c.created_at, c.id;
END $$;


CREATE OR REPLACE FUNCTION cms_webhook_deliveries_claim(p_limit integer,
    p_lease interval)
    RETURNS TABLE (id uuid, webhook_id uuid, event_id uuid,
                   event_type text, payload text, attempt integer,
                   url text, secret text, previous_secret text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    due  uuid[];
    off  uuid[];
BEGIN
    SELECT coalesce(array_agg(b.id) FILTER (WHERE b.enabled), '{}'),
           coalesce(array_agg(b.id) FILTER (WHERE NOT b.enabled), '{}')
      INTO due, off
      FROM (SELECT x.id, h.enabled
              FROM webhook_deliveries x JOIN webhooks h ON h.id = x.webhook_id
             WHERE x.status = 'pending' AND x.next_attempt_at <= now()
               AND (x.locked_until IS NULL OR x.locked_until < now())
             ORDER BY x.next_attempt_at
             LIMIT p_limit
               FOR UPDATE OF x SKIP LOCKED) b;

    IF cardinality(off) > 0 THEN
        UPDATE webhook_deliveries d
           SET status = 'failed', next_attempt_at = NULL,
               locked_until = NULL, updated_at = now(),
               last_error = 'the endpoint is disabled'
         WHERE d.id = ANY (off);
    END IF;

    RETURN QUERY
    WITH c AS (
        UPDATE webhook_deliveries d
           SET locked_until = now() + p_lease, attempt = d.attempt + 1,
               updated_at = now()
         WHERE d.id = ANY (due)
        RETURNING d.*)
    SELECT c.id, c.webhook_id, c.event_id, c.event_type, c.payload,
           c.attempt, h.url, encode(h.secret_sealed, 'hex'),
           CASE WHEN h.previous_secret_expires_at > now()
                THEN encode(h.previous_secret_sealed, 'hex') END
      FROM c JOIN webhooks h ON h.id = c.webhook_id
     ORDER BY c.next_attempt_at, c.id;
END $$;


CREATE OR REPLACE FUNCTION cms_cdn_purges_claim(p_limit integer,
                                                p_lease interval)
    RETURNS TABLE (id bigint, keys text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    ids  bigint[];
BEGIN
    ids := ARRAY(SELECT d.id FROM cdn_purges d
                  WHERE d.next_at <= now()
                    AND (d.claimed_until IS NULL OR d.claimed_until < now())
                  ORDER BY d.next_at
                  LIMIT p_limit
                    FOR UPDATE SKIP LOCKED);

    RETURN QUERY
    UPDATE cdn_purges c SET claimed_until = now() + p_lease
     WHERE c.id = ANY (ids)
    RETURNING c.id, c.keys;
END $$;


CREATE OR REPLACE FUNCTION cms_object_removals_claim(p_limit integer,
                                                     p_lease interval)
    RETURNS TABLE (storage_key text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    gone  text[];
    kept  text[];
BEGIN
    -- a key something names again is no longer to be removed: dropped
    SELECT coalesce(array_agg(b.storage_key) FILTER (WHERE b.named), '{}'),
           coalesce(array_agg(b.storage_key) FILTER (WHERE NOT b.named),
                    '{}')
      INTO gone, kept
      FROM (SELECT d.storage_key, cms_object_named(d.storage_key) AS named
              FROM object_removals d
             WHERE d.next_at <= now()
               AND (d.claimed_until IS NULL OR d.claimed_until < now())
             ORDER BY d.next_at
             LIMIT p_limit
               FOR UPDATE SKIP LOCKED) b;

    IF cardinality(gone) > 0 THEN
        DELETE FROM object_removals o WHERE o.storage_key = ANY (gone);
    END IF;

    RETURN QUERY
    UPDATE object_removals o SET claimed_until = now() + p_lease
     WHERE o.storage_key = ANY (kept)
    RETURNING o.storage_key;
END $$;

COMMIT;
