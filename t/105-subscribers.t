# Subscribers over /v1/api (secret key) and the studio mirrors (session), and the
# unsubscribe link: credentials and scopes; POST upserts by email (201 new, 200 known;
# the address compared case-insensitively and kept as first given; name and status
# change only when given); email_required, invalid_email, invalid_status; the list
# (status filter, paging edges, another workspace's subscribers never seen); the
# unsubscribe token (flips the status with no login, idempotent, refused when changed,
# cut, made with another key or for a deleted subscriber); the studio roles (editors and
# up: addresses are personal data).
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key $UUID $TS);
use Digest::SHA qw(hmac_sha256);
use MIME::Base64 qw(encode_base64url);

signup_defaults(email_prefix => 'sub');

my @FIELDS = sort qw(id email name status created_at updated_at);

start_nginx();

my $owner = signup();
my $wid = workspace($owner->{token}, 'Subscribers');
my $K = key($owner->{token}, $wid, 'rw', qw(subscribers:read subscribers:write));
my $KR = key($owner->{token}, $wid, 'ro', 'subscribers:read');
my $KW = key($owner->{token}, $wid, 'wo', 'subscribers:write');
my $KA = key($owner->{token}, $wid, 'articles', qw(articles:read articles:write));
my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other', qw(subscribers:read subscribers:write));

