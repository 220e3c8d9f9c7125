-- Functions whose plans are kept (issue 35).
--
-- PostgreSQL keeps the plan of a statement a PL/pgSQL function runs for
-- the rest of the session; an SQL function it cannot inline into its
-- caller is parsed, analysed and planned again on every call from a new
-- statement.  Every request is a new statement, so the SQL functions a
-- route reaches that way were planned per request: a third of
-- PostgreSQL's time in an article created (the slug, the search vector,
-- the timestamps of its event), 0.1-0.4 ms of a list's total from the
-- counters, the plan limits a custom module checks, the audit row of a
-- studio write.  t/147 walks the main routes with track_functions = all
-- and fails on any SQL function of ours that ran as a call of its own.
--
-- Two kinds of fix:
--
-- - An SQL function declared IMMUTABLE whose body is only STABLE (to_char,
--   a regconfig cast, array_to_string) is never inlined: the planner
--   refuses to put a less stable body in place of the call.  Declared
--   STABLE, as they are, they are inlined into the caller's plan, which
--   is kept.  (No index, constraint or generated column names them.)
-- - An SQL function with a FROM, a sub-select or a WITH cannot be
--   inlined: the same body in PL/pgSQL keeps its plans.
--
-- And the counters' trigger (sql/0044) built its statement as text and
-- ran it with EXECUTE on every write (planned each time): the same
-- statement is now static, the counted columns read from each row as
-- JSON, so its plan is kept per table.
BEGIN;

-- ---- declared as stable as their bodies
ALTER FUNCTION cms_ts(timestamptz) STABLE;
ALTER FUNCTION cms_ts_config(text) STABLE;
ALTER FUNCTION cms_article_search(articles) STABLE;
ALTER FUNCTION cms_video_search(videos) STABLE;


-- ---- the same bodies in PL/pgSQL

CREATE OR REPLACE FUNCTION cms_record_total(p_kind text, p_workspace uuid,
                                            p_value text)
    RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN (SELECT coalesce(sum(n), 0)::bigint FROM record_counts
             WHERE kind = p_kind AND workspace_id = p_workspace
               AND (p_value IS NULL OR value = p_value));
END $$;

CREATE OR REPLACE FUNCTION cms_record_total_of(p_kind text, p_workspace uuid,
                                               p_parent uuid, p_status text)
    RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN (SELECT coalesce(sum(n), 0)::bigint FROM record_counts
             WHERE kind = p_kind AND workspace_id = p_workspace
               AND (p_parent IS NULL
                    OR starts_with(value, p_parent::text || ':'))
               AND (p_status IS NULL
                    OR split_part(value, ':', 2) = p_status));
END $$;

CREATE OR REPLACE FUNCTION cms_article_total(p_workspace uuid, p_locale text,
                                             p_status text)
    RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN coalesce((SELECT sum(n) FROM article_counts
                      WHERE workspace_id = p_workspace AND locale = p_locale
                        AND (p_status IS NULL OR status = p_status)), 0)
           + CASE WHEN p_status IN ('published', 'scheduled') THEN
                 CASE p_status WHEN 'published' THEN 1 ELSE -1 END
                 * (SELECT count(*) FROM articles
                     WHERE workspace_id = p_workspace
                       AND locale = p_locale AND status = 'scheduled'
                       AND deleted_at IS NULL AND published_at <= now())
             ELSE 0 END;
END $$;

CREATE OR REPLACE FUNCTION cms_comment_total(p_article uuid, p_status text)
    RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN (SELECT coalesce(sum(n), 0)::bigint FROM comment_counts
             WHERE article_id = p_article
               AND (p_status IS NULL OR status = p_status));
END $$;

