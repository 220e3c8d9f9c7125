# Redis AUTH: cms_redis ... user=NAME password_file=FILE sends "AUTH user password" before any
# other command on every new connection. Against a redis-server of this file's own with an
# ACL user (its own folder /tmp/relstatus-*, a free loopback port; the default user off):
# the smoke routes pass through it (health, a Redis read, the rate-limited extension path);
# a wrong password, or none, makes the pool say so clearly in the log (never the password)
# and requests 503; a password alone authenticates the default user; nginx -t refuses a
# missing or empty password file and user= without one.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:content);
use Cms::Prom;
use File::Temp qw(tempdir);
use IO::Socket::INET ();
use POSIX ();

my $PW = 'Pa$$-w0rd:relstatus-' . $$;
my $dir = tempdir('relstatus-redis-XXXXXX', DIR => '/tmp', CLEANUP => 1);
my $rport = free_port();

sub write_file { my ($f, $t) = @_; open my $fh, '>', $f or die "$f: $!"; print $fh $t; close $fh; chmod 0600, $f; $f }
my $good = write_file("$dir/good.pass", "$PW\n");
my $bad = write_file("$dir/bad.pass", "not-the-password\n");
my $empty = write_file("$dir/empty.pass", "\n");

my $rpid = fork // die "fork: $!";
if (!$rpid) {
    open STDOUT, '>', "$dir/redis.log";
    open STDERR, '>&', \*STDOUT;
    exec 'redis-server', '--port', $rport, '--bind', '127.0.0.1', '--dir', $dir,
         '--daemonize', 'no', '--save', '', '--appendonly', 'no',
         '--user', 'default', 'off',
         '--user', 'cms', 'on', ">$PW", '~*', '&*', '+@all'
        or POSIX::_exit(127);
}
END { if ($rpid) { kill 'TERM', $rpid; waitpid $rpid, 0 } }

