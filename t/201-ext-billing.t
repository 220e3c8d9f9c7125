# The billing and control routes of /v1/ext: the invoice object (its fields and types, not
# wrapped), record (pending_payment -> paid, the reference stored, a payment row and a
# billing.payment_completed outbox event in the same transaction), fail (stays
# pending_payment, last_failure kept, no event), the invalid_state answers, every
# validation error (400 invalid_request for a missing field, malformed JSON or an unknown
# field; 422 validation_error with param for a bad value) and that a refused request writes
# nothing; drain-complete moves a reloading extension back to running.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:ext $TS);
use JSON::PP ();
use Time::HiRes qw(time sleep);

my $JSON = JSON::PP->new->utf8->canonical;

# Worker 0's extension tick moves every `installing` extension to `running` each
# cms_events_interval (1 s by default): on a busy machine it would move the
# installing extension of the drain-complete tests below before they look at
# it.  These tests own the extensions' states, so the tick is kept from
# running for the whole file (its own tests are in t/303).
set_conf_defaults(http_config => 'cms_events_interval 1h;');
start_nginx();

my $fa = facility();
my $ea = extension($fa);
my $K = ext_key(fac => $fa, ext => $ea);
my $K2 = ext_key(fac => $fa, ext => $ea);     # a key has 120 requests at once

sub counts {
    my $inv = shift;
    return psql("SELECT (SELECT count(*) FROM payments WHERE invoice_id = '$inv' AND kind = 'completed'),
                        (SELECT count(*) FROM ext_events WHERE data->'invoice'->>'id' = '$inv'),
                        (SELECT status FROM invoices WHERE id = '$inv')")->[0];
}

# --- GET invoice -------------------------------------------------------------------------

my $inv = invoice($fa, 1, '1234.5');
my $r = req(GET => invoice_path($inv), $K);
is $r->{status}, 200, 'GET invoice: 200' or diag diag_resp($r);
my $j = $r->{json} || {};
is_deeply [sort keys %$j],
    [sort qw(id patient_id amount currency status reference last_failure livemode created_at updated_at)],
    'the invoice object itself, with its fields';
is $j->{id}, $inv, 'id';
like $j->{patient_id}, qr/^patient-\d+$/, 'patient_id';
ok $r->{body} =~ /"amount"\s*:\s*1234\.5\s*[,}]/, 'amount is a JSON number (1234.5)' or diag $r->{body};
is $j->{currency}, 'XOF', 'currency';
is $j->{status}, 'pending_payment', 'status pending_payment';
ok exists $j->{reference} && !defined $j->{reference}, 'reference null';
ok exists $j->{last_failure} && !defined $j->{last_failure}, 'last_failure null';
ok JSON::PP::is_bool($j->{livemode}) && $j->{livemode}, 'livemode true';
like $j->{created_at} // '', $TS, 'created_at RFC 3339 UTC';
like $j->{updated_at} // '', $TS, 'updated_at RFC 3339 UTC';
like $r->{headers}{'x-request-id'} // '', qr/^[0-9a-f]{32}$/, 'X-Request-Id';
is_deeply $j, JSON::PP->new->decode(psql("SELECT cms_invoice_json(i)::text FROM invoices i WHERE id = '$inv'")->[0][0]),
    'written in C from the columns: what cms_invoice_json() (sql/0004) makes of the row';

# --- record: validation ------------------------------------------------------------------

my $rp = record_path($inv);
sub rec { post($rp, $K, @_) }
sub rec2 { post($rp, $K2, @_) }

