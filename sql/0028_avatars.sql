-- Avatars: a user's picture, stored under cms_storage at
-- "users/<user id>/<32 hex>.<ext>" (ngx_http_cms_avatar.c) and served by
-- GET /v1/files/<key>.  The user record shows it as avatar_url
-- ("/v1/files/<key>", null when none).
--
-- A change goes in one statement that also checks the user is still
-- active and gives back the key it replaced, for the module to remove
-- that file once the row no longer names it.
BEGIN;

ALTER TABLE users
    ADD COLUMN avatar_key text
        CHECK (avatar_key ~ '^users/[0-9a-f-]{36}/[0-9a-f]{32}\.[a-z]+$');

CREATE OR REPLACE FUNCTION cms_user_json(u users) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object(
              'id', u.id, 'email', u.email, 'name', u.name,
              'email_verified', u.email_verified,
              'avatar_url', '/v1/files/' || u.avatar_key,
              'created_at', cms_ts(u.created_at),
              'updated_at', cms_ts(u.updated_at)) $$;


-- Sets (p_key) or clears (NULL) the avatar of the active user p_user:
-- the user record and the key replaced (NULL when none); no row when
-- the user is gone or inactive.
CREATE FUNCTION cms_user_avatar_set(p_user uuid, p_key text)
    RETURNS TABLE (user_json text, old_key text)
    LANGUAGE sql
    AS $$
    UPDATE users u SET avatar_key = p_key, updated_at = now()
        FROM (SELECT id, avatar_key FROM users
                  WHERE id = p_user AND active FOR UPDATE) old
        WHERE u.id = old.id
        RETURNING cms_user_json(u)::text, old.avatar_key
$$;

COMMIT;
