# Events and Redis outages on /v1/ext: the outbox relays billing.payment_completed to the
# Redis Stream of its facility and mode (cms:events:{<facility>}:live|sandbox) as
# `id <event id> event <json {id, type, created_at, facility_id, livemode, data}>` and marks
# the row relayed. With Redis stopped: POSTs answer 500 internal_error and write nothing,
# GETs keep working under the per-worker fallback limit (120 at once), and every event
# written before or during the outage reaches its stream after Redis returns.
use strict;
use warnings;
use Cms::Test;
use JSON::PP ();
use Digest::SHA qw(hmac_sha256);
use Time::HiRes qw(time sleep);
use IO::Socket::INET ();

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

# --- Redis, spoken directly (RESP) -------------------------------------------------------
sub redis_cmd {
    my @args = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $ENV{TEST_CMS_REDIS_PORT},
                                  Proto => 'tcp', Timeout => 3) or die "redis: $!";
    print $s '*' . @args . "\r\n" . join('', map { '$' . length($_) . "\r\n$_\r\n" } @args);
    my $read;
    $read = sub {
        my $line = <$s> // die "redis: connection closed";
        $line =~ s/\r\n\z//;
        my ($t, $v) = (substr($line, 0, 1), substr($line, 1));
        return $v if $t eq '+' || $t eq ':';
        die "redis: $v\n" if $t eq '-';
        if ($t eq '$') {
            return undef if $v < 0;
            my $buf = '';
            read($s, $buf, $v + 2) == $v + 2 or die 'redis: short read';
            return substr($buf, 0, $v);
        }
        return $v < 0 ? undef : [map { $read->() } 1 .. $v] if $t eq '*';
        die "redis: unexpected reply $line";
    };
    my $r = $read->();
    close $s;
    return $r;
}
# The entries of a stream: [{stream_id, id, event (decoded), raw}]
sub stream {
    my $entries = redis_cmd('XRANGE', $_[0], '-', '+');
    return [map { my %f = @{$_->[1]}; {stream_id => $_->[0], id => $f{id}, raw => $f{event},
                  fields => [sort keys %f], event => eval { $JSON->decode($f{event}) }} } @$entries];
}
sub stream_key { "cms:events:{$_[0]}:" . ($_[1] ? 'live' : 'sandbox') }
sub pending_events { one("SELECT count(*) FROM ext_events WHERE relayed_at IS NULL") }

set_conf_defaults(workers => 1, http_config => 'cms_events_interval 200ms;');
start_nginx();

my $fa = facility();
my $ea = extension($fa);
my $fb = facility();
my $eb = extension($fb);
my %K = (al => ext_key(fac => $fa, ext => $ea, live => 1), as => ext_key(fac => $fa, ext => $ea, live => 0),
         bl => ext_key(fac => $fb, ext => $eb, live => 1));

# --- the relay ---------------------------------------------------------------------------
my @paid;
for my $c (['al', $fa, 1], ['al', $fa, 1], ['as', $fa, 0], ['bl', $fb, 1]) {
    my $i = invoice($c->[1], $c->[2], 250);
    my $x = post(record_path($i), $K{$c->[0]}, {reference => "ev-$i", amount => 250, method => 'cash'});
    is $x->{status}, 200, "record ($c->[0]): 200" or diag diag_resp($x);
    push @paid, $i;
}
ok wait_until(5, sub { pending_events() == 0 }), 'every event is marked relayed within a few seconds';
my %rows = map { $_->[0] => $_ } @{psql("SELECT id, facility_id, livemode::text, type, data::text FROM ext_events")};
is scalar(keys %rows), 4, 'four events in the outbox';

