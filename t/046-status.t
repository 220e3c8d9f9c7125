# cms_status: one scrape answers for every worker (the counters live in a shared zone), in
# the Prometheus text format, checked line by line with a strict parser (t/lib/Cms/Prom.pm;
# promtool is not in Debian 12). The scrape never waits for a pool. Scraped while load runs on 2 workers: PostgreSQL waits and
# connects, Redis connects, password-lane jobs and the background jobs' rounds move; a
# query timeout, a Redis that refuses, a full queue and the outbox lag show where they should.
use strict;
use warnings;
use Cms::Test;
use Cms::Prom;
use Cms::Fixtures qw(:content);
use POSIX ();
use IO::Socket::INET ();

my $STATUS = "location = /status { cms_status; }\n";
set_conf_defaults(workers => 2, config => $STATUS,
                  pg_params => 'max=2 queue=64 queue_timeout=20s');

sub scrape {
    my $r = http(GET => '/status');
    my ($m, $err) = Cms::Prom::parse($r->{body});
    return ($r, $m, $err);
}

# --- the parser refuses what Prometheus refuses (so that passing it means something) ----
{
    my $ok = "# HELP a_total x\n# TYPE a_total counter\na_total{w=\"0\"} 1\n";
    ok !(Cms::Prom::parse($ok))[1], 'parser: a good family passes';
    my %bad = (
        'no final newline'       => "# TYPE a gauge\na 1",
        'bad metric name'        => "# TYPE 0a gauge\n0a 1\n",
        'bad value'              => "# TYPE a gauge\na one\n",
        'no TYPE'                => "a 1\n",
        'duplicate series'       => "# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n",
        'bad label escape'       => "# TYPE a gauge\na{x=\"\\t\"} 1\n",
        'label twice'            => "# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n",
        'reserved label'         => "# TYPE a gauge\na{__x=\"1\"} 1\n",
        'split family'           => "# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x=\"2\"} 1\n",
        'TYPE twice'             => "# TYPE a gauge\n# TYPE a gauge\na 1\n",
        'counter without _total' => "# TYPE a counter\na 1\n",
        'negative counter'       => "# TYPE a_total counter\na_total -1\n",
        'unknown type'           => "# TYPE a meter\na 1\n",
    );
    for my $k (sort keys %bad) {
        ok +(Cms::Prom::parse($bad{$k}))[1], "parser refuses: $k";
    }
}

start_nginx();

# --- the shape of one scrape ------------------------------------------------------------
# nginx answers once its first worker listens: wait for both to have claimed their record
my ($r, $m, $err);
ok wait_until(5, sub { ($r, $m, $err) = scrape();
                       Cms::Prom::samples($m, 'cms_worker_start_time_seconds') == 2 }),
    'both workers appear';
is $r->{status}, 200, 'GET /status: 200';
like $r->{headers}{'content-type'} // '', qr{^text/plain; version=0\.0\.4}, 'the exposition content type';
ok !$err, 'the whole answer parses as Prometheus text' or diag $err, "\n", $r->{body};
my @workers = sort map { $_->{labels}{worker} } Cms::Prom::samples($m, 'cms_worker_start_time_seconds');
is_deeply \@workers, [0, 1], 'one scrape answers for both workers';
for my $w (0, 1) {
    is Cms::Prom::sum($m, 'cms_pool_size', worker => $w, pool => 'postgres'), 2, "worker $w: postgres pool size 2";
    is Cms::Prom::sum($m, 'cms_pool_size', worker => $w, pool => 'redis'), 4, "worker $w: redis pool size 4";
    ok Cms::Prom::sum($m, 'cms_thread_lane_size', worker => $w, lane => 'password') >= 1,
        "worker $w: the password lane has a size";
}
for my $f (qw(cms_pool_connections cms_pool_queue_length cms_pool_waits_total
              cms_pool_wait_timeouts_total cms_pool_rejected_total cms_pool_timeouts_total
              cms_pool_connects_total cms_pool_connect_failures_total cms_pool_errors_total
              cms_thread_lane_running cms_thread_lane_queue_length cms_thread_lane_started_total
              cms_thread_lane_refused_total cms_job_runs_total cms_worker_sample_age_seconds)) {
    ok $m->{families}{$f} && @{$m->{families}{$f}{samples}}, "family $f is there";
}
is Cms::Prom::sum($m, 'cms_pool_connections', pool => 'redis', state => 'busy'), 0, 'no redis work yet: busy 0';
my ($release) = do { open my $fh, '<', "$ENV{TEST_CMS_ROOT}/VERSION" or die $!; <$fh> } =~ /(\S+)/;
is Cms::Prom::sum($m, 'cms_build_info', version => $release), 1,
    'cms_build_info names the release (VERSION), value 1';

