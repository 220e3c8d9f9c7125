-- Content: categories, articles, revisions, and the event outbox.
--
-- Rules that need the current row (publish rights, live edits, slugs per
-- locale, revisions, outbox events) live in cms_article_save() so that a
-- write is one statement and one transaction.  A rule broken raises
-- SQLSTATE P0001 with the API's error code as the message and the field,
-- if any, as the detail; the module answers with that code.
BEGIN;

CREATE TABLE categories (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    slug           text NOT NULL,
    description    text NOT NULL DEFAULT '',
    accent_color   text NOT NULL DEFAULT '#8b5cf6',
    image_url      text NOT NULL DEFAULT '',
    locale         text NOT NULL DEFAULT 'en',
    display_order  integer NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT categories_slug_key UNIQUE (workspace_id, locale, slug),
    UNIQUE (workspace_id, id)
);

CREATE TABLE articles (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id       uuid NOT NULL REFERENCES workspaces (id)
                       ON DELETE CASCADE,
    title              text NOT NULL,
    slug               text NOT NULL,
    subtitle           text NOT NULL DEFAULT '',
    body               text NOT NULL DEFAULT '',
    status             text NOT NULL DEFAULT 'draft'
                       CHECK (status IN ('draft', 'in_review', 'scheduled',
                                         'published', 'archived')),
    locale             text NOT NULL,
    image_url          text NOT NULL DEFAULT '',
    category_id        uuid,
    author_id          uuid REFERENCES users (id) ON DELETE SET NULL,
    tags               text[] NOT NULL DEFAULT '{}',
    is_featured        boolean NOT NULL DEFAULT false,
    is_breaking        boolean NOT NULL DEFAULT false,
    is_opinion         boolean NOT NULL DEFAULT false,
    focus_keyword      text NOT NULL DEFAULT '',
    read_time_minutes  integer NOT NULL DEFAULT 1,
    comment_count      integer NOT NULL DEFAULT 0,
    published_at       timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    deleted_at         timestamptz,
    -- a category of the same workspace only; deleting it unsets it
    FOREIGN KEY (workspace_id, category_id)
        REFERENCES categories (workspace_id, id)
        ON DELETE SET NULL (category_id)
);

-- unique per workspace and language among the articles not deleted
CREATE UNIQUE INDEX articles_slug_key ON articles (workspace_id, locale, slug)
    WHERE deleted_at IS NULL;
