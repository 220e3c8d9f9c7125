-- Key rotation covers sandbox keys: cms_extension_key_rotate() takes the
-- mode.  The extension's keys of that mode expire after the grace window,
-- a new key of that mode is issued; the other mode's keys are untouched.
BEGIN;

DROP FUNCTION cms_extension_key_rotate(uuid, text, text, bytea, interval);

CREATE FUNCTION cms_extension_key_rotate(p_facility uuid, p_name text,
                                         p_livemode boolean, p_prefix text,
                                         p_hash bytea, p_grace interval)
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
     WHERE extension_id = e.id AND livemode = p_livemode
       AND revoked_at IS NULL
       AND (expires_at IS NULL OR expires_at > now());
    INSERT INTO extension_keys (extension_id, facility_id, livemode,
                                privileges, key_prefix, secret_hash)
        VALUES (e.id, e.facility_id, p_livemode, e.privileges, p_prefix,
                p_hash)
        RETURNING id INTO kid;
    RETURN json_build_object('name', e.name, 'api_key_id', kid,
                             'previous_keys_expire_at',
                             cms_ts(now() + p_grace));
END $$;

COMMIT;
