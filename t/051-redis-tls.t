# Redis over TLS on nginx's own SSL connection helpers: cms_redis ... tls=on tls_ca=CA
# tls_name=NAME [tls_cert= tls_key=]. A redis-server of this file's own (its folder under
# the file's prefix, a free loopback port) listens with TLS only (--port 0 --tls-port),
# asks for a client certificate, and has an ACL user (the default user off); its
# certificate, for redis.test, comes from a throwaway CA made here with openssl. The smoke
# routes pass through it: health, a Redis read, a keyed article POST, a logout (the session deny-list) and the
# revoked session refused, the extension surface's rate limit (RateLimit headers) and an
# idempotent POST with its replay, eight requests at once; idle connections are kept
# (the TLS 1.3 session tickets that reach an idle connection are not taken for stray
# data) and a connection Redis dropped is made again with a new handshake. Another CA, or
# a name the certificate does not carry, gives the Redis-down behaviour (503
# service_unavailable) and one clear line in error.log; no client certificate: the server
# ends the handshake, same behaviour. nginx -t refuses the incomplete settings.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:ext signup workspace key);
use Cms::Prom;
use File::Path qw(make_path);
use POSIX ();

plan skip_all => 'no openssl command' unless grep { -x "$_/openssl" } split /:/, $ENV{PATH};
plan skip_all => 'no redis-server' unless grep { -x "$_/redis-server" } split /:/, $ENV{PATH};

my $dir = prefix() . '/redistls';
my $rport = free_port();
my $PW = 'tls-pass-' . $$;

sub run_ok {
    my $out = `@_ 2>&1`;
    die "@_: $out" if $?;
    return $out;
}
sub write_file { my ($f, $t) = @_; open my $fh, '>', $f or die "$f: $!"; print $fh $t; close $fh; $f }

# --- a CA, a server certificate for redis.test, a client certificate, another CA
make_path($dir);
chmod 0755, $dir;
my $ec = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';
for my $ca (qw(ca other)) {
    run_ok("openssl req -x509 $ec -keyout $dir/$ca.key -out $dir/$ca.pem -days 2"
           . " -subj /CN=cms-redis-$ca -addext basicConstraints=critical,CA:TRUE"
           . " -addext keyUsage=keyCertSign,cRLSign");
}
for my $leaf (['server', 'redis.test', 'serverAuth'], ['client', 'cms-client', 'clientAuth']) {
    my ($n, $cn, $usage) = @$leaf;
    run_ok("openssl req $ec -keyout $dir/$n.key -out $dir/$n.csr -subj /CN=$cn");
    write_file("$dir/$n.ext", "subjectAltName=DNS:$cn\nbasicConstraints=CA:FALSE\n"
                              . "extendedKeyUsage=$usage\n");
    run_ok("openssl x509 -req -in $dir/$n.csr -CA $dir/ca.pem -CAkey $dir/ca.key"
           . " -CAcreateserial -out $dir/$n.crt -days 2 -extfile $dir/$n.ext");
}
chmod 0644, map { "$dir/$_" } qw(ca.pem other.pem server.crt client.crt server.key client.key);
my $pass = write_file("$dir/redis.pass", "$PW\n");
chmod 0600, $pass;                      # a secret: others may not read it (nginx -t)

# --- the TLS-only redis-server, with an ACL user, asking for a client certificate
my $rpid = fork // die "fork: $!";
if (!$rpid) {
    open STDOUT, '>', "$dir/redis.log";
    open STDERR, '>&', \*STDOUT;
    exec 'redis-server', '--port', '0', '--tls-port', $rport, '--bind', '127.0.0.1',
         '--dir', $dir, '--daemonize', 'no', '--save', '', '--appendonly', 'no',
         '--tls-cert-file', "$dir/server.crt", '--tls-key-file', "$dir/server.key",
         '--tls-ca-cert-file', "$dir/ca.pem", '--tls-auth-clients', 'yes',
         '--user', 'default', 'off',
         '--user', 'cms', 'on', ">$PW", '~*', '&*', '+@all'
        or POSIX::_exit(127);
}
END { if ($rpid) { kill 'TERM', $rpid; waitpid $rpid, 0 } }

