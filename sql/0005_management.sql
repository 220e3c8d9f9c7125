-- Extension management: admin credentials, users' privileges per
-- facility, extension configuration (secret fields encrypted), reloads and
-- key rotation.
BEGIN;

-- sk_admin_ credentials: only HMAC-SHA256(pepper, key) and the prefix.
CREATE TABLE admin_credentials (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    facility_id  uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    name         text NOT NULL,
    privileges   text[] NOT NULL,
    key_prefix   text NOT NULL,
    secret_hash  bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);

-- what a user may do in a facility (the UI token checks a manifest's
-- required_privilege against it)
CREATE TABLE facility_members (
    facility_id  uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    privileges   text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (facility_id, user_id)
);

CREATE INDEX facility_members_user_id_idx ON facility_members (user_id);

ALTER TABLE extensions
    ADD COLUMN manifest_url text,
    ADD COLUMN reload_deadline timestamptz;

CREATE INDEX extensions_reloading_idx ON extensions (reload_deadline)
    WHERE status = 'reloading';

-- One row per configuration field.  A secret field's value is only ever
-- stored as AES-256-GCM (nonce, ciphertext, tag) with the extension id and
-- field name as associated data; "value" is then NULL.
CREATE TABLE extension_configs (
    extension_id  uuid NOT NULL REFERENCES extensions (id) ON DELETE CASCADE,
    name          text NOT NULL,
    value         text,
    ciphertext    bytea,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (extension_id, name),
    CHECK ((value IS NULL) <> (ciphertext IS NULL))
);


-- An extension as the list answers it.
CREATE FUNCTION cms_extension_json(e extensions) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object(
              'name', e.name, 'version', e.version, 'category', e.category,
              'is_enabled', e.is_enabled, 'status', e.status,
              'updated_at', cms_ts(e.updated_at)) $$;

-- The configuration as PUT answers it: {field: {value}} or
-- {field: {is_configured}} for secrets.
CREATE FUNCTION cms_extension_config_json(p_extension uuid) RETURNS json
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(json_object_agg(c.name,
              CASE WHEN c.ciphertext IS NOT NULL
                   THEN json_build_object('is_configured', true)
                   ELSE json_build_object('value', c.value) END
              ORDER BY c.name), '{}')
            FROM extension_configs c WHERE c.extension_id = p_extension $$;

-- Reloads whose grace period ended are running again.
CREATE FUNCTION cms_extensions_reload_expired() RETURNS integer
    LANGUAGE sql
    AS $$
    WITH u AS (UPDATE extensions SET status = 'running', updated_at = now()
                WHERE status = 'reloading' AND reload_deadline <= now()
               RETURNING 1)
    SELECT count(*)::integer FROM u $$;

-- Worker 0's tick: reloads past their grace run again; returns the
-- extensions still installing (their consumer groups are created next).
CREATE FUNCTION cms_extensions_tick()
    RETURNS TABLE (id uuid, facility_id uuid, name text)
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM cms_extensions_reload_expired();
    RETURN QUERY SELECT e.id, e.facility_id, e.name FROM extensions e
                  WHERE e.status = 'installing'
                  ORDER BY e.created_at LIMIT 16;
END $$;

-- PUT config: non-secret values are replaced as a whole, secret values
-- only where given (the others stay sealed as they are).
CREATE FUNCTION cms_extension_config_put(p_extension uuid, p_rows jsonb,
                                         p_secrets text[])
    RETURNS json
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM extension_configs
     WHERE extension_id = p_extension
       AND (ciphertext IS NULL OR name = ANY (coalesce(p_secrets, '{}')));
    INSERT INTO extension_configs (extension_id, name, value, ciphertext)
        SELECT p_extension, x.name, x.value, decode(x.cipher, 'hex')
          FROM jsonb_to_recordset(p_rows)
               AS x(name text, value text, cipher text);
    UPDATE extensions SET updated_at = now() WHERE id = p_extension;
    RETURN cms_extension_config_json(p_extension);
END $$;

-- A new live key; the extension's other live keys expire after "grace".
-- NULL when there is no such extension.
CREATE FUNCTION cms_extension_key_rotate(p_facility uuid, p_name text,
                                         p_prefix text, p_hash bytea,
                                         p_grace interval)
    RETURNS json
    LANGUAGE plpgsql
    AS $$
DECLARE
    e    extensions;
    kid  uuid;
BEGIN
    SELECT * INTO e FROM extensions
     WHERE facility_id = p_facility AND name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    UPDATE extension_keys
       SET expires_at = least(coalesce(expires_at, 'infinity'),
                              now() + p_grace)
     WHERE extension_id = e.id AND livemode AND revoked_at IS NULL
       AND (expires_at IS NULL OR expires_at > now());
    INSERT INTO extension_keys (extension_id, facility_id, livemode,
                                privileges, key_prefix, secret_hash)
        VALUES (e.id, e.facility_id, true, e.privileges, p_prefix, p_hash)
        RETURNING id INTO kid;
    RETURN json_build_object('name', e.name, 'api_key_id', kid,
                             'previous_keys_expire_at',
                             cms_ts(now() + p_grace));
END $$;

COMMIT;
