-- An article written without subtransactions (issue 35).
--
-- A PL/pgSQL block with an EXCEPTION clause runs in a subtransaction of
-- its own, and one that writes takes a transaction id of its own too.
-- An article created with a derived slug went through two: the retry
-- loop of cms_article_save_slugged() caught the slug_taken raised by
-- cms_article_save(), which caught the unique violation of its INSERT.
-- The INSERT now says ON CONFLICT DO NOTHING and looks at what it wrote:
-- nothing, and the slug was taken (the only unique index a new row can
-- meet, with the primary key of a fresh uuid).  A derived slug's attempt
-- asks for NULL instead of the error (the internal member "slug_retry"
-- of the patch, as "slug_derived" is the route's), and the loop tries the
-- next free slug.  An UPDATE has no ON CONFLICT: it keeps its block, but
-- only when it changes the slug or the locale, the only way it can meet
-- the unique index.  And the article's JSON, which the revision, the
-- event and the answer each built, is built once.  What is written,
-- raised and answered is unchanged (t/100, t/102, t/036, t/110, t/147).
BEGIN;

-- the columns an article's save writes, by id
CREATE FUNCTION cms_article_write(a articles) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE articles SET
        title = a.title, slug = a.slug, subtitle = a.subtitle,
        body = a.body, status = a.status, locale = a.locale,
        image_url = a.image_url, category_id = a.category_id,
        author_id = a.author_id, tags = a.tags,
        is_featured = a.is_featured, is_breaking = a.is_breaking,
        is_opinion = a.is_opinion, focus_keyword = a.focus_keyword,
        read_time_minutes = a.read_time_minutes,
        published_at = a.published_at, announced_for = a.announced_for,
        updated_at = a.updated_at
     WHERE id = a.id;
END $$;


-- Creates (p_id NULL) or updates an article; returns its JSON.  With
-- "slug_retry" in p, a slug taken returns NULL instead of slug_taken.
CREATE OR REPLACE FUNCTION cms_article_save(p_workspace uuid, p_actor uuid,
                                            p_can_publish boolean,
                                            p_id uuid, p jsonb,
                                            p_autosave boolean)
    RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    old    articles;
    a      articles;
    was    boolean := false;
    now_   boolean;
    j      json;
    retry  boolean := p ? 'slug_retry';
BEGIN
    p := p - 'slug_retry';
    IF p_id IS NULL THEN
        a.id := gen_random_uuid();
        a.workspace_id := p_workspace;
        a.subtitle := ''; a.body := ''; a.image_url := '';
        a.focus_keyword := ''; a.tags := '{}'; a.status := 'draft';
        a.is_featured := false; a.is_breaking := false; a.is_opinion := false;
        a.read_time_minutes := 1; a.comment_count := 0;
        a.author_id := p_actor;
        a.created_at := now();
        IF NOT p ? 'locale' THEN
            SELECT default_locale INTO a.locale
                FROM workspaces WHERE id = p_workspace;
        END IF;
    ELSE
        SELECT * INTO old FROM articles
            WHERE id = p_id AND workspace_id = p_workspace
              AND deleted_at IS NULL
            FOR UPDATE;
        IF NOT FOUND THEN
            PERFORM cms_raise('not_found');
        END IF;
        IF old.status IN ('published', 'scheduled') AND NOT p_can_publish
        THEN
            PERFORM cms_raise('cannot_edit_live');
        END IF;
        was := cms_article_status(old) = 'published';
        a := old;
    END IF;

    a := cms_article_apply(a, p);

    IF a.status IN ('published', 'scheduled') AND NOT p_can_publish THEN
        PERFORM cms_raise('cannot_publish', 'status');
    END IF;
    IF a.status = 'scheduled' AND a.published_at IS NULL THEN
        PERFORM cms_raise('invalid_field_value', 'published_at');
    END IF;
    IF a.status = 'published' AND a.published_at IS NULL THEN
        a.published_at := now();
    END IF;
    -- scheduled for a time already past: this save writes its event, and
    -- the announcer (sql/0024) leaves it out of its index (sql/0053)
    IF a.status = 'scheduled' AND a.published_at <= now() THEN
        a.announced_for := a.published_at;
    END IF;
    IF a.category_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM categories
         WHERE id = a.category_id AND workspace_id = p_workspace)
    THEN
        PERFORM cms_raise('invalid_field_value', 'category_id');
    END IF;
    IF a.author_id IS NOT NULL
       AND a.author_id IS DISTINCT FROM old.author_id
       AND NOT EXISTS (
        SELECT 1 FROM members
         WHERE user_id = a.author_id AND workspace_id = p_workspace)
    THEN
        PERFORM cms_raise('invalid_field_value', 'author_id');
    END IF;

    -- a patch that changes nothing writes nothing: no revision, no event
    IF p_id IS NOT NULL
       AND (cms_article_json(a)::jsonb - 'updated_at')
           = (cms_article_json(old)::jsonb - 'updated_at')
    THEN
        RETURN cms_article_json(old)::text;
    END IF;

    a.updated_at := now();

    IF p_id IS NULL THEN
        INSERT INTO articles SELECT a.* ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            IF retry THEN
                RETURN NULL;
            END IF;
            PERFORM cms_raise('slug_taken', 'slug');
        END IF;
    ELSIF (a.slug, a.locale) IS NOT DISTINCT FROM (old.slug, old.locale) THEN
        PERFORM cms_article_write(a);
    ELSE
        BEGIN
            PERFORM cms_article_write(a);
        EXCEPTION WHEN unique_violation THEN
            PERFORM cms_raise('slug_taken', 'slug');
        END;
    END IF;

    j := cms_article_json(a);

    IF NOT coalesce(p_autosave, false)
       AND (p_id IS NULL
            OR (a.title, a.slug, a.subtitle, a.body, a.status)
               IS DISTINCT FROM
               (old.title, old.slug, old.subtitle, old.body, old.status))
    THEN
        INSERT INTO article_revisions (article_id, created_by, snapshot)
            VALUES (a.id, p_actor, j::jsonb);
    END IF;

    now_ := cms_article_status(a) = 'published';

    IF now_ OR was THEN
        INSERT INTO outbox_events (workspace_id, type, data)
            VALUES (p_workspace,
                    CASE WHEN now_ AND NOT was THEN 'article.published'
                         WHEN now_ THEN 'article.updated'
                         ELSE 'article.unpublished' END,
                    j::jsonb);
    END IF;

    RETURN j::text;
