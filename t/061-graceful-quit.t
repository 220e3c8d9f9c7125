# A graceful quit finishes what was accepted. A request in pg_sleep when the master
# gets QUIT is answered (the slot's query timer keeps the worker up: issue 10, found
# 1). With max=1, one running and one queued request, then QUIT: the queued one is
# served by the connection the first one gives back, not by new connections opened
# and closed in a loop (found 2: 130 connections in 2.8 s and a 503); PostgreSQL's own
# count of sessions opened on the file's database says how many there were.
use strict;
use warnings;
use Cms::Test;

sub quit_and_wait {
    my $pid = master_pid() or return 0;
    kill 'QUIT', $pid;
    return wait_until(8, sub { !kill 0, $pid });
}

sub sessions {
    # stats are flushed when backends end: read them once nginx's are gone
    wait_until(5, sub {
        !psql_admin("SELECT count(*) FROM pg_stat_activity WHERE datname = '%%DB%%'"
                    . " AND application_name = 'ngx_http_cms'")->[0][0];
    });
    psql_admin("SELECT pg_stat_clear_snapshot();"
               . " SELECT sessions FROM pg_stat_database WHERE datname = '%%DB%%'")->[0][0];
}

sub sleeping {
    my $n = shift;
    return wait_until(5, sub {
        psql_admin("SELECT count(*) FROM pg_stat_activity WHERE datname = '%%DB%%'"
                   . " AND query LIKE '%pg_sleep%' AND state = 'active'"
                   . " AND application_name = 'ngx_http_cms'")->[0][0] >= $n;
    });
}

# --- a request in pg_sleep when QUIT arrives
start_nginx(workers => 1);
my $h = start_request(GET => '/v1/_test/sleep?seconds=1.5');
ok sleeping(1), 'the query runs';
my $off = error_log_size();
ok quit_and_wait(), 'nginx quits';
my $r = finish_request($h);
is $r->{status}, 200, 'the request in flight is answered' or diag $r->{error} // $r->{body};
is(($r->{json} || {})->{slept}, 1.5, 'with its result');
ok !grep({ /open socket|left in connection/ } error_log_lines($off)),
    'no socket left behind';

# --- max=1: one running, one queued, then QUIT
my $before = sessions();
start_nginx(workers => 1, pg_params => 'max=1 queue=4 queue_timeout=5s');
my $first = start_request(GET => '/v1/_test/sleep?seconds=1');
ok sleeping(1), 'the first request holds the only connection';
my $second = start_request(GET => '/v1/_test/sleep?seconds=0.2');
ok wait_until(3, sub { (http(GET => '/v1/_test/pool')->{json} || {})->{pg}{queued} }),
    'the second request is queued';
ok quit_and_wait(), 'nginx quits';
for ([$first, 1], [$second, 0.2]) {
    my ($c, $s) = @$_;
    my $res = finish_request($c);
    is $res->{status}, 200, "the request of $s s is answered"
        or diag $res->{error} // $res->{body};
    is(($res->{json} || {})->{slept}, $s, "the request of $s s has its result");
}
my $opened;
wait_until(3, sub { $opened = sessions() - $before; $opened >= 1 });
cmp_ok $opened, '>=', 1, 'the connection was counted';
cmp_ok $opened, '<=', 2, "few connections opened ($opened): no churn while exiting";

done_testing();
