-- The background jobs' claims planned for the queue they find (issue 35).
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
-- whose claims were planned before the burst came, and at 6,000-8,000 in
-- the others (perf: ExecEvalScalarArrayOp and uuid_eq under the claim).
--
-- A claim runs once a batch, not once a request: each of its statements
-- is now planned at each call, for the batch and the table as they are
-- then (plan_cache_mode), and never by sorting the queue for its oldest
-- rows (enable_sort: a queue not yet analyzed is estimated at a few rows,
-- and a plan that reads all 10,000 due and sorts them looked cheapest:
-- 7.6 ms a claim), for the duration of the call.  A refused path is priced
-- at 10^10, which puts the plan over jit_above_cost: JIT is off for them
-- (compiling each claim took the webhook row to 122 a second).  Refusing
-- sequential scans in the claims was tried too: with the queue counted
-- empty the planner then took any index that holds the id (a whole-index
-- scan of webhook_deliveries_list_idx for the batch's UPDATE).  A batch's
-- outcomes are written one statement per outcome (64 a batch): planning
-- each would cost more than the writes, and they look rows up by primary
-- key only, so there sequential scans alone are refused (and JIT with
-- them).  `BENCH_ONLY=webhooks`, six runs: 5,277 to 7,134 deliveries a
-- second.  The module's own statements on the queues (the relay's mark
-- and release of an extension's events, a CDN purge's removal, the
-- outboxes' lag) are no longer kept prepared either: planned at each run
-- (ngx_http_cms_pg_stmt_replan, src/ngx_http_cms_pg.h).  t/148 plans them
-- all on the empty queues, then claims a batch of 16 among 10,000 and
-- records its outcomes.
BEGIN;

ALTER FUNCTION cms_webhook_deliveries_claim(integer, interval)
    SET plan_cache_mode = force_custom_plan SET enable_sort = off SET jit = off;
ALTER FUNCTION cms_ext_events_claim(integer, interval)
    SET plan_cache_mode = force_custom_plan SET enable_sort = off SET jit = off;
ALTER FUNCTION cms_cdn_purges_claim(integer, interval)
    SET plan_cache_mode = force_custom_plan SET enable_sort = off SET jit = off;
ALTER FUNCTION cms_object_removals_claim(integer, interval)
    SET plan_cache_mode = force_custom_plan SET enable_sort = off SET jit = off;
ALTER FUNCTION cms_webhook_delivery_results(jsonb, float8)
    SET enable_seqscan = off SET jit = off;

COMMIT;
