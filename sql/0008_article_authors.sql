-- Article writes by role.  Owners, admins and editors write every article;
-- an author writes only the articles they are the author of (live ones
-- too: authors hold publish rights, as the spec says), and may not give an
-- article to someone else.  The module calls cms_article_save_as() and
-- cms_article_delete_as(), which lock the row, check its author against
-- the actor when p_all is false (403 "forbidden"), and then apply the
-- rules of cms_article_save() / cms_article_delete() in the same
-- transaction (the row stays locked, so its author cannot change between
-- the check and the write).
BEGIN;

-- Locks the live article p_id; false when there is none; raises
-- "forbidden" when p_actor is not its author.
CREATE FUNCTION cms_article_lock_own(p_workspace uuid, p_actor uuid,
                                     p_id uuid)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    author uuid;
BEGIN
    SELECT author_id INTO author FROM articles
        WHERE id = p_id AND workspace_id = p_workspace AND deleted_at IS NULL
        FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF author IS DISTINCT FROM p_actor THEN
        PERFORM cms_raise('forbidden');
    END IF;
    RETURN true;
END $$;


-- Creates (p_id NULL) or updates an article as p_actor; returns its JSON.
CREATE FUNCTION cms_article_save_as(p_workspace uuid, p_actor uuid,
                                    p_can_publish boolean, p_all boolean,
                                    p_id uuid, p jsonb, p_autosave boolean)
    RETURNS text
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NOT p_all THEN
        IF p_id IS NOT NULL
           AND NOT cms_article_lock_own(p_workspace, p_actor, p_id)
        THEN
            PERFORM cms_raise('not_found');
        END IF;
        -- an explicit null gives the article to nobody: not one's own
        IF p ? 'author_id'
           AND (p->>'author_id')::uuid IS DISTINCT FROM p_actor
        THEN
            PERFORM cms_raise('forbidden', 'author_id');
        END IF;
    END IF;

    RETURN cms_article_save(p_workspace, p_actor, p_can_publish, p_id, p,
                            p_autosave);
END $$;


-- Soft delete as p_actor; false when there is no such article.
CREATE FUNCTION cms_article_delete_as(p_workspace uuid, p_actor uuid,
                                      p_can_publish boolean, p_all boolean,
                                      p_id uuid)
    RETURNS boolean
    LANGUAGE sql
    AS $$
    SELECT CASE WHEN NOT p_all
                     AND NOT cms_article_lock_own(p_workspace, p_actor, p_id)
                THEN false
                ELSE cms_article_delete(p_workspace, p_can_publish, p_id)
           END
$$;

COMMIT;
