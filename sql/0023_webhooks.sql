-- Webhooks (DESIGN.md, Webhooks; README, Webhooks): a workspace's
-- endpoints.  The signing secret ("whsec_" + base64 of 32 random bytes)
-- is answered once and kept sealed: AES-256-GCM under the key cms_secret
-- derives for stored secrets, the row's identity ("webhook:<id>") bound
-- in as associated data, so a ciphertext moved to another row does not
-- open.  A rotation keeps the previous secret sealed until
-- previous_secret_expires_at: deliveries meanwhile are signed with both.
-- The module checked the URL (https, public addresses) and the event
-- names before these rows are written.
BEGIN;

CREATE TABLE webhooks (
    id                          uuid PRIMARY KEY,
    workspace_id                uuid NOT NULL
                                REFERENCES workspaces (id) ON DELETE CASCADE,
    url                         text NOT NULL
                                CHECK (length(url) BETWEEN 1 AND 2048),
    events                      text[] NOT NULL
                                CHECK (cardinality(events) >= 1),
    enabled                     boolean NOT NULL DEFAULT true,
    description                 text NOT NULL DEFAULT ''
                                CHECK (length(description) <= 1000),
    -- why the endpoint was disabled by the service (a 410), or NULL
    disabled_reason             text,
    secret_sealed               bytea NOT NULL,
    previous_secret_sealed      bytea,
    previous_secret_expires_at  timestamptz,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    CHECK ((previous_secret_sealed IS NULL)
           = (previous_secret_expires_at IS NULL))
);

CREATE INDEX webhooks_workspace_idx ON webhooks (workspace_id, created_at, id);

-- A JSON array of event names as the column keeps them: a repeat kept
-- once, in the order given; NULL for NULL (a PATCH without "events").
CREATE FUNCTION cms_webhook_events(p_events jsonb) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN p_events IS NULL THEN NULL ELSE
              ARRAY(SELECT e FROM jsonb_array_elements_text(p_events)
                    WITH ORDINALITY AS a(e, n) GROUP BY e ORDER BY min(n))
              END $$;

COMMIT;
