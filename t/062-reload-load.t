# Reload and quit under load lose nothing (issue 10, found 1). Clients with keep-alive
# off run a PostgreSQL-bound route (health asks PostgreSQL and Redis; a short
# pg_sleep), a Redis-bound one and a thread-pool-bound one (login: the password hash)
# while the master gets five HUPs: every request is answered 2xx. Then requests wait
# on each of the three at once (Redis paused by CLIENT PAUSE, a query in pg_sleep, a
# hash running) and the master gets QUIT: each is answered before the worker exits.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(signup);
use JSON::PP ();
use IO::Socket::INET ();
use POSIX ();
use Time::HiRes ();

my $JSON = JSON::PP->new->utf8->canonical;

start_nginx(workers => 1);
my $user = signup();
my $login = $JSON->encode({ email => $user->{email}, password => $user->{password} });
my @routes = (
    [ GET => '/v1/health' ],
    [ GET => '/v1/_test/sleep?seconds=0.02' ],
    [ GET => '/v1/_test/redis?key=relpool' ],
    [ POST => '/v1/auth/login', ['Content-Type' => 'application/json'], $login ],
);
for my $rt (@routes) {
    my $r = http(@$rt);
    is $r->{status}, 200, "$rt->[0] $rt->[1] answers before the load" or diag $r->{body};
}

# --- the load: one client per route, each with its own results file
my $stop = prefix() . '/load.stop';
my @kids;
for my $i (0 .. $#routes) {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        my ($n, @bad) = (0);
        until (-e $stop) {
            my ($m, $path, $hdr, $body) = @{$routes[$i]};
            my $r = eval { http($m, $path, $hdr, $body, timeout => 15) }
                || { status => 0, error => $@ };
            $n++;
            push @bad, "$r->{status} " . ($r->{error} // substr($r->{body}, 0, 200))
                unless $r->{status} >= 200 && $r->{status} < 300;
        }
        open my $fh, '>', prefix() . "/load.$i" or POSIX::_exit(1);
        print $fh join("\n", $n, @bad), "\n";
        close $fh;
        POSIX::_exit(0);
    }
    push @kids, $pid;
}

my @gen = worker_pids();
for my $hup (1 .. 5) {
    Time::HiRes::sleep(0.8);                    # load runs between reloads
    kill 'HUP', master_pid();
    my @old = @gen;
    ok wait_until(10, sub {
        @gen = worker_pids();
        my %o = map { $_ => 1 } @old;
        scalar grep { !$o{$_} } @gen;
    }), "reload $hup: a new worker runs";
}
Time::HiRes::sleep(0.8);
open my $fh, '>', $stop or die;
close $fh;
waitpid $_, 0 for @kids;

my $total = 0;
for my $i (0 .. $#routes) {
    open my $in, '<', prefix() . "/load.$i" or do { fail("client $i wrote its results"); next };
    chomp(my ($n, @bad) = <$in>);
    $total += $n;
    cmp_ok $n, '>', 0, "$routes[$i][1]: $n requests";
    is scalar(@bad), 0, "$routes[$i][1]: every one answered 2xx" or diag join "\n", @bad[0 .. ($#bad > 9 ? 9 : $#bad)];
}
diag "$total requests through 5 reloads";

# --- QUIT with a request waiting on each of PostgreSQL, Redis and a thread
my $hashed = (http(GET => '/v1/_test/pool')->{json} || {})->{password}{started} // 0;
my $redis = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $ENV{TEST_CMS_REDIS_PORT})
    or die "redis: $!";
print $redis "CLIENT PAUSE 1500\r\n";
like scalar(<$redis>), qr/^\+OK/, 'Redis paused';
my @inflight = (
    start_request(GET => '/v1/_test/sleep?seconds=1'),
    start_request(GET => '/v1/_test/redis?key=relpool'),
    start_request(POST => '/v1/auth/login', ['Content-Type' => 'application/json'], $login),
);
# each kind is seen waiting at some point (not necessarily all in one look)
my (%seen, $p);
ok wait_until(5, sub {
    $p = http(GET => '/v1/_test/pool')->{json} || {};
    $seen{pg} ||= ($p->{pg}{busy} // 0) >= 1;
    $seen{redis} ||= ($p->{redis}{busy} // 0) >= 1;
    $seen{hash} ||= ($p->{password}{running} // 0) >= 1
                    || ($p->{password}{started} // 0) > $hashed;
    3 == grep { $_ } values %seen;
}), 'one request waits on each' or diag explain \%seen, $p;
my $master = master_pid();
kill 'QUIT', $master;
for my $i (0 .. $#inflight) {
    my $r = finish_request($inflight[$i]);
    is $r->{status}, 200, "in flight at QUIT ($i): answered" or diag $r->{error} // $r->{body};
}
ok wait_until(8, sub { !kill 0, $master }), 'nginx then quits';

done_testing();
