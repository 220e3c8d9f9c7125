-- The site's content_version (0021) names what the public surface answers
-- for a site: its section reads are keyed and tagged (ETag) by it, so
-- everything those reads depend on raises it.  Publishing sections did
-- already; so do now a page created, changed or deleted (a path read
-- finds pages by slug) and the workspace's default locale changing (the
-- locale a read without ?locale= gets).
BEGIN;

CREATE FUNCTION cms_site_content_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'pages' THEN
        UPDATE sites SET content_version = content_version + 1
         WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.site_id
                         ELSE NEW.site_id END;
        IF TG_OP = 'UPDATE' AND OLD.site_id IS DISTINCT FROM NEW.site_id THEN
            UPDATE sites SET content_version = content_version + 1
             WHERE id = OLD.site_id;
        END IF;
    ELSE
        UPDATE sites SET content_version = content_version + 1
         WHERE workspace_id = NEW.id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER pages_content_version
    AFTER INSERT OR UPDATE OR DELETE ON pages
    FOR EACH ROW EXECUTE FUNCTION cms_site_content_changed();

CREATE TRIGGER workspaces_content_version
    AFTER UPDATE OF default_locale ON workspaces
    FOR EACH ROW WHEN (OLD.default_locale IS DISTINCT FROM NEW.default_locale)
    EXECUTE FUNCTION cms_site_content_changed();

COMMIT;
