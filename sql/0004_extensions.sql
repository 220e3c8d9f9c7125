-- Extensions: facilities, extensions and their keys, invoices, payments and
-- the extension event outbox.
--
-- A payment row carries the idempotency key of the request that wrote it
-- (UNIQUE), the request's fingerprint and the answer given: a retry whose
-- Redis record was lost (a crash between the commit and the Redis write)
-- finds the row and gets the original answer back, never a second payment.
BEGIN;

CREATE TABLE facilities (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE extensions (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    facility_id         uuid NOT NULL REFERENCES facilities (id)
                        ON DELETE CASCADE,
    name                text NOT NULL CHECK (name ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
    version             text NOT NULL,
    category            text NOT NULL DEFAULT '',
    status              text NOT NULL DEFAULT 'installing'
                        CHECK (status IN ('installing', 'running',
                                          'reloading')),
    is_enabled          boolean NOT NULL DEFAULT true,
    manifest            jsonb NOT NULL DEFAULT '{}',
    required_privilege  text NOT NULL DEFAULT '',
    privileges          text[] NOT NULL DEFAULT '{}',
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (facility_id, name)
);

-- Only HMAC-SHA256(pepper, key) and the visible prefix are stored.
CREATE TABLE extension_keys (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    extension_id  uuid NOT NULL REFERENCES extensions (id) ON DELETE CASCADE,
    facility_id   uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    livemode      boolean NOT NULL,
    privileges    text[] NOT NULL,
    key_prefix    text NOT NULL,
    secret_hash   bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    revoked_at    timestamptz
);

CREATE INDEX extension_keys_extension_id_idx ON extension_keys (extension_id);

CREATE TABLE invoices (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    facility_id   uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    livemode      boolean NOT NULL,
    patient_id    text NOT NULL,          -- a plain reference
    amount        numeric NOT NULL CHECK (amount > 0),
    currency      text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    status        text NOT NULL DEFAULT 'pending_payment'
                  CHECK (status IN ('pending_payment', 'paid', 'void')),
    reference     text,
    last_failure  text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX invoices_facility_id_idx ON invoices (facility_id, livemode);

CREATE TABLE payments (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    invoice_id       uuid NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
    facility_id      uuid NOT NULL REFERENCES facilities (id)
                     ON DELETE CASCADE,
    livemode         boolean NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('completed', 'failed')),
    reference        text,
    amount           numeric,
    method           text,
    reason           text,
    idempotency_key  text NOT NULL UNIQUE,
    fingerprint      text NOT NULL,
    response_status  integer NOT NULL,
    response_body    text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX payments_invoice_id_idx ON payments (invoice_id);

-- Written in the transaction of the change, relayed to a Redis Stream per
-- facility by the workers: claimed for a lease, marked once XADD succeeded.
CREATE TABLE ext_events (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    facility_id    uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    livemode       boolean NOT NULL,
    type           text NOT NULL,
    data           jsonb NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    claimed_until  timestamptz,
    relayed_at     timestamptz
);

CREATE INDEX ext_events_pending_idx ON ext_events (created_at)
    WHERE relayed_at IS NULL;


CREATE FUNCTION cms_invoice_json(i invoices) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object(
              'id', i.id, 'patient_id', i.patient_id, 'amount', i.amount,
              'currency', i.currency, 'status', i.status,
              'reference', i.reference, 'last_failure', i.last_failure,
              'livemode', i.livemode,
              'created_at', cms_ts(i.created_at),
              'updated_at', cms_ts(i.updated_at)) $$;


-- The answer a payment with this idempotency key already gave, if any,
-- within the retention "ttl".  A different fingerprint under the same key
-- is a conflict.  An expired key is released (renamed), so it can be used
-- afresh, as its Redis record has expired too.
CREATE FUNCTION cms_payment_replay(p_idem text, p_fp text, p_ttl interval,
                                   OUT status integer, OUT body text)
    LANGUAGE plpgsql
    AS $$
DECLARE
    fp   text;
    pid  uuid;
    at   timestamptz;
BEGIN
    SELECT p.id, p.fingerprint, p.response_status, p.response_body,
           p.created_at
      INTO pid, fp, status, body, at
      FROM payments p WHERE p.idempotency_key = p_idem;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF at <= now() - p_ttl THEN
        UPDATE payments SET idempotency_key = idempotency_key || ':' || id
         WHERE id = pid;
        status := NULL;
        body := NULL;
        RETURN;
    END IF;
    IF fp <> p_fp THEN
        PERFORM cms_raise('idempotency_conflict', 'Idempotency-Key');
    END IF;
END $$;


-- Records a completed payment ("record") or a failed attempt ("fail") on a
-- pending invoice of the key's facility and mode.  Returns the answer's
-- status and body, and whether it is a replay of an earlier request.
CREATE FUNCTION cms_payment_apply(p_kind text, p_facility uuid,
                                  p_livemode boolean, p_invoice uuid,
                                  p_idem text, p_fp text,
                                  p_reference text, p_amount numeric,
                                  p_method text, p_reason text,
                                  p_ttl interval,
                                  OUT status integer, OUT body text,
                                  OUT replayed boolean)
    LANGUAGE plpgsql
    AS $$
DECLARE
    inv invoices;
BEGIN
    -- the invoice lock first: a request with the same key that held it
    -- has committed when we get it, and its payment row is then visible
    SELECT * INTO inv FROM invoices
     WHERE id = p_invoice AND facility_id = p_facility
       AND livemode = p_livemode
     FOR UPDATE;

    SELECT r.status, r.body INTO status, body
      FROM cms_payment_replay(p_idem, p_fp, p_ttl) r;
    IF status IS NOT NULL THEN
        replayed := true;
        RETURN;
    END IF;

    IF inv.id IS NULL THEN
        PERFORM cms_raise('not_found');
    END IF;
    IF inv.status <> 'pending_payment' THEN
        PERFORM cms_raise('invalid_state');
    END IF;

    IF p_kind = 'completed' THEN
        IF p_amount < inv.amount THEN
            PERFORM cms_raise('validation_error', 'amount');
        END IF;
        UPDATE invoices SET status = 'paid', reference = p_reference,
                            updated_at = now()
         WHERE id = inv.id
         RETURNING * INTO inv;
        body := json_build_object('id', inv.id, 'status', inv.status,
                                  'reference', inv.reference)::text;
        INSERT INTO ext_events (facility_id, livemode, type, data)
            VALUES (p_facility, p_livemode, 'billing.payment_completed',
                    json_build_object('invoice', cms_invoice_json(inv),
                                      'amount', p_amount,
                                      'method', p_method)::jsonb);
    ELSE
        UPDATE invoices SET last_failure = p_reason, updated_at = now()
         WHERE id = inv.id
         RETURNING * INTO inv;
        body := json_build_object('id', inv.id, 'status', inv.status,
                                  'last_failure', inv.last_failure)::text;
    END IF;

    status := 200;
    replayed := false;

    INSERT INTO payments (invoice_id, facility_id, livemode, kind,
                          reference, amount, method, reason,
                          idempotency_key, fingerprint,
                          response_status, response_body)
        VALUES (inv.id, p_facility, p_livemode, p_kind, p_reference,
                p_amount, p_method, p_reason, p_idem, p_fp, status, body);
END $$;


-- Relay: claims up to "n" unrelayed events for a lease of "lease"; they
-- are marked relayed once XADD succeeded, or claimed again after the
-- lease (at least once; the event id is stable).
CREATE FUNCTION cms_ext_events_claim(n integer, lease interval)
    RETURNS TABLE (id uuid, facility_id uuid, livemode boolean, payload text)
    LANGUAGE sql
    AS $$
    UPDATE ext_events e SET claimed_until = now() + lease
      FROM (SELECT x.id FROM ext_events x
             WHERE x.relayed_at IS NULL
               AND (x.claimed_until IS NULL OR x.claimed_until < now())
             ORDER BY x.created_at
             LIMIT n
             FOR UPDATE SKIP LOCKED) c
     WHERE e.id = c.id
    RETURNING e.id, e.facility_id, e.livemode,
              json_build_object('id', e.id, 'type', e.type,
                                'created_at', cms_ts(e.created_at),
                                'facility_id', e.facility_id,
                                'livemode', e.livemode,
                                'data', e.data)::text $$;

COMMIT;