END $$;


CREATE OR REPLACE FUNCTION cms_article_save_slugged(p_workspace uuid,
                                                    p_actor uuid,
                                                    p_can_publish boolean,
                                                    p_all boolean,
                                                    p_id uuid, p jsonb,
                                                    p_autosave boolean)
    RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    base  text := p->>'slug';
    loc   text;
    r     text;
BEGIN
    IF p_id IS NOT NULL
       OR NOT coalesce((p->>'slug_derived')::boolean, false)
    THEN
        RETURN cms_article_save_as(p_workspace, p_actor, p_can_publish,
                                   p_all, p_id,
                                   p - 'slug_derived' - 'slug_retry',
                                   p_autosave);
    END IF;
    loc := coalesce(p->>'locale', (SELECT default_locale FROM workspaces
                                    WHERE id = p_workspace));
    p := p - 'slug_derived' || jsonb_build_object('locale', loc,
                                                  'slug_retry', true);
    PERFORM cms_slug_lock(p_workspace, loc, base);
    -- another write may take the free slug first (one that named it)
    FOR i IN 1 .. 10 LOOP
        p := jsonb_set(p, '{slug}',
                       to_jsonb(cms_article_slug_free(p_workspace, loc,
                                                      base)));
        r := cms_article_save_as(p_workspace, p_actor, p_can_publish,
                                 p_all, NULL, p, p_autosave);
        IF r IS NOT NULL THEN
            RETURN r;
        END IF;
    END LOOP;
    PERFORM cms_raise('slug_taken', 'slug');
    RETURN NULL;
END $$;

COMMIT;