check_ext_err(rec(undef), 400, 'invalid_request', undef, 'record without a body');
check_ext_err(rec('{"reference": "a", "amount": 5'), 400, 'invalid_request', undef, 'truncated JSON');
check_ext_err(rec('not json'), 400, 'invalid_request', undef, 'not JSON');
check_ext_err(rec('[]'), 400, 'invalid_request', undef, 'a JSON array');
check_ext_err(rec('"text"'), 400, 'invalid_request', undef, 'a JSON string');
check_ext_err(rec('null'), 400, 'invalid_request', undef, 'JSON null');
check_ext_err(rec('{"reference": "a", "reference": "b", "amount": 1234.5}'), 400, 'invalid_request',
          undef, 'a duplicated field');
{
    my $x = http(POST => $rp, [Authorization => "Bearer $K", 'Idempotency-Key' => idem(),
                               'Content-Type' => 'text/plain'], '{"reference":"a","amount":1234.5}');
    ok(($x->{status} == 415 || $x->{status} == 400)
       && ((($x->{json} || {})->{error} || {})->{type} // '') eq 'invalid_request',
       'text/plain body: 415 or 400, type invalid_request') or diag diag_resp($x);
}
check_ext_err(rec({amount => 1234.5}), 400, 'invalid_request', 'reference', 'reference missing');
check_ext_err(rec({reference => 'a'}), 400, 'invalid_request', 'amount', 'amount missing');
check_ext_err(rec({}), 400, 'invalid_request', undef, 'empty object');
check_ext_err(rec({reference => 'a', amount => 1234.5, currency => 'XOF'}), 400, 'invalid_request',
          'currency', 'unknown field currency');
check_ext_err(rec({reference => 'a', amount => 1234.5, status => 'paid'}), 400, 'invalid_request',
          'status', 'unknown field status');

for my $bad (['a number', '123'], ['empty', '""'], ['null', 'null'], ['an object', '{}'],
             ['an array', '["a"]'], ['true', 'true'], ['256 bytes', '"' . ('r' x 256) . '"']) {
    check_ext_err(rec(qq({"reference": $bad->[1], "amount": 1234.5})), 422, 'validation_error', 'reference',
              "reference $bad->[0]");
}
for my $bad (['a string', '"1234.5"'], ['zero', '0'], ['zero point zero', '0.0'], ['negative', '-5'],
             ['below the invoice', '1234.4'], ['one unit below', '1233'], ['true', 'true'],
             ['an object', '{}'], ['an array', '[1234.5]'], ['tiny', '1e-9']) {
    check_ext_err(rec2(qq({"reference": "a", "amount": $bad->[1]})), 422, 'validation_error', 'amount',
              "amount $bad->[0]");
}
for my $bad (['bitcoin', '"bitcoin"'], ['empty', '""'], ['upper case', '"CASH"'], ['a number', '1'],
             ['an array', '["cash"]'], ['with a space', '"mobile money"']) {
    check_ext_err(rec2(qq({"reference": "a", "amount": 1234.5, "method": $bad->[1]})), 422,
              'validation_error', 'method', "method $bad->[0]");
}
is_deeply counts($inv), [0, 0, 'pending_payment'], 'no payment, no event, still pending after the refusals';

# --- record: success ---------------------------------------------------------------------

$r = rec2({reference => 'MM-778899', amount => 1234.5, method => 'mobile_money'});
is $r->{status}, 200, 'record: 200' or diag diag_resp($r);
is_deeply $r->{json}, {id => $inv, status => 'paid', reference => 'MM-778899'},
    'record answers {id, status: paid, reference}';
like $r->{headers}{'content-type'} // '', qr{^application/json}, 'record: JSON';
ok !exists $r->{headers}{'idempotent-replayed'}, 'a first answer is not marked replayed';
is_deeply counts($inv), [1, 1, 'paid'], 'one payment row, one event, invoice paid';
is_deeply psql("SELECT kind, reference, amount::text, method, invoice_id::text, livemode::text
                  FROM payments WHERE invoice_id = '$inv'")->[0],
    ['completed', 'MM-778899', '1234.5', 'mobile_money', $inv, 'true'], 'the payment row';
my $ev = psql("SELECT type, facility_id::text, livemode::text, data::text FROM ext_events
                WHERE data->'invoice'->>'id' = '$inv'")->[0];
is $ev->[0], 'billing.payment_completed', 'event type';
is $ev->[1], $fa, 'event facility';
is $ev->[2], 'true', 'event livemode';
my $data = eval { $JSON->decode($ev->[3]) } || {};
is(($data->{invoice} || {})->{status}, 'paid', 'event data: the paid invoice');
is(($data->{invoice} || {})->{reference}, 'MM-778899', 'event data: its reference');
$r = req(GET => invoice_path($inv), $K2);
is(($r->{json} || {})->{status}, 'paid', 'GET: paid');
is(($r->{json} || {})->{reference}, 'MM-778899', 'GET: reference stored');
cmp_ok(($r->{json} || {})->{updated_at} // '', 'ge', $j->{updated_at}, 'updated_at moved on');

# A paid invoice: record and fail are 409 invalid_state.
check_ext_err(rec2({reference => 'again', amount => 1234.5}), 409, 'invalid_state', undef, 'record a paid invoice');
check_ext_err(post(fail_path($inv), $K2, {reason => 'cancelled'}), 409, 'invalid_state', undef, 'fail a paid invoice');
is_deeply counts($inv), [1, 1, 'paid'], 'still one payment and one event';

# Amounts: overpaying is fine; decimals compare exactly; method optional, null allowed.
my @ok = ([100, '{"reference": "c1", "amount": 150, "method": "card"}', 'card'],
          ['99.99', '{"reference": "c2", "amount": 99.99, "method": "cash"}', 'cash'],
          [7, '{"reference": "c3", "amount": 7}', undef],
          [7, '{"reference": "c4", "amount": 7.0, "method": null}', undef],
          [1, '{"reference": "' . ('R' x 255) . '", "amount": 1}', undef]);
for my $c (@ok) {
    my $i = invoice($fa, 1, $c->[0]);
    my $x = post(record_path($i), $K2, $c->[1]);
    is $x->{status}, 200, "record " . substr($c->[1], 0, 60) . " on an invoice of $c->[0]: 200"
        or diag diag_resp($x);
    is one("SELECT method FROM payments WHERE invoice_id = '$i'"), $c->[2], 'method stored';
}
{
    my $i = invoice($fa, 1, '99.99');
    check_ext_err(post(record_path($i), $K2, '{"reference": "c", "amount": 99.98}'), 422,
              'validation_error', 'amount', 'record 99.98 on 99.99');
    is_deeply counts($i), [0, 0, 'pending_payment'], 'nothing written';
}

# Unknown, malformed and void invoices.
check_ext_err(post(record_path('00000000-0000-4000-8000-000000000000'), $K2, {reference => 'a', amount => 1}),
          404, 'not_found', undef, 'record an unknown invoice');
check_ext_err(post(record_path('nope'), $K2, {reference => 'a', amount => 1}), 404, 'not_found', undef,
          'record a malformed id');
check_ext_err(post(fail_path('nope'), $K2, {reason => 'cancelled'}), 404, 'not_found', undef,
          'fail a malformed id');
{
    my $v = invoice($fa, 1, 10);
    psql("UPDATE invoices SET status = 'void' WHERE id = '$v'");
    check_ext_err(post(record_path($v), $K2, {reference => 'a', amount => 10}), 409, 'invalid_state', undef,
              'record a void invoice');
    check_ext_err(post(fail_path($v), $K2, {reason => 'cancelled'}), 409, 'invalid_state', undef,
              'fail a void invoice');
    is_deeply counts($v), [0, 0, 'void'], 'void invoice untouched';
}

# --- fail --------------------------------------------------------------------------------

my $K3 = ext_key(fac => $fa, ext => $ea);
my $finv = invoice($fa, 1, 300);
my $fp = fail_path($finv);
check_ext_err(post($fp, $K3, undef), 400, 'invalid_request', undef, 'fail without a body');
check_ext_err(post($fp, $K3, '{"reason": '), 400, 'invalid_request', undef, 'fail: malformed JSON');
check_ext_err(post($fp, $K3, {}), 400, 'invalid_request', 'reason', 'fail: reason missing');
check_ext_err(post($fp, $K3, {reason => 'cancelled', code => 5}), 400, 'invalid_request', 'code',
          'fail: unknown field');
for my $bad (['with spaces', '"insufficient funds"'], ['upper case', '"Insufficient_funds"'],
             ['empty', '""'], ['65 characters', '"' . ('a' x 65) . '"'], ['a dash', '"card-declined"'],
             ['a number', '12'], ['null', 'null'], ['an array', '["cancelled"]'],
             ['non-ASCII', qq("d\xc3\xa9clin\xc3\xa9")], ['a newline', '"a\\nb"']) {
    check_ext_err(post($fp, $K3, qq({"reason": $bad->[1]})), 422, 'validation_error', 'reason',
              "fail: reason $bad->[0]");
}
is one("SELECT count(*) FROM payments WHERE invoice_id = '$finv'"), 0, 'no payment row after refused fails';
is one("SELECT last_failure FROM invoices WHERE id = '$finv'"), undef, 'last_failure still null';

$r = post($fp, $K3, {reason => 'insufficient_funds'});
is $r->{status}, 200, 'fail: 200' or diag diag_resp($r);
is_deeply $r->{json}, {id => $finv, status => 'pending_payment', last_failure => 'insufficient_funds'},
    'fail answers {id, status: pending_payment, last_failure}';
$r = req(GET => invoice_path($finv), $K3);
is(($r->{json} || {})->{status}, 'pending_payment', 'GET after fail: still pending');
is(($r->{json} || {})->{last_failure}, 'insufficient_funds', 'GET after fail: last_failure');
is one("SELECT count(*) FROM ext_events WHERE data->'invoice'->>'id' = '$finv'"), 0, 'fail emits no event';
$r = post($fp, $K3, {reason => 'a' x 64});
is $r->{status}, 200, 'fail with a 64-character reason: 200' or diag diag_resp($r);
$r = post($fp, $K3, {reason => 'cancelled_2'});
is(($r->{json} || {})->{last_failure}, 'cancelled_2', 'a later fail replaces last_failure');
$r = post(record_path($finv), $K3, {reference => 'after-fail', amount => 300});
is $r->{status}, 200, 'record after fails: 200' or diag diag_resp($r);
is one("SELECT status FROM invoices WHERE id = '$finv'"), 'paid', 'paid after failed attempts';

# --- drain-complete ----------------------------------------------------------------------

my $er = extension($fa, 'reloading');
my $er_other = extension($fa, 'reloading');
my $ei = extension($fa, 'installing');
my $kr = ext_key(fac => $fa, ext => $er, privs => ['ext:control:write']);
my $ki = ext_key(fac => $fa, ext => $ei, privs => ['ext:control:write']);
my $dp = '/v1/ext/control/drain-complete';
check_ext_err(req(POST => $dp, $kr), 400, 'invalid_request', 'Idempotency-Key', 'drain without Idempotency-Key');
check_ext_err(post($dp, $kr, {force => JSON::PP::true}), 400, 'invalid_request', undef, 'drain with a body field');
check_ext_err(post($dp, $kr, '{'), 400, 'invalid_request', undef, 'drain with malformed JSON');
is one("SELECT status FROM extensions WHERE id = '$er'"), 'reloading', 'still reloading after refusals';
$r = post($dp, $kr);
is $r->{status}, 200, 'drain-complete (no body): 200' or diag diag_resp($r);
is_deeply $r->{json}, {acknowledged => JSON::PP::true}, '{"acknowledged": true}';
is one("SELECT status FROM extensions WHERE id = '$er'"), 'running', 'the reloading extension is running';
is one("SELECT status FROM extensions WHERE id = '$er_other'"), 'reloading', 'another extension untouched';
$r = post($dp, $kr, {});
is $r->{status}, 200, 'drain-complete again, body {}: 200 (safe to repeat)' or diag diag_resp($r);
is one("SELECT status FROM extensions WHERE id = '$er'"), 'running', 'still running';
$r = post($dp, $ki);
is $r->{status}, 200, 'drain-complete from an installing extension: 200' or diag diag_resp($r);
is one("SELECT status FROM extensions WHERE id = '$ei'"), 'installing', 'installing is not moved by a drain';

done_testing();
