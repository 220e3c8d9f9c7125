# Two nginx hosts (two prefixes, two ports) on the same PostgreSQL and Redis: the rate limit
# is one bucket per key across them (120 in a burst in total), and the idempotency
# guarantees hold across them: concurrent identical POSTs split over both hosts make one
# payment, every answer the original or in_progress; a different body on the other host is
# a conflict; a request in flight on one host is in_progress on the other; a retry on the
# other host after the Redis record is lost, or after the first host's worker was killed
# between the commit and the Redis write, gets the original answer; both hosts relay the
# outbox and every event reaches its stream once.
use strict;
use warnings;
use Cms::Test;
use JSON::PP ();
use Digest::SHA qw(hmac_sha256);
use Time::HiRes qw(time sleep);
use IO::Socket::INET ();
use File::Path qw(make_path);
use POSIX ();

# --- helpers (shared by t/20x-ext-*.t; duplicated: t/lib is not ours) ----------------
my $JSON = JSON::PP->new->utf8->canonical;
my @B62 = ('0' .. '9', 'A' .. 'Z', 'a' .. 'z');
sub base62 {
    my ($bytes, $width) = @_;
    my @n = unpack 'C*', $bytes;
    my $out = '';
    while (grep { $_ } @n) {
        my $rem = 0;
        for my $i (0 .. $#n) {
            my $v = $rem * 256 + $n[$i];
            $n[$i] = int($v / 62);
            $rem = $v % 62;
        }
        $out = $B62[$rem] . $out;
    }
    return ('0' x ($width - length $out)) . $out;
}
sub crc32 {
    my $crc = 0xffffffff;
    for my $c (unpack 'C*', shift) {
        $crc ^= $c;
        $crc = ($crc & 1) ? (($crc >> 1) ^ 0xedb88320) : ($crc >> 1) for 1 .. 8;
    }
    return $crc ^ 0xffffffff;
}
sub make_key {
    my $s = shift() . base62(join('', map { chr int rand 256 } 1 .. 32), 43);
    return $s . base62(pack('N', crc32($s)), 6);
}
sub master_secret {
    open my $fh, '<', prefix() . '/conf/secret.key' or die "secret.key: $!";
    local $/;
    my $s = <$fh>;
    $s =~ s/\s+\z//;
    return $s;
}
my $PEPPER = hmac_sha256('cms api key pepper v1', master_secret());
sub one { psql($_[0])->[0][0] }
my $NFAC = 0;
sub facility { one("INSERT INTO facilities (name) VALUES ('facility " . ++$NFAC . "') RETURNING id") }
sub extension {
    my ($fac, $status) = @_;
    one("INSERT INTO extensions (facility_id, name, version, category, status, privileges)
         VALUES ('$fac', 'billing-" . ++$NFAC . "', '1.0.0', 'payment', '" . ($status || 'running') . "',
                 '{ext:billing:read,ext:billing:write,ext:control:write}') RETURNING id");
}
# An extension key: %o = (fac, ext, live (1), privs ([all three]), expires, revoked, prefix)
sub ext_key {
    my %o = @_;
    my $live = $o{live} // 1;
    my $k = make_key($o{prefix} // ($live ? 'sk_live_' : 'sk_sandbox_'));
    my $privs = join ',', @{$o{privs} // [qw(ext:billing:read ext:billing:write ext:control:write)]};
    my $hash = unpack 'H*', hmac_sha256($k, $PEPPER);
    psql(sprintf "INSERT INTO extension_keys (extension_id, facility_id, livemode, privileges,
                  key_prefix, secret_hash, expires_at, revoked_at)
                  VALUES ('%s', '%s', %s, '{%s}', '%s', decode('%s', 'hex'), %s, %s)",
         $o{ext}, $o{fac}, $live ? 'true' : 'false', $privs, substr($k, 0, 12), $hash,
         defined $o{expires} ? "'$o{expires}'" : 'NULL', defined $o{revoked} ? "'$o{revoked}'" : 'NULL');
    return $k;
}
sub invoice {
    my ($fac, $live, $amount) = @_;
    one(sprintf "INSERT INTO invoices (facility_id, livemode, patient_id, amount, currency)
                 VALUES ('%s', %s, 'patient-%d', %s, 'XOF') RETURNING id",
        $fac, ($live // 1) ? 'true' : 'false', ++$NFAC, $amount // 5000);
}
# A request: body a ref (JSON-encoded, Content-Type set) or a string (sent as is, JSON type).
sub req_spec {
    my ($m, $path, $key, $body, @extra) = @_;
    my @h;
    push @h, Authorization => "Bearer $key" if defined $key;
    if (defined $body) {
        push @h, 'Content-Type' => 'application/json';
        $body = $JSON->encode($body) if ref $body;
    }
    push @h, @extra;
    return { method => $m, path => $path, headers => \@h, body => $body };
}
sub req { my $s = req_spec(@_); http($s->{method}, $s->{path}, $s->{headers}, $s->{body}) }
my $IDEM = 0;
sub idem { sprintf 'idem-%d-%d-%s', $$, ++$IDEM, int rand 1e9 }
# POST with a fresh Idempotency-Key unless one is given in @extra.
sub post {
    my ($path, $key, $body, @extra) = @_;
    my %e = @extra;
    push @extra, 'Idempotency-Key' => idem() unless grep { lc $_ eq 'idempotency-key' } keys %e;
    return req(POST => $path, $key, $body, @extra);
}
sub diag_resp { my $r = shift; "got $r->{status} " . substr($r->{error} // $r->{body}, 0, 400) }
# An error in the extension shape: {"error": {"type", "message", "param"}}.
sub check_err {
    my ($r, $status, $type, $param, $name) = @_;
    my $e = ref $r->{json} eq 'HASH' ? $r->{json}{error} : undef;
    my $ok = $r->{status} == $status && ref $e eq 'HASH' && ($e->{type} // '') eq $type
        && defined $e->{message} && !ref $e->{message} && length $e->{message}
        && exists $e->{param}
        && (defined $param ? (defined $e->{param} && $e->{param} eq $param) : 1);
    ok $ok, "$name: $status $type" . (defined $param ? " param $param" : '') or diag diag_resp($r);
    return $ok;
}
sub invoice_path { "/v1/ext/billing/invoices/$_[0]" }
sub record_path { "/v1/ext/billing/payments/$_[0]/record" }
sub fail_path { "/v1/ext/billing/payments/$_[0]/fail" }
# --- end of helpers ------------------------------------------------------------------

# --- the second host ---------------------------------------------------------------------
# The harness runs one nginx per file; the second one is started here with its own prefix,
# port, pid and logs, from the same rendered config (same database, Redis and secret).
# Requests to either go through the harness's connection driver (Cms::Test::_new_conn and
# _drive, which skip connecting when a socket is already there).
die 'Cms::Test internals changed: _new_conn/_drive are needed to talk to a second host'
    unless Cms::Test->can('_new_conn') && Cms::Test->can('_drive');

my $NGINX = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
my ($PORT_B, $PREFIX_B, $MASTER_B);

sub start_host_b {
    $PORT_B = free_port();
    $PREFIX_B = prefix() . '-host-b';
    make_path(map { "$PREFIX_B/$_" } qw(conf logs temp));
    chmod 0755, $PREFIX_B, map { "$PREFIX_B/$_" } qw(conf logs temp);
    if ($> == 0) {
        my $uid = getpwnam('nobody');
        chown $uid, -1, "$PREFIX_B/temp" if defined $uid;
    }
    my $conf = render_conf();
    my $port_a = port();
    $conf =~ s/listen 127\.0\.0\.1:$port_a;/listen 127.0.0.1:$PORT_B;/ or die "no listen line in\n$conf";
    open my $fh, '>', "$PREFIX_B/conf/nginx.conf" or die $!;
    print $fh $conf;
    close $fh;
    my %env = Cms::Test->can('_nginx_env') ? Cms::Test::_nginx_env() : ();
    local @ENV{keys %env} = values %env;
    my $out = `$NGINX -p $PREFIX_B/ -c $PREFIX_B/conf/nginx.conf 2>&1`;
    die "host B did not start: $out" if $?;
    wait_until(10, sub { IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $PORT_B, Proto => 'tcp') })
        or die 'host B does not accept connections';
    ($MASTER_B) = (`cat $PREFIX_B/logs/nginx.pid` =~ /(\d+)/);
}

sub stop_host_b {
    return unless $MASTER_B && kill 0, $MASTER_B;
    kill 'QUIT', $MASTER_B;
    wait_until(10, sub { !kill 0, $MASTER_B }) or kill 'KILL', $MASTER_B;
    $MASTER_B = undef;
}
END { stop_host_b() }

sub workers_b {
    return () unless $MASTER_B;
    my @w;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open my $fh, '<', $stat or next;
        my $s = <$fh> // next;
        push @w, $1 if $s =~ /^(\d+) \(.*\) [^Z] (\d+)/s && $2 == $MASTER_B;
    }
    return sort { $a <=> $b } @w;
}

# Requests to either host, at once: each item is [port, spec].
sub on_hosts {
    my $t0 = time;
    my @c;
    for my $item (@_) {
        my ($p, $spec) = @$item;
        my $c = Cms::Test::_new_conn($spec, $t0);
        $c->{t_start} = time;
        $c->{sock} = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $p, Proto => 'tcp',
                                           Blocking => 0) or die "connect to $p: $!";
        push @c, $c;
    }
    return Cms::Test::_drive(@c);
}
# Sends a request to a host and returns at once; finish_at() waits for its answer.
sub start_at {
    my ($p, @req) = @_;
    my $c = Cms::Test::_new_conn(req_spec(@req), time);
    $c->{t_start} = time;
    $c->{sock} = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $p, Proto => 'tcp', Timeout => 5)
        or die "connect to $p: $!";
    while ($c->{off} < length $c->{out}) {
        my $n = syswrite($c->{sock}, $c->{out}, length($c->{out}) - $c->{off}, $c->{off});
        die "write: $!" unless defined $n;
        $c->{off} += $n;
    }
    $c->{sock}->blocking(0);
    return $c;
}
sub finish_at { my ($r) = Cms::Test::_drive($_[0]); $r }
sub at { my ($p, @req) = @_; my ($r) = on_hosts([$p, req_spec(@req)]); $r }
sub post_at {
    my ($p, $path, $key, $body, @extra) = @_;
    my %e = @extra;
    push @extra, 'Idempotency-Key' => idem() unless exists $e{'Idempotency-Key'};
    return at($p, POST => $path, $key, $body, @extra);
}

sub redis_cli {
    open my $fh, '-|', 'redis-cli', '-p', $ENV{TEST_CMS_REDIS_PORT}, @_ or die "redis-cli: $!";
    local $/;
    my $out = <$fh>;
    close $fh;
    return $out // '';
}
sub payments { one("SELECT count(*) FROM payments WHERE invoice_id = '$_[0]'") }
sub events { one("SELECT count(*) FROM ext_events WHERE data->'invoice'->>'id' = '$_[0]'") }
sub replayed { ($_[0]{headers}{'idempotent-replayed'} // '') eq 'true' }
sub limited { $_[0]{status} == 429 && ((($_[0]{json} || {})->{error} || {})->{type} // '') eq 'rate_limited' }
sub in_progress { $_[0]{status} == 409 && ((($_[0]{json} || {})->{error} || {})->{type} // '') eq 'idempotency_in_progress' }

set_conf_defaults(workers => 2, http_config => "cms_idempotency_lock 1s;\ncms_events_interval 200ms;");
start_nginx();
start_host_b();
my $A = port();
my $B = $PORT_B;

my $fa = facility();
my $ea = extension($fa);
my $fresh = sub { ext_key(fac => $fa, ext => $ea) };
my $inv = invoice($fa, 1, 100);

{
    my $K = $fresh->();
    is at($A, GET => invoice_path($inv), $K)->{status}, 200, 'host A answers';
    is at($B, GET => invoice_path($inv), $K)->{status}, 200, 'host B answers';
    my @w = workers_b();
    is scalar(@w), 2, 'host B has two workers';
    # warm both hosts' pools
    on_hosts(map { [$_ % 2 ? $A : $B, req_spec(GET => invoice_path($inv), $K)] } 1 .. 24);
}

# --- one rate limit across hosts ----------------------------------------------------------
{
    my $K = $fresh->();
    my @r = on_hosts(map { [$_ % 2 ? $A : $B, req_spec(GET => invoice_path($inv), $K)] } 1 .. 130);
    my $ok_a = grep { $r[$_]{status} == 200 && $_ % 2 == 0 } 0 .. $#r;   # index 0 is request 1: host A
    my $ok = grep { $_->{status} == 200 } @r;
    is $ok, 120, "a burst of 130 split over two hosts: 120 accepted in total ($ok_a on A, " . ($ok - $ok_a) . ' on B)';
    is scalar(grep { limited($_) } @r), 10, 'and 10 refused';
    ok limited(at($A, GET => invoice_path($inv), $K)), 'then host A refuses';
    my $b = at($B, GET => invoice_path($inv), $K);
    ok limited($b), 'and host B refuses';
    like $b->{headers}{'retry-after'} // '', qr/^[1-9]\d*$/, 'with Retry-After';
    sleep(($b->{headers}{'retry-after'} || 1) + 0.05);
    is at($A, GET => invoice_path($inv), $K)->{status}, 200, 'after Retry-After host A takes one';
}

# --- idempotency across hosts ------------------------------------------------------------
my $K = $fresh->();
{
    my $i = invoice($fa, 1, 800);
    my $k = idem();
    my $b = '{"reference":"two-hosts","amount":800,"method":"cash"}';
    my $spec = req_spec(POST => record_path($i), $K, $b, 'Idempotency-Key' => $k);
    my @r = on_hosts(map { [$_ % 2 ? $A : $B, $spec] } 1 .. 30);
    my @ok = grep { $_->{status} == 200 } @r;
    my @busy = grep { in_progress($_) } @r;
    my @orig = grep { !replayed($_) } @ok;
    is scalar(@ok) + scalar(@busy), 30, '30 identical POSTs over two hosts: each a 200 or in_progress'
        or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 200 && !in_progress($_) } @r;
    is scalar(@orig), 1, 'one original answer';
    my $o = $orig[0] || $ok[0] || {body => ''};
    is_deeply $o->{json}, {id => $i, status => 'paid', reference => 'two-hosts'}, 'the original answer';
    is scalar(grep { $_->{body} ne $o->{body} } @ok), 0, 'every 200 byte-identical';
    diag sprintf 'over two hosts: %d original, %d replayed, %d in progress',
        scalar(@orig), scalar(@ok) - scalar(@orig), scalar(@busy);
    is payments($i), 1, 'one payment row';
    is events($i), 1, 'one event';
    for my $h ([A => $A], [B => $B]) {
        my $x = at($h->[1], POST => record_path($i), $K, $b, 'Idempotency-Key' => $k);
        ok $x->{status} == 200 && $x->{body} eq $o->{body} && replayed($x), "replayed on host $h->[0]"
            or diag diag_resp($x);
    }
    check_err(at($B, POST => record_path($i), $K, '{"reference":"other","amount":800}', 'Idempotency-Key' => $k),
              409, 'idempotency_conflict', 'Idempotency-Key', 'another body on host B');
}

# In flight on host A -> in progress on host B (the invoice row is locked meanwhile).
{
    my $i = invoice($fa, 1, 40);
    my $k = idem();
    my $b = '{"reference":"slow","amount":40}';
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        my $ok = eval { psql("BEGIN; SELECT 1 FROM invoices WHERE id = '$i' FOR UPDATE; SELECT pg_sleep(1.2); COMMIT;"); 1 };
        POSIX::_exit($ok ? 0 : 1);
    }
    ok wait_until(5, sub { one("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(1.2)%'
                                AND state = 'active' AND pid <> pg_backend_pid()") > 0 }), 'the invoice row is locked';
    my $ca = start_at($A, POST => record_path($i), $K, $b, 'Idempotency-Key' => $k);
    sleep 0.3;
    my @r = (undef, at($B, POST => record_path($i), $K, $b, 'Idempotency-Key' => $k));
    $r[0] = finish_at($ca);
    waitpid $pid, 0;
    is $r[0]{status}, 200, 'host A: 200 after the lock' or diag diag_resp($r[0]);
    ok in_progress($r[1]), 'host B while A holds the key: 409 idempotency_in_progress' or diag diag_resp($r[1]);
    is $r[1]{headers}{'retry-after'}, '1', 'Retry-After: 1';
    is payments($i), 1, 'one payment';
}

# The Redis record lost: the other host answers from the database.
{
    my $i = invoice($fa, 1, 55);
    my $k = idem();
    my $b = '{"reference":"lost","amount":55}';
    my $a = post_at($A, record_path($i), $K, $b, 'Idempotency-Key' => $k);
    is $a->{status}, 200, 'record on host A' or diag diag_resp($a);
    my $kid = one("SELECT id FROM extension_keys WHERE key_prefix = '" . substr($K, 0, 12) . "'");
    my @keys = grep { length } split /\n/, redis_cli('--scan', '--pattern', "cms:idem:{$kid}:*");
    redis_cli('DEL', @keys) if @keys;
    my $x = post_at($B, record_path($i), $K, $b, 'Idempotency-Key' => $k);
    ok $x->{status} == 200 && $x->{body} eq $a->{body} && replayed($x),
       'Redis record lost: host B gives the original answer, replayed' or diag diag_resp($x);
    is payments($i), 1, 'one payment';
}

# kill -9 on host A between the commit and the Redis write; the retry goes to host B.
SKIP: {
    skip 'the fault point needs the FAULTS build (TEST_CMS_FAULTS=1)', 1 unless $ENV{TEST_CMS_FAULTS};
    allow_error_log(qr/exited on signal 9/);
    my $i = invoice($fa, 1, 66);
    my $k = idem();
    my $b = '{"reference":"crash-a","amount":66}';
    my $x = post_at($A, record_path($i), $K, $b, 'Idempotency-Key' => $k, 'X-Cms-Fault' => 'after-commit');
    is $x->{status}, 0, 'host A: the worker died, no answer' or diag diag_resp($x);
    is payments($i), 1, 'the payment was committed';
    ok in_progress(post_at($B, record_path($i), $K, $b, 'Idempotency-Key' => $k)),
       'host B within the lock: in progress';
    sleep 1.2;
    my $y = post_at($B, record_path($i), $K, $b, 'Idempotency-Key' => $k);
    is $y->{status}, 200, 'host B after the lock: 200' or diag diag_resp($y);
    ok replayed($y), 'replayed';
    is_deeply $y->{json}, {id => $i, status => 'paid', reference => 'crash-a'}, 'the original answer';
    is payments($i), 1, 'no second payment';
    is events($i), 1, 'one event';
}

# --- both hosts relay the outbox ---------------------------------------------------------
{
    my $KE = $fresh->();
    my @inv = map { invoice($fa, 1, 5) } 1 .. 12;
    my @r = on_hosts(map { [$_ % 2 ? $A : $B, req_spec(POST => record_path($inv[$_]), $KE,
                                                       '{"reference":"relay","amount":5}',
                                                       'Idempotency-Key' => idem())] } 0 .. $#inv);
    is scalar(grep { $_->{status} == 200 } @r), 12, '12 payments over both hosts';
    ok wait_until(6, sub { one("SELECT count(*) FROM ext_events WHERE relayed_at IS NULL") == 0 }),
       'every event relayed';
    my %n;
    for my $line (split /\n/, redis_cli('XRANGE', "cms:events:{$fa}:live", '-', '+')) {
        $n{$line}++ if $line =~ /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    }
    my @ids = map { $_->[0] } @{psql("SELECT id FROM ext_events WHERE facility_id = '$fa' AND livemode")};
    is scalar(grep { $n{$_} } @ids), scalar(@ids), 'every event of the facility is in its stream (' . scalar(@ids) . ')';
    is scalar(grep { ($n{$_} // 0) > 1 } @ids), 0, 'none twice';
}

# --- host B's own log --------------------------------------------------------------------
stop_host_b();
{
    open my $fh, '<', "$PREFIX_B/logs/error.log" or die $!;
    my @bad = grep { /\[(alert|crit|emerg)\]/ && !/exited on signal 9/ } <$fh>;
    ok !@bad, 'host B: error.log has no [alert], [crit] or [emerg]' or diag join '', @bad;
}

done_testing();
