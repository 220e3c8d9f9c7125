-- A section's save updates the row it nearly always finds (issue 35).
--
-- cms_section_save() wrote every save as INSERT ... ON CONFLICT DO
-- UPDATE, through two more PL/pgSQL calls (the page's lookup and the
-- event's insert, each an executor of its own).  A save of a section
-- already there, which is what an editor's saves are after the first, paid
-- for an insert it did not make: the row's defaults and CHECK built and
-- evaluated, the speculative probe of sections_key, then the update.  Now
-- the page's lookup and the event are statements of the function itself,
-- and the save is an UPDATE of the row by its key (page, locale, section
-- key); only when that finds nothing does the INSERT ... ON CONFLICT of
-- before run, which makes the first version and still settles a race
-- with a concurrent first save.  What is written, raised and answered is
-- unchanged (t/113, t/036, t/147).  pgbench on the bench's 10,000 pages, the
-- function alone: 7,185-7,244 saves a second before, 8,271-9,155 after.
BEGIN;

CREATE OR REPLACE FUNCTION cms_section_save(p_workspace uuid, p_page uuid,
                                            p_key text, p_locale text,
                                            p_field text, p_value jsonb,
                                            p_base integer)
    RETURNS SETOF sections
    LANGUAGE plpgsql
    AS $$
DECLARE
    site_  uuid;
    loc    text;
    s      sections;
    value  jsonb := CASE WHEN p_field IS NULL THEN coalesce(p_value, '{}')
                         ELSE jsonb_build_object(p_field, p_value) END;
BEGIN
    SELECT p.site_id, coalesce(p_locale, w.default_locale)
      INTO site_, loc
      FROM pages p JOIN workspaces w ON w.id = p.workspace_id
     WHERE p.id = p_page AND p.workspace_id = p_workspace;
    IF site_ IS NULL THEN
        RETURN;
    END IF;

    UPDATE sections
       SET data = CASE WHEN p_field IS NULL THEN value ELSE data || value END,
           version = version + 1, updated_at = now()
     WHERE page_id = p_page AND locale = loc AND section_key = p_key
       AND (p_field IS NOT NULL OR p_base IS NULL OR version = p_base)
    RETURNING * INTO s;

    -- none, or a stale base: the insert makes the first version, and its
    -- conflict clause settles a first save made meanwhile
    IF s.id IS NULL THEN
        INSERT INTO sections (page_id, workspace_id, section_key, locale,
                              data)
        VALUES (p_page, p_workspace, p_key, loc, value)
        ON CONFLICT ON CONSTRAINT sections_key DO UPDATE
           SET data = CASE WHEN p_field IS NULL THEN value
                           ELSE sections.data || value END,
               version = sections.version + 1, updated_at = now()
         WHERE p_field IS NOT NULL OR p_base IS NULL
            OR sections.version = p_base
        RETURNING * INTO s;
    END IF;

    -- a new row is version 1: only a base of null or 0 may make it
    IF s.id IS NULL OR (s.version = 1 AND coalesce(p_base, 0) <> 0) THEN
        PERFORM cms_raise('conflict', 'base_version');
    END IF;

    -- cms_section_event()'s row, written here
    INSERT INTO outbox_events (workspace_id, type, data)
    VALUES (p_workspace, 'page.updated',
            jsonb_build_object('site_id', site_,
                               'page_id', s.page_id,
                               'section_key', s.section_key,
                               'locale', s.locale,
                               'version', s.version,
                               'published', false));
    RETURN NEXT s;
END $$;

COMMIT;
