# The server's refusals are answered 503 service_unavailable with Retry-After, never
# 500: a statement that ran into statement_timeout (57014, set by the module a little
# below query_timeout), a backend ended by pg_terminate_backend (57P01). A
# serialization failure or a deadlock (40001, 40P01) of a statement marked safe to
# retry is run once more by the pool; unmarked, or failing twice, it is a 503. An
# empty hostaddr element (libpq would resolve the host name, blocking) is refused by
# nginx -t.
use strict;
use warnings;
use Cms::Test;

sub unavailable {
    my ($r, $name) = @_;
    is $r->{status}, 503, "$name: 503" or diag $r->{error} // $r->{body};
    is(($r->{json} || {})->{code}, 'service_unavailable', "$name: code");
    like $r->{headers}{'retry-after'} // '', qr/^\d+$/, "$name: Retry-After";
}

# --- the statement timeout: 1500 ms for the module, 1000 ms for the server
start_nginx(workers => 1, pg_params => 'max=2 query_timeout=1500ms');

my $off = error_log_size();
my $r = http(GET => '/v1/_test/sleep?seconds=3');
unavailable($r, 'statement timeout');
# ours would have logged "postgres timed out" (and closed the connection)
ok !grep({ /postgres timed out/ } error_log_lines($off)),
    sprintf 'answered when the server gave up, before ours (%.2f s)', $r->{elapsed};
ok scalar(grep { /gave up on a statement: .*SQLSTATE 57014/ } error_log_lines($off)),
    'the cause is logged with its SQLSTATE';
ok !grep({ /answering 500/ } error_log_lines($off)), 'no 500 logged';

# The connection was sound: it is reused, not reopened.
$r = http(GET => '/v1/_test/sleep?seconds=0');
is $r->{status}, 200, 'next query: 200' or diag $r->{body};

# --- an administrator ends the backend in the middle of a query
restart_nginx(workers => 1, pg_params => 'max=2');
$off = error_log_size();
my $h = start_request(GET => '/v1/_test/sleep?seconds=8');
ok pg_end_sleeping(), 'the sleeping backend is seen and ended';
$r = finish_request($h);
unavailable($r, 'terminated backend');
# at query_timeout (10 s) the pool would have logged "postgres timed out"; the sleep (8 s)
# cannot end, its backend is gone
ok !grep({ /postgres timed out/ } error_log_lines($off)),
    sprintf 'answered when the backend ended, not at a timeout (%.2f s)', $r->{elapsed};
$r = http(GET => '/v1/_test/sleep?seconds=0');
is $r->{status}, 200, 'a new connection serves the next query' or diag $r->{body};

# --- serialization failures and deadlocks (pg_flaky(): Cms::Test)
for my $state (qw(40001 40P01)) {
    pg_flaky($state, 2);
    $off = error_log_size();
    $r = http(GET => '/v1/_test/flaky');
    is $r->{status}, 200, "$state on a statement safe to retry: 200" or diag $r->{body};
    is_deeply $r->{json}, {value => 'ok'}, "$state: the second run's answer";
    is pg_flaky_runs(), 2, "$state: run twice";
    ok scalar(grep { /SQLSTATE $state\), running it again/ } error_log_lines($off)),
        "$state: the retry is logged";

    pg_flaky($state, 2);
    $r = http(GET => '/v1/_test/flaky?once=1');
    unavailable($r, "$state on a statement not marked");
    is pg_flaky_runs(), 1, "$state: an unmarked statement runs once";
}

# Failing every time: one retry, then 503.
pg_flaky('40001', 1000);
$r = http(GET => '/v1/_test/flaky');
unavailable($r, 'a statement refused twice');
is pg_flaky_runs(), 2, 'retried once, not more';

# --- the session settings the module gives its connections: the statement timeout a
# little under query_timeout, and generic plans (planned once per connection, not at
# every execution), and the time settings whose text the module reads (ISO dates, UTC);
# a conninfo that names plan_cache_mode keeps its own, not its time settings
sub settings {
    psql(<<'SQL');
DROP FUNCTION IF EXISTS cms_test_flaky();
CREATE FUNCTION cms_test_flaky() RETURNS text LANGUAGE sql
    AS $$ SELECT current_setting('plan_cache_mode') || ' ' || current_setting('statement_timeout')
        || ' ' || current_setting('DateStyle') || ' ' || current_setting('TimeZone') $$;
SQL
    my $r = http(GET => '/v1/_test/flaky');
    return $r->{status} == 200 ? $r->{json}{value} : "status $r->{status}";
}
is settings(), 'force_generic_plan 9500ms ISO, YMD UTC',
    'the module: generic plans, statement_timeout 9.5 s (query_timeout 10 s), ISO dates in UTC';
restart_nginx(workers => 1, postgres => qq{cms_postgres "hostaddr=127.0.0.1 port=%%PG_PORT%% dbname=%%DB%%}
                                        . qq{ user=postgres options='-c plan_cache_mode=auto}
                                        . qq{ -c TimeZone=Europe/Berlin -c DateStyle=SQL,DMY'" max=2;});
is settings(), 'auto 9500ms ISO, YMD UTC',
    "plan_cache_mode in the conninfo wins; the time settings are the module's";

# a session whose time settings are not the module's (PGTZ in the workers' environment is
# sent after the options, and wins) is refused, and says why: times are written from
# their text, and would change silently
{
    my $off = error_log_size();
    allow_error_log("the session's TimeZone is");
    restart_nginx(workers => 1, main_config => 'env PGTZ=Europe/Berlin;');
    my $r = http(GET => '/v1/_test/flaky');
    is $r->{status}, 503, 'PGTZ set: no connection, 503';
    ok scalar(grep { /the session's TimeZone is "Europe\/Berlin" and DateStyle "ISO, YMD", not UTC/ }
                   error_log_lines($off)), '... and the log says why';
    restart_nginx(workers => 1);
    is settings(), 'force_generic_plan 9500ms ISO, YMD UTC', 'without it: connected again';
}

# --- an empty hostaddr element is refused at load time
for my $ha ('127.0.0.1,', ',127.0.0.1', '127.0.0.1,,127.0.0.1', '') {
    my $t = nginx_test(postgres => qq{cms_postgres "hostaddr='$ha' host=a,b,c}
                                   . qq{ port=%%PG_PORT%% dbname=%%DB%% user=postgres";});
    isnt $t->{rc}, 0, "hostaddr '$ha': nginx -t fails";
    like $t->{out}, qr/hostaddr=.* has an empty element/, "hostaddr '$ha': says why";
}

done_testing();
