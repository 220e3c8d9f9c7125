# The PostgreSQL pool's bounds: max=2 busy connections, a queue of 2 that times out after
# 5 s with 503 service_unavailable, and a 503 at once past the queue. One worker, so
# every request meets the same pool. Each step waits (bounded) for the pool to be in the
# state the next one needs, never a fixed sleep.
use strict;
use warnings;
use Cms::Test;
use IO::Select ();

set_conf_defaults(workers => 1, pg_params => 'max=2 queue=2 queue_timeout=5s');
sub pg_pool { (http(GET => '/v1/_test/pool')->{json} || {})->{pg} || {} }
start_nginx();

my $h = http(GET => '/v1/health');
is $h->{status}, 200, 'health before' or diag $h->{body};

# the worker's first API request starts its schema check (one query of the pool's):
# made, and the pool idle again, before the pool is filled
is http(GET => '/v1/_test/sleep?seconds=0')->{status}, 200, 'a first request';
ok wait_until(5, sub { my $p = pg_pool(); ($p->{busy} // 1) == 0 && ($p->{queued} // 1) == 0 }),
    'the pool is idle';

# Occupy both connections.
my @sleeps = map { start_request(GET => '/v1/_test/sleep?seconds=8') } 1 .. 2;
# (a connecting slot counts as busy while its request still waits: both run
# once none waits)
ok wait_until(5, sub { my $p = pg_pool(); ($p->{busy} // 0) == 2 && ($p->{queued} // 1) == 0 }),
    'both connections are busy';

# Two fill the queue; the fifth, once they wait, finds it full.
my @q = map { start_request(GET => '/v1/_test/sleep?seconds=0') } 1 .. 2;
ok wait_until(4.5, sub { (pg_pool()->{queued} // 0) == 2 }), 'two wait in the queue';
my $past = http(GET => '/v1/_test/sleep?seconds=0');
# at once: answered while the two queued still wait (their sockets have nothing yet), so
# not at the queue's timeout
my @waiting = grep { !IO::Select->new($_->{sock})->can_read(0) } @q;
my @r = ((map { finish_request($_) } @q), $past);
# the queue timed out before a connection came free: the sleeps still hold both
my @held = grep { !IO::Select->new($_->{sock})->can_read(0) } @sleeps;
for my $i (0, 1) {
    my $r = $r[$i];
    is $r->{status}, 503, "queued request $i: 503" or diag $r->{body};
    is(($r->{json} || {})->{code}, 'service_unavailable', "queued request $i: code");
    cmp_ok $r->{elapsed}, '>=', 4.9, "queued request $i waited for the queue timeout";
}
is scalar(@held), 2,
    'the queued were answered while both sleeps still ran: at the queue timeout, not at a free connection';
is $r[2]{status}, 503, 'request past the queue: 503' or diag $r[2]{body};
is(($r[2]{json} || {})->{code}, 'service_unavailable', 'request past the queue: code');
is scalar(@waiting), 2, sprintf 'request past the queue is refused at once: both queued still waited (%.2f s)',
    $r[2]{elapsed};
like $r[2]{headers}{'content-type'} // '', qr{^application/json}, '503 is JSON';

for my $i (0, 1) {
    my $s = finish_request($sleeps[$i]);
    is $s->{status}, 200, "sleep $i: 200" or diag $s->{error} // $s->{body};
    is(($s->{json} || {})->{slept}, 8, "sleep $i: slept 8");
    cmp_ok $s->{elapsed}, '>=', 7.9, "sleep $i took its 8 s";
}

$h = http(GET => '/v1/health');
is $h->{status}, 200, 'health after' or diag $h->{body};
is_deeply $h->{json}, {postgres => 'ok', redis => 'ok'}, 'health body after';

# a connection is idle again once its last result is read, just after the answer
ok wait_until(5, sub { my $p = pg_pool(); ($p->{busy} // 1) == 0 && ($p->{queued} // 1) == 0 }),
    'none busy, none queued';
my $pool = http(GET => '/v1/_test/pool')->{json} || {};
is $pool->{pg}{max}, 2, 'pool max 2';
cmp_ok $pool->{pg}{connections} // 99, '<=', 2, 'at most 2 connections';

done_testing();
