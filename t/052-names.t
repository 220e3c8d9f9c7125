# Host names for PostgreSQL and Redis (as containers and Kubernetes give them): cms_postgres
# "host=db.test ..." without hostaddr= and cms_redis cache.test:PORT are resolved through
# nginx's resolver (the http{} block's "resolver"), here a DNS server of this file's own on
# loopback (Cms::Dns), at every connect; libpq gets the address as hostaddr= with host=
# kept, and nothing asks the C library. nginx -t refuses a name without a resolver, and
# host= elements that are neither names nor addresses. Under light traffic (health checks,
# PostgreSQL and Redis both), both names are moved to a second PostgreSQL and a second
# Redis (on 127.0.0.2, same ports; the first ones on 127.0.0.1 stay up); the module
# follows them once its connections are dropped (pg_terminate_backend, CLIENT KILL) and
# the resolver's answer has expired (valid=1s): the new connections reach the second
# servers, a signup lands in the second database, error.log says where the names moved,
# and no request failed other than with 503 around the drops. strace on the worker, from
# before its first request to the end: every name lookup is a datagram to the test DNS
# server; no connect to port 53 elsewhere, no /etc/hosts, /etc/resolv.conf or nsswitch.
use strict;
use warnings;
use Cms::Test;
use Cms::Dns;
use Cms::Fixtures qw(signup diag_resp);
use File::Path qw(make_path);
use POSIX ();
use Time::HiRes ();

my ($bin) = grep { -x "$_/pg_ctl" } '/usr/lib/postgresql/15/bin', glob '/usr/lib/postgresql/*/bin';
plan skip_all => 'no PostgreSQL server binaries' unless $bin;

my $PG = $ENV{TEST_CMS_PG_PORT};
my $db = db_name();
my $dir = prefix() . '/names';
my $rport = free_port();
make_path($dir);
chmod 0755, $dir;
chown scalar(getpwnam('postgres')), -1, $dir if $> == 0;

my $dns = Cms::Dns->start(records => { 'db.test' => ['127.0.0.1'], 'cache.test' => ['127.0.0.1'] });
# no resolver_timeout: nginx's default (30 s) holds for the module too
my $RESOLVER = 'resolver 127.0.0.1:' . $dns->port . ' valid=1s;';
my $PGLINE = qq{cms_postgres "host=db.test port=$PG dbname=$db user=postgres"}
           . q{ max=2 connect_timeout=2s query_timeout=3s queue_timeout=3s;};
my $RLINE = "cms_redis cache.test:$rport max=2 timeout=2s;";

# --- two Redis servers on one port: 127.0.0.1 (A) and 127.0.0.2 (B) ----------------------
my %redis;
for my $ip ('127.0.0.1', '127.0.0.2') {
    make_path("$dir/redis-$ip");
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', "$dir/redis-$ip.log";
        open STDERR, '>&', \*STDOUT;
        exec 'redis-server', '--bind', $ip, '--port', $rport, '--dir', "$dir/redis-$ip",
             '--daemonize', 'no', '--save', '', '--appendonly', 'no'
            or POSIX::_exit(127);
    }
    $redis{$ip} = $pid;
}
my $pgb_up;
END {
    kill 'TERM', values %redis;
    waitpid $_, 0 for values %redis;
    as_postgres("$bin/pg_ctl", '-D', "$dir/pgb", '-m', 'immediate', '-w', 'stop') if $pgb_up;
}
sub rcli {
    my ($ip, @cmd) = @_;
    my $pid = open my $fh, '-|' // die "fork: $!";
    if (!$pid) {
        open STDERR, '>', '/dev/null';
        exec 'redis-cli', '-h', $ip, '-p', $rport, @cmd or POSIX::_exit(127);
    }
    local $/;
    my $out = <$fh> // '';
    close $fh;
    return $out;
}
# clients other than the asking redis-cli
sub redis_clients { scalar grep { !/cmd=client/ } grep { /\S/ } split /\n/, rcli($_[0], 'CLIENT', 'LIST') }
for my $ip (sort keys %redis) {
    ok wait_until(10, sub { rcli($ip, 'PING') =~ /PONG/ }), "redis $ip:$rport runs";
}

