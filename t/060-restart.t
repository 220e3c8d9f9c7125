# PostgreSQL and Redis go away and come back under traffic: while one is down, requests
# get a fast JSON 503; afterwards they succeed again without restarting nginx (same worker
# process), within a few seconds.
use strict;
use warnings;
use Cms::Test;
use POSIX ();
use IO::Socket::INET;
use Time::HiRes qw(sleep time);

# The pools' timeouts far out (20 s): a "fast" 503 (under 10 s) is then well apart from an
# answer at a timeout, however slow the machine.
set_conf_defaults(workers => 1,
                  pg_params => 'max=4 queue=100 connect_timeout=20s queue_timeout=20s query_timeout=20s',
                  redis_params => 'max=4 timeout=20s');
start_nginx();

my $r = http(GET => '/v1/health');
is $r->{status}, 200, 'health before' or diag $r->{body};
my @workers = worker_pids();
is scalar(@workers), 1, 'one worker';

# Warm the pools so that stale pooled connections are part of what is tested.
parallel_requests(map { [GET => '/v1/health'] } 1 .. 8);

# Health during an outage: 503 naming the missing service, fast.
sub outage_checks {
    my ($what, $expect_health) = @_;
    for my $i (1 .. 5) {
        my $h = http(GET => '/v1/health');
        is $h->{status}, 503, "$what down: health $i is 503" or diag $h->{error} // $h->{body};
        my $err = $h->{json} ? json_subset($expect_health, $h->{json}) : "not JSON: $h->{body}";
        ok !defined $err, "$what down: health $i body" or diag $err;
        cmp_ok $h->{elapsed}, '<', 10, sprintf("$what down: health $i answered in %.3f s, not at a timeout", $h->{elapsed});
    }
}

sub recovers {
    my $what = shift;
    my $t0 = time;
    my $last;
    my $ok = wait_until(8, sub { $last = http(GET => '/v1/health', undef, undef, timeout => 2);
                                 $last->{status} == 200 });
    ok $ok, sprintf("$what back: health 200 after %.2f s", time - $t0)
        or diag "last: $last->{status} " . ($last->{error} // $last->{body});
    # Once healthy, every pooled connection must be a live one.
    my @r = parallel_requests(map { [GET => '/v1/health'] } 1 .. 20);
    is scalar(grep { $_->{status} == 200 } @r), 20, "$what back: 20 parallel health checks 200"
        or diag join "\n", map { "$_->{status} " . ($_->{error} // $_->{body}) } grep { $_->{status} != 200 } @r;
    for my $i (1 .. 10) {
        my $s = http(GET => '/v1/_test/sleep?seconds=0');
        is $s->{status}, 200, "$what back: query $i 200" or diag $s->{body};
    }
}

# --- PostgreSQL stopped -------------------------------------------------------------------
pg_stop();
outage_checks('postgres', {postgres => 'unavailable', redis => 'ok'});
my $q = http(GET => '/v1/_test/sleep?seconds=0');
is $q->{status}, 503, 'postgres down: a query is 503' or diag $q->{body};
is(($q->{json} || {})->{code}, 'service_unavailable', 'postgres down: code service_unavailable');
cmp_ok $q->{elapsed}, '<', 10, 'postgres down: the query failed fast, not at a timeout';
pg_start();
recovers('postgres');

# --- PostgreSQL restarted while requests flow -------------------------------------------
# A child restarts it 0.5 s in; meanwhile 60 requests start over 3 s. Each must be a 200
# or a fast JSON 503: no hang, no dropped connection, no other status.
my $pid = fork // die "fork: $!";
if (!$pid) {
    sleep 0.5;
    my $rc = eval { pg_restart(); 1 } ? 0 : 1;
    POSIX::_exit($rc);        # skip END blocks: the parent owns nginx and the database
}
my @traffic = parallel_requests(map { { method => 'GET', path => '/v1/health', delay => $_ * 0.05 } } 0 .. 59);
waitpid $pid, 0;
is $?, 0, 'postgres restarted under traffic';
my @bad = grep { !($_->{status} == 200 || ($_->{status} == 503 && $_->{json} && $_->{elapsed} < 10)) } @traffic;
is scalar(@bad), 0, 'under traffic: every answer a 200 or a fast JSON 503'
    or diag join "\n", map { sprintf "%s %.3fs %s", $_->{status}, $_->{elapsed}, $_->{error} // $_->{body} } @bad;
diag sprintf 'during the restart: %d x 200, %d x 503',
    scalar(grep { $_->{status} == 200 } @traffic), scalar(grep { $_->{status} == 503 } @traffic);
recovers('postgres restarted');

# --- Redis stopped ----------------------------------------------------------------------
redis_stop();
outage_checks('redis', {postgres => 'ok', redis => 'unavailable'});
redis_start();
recovers('redis');

# --- Pooled connections closed by the servers while idle --------------------------------
# The pools take an idle connection without asking its socket (nginx's epoll module flags
# the peer's FIN): each closed connection must have been noticed by its idle handler, so the
# requests right after are all answered, none with a dead connection.
parallel_requests(map { [GET => '/v1/health'] } 1 .. 8);
my $mine = "datname = current_database() AND application_name = 'ngx_http_cms'";
my @ended = map { $_->[0] } @{psql("WITH m AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE $mine) "
                                  . "SELECT pid FROM m WHERE pg_terminate_backend(pid)")};
my $killed = @ended;
cmp_ok $killed, '>=', 1, "postgres ended the module's $killed idle connections";
# pg_terminate_backend() only signals: a backend sends its FATAL and leaves a moment later.
# Once none of them is listed, each socket holds its FATAL or EOF for the pools to see.
my $gone = "SELECT count(*) FROM pg_stat_activity WHERE pid IN (" . join(',', @ended) . ")";
ok wait_until(10, sub { psql($gone)->[0][0] == 0 }), "the $killed ended backends have left";
my $rk = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $ENV{TEST_CMS_REDIS_PORT},
                               Proto => 'tcp', Timeout => 5) or die "redis: $!";
print $rk "CLIENT KILL TYPE normal SKIPME yes\r\n";
my $n = <$rk> // '';
$n =~ s/\s+\z//;
like $n, qr/^:[1-9]/, "redis ended the module's idle connections ($n)";
close $rk;
ok wait_until(10, sub { grep { /cms: postgres closed an idle connection/ } error_log_lines() }),
   'error.log: postgres closed an idle connection';
ok wait_until(10, sub { grep { /cms: redis closed an idle connection/ } error_log_lines() }),
   'error.log: redis closed an idle connection';
my @after = parallel_requests(map { [GET => '/v1/health'] } 1 .. 8);
is scalar(grep { $_->{status} == 200 } @after), 8, 'after the servers closed idle connections: 8 health checks 200'
    or diag join "\n", map { "$_->{status} " . ($_->{error} // $_->{body}) } @after;
for my $i (1 .. 5) {
    my $s = http(GET => '/v1/_test/sleep?seconds=0');
    is $s->{status}, 200, "after the idle closes: query $i 200" or diag $s->{body};
}

is_deeply [worker_pids()], \@workers, 'the same worker process served it all';

done_testing();
