-- The write path of a published custom entry (issue 35): two costs that
-- grew with the workspace and with concurrency.
--
-- The sort rows of one entry were made by the statements that rebuild a
-- whole module's, "(p_entry IS NULL OR s.entry_id = p_entry)".  The
-- module's connections plan generically (plan_cache_mode, see
-- src/ngx_http_cms_pg_conf.c), and a generic plan cannot know p_entry is
-- given: every entry written read every entry of its module and every
-- sort row (10,000 entries: ~9 ms a write, 180 a second on two cores).
-- One entry's rows are now made from the row the trigger has, a module's
-- by statements of their own, and what a field sorts by is one function
-- both use.
--
-- Queueing a purge of the site's key upserted the one waiting row: ON
-- CONFLICT DO UPDATE locks the conflicting row for update even when its
-- WHERE leaves it as it is, so every published write of a workspace
-- queued behind the one before it until that one committed.  What the
-- lock is for is that no sender claims the waiting row (FOR UPDATE SKIP
-- LOCKED) before the change it covers is committed: a purge sent earlier
-- would let a cache fetch the old answer again.  A share lock keeps the
-- sender out as well, and writers share it: a waiting row that is due
-- now is share-locked; anything else (no waiting row, or one waiting out
-- a retry's delay) takes the upsert as before.
BEGIN;

-- What an entry's data sorts by: one row per field that sorts (not
-- multiselect or richtext), its value as a number or as text.
CREATE FUNCTION cms_custom_sort_values(p_data jsonb, p_schema jsonb)
    RETURNS TABLE (key text, num numeric, txt text)
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT f.k,
           CASE WHEN f.t = 'number' AND jsonb_typeof(p_data->f.k) = 'number'
                THEN (p_data->>f.k)::numeric
                WHEN f.t = 'boolean' AND jsonb_typeof(p_data->f.k) = 'boolean'
                THEN CASE WHEN (p_data->>f.k)::boolean THEN 1 ELSE 0 END
                WHEN f.t = 'datetime' AND jsonb_typeof(p_data->f.k) = 'string'
                THEN cms_custom_epoch(p_data->>f.k) END,
           CASE WHEN f.t NOT IN ('number', 'boolean', 'datetime')
                 AND jsonb_typeof(p_data->f.k) = 'string'
                THEN left(p_data->>f.k, 200) END
      FROM (SELECT x->>'key' AS k, x->>'type' AS t
              FROM jsonb_array_elements(p_schema->'fields') x) f
     WHERE f.t NOT IN ('multiselect', 'richtext') $$;

-- The sort rows of one entry, from its data as written.
CREATE FUNCTION cms_custom_sort_entry(p_entry uuid, p_module uuid,
                                      p_data jsonb)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM custom_entry_sort s WHERE s.entry_id = p_entry;

    INSERT INTO custom_entry_sort (entry_id, module_id, key, num, txt)
    SELECT p_entry, p_module, v.key, v.num, v.txt
      FROM custom_modules m
     CROSS JOIN LATERAL cms_custom_sort_values(p_data, m.schema) v
     WHERE m.id = p_module;
END $$;

-- The sort rows of one entry, or of every entry of the module (p_entry
-- NULL: after a schema change).
CREATE OR REPLACE FUNCTION cms_custom_sort_fill(p_module uuid, p_entry uuid)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_entry IS NOT NULL THEN
        PERFORM cms_custom_sort_entry(e.id, e.module_id, e.data)
           FROM custom_entries e
          WHERE e.id = p_entry AND e.module_id = p_module;
        RETURN;
    END IF;

    DELETE FROM custom_entry_sort s WHERE s.module_id = p_module;

    INSERT INTO custom_entry_sort (entry_id, module_id, key, num, txt)
    SELECT e.id, e.module_id, v.key, v.num, v.txt
      FROM custom_modules m
      JOIN custom_entries e ON e.module_id = m.id
     CROSS JOIN LATERAL cms_custom_sort_values(e.data, m.schema) v
     WHERE m.id = p_module;
END $$;

CREATE OR REPLACE FUNCTION cms_custom_entry_sorted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM cms_custom_sort_entry(NEW.id, NEW.module_id, NEW.data);
    RETURN NULL;
END $$;

-- A waiting row of the key covers the change: one due now is held (FOR
-- SHARE) until this transaction ends; one waiting out a retry's delay is
-- made due now, its count started over; none: one is queued.
CREATE OR REPLACE FUNCTION cms_cdn_purge_queue(p_keys text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM FROM cdn_purges
      WHERE keys = p_keys AND claimed_until IS NULL AND next_at <= now()
        FOR SHARE;

    IF NOT FOUND THEN
        INSERT INTO cdn_purges (keys) VALUES (p_keys)
        ON CONFLICT (keys) WHERE claimed_until IS NULL
        DO UPDATE SET next_at = now(), attempts = 0, created_at = now()
         WHERE cdn_purges.next_at > now();
    END IF;
END $$;

COMMIT;
