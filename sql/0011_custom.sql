-- Custom modules (workspace-defined content types) and their entries.
--
-- The schema of a module and the data of an entry are checked in C
-- (src/lib/cms_custom.c) before they reach these statements; what needs
-- other rows is checked here: the plan, the module's state, media assets
-- of the workspace, the schema read being the schema written against.
--
-- Query by field: "filter[key]=value" is one containment (data @> {...})
-- answered by the GIN index on data; "sort=key" reads custom_entry_sort,
-- one row per entry and sortable field (kept by a trigger and rebuilt
-- when a schema changes), in the order of its index.
BEGIN;

-- GIN over (module_id, data): a filter within one module is one index scan
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE TABLE custom_modules (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    slug          text NOT NULL CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    tagline       text NOT NULL DEFAULT '',
    schema        jsonb NOT NULL DEFAULT '{"fields": []}',
    enabled       boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT custom_modules_slug_key UNIQUE (workspace_id, slug),
    UNIQUE (workspace_id, id)
);

CREATE TABLE custom_entries (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL,
    module_id     uuid NOT NULL,
    data          jsonb NOT NULL DEFAULT '{}',
    status        text NOT NULL DEFAULT 'published'
                  CHECK (status IN ('draft', 'published')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (workspace_id, module_id)
        REFERENCES custom_modules (workspace_id, id) ON DELETE CASCADE
);

CREATE INDEX custom_entries_list_idx
    ON custom_entries (module_id, created_at DESC, id DESC);
-- fastupdate off: no pending list, so a read never scans unmerged
-- entries and the planner's cost of the index is what it holds
CREATE INDEX custom_entries_data_idx
    ON custom_entries USING gin (module_id, data jsonb_path_ops)
    WITH (fastupdate = off);

-- One row per entry and sortable field of its module's schema (NULLs when
-- the entry has no value): numbers, booleans (0, 1) and date-times (epoch
-- seconds) in num, the other string types in txt (the first 200
-- characters: an index row has a size limit).
CREATE TABLE custom_entry_sort (
    entry_id   uuid NOT NULL REFERENCES custom_entries (id) ON DELETE CASCADE,
    module_id  uuid NOT NULL,
    key        text NOT NULL,
    num        numeric,
    txt        text COLLATE "C",
    PRIMARY KEY (entry_id, key)
);

CREATE INDEX custom_entry_sort_idx
    ON custom_entry_sort (module_id, key, num, txt, entry_id);


-- Whether the workspace's plan includes custom modules.  Every custom
-- route asks here and nowhere else (403 module_not_allowed when not);
-- plans (issue 17) fill it in.  Today every plan does.
CREATE FUNCTION cms_custom_modules_allowed(p_workspace uuid) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT true $$;

-- The enabled module "slug" of the workspace, or the API's error.
CREATE FUNCTION cms_custom_module(p_workspace uuid, p_slug text)
    RETURNS custom_modules
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    m  custom_modules;
BEGIN
    IF NOT cms_custom_modules_allowed(p_workspace) THEN
        PERFORM cms_raise('module_not_allowed');
    END IF;

    SELECT * INTO m FROM custom_modules
     WHERE workspace_id = p_workspace AND slug = p_slug;

    IF NOT FOUND THEN
        PERFORM cms_raise('not_found');
    END IF;

    IF NOT m.enabled THEN
        PERFORM cms_raise('module_disabled');
    END IF;

    RETURN m;
END $$;

-- The members of "d" the schema names (the others are dropped on write).
CREATE FUNCTION cms_custom_keep(d jsonb, p_schema jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}')
            FROM jsonb_each(d) e
           WHERE e.key IN (SELECT f->>'key'
                             FROM jsonb_array_elements(p_schema->'fields') f)
$$;

CREATE FUNCTION cms_custom_epoch(v text) RETURNS numeric
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
    RETURN extract(epoch FROM v::timestamptz);
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$;

