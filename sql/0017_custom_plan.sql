-- Custom modules follow the workspace's plan: cms_custom_modules_allowed()
-- (0011, the one place the custom-module routes ask) now asks the plans'
-- one decision, cms_plan_refusal() (0016).
BEGIN;

CREATE OR REPLACE FUNCTION cms_custom_modules_allowed(p_workspace uuid)
    RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT cms_plan_refusal(p_workspace, 'custom_modules') IS NULL $$;

COMMIT;
