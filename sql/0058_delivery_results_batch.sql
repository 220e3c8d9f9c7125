-- A batch of webhook outcomes written in one subtransaction (issue 35).
--
-- cms_webhook_delivery_results() wrote each outcome of a batch (64 at
-- most) in a subtransaction of its own, so that one that cannot be
-- written (a deadlock with an endpoint being deleted) dropped itself and
-- not the batch.  Each subtransaction that writes takes a subtransaction
-- id of its own: 64 a batch, the most a session's snapshot entry holds
-- before every other session's snapshots must look them up in pg_subtrans
-- (PGPROC_MAX_CACHED_SUBXIDS), and a begin and release each.  Now the
-- whole batch is written in one statement and one subtransaction; only
-- when that fails is it rolled back and written again an outcome at a
-- time by the function of before (renamed
-- cms_webhook_delivery_results_each), so that the one that failed still
-- drops itself alone (t/148: a batch of three whose second cannot be
-- written).
BEGIN;

ALTER FUNCTION cms_webhook_delivery_results(jsonb, float8)
    RENAME TO cms_webhook_delivery_results_each;

CREATE FUNCTION cms_webhook_delivery_results(p_results jsonb,
    p_scale float8)
    RETURNS integer
    LANGUAGE plpgsql
    SET enable_seqscan = off SET jit = off
    AS $$
DECLARE
    n  integer;
BEGIN
    BEGIN
        PERFORM cms_webhook_delivery_result(x.id, x.attempt, x.code, x.ms,
                                            x.error, p_scale)
           FROM jsonb_to_recordset(p_results)
                AS x(id uuid, attempt integer, code integer, ms integer,
                     error text);
        GET DIAGNOSTICS n = ROW_COUNT;

        RETURN n;
    EXCEPTION WHEN OTHERS THEN
        NULL;
    END;

    RETURN cms_webhook_delivery_results_each(p_results, p_scale);
END $$;

COMMIT;