# --- a second PostgreSQL on 127.0.0.2 (same port), with the file's database migrated ------
my ($rc, $out) = as_postgres("$bin/initdb", '-D', "$dir/pgb", '-A', 'trust', '-U', 'postgres',
                             '-E', 'UTF8', '--locale=C', '--no-sync');
die "initdb: $out" if $rc;
open my $conf, '>>', "$dir/pgb/postgresql.conf" or die;
print $conf "listen_addresses = '127.0.0.2'\nport = $PG\nunix_socket_directories = '$dir'\n"
    . "fsync = off\n";
close $conf;
($rc, $out) = as_postgres("$bin/pg_ctl", '-D', "$dir/pgb", '-l', "$dir/pgb.log", '-w', '-t', '30',
                          'start');
die "pg_ctl start: $out" if $rc;
$pgb_up = 1;
sub q_b {
    my ($sql, $d) = @_;
    my $o = `psql -X -q -At -h 127.0.0.2 -p $PG -U postgres -d @{[ $d // $db ]} -c "$sql" 2>&1`;
    chomp $o;
    return $o;
}
q_b(qq{CREATE DATABASE "$db"}, 'postgres');
is system("$ENV{TEST_CMS_ROOT}/scripts/migrate.sh"
          . " 'hostaddr=127.0.0.2 port=$PG dbname=$db user=postgres' >/dev/null") >> 8, 0,
    'the second PostgreSQL has the database, migrated';
my $MINE = "datname = current_database() AND application_name = 'ngx_http_cms'";

# --- nginx -t ------------------------------------------------------------------------------
my $t = nginx_test(postgres => $PGLINE);
isnt $t->{rc}, 0, 'nginx -t refuses host=db.test without a resolver';
like $t->{out}, qr/cms_postgres: "db\.test" is a host name, resolved through nginx's resolver at run time, and the http\{\} block has no "resolver" directive/,
    '... saying why' or diag $t->{out};
$t = nginx_test(redis => $RLINE);
isnt $t->{rc}, 0, 'nginx -t refuses cms_redis cache.test:PORT without a resolver';
like $t->{out}, qr/cms_redis: "cache\.test" is a host name.*no "resolver"/, '... saying why';
is nginx_test(postgres => $PGLINE, redis => $RLINE, http_config => $RESOLVER)->{rc}, 0,
    'nginx -t takes both names with a resolver';
is nginx_test(postgres => qq{cms_postgres "host=127.0.0.1 port=$PG dbname=$db user=postgres";})->{rc},
    0, 'an IP address in host= needs no resolver';
for my $case ([qq{cms_postgres "host=db.test,/tmp port=$PG dbname=$db user=postgres";},
               qr/"host=db\.test,\/tmp": each element must be a host name or an IP address/],
              [qq{cms_postgres "host=db.test,,db2.test port=$PG dbname=$db user=postgres";},
               qr/each element must be a host name or an IP address/],
              [qq{cms_postgres "port=$PG dbname=$db user=postgres";},
               qr/use "host=" with host names or IP addresses/],
              ['cms_redis cache.test:0;', qr/"cache\.test:0" is not an IP address, or a host name, with a port/],
              ['cms_redis cache.test;', qr/"cache\.test" is not an IP address, or a host name, with a port/],
              ['cms_redis cache/test:6379;', qr/is not an IP address, or a host name/]) {
    my $k = $case->[0] =~ /^cms_redis/ ? 'redis' : 'postgres';
    $t = nginx_test($k => $case->[0], http_config => $RESOLVER);
    isnt $t->{rc}, 0, "nginx -t refuses $case->[0]";
    like $t->{out}, $case->[1], '... saying why' or diag $t->{out};
}

