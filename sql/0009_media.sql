-- Media assets: files a workspace uses, registered at a URL they already
-- live at (status "ready") or reserved by an upload and finalized later
-- (status "pending" until then).  Other records point at an asset by id
-- within the same workspace (the (workspace_id, id) key).
BEGIN;

CREATE TABLE media_assets (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    type           text NOT NULL DEFAULT 'image'
                   CHECK (type IN ('image', 'video', 'audio', 'file')),
    title          text NOT NULL DEFAULT '',
    url            text NOT NULL DEFAULT '',
    thumbnail_url  text NOT NULL DEFAULT '',
    mime_type      text NOT NULL DEFAULT '',
    size_bytes     bigint NOT NULL DEFAULT 0 CHECK (size_bytes >= 0),
    width          integer CHECK (width > 0),
    height         integer CHECK (height > 0),
    folder         text NOT NULL DEFAULT '',
    status         text NOT NULL DEFAULT 'ready'
                   CHECK (status IN ('pending', 'ready')),
    created_by     uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);

CREATE INDEX media_assets_list_idx
    ON media_assets (workspace_id, created_at DESC, id DESC);
CREATE INDEX media_assets_type_idx
    ON media_assets (workspace_id, type, created_at DESC, id DESC);

COMMIT;
