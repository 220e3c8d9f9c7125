-- Finalizing places the object before the row says ready (issue 32): a
-- ready row always has its object, and an object whose row could not be
-- finalized (a studio DELETE meanwhile, the quota) is removed again by the
-- request that placed it.  For that, a finalization first claims the
-- pending asset for a lease: a second finalization meanwhile is a
-- conflict (it would place its bytes at the same key), the reservation is
-- held at least as long (the expiry job and the next reservation leave
-- it), and a failed finalization releases the claim once its object is
-- gone.  A host that dies while it holds a claim leaves it to run out.
BEGIN;

ALTER TABLE media_assets ADD COLUMN finalizing_until timestamptz;


CREATE FUNCTION cms_media_claim(p_workspace uuid, p_id uuid,
                                p_lease interval)
    RETURNS media_assets
    LANGUAGE plpgsql
    AS $$
DECLARE
    m  media_assets;
BEGIN
    m := cms_media_pending(p_workspace, p_id);
    IF m.finalizing_until > now() THEN
        PERFORM cms_raise('conflict');
    END IF;
    UPDATE media_assets
       SET finalizing_until = now() + p_lease,
           reserved_until = greatest(reserved_until, now() + p_lease)
     WHERE id = p_id
     RETURNING * INTO m;
    RETURN m;
END $$;


CREATE FUNCTION cms_media_release(p_workspace uuid, p_id uuid)
    RETURNS void
    LANGUAGE sql
    AS $$
        UPDATE media_assets SET finalizing_until = NULL
         WHERE workspace_id = p_workspace AND id = p_id
           AND status = 'pending' $$;


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
        updated_at = now()
        WHERE id = p_id
        RETURNING * INTO m;
    RETURN m;
END $$;

COMMIT;
