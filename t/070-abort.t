# Clients that hang up mid-query must not leak or poison pool connections: 100 clients
# abort a 1 s query (4 running, the rest queued); shortly after, the pool is idle and
# within bounds, PostgreSQL has no more backends than the pool's max, and health is 200.
use strict;
use warnings;
use Cms::Test;

set_conf_defaults(workers => 1, pg_params => 'max=4 queue=200 queue_timeout=10s');
start_nginx();

is http(GET => '/v1/health')->{status}, 200, 'health before';

# the aborted queries end after their 1 s and the pool drains: wait for that (bounded)
sub drained {
    my $p = http(GET => '/v1/_test/pool')->{json} || {};
    return 0 if grep { ($p->{$_}{busy} // 1) || ($p->{$_}{queued} // 1) } qw(pg redis);
    return psql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
                   AND state = 'active' AND query LIKE '%pg_sleep%'
                   AND pid <> pg_backend_pid()")->[0][0] == 0;
}

sub pool_is_idle {
    my $what = shift;
    ok wait_until(15, \&drained), "$what: the pool drains (within 15 s)";
    my $pool = http(GET => '/v1/_test/pool');
    is $pool->{status}, 200, "$what: pool route" or return;
    my $p = $pool->{json} || {};
    diag "$what: pool " . JSON::PP->new->canonical->encode($p);
    for my $k (qw(pg redis)) {
        cmp_ok $p->{$k}{connections} // 99, '<=', $p->{$k}{max} // 4, "$what: $k connections within max";
        is $p->{$k}{busy}, 0, "$what: $k busy 0";
        is $p->{$k}{queued}, 0, "$what: $k queued 0";
    }
    my $rows = psql("SELECT count(*) FROM pg_stat_activity
                      WHERE datname = current_database() AND pid <> pg_backend_pid()");
    cmp_ok $rows->[0][0], '<=', 4, "$what: at most 4 backends on the database";
    $rows = psql("SELECT count(*) FROM pg_stat_activity
                   WHERE datname = current_database() AND state = 'active'
                     AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()");
    is $rows->[0][0], 0, "$what: no query still sleeping";
    my $h = http(GET => '/v1/health');
    is $h->{status}, 200, "$what: health 200" or diag $h->{body};
}

my $a = abort_requests(100, [GET => '/v1/_test/sleep?seconds=1'], 300);
is $a->{sent}, 100, 'sent 100 requests';
is $a->{answered}, 0, 'none answered before the abort';
pool_is_idle('after 100 aborts (FIN)');

# The same with a reset instead of an orderly close.
$a = abort_requests(50, [GET => '/v1/_test/sleep?seconds=1'], 300, rst => 1);
is $a->{sent}, 50, 'sent 50 requests';
pool_is_idle('after 50 aborts (RST)');

# The pool still works at full width.
my @r = parallel_requests(map { [GET => '/v1/_test/sleep?seconds=1'] } 1 .. 8);
is scalar(grep { $_->{status} == 200 } @r), 8, '8 queries through the pool afterwards'
    or diag join "\n", map { "$_->{status} " . ($_->{error} // $_->{body}) } @r;

done_testing();