my $h = http(HEAD => '/status');
is $h->{status}, 200, 'HEAD /status: 200';
is $h->{body} // '', '', 'HEAD: no body';
my $p = http(POST => '/status', [], 'x');
is $p->{status}, 405, 'POST /status: 405';

# --- scraped while load runs ------------------------------------------------------------
my $before = $m;
my $kid = fork // die "fork: $!";
if (!$kid) {
    # 8 slow queries over 2 workers with 2 connections each: some must wait
    my @r = parallel_requests(map { [GET => '/v1/_test/sleep?seconds=1'] } 1 .. 8);
    POSIX::_exit((grep { $_->{status} != 200 } @r) ? 1 : 0);
}
my ($busy, $queued, $during);
ok wait_until(8, sub {
    my ($x, $mm, $e) = scrape();
    return 0 if $e || $x->{status} != 200;
    $during = $mm;
    $busy = Cms::Prom::sum($mm, 'cms_pool_connections', pool => 'postgres', state => 'busy');
    $queued = Cms::Prom::sum($mm, 'cms_pool_queue_length', pool => 'postgres');
    return $busy >= 1 && $queued >= 1;
}), 'under load: a scrape shows busy postgres connections and a queue'
    or diag "busy $busy, queued $queued";
# each worker's gauges are sampled every second by that worker
ok !grep({ $_->{value} > 5 } Cms::Prom::samples($during, 'cms_worker_sample_age_seconds')),
    'under load: every worker sampled its gauges within 5 s';
waitpid $kid, 0;
is $?, 0, 'the load: every slow query answered 200';

my $after;
ok wait_until(5, sub {
    (undef, $after) = scrape();
    Cms::Prom::sum($after, 'cms_pool_connections', pool => 'postgres', state => 'busy') <= 1;
}), 'after the load: the pools drain';
cmp_ok Cms::Prom::sum($after, 'cms_pool_waits_total', pool => 'postgres'), '>=',
    Cms::Prom::sum($before, 'cms_pool_waits_total', pool => 'postgres') + 4,
    'postgres waits_total moved (8 queries, 4 connections)';
cmp_ok Cms::Prom::sum($after, 'cms_pool_connects_total', pool => 'postgres'), '>=', 2,
    'postgres connects_total counts every connection opened';
is Cms::Prom::sum($after, 'cms_pool_errors_total', pool => 'postgres'), 0, 'no postgres errors';

# Redis and the password lane
my $rs = http(GET => '/v1/_test/redis?key=status');
cmp_ok $rs->{status}, '<', 500, 'a redis command answers';
signup();
my $lane;
ok wait_until(5, sub {
    (undef, $lane) = scrape();
    Cms::Prom::sum($lane, 'cms_thread_lane_started_total', lane => 'password') >= 1
        && Cms::Prom::sum($lane, 'cms_pool_connects_total', pool => 'redis') >= 1;
}), 'a signup moved the password lane, redis connects_total moved';

# background jobs: worker 0 counts its rounds
my $runs = Cms::Prom::sum($lane, 'cms_job_runs_total', job => 'relay');
ok wait_until(6, sub { Cms::Prom::sum((scrape())[1], 'cms_job_runs_total', worker => 0, job => 'relay') > $runs }),
    'the relay job\'s rounds are counted';
is Cms::Prom::sum($lane, 'cms_job_runs_total', worker => 1), 0, 'worker 1 runs no job';

