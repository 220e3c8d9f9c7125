# The PostgreSQL pool's pipelining (cms_postgres depth=N): with no idle connection, a
# statement is sent behind those in flight on the least busy one, up to depth= of them,
# and waits there instead of in the pool's queue. Each statement is its own transaction:
# an error or a retry touches its own request alone; every answer goes to its own
# request, in order, also when a request in the middle has left; a backend ended under
# them answers every one in flight with 503, and the next statement gets a new
# connection. One worker and one connection, so that every statement meets the same
# pipeline; each step waits (bounded) for the pool's state, never a fixed sleep: the
# statement in front is /v1/_test/wait, whose function returns once the test lets it.
use strict;
use warnings;
use Cms::Test;

# the background jobs' statements (scheduled articles, events, ...) an hour apart: the
# counts below are the test's statements alone
set_conf_defaults(workers => 1, pg_params => 'max=1 depth=3 queue=8 queue_timeout=10s',
                  http_config => 'cms_events_interval 1h;');
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
# the statement in front: waits until let_go() puts a row in the gate
psql(<<'SQL');
CREATE TABLE cms_test_gate (open boolean);
CREATE FUNCTION cms_test_wait() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    WHILE NOT EXISTS (SELECT 1 FROM cms_test_gate) LOOP
        PERFORM pg_sleep(0.01);
    END LOOP;
    RETURN 'waited';
