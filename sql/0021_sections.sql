-- Page sections (content-api.md, Section; DESIGN.md, Section publishing).
-- A section is one (page, section_key, locale): its draft ("data",
-- "version", raised by every save) and its published snapshot
-- ("published_data", "published_version", "published_at"), a copy of
-- the draft made by a publish.  has_unpublished_changes is the two
-- versions differing.  The module validated every value (strings,
-- {html} sanitized, {src, alt}) before these functions run.
--
-- Saves are optimistic: a base_version that is not the current version
-- raises "conflict" (409).  Two saves with the same base_version: the
-- second waits on the first's row lock, then finds the version moved.
--
-- Every save and publish writes page.updated to the outbox in the same
-- transaction; a publish also raises the site's content_version, what
-- the public surface's ETags and caches are keyed by.
BEGIN;

CREATE TABLE sections (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    page_id            uuid NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    workspace_id       uuid NOT NULL,
    section_key        text NOT NULL
                       CHECK (length(section_key) BETWEEN 1 AND 100),
    locale             text NOT NULL,
    data               jsonb NOT NULL DEFAULT '{}',
    version            integer NOT NULL DEFAULT 1,
    published_data     jsonb,
    published_version  integer,
    published_at       timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sections_key UNIQUE (page_id, locale, section_key)
);

ALTER TABLE sites ADD COLUMN content_version bigint NOT NULL DEFAULT 1;


-- The draft view, as the API writes it (the module's column table).
CREATE FUNCTION cms_section_draft(s sections) RETURNS TABLE (
    id uuid, page_id uuid, section_key text, locale text, data jsonb,
    version integer, published_version integer, published_at text,
    has_unpublished_changes boolean, updated_at text)
    LANGUAGE sql STABLE
    AS $$
        SELECT s.id, s.page_id, s.section_key, s.locale, s.data, s.version,
               s.published_version, cms_ts(s.published_at),
               s.published_version IS DISTINCT FROM s.version,
               cms_ts(s.updated_at) $$;


-- The page of the workspace (its site's id), else NULL; a locale given
-- or the workspace's default.
CREATE FUNCTION cms_section_page(p_workspace uuid, p_page uuid,
                                 p_locale text, OUT site uuid,
                                 OUT locale text)
    LANGUAGE sql STABLE
    AS $$
        SELECT p.site_id, coalesce(p_locale, w.default_locale)
          FROM pages p JOIN workspaces w ON w.id = p.workspace_id
         WHERE p.id = p_page AND p.workspace_id = p_workspace $$;


CREATE FUNCTION cms_section_event(p_workspace uuid, p_site uuid,
                                  s sections, p_published boolean)
    RETURNS void
    LANGUAGE sql
    AS $$
        INSERT INTO outbox_events (workspace_id, type, data)
        VALUES (p_workspace, 'page.updated',
                jsonb_build_object('site_id', p_site,
                                   'page_id', s.page_id,
                                   'section_key', s.section_key,
                                   'locale', s.locale,
                                   'version', s.version,
                                   'published', p_published)) $$;


-- A save.  PUT (p_field NULL): the draft's data replaced by p_value;
-- "conflict" when p_base is stale (NULL: no check; a section not yet
-- there is version 0).  POST .../fields: member p_field of the data set
-- to p_value, the section made when missing.  No row when the page is
-- not the workspace's (404).
CREATE FUNCTION cms_section_save(p_workspace uuid, p_page uuid, p_key text,
                                 p_locale text, p_field text, p_value jsonb,
                                 p_base integer)
    RETURNS SETOF sections
    LANGUAGE plpgsql
    AS $$
DECLARE
    pg     record;
    s      sections;
    value  jsonb;
BEGIN
    SELECT * INTO pg FROM cms_section_page(p_workspace, p_page, p_locale);
    IF pg.site IS NULL THEN
        RETURN;
    END IF;

    value := CASE WHEN p_field IS NULL THEN coalesce(p_value, '{}')
                  ELSE jsonb_build_object(p_field, p_value) END;

    INSERT INTO sections (page_id, workspace_id, section_key, locale, data)
    VALUES (p_page, p_workspace, p_key, pg.locale, value)
    ON CONFLICT ON CONSTRAINT sections_key DO UPDATE
       SET data = CASE WHEN p_field IS NULL THEN value
                       ELSE sections.data || value END,
           version = sections.version + 1, updated_at = now()
     WHERE p_field IS NOT NULL OR p_base IS NULL
        OR sections.version = p_base
    RETURNING * INTO s;

    -- a new row is version 1: only a base of null or 0 may make it
    IF s.id IS NULL OR (s.version = 1 AND coalesce(p_base, 0) <> 0) THEN
        PERFORM cms_raise('conflict', 'base_version');
    END IF;

    PERFORM cms_section_event(p_workspace, pg.site, s, false);
    RETURN NEXT s;
END $$;


-- Publish: the drafts with changes (one section_key or all, one locale or
-- all) copied into their snapshots; the site's content_version raised
-- once.  Returns the sections published; "not_found" when the page is
-- not the workspace's.
CREATE FUNCTION cms_section_publish(p_workspace uuid, p_page uuid,
                                    p_key text, p_locale text)
    RETURNS SETOF sections
    LANGUAGE plpgsql
    AS $$
DECLARE
    site_  uuid;
    s      sections;
    n      integer := 0;
BEGIN
    SELECT p.site_id INTO site_ FROM pages p
     WHERE p.id = p_page AND p.workspace_id = p_workspace;
    IF site_ IS NULL THEN
        PERFORM cms_raise('not_found');
    END IF;

    FOR s IN
        UPDATE sections
           SET published_data = data, published_version = version,
               published_at = now()
         WHERE page_id = p_page
           AND (p_key IS NULL OR section_key = p_key)
           AND (p_locale IS NULL OR locale = p_locale)
           AND published_version IS DISTINCT FROM version
        RETURNING *
    LOOP
        PERFORM cms_section_event(p_workspace, site_, s, true);
        n := n + 1;
        RETURN NEXT s;
    END LOOP;

    IF n > 0 THEN
        UPDATE sites SET content_version = content_version + 1
         WHERE id = site_;
    END IF;
END $$;

COMMIT;
