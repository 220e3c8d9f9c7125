-- The background jobs' claims find their rows by an index, whatever the
-- planner was told when it planned them (issue 35).
--
-- A queue (the webhook deliveries, an extension's events, the CDN purges,
-- the object removals) is empty most of the time and receives its rows in
-- bursts: 10,000 deliveries from one event fanned out, a payment load's
-- events.  The module's connections plan their statements once
-- (force_generic_plan) and keep the plans until the table's next ANALYZE.
-- Planned while the queue was empty on disk (a fresh install, or after a
-- VACUUM found it empty), a claim's UPDATE of its batch by id
-- (`id = ANY (batch)`, sql/0050) is a sequential scan, which costs
-- nothing on an empty table and then reads the whole burst for every
-- batch of 16 until autovacuum's next ANALYZE, a minute or more later:
-- `BENCH_ONLY=webhooks` ran at about 2,000 deliveries a second in the runs
-- whose claims were planned before the burst came, and at 6,000-7,400 in
-- the others (perf: ExecEvalScalarArrayOp and uuid_eq under the claim).
-- Each of these functions reads its rows by a primary key or its queue's
-- index and nothing else: a sequential scan is never its plan, nor is a
-- sort of the whole queue for its oldest rows (with sequential scans
-- refused, the planner that counts the queue empty reads it all through
-- another index and sorts it), so the planner is told both for the
-- duration of a claim, and the first for the outcome function each
-- outcome of a batch calls.  t/148 plans them on the empty queues, then
-- claims a batch of 16 among 10,000 and records its outcomes.  The
-- module's own statements on the queues (the relay's mark and release of
-- an extension's events, a CDN purge's removal, the outboxes' lag) are
-- no longer kept prepared: planned at each run (ngx_http_cms_pg_stmt_replan,
-- src/ngx_http_cms_pg.h).
BEGIN;

ALTER FUNCTION cms_webhook_deliveries_claim(integer, interval)
    SET enable_seqscan = off SET enable_sort = off;
ALTER FUNCTION cms_ext_events_claim(integer, interval)
    SET enable_seqscan = off SET enable_sort = off;
ALTER FUNCTION cms_cdn_purges_claim(integer, interval)
    SET enable_seqscan = off SET enable_sort = off;
ALTER FUNCTION cms_object_removals_claim(integer, interval)
    SET enable_seqscan = off SET enable_sort = off;
ALTER FUNCTION cms_webhook_delivery_results(jsonb, float8)
    SET enable_seqscan = off;

COMMIT;
