# Idempotency keys on every /v1/ext POST (DESIGN.md, Extensions): the header's rules (1-255
# printable ASCII, else 400 invalid_request param Idempotency-Key, whose message says
# the header is required when none was sent); the first answer
# (2xx-4xx) replayed byte for byte with Idempotent-Replayed: true; a different body or
# path under the same key -> 409 idempotency_conflict; a request in flight -> 409
# idempotency_in_progress with Retry-After: 1; the scope (credential + route); 50
# concurrent identical POSTs on 2 workers -> one payment, one event, every answer the
# original or in_progress; a rolled-back 5xx is not kept; the database copy of the key
# answers when the Redis record is lost; after cms_idempotency_ttl the key works afresh;
# and (FAULTS build) a worker killed between the commit and the Redis write: the retry
# gets the original answer and no second payment is made.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:ext);
use Time::HiRes qw(time sleep);

sub payments { one("SELECT count(*) FROM payments WHERE invoice_id = '$_[0]'" . ($_[1] ? " AND kind = '$_[1]'" : '')) }
sub events { one("SELECT count(*) FROM ext_events WHERE data->'invoice'->>'id' = '$_[0]'") }
sub replayed { ($_[0]{headers}{'idempotent-replayed'} // '') eq 'true' }
# The same answer: status, body bytes and content type.
sub same_answer {
    my ($got, $orig, $name) = @_;
    my $ok = $got->{status} == $orig->{status} && $got->{body} eq $orig->{body}
        && ($got->{headers}{'content-type'} // '') eq ($orig->{headers}{'content-type'} // '');
    ok $ok, "$name: the original answer byte for byte"
        or diag "original $orig->{status} $orig->{body}\n     " . diag_resp($got);
    ok replayed($got), "$name: Idempotent-Replayed: true";
}

set_conf_defaults(workers => 2);
start_nginx();

my $fa = facility();
my $ea = extension($fa);
my $fresh = sub { ext_key(fac => $fa, ext => $ea) };

# --- the header --------------------------------------------------------------------------

{
    my $K = $fresh->();
    my $inv = invoice($fa, 1, 100);
    my $body = {reference => 'h', amount => 100};
    for my $c (['missing', undef], ['empty', ''], ['256 characters', 'k' x 256],
               ['a control character', "ab\x01cd"], ['DEL', "ab\x7fcd"], ['a tab inside', "ab\tcd"],
               ['non-ASCII', "caf\xc3\xa9"]) {
        my $x = req(POST => record_path($inv), $K, $body,
                    defined $c->[1] ? ('Idempotency-Key' => $c->[1]) : ());
        check_ext_err($x, 400, 'invalid_request', 'Idempotency-Key', "Idempotency-Key $c->[0]");
        ok !exists $x->{headers}{'idempotent-replayed'}, "Idempotency-Key $c->[0]: not a replay";
        # a missing header is told as required; one sent is told what it must be
        like((($x->{json} // {})->{error} // {})->{message} // '',
             defined $c->[1] ? qr/^Idempotency-Key must be 1 to 255 printable ASCII characters$/
                             : qr/^The Idempotency-Key header is required$/,
             "Idempotency-Key $c->[0]: the message");
    }
    check_ext_err(req(POST => fail_path($inv), $K, {reason => 'x'}), 400, 'invalid_request', 'Idempotency-Key',
              'fail without Idempotency-Key');
    check_ext_err(req(POST => '/v1/ext/control/drain-complete', $K), 400, 'invalid_request', 'Idempotency-Key',
              'drain-complete without Idempotency-Key');
    is payments($inv), 0, 'nothing written without a valid key';
    my $x = post(record_path($inv), $K, $body, 'Idempotency-Key' => join('', map { chr(32 + $_ % 95) } 0 .. 254));
    is $x->{status}, 200, 'a 255-character key of every printable character: 200' or diag diag_resp($x);
    my $y = post(fail_path(invoice($fa, 1, 1)), $K, {reason => 'x'}, 'Idempotency-Key' => 'a');
    is $y->{status}, 200, 'a 1-character key: 200' or diag diag_resp($y);
    # GETs take no key and are not affected by one.
    my $g = req(GET => invoice_path($inv), $K, undef, 'Idempotency-Key' => 'a');
    is $g->{status}, 200, 'GET with an Idempotency-Key: 200';
    ok !replayed($g), 'GET is never a replay';
}

# --- replay, conflict, scope -------------------------------------------------------------

my $K = $fresh->();
my $inv = invoice($fa, 1, 2500);
my $key = idem();
my $body = '{"reference":"ref-A","amount":2500,"method":"card"}';
my $first = post(record_path($inv), $K, $body, 'Idempotency-Key' => $key);
is $first->{status}, 200, 'first record: 200' or diag diag_resp($first);
ok !replayed($first), 'the first answer is not a replay';
for my $n (1 .. 3) {
    my $x = post(record_path($inv), $K, $body, 'Idempotency-Key' => $key);
    same_answer($x, $first, "repeat $n");
    like $x->{headers}{'ratelimit'} // '', qr/^"default";r=\d+;t=\d+$/, "repeat $n: RateLimit header";
}
is payments($inv), 1, 'one payment row';
is events($inv), 1, 'one event';

my %conflicts = (
    'another reference'       => '{"reference":"ref-B","amount":2500,"method":"card"}',
    'the same JSON, spaced'   => '{"reference": "ref-A", "amount": 2500, "method": "card"}',
    'fields in another order' => '{"amount":2500,"reference":"ref-A","method":"card"}',
    'no method'               => '{"reference":"ref-A","amount":2500}',
);
for my $c (sort keys %conflicts) {
    my $x = post(record_path($inv), $K, $conflicts{$c}, 'Idempotency-Key' => $key);
    check_ext_err($x, 409, 'idempotency_conflict', 'Idempotency-Key', "same key, $c");
    ok !replayed($x), "same key, $c: not a replay";
}
{
    my $other = invoice($fa, 1, 2500);
    my $x = post(record_path($other), $K, $body, 'Idempotency-Key' => $key);
    check_ext_err($x, 409, 'idempotency_conflict', 'Idempotency-Key', 'same key and body, another invoice');
    is payments($other), 0, 'the other invoice is not paid';
    # The scope is the credential and the route: the fail route and another key are apart.
    my $x2 = post(fail_path($other), $K, {reason => 'card_declined'}, 'Idempotency-Key' => $key);
    is $x2->{status}, 200, 'same key on the fail route: its own request (200)' or diag diag_resp($x2);
    ok !replayed($x2), 'not a replay';
    my $K2 = $fresh->();
    my $x3 = post(record_path($other), $K2, $body, 'Idempotency-Key' => $key);
    is $x3->{status}, 200, 'same key, another credential: its own request (200)' or diag diag_resp($x3);
    ok !replayed($x3), 'not a replay';
    is payments($other, 'completed'), 1, 'the other invoice paid once, by the other credential';
}
is payments($inv), 1, 'still one payment row on the first invoice';

# A 4xx is an answer too: kept and replayed.
{
    my $i = invoice($fa, 1, 900);
    my $k = idem();
    my $a = post(record_path($i), $K, '{"reference":"low","amount":899}', 'Idempotency-Key' => $k);
    check_ext_err($a, 422, 'validation_error', 'amount', '422 first');
    same_answer(post(record_path($i), $K, '{"reference":"low","amount":899}', 'Idempotency-Key' => $k),
                $a, '422 repeated');
    check_ext_err(post(record_path($i), $K, '{"reference":"low","amount":900}', 'Idempotency-Key' => $k), 409,
              'idempotency_conflict', 'Idempotency-Key', 'the corrected body under the 422\'s key');
    my $nf = post(record_path('00000000-0000-4000-8000-000000000001'), $K, '{"reference":"x","amount":1}',
                  'Idempotency-Key' => $k . '-404');
    check_ext_err($nf, 404, 'not_found', undef, '404 first');
    same_answer(post(record_path('00000000-0000-4000-8000-000000000001'), $K, '{"reference":"x","amount":1}',
                     'Idempotency-Key' => $k . '-404'), $nf, '404 repeated');
    is payments($i), 0, 'nothing paid';
}

# --- in flight ---------------------------------------------------------------------------
# The invoice row is locked from another session, so the first request holds its claim.
{
    my $i = invoice($fa, 1, 40);
    my $k = idem();
    my $b = '{"reference":"slow","amount":40}';
    my $hold = lock_invoice_row($i);
    ok invoice_row_locked($i), 'the invoice row is locked';
    my $h = start_request(req_spec(POST => record_path($i), $K, $b, 'Idempotency-Key' => $k)->@{qw(method path headers body)});
    ok waiting_on_lock(), 'the first request (its key claimed) waits on the row';
    my $x = post(record_path($i), $K, $b, 'Idempotency-Key' => $k);
    check_ext_err($x, 409, 'idempotency_in_progress', 'Idempotency-Key', 'same key while the first is in flight');
    is $x->{headers}{'retry-after'}, '1', 'in progress: Retry-After: 1';
    ok !replayed($x), 'in progress: not a replay';
    my $y = post(record_path($i), $K, '{"reference":"other","amount":40}', 'Idempotency-Key' => $k);
    ok $y->{status} == 409 && (($y->{json}{error} || {})->{type} // '') =~ /^idempotency_(conflict|in_progress)$/,
       'another body while the first is in flight: 409 idempotency_conflict or _in_progress' or diag diag_resp($y);
    ok waiting_on_lock(), 'the first request still waits on the row';
    ok release_hold($hold), 'the row released';
    my $f = finish_request($h);
    is $f->{status}, 200, 'the first request completes: 200' or diag diag_resp($f);
    same_answer(post(record_path($i), $K, $b, 'Idempotency-Key' => $k), $f, 'after it completed');
    is payments($i), 1, 'one payment';
}

# --- 50 concurrent identical POSTs -------------------------------------------------------
{
    my $KC = $fresh->();
    my $i = invoice($fa, 1, 5000);
    my $k = idem();
    my $spec = req_spec(POST => record_path($i), $KC, '{"reference":"TX-50","amount":5000,"method":"mobile_money"}',
                        'Idempotency-Key' => $k);
    my @r = parallel_requests(map { $spec } 1 .. 50);
    my @ok = grep { $_->{status} == 200 } @r;
    my @busy = grep { $_->{status} == 409 && (($_->{json}{error} || {})->{type} // '') eq 'idempotency_in_progress' } @r;
    my @orig = grep { !replayed($_) } @ok;
    is scalar(@ok) + scalar(@busy), 50, 'every answer is a 200 or 409 idempotency_in_progress'
        or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 200 && $_->{status} != 409 } @r;
    is scalar(@orig), 1, 'exactly one answer is not a replay (the original)';
    my $o = $orig[0] || $ok[0] || {body => ''};
    is_deeply $o->{json}, {id => $i, status => 'paid', reference => 'TX-50'}, 'the original answer';
    is scalar(grep { $_->{body} ne $o->{body} } @ok), 0, 'every 200 is byte-identical to the original';
    is scalar(grep { ($_->{headers}{'retry-after'} // '') ne '1' } @busy), 0, 'every in_progress has Retry-After: 1';
    diag sprintf '50 concurrent: %d original, %d replayed, %d in progress',
        scalar(@orig), scalar(@ok) - scalar(@orig), scalar(@busy);
    is payments($i), 1, 'exactly one payment row';
    is events($i), 1, 'exactly one event';
    same_answer(post(record_path($i), $KC, $spec->{body}, 'Idempotency-Key' => $k), $o, 'afterwards');
}

# Distinct keys racing for one invoice: one payment, the others see invalid_state.
{
    my $KR = $fresh->();
    my $i = invoice($fa, 1, 20);
    my @r = parallel_requests(map { req_spec(POST => record_path($i), $KR, qq({"reference":"race-$_","amount":20}),
                                             'Idempotency-Key' => idem()) } 1 .. 20);
    is scalar(grep { $_->{status} == 200 } @r), 1, '20 keys racing for one invoice: one 200';
    is scalar(grep { $_->{status} == 409 && ((($_->{json} || {})->{error} || {})->{type} // '') eq 'invalid_state' } @r),
       19, 'the 19 others: 409 invalid_state';
    is payments($i), 1, 'one payment';
    is events($i), 1, 'one event';
    # The Redis records: a hash tag on the credential, and they expire.
    my $kid = key_id($KR);
    my @keys = grep { length } split /\n/, redis_cli('--scan', '--pattern', "cms:idem:{$kid}:*");
    is scalar(@keys), 20, 'one Redis record per key, under cms:idem:{<key id>}:';
    my $pttl = redis_cli('PTTL', $keys[0] // 'none');
    ok $pttl > 0 && $pttl <= 86_400_000, "the record expires (PTTL $pttl ms, 24 h at most)";
}

# --- the database copy: the Redis record lost --------------------------------------------
{
    my $i = invoice($fa, 1, 60);
    my $k = idem();
    my $b = '{"reference":"lost","amount":60}';
    my $a = post(record_path($i), $K, $b, 'Idempotency-Key' => $k);
    is $a->{status}, 200, 'record: 200' or diag diag_resp($a);
    ok forget_redis($K) > 0, 'the Redis records of the key are gone';
    same_answer(post(record_path($i), $K, $b, 'Idempotency-Key' => $k), $a, 'Redis record lost: retry');
    is payments($i), 1, 'still one payment';
    forget_redis($K);
    check_ext_err(post(record_path($i), $K, '{"reference":"lost-2","amount":60}', 'Idempotency-Key' => $k), 409,
              'idempotency_conflict', 'Idempotency-Key', 'Redis record lost: another body is still a conflict');
    # That conflict must not take the key's place: the original request still gets its answer.
    same_answer(post(record_path($i), $K, $b, 'Idempotency-Key' => $k), $a,
                'Redis record lost, then a conflicting body: the original retry');
    forget_redis($K);
    my $j = invoice($fa, 1, 60);
    check_ext_err(post(record_path($j), $K, $b, 'Idempotency-Key' => $k), 409, 'idempotency_conflict',
              'Idempotency-Key', 'Redis record lost: another invoice under the key is still a conflict');
    is payments($j), 0, 'and it is not paid';
    # the fail route has the same database copy
    my $fk = idem();
    my $fa1 = post(fail_path($j), $K, {reason => 'timeout'}, 'Idempotency-Key' => $fk);
    is $fa1->{status}, 200, 'fail: 200' or diag diag_resp($fa1);
    forget_redis($K);
    same_answer(post(fail_path($j), $K, {reason => 'timeout'}, 'Idempotency-Key' => $fk), $fa1,
                'fail, Redis record lost: retry');
    is payments($j, 'failed'), 1, 'one failed-attempt row';
}

# drain-complete is idempotent too
{
    my $kc = ext_key(fac => $fa, ext => extension($fa, 'reloading'), privs => ['ext:control:write']);
    my $k = idem();
    my $a = post('/v1/ext/control/drain-complete', $kc, undef, 'Idempotency-Key' => $k);
    is $a->{status}, 200, 'drain-complete: 200' or diag diag_resp($a);
    same_answer(post('/v1/ext/control/drain-complete', $kc, undef, 'Idempotency-Key' => $k), $a, 'drain-complete repeated');
    check_ext_err(post('/v1/ext/control/drain-complete', $kc, '{}', 'Idempotency-Key' => $k), 409,
              'idempotency_conflict', 'Idempotency-Key', 'drain-complete: same key, a body this time');
}

# --- a rolled-back 5xx is not kept -------------------------------------------------------
{
    psql(q{CREATE FUNCTION t_boom() RETURNS trigger LANGUAGE plpgsql AS
           $$ BEGIN IF NEW.reference = 'boom' THEN RAISE EXCEPTION 'test trigger: boom'; END IF;
                    RETURN NEW; END $$;
           CREATE TRIGGER t_boom BEFORE INSERT ON payments FOR EACH ROW EXECUTE FUNCTION t_boom();});
    allow_error_log(qr/test trigger: boom/);
    my $i = invoice($fa, 1, 10);
    my $k = idem();
    my $b = '{"reference":"boom","amount":10}';
    my $x = post(record_path($i), $K, $b, 'Idempotency-Key' => $k);
    check_ext_err($x, 500, 'internal_error', undef, 'the write fails in the database: 500');
    is_deeply psql("SELECT status, reference FROM invoices WHERE id = '$i'")->[0], ['pending_payment', undef],
        'rolled back: the invoice is still pending';
    is events($i), 0, 'no event';
    psql('DROP TRIGGER t_boom ON payments');
    my $y = post(record_path($i), $K, $b, 'Idempotency-Key' => $k);
    is $y->{status}, 200, 'the retry with the same key runs again: 200' or diag diag_resp($y);
    ok !replayed($y), 'the retry is not a replay of the 500';
    is payments($i), 1, 'one payment';
}

# --- retention: cms_idempotency_ttl --------------------------------------------------------
# An hour: no check made within it can outlive it, however slow the machine. The test ends
# the retention itself, as the clock would: the Redis records are deleted (their expiry) and
# the payment rows' created_at moved back past it (PostgreSQL's copy of the scope).
start_nginx(http_config => "cms_idempotency_ttl 1h;");
{
    my $KT = $fresh->();
    # a kept 4xx
    my $i1 = invoice($fa, 1, 500);
    my $k1 = idem();
    my $a = post(record_path($i1), $KT, '{"reference":"t1","amount":1}', 'Idempotency-Key' => $k1);
    check_ext_err($a, 422, 'validation_error', 'amount', 'ttl 1h: a 422');
    same_answer(post(record_path($i1), $KT, '{"reference":"t1","amount":1}', 'Idempotency-Key' => $k1), $a,
                'ttl 1h: within the retention');
    # a kept 200
    my $i2 = invoice($fa, 1, 500);
    my $i3 = invoice($fa, 1, 500);
    my $k2 = idem();
    my $b2 = '{"reference":"t2","amount":500}';
    my $p = post(record_path($i2), $KT, $b2, 'Idempotency-Key' => $k2);
    is $p->{status}, 200, 'ttl 1h: a payment' or diag diag_resp($p);
    same_answer(post(record_path($i2), $KT, $b2, 'Idempotency-Key' => $k2), $p, 'ttl 1h: the payment within the retention');
    check_ext_err(post(record_path($i3), $KT, $b2, 'Idempotency-Key' => $k2), 409, 'idempotency_conflict',
              'Idempotency-Key', 'ttl 1h: the key on another invoice within the retention');
    my $kept = idem_records($KT, 'D');
    is scalar(keys %$kept), 2, 'two answers kept in Redis';
    ok !grep({ $_ <= 1_800_000 || $_ > 3_600_000 } values %$kept),
       'each for cms_idempotency_ttl (1h), not the 24 h default' or diag explain $kept;
    # the retention ends
    redis_cli('DEL', keys %$kept);
    psql("UPDATE payments SET created_at = created_at - interval '1 hour' WHERE invoice_id = '$i2'");
    # the 422's key with another body runs afresh
    my $x = post(record_path($i1), $KT, '{"reference":"t1","amount":500}', 'Idempotency-Key' => $k1);
    is $x->{status}, 200, 'after the retention the 422\'s key works afresh: 200' or diag diag_resp($x);
    ok !replayed($x), 'not a replay';
    # After the retention the key is forgotten: the same request runs again (the invoice is
    # paid: 409 invalid_state), and the key may be used for another invoice.
    my $y = post(record_path($i2), $KT, $b2, 'Idempotency-Key' => $k2);
    check_ext_err($y, 409, 'invalid_state', undef, 'after the retention the paid request runs afresh');
    ok !replayed($y), 'not a replay' or diag $y->{raw};
    # $y used the key afresh and its answer (a 409) is kept: the key now belongs to it,
    # so on another invoice it conflicts again, for a new retention.
    my $z = post(record_path($i3), $KT, $b2, 'Idempotency-Key' => $k2);
    check_ext_err($z, 409, 'idempotency_conflict', 'Idempotency-Key',
              'after the retention the key is taken again by the request that used it');
    is payments($i2), 1, 'the first invoice was paid once';
}

# --- kill -9 between the commit and the Redis write (FAULTS build) ------------------------
SKIP: {
    skip 'the fault point needs the FAULTS build (TEST_CMS_FAULTS=1)', 1 unless $ENV{TEST_CMS_FAULTS};
    # a lock of an hour: the retries "within the lock" cannot outlive it, however slow the
    # machine; the test ends it by deleting the claims, which is what their expiry does
    start_nginx(http_config => "cms_idempotency_lock 1h;");
    allow_error_log(qr/exited on signal 9/);
    my $KF = $fresh->();
    # what a normal success looks like
    my $n = invoice($fa, 1, 75);
    my $normal = post(record_path($n), $KF, '{"reference":"norm","amount":75}');
    is $normal->{status}, 200, 'a normal record: 200';
    my $i = invoice($fa, 1, 75);
    my $fi = invoice($fa, 1, 75);
    my ($k, $fk) = (idem(), idem());
    my $b = '{"reference":"crash-1","amount":75}';
    # One fault, then the other: each kills the worker that runs it.
    my @workers = worker_pids();
    my $r1 = post(record_path($i), $KF, $b, 'Idempotency-Key' => $k, 'X-Cms-Fault' => 'after-commit');
    is $r1->{status}, 0, 'fault (record): the connection closes without an answer' or diag diag_resp($r1);
    is payments($i, 'completed'), 1, 'fault (record): the payment was committed';
    # The claim outlives the worker for cms_idempotency_lock.
    my $busy = post(record_path($i), $KF, $b, 'Idempotency-Key' => $k);
    check_ext_err($busy, 409, 'idempotency_in_progress', 'Idempotency-Key', 'record retried within the lock');
    my $r2 = post(fail_path($fi), $KF, '{"reason":"crash"}', 'Idempotency-Key' => $fk, 'X-Cms-Fault' => 'after-commit');
    is $r2->{status}, 0, 'fault (fail): the connection closes without an answer' or diag diag_resp($r2);
    is payments($fi, 'failed'), 1, 'fault (fail): the failed attempt was committed';
    $busy = post(fail_path($fi), $KF, '{"reason":"crash"}', 'Idempotency-Key' => $fk);
    check_ext_err($busy, 409, 'idempotency_in_progress', 'Idempotency-Key', 'fail retried within the lock');
    ok wait_until(5, sub { my @w = worker_pids(); @w == 2 && join(',', @w) ne join(',', @workers) }),
       'the master started new workers';
    my $claims = idem_records($KF, 'P');
    is scalar(keys %$claims), 2, 'two claims held, one for each request the fault ended';
    ok !grep({ $_ <= 1_800_000 || $_ > 3_600_000 } values %$claims),
       'each for cms_idempotency_lock (1h), not the 30 s default' or diag explain $claims;
    # the lock ends
    redis_cli('DEL', keys %$claims);
    my $x = post(record_path($i), $KF, $b, 'Idempotency-Key' => $k);
    is $x->{status}, 200, 'retry after the lock: 200' or diag diag_resp($x);
    ok replayed($x), 'retry after the lock: Idempotent-Replayed: true';
    (my $want = $normal->{body}) =~ s/\Q$n\E/$i/;
    $want =~ s/norm/crash-1/;
    is $x->{body}, $want, 'the answer is the one a normal success gives, byte for byte';
    is_deeply $x->{json}, {id => $i, status => 'paid', reference => 'crash-1'}, '{id, status: paid, reference}';
    my $y = post(fail_path($fi), $KF, '{"reason":"crash"}', 'Idempotency-Key' => $fk);
    is $y->{status}, 200, 'fail retry after the lock: 200' or diag diag_resp($y);
    ok replayed($y), 'fail retry: Idempotent-Replayed: true';
    is_deeply $y->{json}, {id => $fi, status => 'pending_payment', last_failure => 'crash'}, 'fail: the original answer';
    same_answer(post(record_path($i), $KF, $b, 'Idempotency-Key' => $k), $x, 'and again (kept in Redis now)');
    is payments($i), 1, 'no second payment';
    is events($i), 1, 'one event';
    is payments($fi), 1, 'no second failed-attempt row';
}

done_testing();
