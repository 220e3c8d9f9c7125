-- Key rotation answered from columns: the module writes every answer's
-- JSON itself (no JSON built in SQL beside JSON built in C), so the
-- rotation returns its row; cms_extension_key_rotate() keeps its json
-- answer for anything else that calls it, now written over the row.
BEGIN;

-- A new live key; the extension's other live keys expire after "grace".
-- A row of NULLs when there is no such extension.
CREATE FUNCTION cms_extension_key_rotate_row(p_facility uuid, p_name text,
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
     WHERE extension_id = e.id AND livemode AND revoked_at IS NULL
       AND (expires_at IS NULL OR expires_at > now());
    INSERT INTO extension_keys (extension_id, facility_id, livemode,
                                privileges, key_prefix, secret_hash)
        VALUES (e.id, e.facility_id, true, e.privileges, p_prefix, p_hash)
        RETURNING id INTO api_key_id;
    name := e.name;
    previous_keys_expire_at := cms_ts(now() + p_grace);
END $$;

CREATE OR REPLACE FUNCTION cms_extension_key_rotate(p_facility uuid,
                                                    p_name text,
                                                    p_prefix text,
                                                    p_hash bytea,
                                                    p_grace interval)
    RETURNS json
    LANGUAGE sql
    AS $$ SELECT CASE WHEN k.name IS NULL THEN NULL
                      ELSE json_build_object('name', k.name,
                               'api_key_id', k.api_key_id,
                               'previous_keys_expire_at',
                               k.previous_keys_expire_at) END
            FROM cms_extension_key_rotate_row(p_facility, p_name, p_prefix,
                                              p_hash, p_grace) k $$;

COMMIT;
