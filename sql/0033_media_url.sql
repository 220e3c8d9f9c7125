-- A stored asset's url is absolute (issue 31, finding 5): the module
-- passes the address GET /v1/files/<key> answers at (cms_storage's
-- base_url=, or the request's scheme and Host), so that a record read
-- back can be registered again (POST /v1/api/media takes absolute http(s)
-- URLs only) and a browser on the customer's site can use it.  Assets
-- finalized before keep the relative "/v1/files/<key>" they were given.
BEGIN;

CREATE OR REPLACE FUNCTION cms_media_finalize(p_workspace uuid, p_id uuid,
                                              p_size bigint, p_sha text,
                                              p_url text, p_title text,
                                              p_thumb text, p_width integer,
                                              p_height integer)
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
        status = 'ready', reserved_until = NULL,
        size_bytes = coalesce(p_size, 0),
        sha256 = coalesce(p_sha, ''),
        storage_key = CASE WHEN p_size IS NULL THEN '' ELSE storage_key END,
        url = CASE WHEN p_size IS NULL THEN coalesce(p_url, '')
                   ELSE coalesce(p_url, '/v1/files/' || storage_key) END,
        title = coalesce(p_title, title),
        thumbnail_url = coalesce(p_thumb, thumbnail_url),
        width = coalesce(p_width, width),
        height = coalesce(p_height, height),
        updated_at = now()
        WHERE id = p_id
        RETURNING * INTO m;
    RETURN m;
END $$;

COMMIT;
