# Extension keys on /v1/ext: the credential matrix (missing, wrong scheme, malformed, bad
# checksum, unknown, revoked, expired, a key of another family even when its hash is stored,
# a live-looking key stored as sandbox; each 401 with WWW-Authenticate: Bearer, with
# error="invalid_token" for a key refused, and another scheme told apart from none by its
# message), revocation on the next request, the privilege
# matrix over every route (403 insufficient_scope), the extension error shape, the
# Service-Version header (validated and echoed), and the facility x mode isolation matrix:
# a key sees and writes only its own facility's invoices of its own mode.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:ext make_key);
use JSON::PP ();
use Time::HiRes qw(time sleep);
use MIME::Base64 ();

start_nginx();

my $fa = facility();
my $ea = extension($fa);
my $fb = facility();
my $eb = extension($fb);
my $inv = invoice($fa, 1, 5000);
my %KEY;
$KEY{full} = ext_key(fac => $fa, ext => $ea);

# --- the key itself --------------------------------------------------------------------

my $r = req(GET => invoice_path($inv), $KEY{full});
is $r->{status}, 200, 'a live key with ext:billing:read reads its invoice' or diag diag_resp($r);
like $r->{headers}{'content-type'} // '', qr{^application/json}, 'JSON content type';

# every 401 names the scheme (RFC 6750): a credential sent and refused is invalid_token
sub unauth {
    my ($hdr, $name) = @_;
    my $x = http(GET => invoice_path($inv), defined $hdr ? [Authorization => $hdr] : []);
    check_ext_err($x, 401, 'unauthenticated', undef, $name);
    my $none = !defined $hdr || $hdr !~ /^Bearer +\S/i;
    is $x->{headers}{'www-authenticate'}, $none ? 'Bearer' : 'Bearer error="invalid_token"',
        "$name: WWW-Authenticate";
    return $x;
}
sub message { ((($_[0]{json} // {})->{error} // {})->{message} // '') }

unauth(undef, 'no Authorization');
unauth('', 'empty Authorization');
unauth('Bearer', 'Bearer without a token');
unauth('Bearer ', 'Bearer and a space');
is message(unauth(undef, 'no Authorization, again')), 'No credential was sent', 'no Authorization: the message';
is message(unauth("Basic " . MIME::Base64::encode_base64("$KEY{full}:", ''), 'Basic scheme')),
    'Only Bearer credentials are accepted', 'Basic scheme: told apart from no credential';
is message(unauth("Token $KEY{full}", 'Token scheme')), 'Only Bearer credentials are accepted',
    'Token scheme: told apart from no credential';
unauth('Bearer sk_live_short', 'malformed: too short');
unauth('Bearer ' . substr($KEY{full}, 0, -1), 'malformed: one character short');
unauth("Bearer $KEY{full}x", 'malformed: one character long');
unauth("Bearer $KEY{full} extra", 'malformed: trailing word');
{
    my $k = $KEY{full};
    my $i = length($k) - 7;
    substr($k, $i, 1) = substr($k, $i, 1) eq '0' ? '1' : '0';
    unauth("Bearer $k", 'bad checksum');
    (my $bad = $KEY{full}) =~ s/.$/$& eq 'A' ? 'B' : 'A'/e;
    unauth("Bearer $bad", 'bad checksum (last character)');
}
unauth('Bearer ' . make_key('sk_live_'), 'well-formed but unknown live key');
unauth('Bearer ' . make_key('sk_sandbox_'), 'well-formed but unknown sandbox key');

# Keys of other families are refused even when their hash is stored as an extension key.
for my $prefix (qw(svc_live_ pk_live_ sk_admin_)) {
    my $k = ext_key(fac => $fa, ext => $ea, prefix => $prefix);
    unauth("Bearer $k", "a $prefix key (its hash stored as an extension key)");
}
# A key that reads sk_live_ but is stored as a sandbox key, and the reverse.
unauth('Bearer ' . ext_key(fac => $fa, ext => $ea, live => 0, prefix => 'sk_live_'),
       'sk_live_ key stored with livemode false');
unauth('Bearer ' . ext_key(fac => $fa, ext => $ea, live => 1, prefix => 'sk_sandbox_'),
       'sk_sandbox_ key stored with livemode true');

my $revoked = ext_key(fac => $fa, ext => $ea, revoked => '2020-01-01T00:00:00Z');
unauth("Bearer $revoked", 'revoked key');
my $expired = ext_key(fac => $fa, ext => $ea, expires => '2020-01-01T00:00:00Z');
unauth("Bearer $expired", 'expired key');
my $future = ext_key(fac => $fa, ext => $ea, expires => '2999-01-01T00:00:00Z');
is req(GET => invoice_path($inv), $future)->{status}, 200, 'a key expiring in the future works';

# Revocation and expiry hold on the very next request.
{
    my $k = ext_key(fac => $fa, ext => $ea);
    is req(GET => invoice_path($inv), $k)->{status}, 200, 'fresh key: 200';
    psql("UPDATE extension_keys SET revoked_at = now() WHERE key_prefix = '" . substr($k, 0, 12) . "'");
    check_ext_err(req(GET => invoice_path($inv), $k), 401, 'unauthenticated', undef, 'revoked just now');
    my $k2 = ext_key(fac => $fa, ext => $ea);
    is req(GET => invoice_path($inv), $k2)->{status}, 200, 'second fresh key: 200';
    psql("UPDATE extension_keys SET expires_at = now() - interval '1 second' WHERE key_prefix = '"
         . substr($k2, 0, 12) . "'");
    check_ext_err(req(GET => invoice_path($inv), $k2), 401, 'unauthenticated', undef, 'expired just now');
}

# A POST without a credential is 401 before the body or the Idempotency-Key is looked at.
check_ext_err(req(POST => record_path($inv), undef, {reference => 'r', amount => 5000}), 401,
          'unauthenticated', undef, 'POST record without a key and without Idempotency-Key');
check_ext_err(req(POST => record_path($inv), "sk_live_nope", {reference => 'r', amount => 5000},
              'Idempotency-Key' => idem()), 401, 'unauthenticated', undef, 'POST record with a malformed key');
is one("SELECT count(*) FROM payments"), 0, 'no payment written by refused requests';

# --- privileges --------------------------------------------------------------------------

my %PRIVS = (
    read    => ['ext:billing:read'],
    write   => ['ext:billing:write'],
    control => ['ext:control:write'],
    none    => [],
    other   => ['ext:billing:admin', 'articles:write'],
);
$KEY{$_} = ext_key(fac => $fa, ext => $ea, privs => $PRIVS{$_}) for keys %PRIVS;

# route => which key kinds may use it
my $inv_w = invoice($fa, 1, 100);
my @ROUTES = (
    ['GET invoice', sub { req(GET => invoice_path($inv), $_[0]) }, {read => 1, full => 1}],
    ['POST record', sub { post(record_path($inv_w), $_[0], {reference => 'x', amount => 50}) },
     {write => 1, full => 1}],
    ['POST fail', sub { post(fail_path($inv_w), $_[0], {reason => 'insufficient_funds'}) },
     {write => 1, full => 1}],
    ['POST drain-complete', sub { post('/v1/ext/control/drain-complete', $_[0]) },
     {control => 1, full => 1}],
);
for my $route (@ROUTES) {
    my ($name, $call, $ok) = @$route;
    for my $kind (qw(full read write control none other)) {
        my $x = $call->($KEY{$kind});
        if ($ok->{$kind}) {
            # record with amount 50 < 100 is a 422: authorised, then validated
            my $want = $name eq 'POST record' ? 422 : 200;
            is $x->{status}, $want, "$name with the $kind key: $want" or diag diag_resp($x);
        } else {
            check_ext_err($x, 403, 'insufficient_scope', undef, "$name with the $kind key");
            like $x->{headers}{ratelimit} // '', qr/^"default";r=\d+;t=\d+$/,
                 "$name with the $kind key: the 403 carries the key's RateLimit";
        }
    }
}
# 403 comes before the Idempotency-Key check.
check_ext_err(req(POST => record_path($inv_w), $KEY{read}, {reference => 'x', amount => 100}), 403,
          'insufficient_scope', undef, 'record with the read key and no Idempotency-Key');
is one("SELECT status FROM invoices WHERE id = '$inv_w'"), 'pending_payment', 'invoice untouched';
is one("SELECT count(*) FROM payments WHERE kind = 'completed'"), 0, 'no completed payment row';

# --- error shape and routing under /v1/ext -----------------------------------------------

$r = req(GET => '/v1/ext/billing/invoices', $KEY{full});
check_ext_err($r, 404, 'not_found', undef, 'GET /v1/ext/billing/invoices (no id)');
$r = req(GET => '/v1/ext/nothing-here', $KEY{full});
check_ext_err($r, 404, 'not_found', undef, 'unknown /v1/ext route');
is_deeply [sort keys %{$r->{json}}], ['error'], 'the error body has only "error"';
is_deeply [sort keys %{$r->{json}{error} || {}}], [qw(message param type)], 'error has type, message, param';
$r = req(DELETE => invoice_path($inv), $KEY{full});
is $r->{status}, 405, 'DELETE on an invoice: 405';
is(($r->{json}{error} || {})->{type}, 'invalid_request', '405 in the extension shape, type invalid_request');
like $r->{headers}{allow} // '', qr/GET/, '405 names the allowed methods';
$r = req(GET => record_path($inv), $KEY{full});
is $r->{status}, 405, 'GET on the record route: 405';

# --- Service-Version ---------------------------------------------------------------------

for my $v (qw(2024-06-01 2024-02-29 2000-01-01)) {
    my $x = req(GET => invoice_path($inv), $KEY{full}, undef, 'Service-Version' => $v);
    is $x->{status}, 200, "Service-Version $v: 200" or diag diag_resp($x);
    is $x->{headers}{'service-version'}, $v, "Service-Version $v echoed";
}
$r = post(fail_path($inv), $KEY{full}, {reason => 'cancelled'}, 'Service-Version' => '2025-01-31');
is $r->{status}, 200, 'POST with Service-Version: 200' or diag diag_resp($r);
is $r->{headers}{'service-version'}, '2025-01-31', 'echoed on a POST';
$r = req(GET => invoice_path($inv), $KEY{full});
ok !exists $r->{headers}{'service-version'}, 'no Service-Version sent, none echoed';
for my $v ('2024-13-01', '2023-02-29', '2024-04-31', '2024-00-10', '2024-01-00', '24-01-01',
           '2024-1-01', '2024/01/01', '20240101', 'latest', '2024-01-01T00:00:00Z', 'abcd-ef-gh') {
    my $x = req(GET => invoice_path($inv), $KEY{full}, undef, 'Service-Version' => $v);
    check_ext_err($x, 400, 'invalid_request', 'Service-Version', "Service-Version '$v'");
}
$r = post(record_path($inv), $KEY{full}, {reference => 'r', amount => 5000}, 'Service-Version' => 'v2');
check_ext_err($r, 400, 'invalid_request', 'Service-Version', 'bad Service-Version on a POST');
like $r->{headers}{ratelimit} // '', qr/^"default";r=\d+;t=\d+$/, 'the 400 carries the key\'s RateLimit';
is $r->{headers}{'ratelimit-policy'}, '"default";q=120;w=60', '... and RateLimit-Policy';
is one("SELECT status FROM invoices WHERE id = '$inv'"), 'pending_payment', 'nothing written by it';

# --- isolation: facility x mode ----------------------------------------------------------

my %K = (
    'A live'    => ext_key(fac => $fa, ext => $ea, live => 1),
    'A sandbox' => ext_key(fac => $fa, ext => $ea, live => 0),
    'B live'    => ext_key(fac => $fb, ext => $eb, live => 1),
    'B sandbox' => ext_key(fac => $fb, ext => $eb, live => 0),
);
my %I = (
    'A live'    => invoice($fa, 1, 700),
    'A sandbox' => invoice($fa, 0, 700),
    'B live'    => invoice($fb, 1, 700),
    'B sandbox' => invoice($fb, 0, 700),
);
my @CELLS = sort keys %K;
my $not_found;
for my $kc (@CELLS) {
    for my $ic (@CELLS) {
        my $x = req(GET => invoice_path($I{$ic}), $K{$kc});
        if ($kc eq $ic) {
            is $x->{status}, 200, "GET: $kc key, $ic invoice: 200" or diag diag_resp($x);
            is(($x->{json} || {})->{id}, $I{$ic}, "GET: $kc key, $ic invoice: the invoice");
            is(($x->{json} || {})->{livemode}, JSON::PP::true, 'livemode true') if $ic =~ /live/;
            is(($x->{json} || {})->{livemode}, JSON::PP::false, 'livemode false') if $ic =~ /sandbox/;
        } else {
            check_ext_err($x, 404, 'not_found', undef, "GET: $kc key, $ic invoice");
            $not_found //= $x->{body};
            is $x->{body}, $not_found, "GET: $kc key, $ic invoice: the same body as any 404";
        }
    }
}
# An unknown id answers exactly like an invisible one.
$r = req(GET => invoice_path('00000000-0000-4000-8000-000000000000'), $K{'A live'});
check_ext_err($r, 404, 'not_found', undef, 'GET an unknown id');
is $r->{body}, $not_found, 'unknown id: the same body as an invisible invoice';
check_ext_err(req(GET => invoice_path('not-a-uuid'), $K{'A live'}), 404, 'not_found', undef, 'GET a malformed id');
check_ext_err(req(GET => invoice_path(uc $I{'A live'} . 'x'), $K{'A live'}), 404, 'not_found', undef,
          'GET an id with a trailing character');

# Writes: fail and record across the matrix; only the diagonal touches anything.
for my $kc (@CELLS) {
    for my $ic (@CELLS) {
        next if $kc eq $ic;
        check_ext_err(post(fail_path($I{$ic}), $K{$kc}, {reason => 'cross_' . lc($kc =~ tr/ /_/r)}), 404,
                  'not_found', undef, "fail: $kc key, $ic invoice");
        check_ext_err(post(record_path($I{$ic}), $K{$kc}, {reference => "x-$kc", amount => 700}), 404,
                  'not_found', undef, "record: $kc key, $ic invoice");
    }
}
for my $ic (@CELLS) {
    my $row = psql("SELECT status, reference, last_failure FROM invoices WHERE id = '$I{$ic}'")->[0];
    is_deeply $row, ['pending_payment', undef, undef], "$ic invoice untouched by other keys";
}
is one("SELECT count(*) FROM payments WHERE invoice_id IN ('" . join("','", values %I) . "')"), 0,
   'no payment rows from cross-facility or cross-mode writes';
is one("SELECT count(*) FROM ext_events"), 0, 'no events from refused writes';
for my $c (@CELLS) {
    my $x = post(fail_path($I{$c}), $K{$c}, {reason => 'card_declined'});
    is $x->{status}, 200, "fail: $c key on its own invoice: 200" or diag diag_resp($x);
    $x = post(record_path($I{$c}), $K{$c}, {reference => "ref-$c", amount => 700});
    is $x->{status}, 200, "record: $c key on its own invoice: 200" or diag diag_resp($x);
    is_deeply psql("SELECT status, reference, livemode::text FROM invoices WHERE id = '$I{$c}'")->[0],
        ['paid', "ref-$c", ($c =~ /live/ ? 'true' : 'false')], "$c invoice paid by its own key";
}
is one("SELECT count(*) FROM ext_events WHERE type = 'billing.payment_completed'"), 4,
   'four payment events';
is_deeply [sort map { $_->[0] } @{psql("SELECT facility_id::text || ' ' || livemode::text FROM ext_events")}],
    [sort "$fa true", "$fa false", "$fb true", "$fb false"],
    'each event carries its facility and mode';

done_testing();