-- The sort rows of one entry, or of every entry of the module (p_entry
-- NULL: after a schema change).
CREATE FUNCTION cms_custom_sort_fill(p_module uuid, p_entry uuid)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM custom_entry_sort s
     WHERE s.module_id = p_module AND (p_entry IS NULL OR s.entry_id = p_entry);

    INSERT INTO custom_entry_sort (entry_id, module_id, key, num, txt)
    SELECT e.id, e.module_id, f.k,
           CASE WHEN f.t = 'number' AND jsonb_typeof(e.data->f.k) = 'number'
                THEN (e.data->>f.k)::numeric
                WHEN f.t = 'boolean' AND jsonb_typeof(e.data->f.k) = 'boolean'
                THEN CASE WHEN (e.data->>f.k)::boolean THEN 1 ELSE 0 END
                WHEN f.t = 'datetime' AND jsonb_typeof(e.data->f.k) = 'string'
                THEN cms_custom_epoch(e.data->>f.k) END,
           CASE WHEN f.t NOT IN ('number', 'boolean', 'datetime')
                 AND jsonb_typeof(e.data->f.k) = 'string'
                THEN left(e.data->>f.k, 200) END
      FROM custom_entries e
      JOIN custom_modules m ON m.id = e.module_id
     CROSS JOIN LATERAL (SELECT x->>'key' AS k, x->>'type' AS t
                           FROM jsonb_array_elements(m.schema->'fields') x) f
     WHERE e.module_id = p_module AND (p_entry IS NULL OR e.id = p_entry)
       AND f.t NOT IN ('multiselect', 'richtext');
END $$;

CREATE FUNCTION cms_custom_entry_sorted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM cms_custom_sort_fill(NEW.module_id, NEW.id);
    RETURN NULL;
END $$;

CREATE TRIGGER custom_entries_sort
    AFTER INSERT OR UPDATE OF data ON custom_entries
    FOR EACH ROW EXECUTE FUNCTION cms_custom_entry_sorted();

-- Creates (p_id NULL) or changes a module.  A NULL keeps the default or
-- the current value.  A changed schema rebuilds the module's sort rows.
CREATE FUNCTION cms_custom_module_save(p_workspace uuid, p_id uuid,
                                       p_slug text, p_name text,
                                       p_tagline text, p_schema jsonb,
                                       p_enabled boolean)
    RETURNS custom_modules
    LANGUAGE plpgsql
    AS $$
DECLARE
    m    custom_modules;
    old  jsonb;
BEGIN
    IF NOT cms_custom_modules_allowed(p_workspace) THEN
        PERFORM cms_raise('module_not_allowed');
    END IF;

    IF p_id IS NULL THEN
        INSERT INTO custom_modules (workspace_id, slug, name, tagline, schema,
                                    enabled)
            VALUES (p_workspace, p_slug, p_name, coalesce(p_tagline, ''),
                    coalesce(p_schema, '{"fields": []}'),
                    coalesce(p_enabled, true))
            RETURNING * INTO m;
        RETURN m;
    END IF;

    SELECT schema INTO old FROM custom_modules
     WHERE workspace_id = p_workspace AND id = p_id FOR UPDATE;

    IF NOT FOUND THEN
        PERFORM cms_raise('not_found');
    END IF;

    UPDATE custom_modules SET slug = coalesce(p_slug, slug),
           name = coalesce(p_name, name),
           tagline = coalesce(p_tagline, tagline),
           schema = coalesce(p_schema, schema),
           enabled = coalesce(p_enabled, enabled),
           updated_at = clock_timestamp()
     WHERE id = p_id
     RETURNING * INTO m;

    IF m.schema <> old THEN
        PERFORM cms_custom_sort_fill(p_id, NULL);
    END IF;

    RETURN m;
END $$;

-- An entry as the API writes it (outbox events).
CREATE FUNCTION cms_custom_entry_json(e custom_entries) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT json_build_object(
              'id', e.id, 'workspace_id', e.workspace_id,
              'module_id', e.module_id, 'data', e.data, 'status', e.status,
              'created_at', cms_ts(e.created_at),
              'updated_at', cms_ts(e.updated_at)) $$;

