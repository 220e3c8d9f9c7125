-- Derived slugs never collide: a slug the module derived from a title
-- (the patch says so with "slug_derived": true) takes the first free one
-- of base, base-2, base-3, ... among the slugs of its workspace and
-- locale; an explicit slug still answers slug_taken.  The module derives
-- at most 190 bytes, so "-" and nine digits fit the 200-byte slug.
--
-- A race between two writers of the same title ends in a unique
-- violation for one of them: its attempt is rolled back to a savepoint and
-- the next free slug tried, up to ten times.
BEGIN;

-- The first slug of "base" that "taken" (the slugs in use that are base
-- or begin with base-) lacks: base, else base-N with N one more than the
-- largest number taken (at least 2).
CREATE FUNCTION cms_slug_next(base text, taken text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE WHEN NOT base = ANY (taken) THEN base
           ELSE base || '-' || (
               SELECT greatest(coalesce(max(substr(s, length(base) + 2)
                                            ::bigint), 1), 1) + 1
                 FROM unnest(taken) s
                WHERE left(s, length(base) + 1) = base || '-'
                  AND substr(s, length(base) + 2) ~ '^[1-9][0-9]{0,8}$')
           END $$;

-- The first free article slug of "base" in a workspace and locale; only a
-- taken base costs more than one index probe.
CREATE FUNCTION cms_article_slug_free(p_workspace uuid, p_locale text,
                                      base text)
    RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN NOT EXISTS (
                    SELECT 1 FROM articles
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND slug = base AND deleted_at IS NULL)
           THEN base
           ELSE cms_slug_next(base, ARRAY(
                    SELECT slug FROM articles
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND deleted_at IS NULL
                       AND (slug = base
                            OR left(slug, length(base) + 1) = base || '-')))
           END $$;


-- Creates or updates an article as cms_article_save_as() (sql/0008) does;
-- a new article whose slug was derived gets the first free one, and the
-- next when a concurrent writer took it first (each attempt rolled back
-- to its savepoint).
CREATE FUNCTION cms_article_save_slugged(p_workspace uuid, p_actor uuid,
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