# redis-cli over TLS with the client certificate, as the ACL user
sub rcli {
    my @cmd = ('redis-cli', '--tls', '--cacert', "$dir/ca.pem", '--cert', "$dir/client.crt",
               '--key', "$dir/client.key", '--sni', 'redis.test', '-h', '127.0.0.1',
               '-p', $rport, '--user', 'cms', '--pass', $PW, '--no-auth-warning', @_);
    my $pid = open my $fh, '-|' // die "fork: $!";
    if (!$pid) {
        open STDERR, '>', '/dev/null';
        exec @cmd or POSIX::_exit(127);
    }
    local $/;
    my $out = <$fh> // '';
    close $fh;
    return $out;
}
ok wait_until(10, sub { rcli('PING') =~ /PONG/ }), "the TLS redis-server runs on $rport";
my $plain = `redis-cli -h 127.0.0.1 -p $rport PING 2>&1`;
unlike $plain, qr/PONG/, 'it does not talk plain text';

my $STATUS = "location = /status { cms_status; }\n";
my $TLS = "tls=on tls_ca=$dir/ca.pem tls_name=redis.test tls_cert=$dir/client.crt"
        . " tls_key=$dir/client.key";
sub redis_line { "cms_redis 127.0.0.1:$rport max=2 timeout=2s user=cms password_file=$pass @_;" }
# the same with the pool's timeout far out (20 s): "at once" is then well apart from it
sub redis_line_slow { "cms_redis 127.0.0.1:$rport max=2 timeout=20s user=cms password_file=$pass @_;" }

# --- nginx -t ------------------------------------------------------------------------------
for my $case (['tls=on tls_name=redis.test', qr/"tls=on" needs "tls_ca="/],
              ["tls=on tls_ca=$dir/ca.pem", qr/"tls=on" with an IP address needs "tls_name="/],
              ["tls_ca=$dir/ca.pem tls_name=redis.test", qr/need "tls=on"/],
              ["tls=yes tls_ca=$dir/ca.pem", qr/invalid value "tls=yes"/],
              ["tls=on tls_ca=$dir/ca.pem tls_name=redis.test tls_cert=$dir/client.crt",
               qr/"tls_cert=" and "tls_key=" go together/],
              ["tls=on tls_ca=$dir/none.pem tls_name=redis.test",
               qr/SSL_CTX_load_verify_locations\(".*none\.pem"\) failed/]) {
    my $t = nginx_test(redis => redis_line($case->[0]));
    isnt $t->{rc}, 0, "nginx -t refuses $case->[0]";
    like $t->{out}, $case->[1], '... saying why' or diag $t->{out};
}
my $t = nginx_test(redis => "cms_redis unix:$dir/redis.sock tls=on tls_ca=$dir/ca.pem"
                            . " tls_name=redis.test;");
isnt $t->{rc}, 0, 'nginx -t refuses TLS over a unix socket';
like $t->{out}, qr/"tls=on" needs a TCP address/, '... saying why';
is nginx_test(redis => redis_line($TLS))->{rc}, 0, 'nginx -t takes the whole TLS setting';

# --- the smoke routes through TLS and AUTH -------------------------------------------------
start_nginx(workers => 1, redis => redis_line($TLS), config => $STATUS);
my $h = http(GET => '/v1/health');
is $h->{status}, 200, 'health: 200' or diag $h->{body};
is_deeply $h->{json}, { postgres => 'ok', redis => 'ok' }, 'health: redis ok over TLS';
is http(GET => '/v1/_test/redis?key=tls-smoke')->{status}, 200, 'a Redis read: 200';

my $u = signup();
my $K_art = key($u->{token}, workspace($u->{token}, 'TLS'), 'rw', 'articles:read', 'articles:write');
my $art = req(POST => '/v1/api/articles', $K_art, { title => 'Redis over TLS' });
is $art->{status}, 201, 'a keyed article POST: 201' or diag diag_resp($art);
my $lo = req(POST => '/v1/auth/logout', $u->{token});
cmp_ok $lo->{status}, '<', 300, 'logout (the session deny-list in Redis): 2xx' or diag diag_resp($lo);
is req(GET => '/v1/me', $u->{token})->{status}, 401, 'the revoked session is refused';

my $fac = facility();
my $K = ext_key(fac => $fac, ext => extension($fac));
my $inv = invoice($fac, 1, 700);
my $g = req(GET => invoice_path($inv), $K);
is $g->{status}, 200, 'an extension read: 200' or diag diag_resp($g);
like $g->{headers}{ratelimit} // '', qr/^"default";r=119;t=\d+$/,
    'the rate limit (GCRA in Redis) counted it';
my $idem = idem();
my $p = post(record_path($inv), $K, { reference => 'tls', amount => 700 }, 'Idempotency-Key' => $idem);
is $p->{status}, 200, 'an idempotent POST: 200' or diag diag_resp($p);
my $again = post(record_path($inv), $K, { reference => 'tls', amount => 700 }, 'Idempotency-Key' => $idem);
is $again->{status}, 200, 'the same POST again: 200';
is $again->{headers}{'idempotent-replayed'}, 'true', '... replayed from Redis';
is $again->{body}, $p->{body}, '... the same answer';

