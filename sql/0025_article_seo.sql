-- Article SEO records (studio-api.md, Article SEO record) and the edit
-- rule the article lock and SEO routes share.  Article locks themselves
-- live in Redis (src/ngx_http_cms_locks.c), not here.
--
-- One record per article, made by its first PUT; a PUT merges (a field
-- left out keeps its value, null clears it; data null is {}).  The
-- module bounds each value (src/ngx_http_cms_seo.c); the function checks
-- what needs the stored record: score never above max_score once merged.
BEGIN;

CREATE TABLE article_seo (
    article_id     uuid PRIMARY KEY REFERENCES articles (id)
                   ON DELETE CASCADE,
    workspace_id   uuid NOT NULL REFERENCES workspaces (id)
                   ON DELETE CASCADE,
    score          integer CHECK (score >= 0),
    max_score      integer CHECK (max_score >= 1),
    grade          text,
    focus_keyword  text,
    data           jsonb NOT NULL DEFAULT '{}',
    updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX article_seo_workspace_idx ON article_seo (workspace_id);


-- Whether the live article p_id of p_workspace may be edited by p_actor
-- (NULL: an editor or above, every article), by the rule of article
-- writes (cms_article_lock_own(), sql/0008_article_authors.sql: an author
-- edits only their own, and the row stays locked to the end of the
-- statement): raises "not_found" when there is no such article,
-- "forbidden" when p_actor is not its author.
CREATE FUNCTION cms_article_editable(p_workspace uuid, p_actor uuid,
                                     p_id uuid)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    live boolean;
BEGIN
    IF p_actor IS NULL THEN
        live := EXISTS (SELECT 1 FROM articles
                         WHERE id = p_id AND workspace_id = p_workspace
                           AND deleted_at IS NULL);
    ELSE
        live := cms_article_lock_own(p_workspace, p_actor, p_id);
    END IF;
    IF NOT live THEN
        PERFORM cms_raise('not_found');
    END IF;
    RETURN true;
END $$;


-- PUT .../articles/{id}/seo: the fields present in "p" (validated by the
-- module) merged into the article's record, made first when there is
-- none; the row is locked while it is merged, so concurrent PUTs apply
-- one after the other.
CREATE FUNCTION cms_article_seo_save(p_workspace uuid, p_actor uuid,
                                     p_id uuid, p jsonb)
    RETURNS SETOF article_seo
    LANGUAGE plpgsql
    AS $$
DECLARE
    s article_seo;
BEGIN
    PERFORM cms_article_editable(p_workspace, p_actor, p_id);

    INSERT INTO article_seo (article_id, workspace_id)
        VALUES (p_id, p_workspace) ON CONFLICT (article_id) DO NOTHING;
    SELECT * INTO s FROM article_seo
        WHERE article_id = p_id AND workspace_id = p_workspace FOR UPDATE;

    -- the members of p (only the record's fields: the module's patch)
    -- replace those columns; the others keep their value
    s := jsonb_populate_record(s, p);
    s.data := coalesce(s.data, '{}');

    IF s.score > s.max_score THEN
        PERFORM cms_raise('invalid_field_value',
                          CASE WHEN p ? 'score' THEN 'score'
                               ELSE 'max_score' END);
    END IF;

    RETURN QUERY
        UPDATE article_seo
           SET score = s.score, max_score = s.max_score, grade = s.grade,
               focus_keyword = s.focus_keyword, data = s.data,
               updated_at = now()
         WHERE article_id = p_id
        RETURNING *;
END $$;

COMMIT;
