# Events and Redis outages on /v1/ext: the outbox relays billing.payment_completed to the
# Redis Stream of its facility and mode (cms:events:{<facility>}:live|sandbox) as
# `id <event id> event <json {id, type, created_at, facility_id, livemode, data}>` and marks
# the row relayed. With Redis stopped: POSTs answer 500 internal_error and write nothing,
# GETs keep working under the per-worker fallback limit (120 at once), and every event
# written before or during the outage reaches its stream after Redis returns. Relayed events
# past the events' retention are purged; one not yet relayed never is (sql/0054).
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:ext);
use Cms::Prom;
use JSON::PP ();
use Time::HiRes qw(time sleep);
use IO::Socket::INET ();

my $JSON = JSON::PP->new->utf8->canonical;

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

# absence checks ("not relayed again", "not relayed while Redis is down") wait for relay
# rounds to have run, counted by cms_status, rather than sleep
set_conf_defaults(workers => 1,
                  http_config => 'cms_events_interval 200ms; cms_purge_interval 300ms;'
                                 . ' cms_webhook_delivery off retention=1h;',
                  config => "location = /status { cms_status; }\n");
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
ok Cms::Prom::wait_job_runs('relay', 2, 10), 'two more relay rounds ran';
is redis_cmd('XLEN', stream_key($fa, 1)), 2, 'relayed once: no new entries on later relay rounds';

# --- one event Redis refuses does not hold back the rest --------------------------------
# A key of another type under facility B's sandbox stream name: its XADD fails (WRONGTYPE).
redis_cmd('SET', stream_key($fb, 0), 'not a stream');
my $bad = one("INSERT INTO ext_events (facility_id, livemode, type, data)
    VALUES ('$fb', false, 'billing.payment_completed', '{\"n\": -1}') RETURNING id");
my @good = map { one("INSERT INTO ext_events (facility_id, livemode, type, data)
    VALUES ('$fa', true, 'billing.payment_completed', '{\"n\": $_}') RETURNING id") } 1 .. 20;
ok wait_until(10, sub { one("SELECT count(*) FROM ext_events WHERE relayed_at IS NULL
                             AND id <> '$bad'") == 0 }),
   'the 20 events behind a refused one are relayed';
my %in_a = map { $_->{id} => 1 } @{stream(stream_key($fa, 1))};
is scalar(grep { $in_a{$_} } @good), 20, '... each in its stream';
is one("SELECT relayed_at IS NULL FROM ext_events WHERE id = '$bad'"), 't',
   'the refused one waits (tried again every few seconds)';
redis_cmd('DEL', stream_key($fb, 0));
ok wait_until(15, sub { one("SELECT relayed_at IS NOT NULL FROM ext_events WHERE id = '$bad'") eq 't' }),
   'and is relayed once its stream can be written';
is scalar(grep { $_->{id} eq $bad } @{stream(stream_key($fb, 0))}), 1, '... once';

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
check_ext_err($x, 500, 'internal_error', undef, 'Redis down: record');
cmp_ok $x->{elapsed}, '<', 2, sprintf('Redis down: record answered in %.3f s', $x->{elapsed});
ok !exists $x->{headers}{'idempotent-replayed'}, 'Redis down: not a replay';
check_ext_err(post(fail_path($pend), $KD, {reason => 'down'}), 500, 'internal_error', undef, 'Redis down: fail');
check_ext_err(post('/v1/ext/control/drain-complete', $kc), 500, 'internal_error', undef, 'Redis down: drain-complete');
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
# the other relay's lease runs out; relay rounds after that fail while Redis is down
ok wait_until(10, sub { one("SELECT coalesce(claimed_until < now(), true) FROM ext_events WHERE id = '$leased_id'") eq 't' }),
   'the other relay\'s lease ran out';
ok Cms::Prom::wait_job_runs('relay', 2, 10), 'two relay rounds ran since';
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

# --- retention (sql/0054): relayed events past it go, an event not yet relayed stays ----------

{
    my $ins = sub {
        my ($n, $relayed, $claimed) = @_;
        return one("INSERT INTO ext_events (facility_id, livemode, type, data, created_at,"
                   . " relayed_at, claimed_until) VALUES ('$fa', true, 'billing.payment_completed',"
                   . " '{\"n\": $n}', now() - interval '2 hours', $relayed, $claimed) RETURNING id");
    };
    my $old = $ins->(20, "now() - interval '2 hours'", 'NULL');
    # held by another relay's lease for the test's length: it stays pending
    my $waiting = $ins->(21, 'NULL', "now() + interval '1 hour'");
    my $recent = one("INSERT INTO ext_events (facility_id, livemode, type, data, relayed_at)"
                     . " VALUES ('$fa', true, 'billing.payment_completed', '{\"n\": 22}', now())"
                     . " RETURNING id");
    ok wait_until(10, sub { one("SELECT count(*) FROM ext_events WHERE id = '$old'") == 0 }),
       'a relayed event past the retention is purged';
    ok Cms::Prom::wait_job_runs('purge', 2, 10), 'two purge rounds ran since';
    is one("SELECT count(*) FROM ext_events WHERE id = '$waiting'"), 1,
       'an event not yet relayed stays, however old';
    is one("SELECT count(*) FROM ext_events WHERE id = '$recent'"), 1, 'a recent relayed event stays';
}

done_testing();
