-- An API key's principal in its own row (issue 35).  A key acts with its
-- creator's current role in a workspace that is not suspended, and only
-- while the creator is an active member (docs/api-notes.md, API keys); that
-- joined four tables on every request (the key, the workspace, the
-- membership, the user): four index probes, about 40 % of the statement of
-- an article read.  The key's row now carries the two facts the check
-- needs, kept by triggers in the transaction that changes them, so the
-- check is one probe of api_keys_secret_hash_key:
--
--   principal_role       the creator's role in the key's workspace, NULL
--                        when the creator is not a member or not active
--   workspace_suspended  the workspace's suspended flag
--
-- A change of role, a removal, a deactivation or a suspension is seen by
-- the next request exactly as before: the rows change in the same
-- transaction.  A key written concurrently with such a change reads the
-- rows it copies FOR SHARE, so one of the two waits for the other: the
-- change's trigger then sees the key, or the key's copy sees the change.
-- The workspace's row comes first, as in the team's functions
-- (cms_members_lock(), sql/0016), and a membership written by any path
-- locks it too: a membership not yet committed has no row a key could
-- lock, so the workspace is what the two meet on.
BEGIN;

ALTER TABLE api_keys
    ADD COLUMN principal_role text,
    ADD COLUMN workspace_suspended boolean NOT NULL DEFAULT false;

-- users' keys, for a deactivation's update (and the cascade of a deletion)
CREATE INDEX api_keys_created_by_idx ON api_keys (created_by);

-- The role a key of (workspace, user) acts with now, or NULL.
CREATE FUNCTION cms_key_principal_role(p_workspace uuid, p_user uuid)
    RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT m.role FROM members m JOIN users u ON u.id = m.user_id
           WHERE m.workspace_id = p_workspace AND m.user_id = p_user
             AND u.active $$;

-- a key written: its principal copied, the rows it copies locked
CREATE FUNCTION cms_api_keys_principal() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT suspended INTO NEW.workspace_suspended FROM workspaces
     WHERE id = NEW.workspace_id FOR SHARE;
    PERFORM 1 FROM users WHERE id = NEW.created_by FOR SHARE;
    PERFORM 1 FROM members
      WHERE workspace_id = NEW.workspace_id AND user_id = NEW.created_by
        FOR SHARE;
    NEW.principal_role := cms_key_principal_role(NEW.workspace_id,
                                                 NEW.created_by);
    RETURN NEW;
END $$;

CREATE TRIGGER api_keys_principal
    BEFORE INSERT OR UPDATE OF workspace_id, created_by ON api_keys
    FOR EACH ROW EXECUTE FUNCTION cms_api_keys_principal();

-- The keys of (workspace, user): their role read again.  Every update of
-- keys here locks its rows in id order first, so that two of them over
-- the same keys (a user deactivated while removed) cannot deadlock.
CREATE FUNCTION cms_key_principal_refresh(p_workspace uuid, p_user uuid)
    RETURNS void
    LANGUAGE sql
    AS $$ UPDATE api_keys
             SET principal_role = cms_key_principal_role(p_workspace, p_user)
           WHERE id IN (SELECT id FROM api_keys
                         WHERE workspace_id = p_workspace
                           AND created_by = p_user
                         ORDER BY id FOR UPDATE) $$;

-- A row of members, users or workspaces changed: the keys that copy it.
-- A membership added, changed or removed: its keys (the old pair's and the
-- new one's, should an update move the row); a user activated or
-- deactivated: the user's keys in every workspace; a workspace suspended
-- or restored: its keys.
CREATE FUNCTION cms_key_principal_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_TABLE_NAME = 'workspaces' THEN
        UPDATE api_keys SET workspace_suspended = NEW.suspended
         WHERE id IN (SELECT id FROM api_keys WHERE workspace_id = NEW.id
                       ORDER BY id FOR UPDATE);
    ELSIF TG_TABLE_NAME = 'users' THEN
        UPDATE api_keys
           SET principal_role = cms_key_principal_role(workspace_id,
                                                       created_by)
         WHERE id IN (SELECT id FROM api_keys WHERE created_by = NEW.id
                       ORDER BY id FOR UPDATE);
    ELSE
        IF TG_OP <> 'INSERT' THEN
            PERFORM 1 FROM workspaces WHERE id = OLD.workspace_id
                FOR NO KEY UPDATE;
            PERFORM cms_key_principal_refresh(OLD.workspace_id, OLD.user_id);
        END IF;
        IF TG_OP <> 'DELETE' THEN
            PERFORM 1 FROM workspaces WHERE id = NEW.workspace_id
                FOR NO KEY UPDATE;
            PERFORM cms_key_principal_refresh(NEW.workspace_id, NEW.user_id);
        END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER members_key_principal
    AFTER INSERT OR DELETE OR UPDATE OF role, workspace_id, user_id
    ON members
    FOR EACH ROW EXECUTE FUNCTION cms_key_principal_sync();

CREATE TRIGGER users_key_principal
    AFTER UPDATE OF active ON users
    FOR EACH ROW WHEN (OLD.active IS DISTINCT FROM NEW.active)
    EXECUTE FUNCTION cms_key_principal_sync();

CREATE TRIGGER workspaces_key_principal
    AFTER UPDATE OF suspended ON workspaces
    FOR EACH ROW WHEN (OLD.suspended IS DISTINCT FROM NEW.suspended)
    EXECUTE FUNCTION cms_key_principal_sync();

-- The keys whose copy differs from the tables: none, unless a write
-- bypassed the triggers (t/032 asserts it after every kind of change).
CREATE FUNCTION cms_key_principal_drift() RETURNS bigint
    LANGUAGE sql STABLE
    AS $$ SELECT count(*) FROM api_keys k JOIN workspaces w
                ON w.id = k.workspace_id
           WHERE k.principal_role IS DISTINCT FROM
                 cms_key_principal_role(k.workspace_id, k.created_by)
              OR k.workspace_suspended <> w.suspended $$;

-- the keys there already: the triggers above hold locks that keep
-- writers of the four tables out until the commit
UPDATE api_keys k
   SET principal_role = cms_key_principal_role(k.workspace_id, k.created_by),
       workspace_suspended = w.suspended
  FROM workspaces w
 WHERE w.id = k.workspace_id;

COMMIT;
