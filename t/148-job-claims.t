# The background jobs' claims read their batch, not their table (sql/0050_claims_by_id.sql):
# with 10,000 rows waiting and 10,000 done in each queue (an extension's events, a
# webhook's deliveries, the CDN purges, the object removals), one claim of 16 under the
# generic plans the module's connections use reads a few dozen rows, where joining the
# batch to the table read all 20,000 (a LIMIT of unknown size is planned as a tenth of the
# rows below it).  And each claim still hands out what it did: the oldest due rows first,
# each once while its lease runs, an extension's events in the order they were written, a
# disabled endpoint's deliveries failed instead of sent, a key named again dropped.  And
# the writes by id that follow a claim (a delivery's outcome, the relay's mark and release,
# an upload's release) read their rows, not their queue, when the last ANALYZE saw the queue
# empty (sql/0055_lookups_by_id.sql, src/ngx_http_cms_jobs.c).
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(one rows_read);

# the module's statement $name (src/ngx_http_cms_jobs.c), its C string's pieces joined: the
# relay's mark and release are statements of the module's own, tested as written there
sub module_sql {
    my ($name, $file) = @_;
    $file //= 'ngx_http_cms_jobs.c';
    open my $fh, '<', "$ENV{TEST_CMS_ROOT}/src/$file" or die "$file: $!";
    my $c = do { local $/; <$fh> };
    $c =~ /\Q$name\E =\s*(ngx_http_cms_pg_stmt\w*)\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+),/s
        or die "no statement $name in src/$file";
    my $how = $1;
    my $sql = join '', $2 =~ /"((?:[^"\\]|\\.)*)"/g;
    return wantarray ? ($sql, $how) : $sql;
}

# what the module's statement $name (of src/$file) read of $table, prepared ($types) and
# run once ($args) on the generic plans
sub module_reads {
    my ($table, $name, $types, $args, $file) = @_;
    my ($read) = rows_read([$table], "PREPARE cms_stmt ($types) AS " . module_sql($name, $file)
                                     . "; EXECUTE cms_stmt ($args)");
    return $read->{$table};
}

# what one claim of 16 read of its table, in a transaction of its own on the generic
# plans; its rows' first column in the order the claim returned them
sub claim {
    my ($table, $call, $col) = @_;
    my ($read, $rows) = rows_read([$table], "CREATE TEMP TABLE cms_claimed ON COMMIT DROP AS
              SELECT row_number() OVER () AS i, c.* FROM $call c",
                                  "SELECT c.${col}::text FROM cms_claimed c ORDER BY c.i");
    return ($read->{$table}, [map { $_->[0] } @$rows]);
}

my $fac = one("INSERT INTO facilities (name) VALUES ('Claims') RETURNING id");
my $ws = one("INSERT INTO workspaces (name) VALUES ('Claims') RETURNING id");

