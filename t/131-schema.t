# The database's schema against the module's (issue 33, src/ngx_http_cms_schema.h,
# docs/operations.md "Health and readiness"):
# - current: /v1/health/ready 200 (status ok, schema current, the versions named),
#   /v1/health/live 200;
# - behind (the newest migration's record removed, as when a new module meets an old
#   database): readiness 503 with Retry-After at once (it asks the database itself); after
#   a restart, every API family 503 schema_out_of_date with Retry-After on every worker
#   (each asks at its start), never a 500; liveness, the old /v1/health and the docs still
#   answer; one [error] line per worker naming both versions; the record back: ready at
#   once, and the API answers again on every worker within its next look (5 s while
#   behind);
# - an empty database (nothing migrated): from the first request on, no 500 (a query on a
#   relation the database lacks is 503 schema_out_of_date too, before the worker's first
#   answer), then readiness says "none" applied;
# - cms-admin migrate: --check lists what is pending (exit 1); three runs at once against
#   the empty database apply each migration once (the advisory lock); the running host is
#   then ready and serves within its next look; scripts/migrate.sh takes the same lock (two of
#   it and a cms-admin at once apply each migration once);
# - Redis stopped: readiness still 200, status "degraded".
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req check_err one signup workspace key);
use POSIX ();

my ($newest) = map { m{([^/]+)\.sql$} } (sort glob("$ENV{TEST_CMS_ROOT}/sql/[0-9][0-9][0-9][0-9]_*.sql"))[-1];

start_nginx(workers => 2);
my $owner = signup();
my $wid = workspace($owner->{token}, 'Schema');
my $K = key($owner->{token}, $wid, 'schema', 'articles:read', 'articles:write');

my $r = http(GET => '/v1/health/ready');
is $r->{status}, 200, 'current: ready 200';
my ($version) = do { open my $fh, "<", "$ENV{TEST_CMS_ROOT}/VERSION" or die $!; <$fh> } =~ /(\S+)/;
is_deeply $r->{json}, { status => 'ok', postgres => 'ok', redis => 'ok', schema => 'current',
                        schema_version => $newest, schema_needed => $newest,
                        version => $version },
    '... status ok, the schema current, both versions named, the release (VERSION)';
$r = http(GET => '/v1/health/live');
is $r->{status}, 200, 'live 200';
is_deeply $r->{json}, { status => 'ok' }, '... {"status":"ok"}';