# --- through the names ---------------------------------------------------------------------
start_nginx(workers => 1, postgres => $PGLINE, redis => $RLINE, http_config => $RESOLVER);
my ($worker) = worker_pids();

# strace on the worker from before its first request: what it connects to and opens
my $trace = prefix() . '/strace.out';
my $have_strace = grep { -x "$_/strace" } split /:/, $ENV{PATH};
my $spid;
if ($have_strace) {
    $spid = fork // die "fork: $!";
    if (!$spid) {
        open STDERR, '>', "$trace.err";
        exec 'strace', '-f', '-e', 'trace=connect,open,openat', '-o', $trace, '-p', $worker
            or POSIX::_exit(127);
    }
    # the file appears once strace runs: until then there is nothing to read
    wait_until(10, sub { open(my $fh, '<', "$trace.err") or return 0; local $/;
                         (<$fh> // '') =~ /attached/ })
        or do { kill 'TERM', $spid; waitpid $spid, 0; $spid = undef };
}

my $h = http(GET => '/v1/health');
is $h->{status}, 200, 'health through the names: 200' or diag $h->{body};
is_deeply $h->{json}, { postgres => 'ok', redis => 'ok' }, 'both ok';
my $u = signup();
ok $u->{token}, 'a signup (PostgreSQL and the thread pool) through host=db.test';
is psql("SELECT count(*) FROM users WHERE email = '$u->{email}'")->[0][0], 1,
    '... in the first database';
is http(GET => '/v1/_test/redis?key=names')->{status}, 200, 'a Redis read through cache.test';
cmp_ok $dns->queries('db.test'), '>=', 1, 'the resolver asked the test DNS server for db.test';
cmp_ok $dns->queries('cache.test'), '>=', 1, '... and for cache.test';
cmp_ok psql("SELECT count(*) FROM pg_stat_activity WHERE $MINE")->[0][0], '>=', 1,
    'the module is connected to the first PostgreSQL';
cmp_ok redis_clients('127.0.0.1'), '>=', 1, '... and to the first Redis';
ok((grep { /\[info\].*cms: postgres host "db\.test" is at 127\.0\.0\.1\b/ } error_log_lines()),
   'error.log: postgres host "db.test" is at 127.0.0.1');
ok((grep { /\[info\].*cms: redis host "cache\.test" is at 127\.0\.0\.1:$rport/ } error_log_lines()),
   'error.log: redis host "cache.test" is at 127.0.0.1:PORT');

# --- the names move under light traffic ----------------------------------------------------
my $log = prefix() . '/traffic.log';
my $stop = prefix() . '/traffic.stop';
my $kid = fork // die "fork: $!";
if (!$kid) {
    open my $fh, '>', $log or POSIX::_exit(1);
    $fh->autoflush(1);
    until (-e $stop) {
        my $t0 = Time::HiRes::time();
        my $r = eval { http(GET => '/v1/health', undef, undef, timeout => 25) } || { status => 0 };
        printf $fh "%.3f %.3f %d\n", $t0, Time::HiRes::time(), $r->{status};
        Time::HiRes::sleep(0.05);
    }
    POSIX::_exit(0);
}
ok wait_until(10, sub { -s $log }), 'traffic flows';

$dns->set('db.test' => ['127.0.0.2'], 'cache.test' => ['127.0.0.2']);
my $moved_at = Time::HiRes::time();
# drop the module's connections to the first servers until the new ones reach the second
# and none is back on the first (a reconnect within the resolver's valid=1s still gets the
# old answer, and the old servers still answer; the pool may hold more than one connection)
my $followed = wait_until(20, sub {
    psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE $MINE");
    rcli('127.0.0.1', 'CLIENT', 'KILL', 'TYPE', 'normal');
    Time::HiRes::sleep(0.2);
    q_b("SELECT count(*) FROM pg_stat_activity WHERE $MINE") >= 1 && redis_clients('127.0.0.2') >= 1
        && psql("SELECT count(*) FROM pg_stat_activity WHERE $MINE")->[0][0] == 0;
});
my $followed_at = Time::HiRes::time();
ok $followed, sprintf 'the module followed both names to the second servers (%.1f s)',
    $followed_at - $moved_at;
ok wait_until(10, sub {
    grep { (split)[0] > $followed_at && (split)[2] == 200 } do { open my $in, '<', $log; <$in> }
}), 'health checks answer 200 again';
open my $sf, '>', $stop or die;
close $sf;
waitpid $kid, 0;

my @rows = map { [split] } do { open my $in, '<', $log; <$in> };
my @bad = grep { $_->[2] != 200 && $_->[2] != 503 } @rows;
is scalar(@bad), 0, sprintf('%d health checks under the move: each 200 or 503', scalar @rows)
    or diag join '', map { "@$_\n" } @bad;
my ($slow) = sort { $b <=> $a } map { $_->[1] - $_->[0] } @rows;
# the pool's timeouts are 2 s and 3 s (a check may meet more than one); the bound only says
# none hung (nginx's resolver_timeout is 30 s), under the client's own 25 s
cmp_ok $slow, '<', 20, sprintf 'none waited past the timeouts (slowest %.2f s)', $slow;
my @late = grep { $_->[0] > $followed_at + 0.5 && $_->[2] != 200 } @rows;
is scalar(@late), 0, 'once followed, every check is 200' or diag join '', map { "@$_\n" } @late;

my $v = signup();
is q_b("SELECT count(*) FROM users WHERE email = '$v->{email}'"), 1,
    'a signup now lands in the second database';
is psql("SELECT count(*) FROM users WHERE email = '$v->{email}'")->[0][0], 0, '... not the first';
is http(GET => '/v1/_test/redis?key=moved')->{status}, 200, 'a Redis read: 200';
ok((grep { /\[notice\].*cms: postgres host "db\.test" moved to 127\.0\.0\.2\b/ } error_log_lines()),
   'error.log: postgres host "db.test" moved to 127.0.0.2');
ok((grep { /\[notice\].*cms: redis host "cache\.test" moved to 127\.0\.0\.2:$rport/ } error_log_lines()),
   'error.log: redis host "cache.test" moved to 127.0.0.2:PORT');
allow_error_log(qr/terminating connection|connection lost|closed the connection|closed an idle|server closed|redis|postgres|answering 50[03]|rate limit falls back/);

# --- what the worker did ------------------------------------------------------------------
SKIP: {
    skip 'strace is not installed or cannot attach to the worker', 5 unless $spid;
    kill 'INT', $spid;
    waitpid $spid, 0;
    my @lines = do { open my $in, '<', $trace or die "$trace: $!"; <$in> };
    my @connects = grep { /\bconnect\(/ } @lines;
    my $dport = $dns->port;
    ok((grep { /sin_port=htons\($dport\).*inet_addr\("127\.0\.0\.1"\)/ } @connects),
       'the resolver talks to the test DNS server') or diag join '', @connects;
    is scalar(grep { /htons\(53\)/ } @connects), 0, 'no connect to port 53';
    is scalar(grep { /sun_path=/ } @connects), 0, 'no unix socket (nscd) connect';
    is scalar(grep { m{"/etc/(hosts|resolv\.conf|nsswitch\.conf|gai\.conf|host\.conf)"} } @lines), 0,
        'no /etc/hosts, /etc/resolv.conf or nsswitch.conf read: no C library lookup';
    my %to = map { /sin_port=htons\((\d+)\).*inet_addr\("([\d.]+)"\)/ ? ("$2:$1" => 1) : () } @connects;
    ok $to{"127.0.0.2:$PG"} && $to{"127.0.0.2:$rport"},
        'the worker connected to the second servers itself' or diag join ' ', sort keys %to;
}

done_testing();
