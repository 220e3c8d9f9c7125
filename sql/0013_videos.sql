-- Videos: one row per video, its slug unique per workspace and locale.
-- Writes go through cms_video_save(), which holds the rules that need the
-- current row (publish rights on a live video, clear_stream, published_at,
-- derived slugs, the video.published event) in one transaction.  Deletes
-- remove the row (the spec keeps soft deletes for articles only).
BEGIN;

CREATE TABLE videos (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id       uuid NOT NULL REFERENCES workspaces (id)
                       ON DELETE CASCADE,
    title              text NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
    slug               text NOT NULL,
    description        text NOT NULL DEFAULT '',
    poster_url         text NOT NULL DEFAULT '',
    stream_video_id    text,
    stream_library_id  text,
    stream_status      text CHECK (stream_status IN ('pending', 'uploading',
                                                     'processing', 'ready',
                                                     'failed')),
    source_url         text,
    duration_seconds   double precision CHECK (duration_seconds >= 0),
    status             text NOT NULL DEFAULT 'draft'
                       CHECK (status IN ('draft', 'published', 'archived')),
    locale             text NOT NULL DEFAULT 'en',
    published_at       timestamptz,
    created_by         uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT videos_slug_key UNIQUE (workspace_id, locale, slug),
    UNIQUE (workspace_id, id)
);

CREATE INDEX videos_list_idx
    ON videos (workspace_id, created_at DESC, id DESC);
CREATE INDEX videos_status_idx
    ON videos (workspace_id, status, created_at DESC, id DESC);


-- The event payload (the video as the API shows it).
CREATE FUNCTION cms_video_json(v videos) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT jsonb_build_object(
              'id', v.id, 'title', v.title, 'slug', v.slug,
              'description', v.description, 'poster_url', v.poster_url,
              'stream_video_id', v.stream_video_id,
              'stream_library_id', v.stream_library_id,
              'stream_status', v.stream_status, 'source_url', v.source_url,
              'duration_seconds', v.duration_seconds, 'status', v.status,
              'locale', v.locale, 'published_at', cms_ts(v.published_at),
              'created_at', cms_ts(v.created_at),
              'updated_at', cms_ts(v.updated_at)) $$;


-- Copies the fields present in "p" (validated by the module) onto "v";
-- a JSON null unsets a nullable column.  clear_stream comes last: it
-- wins over the stream fields given with it.
CREATE FUNCTION cms_video_apply(v videos, p jsonb) RETURNS videos
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
    IF p ? 'title' THEN v.title := p->>'title'; END IF;
    IF p ? 'slug' THEN v.slug := p->>'slug'; END IF;
    IF p ? 'description' THEN v.description := p->>'description'; END IF;
    IF p ? 'poster_url' THEN v.poster_url := p->>'poster_url'; END IF;
    IF p ? 'stream_video_id' THEN
        v.stream_video_id := p->>'stream_video_id';
    END IF;
    IF p ? 'stream_library_id' THEN
        v.stream_library_id := p->>'stream_library_id';
    END IF;
    IF p ? 'stream_status' THEN v.stream_status := p->>'stream_status'; END IF;
    IF p ? 'source_url' THEN v.source_url := p->>'source_url'; END IF;
    IF p ? 'duration_seconds' THEN
        v.duration_seconds := (p->>'duration_seconds')::double precision;
    END IF;
    IF p ? 'status' THEN v.status := p->>'status'; END IF;
    IF p ? 'locale' THEN v.locale := p->>'locale'; END IF;
    IF p ? 'published_at' THEN
        v.published_at := nullif(p->>'published_at', '')::timestamptz;
    END IF;
    IF coalesce((p->>'clear_stream')::boolean, false) THEN
        v.stream_video_id := NULL;
        v.stream_library_id := NULL;
        v.stream_status := NULL;
    END IF;
    RETURN v;
END $$;


-- The first free video slug of "base" in a workspace and locale.
CREATE FUNCTION cms_video_slug_free(p_workspace uuid, p_locale text,
                                    base text)
    RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN NOT EXISTS (
                    SELECT 1 FROM videos
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND slug = base)
           THEN base
           ELSE cms_slug_next(base, ARRAY(
                    SELECT slug FROM videos
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND (slug = base
                            OR left(slug, length(base) + 1) = base || '-')))
           END $$;