CREATE OR REPLACE FUNCTION cms_plan_usage(p_workspace uuid, p_limit text)
    RETURNS bigint
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN CASE p_limit
        WHEN 'members' THEN
            (SELECT count(*) FROM members WHERE workspace_id = p_workspace)
            + (SELECT count(*) FROM invitations
                WHERE workspace_id = p_workspace AND accepted_at IS NULL
                  AND revoked_at IS NULL AND expires_at > now())
        WHEN 'storage_bytes' THEN
            (SELECT coalesce(sum(size_bytes), 0)::bigint FROM media_assets
              WHERE workspace_id = p_workspace)
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
           ELSE cms_slug_next(base, ARRAY(
                    SELECT slug FROM articles
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND deleted_at IS NULL
                       AND (slug = base
                            OR left(slug, length(base) + 1) = base || '-')))
           END;
END $$;

CREATE OR REPLACE FUNCTION cms_custom_keep(d jsonb, p_schema jsonb)
    RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
    RETURN (SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}')
              FROM jsonb_each(d) e
             WHERE e.key IN (SELECT f->>'key'
                               FROM jsonb_array_elements(p_schema->'fields')
                                    f));
END $$;

CREATE OR REPLACE FUNCTION cms_entry_search(p_data jsonb, p_schema jsonb,
                                            p_locale text)
    RETURNS tsvector
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN (WITH f AS (
                SELECT x->>'type' AS t, p_data->>(x->>'key') AS v, n
                  FROM jsonb_array_elements(p_schema->'fields')
                       WITH ORDINALITY AS e(x, n)
                 WHERE jsonb_typeof(p_data->(x->>'key')) = 'string'),
            first AS (SELECT min(n) AS n FROM f WHERE t = 'text')
            SELECT cms_search_vector(cms_ts_config(p_locale),
                (SELECT v FROM f, first WHERE f.n = first.n),
                (SELECT string_agg(v, ' ') FROM f, first
                  WHERE t = 'text' AND f.n <> first.n),
                (SELECT string_agg(v, ' ') FROM f WHERE t = 'select'),
                (SELECT string_agg(v, ' ') FROM f WHERE t = 'richtext')));
END $$;

CREATE OR REPLACE FUNCTION cms_entry_search_title(p_data jsonb, p_schema jsonb)
    RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN (SELECT left(p_data->>(x->>'key'), 200)
              FROM jsonb_array_elements(p_schema->'fields') WITH ORDINALITY
                   AS e(x, n)
             WHERE x->>'type' = 'text'
               AND jsonb_typeof(p_data->(x->>'key')) = 'string'
             ORDER BY n LIMIT 1);
END $$;

CREATE OR REPLACE FUNCTION cms_cdn_purge_workspace(p_workspace uuid)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM cms_cdn_purge_queue('site-' || s.id)
       FROM sites s WHERE s.workspace_id = p_workspace;
END $$;

CREATE OR REPLACE FUNCTION cms_section_page(p_workspace uuid, p_page uuid,
                                            p_locale text,
                                            OUT site uuid, OUT locale text)
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    SELECT p.site_id, coalesce(p_locale, w.default_locale)
      INTO site, locale
      FROM pages p JOIN workspaces w ON w.id = p.workspace_id
     WHERE p.id = p_page AND p.workspace_id = p_workspace;
END $$;

CREATE OR REPLACE FUNCTION cms_section_event(p_workspace uuid, p_site uuid,
                                             s sections, p_published boolean)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO outbox_events (workspace_id, type, data)
    VALUES (p_workspace, 'page.updated',
            jsonb_build_object('site_id', p_site,
                               'page_id', s.page_id,
                               'section_key', s.section_key,
                               'locale', s.locale,
                               'version', s.version,
                               'published', p_published));
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
           ELSE cms_slug_next(base, ARRAY(
                    SELECT slug FROM podcast_shows
                     WHERE workspace_id = p_workspace
                       AND (slug = base
                            OR left(slug, length(base) + 1) = base || '-')))
           END;
END $$;

CREATE OR REPLACE FUNCTION cms_video_slug_free(p_workspace uuid, p_locale text,
                                               base text)
    RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN CASE WHEN NOT EXISTS (
                    SELECT 1 FROM videos
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND slug = base)
           THEN base
           ELSE cms_slug_next(base, ARRAY(
                    SELECT slug FROM videos
                     WHERE workspace_id = p_workspace AND locale = p_locale
                       AND (slug = base
                            OR left(slug, length(base) + 1) = base || '-')))
           END;
