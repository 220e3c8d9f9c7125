-- Account recovery and email verification.
--
-- A request (POST /v1/auth/password-reset, /v1/auth/verify-email/request)
-- stores an account_tokens row: the keyed hash of a token (cms_token.h,
-- kind "pwr" or "vfy"), never the token.  The token's random part is made
-- from the row's id under a sub-key of cms_secret (cms_token_random_for),
-- so whoever holds the secret can make the link again from the row, and a
-- dump of the database holds nothing usable.  The message to send is an
-- account_outbox row naming the token row: the mailer (cms-admin
-- account-mail today) mints the link when it sends.  Account messages are
-- not workspace events: they never go to a workspace's webhooks.
--
-- A token is single-use (used_at), expires, and a newer request of the
-- same kind supersedes the open one.  A user gets at most one message of a
-- kind per minute: further requests in that minute change nothing.
BEGIN;

CREATE TABLE account_tokens (
    id          uuid PRIMARY KEY,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('pwr', 'vfy')),
    token_hash  bytea NOT NULL UNIQUE,
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX account_tokens_user_idx
    ON account_tokens (user_id, kind, created_at DESC);

CREATE TABLE account_outbox (
    id          bigserial PRIMARY KEY,
    type        text NOT NULL CHECK (type IN ('user.password_reset_requested',
                                              'user.verification_requested')),
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_id    uuid NOT NULL REFERENCES account_tokens (id)
                    ON DELETE CASCADE,
    email       text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz
);

CREATE INDEX account_outbox_pending_idx ON account_outbox (id)
    WHERE sent_at IS NULL;


-- A request for the active account of p_email: p_id the new row's id
-- (made by the caller, who derived the token from it), p_hash the token's
-- keyed hash.  Nothing happens (and nothing tells) when no active account
-- has the address, when a verification is asked for a verified address,
-- or when the same request was stored less than a minute ago.  Returns
-- whether a message was queued (for the tests; the API answers the same).
CREATE FUNCTION cms_account_token_request(p_email text, p_kind text,
                                          p_id uuid, p_hash bytea,
                                          p_expires timestamptz)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    u users;
BEGIN
    SELECT * INTO u FROM users
        WHERE lower(email) = lower(p_email) AND active
        FOR NO KEY UPDATE;
    IF NOT FOUND OR (p_kind = 'vfy' AND u.email_verified) THEN
        RETURN false;
    END IF;
    PERFORM 1 FROM account_tokens
        WHERE user_id = u.id AND kind = p_kind
          AND created_at > now() - interval '1 minute';
    IF FOUND THEN
        RETURN false;
    END IF;
    UPDATE account_tokens SET used_at = now()
        WHERE user_id = u.id AND kind = p_kind AND used_at IS NULL;
    INSERT INTO account_tokens (id, user_id, kind, token_hash, expires_at)
        VALUES (p_id, u.id, p_kind, p_hash, p_expires);
    INSERT INTO account_outbox (type, user_id, token_id, email)
        VALUES (CASE p_kind WHEN 'pwr' THEN 'user.password_reset_requested'
                            ELSE 'user.verification_requested' END,
                u.id, p_id, u.email);
    RETURN true;
END $$;


-- Uses the open, unexpired token of p_kind whose hash is p_hash: NULL when
-- there is none (unknown, used, superseded or expired), else its user.
CREATE FUNCTION cms_account_token_use(p_kind text, p_hash bytea)
    RETURNS uuid
    LANGUAGE sql
    AS $$
    UPDATE account_tokens t SET used_at = now()
      FROM users u
     WHERE t.token_hash = p_hash AND t.kind = p_kind
       AND t.used_at IS NULL AND t.expires_at > now()
       AND u.id = t.user_id AND u.active
    RETURNING t.user_id $$;


-- A password reset: the token used, the new hash written, every session
-- ended (session_gen), the address verified (the link reached it).
-- False when the token is not open.
CREATE FUNCTION cms_account_password_reset(p_hash bytea, p_password text)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    uid uuid;
BEGIN
    uid := cms_account_token_use('pwr', p_hash);
    IF uid IS NULL THEN
        RETURN false;
    END IF;
    UPDATE users SET password_hash = p_password,
                     session_gen = session_gen + 1,
                     email_verified = true, updated_at = now()
        WHERE id = uid;
    -- a reset also ends the open verification: the address is proven
    UPDATE account_tokens SET used_at = now()
        WHERE user_id = uid AND used_at IS NULL;
    PERFORM cms_audit(NULL, uid, 'user.password_reset', 'user', uid, NULL);
    RETURN true;
END $$;


-- An email verification: false when the token is not open.
CREATE FUNCTION cms_account_email_verify(p_hash bytea)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    uid uuid;
BEGIN
    uid := cms_account_token_use('vfy', p_hash);
    IF uid IS NULL THEN
        RETURN false;
    END IF;
    UPDATE users SET email_verified = true, updated_at = now()
        WHERE id = uid;
    PERFORM cms_audit(NULL, uid, 'user.email_verified', 'user', uid, NULL);
    RETURN true;
END $$;

COMMIT;
