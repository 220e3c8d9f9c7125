-- A new invitation to an address replaces its open ones only where the
-- inviter could have revoked them (issue 31, finding 3): an admin's
-- invitation no longer cancels an owner's (403 forbidden, as its DELETE
-- is), and every invitation it replaces gets its invitation.revoked audit
-- row, naming the invitation that replaced it.
BEGIN;

CREATE OR REPLACE FUNCTION cms_invitation_create(p_workspace uuid,
                                                 p_actor uuid, p_email text,
                                                 p_role text, p_hash bytea,
                                                 p_expires timestamptz)
    RETURNS invitations
    LANGUAGE plpgsql
    AS $$
DECLARE
    actor     text;
    i         invitations;
    old       invitations;
    replaced  invitations[] := '{}';
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
    IF actor <> 'owner' AND EXISTS (
        SELECT 1 FROM invitations o
         WHERE o.workspace_id = p_workspace
           AND lower(o.email) = lower(p_email) AND o.role = 'owner'
           AND cms_invitation_status(o) = 'pending')
    THEN
        PERFORM cms_raise('forbidden', 'email');
    END IF;
    -- the replaced ones first: their seats are not counted again
    FOR old IN
        UPDATE invitations SET revoked_at = now()
         WHERE workspace_id = p_workspace AND lower(email) = lower(p_email)
           AND accepted_at IS NULL AND revoked_at IS NULL
        RETURNING *
    LOOP
        replaced := replaced || old;
    END LOOP;
    PERFORM cms_plan_check(p_workspace, 'members', 1);
    INSERT INTO invitations (workspace_id, email, role, token_hash,
                             invited_by, expires_at)
        VALUES (p_workspace, p_email, p_role, p_hash, p_actor, p_expires)
        RETURNING * INTO i;
    FOREACH old IN ARRAY replaced LOOP
        PERFORM cms_audit(p_workspace, p_actor, 'invitation.revoked',
                          'invitation', old.id,
                          jsonb_build_object('email', old.email,
                                             'role', old.role,
                                             'replaced_by', i.id));
    END LOOP;
    PERFORM cms_audit(p_workspace, p_actor, 'member.invited', 'invitation',
                      i.id, jsonb_build_object('email', p_email,
                                               'role', p_role));
    RETURN i;
END $$;

COMMIT;
