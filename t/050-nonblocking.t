# One worker keeps answering while a query runs for 2 s: the worker must never block on
# PostgreSQL. Pool max=4: the sleep holds one connection, 50 health checks share the others
# (queue=100 so that the queue's default size plays no part here).
use strict;
use warnings;
use Cms::Test;
use IO::Select ();

set_conf_defaults(workers => 1, pg_params => 'max=4 queue=100');
start_nginx();

is http(GET => '/v1/health')->{status}, 200, 'health before';

my $sleep = start_request(GET => '/v1/_test/sleep?seconds=2');
# the sleep is in PostgreSQL before the others arrive
ok wait_until(5, sub { psql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
                               AND state = 'active' AND query LIKE '%pg_sleep%'
                               AND pid <> pg_backend_pid()")->[0][0] == 1 }),
    'the sleep runs in PostgreSQL';

my @r = parallel_requests(map { [GET => '/v1/health'] } 1 .. 50);
my @ok = grep { $_->{status} == 200 } @r;
is scalar(@ok), 50, 'all 50 health checks answered 200'
    or diag join "\n", map { "$_->{status} " . ($_->{error} // $_->{body}) } grep { $_->{status} != 200 } @r;
my ($max) = sort { $b <=> $a } map { $_->{elapsed} } @r;
# a worker blocked on the sleep would answer them only after it: its answer is not there yet
ok !IO::Select->new($sleep->{sock})->can_read(0),
    sprintf('all 50 answered while the sleep still ran (slowest %.3f s)', $max);

my $s = finish_request($sleep);
is $s->{status}, 200, 'the sleep answered 200' or diag $s->{error} // $s->{body};
is_deeply $s->{json}, {slept => 2}, 'sleep body';
cmp_ok $s->{elapsed}, '>=', 1.9, sprintf('the sleep took %.2f s (>= 1.9)', $s->{elapsed});
# answered when PostgreSQL finished, not at query_timeout (10 s)
cmp_ok $s->{elapsed}, '<', 8, 'and not at the query timeout';

done_testing();
