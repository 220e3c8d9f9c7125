-- Uploads: a media asset reserved with its storage key and declared size
-- (status "pending" until it is finalized, "ready" after), the bytes
-- stored under cms_storage at its key.
--
-- Quota accounting: what a workspace stores is cms_plan_usage(ws,
-- 'storage_bytes'), the sum of its assets' size_bytes, reservations
-- included (a pending asset's size_bytes is its declared size).  Every
-- reservation and finalization first locks the workspace row FOR NO KEY
-- UPDATE (as the membership changes of sql/0016 do), so no two of them
-- decide from the same sum: the quota holds under concurrent uploads.
-- The limits themselves are decided by cms_plan_refusal() alone.
BEGIN;

ALTER TABLE media_assets
    -- "<workspace_id>/<asset_id>.<ext>" ('' for an asset stored elsewhere)
    ADD COLUMN storage_key text NOT NULL DEFAULT '',
    -- hex SHA-256 of the stored bytes ('' when none are stored here)
    ADD COLUMN sha256 text NOT NULL DEFAULT '',
    -- a pending upload's reservation lapses then
    ADD COLUMN reserved_until timestamptz;

CREATE INDEX media_assets_reserved_idx ON media_assets (reserved_until)
    WHERE status = 'pending';


-- Reserves an upload of p_size bytes (the per-file cap, then the quota;
-- after giving back the workspace's lapsed reservations) and returns the
-- pending asset, its key ending in "." p_ext.
CREATE FUNCTION cms_media_reserve(p_workspace uuid, p_user uuid,
                                  p_type text, p_title text, p_mime text,
                                  p_ext text, p_size bigint, p_folder text,
                                  p_ttl float8)
    RETURNS media_assets
    LANGUAGE plpgsql
    AS $$
DECLARE
    m   media_assets;
    id  uuid := gen_random_uuid();
BEGIN
    PERFORM 1 FROM workspaces WHERE workspaces.id = p_workspace
        FOR NO KEY UPDATE;
    DELETE FROM media_assets
        WHERE workspace_id = p_workspace AND status = 'pending'
          AND reserved_until <= now();
    PERFORM cms_plan_check(p_workspace, 'upload_bytes', p_size);
    PERFORM cms_plan_check(p_workspace, 'storage_bytes', p_size);
    INSERT INTO media_assets (id, workspace_id, type, title, mime_type,
                              size_bytes, folder, status, storage_key,
                              reserved_until, created_by)
        VALUES (id, p_workspace, p_type, p_title, p_mime, p_size, p_folder,
                'pending', p_workspace || '/' || id || '.' || p_ext,
                now() + make_interval(secs => p_ttl), p_user)
        RETURNING * INTO m;
    RETURN m;
END $$;


-- The pending asset p_id, locked for its finalization: not_found when
-- there is none (or its reservation lapsed), conflict when it is
-- finalized already.
CREATE FUNCTION cms_media_pending(p_workspace uuid, p_id uuid)
    RETURNS media_assets
    LANGUAGE plpgsql
    AS $$
DECLARE
    m  media_assets;
BEGIN
    SELECT * INTO m FROM media_assets
        WHERE workspace_id = p_workspace AND id = p_id FOR UPDATE;
    IF NOT FOUND
       OR (m.status = 'pending' AND m.reserved_until <= now())
    THEN
        PERFORM cms_raise('not_found');
    END IF;
    IF m.status <> 'pending' THEN
        PERFORM cms_raise('conflict');
    END IF;
    RETURN m;
END $$;


-- Finalizes the pending asset p_id.  p_size not NULL: p_size bytes were
-- stored at its key (hash p_sha); the real size replaces the reservation
-- under the per-file cap and the quota, and its URL is the files route's.
-- p_size NULL: nothing is stored here; the asset points at p_url and its
-- reservation is given back (size 0, no key).  Title, thumbnail, width
-- and height replace what the reservation had when given.
CREATE FUNCTION cms_media_finalize(p_workspace uuid, p_id uuid,
                                   p_size bigint, p_sha text, p_url text,
                                   p_title text, p_thumb text,
                                   p_width integer, p_height integer)
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
                   ELSE '/v1/files/' || storage_key END,
        title = coalesce(p_title, title),
        thumbnail_url = coalesce(p_thumb, thumbnail_url),
        width = coalesce(p_width, width),
        height = coalesce(p_height, height),
        updated_at = now()
        WHERE id = p_id
        RETURNING * INTO m;
    RETURN m;
END $$;


-- The periodic job: lapsed reservations of every workspace given back
-- (nothing is stored for a pending asset: its bytes go into place only
-- once it is ready).  Returns how many.
CREATE FUNCTION cms_media_expire() RETURNS bigint
    LANGUAGE sql
    AS $$
    WITH gone AS (
        DELETE FROM media_assets
            WHERE status = 'pending' AND reserved_until <= now()
            RETURNING 1)
    SELECT count(*) FROM gone
$$;

COMMIT;
