-- Sites and their pages (studio-api.md, Site and Page).  A workspace holds
-- exactly one site (sites_workspace_key: two concurrent creates, one
-- wins, the other is 409 workspace_site_limit), within its plan's
-- site_limit (cms_plan_refusal, the one place limits are decided).
--
-- The publishable key is never stored: the module makes it from the
-- site's id and key_nonce with a key derived from cms_secret
-- (HMAC-SHA256, then the pk_live_ format with its checksum), and keeps
-- only key_hash, the same keyed hash the secret keys are looked up by.
-- Rotating draws a new nonce: the old key's hash is gone at once.  A
-- reader of the database learns neither key.
BEGIN;

CREATE TABLE sites (
    id              uuid PRIMARY KEY,
    workspace_id    uuid NOT NULL REFERENCES workspaces (id)
                    ON DELETE CASCADE,
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    mode            text NOT NULL DEFAULT 'instrumented'
                    CHECK (mode IN ('instrumented', 'rendered')),
    origin          text,
    status          text NOT NULL DEFAULT 'active'
                    CHECK (status IN ('active', 'disabled')),
    key_nonce       text NOT NULL,
    key_hash        bytea NOT NULL,
    key_created_at  timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sites_workspace_key UNIQUE (workspace_id),
    CONSTRAINT sites_key_hash_key UNIQUE (key_hash)
);

CREATE TABLE pages (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    site_id          uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    workspace_id     uuid NOT NULL,
    slug             text NOT NULL CHECK (length(slug) BETWEEN 1 AND 500),
    title            text NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
    seo_title        text,
    seo_description  text,
    og_image         text,
    position         integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pages_slug_key UNIQUE (site_id, slug)
);

CREATE INDEX pages_list_idx ON pages (site_id, position, created_at, id);


-- A new site: the plan's site limit, then the row (its key made by the
-- module: $id, nonce and hash).  The unique workspace constraint decides
-- between concurrent creates.
CREATE FUNCTION cms_site_create(p_workspace uuid, p_id uuid, p_name text,
                                p_mode text, p_origin text, p_nonce text,
                                p_hash bytea)
    RETURNS SETOF sites
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM cms_plan_check(p_workspace, 'sites', 1,
                           (SELECT count(*) FROM sites
                             WHERE workspace_id = p_workspace));
    RETURN QUERY
        INSERT INTO sites (id, workspace_id, name, mode, origin, key_nonce,
                           key_hash)
        VALUES (p_id, p_workspace, p_name, coalesce(p_mode, 'instrumented'),
                p_origin, p_nonce, p_hash)
        RETURNING *;
END $$;

COMMIT;