# --- behind ----------------------------------------------------------------------------------
my $off = error_log_size();
Cms::Test::psql("DELETE FROM schema_migrations WHERE version = '$newest'");
(my $prev = one('SELECT max(version) FROM schema_migrations')) =~ s/\s+$//;
$r = http(GET => '/v1/health/ready');
is $r->{status}, 503, 'behind: ready 503 (it asks the database itself)';
is $r->{headers}{'retry-after'}, '5', '... Retry-After: 5';
is_deeply [@{$r->{json} // {}}{qw(status postgres schema schema_version schema_needed)}],
    ['unavailable', 'ok', 'out_of_date', $prev, $newest], '... out_of_date, both versions named';

# a worker asks at its start (then every minute while current)
restart_nginx(workers => 2);
my @api = ([GET => '/v1/api/articles', [Authorization => "Bearer $K"]],
           [GET => "/v1/workspaces/$wid/articles", [Authorization => "Bearer $owner->{token}"]],
           [POST => '/v1/auth/signup', ['Content-Type' => 'application/json'],
            '{"email":"late@example.com","password":"correct horse battery"}'],
           [GET => '/v1/extensions', [Authorization => "Bearer $K"]]);
# every worker has found it behind (its [error] line): a worker's very first request goes on
# while its question is in flight, so 503s alone do not say a worker that has not been asked yet
my $behind_everywhere = sub {
    my %seen = map { $_ => 0 } Cms::Test::worker_pids();
    for (error_log_lines()) {
        $seen{$1}++ if /\[error\] (\d+)#\d+: cms: the database's schema is at "\Q$prev\E"/ && exists $seen{$1};
    }
    return %seen && !grep { !$_ } values %seen;
};
my $all;
ok wait_until(20, sub {
        $all = [map { my $a = $_; [map { http(@$a)->{status} } 1 .. 4] } @api];
        $behind_everywhere->() && !grep { $_ != 503 } map { @$_ } @$all;
    }), 'behind: every API family answers 503 on every worker after a restart'
    or diag explain $all;
for my $a (@api) {
    my $x = http(@$a);
    if ($a->[1] =~ m{^/v1/extensions}) {
        is $x->{status}, 503, "$a->[0] $a->[1]: 503 in the extension shape";
        is(($x->{json} // {})->{error}{type}, 'service_unavailable', '... type service_unavailable');
    } else {
        check_err($x, 503, 'schema_out_of_date', "$a->[0] $a->[1]");
    }
    is $x->{headers}{'retry-after'}, '1', '... with Retry-After';
}
is http(GET => '/v1/health/live')->{status}, 200, 'behind: live still 200';
is http(GET => '/v1/health')->{status}, 200, 'behind: /v1/health (both reachable) still 200';
is http(GET => '/v1/openapi.json')->{status}, 200, 'behind: the OpenAPI document still served';
my %per = map { $_ => 0 } Cms::Test::worker_pids();
for (error_log_lines()) {
    $per{$1}++ if /\[error\] (\d+)#\d+: cms: the database's schema is at "\Q$prev\E", this module needs "\Q$newest\E".*cms-admin migrate/
                  && exists $per{$1};
}
is_deeply [sort values %per], [1, 1], 'one [error] line per worker names both versions and the fix'
    or diag join "\n", error_log_lines();
ok !grep({ /\[error\].*(query failed|answering 503)/ } error_log_lines()),
    'no query failed, no line per request';

Cms::Test::psql("INSERT INTO schema_migrations (version) VALUES ('$newest')");
is http(GET => '/v1/health/ready')->{status}, 200, 'migrated again: ready 200';
ok wait_until(20, sub { !grep { $_ != 200 } map { http(GET => '/v1/api/articles', [Authorization => "Bearer $K"])->{status} } 1 .. 4 }),
    '... and the API answers on every worker';

# --- Redis stopped: degraded, still ready --------------------------------------------------
start_nginx(workers => 1, redis => 'cms_redis 127.0.0.1:' . free_port() . ' timeout=1s;');
$r = http(GET => '/v1/health/ready');
is $r->{status}, 200, 'Redis unreachable: ready still 200';
is_deeply [@{$r->{json} // {}}{qw(status redis schema)}], ['degraded', 'degraded', 'current'],
    '... status degraded, redis degraded';
$r = http(GET => '/v1/health');
is $r->{status}, 503, '... /v1/health (every dependency) 503';
is $r->{headers}{'retry-after'}, '5', '... with Retry-After: 5';

# --- an empty database ---------------------------------------------------------------------
my $empty = "cms_empty_$$";
Cms::Test::psql_admin(qq{CREATE DATABASE "$empty"});
start_nginx(workers => 1, postgres => qq{cms_postgres "hostaddr=127.0.0.1 port=$ENV{TEST_CMS_PG_PORT}}
                                      . qq{ dbname=$empty user=postgres" max=4;});
my @statuses = map { http(@$_)->{status} } @api, @api;
ok !grep({ $_ >= 500 && $_ != 503 } @statuses), 'empty database: no 500 from the first request on ('
    . join(' ', @statuses) . ')';
$r = http(GET => '/v1/health/ready');
is $r->{status}, 503, 'empty database: ready 503';
is_deeply [@{$r->{json} // {}}{qw(postgres schema schema_version)}], ['ok', 'out_of_date', ''],
    '... postgres ok, nothing applied';
check_err(http(@{$api[2]}), 503, 'schema_out_of_date', 'empty database: signup');
ok scalar(grep { /cms: the database's schema is at "none"/ } error_log_lines()),
    '... the log says none is applied';

# --- cms-admin migrate: three hosts at once apply each migration once ----------------------
my $admin = $ENV{TEST_CMS_ADMIN} or die 'TEST_CMS_ADMIN is not set';
my $conn = "hostaddr=127.0.0.1 port=$ENV{TEST_CMS_PG_PORT} dbname=$empty user=postgres";
my @files = glob("$ENV{TEST_CMS_ROOT}/sql/[0-9][0-9][0-9][0-9]_*.sql");
my $check = `$admin --db '$conn' migrate --check 2>&1`;
is $? >> 8, 1, 'migrate --check on the empty database: exit 1';
is scalar(() = $check =~ /^\d{4}_\w+$/mg), scalar(@files), '... every migration listed as pending';
my @kids = map {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDERR, '>', Cms::Test::prefix() . "/migrate-$_.log" or POSIX::_exit(2);
        exec $admin, '--db', $conn, 'migrate' or POSIX::_exit(2);
    }
    $pid;
} 1 .. 3;
my @exits = map { waitpid($_, 0); $? >> 8 } @kids;
is_deeply \@exits, [0, 0, 0], 'three cms-admin migrate at once: each exits 0';
my $applied = 0;
for (1 .. 3) {
    open my $fh, '<', Cms::Test::prefix() . "/migrate-$_.log" or die $!;
    local $/;
    ($applied += $1) if <$fh> =~ /migrate: (\d+) applied/;
}
is $applied, scalar(@files), '... the migrations applied once in all (' . scalar(@files) . ')';
my $rows = `psql -X -At -h 127.0.0.1 -p $ENV{TEST_CMS_PG_PORT} -U postgres -d $empty -c 'SELECT count(*), count(DISTINCT version) FROM schema_migrations'`;
is $rows, scalar(@files) . '|' . scalar(@files) . "\n", '... each recorded once';
$check = `$admin --db '$conn' migrate --check 2>&1`;
is $? >> 8, 0, 'migrate --check afterwards: exit 0';
is $check, '', '... nothing pending';
ok wait_until(20, sub { http(GET => '/v1/health/ready')->{status} == 200 }),
    'migrated: the running host is ready';
ok wait_until(20, sub { http(@{$api[2]})->{status} == 201 }), '... and signs up (201) within its next look';
stop_nginx();
Cms::Test::psql_admin(qq{DROP DATABASE "$empty" WITH (FORCE)});

# --- scripts/migrate.sh takes the same lock: two of it and a cms-admin at once ------------
my $empty2 = "${empty}_sh";
Cms::Test::psql_admin(qq{CREATE DATABASE "$empty2"});
my $conn2 = "hostaddr=127.0.0.1 port=$ENV{TEST_CMS_PG_PORT} dbname=$empty2 user=postgres";
my @runs = (["$ENV{TEST_CMS_ROOT}/scripts/migrate.sh", $conn2],
            ["$ENV{TEST_CMS_ROOT}/scripts/migrate.sh", $conn2],
            [$admin, '--db', $conn2, 'migrate']);
@kids = map {
    my $n = $_;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDERR, '>', Cms::Test::prefix() . "/migrate-sh-$n.log" or POSIX::_exit(2);
        exec @{$runs[$n]} or POSIX::_exit(2);
    }
    $pid;
} 0 .. 2;
@exits = map { waitpid($_, 0); $? >> 8 } @kids;
is_deeply \@exits, [0, 0, 0], 'two scripts/migrate.sh and a cms-admin migrate at once: each exits 0';
$applied = 0;
for (0 .. 2) {
    open my $fh, '<', Cms::Test::prefix() . "/migrate-sh-$_.log" or die $!;
    local $/;
    ($applied += $1) if <$fh> =~ /migrate: (\d+) applied/;
}
is $applied, scalar(@files), '... the migrations applied once in all';
$rows = `psql -X -At -h 127.0.0.1 -p $ENV{TEST_CMS_PG_PORT} -U postgres -d $empty2 -c 'SELECT count(*), count(DISTINCT version) FROM schema_migrations'`;
is $rows, scalar(@files) . '|' . scalar(@files) . "\n", '... each recorded once';
Cms::Test::psql_admin(qq{DROP DATABASE "$empty2" WITH (FORCE)});

done_testing();
