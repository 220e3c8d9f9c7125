-- Derived slugs under concurrency: creators of one title in one
-- workspace and locale took the first free slug of base, base-2 ... and
-- retried when a concurrent creator committed it first, ten times at most;
-- twelve at once could run out of tries and answer slug_taken (seen under
-- load).  Now a transaction-level advisory lock per (workspace, locale,
-- base) orders them: each looks for the free slug after the previous one
-- committed, so none collides (the retries stay for an explicit slug
-- written meanwhile).  Shows (sql/0015) keep their documented limit.
BEGIN;

-- held until the transaction ends
CREATE FUNCTION cms_slug_lock(p_workspace uuid, p_locale text, p_base text)
    RETURNS void
    LANGUAGE sql
    AS $$
        SELECT pg_advisory_xact_lock(
                   hashtextextended('cms slug ' || p_workspace || ' '
                                    || coalesce(p_locale, '') || ' '
                                    || coalesce(p_base, ''), 0)) $$;


CREATE OR REPLACE FUNCTION cms_video_store(v videos, p_id uuid, derived boolean)
    RETURNS videos
    LANGUAGE plpgsql
    AS $$
DECLARE
    base text := v.slug;
BEGIN
    IF derived THEN
        PERFORM cms_slug_lock(v.workspace_id, v.locale, base);
    END IF;
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


CREATE OR REPLACE FUNCTION cms_article_save_slugged(p_workspace uuid, p_actor uuid,
                                         p_can_publish boolean,
                                         p_all boolean, p_id uuid, p jsonb,
                                         p_autosave boolean)
    RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    base  text := p->>'slug';
    loc   text;
BEGIN
    IF p_id IS NOT NULL
       OR NOT coalesce((p->>'slug_derived')::boolean, false)
    THEN
        RETURN cms_article_save_as(p_workspace, p_actor, p_can_publish,
                                   p_all, p_id, p - 'slug_derived',
                                   p_autosave);
    END IF;
    p := p - 'slug_derived';
    loc := coalesce(p->>'locale', (SELECT default_locale FROM workspaces
                                    WHERE id = p_workspace));
    PERFORM cms_slug_lock(p_workspace, loc, base);
    FOR i IN 1 .. 10 LOOP
        p := jsonb_set(p, '{slug}',
                       to_jsonb(cms_article_slug_free(p_workspace, loc,
                                                      base)));
        BEGIN
            RETURN cms_article_save_as(p_workspace, p_actor, p_can_publish,
                                       p_all, NULL, p, p_autosave);
        EXCEPTION WHEN raise_exception THEN
            IF SQLERRM <> 'slug_taken' THEN
                RAISE;
            END IF;
        END;
    END LOOP;
    PERFORM cms_raise('slug_taken', 'slug');
    RETURN NULL;
END $$;

COMMIT;