-- Creates (p_id NULL) or changes an entry of module p_module whose
-- schema the caller checked "p_data" against, as the module was at
-- "p_version" (its updated_at): a module changed since is a 409, so data
-- is never written against a schema it was not checked with.  "p_data"
-- holds the members given (a PATCH merges them per key); members the
-- schema lacks are dropped.  A media value must name an asset of the
-- workspace.  Becoming published writes custom_entry.published.
CREATE FUNCTION cms_custom_entry_save(p_workspace uuid, p_module uuid,
                                      p_version text, p_id uuid,
                                      p_data jsonb, p_status text)
    RETURNS custom_entries
    LANGUAGE plpgsql
    AS $$
DECLARE
    m    custom_modules;
    e    custom_entries;
    was  text := 'draft';
    bad  text;
BEGIN
    SELECT * INTO m FROM custom_modules
     WHERE workspace_id = p_workspace AND id = p_module FOR SHARE;

    IF NOT FOUND THEN
        PERFORM cms_raise('not_found');
    END IF;

    IF m.updated_at::text <> p_version OR NOT m.enabled THEN
        PERFORM cms_raise('conflict');
    END IF;

    SELECT f->>'key' INTO bad
      FROM jsonb_array_elements(m.schema->'fields') f
     WHERE f->>'type' = 'media'
       AND jsonb_typeof(p_data->(f->>'key')) = 'string'
       AND NOT EXISTS (SELECT 1 FROM media_assets a
                        WHERE a.workspace_id = p_workspace
                          AND a.id = (p_data->>(f->>'key'))::uuid)
     LIMIT 1;

    IF bad IS NOT NULL THEN
        PERFORM cms_raise('invalid_field_value', 'data.' || bad);
    END IF;

    IF p_id IS NULL THEN
        INSERT INTO custom_entries (workspace_id, module_id, data, status)
            VALUES (p_workspace, p_module, cms_custom_keep(p_data, m.schema),
                    coalesce(p_status, 'published'))
            RETURNING * INTO e;
    ELSE
        SELECT status INTO was FROM custom_entries
         WHERE module_id = p_module AND id = p_id FOR UPDATE;

        IF NOT FOUND THEN
            PERFORM cms_raise('not_found');
        END IF;

        UPDATE custom_entries
           SET data = cms_custom_keep(data || p_data, m.schema),
               status = coalesce(p_status, status), updated_at = now()
         WHERE id = p_id
         RETURNING * INTO e;
    END IF;

    IF e.status = 'published' AND was <> 'published' THEN
        INSERT INTO outbox_events (workspace_id, type, data)
            VALUES (p_workspace, 'custom_entry.published',
                    cms_custom_entry_json(e)::jsonb);
    END IF;

    RETURN e;
END $$;

-- "filter[key]=value" as given (key -> text) into the containment the
-- GIN index answers, each value typed as its field is; a key the schema
-- lacks, or a value its type cannot hold, is invalid_field_value.
CREATE FUNCTION cms_custom_filter(p_schema jsonb, p_raw jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    k    text;
    v    text;
    t    text;
    out  jsonb := '{}';
BEGIN
    FOR k, v IN SELECT key, value FROM jsonb_each_text(p_raw) LOOP
        SELECT f->>'type' INTO t
          FROM jsonb_array_elements(p_schema->'fields') f
         WHERE f->>'key' = k;

        IF t IS NULL OR t = 'richtext'
           OR (t = 'number'
               AND v !~ '^-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?$')
           OR (t = 'boolean' AND v NOT IN ('true', 'false'))
        THEN
            PERFORM cms_raise('invalid_field_value', 'filter[' || k || ']');
        END IF;

        out := out || jsonb_build_object(k,
                   CASE t WHEN 'number' THEN to_jsonb(v::numeric)
                          WHEN 'boolean' THEN to_jsonb(v::boolean)
                          WHEN 'multiselect' THEN jsonb_build_array(v)
                          ELSE to_jsonb(v) END);
    END LOOP;

    RETURN out;
END $$;

-- The key of "sort=key": a field of the schema that sorts (not
-- multiselect or richtext), else invalid_field_value.
CREATE FUNCTION cms_custom_sort_key(p_schema jsonb, p_key text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_schema->'fields') f
                    WHERE f->>'key' = p_key
                      AND f->>'type' NOT IN ('multiselect', 'richtext'))
    THEN
        PERFORM cms_raise('invalid_field_value', 'sort');
    END IF;

    RETURN p_key;
END $$;

COMMIT;
