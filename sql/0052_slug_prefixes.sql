-- A derived slug whose base is taken reads the slugs of its base only
-- (issue 35).
--
-- When the slug derived from a title is taken, the next one is base-N,
-- N one more than the largest number taken (cms_slug_next, sql/0012), so
-- the slugs beginning with "base-" are read.  They were found with
-- left(slug, length(base) + 1) = base || '-', which no index serves: the
-- workspace's every slug in that locale was read, under the slug lock of
-- that base.  An article created with a taken title in a workspace of
-- 20,000 articles took 31 ms in PostgreSQL, and the bench's article rows
-- ran at 25 a second when their titles had been used before.  A prefix is
-- a range in byte order, [base-, base.) ('.' follows '-'), which the
-- default collation's order is not; the operators of text_pattern_ops
-- (~>=~, ~<~) compare bytes, and a unique index of that operator class
-- also serves equality and keeps the same uniqueness (it compares with
-- the same "="), so each unique slug index is rebuilt in that class under
-- its own name (the error catalogue maps the name to slug_taken) and the
-- lookups ask for the range.  Building an index holds writes to its table
-- for as long as it takes (seconds for a million articles).
BEGIN;

CREATE UNIQUE INDEX articles_slug_key_bytes
    ON articles (workspace_id, locale, slug text_pattern_ops)
    WHERE deleted_at IS NULL;
DROP INDEX articles_slug_key;
ALTER INDEX articles_slug_key_bytes RENAME TO articles_slug_key;

ALTER TABLE videos DROP CONSTRAINT videos_slug_key;
CREATE UNIQUE INDEX videos_slug_key
    ON videos (workspace_id, locale, slug text_pattern_ops);

ALTER TABLE podcast_shows DROP CONSTRAINT podcast_shows_slug_key;
CREATE UNIQUE INDEX podcast_shows_slug_key
    ON podcast_shows (workspace_id, slug text_pattern_ops);


-- (PL/pgSQL: the SQL body, with a FROM, was planned on every call)
CREATE OR REPLACE FUNCTION cms_slug_next(base text, taken text[])
    RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN CASE WHEN NOT base = ANY (taken) THEN base
           ELSE base || '-' || (
               SELECT greatest(coalesce(max(substr(s, length(base) + 2)
                                            ::bigint), 1), 1) + 1
                 FROM unnest(taken) s
                WHERE left(s, length(base) + 1) = base || '-'
                  AND substr(s, length(base) + 2) ~ '^[1-9][0-9]{0,8}$')
           END;
END $$;


CREATE OR REPLACE FUNCTION cms_article_slug_free(p_workspace uuid,
                                                 p_locale text, base text)
    RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN CASE WHEN NOT EXISTS (
                    SELECT 1 FROM articles
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND slug = base AND deleted_at IS NULL)
           THEN base
           ELSE cms_slug_next(base, base || ARRAY(
                    SELECT slug FROM articles
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND deleted_at IS NULL
                       AND slug ~>=~ (base || '-') AND slug ~<~ (base || '.')))
           END;
END $$;

CREATE OR REPLACE FUNCTION cms_video_slug_free(p_workspace uuid,
                                               p_locale text, base text)
    RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN CASE WHEN NOT EXISTS (
                    SELECT 1 FROM videos
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND slug = base)
           THEN base
           ELSE cms_slug_next(base, base || ARRAY(
                    SELECT slug FROM videos
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND slug ~>=~ (base || '-') AND slug ~<~ (base || '.')))
           END;
END $$;

CREATE OR REPLACE FUNCTION cms_show_slug_free(p_workspace uuid, base text)
    RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN CASE WHEN NOT EXISTS (
                    SELECT 1 FROM podcast_shows
                     WHERE workspace_id = p_workspace AND slug = base)
           THEN base
           ELSE cms_slug_next(base, base || ARRAY(
                    SELECT slug FROM podcast_shows
                     WHERE workspace_id = p_workspace
                       AND slug ~>=~ (base || '-') AND slug ~<~ (base || '.')))
           END;
END $$;

COMMIT;