END $$;

CREATE OR REPLACE FUNCTION cms_episode_search(e podcast_episodes,
                                              p_language text)
    RETURNS tsvector
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
BEGIN
    RETURN cms_search_vector(cms_ts_config(p_language), e.title, '', '',
                             e.description);
END $$;

CREATE OR REPLACE FUNCTION cms_audit(p_workspace uuid, p_actor uuid,
                                     p_action text, p_target_type text,
                                     p_target uuid, p_data jsonb)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO audit_events (workspace_id, actor_id, action, target_type,
                              target_id, data)
        VALUES (p_workspace, p_actor, p_action, coalesce(p_target_type, ''),
                p_target, coalesce(p_data, '{}'));
END $$;

CREATE OR REPLACE FUNCTION cms_key_principal_role(p_workspace uuid,
                                                  p_user uuid)
    RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN (SELECT m.role FROM members m JOIN users u ON u.id = m.user_id
             WHERE m.workspace_id = p_workspace AND m.user_id = p_user
               AND u.active);
END $$;

CREATE OR REPLACE FUNCTION cms_key_principal_refresh(p_workspace uuid,
                                                     p_user uuid)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE api_keys
       SET principal_role = cms_key_principal_role(p_workspace, p_user)
     WHERE id IN (SELECT id FROM api_keys
                   WHERE workspace_id = p_workspace
                     AND created_by = p_user
                   ORDER BY id FOR UPDATE);
END $$;

-- ---- the counters' trigger without EXECUTE (arguments as in sql/0044:
-- the kind, then the counted column, or the parent's column and the
-- status column, value "<parent>:<status>")
CREATE FUNCTION cms_record_count_value(r jsonb, a text, b text)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN b IS NULL THEN r->>a
                      ELSE (r->>a) || ':' || (r->>b) END $$;

CREATE OR REPLACE FUNCTION cms_record_counts_apply() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    t_kind  text := TG_ARGV[0];
    t_col   text := TG_ARGV[1];
    t_col2  text := CASE WHEN TG_NARGS = 3 THEN TG_ARGV[2] END;
BEGIN
    -- each branch names only the transition tables its event has
    IF TG_OP = 'INSERT' THEN
        INSERT INTO record_counts AS c (kind, workspace_id, value, n)
        SELECT t_kind, x.workspace_id, x.value, count(*)
          FROM (SELECT r.workspace_id,
                       cms_record_count_value(to_jsonb(r), t_col, t_col2)
                           AS value
                  FROM cms_new r) x
         GROUP BY x.workspace_id, x.value
         ORDER BY x.workspace_id, x.value
        ON CONFLICT (kind, workspace_id, value)
            DO UPDATE SET n = c.n + EXCLUDED.n;

    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO record_counts AS c (kind, workspace_id, value, n)
        SELECT t_kind, x.workspace_id, x.value, -count(*)
          FROM (SELECT r.workspace_id,
                       cms_record_count_value(to_jsonb(r), t_col, t_col2)
                           AS value
                  FROM cms_old r) x
         GROUP BY x.workspace_id, x.value
         ORDER BY x.workspace_id, x.value
        ON CONFLICT (kind, workspace_id, value)
            DO UPDATE SET n = c.n + EXCLUDED.n;

    ELSE
        INSERT INTO record_counts AS c (kind, workspace_id, value, n)
        SELECT t_kind, x.workspace_id, x.value, sum(x.d)
          FROM (SELECT r.workspace_id,
                       cms_record_count_value(to_jsonb(r), t_col, t_col2)
                           AS value,
                       1 AS d
                  FROM cms_new r
                UNION ALL
                SELECT r.workspace_id,
                       cms_record_count_value(to_jsonb(r), t_col, t_col2), -1
                  FROM cms_old r) x
         GROUP BY x.workspace_id, x.value
        HAVING sum(x.d) <> 0
         ORDER BY x.workspace_id, x.value
        ON CONFLICT (kind, workspace_id, value)
            DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;

    RETURN NULL;
END $$;

COMMIT;
