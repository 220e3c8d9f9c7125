-- The migration ledger.  scripts/migrate.sh creates it before the first
-- migration runs (it must exist to record this one); kept here so that the
-- schema is readable from sql/ alone.
BEGIN;

CREATE TABLE IF NOT EXISTS schema_migrations (
    version     text PRIMARY KEY,
    applied_at  timestamptz NOT NULL DEFAULT now()
);

COMMIT;
