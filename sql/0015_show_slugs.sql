-- A podcast show's slug derived from its title takes the first free one
-- of base, base-2, base-3... in its workspace (cms_slug_next(), 0012), as
-- articles' and videos' do; a slug given explicitly still answers
-- slug_taken.  Two shows of one title created at the same instant may
-- still meet the unique key: the second then answers slug_taken.
BEGIN;

CREATE FUNCTION cms_show_slug_free(p_workspace uuid, base text)
    RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN NOT EXISTS (
                    SELECT 1 FROM podcast_shows
                     WHERE workspace_id = p_workspace AND slug = base)
           THEN base
           ELSE cms_slug_next(base, ARRAY(
                    SELECT slug FROM podcast_shows
                     WHERE workspace_id = p_workspace
                       AND (slug = base
                            OR left(slug, length(base) + 1) = base || '-')))
           END $$;

COMMIT;
