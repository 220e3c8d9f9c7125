-- Responsive images (issue 36, docs/images.md).  A stored image's header
-- is read when it is finalized: its width and height as shown (EXIF
-- orientation applied) replace what the client said, and its average
-- colour is kept for a placeholder.  Its variants live beside it,
-- "<workspace>/<asset>/w<width>.<ext>", named by the asset as long as it
-- exists: an asset's deletion queues its key, and the orphans pass
-- (or, on the folder, the removal itself) takes its variants.
BEGIN;

ALTER TABLE media_assets ADD COLUMN color text
    CHECK (color IS NULL OR color ~ '^#[0-9a-f]{6}$');

DROP FUNCTION cms_media_finalize(uuid, uuid, bigint, text, text, text, text,
                                 integer, integer);

CREATE FUNCTION cms_media_finalize(p_workspace uuid, p_id uuid,
                                   p_size bigint, p_sha text,
                                   p_url text, p_title text,
                                   p_thumb text, p_width integer,
                                   p_height integer, p_color text)
    RETURNS media_assets
    LANGUAGE plpgsql
    AS $$
DECLARE
    m  media_assets;
BEGIN
    PERFORM 1 FROM workspaces WHERE id = p_workspace FOR NO KEY UPDATE;
    m := cms_media_pending(p_workspace, p_id);
    IF p_size IS NOT NULL THEN
        PERFORM cms_plan_check(p_workspace, 'upload_bytes', p_size);
        PERFORM cms_plan_check(p_workspace, 'storage_bytes', p_size,
                               cms_plan_usage(p_workspace, 'storage_bytes')
                               - m.size_bytes);
    END IF;
    UPDATE media_assets SET
        status = 'ready', reserved_until = NULL, finalizing_until = NULL,
        size_bytes = coalesce(p_size, 0),
        sha256 = coalesce(p_sha, ''),
        storage_key = CASE WHEN p_size IS NULL THEN '' ELSE storage_key END,
        url = CASE WHEN p_size IS NULL THEN coalesce(p_url, '')
                   ELSE coalesce(p_url, '/v1/files/' || storage_key) END,
        title = coalesce(p_title, title),
        thumbnail_url = coalesce(p_thumb, thumbnail_url),
        width = coalesce(p_width, width),
        height = coalesce(p_height, height),
        color = p_color,
        updated_at = now()
        WHERE id = p_id
        RETURNING * INTO m;
    RETURN m;
END $$;

-- a variant's key is named while its asset is
CREATE OR REPLACE FUNCTION cms_object_named(p_key text)
    RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT EXISTS (SELECT 1 FROM media_assets WHERE storage_key = p_key)
            OR EXISTS (SELECT 1 FROM users WHERE avatar_key = p_key)
            -- the casts only for a key of the variants' shape, whatever
            -- the planner orders
            OR CASE WHEN p_key ~ ('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-'
                                  '[0-9a-f]{4}-[0-9a-f]{12}/[0-9a-f]{8}-'
                                  '[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                                  '[0-9a-f]{12}/w[1-9][0-9]{0,4}[.]'
                                  '[a-z0-9]{1,10}$')
               THEN EXISTS (SELECT 1 FROM media_assets
                             WHERE id = split_part(p_key, '/', 2)::uuid
                               AND workspace_id
                                   = split_part(p_key, '/', 1)::uuid
                               AND storage_key <> '')
               ELSE false END $$;

COMMIT;