my %streams = (
    'A live'    => stream(stream_key($fa, 1)),
    'A sandbox' => stream(stream_key($fa, 0)),
    'B live'    => stream(stream_key($fb, 1)),
    'B sandbox' => stream(stream_key($fb, 0)),
);
is scalar(@{$streams{'A live'}}), 2, 'A live stream: 2 entries';
is scalar(@{$streams{'A sandbox'}}), 1, 'A sandbox stream: 1 entry';
is scalar(@{$streams{'B live'}}), 1, 'B live stream: 1 entry';
is scalar(@{$streams{'B sandbox'}}), 0, 'B sandbox stream: empty';
my %want_fac = ('A live' => $fa, 'A sandbox' => $fa, 'B live' => $fb);
for my $s (sort keys %want_fac) {
    for my $e (@{$streams{$s}}) {
        is_deeply $e->{fields}, [qw(event id)], "$s: fields id and event";
        my $ev = $e->{event} || {};
        is_deeply [sort keys %$ev], [sort qw(id type created_at facility_id livemode data)],
            "$s: event {id, type, created_at, facility_id, livemode, data}";
        is $ev->{id}, $e->{id}, "$s: the field id is the event's id";
        ok $rows{$e->{id} // ''}, "$s: the id is the outbox row's";
        is $ev->{type}, 'billing.payment_completed', "$s: type";
        is $ev->{facility_id}, $want_fac{$s}, "$s: facility_id";
        is !!$ev->{livemode}, $s =~ /live/ ? 1 : '', "$s: livemode";
        ok JSON::PP::is_bool($ev->{livemode}), "$s: livemode a boolean";
        like $ev->{created_at} // '', qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/, "$s: created_at";
        my $inv = ($ev->{data} || {})->{invoice} || {};
        ok((grep { $_ eq ($inv->{id} // '') } @paid), "$s: data.invoice is a paid invoice");
        is $inv->{status}, 'paid', "$s: data.invoice.status paid";
    }
}
sleep 0.5;
is redis_cmd('XLEN', stream_key($fa, 1)), 2, 'relayed once: no new entries on later relay rounds';

# --- Redis stopped -----------------------------------------------------------------------
my $pend = invoice($fa, 1, 300);
my $reload = extension($fa, 'reloading');
my $kc = ext_key(fac => $fa, ext => $reload, privs => ['ext:control:write']);
my $KD = ext_key(fac => $fa, ext => $ea);
# An event written just before the stop: relayed before it (then gone with Redis's memory:
# the test Redis keeps nothing over a restart) or after the return.
my $before_inv = invoice($fa, 1, 10);
is post(record_path($before_inv), $KD, {reference => 'before', amount => 10})->{status}, 200,
   'a payment just before Redis stops';
my $before_id = one("SELECT id FROM ext_events WHERE data->'invoice'->>'id' = '$before_inv'");
# An event claimed by a relay (another host's) whose lease runs out while Redis is down.
my $leased_id = one("INSERT INTO ext_events (facility_id, livemode, type, data, claimed_until)
    VALUES ('$fa', true, 'billing.payment_completed', '{\"n\": 0}', now() + interval '1 second') RETURNING id");

redis_stop();
my $before_relayed = one("SELECT relayed_at IS NOT NULL FROM ext_events WHERE id = '$before_id'") eq 't';
diag 'the event written just before the stop was ' . ($before_relayed ? '' : 'not ') . 'relayed before it';
my $events0 = one("SELECT count(*) FROM ext_events");
my $payments0 = one("SELECT count(*) FROM payments");

my $x = post(record_path($pend), $KD, {reference => 'down', amount => 300});
check_err($x, 500, 'internal_error', undef, 'Redis down: record');
cmp_ok $x->{elapsed}, '<', 2, sprintf('Redis down: record answered in %.3f s', $x->{elapsed});
ok !exists $x->{headers}{'idempotent-replayed'}, 'Redis down: not a replay';
check_err(post(fail_path($pend), $KD, {reason => 'down'}), 500, 'internal_error', undef, 'Redis down: fail');
check_err(post('/v1/ext/control/drain-complete', $kc), 500, 'internal_error', undef, 'Redis down: drain-complete');
is_deeply psql("SELECT status, reference, last_failure FROM invoices WHERE id = '$pend'")->[0],
    ['pending_payment', undef, undef], 'Redis down: the invoice is untouched';
is one("SELECT count(*) FROM payments"), $payments0, 'Redis down: no payment row';
is one("SELECT count(*) FROM ext_events"), $events0, 'Redis down: no event';
is one("SELECT status FROM extensions WHERE id = '$reload'"), 'reloading', 'Redis down: the extension still reloading';

my $g = req(GET => invoice_path($pend), $KD);
is $g->{status}, 200, 'Redis down: GET works' or diag diag_resp($g);
is $g->{headers}{'ratelimit-policy'}, '"default";q=120;w=60', 'Redis down: GET has RateLimit-Policy';
like $g->{headers}{ratelimit} // '', qr/^"default";r=\d+;t=\d+$/, 'Redis down: GET has RateLimit';

# The per-worker fallback: the same numbers, 120 at once (one worker here).
{
    my $KF = ext_key(fac => $fa, ext => $ea);
    my @r = parallel_requests(map { req_spec(GET => invoice_path($pend), $KF) } 1 .. 125);
    my $ok = grep { $_->{status} == 200 } @r;
    my @lim = grep { $_->{status} == 429 } @r;
    is $ok, 120, 'Redis down: a burst of 125 GETs, 120 accepted by the fallback limit';
    is scalar(@lim), 5, 'Redis down: 5 refused with 429';
    is scalar(grep { ($_->{headers}{'retry-after'} // '') =~ /^[1-9]\d*$/ } @lim), scalar(@lim),
       'Redis down: each 429 has Retry-After >= 1';
    is scalar(grep { $_->{status} != 200 && $_->{status} != 429 } @r), 0, 'Redis down: nothing else';
}

# Events written while Redis is down (by another writer of the outbox).
my @down_ids = map { $_->[0] } @{psql("INSERT INTO ext_events (facility_id, livemode, type, data) VALUES
    ('$fa', true, 'billing.payment_completed', '{\"n\": 1}'),
    ('$fa', false, 'billing.payment_completed', '{\"n\": 2}'),
    ('$fb', true, 'billing.payment_completed', '{\"n\": 3}') RETURNING id")};
sleep 1.5;    # relay rounds fail meanwhile; the other relay's lease runs out
is one("SELECT count(*) FROM ext_events WHERE relayed_at IS NOT NULL AND id IN ('" . join("','", @down_ids, $leased_id) . "')"), 0,
   'Redis down: the new events are not marked relayed';

redis_start();
my $t0 = time;
ok wait_until(10, sub { pending_events() == 0 }),
   sprintf('Redis back: every pending event relayed (%.1f s)', time - $t0)
    or diag explain psql("SELECT id, claimed_until, now() FROM ext_events WHERE relayed_at IS NULL");
my @must = (@down_ids, $leased_id, $before_relayed ? () : $before_id);
my %in;
$in{$_->{id} // ''}++ for map { @{stream(stream_key(@$_))} } [$fa, 1], [$fa, 0], [$fb, 1];
ok $in{$_}, "Redis back: event $_ is in its stream" for @must;
is scalar(keys %in), scalar(@must), 'Redis back: nothing else in the (new) streams';

# Writes work again once Redis is back.
my $back;
ok wait_until(5, sub { $back = post(record_path($pend), $KD, {reference => 'back', amount => 300});
                       $back->{status} == 200 }), 'Redis back: record 200' or diag diag_resp($back);
is one("SELECT count(*) FROM payments WHERE invoice_id = '$pend'"), 1, 'one payment';
ok wait_until(5, sub { grep { ($_->{event}{data}{invoice}{id} // '') eq $pend } @{stream(stream_key($fa, 1))} }),
   'its event reaches the stream';

done_testing();