-- Writes "v" (a new video when p_id is NULL); slug_taken when its slug
-- is.  With "derived", the first free slug of v.slug instead, retried
-- when a concurrent writer takes it first.
CREATE FUNCTION cms_video_store(v videos, p_id uuid, derived boolean)
    RETURNS videos
    LANGUAGE plpgsql
    AS $$
DECLARE
    base text := v.slug;
BEGIN
    FOR i IN 1 .. 10 LOOP
        IF derived THEN
            v.slug := cms_video_slug_free(v.workspace_id, v.locale, base);
        END IF;
        BEGIN
            IF p_id IS NULL THEN
                INSERT INTO videos SELECT v.*;
            ELSE
                UPDATE videos SET
                    title = v.title, slug = v.slug,
                    description = v.description, poster_url = v.poster_url,
                    stream_video_id = v.stream_video_id,
                    stream_library_id = v.stream_library_id,
                    stream_status = v.stream_status,
                    source_url = v.source_url,
                    duration_seconds = v.duration_seconds,
                    status = v.status, locale = v.locale,
                    published_at = v.published_at, updated_at = v.updated_at
                 WHERE id = v.id;
            END IF;
            RETURN v;
        EXCEPTION WHEN unique_violation THEN
            IF NOT derived THEN
                PERFORM cms_raise('slug_taken', 'slug');
            END IF;
        END;
    END LOOP;
    PERFORM cms_raise('slug_taken', 'slug');
    RETURN NULL;
END $$;


-- Creates (p_id NULL) or updates a video; returns its row.  Editing or
-- publishing a live video, and publishing one, need publish rights; a
-- video that becomes published gets published_at (unless given) and a
-- video.published event in the outbox.
CREATE FUNCTION cms_video_save(p_workspace uuid, p_actor uuid,
                               p_can_publish boolean, p_id uuid, p jsonb)
    RETURNS videos
    LANGUAGE plpgsql
    AS $$
DECLARE
    old  videos;
    v    videos;
    was  boolean := false;
BEGIN
    IF p_id IS NULL THEN
        v.id := gen_random_uuid();
        v.workspace_id := p_workspace;
        v.description := ''; v.poster_url := '';
        v.status := 'draft'; v.locale := 'en';
        v.created_by := p_actor;
        v.created_at := now();
    ELSE
        SELECT * INTO old FROM videos
            WHERE id = p_id AND workspace_id = p_workspace
            FOR UPDATE;
        IF NOT FOUND THEN
            PERFORM cms_raise('not_found');
        END IF;
        was := old.status = 'published';
        IF was AND NOT p_can_publish THEN
            PERFORM cms_raise('cannot_edit_live');
        END IF;
        v := old;
    END IF;

    v := cms_video_apply(v, p);

    IF v.status = 'published' AND NOT was AND NOT p_can_publish THEN
        PERFORM cms_raise('cannot_publish', 'status');
    END IF;
    IF v.status = 'published' AND v.published_at IS NULL THEN
        v.published_at := now();
    END IF;

    -- a patch that changes nothing writes nothing
    IF p_id IS NOT NULL AND v IS NOT DISTINCT FROM old THEN
        RETURN old;
    END IF;

    v.updated_at := now();
    v := cms_video_store(v, p_id,
                         p_id IS NULL
                         AND coalesce((p->>'slug_derived')::boolean, false));

    IF v.status = 'published' AND NOT was THEN
        INSERT INTO outbox_events (workspace_id, type, data)
            VALUES (p_workspace, 'video.published', cms_video_json(v));
    END IF;

    RETURN v;
END $$;


-- Deletes a video; a live one needs publish rights.  False when there is
-- no such video.
CREATE FUNCTION cms_video_delete(p_workspace uuid, p_can_publish boolean,
                                 p_id uuid)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    old videos;
BEGIN
    SELECT * INTO old FROM videos
        WHERE id = p_id AND workspace_id = p_workspace
        FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF old.status = 'published' AND NOT p_can_publish THEN
        PERFORM cms_raise('cannot_edit_live');
    END IF;
    DELETE FROM videos WHERE id = p_id;
    RETURN true;
END $$;

COMMIT;