# --- outbox lag ---------------------------------------------------------------------------
my $u = signup();
my $wid = workspace($u->{token}, 'Lag');
# content events become webhook deliveries in their transaction: the lag is the most
# overdue pending delivery's (delivery is off here, so nothing sends it)
psql("INSERT INTO webhooks (id, workspace_id, url, events, secret_sealed)
      VALUES (gen_random_uuid(), '$wid', 'https://hooks.example.com/', '{article.published}',
              '\\x00');
      INSERT INTO webhook_deliveries (webhook_id, workspace_id, event_id, event_type, payload,
                                      next_attempt_at)
      SELECT id, '$wid', gen_random_uuid(), 'article.published', '{}',
             now() - interval '120 seconds' FROM webhooks WHERE workspace_id = '$wid'");
# worker 0 asks the database with the jobs' interval (1 s here): wait for the next answer
my $lag;
ok wait_until(6, sub {
    (undef, $m, $err) = scrape();
    ($lag) = Cms::Prom::samples($m, 'cms_outbox_lag_seconds', outbox => 'content');
    !$err && $lag && $lag->{value} >= 120;
}), 'a delivery overdue by 120 s: lag >= 120 s' or diag $err // explain $lag;
ok $lag && $lag->{value} < 600, 'and not absurd';
psql("UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL,
             delivered_at = now()");
ok wait_until(6, sub {
    my ($l) = Cms::Prom::samples((scrape())[1], 'cms_outbox_lag_seconds', outbox => 'content');
    $l && $l->{value} == 0;
}), 'all delivered: lag 0';

# --- a full queue, a Redis that is not there ----------------------------------------------
# One worker: the scrape samples the answering worker itself, so the gauges are exact.
# The jobs would share the one connection: they wait an hour, and the outbox lag (asked
# once at start) is waited for.
restart_nginx(workers => 1, pg_params => 'max=1 queue=1 queue_timeout=10s',
              http_config => "cms_events_interval 1h;\ncms_purge_interval 1h;",
              redis => 'cms_redis 127.0.0.1:%%FREE_PORT%% max=2 timeout=300ms;');
ok wait_until(5, sub { (scrape())[1]{families}{cms_outbox_lag_seconds} }),
    'the jobs\' worker asked the outbox lag once';
allow_error_log(qr/timed out|queue is full|redis|Connection refused|answering 50[03]/);
sub pg_gauge { Cms::Prom::sum((scrape())[1], $_[0], pool => 'postgres', @_[1 .. $#_]) }
# the worker's own schema check may have met the full queue at its start (the lag query
# waits there while the connection opens): readiness answers it, which also puts the
# worker's next check a minute away; what the requests below are refused counts from here
is http(GET => '/v1/health/ready')->{status}, 200, 'ready: the schema known to be current';
my $rejected = pg_gauge('cms_pool_rejected_total');
my $first = start_request(GET => '/v1/_test/sleep?seconds=2');
ok wait_until(5, sub { pg_gauge('cms_pool_connections', state => 'busy') == 1 }), 'the one connection is busy';
my $second = start_request(GET => '/v1/_test/sleep?seconds=0');
ok wait_until(5, sub { pg_gauge('cms_pool_queue_length') == 1 }), 'the next request waits: queue_length 1';
my $third = http(GET => '/v1/_test/sleep?seconds=0');
is $third->{status}, 503, 'the queue is full: 503';
is pg_gauge('cms_pool_rejected_total') - $rejected, 1, 'rejected_total counts the refused one';
is finish_request($first)->{status}, 200, 'the first: 200';
is finish_request($second)->{status}, 200, 'the waiting one: 200';
# (the first may have waited too, for its connection to open)
cmp_ok pg_gauge('cms_pool_waits_total'), '>=', 1, 'waits_total counts the one that waited';
my $x = http(GET => '/v1/_test/redis?key=status');
is $x->{status}, 503, 'redis refused: 503';
(undef, $m, $err) = scrape();
ok !$err, 'parses' or diag $err;
cmp_ok Cms::Prom::sum($m, 'cms_pool_connect_failures_total', pool => 'redis'), '>=', 1,
    'redis connect_failures_total >= 1';
is Cms::Prom::sum($m, 'cms_pool_size', pool => 'redis'), 2, 'redis pool size 2';

# --- a server that never answers: connect timeouts ---------------------------------------
# A listening socket nobody accepts on: the handshake completes, the startup packet is
# never answered, the module's connect timer fires.
my $hole = IO::Socket::INET->new(Listen => 8, LocalAddr => '127.0.0.1', LocalPort => 0,
                                 Proto => 'tcp', ReuseAddr => 1) or die "listen: $!";
my $hp = $hole->sockport;
restart_nginx(workers => 1, postgres => qq{cms_postgres "hostaddr=127.0.0.1 port=$hp dbname=x user=postgres" max=1 connect_timeout=300ms;});
my $q = http(GET => '/v1/_test/sleep?seconds=0');
is $q->{status}, 503, 'postgres never answers: 503';
(undef, $m, $err) = scrape();
ok !$err, 'parses' or diag $err;
cmp_ok Cms::Prom::sum($m, 'cms_pool_timeouts_total', pool => 'postgres'), '>=', 1, 'postgres timeouts_total >= 1';
cmp_ok Cms::Prom::sum($m, 'cms_pool_connect_failures_total', pool => 'postgres'), '>=', 1,
    'postgres connect_failures_total >= 1';
ok !$m->{families}{cms_outbox_lag_seconds}, 'no database: the scrape answers without the outbox lag';
close $hole;

done_testing();