END $$;
SQL
sub hold {
    psql('DELETE FROM cms_test_gate');
    my $h = start_request(GET => '/v1/_test/wait');
    ok wait_until(10, sub { (pg_pool()->{busy} // 0) == 1 }), 'a statement holds the connection';
    return $h;
}
sub let_go {
    my ($h) = @_;
    psql('INSERT INTO cms_test_gate VALUES (true)');
    my $r = finish_request($h);
    is $r->{status}, 200, 'the statement in front: 200' or diag $r->{error} // $r->{body};
    is_deeply $r->{json}, {value => 'waited'}, '... its own answer';
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
my $slow = hold();
my @behind = map { sleep_req("0.0$_") } 1, 2;
behind(2);
is pg_pool()->{queued}, 0, '... none in the queue';
my @queued = map { sleep_req("0.0$_") } 3, 4;
ok wait_until(10, sub { (pg_pool()->{queued} // 0) == 2 }), 'past depth=3, two wait in the queue';
is pg_pool()->{connections}, 1, 'one connection (max=1)';
let_go($slow);
slept($behind[$_ - 1], "0.0$_", "behind it, number $_") for 1, 2;
slept($queued[$_ - 3], "0.0$_", "from the queue, number $_") for 3, 4;
ok idle(), 'the pool is idle again';

# --- an error is its statement's alone: refused once (40001) and not marked safe to
# retry, it is a 503 between two answered ones
pg_flaky('40001', 1000);
$slow = hold();
my $before = sleep_req('0.01');
behind(1);
my $refused = start_request(GET => '/v1/_test/flaky?once=1');
behind(2);
let_go($slow);
slept($before, 0.01, 'the one before the refused');
unavailable(finish_request($refused), 'the refused statement');
is pg_flaky_runs(), 1, '... run once';
my $after = sleep_req('0.02');
slept($after, 0.02, 'the next statement on the same connection');
ok idle(), 'idle';

# --- a retry goes behind those in flight, on the same connection: refused once, then
# answered
pg_flaky('40001', 2);
$slow = hold();
my $retried = start_request(GET => '/v1/_test/flaky');
behind(1);
$after = sleep_req('0.02');
behind(2);
let_go($slow);
my $r = finish_request($retried);
is $r->{status}, 200, 'the refused statement, run again: 200' or diag $r->{body};
is_deeply $r->{json}, {value => 'ok'}, '... the second run\'s answer';
is pg_flaky_runs(), 2, '... run twice';
slept($after, 0.02, 'the one sent after it');
ok idle(), 'idle';

# --- a statement's Parse that fails (its function is missing) with one of the same
# statement sent behind it without a Parse: that one is sent again with its own, and
# answered for what it is (503 schema_out_of_date), not as a statement that does not
# exist (a 500). A new connection, so that its first run carries the Parse.
# Three of them (depth=4): the two sent again are each parsed with it.
psql('DROP FUNCTION IF EXISTS cms_test_flaky()');
restart_nginx(pg_params => 'max=1 depth=4 queue=8 queue_timeout=10s');
is http(GET => '/v1/_test/sleep?seconds=0')->{status}, 200, 'a new connection';
ok idle(), 'idle';
my $poff = error_log_size();
$slow = hold();
my @missing = map { start_request(GET => '/v1/_test/flaky?once=1') } 1 .. 3;
behind(3);
let_go($slow);
for my $i (0 .. 2) {
    my $m = finish_request($missing[$i]);
    is $m->{status}, 500, "the missing function, statement $i: 500" or diag $m->{body};
}
is scalar(grep { /function cms_test_flaky\(\) does not exist/ } error_log_lines($poff)), 3,
    'all three failed on the missing function (each with its own Parse)';
ok !grep({ /prepared statement .* does not exist/ } error_log_lines($poff)),
    '... neither as a statement not prepared';
pg_flaky('40001', 1);
$r = http(GET => '/v1/_test/flaky?once=1');
is $r->{status}, 200, 'the function back: the statement parses and runs' or diag $r->{body};
ok idle(), 'idle';
restart_nginx();
is http(GET => '/v1/_test/sleep?seconds=0')->{status}, 200, 'depth=3 again';
ok idle(), 'idle';

# --- a request that leaves while its statement is in flight: the answers after it are
# still their own
$slow = hold();
my $gone = sleep_req('0.01');
behind(1);
my $last = sleep_req('0.02');
behind(2);
close $gone->{sock};
let_go($slow);
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

# --- a statement's query_timeout counts from when it was sent, not from when the one
# before it ended: 1.5 s for the module (1 s for the server's statement_timeout, which
# neither statement reaches), the first runs 0.8 s, the next 0.8 s after it
restart_nginx(pg_params => 'max=1 depth=3 query_timeout=1500ms');
is http(GET => '/v1/_test/sleep?seconds=0')->{status}, 200, 'query_timeout=1500ms: a first request';
ok idle(), 'idle';
$off = error_log_size();
my @two = map { sleep_req('0.8') } 1, 2;
behind(1);
slept($two[0], 0.8, 'the first, within its time');
$r = finish_request($two[1]);
unavailable($r, 'the one behind it, past its time since it was sent');
ok scalar(grep { /postgres timed out/ } error_log_lines($off)), '... the pool\'s own timeout';
slept(sleep_req('0.01'), 0.01, 'the next statement, on a new connection');

# --- depth=1 (the default): nothing is sent behind a statement in flight
restart_nginx(pg_params => 'max=1 queue=8 queue_timeout=10s');
is http(GET => '/v1/_test/sleep?seconds=0')->{status}, 200, 'depth=1: a first request';
ok idle(), 'idle';
$slow = hold();
$after = sleep_req('0.01');
ok wait_until(10, sub { (pg_pool()->{queued} // 0) == 1 }), 'depth=1: the next waits in the queue';
is pg_pool()->{pipelined}, 0, '... none sent behind it';
let_go($slow);
slept($after, 0.01, 'depth=1: the next');

# --- depth= is checked at load time
my $t = nginx_test(pg_params => 'max=1 depth=65');
isnt $t->{rc}, 0, 'depth=65 is refused by nginx -t';
like $t->{out}, qr/depth= is at most 64/, '... and says the bound';
$t = nginx_test(pg_params => 'max=1 depth=0');
isnt $t->{rc}, 0, 'depth=0 is refused';

done_testing();