# a raw client: "AUTH" then the command, replies as lines
sub redis_cmd {
    my (@cmds) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $rport, Proto => 'tcp',
                                  Timeout => 2) or return;
    my @out;
    for my $c (@cmds) {
        print $s join('', "*" . @$c . "\r\n", map { '$' . length($_) . "\r\n$_\r\n" } @$c);
        my $l = <$s>;
        $l = <$s> if defined $l && $l =~ /^\$\d/;
        push @out, $l // '';
    }
    return @out;
}
ok wait_until(10, sub { ((redis_cmd(['AUTH', 'cms', $PW], ['PING']))[1] // '') =~ /PONG/ }),
    "the ACL redis-server runs on $rport";
like((redis_cmd(['PING']))[0], qr/NOAUTH/, 'it refuses a client that does not authenticate');

my $STATUS = "location = /status { cms_status; }\n";
sub redis_line { "cms_redis 127.0.0.1:$rport max=2 timeout=1s @_;" }

# --- nginx -t ------------------------------------------------------------------------------
for my $case (["password_file=$dir/missing.pass", qr/cms_redis: cannot open/],
              ["password_file=$empty", qr/must hold a password/],
              ["user=cms", qr/"user=" needs "password_file="/],
              ["password_file=", qr/invalid parameter "password_file="/]) {
    my $t = nginx_test(redis => redis_line($case->[0]));
    isnt $t->{rc}, 0, "nginx -t refuses $case->[0]";
    like $t->{out}, $case->[1], '... saying why';
}
is nginx_test(redis => redis_line("user=cms password_file=$good"))->{rc}, 0,
    'nginx -t takes user= and a readable password_file=';

# --- the right credential: the smoke routes pass through ---------------------------------
start_nginx(redis => redis_line("user=cms password_file=$good"), config => $STATUS);
my $h = http(GET => '/v1/health');
is $h->{status}, 200, 'health: 200 through the ACL user' or diag $h->{body};
is_deeply $h->{json}, { postgres => 'ok', redis => 'ok' }, 'health: redis ok';
my $x = http(GET => '/v1/_test/redis?key=auth-smoke');
is $x->{status}, 200, 'a Redis read: 200' or diag $x->{body};
my $u = signup();
my $wid = workspace($u->{token}, 'Auth');
my $lo = req(POST => '/v1/auth/logout', $u->{token});
cmp_ok $lo->{status}, '<', 300, 'logout (the session deny-list in Redis) succeeds' or diag diag_resp($lo);
is req(GET => '/v1/me', $u->{token})->{status}, 401, 'and the revoked session is refused: Redis answered';
my @p = parallel_requests(map { [GET => '/v1/_test/redis?key=auth-par'] } 1 .. 8);
is scalar(grep { $_->{status} == 200 } @p), 8, 'eight at once over two authenticated connections';
like((redis_cmd(['AUTH', 'cms', $PW], ['CLIENT', 'LIST']))[1], qr/\S/, 'the server lists its clients');
my ($m) = Cms::Prom::parse(http(GET => '/status')->{body});
is Cms::Prom::sum($m, 'cms_pool_connect_failures_total', pool => 'redis'), 0, 'no connect failed';
ok !grep({ index($_, $PW) >= 0 } error_log_lines()), 'the password is nowhere in the log';

# --- a wrong password: a clear log line, 503 ----------------------------------------------
# the pool's timeout far out (20 s): "at once" is then well apart from an answer at it
restart_nginx(redis => "cms_redis 127.0.0.1:$rport max=2 timeout=20s user=cms password_file=$bad;",
              config => $STATUS);
allow_error_log(qr/refused AUTH|answering 50[03]|no redis connection|rate limit falls back/);
my $off = error_log_size();
$x = http(GET => '/v1/_test/redis?key=auth-bad');
is $x->{status}, 503, 'wrong password: a Redis route answers 503';
is(($x->{json} || {})->{code}, 'service_unavailable', '... service_unavailable');
cmp_ok $x->{elapsed}, '<', 10, '... at once, not after the 20 s timeout';
ok wait_until(3, sub { grep { /\[error\].*cms: redis at .* refused AUTH as user "cms": WRONGPASS/ } error_log_lines($off) }),
    'the log says: redis ... refused AUTH as user "cms": WRONGPASS ...';
my @wp = grep { /refused AUTH/ } error_log_lines($off);
like $wp[0] // '', qr/redis at "127\.0\.0\.1:$rport" refused AUTH as user "cms"/,
    '... naming the server and the user';
is http(GET => '/v1/health')->{status}, 503, 'health: 503';
($m) = Cms::Prom::parse(http(GET => '/status')->{body});
cmp_ok Cms::Prom::sum($m, 'cms_pool_connect_failures_total', pool => 'redis'), '>=', 1,
    'a refused AUTH counts as a connect failure';
ok !grep({ index($_, 'not-the-password') >= 0 } error_log_lines()), 'the wrong password is not logged either';

# --- no credential against it: Redis says NOAUTH to each command --------------------------
restart_nginx(redis => redis_line(''), config => $STATUS);
allow_error_log(qr/NOAUTH/);
is http(GET => '/v1/health')->{status}, 503, 'no AUTH configured: health 503';

# --- a password alone: the default user --------------------------------------------------
redis_cmd(['AUTH', 'cms', $PW], ['ACL', 'SETUSER', 'default', 'on', ">$PW", '~*', '&*', '+@all']);
restart_nginx(redis => redis_line("password_file=$good"), config => $STATUS);
$h = http(GET => '/v1/health');
is $h->{status}, 200, 'password_file= alone: AUTH <password> as the default user' or diag $h->{body};
is http(GET => '/v1/_test/redis?key=auth-default')->{status}, 200, 'a Redis read: 200';

# --- a reconnect authenticates again -------------------------------------------------------
redis_cmd(['AUTH', 'cms', $PW], ['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes']);
ok wait_until(5, sub { http(GET => '/v1/_test/redis?key=auth-again')->{status} == 200 }),
    'after Redis dropped every connection: the next ones authenticate again';

done_testing();