my @par = parallel_requests(map { [GET => "/v1/_test/redis?key=tls-par-$_"] } 1 .. 8);
is scalar(grep { $_->{status} == 200 } @par), 8, 'eight at once over two TLS connections';

# the connections stay: the session tickets TLS 1.3 sends after the handshake are no stray
# data on an idle connection; a later request reuses them
my ($m) = Cms::Prom::parse(http(GET => '/status')->{body});
my $connects = Cms::Prom::sum($m, 'cms_pool_connects_total', pool => 'redis');
cmp_ok $connects, '<=', 2, "at most max=2 connections were made ($connects)";
is Cms::Prom::sum($m, 'cms_pool_connect_failures_total', pool => 'redis'), 0, 'none failed';
is http(GET => '/v1/_test/redis?key=tls-later')->{status}, 200, 'a later Redis read: 200';
($m) = Cms::Prom::parse(http(GET => '/status')->{body});
is Cms::Prom::sum($m, 'cms_pool_connects_total', pool => 'redis'), $connects,
    '... on a connection kept idle';
ok !(grep { /closed an idle connection/ } error_log_lines()), 'no idle connection was closed';
like rcli('CLIENT', 'LIST'), qr/user=cms/, 'the server lists the module as the ACL user';

# --- Redis drops every connection: the next ones shake hands again -------------------------
rcli('CLIENT', 'KILL', 'USER', 'cms');
ok wait_until(5, sub { http(GET => '/v1/_test/redis?key=tls-again')->{status} == 200 }),
    'after Redis dropped the connections: new ones, TLS and AUTH again';

# --- the certificate not trusted, or not for that name: Redis-down, one clear line ---------
for my $case (["tls=on tls_ca=$dir/other.pem tls_name=redis.test tls_cert=$dir/client.crt"
               . " tls_key=$dir/client.key",
               qr/\[error\].*cms: the TLS certificate of redis at "127\.0\.0\.1:$rport" is not trusted: \(\d+:[^)]+\)/,
               'another CA'],
              ["tls=on tls_ca=$dir/ca.pem tls_name=cache.test tls_cert=$dir/client.crt"
               . " tls_key=$dir/client.key",
               qr/\[error\].*cms: the TLS certificate of redis at "127\.0\.0\.1:$rport" does not match "cache\.test"/,
               'another name'],
              ["tls=on tls_ca=$dir/ca.pem tls_name=redis.test",
               # the refusal may also meet AUTH on its way out (SSL_write, reset by peer)
               qr/\[error\].*(SSL_do_handshake\(\) failed|SSL_write\(\) failed|cms: TLS handshake with redis at "127\.0\.0\.1:$rport" failed|redis closed the connection)/,
               'no client certificate']) {
    restart_nginx(workers => 1, redis => redis_line_slow($case->[0]), config => $STATUS);
    my $off = error_log_size();
    my $x = http(GET => '/v1/_test/redis?key=tls-bad');
    is $x->{status}, 503, "$case->[2]: a Redis route answers 503";
    is(($x->{json} || {})->{code}, 'service_unavailable', "$case->[2]: service_unavailable");
    cmp_ok $x->{elapsed}, '<', 10, "$case->[2]: at once, not after the 20 s timeout";
    ok wait_until(3, sub { grep { /$case->[1]/ } error_log_lines($off) }),
        "$case->[2]: error.log says why" or diag join '', error_log_lines($off);
    is http(GET => '/v1/health')->{status}, 503, "$case->[2]: health 503";
    ($m) = Cms::Prom::parse(http(GET => '/status')->{body});
    cmp_ok Cms::Prom::sum($m, 'cms_pool_connect_failures_total', pool => 'redis'), '>=', 1,
        "$case->[2]: counted as a connect failure";
}
# TLS 1.3: the server refuses a missing client certificate after the client's side of the
# handshake is done, so the alert comes with the first read (AUTH's answer); nginx 1.22
# logs that alert at crit (its list of handshake alerts it lowers predates TLS 1.3's)
allow_error_log(qr/SSL_read\(\) failed .*alert certificate required/);
allow_error_log(qr/not trusted|does not match|SSL_do_handshake|SSL_write\(\) failed|TLS handshake with redis|redis closed the connection|no redis connection|answering 50[03]|rate limit falls back|peer closed connection in SSL handshake/);

done_testing();
