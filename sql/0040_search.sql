-- migrate: no transaction
--
-- Full-text search (docs/search.md): `q` on the article, video, podcast
-- episode and custom entry lists, and on the public entry list.
--
-- Each searchable row keeps a tsvector, `search`, written by a trigger
-- when the text it is made of changes, in the text search configuration
-- of the record's language (cms_ts_config: an article's or video's
-- locale, an episode's show's language, an entry's workspace's default
-- locale), weighted: title A, subtitle / description B, tags and focus
-- keyword C, body D (HTML stripped).  A GIN index per table answers
-- `search @@ query` within a workspace; a trigram index over the title
-- answers the fallback for near spellings when the text search finds
-- nothing.
--
-- This file runs outside one transaction (the first line says so to both
-- migrators): the columns and triggers are added in one short transaction
-- (a nullable column without a default is a catalogue change), the
-- existing rows are filled in batches of 500, each its own transaction
-- (cms_search_backfill: row locks held a batch long), and the indexes are
-- built CONCURRENTLY, so that a large table keeps taking writes
-- throughout.  Each step may run again: a failed run is run again whole.
-- A line "-- step" ends a statement the migrators send alone.

CREATE EXTENSION IF NOT EXISTS pg_trgm;
-- step
CREATE EXTENSION IF NOT EXISTS unaccent;
-- step
BEGIN;

-- Languages whose writers often leave accents out are searched without
-- them: "eleve" finds "élève".
DO $$
DECLARE
    lang  text;
BEGIN
    FOREACH lang IN ARRAY ARRAY['french', 'spanish', 'portuguese', 'italian',
                                'catalan']
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_ts_config
                        WHERE cfgname = 'cms_' || lang) THEN
            EXECUTE format('CREATE TEXT SEARCH CONFIGURATION public.%I'
                           ' (COPY = pg_catalog.%I)', 'cms_' || lang, lang);
            EXECUTE format('ALTER TEXT SEARCH CONFIGURATION public.%I'
                           ' ALTER MAPPING FOR hword, hword_part, word'
                           ' WITH public.unaccent, %I', 'cms_' || lang,
                           lang || '_stem');
        END IF;
    END LOOP;
END $$;

-- The text search configuration of a language tag (its primary subtag:
-- "de-AT" is German); `simple` (words as written, lower-cased) for the
-- languages PostgreSQL has no stemmer for.
CREATE OR REPLACE FUNCTION cms_ts_config(p_locale text) RETURNS regconfig
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(('{"en": "english", "de": "german", "nl": "dutch",
        "fr": "public.cms_french", "es": "public.cms_spanish",
        "pt": "public.cms_portuguese", "it": "public.cms_italian",
        "ca": "public.cms_catalan", "da": "danish", "sv": "swedish",
        "fi": "finnish", "nb": "norwegian", "nn": "norwegian", "no": "norwegian",
        "ru": "russian", "tr": "turkish", "hu": "hungarian", "ro": "romanian",
        "el": "greek", "ga": "irish", "id": "indonesian", "lt": "lithuanian",
        "ne": "nepali", "ar": "arabic", "hy": "armenian", "eu": "basque",
        "hi": "hindi", "sr": "serbian", "ta": "tamil", "yi": "yiddish"}'::jsonb
        ->> lower(split_part(replace(coalesce(p_locale, ''), '_', '-'), '-', 1))),
        'simple')::regconfig $$;

