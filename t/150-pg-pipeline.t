# The PostgreSQL pool's pipelining (cms_postgres depth=N): with no idle connection, a
# statement is sent behind those in flight on the least busy one, up to depth= of them,
# and waits there instead of in the pool's queue. Each statement is its own transaction:
# an error or a retry touches its own request alone; every answer goes to its own
# request, in order, also when a request in the middle has left; a backend ended under
# them answers every one in flight with 503, and the next statement gets a new
# connection. One worker and one connection, so that every statement meets the same
# pipeline; each step waits (bounded) for the pool's state, never a fixed sleep.
use strict;
use warnings;
use Cms::Test;

set_conf_defaults(workers => 1, pg_params => 'max=1 depth=3 queue=2 queue_timeout=10s');
sub pg_pool { (http(GET => '/v1/_test/pool')->{json} || {})->{pg} || {} }
sub idle { wait_until(10, sub { my $p = pg_pool(); ($p->{busy} // 1) == 0 && ($p->{queued} // 1) == 0 }) }
sub sleep_req { start_request(GET => "/v1/_test/sleep?seconds=$_[0]") }
sub slept {
    my ($h, $want, $name) = @_;
    my $r = finish_request($h);
    is $r->{status}, 200, "$name: 200" or diag $r->{error} // $r->{body};
    is(($r->{json} || {})->{slept}, $want, "$name: its own answer ($want)");
}
sub unavailable {
    my ($r, $name) = @_;
    is $r->{status}, 503, "$name: 503" or diag $r->{error} // $r->{body};
    is(($r->{json} || {})->{code}, 'service_unavailable', "$name: code");
}
# a statement that holds the one connection, and $n sent behind it
sub behind {
    my ($n) = @_;
    ok wait_until(10, sub { my $p = pg_pool(); ($p->{pipelined} // 0) == $n && ($p->{busy} // 0) == 1 }),
        "$n sent behind it on the one connection";
}

start_nginx();
is http(GET => '/v1/_test/sleep?seconds=0')->{status}, 200, 'a first request';
ok idle(), 'the pool is idle';

# --- depth=3: two behind the first, the next two in the queue; every answer its own
my $slow = sleep_req('1.5');
ok wait_until(10, sub { (pg_pool()->{busy} // 0) == 1 }), 'a long statement holds the connection';
my @behind = map { sleep_req("0.0$_") } 1, 2;
behind(2);
is pg_pool()->{queued}, 0, '... none in the queue';
my @queued = map { sleep_req("0.0$_") } 3, 4;
ok wait_until(10, sub { (pg_pool()->{queued} // 0) == 2 }), 'past depth=3, two wait in the queue';
is pg_pool()->{connections}, 1, 'one connection (max=1)';
slept($slow, 1.5, 'the first');
slept($behind[$_ - 1], "0.0$_", "behind it, number $_") for 1, 2;
slept($queued[$_ - 3], "0.0$_", "from the queue, number $_") for 3, 4;
ok idle(), 'the pool is idle again';

# --- an error is its statement's alone: refused once (40001) and not marked safe to
# retry, it is a 503 between two answered ones
pg_flaky('40001', 1000);
$slow = sleep_req('0.5');
ok wait_until(10, sub { (pg_pool()->{busy} // 0) == 1 }), 'a statement holds the connection';
my $before = sleep_req('0.01');
behind(1);
my $refused = start_request(GET => '/v1/_test/flaky?once=1');
behind(2);
slept($slow, 0.5, 'the first');
slept($before, 0.01, 'the one before the refused');
unavailable(finish_request($refused), 'the refused statement');
is pg_flaky_runs(), 1, '... run once';
my $after = sleep_req('0.02');
slept($after, 0.02, 'the next statement on the same connection');
ok idle(), 'idle';

# --- a retry goes behind those in flight, on the same connection: refused once, then
# answered
pg_flaky('40001', 2);
$slow = sleep_req('0.5');
ok wait_until(10, sub { (pg_pool()->{busy} // 0) == 1 }), 'a statement holds the connection';
my $retried = start_request(GET => '/v1/_test/flaky');
behind(1);
$after = sleep_req('0.02');
behind(2);
slept($slow, 0.5, 'the first');
my $r = finish_request($retried);
is $r->{status}, 200, 'the refused statement, run again: 200' or diag $r->{body};
is_deeply $r->{json}, {value => 'ok'}, '... the second run\'s answer';
is pg_flaky_runs(), 2, '... run twice';
slept($after, 0.02, 'the one sent after it');
ok idle(), 'idle';

# --- a request that leaves while its statement is in flight: the answers after it are
# still their own
$slow = sleep_req('0.5');
ok wait_until(10, sub { (pg_pool()->{busy} // 0) == 1 }), 'a statement holds the connection';
my $gone = sleep_req('0.01');
behind(1);
my $last = sleep_req('0.02');
behind(2);
close $gone->{sock};
slept($slow, 0.5, 'the first');
slept($last, 0.02, 'the one after the request that left');
ok idle(), 'the pool is idle again';
slept(sleep_req('0.03'), 0.03, 'the next request');
is pg_pool()->{connections}, 1, '... on the same connection';

# --- the backend ended under three statements: all three 503, at once; a new
# connection serves the next
my $off = error_log_size();
my @three = map { sleep_req($_) } qw(8 0.01 0.02);
behind(2);
ok pg_end_sleeping(), 'the sleeping backend is seen and ended';
my @ended = map { finish_request($_) } @three;
unavailable($ended[$_], "statement $_ of three on the ended backend") for 0 .. 2;
ok $ended[0]{elapsed} < 7, sprintf 'answered when the backend ended (%.2f s)', $ended[0]{elapsed};
slept(sleep_req('0.01'), 0.01, 'the next statement, on a new connection');
ok !grep({ /postgres timed out/ } error_log_lines($off)), 'no timeout';

# --- depth=1 (the default): nothing is sent behind a statement in flight
restart_nginx(workers => 1, pg_params => 'max=1 queue=2 queue_timeout=10s');
is http(GET => '/v1/_test/sleep?seconds=0')->{status}, 200, 'depth=1: a first request';
ok idle(), 'idle';
$slow = sleep_req('0.5');
ok wait_until(10, sub { (pg_pool()->{busy} // 0) == 1 }), 'depth=1: a statement holds the connection';
$after = sleep_req('0.01');
ok wait_until(10, sub { (pg_pool()->{queued} // 0) == 1 }), 'depth=1: the next waits in the queue';
is pg_pool()->{pipelined}, 0, '... none sent behind it';
slept($slow, 0.5, 'depth=1: the first');
slept($after, 0.01, 'depth=1: the next');

# --- depth= is checked at load time
my $t = nginx_test(pg_params => 'max=1 depth=65');
isnt $t->{rc}, 0, 'depth=65 is refused by nginx -t';
like $t->{out}, qr/depth= is at most 64/, '... and says the bound';
$t = nginx_test(pg_params => 'max=1 depth=0');
isnt $t->{rc}, 0, 'depth=0 is refused';

done_testing();
