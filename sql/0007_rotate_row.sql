-- Key rotation answered from columns, and for either mode: the module
-- writes every answer's JSON itself, so the rotation returns its row (the
-- json form, cms_extension_key_rotate, has no caller left: dropped); it
-- takes the mode, so sandbox keys rotate too.  The extension's keys of
-- that mode expire after the grace window and a new key of that mode is
-- issued; the other mode's keys are untouched.
BEGIN;

DROP FUNCTION cms_extension_key_rotate(uuid, text, text, bytea, interval);

-- A row of NULLs when there is no such extension.
CREATE FUNCTION cms_extension_key_rotate_row(p_facility uuid, p_name text,
                                             p_livemode boolean,
                                             p_prefix text, p_hash bytea,
                                             p_grace interval,
                                             OUT name text,
                                             OUT api_key_id uuid,
                                             OUT previous_keys_expire_at text)
    LANGUAGE plpgsql
    AS $$
DECLARE
    e  extensions;
BEGIN
    SELECT * INTO e FROM extensions
     WHERE facility_id = p_facility AND extensions.name = p_name
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
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
        RETURNING id INTO api_key_id;
    name := e.name;
    previous_keys_expire_at := cms_ts(now() + p_grace);
END $$;

COMMIT;