# ---- an extension's events: 10,000 relayed, 10,000 waiting (e1 the oldest)
psql("INSERT INTO ext_events (facility_id, livemode, type, data, created_at, relayed_at)
      SELECT '$fac', true, 'billing.payment_completed', jsonb_build_object('n', g),
             now() - interval '1 hour' + g * interval '1 ms',
             CASE WHEN g <= 10000 THEN now() END
        FROM generate_series(1, 20000) g;
      ANALYZE ext_events");
my ($read, $rows) = claim('ext_events', "cms_ext_events_claim(16, interval '1 minute')", 'id');
cmp_ok $read, '<', 100, "events: a claim of 16 reads $read rows, not the 20,000";
is scalar @$rows, 16, 'events: 16 claimed';
my $want = one("SELECT string_agg(id::text, ',' ORDER BY created_at) FROM
    (SELECT id, created_at FROM ext_events WHERE relayed_at IS NULL ORDER BY created_at LIMIT 16) e");
is join(',', @$rows), $want, 'events: the 16 oldest waiting, in the order they were written';
($read, my $next) = claim('ext_events', "cms_ext_events_claim(16, interval '1 minute')", 'id');
is scalar(grep { my $x = $_; grep { $_ eq $x } @$rows } @$next), 0,
   'events: the next claim hands out others while the lease runs';
is one("SELECT count(*) FROM ext_events WHERE claimed_until > now()"), 32,
   'events: 32 leased';

# ---- a webhook's deliveries: 10,000 delivered, 10,000 due; an endpoint disabled since
# its 4 deliveries were queued (the oldest due)
my ($on, $off) = map { one(
    "INSERT INTO webhooks (id, workspace_id, url, events, enabled, secret_sealed)
     VALUES (gen_random_uuid(), '$ws', 'https://127.0.0.1:9/$_', '{article.published}', $_, '\\x00')
     RETURNING id") } qw(true false);
psql("INSERT INTO webhook_deliveries (webhook_id, workspace_id, event_id, event_type, payload,
                                      status, next_attempt_at, delivered_at)
      SELECT CASE WHEN g BETWEEN 10001 AND 10004 THEN '$off' ELSE '$on' END::uuid, '$ws',
             gen_random_uuid(), 'article.published', '{}',
             CASE WHEN g <= 10000 THEN 'delivered' ELSE 'pending' END,
             CASE WHEN g > 10000 THEN now() - interval '1 hour' + g * interval '1 ms' END,
             CASE WHEN g <= 10000 THEN now() END
        FROM generate_series(1, 20000) g;
      ANALYZE webhook_deliveries");
($read, $rows) = claim('webhook_deliveries', "cms_webhook_deliveries_claim(16, interval '1 minute')", 'id');
cmp_ok $read, '<', 100, "deliveries: a claim of 16 reads $read rows, not the 20,000";
is scalar @$rows, 12, 'deliveries: the 12 of the enabled endpoint handed out';
is one("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = '$off'
                        AND status = 'failed' AND last_error = 'the endpoint is disabled'"), 4,
   "deliveries: the disabled endpoint's 4 failed, not sent";
is one("SELECT string_agg(id::text, ',' ORDER BY next_attempt_at) FROM
    (SELECT id, next_attempt_at FROM webhook_deliveries WHERE status = 'pending'
      ORDER BY next_attempt_at LIMIT 12) d"), join(',', @$rows),
   'deliveries: the 12 oldest due, oldest first';
is one("SELECT count(*) FROM webhook_deliveries
                        WHERE locked_until > now() AND attempt = 1"), 12,
   'deliveries: leased, their attempt counted';

# ---- CDN purges: 10,000 due, 10,000 not yet
psql("INSERT INTO cdn_purges (keys, next_at)
      SELECT 'site:' || g, now() + CASE WHEN g <= 10000 THEN interval '1 hour'
                                        ELSE -interval '1 hour' + g * interval '1 ms' END
        FROM generate_series(1, 20000) g;
      ANALYZE cdn_purges");
($read, $rows) = claim('cdn_purges', "cms_cdn_purges_claim(16, interval '1 minute')", 'id');
cmp_ok $read, '<', 100, "purges: a claim of 16 reads $read rows, not the 20,000";
is scalar @$rows, 16, 'purges: 16 claimed';
is one("SELECT count(*) FROM cdn_purges WHERE claimed_until > now()
                         AND keys::text IN (SELECT 'site:' || g FROM generate_series(10001, 10016) g)"), 16,
   'purges: the 16 due first, leased';

# ---- object removals: 10,000 due, 10,000 not yet; the first due key named again by a
# media asset (an upload that took the key back)
psql("INSERT INTO object_removals (storage_key, next_at)
      SELECT 'claims/' || g, now() + CASE WHEN g <= 10000 THEN interval '1 hour'
                                          ELSE -interval '1 hour' + g * interval '1 ms' END
        FROM generate_series(1, 20000) g;
      INSERT INTO media_assets (workspace_id, title, mime_type, size_bytes, storage_key)
      VALUES ('$ws', 'a.png', 'image/png', 1, 'claims/10001');
      ANALYZE object_removals");
($read, $rows) = claim('object_removals', "cms_object_removals_claim(16, interval '1 minute')", 'storage_key');
cmp_ok $read, '<', 100, "removals: a claim of 16 reads $read rows, not the 20,000";
is join(',', sort @$rows), join(',', sort map { "claims/$_" } 10002 .. 10016),
   'removals: the 15 due keys nothing names handed out';
is one("SELECT count(*) FROM object_removals WHERE storage_key = 'claims/10001'"), 0,
   'removals: the key named again dropped';

# ---- the scheduled articles' announcer: 3,000 articles saved as scheduled for a time
# already past (their saves wrote their events) beside one whose time came after its save;
# a pass reads that one, not the 3,000 (sql/0051, sql/0053)
my $uid = one("INSERT INTO users (email, name, password_hash, email_verified)
               VALUES ('claims\@example.com', 'C', 'x', true) RETURNING id");
psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$ws', '$uid', 'owner')");
psql("SELECT count(cms_article_save('$ws', '$uid', true, NULL,
             jsonb_build_object('title', 'Past ' || g, 'slug', 'past-' || g, 'locale', 'en',
                                'status', 'scheduled',
                                'published_at', now() - interval '1 hour'), false))
        FROM generate_series(1, 3000) g");
is one("SELECT count(*) FROM articles WHERE workspace_id = '$ws' AND slug LIKE 'past-%'
          AND announced_for = published_at"), 3000,
   'announcer: an article saved as scheduled in the past is marked announced by its save';
my $due = one("INSERT INTO articles (workspace_id, title, slug, locale, status, published_at, updated_at)
               VALUES ('$ws', 'Due', 'due', 'en', 'scheduled', now() - interval '1 minute',
                       now() - interval '1 hour') RETURNING id");
psql("ANALYZE articles");
($read, $rows) = claim('articles', 'cms_articles_announce_due(100)', 'c');
cmp_ok $read, '<', 100, "announcer: a pass reads $read rows, not the 3,000 announced by their saves";
is_deeply $rows, ['1'], 'announcer: the one article whose time came after its save announced';
is one("SELECT count(*) FROM outbox_events WHERE type = 'article.published' AND data->>'id' = '$due'"), 1,
   '... its article.published written';

# ---- the jobs' writes by id when the last ANALYZE saw their queue empty (sql/0055): the
# planner would take the queue's partial index for the way to one row and read the whole
# queue for each; autovacuum kept off, so that the statistics stay as they were taken
psql("ALTER TABLE webhook_deliveries SET (autovacuum_enabled = off);
      ALTER TABLE ext_events SET (autovacuum_enabled = off);
      DELETE FROM webhook_delivery_attempts; DELETE FROM webhook_deliveries; DELETE FROM ext_events;
      INSERT INTO webhook_deliveries (webhook_id, workspace_id, event_id, event_type, payload,
                                      status, next_attempt_at, delivered_at)
      SELECT '$on', '$ws', gen_random_uuid(), 'article.published', '{}', 'delivered', NULL, now()
        FROM generate_series(1, 10000) g;
      INSERT INTO ext_events (facility_id, livemode, type, data, relayed_at)
      SELECT '$fac', true, 'billing.payment_completed', '{}', now() FROM generate_series(1, 10000) g;
      ANALYZE webhook_deliveries; ANALYZE ext_events;
      INSERT INTO webhook_deliveries (webhook_id, workspace_id, event_id, event_type, payload,
                                      status, next_attempt_at, attempt, locked_until)
      SELECT '$on', '$ws', gen_random_uuid(), 'article.published', '{}', 'pending',
             now() - interval '1 minute', 1, now() + interval '1 minute'
        FROM generate_series(1, 10000) g;
      INSERT INTO ext_events (facility_id, livemode, type, data, created_at)
      SELECT '$fac', true, 'billing.payment_completed', '{}', now() - interval '1 hour' + g * interval '1 ms'
        FROM generate_series(1, 10000) g");
my $sent = one("SELECT id FROM webhook_deliveries WHERE status = 'pending' LIMIT 1");
($read) = rows_read(['webhook_deliveries'], "CREATE TEMP TABLE cms_out ON COMMIT DROP AS
    SELECT cms_webhook_delivery_results(
    '[{\"id\": \"$sent\", \"attempt\": 1, \"code\": 204, \"ms\": 3, \"error\": null}]', 1)");
cmp_ok $read->{webhook_deliveries}, '<', 100,
   "outcomes: one delivery's outcome reads $read->{webhook_deliveries} rows, not the 10,000 waiting";
is one("SELECT status || ' ' || (locked_until IS NULL) FROM webhook_deliveries WHERE id = '$sent'"),
   'delivered true', '... and records it: delivered, its lease ended';
is one("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = '$sent' AND status_code = 204"),
   1, '... with its attempt';
# a batch is written in one subtransaction (sql/0058); when an outcome of it cannot be written
# (duration_ms is NOT NULL) the batch is written again an outcome at a time: that one drops
# itself alone, its delivery left to its lease
my @three = map { $_->[0] } @{ psql("SELECT id FROM webhook_deliveries WHERE status = 'pending'
                                       AND id <> '$sent' ORDER BY id LIMIT 3") };
my $batch = join ', ', map { my $ms = $_ == 1 ? 'null' : 5;
                             qq({"id": "$three[$_]", "attempt": 1, "code": 204, "ms": $ms, "error": null}) } 0 .. 2;
is one("SELECT cms_webhook_delivery_results('[$batch]', 1)"), 2,
   'outcomes: a batch of three whose second cannot be written records two';
is_deeply [map { $_->[0] } @{ psql("SELECT status || ' ' || (locked_until IS NULL) FROM webhook_deliveries
                                     WHERE id IN ('" . join("','", @three) . "') ORDER BY id") }],
          ['delivered true', 'pending false', 'delivered true'],
          '... the first and third delivered, the second still pending under its lease';
is one("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id IN ('"
       . join("','", @three) . "')"), 2, '... and two attempts written, none for the second';

(undef, $rows) = claim('ext_events', "cms_ext_events_claim(16, interval '1 minute')", 'id');
my ($relayed, $refused) = map { "ARRAY['" . join("','", @$_) . "']::uuid[]" }
                              [@$rows[0 .. 7]], [@$rows[8 .. 15]];
$read = module_reads('ext_events', 'ngx_http_cms_jobs_mark_sql', 'uuid[], uuid[]', "$relayed, $refused");
cmp_ok $read, '<', 100, "relay: marking a batch of 16 reads $read rows, not the 10,000 waiting";
is one("SELECT count(*) FROM ext_events WHERE id = ANY ($relayed) AND relayed_at IS NOT NULL"), 8,
   '... the 8 Redis took marked relayed';
is one("SELECT count(*) FROM ext_events WHERE id = ANY ($refused) AND relayed_at IS NULL
          AND claimed_until BETWEEN now() AND now() + interval '5 seconds'"), 8,
   '... the 8 it refused waiting 5 s';
$read = module_reads('ext_events', 'ngx_http_cms_jobs_release_sql', 'uuid[]', $refused);
cmp_ok $read, '<', 100, "relay: releasing a batch reads $read rows, not the 10,000 waiting";
is one("SELECT count(*) FROM ext_events WHERE id = ANY ($refused) AND claimed_until IS NULL"), 8,
   '... the batch claimable again';

# an upload's finalization claim given back, among 10,000 uploads pending since an ANALYZE
# that saw none
psql("ALTER TABLE media_assets SET (autovacuum_enabled = off);
      INSERT INTO media_assets (workspace_id, title, mime_type, size_bytes, storage_key)
      SELECT '$ws', 'r.png', 'image/png', 1, 'claims/ready-' || g FROM generate_series(1, 10000) g;
      ANALYZE media_assets;
      INSERT INTO media_assets (workspace_id, title, mime_type, size_bytes, storage_key, status,
                                reserved_until, finalizing_until)
      SELECT '$ws', 'p.png', 'image/png', 1, 'claims/pending-' || g, 'pending',
             now() + interval '1 hour', now() + interval '1 minute'
        FROM generate_series(1, 10000) g");
my $upload = one("SELECT id FROM media_assets WHERE status = 'pending' LIMIT 1");
($read) = rows_read(['media_assets'], "CREATE TEMP TABLE cms_out ON COMMIT DROP AS
    SELECT 1 AS done FROM cms_media_release('$ws', '$upload')");
cmp_ok $read->{media_assets}, '<', 100,
   "uploads: releasing a finalization claim reads $read->{media_assets} rows, not the 10,000 pending";
is one("SELECT finalizing_until IS NULL FROM media_assets WHERE id = '$upload'"), 't',
   '... and releases it';

# ---- a burst into queues counted empty (sql/0057): the claims planned while their queue was
# empty on disk (after a VACUUM of the empty table: a fresh install, a quiet hour), the plans
# kept while 10,000 rows come, as a connection keeps them until the next ANALYZE: a claim
# of 16 (and a batch's outcomes) read their rows, not the queue, nor sort it
my @queues = qw(webhook_deliveries ext_events cdn_purges object_removals);
psql("DELETE FROM webhook_delivery_attempts; DELETE FROM media_assets WHERE storage_key LIKE 'claims/%';
      DELETE FROM " . join('; DELETE FROM ', @queues));
psql("VACUUM ANALYZE $_") for @queues;
# (a DO block: its statements print nothing among rows_read's results)
my $jobs = 'DO $$ BEGIN
    PERFORM cms_webhook_delivery_results(
        (SELECT coalesce(jsonb_agg(jsonb_build_object(\'id\', c.id, \'attempt\', c.attempt,
                                                      \'code\', 204, \'ms\', 3)), \'[]\')
           FROM cms_webhook_deliveries_claim(16, interval \'1 minute\') c), 1);
    PERFORM count(*) FROM cms_ext_events_claim(16, interval \'1 minute\');
    PERFORM count(*) FROM cms_cdn_purges_claim(16, interval \'1 minute\');
    PERFORM count(*) FROM cms_object_removals_claim(16, interval \'1 minute\');
    END $$';
my $due_at = "now() - interval '1 hour' + g * interval '1 ms'";
# one psql script (a session's plans end with each, DISCARD ALL): the first run plans on
# the empty queues and reads nothing, then the burst, then the second run
my $ids = sub { "'{" . join(',', map { sprintf '00000000-0000-4000-8000-%012d', $_ } @_) . "}'" };
($read) = rows_read(\@queues,
    "$jobs;
     INSERT INTO webhook_deliveries (webhook_id, workspace_id, event_id, event_type, payload,
                                     status, next_attempt_at)
     SELECT '$on', '$ws', gen_random_uuid(), 'article.published', '{}', 'pending', $due_at
       FROM generate_series(1, 10000) g;
     INSERT INTO ext_events (id, facility_id, livemode, type, data, created_at)
     SELECT ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, '$fac', true, 'billing.payment_completed', '{}', $due_at
       FROM generate_series(1, 10000) g;
     INSERT INTO cdn_purges (keys, next_at) SELECT 'burst:' || g, $due_at FROM generate_series(1, 10000) g;
     INSERT INTO object_removals (storage_key, next_at)
     SELECT 'burst/' || g, $due_at FROM generate_series(1, 10000) g;
     $jobs");
for my $q (@queues) {
    cmp_ok $read->{$q}, '<', 100, "planned on an empty queue, then 10,000 due: $q: "
                                  . "a claim of 16 reads $read->{$q} rows";
}
is one("SELECT count(*) FROM webhook_delivery_attempts WHERE status_code = 204"), 16,
   '... and the 16 deliveries\' outcomes recorded';
# the module's own statements on the queues are planned at each run (unnamed, never kept
# prepared: ngx_http_cms_pg_stmt_replan), so on the burst: run prepared after it
for my $s (['ext_events', 'ngx_http_cms_jobs_mark_sql', 'uuid[], uuid[]',
            $ids->(1 .. 8) . ', ' . $ids->(9 .. 16)],
           ['ext_events', 'ngx_http_cms_jobs_release_sql', 'uuid[]', $ids->(9 .. 16)],
           ['cdn_purges', 'ngx_http_cms_cdn_sent_sql', 'bigint[]',
            "'" . one("SELECT array_agg(id)::text FROM (SELECT id FROM cdn_purges LIMIT 16) p") . "'",
            'ngx_http_cms_cdn.c']) {
    my ($table, $name, $types, $args, $file) = @$s;
    is +(module_sql($name, $file))[1], 'ngx_http_cms_pg_stmt_replan', "$name: planned at each run";
    $read = module_reads($table, $name, $types, $args, $file);
    cmp_ok $read, '<', 100, "... and on the burst it reads $read rows of $table";
}

done_testing();
