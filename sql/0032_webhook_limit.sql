-- Webhook endpoints per workspace, a plan value (issue 31, finding 4):
-- each endpoint makes the module send requests where its owner points
-- them, so a workspace's count is bounded like its sites.  The free plan
-- allows 16 (Stripe's number of endpoints an account may have); a plan
-- without the value (NULL) has no limit.  cms_plan_refusal() learns
-- "webhooks" (webhook_limit_reached); a new endpoint is written by
-- cms_webhook_create(), which takes the workspace's row lock first so
-- that concurrent creates count each other.
BEGIN;

ALTER TABLE plans
    ADD COLUMN webhook_limit integer CHECK (webhook_limit >= 0);

UPDATE plans SET webhook_limit = 16 WHERE name = 'free';

-- THE ONE PLACE A PLAN LIMIT IS DECIDED (sql/0016_teams.sql has the table
-- of limits; this adds:)
--
--   webhooks        endpoints (the caller's count) webhook_limit_reached
CREATE OR REPLACE FUNCTION cms_plan_refusal(p_workspace uuid, p_limit text,
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
    WHEN 'webhooks' THEN
        IF use + p_adding > p.webhook_limit THEN
            RETURN 'webhook_limit_reached';
        END IF;
    ELSE
        RAISE EXCEPTION 'cms_plan_refusal: unknown limit "%"', p_limit;
    END CASE;
    RETURN NULL;
END $$;

CREATE FUNCTION cms_webhook_create(p_workspace uuid, p_id uuid, p_url text,
                                   p_events text[], p_enabled boolean,
                                   p_description text, p_sealed bytea)
    RETURNS SETOF webhooks
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM 1 FROM workspaces WHERE id = p_workspace FOR NO KEY UPDATE;
    PERFORM cms_plan_check(p_workspace, 'webhooks', 1,
                           (SELECT count(*) FROM webhooks
                             WHERE workspace_id = p_workspace));
    RETURN QUERY
        INSERT INTO webhooks (id, workspace_id, url, events, enabled,
                              description, secret_sealed)
        VALUES (p_id, p_workspace, p_url, p_events, p_enabled,
                p_description, p_sealed)
        RETURNING *;
END $$;

COMMIT;
