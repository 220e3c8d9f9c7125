-- Signing up with an invitation (issue 33, "cms_signup"): the account is
-- created and the invitation accepted in one transaction, so that with
-- "cms_signup invite" only an invited address can make an account, and
-- an invited person needs no second step.  The invitation is checked
-- first (pending, for this email): a refused one creates no user.  An
-- email already taken returns no row (the route's 409 email_taken), as a
-- plain signup does.
BEGIN;

CREATE FUNCTION cms_signup_invited(p_email text, p_name text, p_hash text,
                                   p_token bytea)
    RETURNS TABLE (id uuid, user_json text)
    LANGUAGE plpgsql
    AS $$
DECLARE
    i    invitations;
    u    users;
BEGIN
    SELECT * INTO i FROM invitations WHERE token_hash = p_token;
    IF NOT FOUND OR cms_invitation_status(i) <> 'pending' THEN
        PERFORM cms_raise('invalid_invitation');
    END IF;
    IF lower(i.email) <> lower(p_email) THEN
        PERFORM cms_raise('invitation_email_mismatch');
    END IF;
    INSERT INTO users (email, name, password_hash)
        VALUES (p_email, coalesce(p_name, ''), p_hash)
        ON CONFLICT ((lower(email))) DO NOTHING
        RETURNING * INTO u;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    PERFORM cms_invitation_accept(p_token, u.id);
    RETURN QUERY SELECT u.id, cms_user_json(u)::text;
END $$;

COMMIT;
