-- Teams and plans.
--
-- Plans and their limits, each workspace on one plan; cms_plan_refusal()
-- is the one place any plan limit is decided (cms_plan_check() raises its
-- answer).  Invitations (single-use tokens, only their keyed hash kept),
-- member role changes and removals under the owner rules, the audit log,
-- and the session generation a password change moves.
--
-- Every change of a workspace's membership (invite, accept, role change,
-- removal, revoke) first locks the workspace row FOR NO KEY UPDATE, so two
-- of them never decide from the same count: the member limit holds under
-- concurrent invites, and the last owner cannot be demoted by two owners
-- demoting each other at once.  Content writes take only KEY SHARE locks
-- on the workspace (their foreign keys) and are not held up.  A rule
-- broken raises the API's code through cms_raise().
BEGIN;

CREATE TABLE plans (
    name                 text PRIMARY KEY
                         CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    member_limit         integer CHECK (member_limit >= 1),   -- NULL: none
    storage_limit_bytes  bigint NOT NULL CHECK (storage_limit_bytes >= 0),
    upload_limit_bytes   bigint NOT NULL CHECK (upload_limit_bytes >= 0),
    custom_modules       boolean NOT NULL DEFAULT true,
    site_limit           integer CHECK (site_limit >= 0),     -- NULL: none
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

-- The plan new workspaces get unless cms_default_plan names another.
INSERT INTO plans (name, member_limit, storage_limit_bytes,
                   upload_limit_bytes, custom_modules, site_limit)
    VALUES ('free', 25, 1073741824, 52428800, true, 5);

ALTER TABLE workspaces
    ADD CONSTRAINT workspaces_plan_fkey FOREIGN KEY (plan)
        REFERENCES plans (name) ON UPDATE CASCADE ON DELETE RESTRICT;

CREATE INDEX workspaces_plan_idx ON workspaces (plan);

-- workspaces.storage_quota_bytes (in the workspace record since 0002) is
-- the plan's, kept in step here; no rule reads it.
CREATE FUNCTION cms_workspace_plan_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- no such plan: the foreign key refuses the row after this
    NEW.storage_quota_bytes := coalesce(
        (SELECT storage_limit_bytes FROM plans WHERE name = NEW.plan),
        NEW.storage_quota_bytes);
    RETURN NEW;
END $$;

CREATE TRIGGER workspaces_plan_sync
    BEFORE INSERT OR UPDATE OF plan ON workspaces
    FOR EACH ROW EXECUTE FUNCTION cms_workspace_plan_sync();

CREATE FUNCTION cms_plan_storage_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE workspaces SET storage_quota_bytes = NEW.storage_limit_bytes
        WHERE plan = NEW.name
          AND storage_quota_bytes <> NEW.storage_limit_bytes;
    RETURN NULL;
END $$;

CREATE TRIGGER plans_storage_sync
    AFTER UPDATE OF storage_limit_bytes ON plans
    FOR EACH ROW EXECUTE FUNCTION cms_plan_storage_sync();

UPDATE workspaces w SET storage_quota_bytes = p.storage_limit_bytes
    FROM plans p WHERE p.name = w.plan;

-- A password change moves it: sessions signed with another one are void.
ALTER TABLE users ADD COLUMN session_gen integer NOT NULL DEFAULT 0;


CREATE TABLE invitations (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    email         text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    role          text NOT NULL
                  CHECK (role IN ('owner', 'admin', 'editor', 'author',
                                  'viewer')),
    token_hash    bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    invited_by    uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    accepted_at   timestamptz,
    accepted_by   uuid REFERENCES users (id) ON DELETE SET NULL,
    revoked_at    timestamptz
);

CREATE INDEX invitations_workspace_idx
    ON invitations (workspace_id, created_at DESC, id DESC);

-- one open invitation per address and workspace
CREATE UNIQUE INDEX invitations_open_key
    ON invitations (workspace_id, lower(email))
    WHERE accepted_at IS NULL AND revoked_at IS NULL;


CREATE TABLE audit_events (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid REFERENCES workspaces (id) ON DELETE CASCADE,
    actor_id      uuid REFERENCES users (id) ON DELETE SET NULL,
    action        text NOT NULL,
    target_type   text NOT NULL DEFAULT '',
    target_id     uuid,
    data          jsonb NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX audit_events_workspace_idx
    ON audit_events (workspace_id, created_at DESC, id DESC);
CREATE INDEX audit_events_actor_idx ON audit_events (actor_id);

CREATE FUNCTION cms_audit(p_workspace uuid, p_actor uuid, p_action text,
                          p_target_type text, p_target uuid, p_data jsonb)
    RETURNS void
    LANGUAGE sql
    AS $$
    INSERT INTO audit_events (workspace_id, actor_id, action, target_type,
                              target_id, data)
        VALUES (p_workspace, p_actor, p_action, coalesce(p_target_type, ''),
                p_target, coalesce(p_data, '{}'))
$$;

-- API keys are minted and revoked in api_keys.c's statements: their audit
-- rows come from here.  A revocation's actor is not in the row (NULL).
CREATE FUNCTION cms_api_keys_audit() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM cms_audit(NEW.workspace_id, NEW.created_by, 'api_key.created',
                          'api_key', NEW.id,
                          jsonb_build_object('name', NEW.name,
                                             'key_prefix', NEW.key_prefix,
                                             'scopes', to_jsonb(NEW.scopes)));
    ELSIF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
        PERFORM cms_audit(NEW.workspace_id, NULL, 'api_key.revoked',
                          'api_key', NEW.id,
                          jsonb_build_object('name', NEW.name,
                                             'key_prefix', NEW.key_prefix));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER api_keys_audit
    AFTER INSERT OR UPDATE OF revoked_at ON api_keys
    FOR EACH ROW EXECUTE FUNCTION cms_api_keys_audit();


-- Roles in order: viewer 1 .. owner 5 (as ngx_http_cms_role_e).
CREATE FUNCTION cms_role_rank(p_role text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(array_position(
              ARRAY['viewer', 'author', 'editor', 'admin', 'owner'],
              p_role), 0) $$;


-- Plans ---------------------------------------------------------------------

-- What a workspace uses now of a limit, counted where its records live:
-- members (members and open invitations: an invitation holds a seat until
-- it is accepted, revoked or expires) and storage_bytes (its media
-- assets).  NULL for the limits whose records their callers count (sites,
-- custom modules).
CREATE FUNCTION cms_plan_usage(p_workspace uuid, p_limit text)
    RETURNS bigint
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE p_limit
        WHEN 'members' THEN
            (SELECT count(*) FROM members WHERE workspace_id = p_workspace)
            + (SELECT count(*) FROM invitations
                WHERE workspace_id = p_workspace AND accepted_at IS NULL
                  AND revoked_at IS NULL AND expires_at > now())
        WHEN 'storage_bytes' THEN
            (SELECT coalesce(sum(size_bytes), 0)::bigint FROM media_assets
              WHERE workspace_id = p_workspace)
        END
$$;

-- THE ONE PLACE A PLAN LIMIT IS DECIDED.  Whether the workspace's plan
-- allows p_adding more of p_limit on top of p_in_use (NULL: counted by
-- cms_plan_usage()): NULL when it does, else the API error code that
-- refuses it:
--
--   members         members + open invitations    member_limit_reached
--   storage_bytes   bytes stored                  storage_limit_exceeded
--   upload_bytes    one file's size (p_adding)    upload_too_large
--   custom_modules  (allowed or not)              module_not_allowed
--   sites           sites (the caller's count)    site_limit_reached
--
-- A limit NULL in the plan is no limit.  An unknown p_limit is a bug: it
-- raises a plain error (a 500), never a silent yes.
CREATE FUNCTION cms_plan_refusal(p_workspace uuid, p_limit text,
                                 p_adding bigint DEFAULT 1,
                                 p_in_use bigint DEFAULT NULL)
    RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    p    plans;
    use  bigint;
BEGIN
    SELECT pl.* INTO p FROM plans pl JOIN workspaces w ON w.plan = pl.name
        WHERE w.id = p_workspace;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    use := coalesce(p_in_use, cms_plan_usage(p_workspace, p_limit), 0);
    CASE p_limit
    WHEN 'members' THEN
        IF use + p_adding > p.member_limit THEN
            RETURN 'member_limit_reached';
        END IF;
    WHEN 'storage_bytes' THEN
        IF use + p_adding > p.storage_limit_bytes THEN
            RETURN 'storage_limit_exceeded';
        END IF;
    WHEN 'upload_bytes' THEN
        IF p_adding > p.upload_limit_bytes THEN
            RETURN 'upload_too_large';
        END IF;
    WHEN 'custom_modules' THEN
        IF NOT p.custom_modules THEN
            RETURN 'module_not_allowed';
        END IF;
    WHEN 'sites' THEN
        IF use + p_adding > p.site_limit THEN
            RETURN 'site_limit_reached';
        END IF;
    ELSE
        RAISE EXCEPTION 'cms_plan_refusal: unknown limit "%"', p_limit;
    END CASE;
    RETURN NULL;
END $$;

-- cms_plan_refusal()'s answer raised (P0001, the API code): a statement
-- calls it before the write it guards.
CREATE FUNCTION cms_plan_check(p_workspace uuid, p_limit text,
                               p_adding bigint DEFAULT 1,
                               p_in_use bigint DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    code text;
BEGIN
    code := cms_plan_refusal(p_workspace, p_limit, p_adding, p_in_use);
    IF code IS NOT NULL THEN
        PERFORM cms_raise(code);
    END IF;
END $$;

-- The plan named by cms_default_plan, for a new workspace; a name that is
-- no plan is the operator's mistake: a plain error (500, logged).
CREATE FUNCTION cms_plan_named(p_name text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    IF p_name IS NULL THEN
        RETURN 'free';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM plans WHERE name = p_name) THEN
        RAISE EXCEPTION 'cms_default_plan "%" is not a plan', p_name;
    END IF;
    RETURN p_name;
END $$;


-- Members -------------------------------------------------------------------

-- Locks the workspace's membership (see the top) and returns p_actor's
-- role in it; raises not_workspace_member when p_actor is not a member
-- (any more), forbidden when below p_min (a rank of cms_role_rank()).
CREATE FUNCTION cms_members_lock(p_workspace uuid, p_actor uuid,
                                 p_min integer)
    RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    r text;
BEGIN
    PERFORM 1 FROM workspaces WHERE id = p_workspace FOR NO KEY UPDATE;
    SELECT role INTO r FROM members
        WHERE workspace_id = p_workspace AND user_id = p_actor;
    IF r IS NULL THEN
        PERFORM cms_raise('not_workspace_member');
    END IF;
    IF cms_role_rank(r) < p_min THEN
        PERFORM cms_raise('forbidden');
    END IF;
    RETURN r;
END $$;

CREATE FUNCTION cms_owner_count(p_workspace uuid) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$ SELECT count(*) FROM members
           WHERE workspace_id = p_workspace AND role = 'owner' $$;

-- Gives p_user the role p_role as p_actor (an owner or admin): only an
-- owner grants or takes "owner", and the last owner keeps it.  Returns
-- the member row; raises not_found when p_user is not a member.
CREATE FUNCTION cms_member_set_role(p_workspace uuid, p_actor uuid,
                                    p_user uuid, p_role text)
    RETURNS members
    LANGUAGE plpgsql
    AS $$
DECLARE
    actor  text;
    m      members;
BEGIN
    actor := cms_members_lock(p_workspace, p_actor, 4);
    SELECT * INTO m FROM members
        WHERE workspace_id = p_workspace AND user_id = p_user;
    IF NOT FOUND THEN
        PERFORM cms_raise('not_found');
    END IF;
    IF (m.role = 'owner' OR p_role = 'owner') AND actor <> 'owner' THEN
        PERFORM cms_raise('forbidden', 'role');
    END IF;
    IF m.role = p_role THEN
        RETURN m;
    END IF;
    IF m.role = 'owner' AND cms_owner_count(p_workspace) = 1 THEN
        PERFORM cms_raise('last_owner', 'role');
    END IF;
    UPDATE members SET role = p_role
        WHERE workspace_id = p_workspace AND user_id = p_user;
    PERFORM cms_audit(p_workspace, p_actor, 'member.role_changed', 'user',
                      p_user, jsonb_build_object('from', m.role,
                                                 'to', p_role));
    m.role := p_role;
    RETURN m;
END $$;

-- Removes p_user as p_actor: an owner or admin removes others (only an
-- owner removes an owner), any member removes themselves (leaves); the
-- last owner stays.  False when p_user is not a member.
CREATE FUNCTION cms_member_remove(p_workspace uuid, p_actor uuid,
                                  p_user uuid)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    actor   text;
    target  text;
BEGIN
    actor := cms_members_lock(p_workspace, p_actor, 1);
    IF p_user <> p_actor AND cms_role_rank(actor) < 4 THEN
        PERFORM cms_raise('forbidden');
    END IF;
    SELECT role INTO target FROM members
        WHERE workspace_id = p_workspace AND user_id = p_user;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF target = 'owner' AND actor <> 'owner' THEN
        PERFORM cms_raise('forbidden');
    END IF;
    IF target = 'owner' AND cms_owner_count(p_workspace) = 1 THEN
        PERFORM cms_raise('last_owner');
    END IF;
    DELETE FROM members WHERE workspace_id = p_workspace AND user_id = p_user;
    PERFORM cms_audit(p_workspace, p_actor,
                      CASE WHEN p_user = p_actor THEN 'member.left'
                           ELSE 'member.removed' END,
                      'user', p_user, jsonb_build_object('role', target));
    RETURN true;
END $$;


-- Invitations ---------------------------------------------------------------

CREATE FUNCTION cms_invitation_status(i invitations) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN i.accepted_at IS NOT NULL THEN 'accepted'
                      WHEN i.revoked_at IS NOT NULL THEN 'revoked'
                      WHEN i.expires_at <= now() THEN 'expired'
                      ELSE 'pending' END $$;

-- Invites p_email as p_role (p_actor an owner or admin; only an owner
-- invites an owner).  A member already: already_member; an open
-- invitation to the same address is replaced (its token stops working);
-- over the plan's member limit: member_limit_reached.
CREATE FUNCTION cms_invitation_create(p_workspace uuid, p_actor uuid,
                                      p_email text, p_role text,
                                      p_hash bytea, p_expires timestamptz)
    RETURNS invitations
    LANGUAGE plpgsql
    AS $$
DECLARE
    actor  text;
    i      invitations;
BEGIN
    actor := cms_members_lock(p_workspace, p_actor, 4);
    IF p_role = 'owner' AND actor <> 'owner' THEN
        PERFORM cms_raise('forbidden', 'role');
    END IF;
    IF EXISTS (SELECT 1 FROM members m JOIN users u ON u.id = m.user_id
                WHERE m.workspace_id = p_workspace
                  AND lower(u.email) = lower(p_email))
    THEN
        PERFORM cms_raise('already_member', 'email');
    END IF;
    UPDATE invitations SET revoked_at = now()
        WHERE workspace_id = p_workspace AND lower(email) = lower(p_email)
          AND accepted_at IS NULL AND revoked_at IS NULL;
    PERFORM cms_plan_check(p_workspace, 'members', 1);
    INSERT INTO invitations (workspace_id, email, role, token_hash,
                             invited_by, expires_at)
        VALUES (p_workspace, p_email, p_role, p_hash, p_actor, p_expires)
        RETURNING * INTO i;
    PERFORM cms_audit(p_workspace, p_actor, 'member.invited', 'invitation',
                      i.id, jsonb_build_object('email', p_email,
                                               'role', p_role));
    RETURN i;
END $$;

-- Accepts the invitation whose token hashes to p_hash as p_user, whose
-- email must be the one invited.  Unknown, used, revoked or expired:
-- invalid_invitation.  Returns the new member row.
CREATE FUNCTION cms_invitation_accept(p_hash bytea, p_user uuid)
    RETURNS members
    LANGUAGE plpgsql
    AS $$
DECLARE
    i  invitations;
    m  members;
BEGIN
    SELECT * INTO i FROM invitations WHERE token_hash = p_hash;
    IF NOT FOUND THEN
        PERFORM cms_raise('invalid_invitation');
    END IF;
    PERFORM 1 FROM workspaces WHERE id = i.workspace_id FOR NO KEY UPDATE;
    SELECT * INTO i FROM invitations WHERE id = i.id;
    IF cms_invitation_status(i) <> 'pending' THEN
        PERFORM cms_raise('invalid_invitation');
    END IF;
    IF NOT EXISTS (SELECT 1 FROM users
                    WHERE id = p_user AND lower(email) = lower(i.email))
    THEN
        PERFORM cms_raise('invitation_email_mismatch');
    END IF;
    IF EXISTS (SELECT 1 FROM members
                WHERE workspace_id = i.workspace_id AND user_id = p_user)
    THEN
        PERFORM cms_raise('already_member');
    END IF;
    -- its seat is counted already; a plan lowered since may refuse it
    PERFORM cms_plan_check(i.workspace_id, 'members', 1,
                           cms_plan_usage(i.workspace_id, 'members') - 1);
    INSERT INTO members (workspace_id, user_id, role)
        VALUES (i.workspace_id, p_user, i.role)
        RETURNING * INTO m;
    UPDATE invitations SET accepted_at = now(), accepted_by = p_user
        WHERE id = i.id;
    PERFORM cms_audit(i.workspace_id, p_user, 'member.added', 'user', p_user,
                      jsonb_build_object('role', i.role,
                                         'invitation_id', i.id,
                                         'invited_by', i.invited_by));
    RETURN m;
END $$;

-- Revokes an open invitation as p_actor (an owner or admin; only an owner
-- revokes an owner's invitation).  False when there is none open.
CREATE FUNCTION cms_invitation_revoke(p_workspace uuid, p_actor uuid,
                                      p_id uuid)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    actor  text;
    i      invitations;
BEGIN
    actor := cms_members_lock(p_workspace, p_actor, 4);
    SELECT * INTO i FROM invitations
        WHERE id = p_id AND workspace_id = p_workspace;
    IF NOT FOUND OR cms_invitation_status(i) <> 'pending' THEN
        RETURN false;
    END IF;
    IF i.role = 'owner' AND actor <> 'owner' THEN
        PERFORM cms_raise('forbidden');
    END IF;
    UPDATE invitations SET revoked_at = now() WHERE id = p_id;
    PERFORM cms_audit(p_workspace, p_actor, 'invitation.revoked',
                      'invitation', p_id,
                      jsonb_build_object('email', i.email, 'role', i.role));
    RETURN true;
END $$;


-- Accounts ------------------------------------------------------------------

-- Sets p_user's password hash if it is still p_old (the one the caller
-- verified), moves the session generation (every session signed before
-- is void) and records it.  Returns the new generation; NULL when the
-- password changed meanwhile.
CREATE FUNCTION cms_user_password_change(p_user uuid, p_old text,
                                         p_new text)
    RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    gen integer;
BEGIN
    UPDATE users SET password_hash = p_new, session_gen = session_gen + 1,
                     updated_at = now()
        WHERE id = p_user AND password_hash = p_old
        RETURNING session_gen INTO gen;
    IF gen IS NOT NULL THEN
        PERFORM cms_audit(NULL, p_user, 'user.password_changed', 'user',
                          p_user, NULL);
    END IF;
    RETURN gen;
END $$;

COMMIT;