-- Text as HTML: & < > " and ' escaped (a plain text field joins HTML
-- ones for a highlight; the highlight itself).
CREATE OR REPLACE FUNCTION cms_html_escape(p_text text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT replace(replace(replace(replace(replace(p_text,
              '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'),
              '''', '&#39;') $$;

-- The text of a fragment of sanitized HTML: tags become spaces, the
-- entities the sanitizer writes become characters, runs of white space
-- one space.  (A vector needs none of it: the text search parser skips
-- tags and entities.)
CREATE OR REPLACE FUNCTION cms_html_text(p_html text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT btrim(regexp_replace(
              replace(replace(replace(replace(replace(replace(
                  regexp_replace(p_html, '<[^>]*>', ' ', 'g'),
                  '&nbsp;', ' '), '&lt;', '<'), '&gt;', '>'),
                  '&quot;', '"'), '&#39;', ''''), '&amp;', '&'),
              '\s+', ' ', 'g')) $$;

-- Up to two fragments of the HTML "p_html" around what "p_query"
-- matches, as HTML: the text escaped, each match in <mark>; the first
-- words when nothing matches (a fuzzy hit).  The matches are marked with
-- two control characters, taken out of the document first; only a page's
-- rows are highlighted.
CREATE OR REPLACE FUNCTION cms_search_highlight(p_config regconfig,
                                                p_html text, p_query tsquery)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT replace(replace(cms_html_escape(cms_html_text(
              ts_headline(p_config,
                          translate(coalesce(p_html, ''), chr(1) || chr(2), ''),
                          p_query,
                          'StartSel=' || chr(1) || ', StopSel=' || chr(2)
                          || ', MaxWords=30, MinWords=12,'
                          || ' MaxFragments=2, FragmentDelimiter=" … "'))),
              chr(1), '<mark>'), chr(2), '</mark>') $$;

-- the weighted vector of title (A), second (B), third (C) and body (D)
CREATE OR REPLACE FUNCTION cms_search_vector(p_config regconfig,
                                             p_title text, p_second text,
                                             p_third text, p_body text)
    RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT setweight(to_tsvector(p_config, coalesce(p_title, '')), 'A')
              || setweight(to_tsvector(p_config, coalesce(p_second, '')), 'B')
              || setweight(to_tsvector(p_config, coalesce(p_third, '')), 'C')
              || setweight(to_tsvector(p_config, coalesce(p_body, '')), 'D') $$;

ALTER TABLE articles ADD COLUMN IF NOT EXISTS search tsvector;
ALTER TABLE videos ADD COLUMN IF NOT EXISTS search tsvector;
ALTER TABLE podcast_episodes ADD COLUMN IF NOT EXISTS search tsvector;
ALTER TABLE custom_entries ADD COLUMN IF NOT EXISTS search tsvector;
-- an entry's title for the fallback: its schema's first text field
ALTER TABLE custom_entries ADD COLUMN IF NOT EXISTS search_title text;

CREATE OR REPLACE FUNCTION cms_article_search(a articles) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT cms_search_vector(cms_ts_config(a.locale), a.title,
                                   a.subtitle,
                                   array_to_string(a.tags, ' ') || ' '
                                   || a.focus_keyword, a.body) $$;

CREATE OR REPLACE FUNCTION cms_video_search(v videos) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT cms_search_vector(cms_ts_config(v.locale), v.title, '', '',
                                   v.description) $$;

CREATE OR REPLACE FUNCTION cms_episode_search(e podcast_episodes,
                                              p_language text)
    RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT cms_search_vector(cms_ts_config(p_language), e.title, '', '',
                                   e.description) $$;

-- An entry's text by its module's schema: the first text field is its
-- title (A), the other text fields B, select values C, rich text D.
CREATE OR REPLACE FUNCTION cms_entry_search(p_data jsonb, p_schema jsonb,
                                            p_locale text)
    RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    WITH f AS (
        SELECT x->>'type' AS t, p_data->>(x->>'key') AS v, n
          FROM jsonb_array_elements(p_schema->'fields') WITH ORDINALITY
               AS e(x, n)
         WHERE jsonb_typeof(p_data->(x->>'key')) = 'string'),
    first AS (SELECT min(n) AS n FROM f WHERE t = 'text')
    SELECT cms_search_vector(cms_ts_config(p_locale),
        (SELECT v FROM f, first WHERE f.n = first.n),
        (SELECT string_agg(v, ' ') FROM f, first
          WHERE t = 'text' AND f.n <> first.n),
        (SELECT string_agg(v, ' ') FROM f WHERE t = 'select'),
        (SELECT string_agg(v, ' ') FROM f WHERE t = 'richtext')) $$;

CREATE OR REPLACE FUNCTION cms_entry_search_title(p_data jsonb,
                                                  p_schema jsonb)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT left(p_data->>(x->>'key'), 200)
            FROM jsonb_array_elements(p_schema->'fields') WITH ORDINALITY
                 AS e(x, n)
           WHERE x->>'type' = 'text'
             AND jsonb_typeof(p_data->(x->>'key')) = 'string'
           ORDER BY n LIMIT 1 $$;

-- an entry's highlighted text, as HTML: its text and rich text fields
CREATE OR REPLACE FUNCTION cms_entry_text(p_data jsonb, p_schema jsonb)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT string_agg(CASE WHEN x->>'type' = 'richtext'
                                 THEN p_data->>(x->>'key')
                                 ELSE cms_html_escape(p_data->>(x->>'key'))
                                 END, ' … ' ORDER BY n)
            FROM jsonb_array_elements(p_schema->'fields') WITH ORDINALITY
                 AS e(x, n)
           WHERE x->>'type' IN ('text', 'richtext')
             AND jsonb_typeof(p_data->(x->>'key')) = 'string' $$;

-- A row's vector (and an entry's title), made again whenever its text
-- changes or `search` is set to NULL (the backfill, the rows that follow
-- another's language or schema).
CREATE OR REPLACE FUNCTION cms_search_row() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    s  jsonb;
    l  text;
BEGIN
    CASE TG_TABLE_NAME
    WHEN 'articles' THEN
        NEW.search := cms_article_search(NEW);
    WHEN 'videos' THEN
        NEW.search := cms_video_search(NEW);
    WHEN 'podcast_episodes' THEN
        NEW.search := cms_episode_search(NEW,
            (SELECT language FROM podcast_shows WHERE id = NEW.show_id));
    ELSE
        SELECT m.schema, w.default_locale INTO s, l
          FROM custom_modules m JOIN workspaces w ON w.id = m.workspace_id
         WHERE m.id = NEW.module_id;
        NEW.search := cms_entry_search(NEW.data, s, l);
        NEW.search_title := cms_entry_search_title(NEW.data, s);
    END CASE;
    RETURN NEW;
END $$;

-- what the text of others' rows follows: a show's language, a module's
-- schema, a workspace's default locale
CREATE OR REPLACE FUNCTION cms_search_followed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    CASE TG_TABLE_NAME
    WHEN 'podcast_shows' THEN
        UPDATE podcast_episodes SET search = NULL WHERE show_id = NEW.id;
    WHEN 'custom_modules' THEN
        UPDATE custom_entries SET search = NULL WHERE module_id = NEW.id;
    ELSE
        UPDATE custom_entries SET search = NULL WHERE workspace_id = NEW.id;
    END CASE;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS articles_search ON articles;
CREATE TRIGGER articles_search
    BEFORE INSERT OR UPDATE OF title, subtitle, body, tags, focus_keyword,
                               locale, search ON articles
    FOR EACH ROW EXECUTE FUNCTION cms_search_row();

DROP TRIGGER IF EXISTS videos_search ON videos;
CREATE TRIGGER videos_search
    BEFORE INSERT OR UPDATE OF title, description, locale, search ON videos
    FOR EACH ROW EXECUTE FUNCTION cms_search_row();

DROP TRIGGER IF EXISTS podcast_episodes_search ON podcast_episodes;
CREATE TRIGGER podcast_episodes_search
    BEFORE INSERT OR UPDATE OF title, description, show_id, search
    ON podcast_episodes
    FOR EACH ROW EXECUTE FUNCTION cms_search_row();

DROP TRIGGER IF EXISTS custom_entries_search ON custom_entries;
CREATE TRIGGER custom_entries_search
    BEFORE INSERT OR UPDATE OF data, module_id, search ON custom_entries
    FOR EACH ROW EXECUTE FUNCTION cms_search_row();

DROP TRIGGER IF EXISTS podcast_shows_search ON podcast_shows;
CREATE TRIGGER podcast_shows_search
    AFTER UPDATE OF language ON podcast_shows
    FOR EACH ROW WHEN (OLD.language IS DISTINCT FROM NEW.language)
    EXECUTE FUNCTION cms_search_followed();

DROP TRIGGER IF EXISTS custom_modules_search ON custom_modules;
CREATE TRIGGER custom_modules_search
    AFTER UPDATE OF schema ON custom_modules
    FOR EACH ROW WHEN (OLD.schema IS DISTINCT FROM NEW.schema)
    EXECUTE FUNCTION cms_search_followed();

DROP TRIGGER IF EXISTS workspaces_search ON workspaces;
CREATE TRIGGER workspaces_search
    AFTER UPDATE OF default_locale ON workspaces
    FOR EACH ROW WHEN (OLD.default_locale IS DISTINCT FROM NEW.default_locale)
    EXECUTE FUNCTION cms_search_followed();

-- Fills the vectors of the rows written before this migration, 500 rows a
-- transaction (called outside a transaction block, it commits each; the
-- trigger makes each vector).
CREATE OR REPLACE PROCEDURE cms_search_backfill()
    LANGUAGE plpgsql
    AS $$
DECLARE
    t  text;
    n  integer;
BEGIN
    FOREACH t IN ARRAY ARRAY['articles', 'videos', 'podcast_episodes',
                             'custom_entries']
    LOOP
        LOOP
            EXECUTE format('UPDATE %I SET search = NULL WHERE id IN'
                           ' (SELECT id FROM %I WHERE search IS NULL'
                           '  LIMIT 500 FOR UPDATE SKIP LOCKED)', t, t);
            GET DIAGNOSTICS n = ROW_COUNT;
            COMMIT;
            EXIT WHEN n = 0;
        END LOOP;
    END LOOP;
END $$;

COMMIT;
-- step
CALL cms_search_backfill();
-- step
-- a build that failed part way leaves its index invalid, which IF NOT EXISTS would keep
DO $$
DECLARE
    i  regclass;
BEGIN
    FOR i IN SELECT x.indexrelid::regclass FROM pg_index x
              WHERE NOT x.indisvalid
                AND x.indexrelid::regclass::text IN (
                    'articles_search_idx', 'articles_title_trgm_idx',
                    'videos_search_idx', 'videos_title_trgm_idx',
                    'podcast_episodes_search_idx',
                    'podcast_episodes_title_trgm_idx',
                    'custom_entries_search_idx', 'custom_entries_title_trgm_idx')
    LOOP
        EXECUTE format('DROP INDEX %s', i);
    END LOOP;
END $$;
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS articles_search_idx
    ON articles USING gin (workspace_id, locale, search)
    WHERE deleted_at IS NULL;
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS articles_title_trgm_idx
    ON articles USING gin (workspace_id, locale, title gin_trgm_ops)
    WHERE deleted_at IS NULL;
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS videos_search_idx
    ON videos USING gin (workspace_id, search);
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS videos_title_trgm_idx
    ON videos USING gin (workspace_id, title gin_trgm_ops);
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS podcast_episodes_search_idx
    ON podcast_episodes USING gin (workspace_id, search);
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS podcast_episodes_title_trgm_idx
    ON podcast_episodes USING gin (workspace_id, title gin_trgm_ops);
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS custom_entries_search_idx
    ON custom_entries USING gin (module_id, search);
-- step
CREATE INDEX CONCURRENTLY IF NOT EXISTS custom_entries_title_trgm_idx
    ON custom_entries USING gin (module_id, search_title gin_trgm_ops);