sub post { req(POST => '/v1/api/subscribers', $_[1] // $K, $_[0]) }

# --- credentials and scopes ------------------------------------------------------------

{
    my $bad = 'svc_live_' . ('A' x 49);
    for my $t ([GET => '/v1/api/subscribers', undef, 'read'],
               [POST => '/v1/api/subscribers', { email => 'x@example.com' }, 'write']) {
        my ($m, $p, $b, $need) = @$t;
        check_err(req($m, $p, undef, $b), 401, 'missing_token', "$m $p without a key");
        check_err(req($m, $p, $bad, $b), 401, 'invalid_api_key', "$m $p with a bad key");
        check_err(req($m, $p, $owner->{token}, $b), 401, 'invalid_api_key', "$m $p with a session token");
        check_err(req($m, $p, $need eq 'read' ? $KW : $KR, $b), 403, 'missing_scope', "$m $p without subscribers:$need");
        check_err(req($m, $p, $KA, $b), 403, 'missing_scope', "$m $p with only articles scopes");
    }
    is one("SELECT count(*) FROM subscribers"), 0, 'nothing stored';
}

# --- upsert ----------------------------------------------------------------------------

my ($ann, $tok);
{
    my $r = post({ email => 'Ann.Lee@Example.com', name => 'Ann' });
    is $r->{status}, 201, 'a new address: 201' or diag diag_resp($r);
    is_deeply [sort keys %{$r->{json} // {}}], [qw(subscriber unsubscribe_token)], 'answer: {subscriber, unsubscribe_token}';
    $ann = $r->{json}{subscriber} // {};
    is_deeply [sort keys %$ann], \@FIELDS, 'every subscriber field';
    like $ann->{id} // '', $UUID, 'id';
    like $ann->{$_} // '', $TS, $_ for qw(created_at updated_at);
    is_deeply { map { $_ => $ann->{$_} } qw(email name status) },
        { email => 'Ann.Lee@Example.com', name => 'Ann', status => 'subscribed' }, 'subscribed by default';
    $tok = $r->{json}{unsubscribe_token} // '';
    like $tok, qr/^[A-Za-z0-9_-]{43}$/, 'the token: 43 base64url characters';

    select(undef, undef, undef, 0.01);
    my $u = post({ email => 'ann.lee@example.COM' });
    is $u->{status}, 200, 'the same address in other case: 200' or diag diag_resp($u);
    is_deeply $u->{json}{subscriber}, $ann, 'unchanged when nothing is given (updated_at too)';
    is $u->{json}{unsubscribe_token}, $tok, 'the same token';
    $u = post({ email => 'ANN.LEE@example.com', name => 'Ann Lee' });
    is $u->{status}, 200, 'a new name: 200';
    is $u->{json}{subscriber}{name}, 'Ann Lee', 'the name changes';
    is $u->{json}{subscriber}{email}, 'Ann.Lee@Example.com', 'the address keeps its first form';
    isnt $u->{json}{subscriber}{updated_at}, $ann->{updated_at}, 'updated_at moves';
    is one("SELECT count(*) FROM subscribers WHERE workspace_id = '$wid'"), 1, 'one row';
    is post({ email => 'ann.lee@example.com', name => undef })->{json}{subscriber}{name}, 'Ann Lee', 'name null: kept';

    my $o = post({ email => 'ann.lee@example.com' }, $K2);
    is $o->{status}, 201, 'the same address in another workspace: 201';
    isnt $o->{json}{subscriber}{id}, $ann->{id}, 'another subscriber';
    is post({ email => 'bob@example.com', name => 'Bob', status => 'unsubscribed' })->{json}{subscriber}{status},
        'unsubscribed', 'created unsubscribed when asked';
    my $ro = post({ email => 'ro@example.com', id => '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293',
                    created_at => '2000-01-01T00:00:00Z' });
    is $ro->{status}, 201, 'read-only fields ignored: 201';
    isnt $ro->{json}{subscriber}{id}, '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293', 'read-only id ignored';
}

for my $t ([{}, 'email_required', 'no email'],
           [{ email => '' }, 'email_required', 'empty email'],
           [{ email => undef }, 'email_required', 'null email'],
           [{ name => 'x' }, 'email_required', 'name only'],
           (map { [{ email => $_ }, 'invalid_email', "email '$_'"] }
                'nope', 'a@b', '@example.com', 'a b@example.com', 'a@example..com', ('a' x 250) . '@x.com'),
           [{ email => 5 }, 'invalid_email', 'email a number'],
           [{ email => 'c@example.com', name => 5 }, 'invalid_field_value', 'name a number'],
           [{ email => 'c@example.com', name => 'n' x 201 }, 'invalid_field_value', 'name too long'],
           [{ email => 'c@example.com', status => 'gone' }, 'invalid_status', 'unknown status'],
           [{ email => 'c@example.com', colour => 'red' }, 'invalid_request', 'unknown field']) {
    my ($body, $code, $name) = @$t;
    check_err(post($body), 400, $code, "upsert, $name");
}
check_err(req(POST => '/v1/api/subscribers', $K, '{"email":'), 400, 'invalid_request', 'malformed JSON');
is one("SELECT count(*) FROM subscribers WHERE lower(email) LIKE 'c@%'"), 0, 'no refused upsert was stored';

# --- unsubscribe -----------------------------------------------------------------------

{
    my $u = req(POST => "/v1/unsubscribe/$tok");
    is $u->{status}, 200, 'unsubscribe with the token, no login: 200' or diag diag_resp($u);
    is_deeply $u->{json}, { subscriber => { status => 'unsubscribed' } }, 'answer: the status only, no address';
    is one("SELECT status FROM subscribers WHERE id = '$ann->{id}'"), 'unsubscribed', 'stored';
    my $at = one("SELECT updated_at FROM subscribers WHERE id = '$ann->{id}'");
    is req(POST => "/v1/unsubscribe/$tok")->{status}, 200, 'again: 200 (idempotent)';
    is one("SELECT updated_at FROM subscribers WHERE id = '$ann->{id}'"), $at, 'again: nothing changes';
    is post({ email => 'ann.lee@example.com', name => 'Ann L' })->{json}{subscriber}{status}, 'unsubscribed',
        'a later upsert without status does not subscribe again';
    is post({ email => 'ann.lee@example.com', status => 'subscribed' })->{json}{subscriber}{status}, 'subscribed',
        'subscribed again only when asked';

    # Forgeries: another key, another id under a guessed MAC, changed or cut tokens.
    my $raw = $tok =~ tr/-_/+\//r;
    my $forged = encode_base64url(pack('H*', $ann->{id} =~ tr/-//dr) . substr(hmac_sha256(pack('H*', $ann->{id} =~ tr/-//dr),
                                                                                    'wrong key' x 4), 0, 16));
    my $flip = $tok;
    substr($flip, 30, 1) = substr($tok, 30, 1) eq 'A' ? 'B' : 'A';
    for my $t ([$forged, 'a MAC under another key'], [$flip, 'a changed character'], [substr($tok, 0, 42), 'cut'],
               [$tok . 'A', 'one more character'], ['x' x 43, 'garbage'], ["$tok=", 'padded']) {
        my ($bad, $name) = @$t;
        check_err(req(POST => "/v1/unsubscribe/$bad"), 404, 'not_found', "unsubscribe, $name");
    }
    is one("SELECT status FROM subscribers WHERE id = '$ann->{id}'"), 'subscribed', 'the forgeries changed nothing';
    check_err(req(GET => "/v1/unsubscribe/$tok"), 405, 'method_not_allowed', 'GET never unsubscribes (link scanners)');
    is one("SELECT status FROM subscribers WHERE id = '$ann->{id}'"), 'subscribed', 'GET changed nothing';

    # A deleted subscriber's link is dead.
    my $gone = post({ email => 'gone@example.com' });
    psql("DELETE FROM subscribers WHERE id = '$gone->{json}{subscriber}{id}'");
    check_err(req(POST => "/v1/unsubscribe/$gone->{json}{unsubscribe_token}"), 404, 'not_found',
              'the token of a deleted subscriber');
}

# --- list ------------------------------------------------------------------------------

{
    my $lu = signup();
    my $lw = workspace($lu->{token}, 'Subscriber list');
    my $LK = key($lu->{token}, $lw, 'l', qw(subscribers:read subscribers:write));
    is_deeply req(GET => '/v1/api/subscribers', $LK)->{json},
        { subscribers => [], pagination => { total => 0, limit => 50, offset => 0 } }, 'empty list';
    my @s = map { post({ email => "l$_\@example.com", name => "L$_", $_ % 3 ? () : (status => 'unsubscribed') }, $LK)
                      ->{json}{subscriber} } 1 .. 9;
    my $l = req(GET => '/v1/api/subscribers', $LK)->{json};
    is_deeply [map { $_->{email} } @{$l->{subscribers}}], [map { $_->{email} } reverse @s], 'newest first';
    is_deeply $l->{pagination}, { total => 9, limit => 50, offset => 0 }, 'pagination';
    is_deeply $l->{subscribers}[0], $s[-1], 'the records as created';
    my $u = req(GET => '/v1/api/subscribers?status=unsubscribed', $LK)->{json};
    is_deeply [map { $_->{email} } @{$u->{subscribers}}], [map { "l$_\@example.com" } 9, 6, 3], 'status=unsubscribed';
    is $u->{pagination}{total}, 3, 'status=unsubscribed: total';
    is req(GET => '/v1/api/subscribers?status=subscribed', $LK)->{json}{pagination}{total}, 6, 'status=subscribed';
    check_err(req(GET => '/v1/api/subscribers?status=gone', $LK), 400, 'invalid_status', 'unknown status filter');
    my $p = req(GET => '/v1/api/subscribers?limit=2&offset=3', $LK)->{json};
    is_deeply [map { $_->{email} } @{$p->{subscribers}}], [map { "l$_\@example.com" } 6, 5], 'limit=2&offset=3';
    for my $lim (qw(0 101 -1 abc)) {
        is req(GET => "/v1/api/subscribers?limit=$lim", $LK)->{json}{pagination}{limit}, 50, "limit=$lim: 50";
    }
    ok !grep({ $_->{email} =~ /^ann/i } @{$l->{subscribers}}), 'no other workspace\'s subscriber';
    # the totals are counters kept by the writes (sql/0043): a status change and a deletion
    # move them, in both directions, and the counter is this workspace's alone
    my $total = sub { req(GET => "/v1/api/subscribers$_[0]", $LK)->{json}{pagination}{total} };
    psql("UPDATE subscribers SET status = 'unsubscribed' WHERE id = '$s[0]{id}'");
    is_deeply [map { $total->($_) } '', '?status=subscribed', '?status=unsubscribed'], [9, 5, 4],
        'a status change moves one from a count to the other';
    psql("DELETE FROM subscribers WHERE id IN ('$s[0]{id}', '$s[1]{id}')");
    is_deeply [map { $total->($_) } '', '?status=subscribed', '?status=unsubscribed'], [7, 4, 3],
        'a deletion of two in one statement: both counted down';
    post({ email => 'back1@example.com' }, $LK);
    is $total->('?status=subscribed'), 5, 'a new subscriber counted up';
}

# --- studio mirrors --------------------------------------------------------------------

{
    my %m = (owner => $owner);
    for my $role (qw(admin editor author viewer)) {
        $m{$role} = signup();
        psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
    }
    my %allowed = (owner => 1, admin => 1, editor => 1, author => 0, viewer => 0);
    my $base = "/v1/workspaces/$wid/subscribers";
    for my $role (qw(owner admin editor author viewer)) {
        my $t = $m{$role}{token};
        if ($allowed{$role}) {
            is req(GET => $base, $t)->{status}, 200, "studio $role: lists";
            is req(POST => $base, $t, { email => "$role\@studio.example" })->{status}, 201, "studio $role: adds";
        } else {
            check_err(req(GET => $base, $t), 403, 'forbidden', "studio $role: list");
            check_err(req(POST => $base, $t, { email => "$role\@studio.example" }), 403, 'forbidden', "studio $role: add");
        }
    }
    is one("SELECT count(*) FROM subscribers WHERE email LIKE '%\@studio.example'"), 3, 'studio: only the allowed added';
}

done_testing();
