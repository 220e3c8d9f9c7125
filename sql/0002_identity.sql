-- Identity: workspaces, users, members and roles, API keys with scopes.
BEGIN;

-- RFC 3339 UTC with milliseconds, the API's one time format
CREATE FUNCTION cms_ts(t timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT to_char(t AT TIME ZONE 'UTC',
                         'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

CREATE TABLE workspaces (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                 text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    default_locale       text NOT NULL DEFAULT 'en',
    plan                 text NOT NULL DEFAULT 'free',
    storage_quota_bytes  bigint NOT NULL DEFAULT 1073741824
                         CHECK (storage_quota_bytes >= 0),
    suspended            boolean NOT NULL DEFAULT false,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email           text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    name            text NOT NULL DEFAULT '',
    password_hash   text NOT NULL,          -- argon2id, encoded form
    email_verified  boolean NOT NULL DEFAULT false,
    active          boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- unique case-insensitively; lookups use lower(email)
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE members (
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role          text NOT NULL
                  CHECK (role IN ('owner', 'admin', 'editor', 'author',
                                  'viewer')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, user_id)
);

CREATE INDEX members_user_id_idx ON members (user_id);

-- Only HMAC-SHA256(pepper, key) and the visible prefix are stored.
CREATE TABLE api_keys (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_by    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    key_prefix    text NOT NULL,
    secret_hash   bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    scopes        text[] NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz
);

CREATE INDEX api_keys_workspace_id_idx ON api_keys (workspace_id, created_at);

-- The records as the API answers them: one definition each, used by every
-- statement that returns one.

CREATE FUNCTION cms_user_json(u users) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object(
              'id', u.id, 'email', u.email, 'name', u.name,
              'email_verified', u.email_verified,
              'created_at', cms_ts(u.created_at),
              'updated_at', cms_ts(u.updated_at)) $$;

CREATE FUNCTION cms_workspace_json(w workspaces, role text) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object(
              'id', w.id, 'name', w.name,
              'default_locale', w.default_locale, 'plan', w.plan,
              'storage_quota_bytes', w.storage_quota_bytes,
              'suspended', w.suspended, 'role', role,
              'created_at', cms_ts(w.created_at),
              'updated_at', cms_ts(w.updated_at)) $$;

CREATE FUNCTION cms_api_key_json(k api_keys) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object(
              'id', k.id, 'workspace_id', k.workspace_id,
              'created_by', k.created_by, 'name', k.name,
              'key_prefix', k.key_prefix, 'scopes', k.scopes,
              'created_at', cms_ts(k.created_at),
              'revoked_at', cms_ts(k.revoked_at)) $$;

COMMIT;