CREATE INDEX articles_list_idx
    ON articles (workspace_id, locale, created_at DESC, id DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX articles_deleted_idx ON articles (deleted_at)
    WHERE deleted_at IS NOT NULL;

CREATE TABLE article_revisions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    article_id  uuid NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    created_by  uuid REFERENCES users (id) ON DELETE SET NULL,
    snapshot    jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX article_revisions_article_id_idx
    ON article_revisions (article_id, created_at);

-- Written in the transaction of the change; delivered by a later worker.
CREATE TABLE outbox_events (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    type          text NOT NULL,
    data          jsonb NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    delivered_at  timestamptz
);

CREATE INDEX outbox_events_pending_idx ON outbox_events (created_at)
    WHERE delivered_at IS NULL;


CREATE FUNCTION cms_category_json(c categories) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object(
              'id', c.id, 'name', c.name, 'slug', c.slug,
              'description', c.description, 'accent_color', c.accent_color,
              'image_url', c.image_url, 'locale', c.locale,
              'display_order', c.display_order,
              'created_at', cms_ts(c.created_at),
              'updated_at', cms_ts(c.updated_at)) $$;

-- A scheduled article whose time has come is published: reads say so
-- without a job having to flip the row.
CREATE FUNCTION cms_article_status(a articles) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN a.status = 'scheduled'
                           AND a.published_at <= now()
                      THEN 'published' ELSE a.status END $$;

CREATE FUNCTION cms_article_json(a articles) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object(
              'id', a.id, 'title', a.title, 'slug', a.slug,
              'subtitle', a.subtitle, 'excerpt', a.subtitle, 'body', a.body,
              'status', cms_article_status(a), 'locale', a.locale,
              'image_url', a.image_url, 'category_id', a.category_id,
              'author_id', a.author_id, 'tags', a.tags,
              'is_featured', a.is_featured, 'is_breaking', a.is_breaking,
              'is_opinion', a.is_opinion, 'focus_keyword', a.focus_keyword,
              'read_time_minutes', a.read_time_minutes,
              'comment_count', a.comment_count,
              'published_at', cms_ts(a.published_at),
              'created_at', cms_ts(a.created_at),
              'updated_at', cms_ts(a.updated_at)) $$;


-- Raises the API error "code" (P0001), naming "field" in the detail.
CREATE FUNCTION cms_raise(code text, field text DEFAULT NULL) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION USING MESSAGE = code, DETAIL = coalesce(field, '');
END $$;


-- Copies the fields present in "p" (validated by the module) onto "a".
CREATE FUNCTION cms_article_apply(a articles, p jsonb) RETURNS articles
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    IF p ? 'title' THEN a.title := p->>'title'; END IF;
    IF p ? 'slug' THEN a.slug := p->>'slug'; END IF;
    IF p ? 'subtitle' THEN a.subtitle := p->>'subtitle'; END IF;
    IF p ? 'body' THEN a.body := p->>'body'; END IF;
    IF p ? 'status' THEN a.status := p->>'status'; END IF;
    IF p ? 'locale' THEN a.locale := p->>'locale'; END IF;
    IF p ? 'image_url' THEN a.image_url := p->>'image_url'; END IF;
    IF p ? 'focus_keyword' THEN a.focus_keyword := p->>'focus_keyword'; END IF;
    IF p ? 'author_id' THEN a.author_id := (p->>'author_id')::uuid; END IF;
    IF p ? 'is_featured' THEN
        a.is_featured := (p->>'is_featured')::boolean;
    END IF;
    IF p ? 'is_breaking' THEN
        a.is_breaking := (p->>'is_breaking')::boolean;
    END IF;
    IF p ? 'is_opinion' THEN
        a.is_opinion := (p->>'is_opinion')::boolean;
    END IF;
    IF p ? 'read_time_minutes' THEN
        a.read_time_minutes := (p->>'read_time_minutes')::integer;
    END IF;
    IF p ? 'tags' THEN
        a.tags := ARRAY(SELECT jsonb_array_elements_text(p->'tags'));
    END IF;
    IF coalesce((p->>'clear_category')::boolean, false) THEN
        a.category_id := NULL;
    ELSIF p ? 'category_id' THEN
        a.category_id := (p->>'category_id')::uuid;
    END IF;
    IF p ? 'published_at' THEN
        a.published_at := nullif(p->>'published_at', '')::timestamptz;
    END IF;
    RETURN a;
END $$;


-- Creates (p_id NULL) or updates an article; returns its JSON.
CREATE FUNCTION cms_article_save(p_workspace uuid, p_actor uuid,
                                 p_can_publish boolean, p_id uuid, p jsonb,
                                 p_autosave boolean)
    RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    old  articles;
    a    articles;
    was  boolean := false;
    now_ boolean;
BEGIN
    IF p_id IS NULL THEN
        a.id := gen_random_uuid();
        a.workspace_id := p_workspace;
        a.subtitle := ''; a.body := ''; a.image_url := '';
        a.focus_keyword := ''; a.tags := '{}'; a.status := 'draft';
        a.is_featured := false; a.is_breaking := false; a.is_opinion := false;
        a.read_time_minutes := 1; a.comment_count := 0;
        a.author_id := p_actor;
        a.created_at := now();
        SELECT default_locale INTO a.locale
            FROM workspaces WHERE id = p_workspace;
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

    BEGIN
        IF p_id IS NULL THEN
            INSERT INTO articles SELECT a.*;
        ELSE
            UPDATE articles SET
                title = a.title, slug = a.slug, subtitle = a.subtitle,
                body = a.body, status = a.status, locale = a.locale,
                image_url = a.image_url, category_id = a.category_id,
                author_id = a.author_id, tags = a.tags,
                is_featured = a.is_featured, is_breaking = a.is_breaking,
                is_opinion = a.is_opinion, focus_keyword = a.focus_keyword,
                read_time_minutes = a.read_time_minutes,
                published_at = a.published_at, updated_at = a.updated_at
             WHERE id = a.id;
        END IF;
    EXCEPTION WHEN unique_violation THEN
        PERFORM cms_raise('slug_taken', 'slug');
    END;

    IF NOT coalesce(p_autosave, false)
       AND (p_id IS NULL
            OR (a.title, a.slug, a.subtitle, a.body, a.status)
               IS DISTINCT FROM
               (old.title, old.slug, old.subtitle, old.body, old.status))
    THEN
        INSERT INTO article_revisions (article_id, created_by, snapshot)
            VALUES (a.id, p_actor, cms_article_json(a)::jsonb);
    END IF;

    now_ := cms_article_status(a) = 'published';

    IF now_ OR was THEN
        INSERT INTO outbox_events (workspace_id, type, data)
            VALUES (p_workspace,
                    CASE WHEN now_ AND NOT was THEN 'article.published'
                         WHEN now_ THEN 'article.updated'
                         ELSE 'article.unpublished' END,
                    cms_article_json(a)::jsonb);
    END IF;

    RETURN cms_article_json(a)::text;
END $$;


-- Soft delete; a live article needs publish rights.  Returns false when
-- there is no such article.
CREATE FUNCTION cms_article_delete(p_workspace uuid, p_can_publish boolean,
                                   p_id uuid)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    old articles;
BEGIN
    SELECT * INTO old FROM articles
        WHERE id = p_id AND workspace_id = p_workspace AND deleted_at IS NULL
        FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF old.status IN ('published', 'scheduled') AND NOT p_can_publish THEN
        PERFORM cms_raise('cannot_edit_live');
    END IF;
    UPDATE articles SET deleted_at = now() WHERE id = p_id;
    IF cms_article_status(old) = 'published' THEN
        INSERT INTO outbox_events (workspace_id, type, data)
            VALUES (p_workspace, 'article.unpublished',
                    cms_article_json(old)::jsonb);
    END IF;
    RETURN true;
END $$;


-- Removes what was soft-deleted longer ago than "retention".
CREATE FUNCTION cms_articles_purge(retention interval) RETURNS integer
    LANGUAGE sql
    AS $$
    WITH d AS (DELETE FROM articles
                WHERE deleted_at < now() - retention RETURNING 1)
    SELECT count(*)::integer FROM d $$;

COMMIT;
