# Session tokens and workspace membership: every forged, expired or tampered JWT is 401
# invalid_token on every session route (alg none, HS512, another key, tampered payload or
# signature, unknown user, garbage); workspaces are created, listed and read by members
# only; non-members, suspended workspaces and roles too low get the spec's 403s.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err check_subset signup signup_defaults master_secret session_key $UUID $TS);
use JSON::PP ();
use Digest::SHA qw(hmac_sha256 hmac_sha512);
use MIME::Base64 qw(encode_base64url decode_base64url);

my $JSON = JSON::PP->new->utf8->canonical;

signup_defaults(name => sub { "U$_[0]" });

my $SESSION_KEY = session_key();
my $HS256 = encode_base64url('{"alg":"HS256","typ":"JWT"}');

sub b64u { encode_base64url($_[0]) }
sub rand_hex { join '', map { sprintf '%02x', int rand 256 } 1 .. $_[0] }

# jwt(\%claims or text, header => JSON text, key => bytes, alg => 256|512, sig => text)
sub jwt {
    my ($claims, %o) = @_;
    my $h = defined $o{header} ? b64u($o{header}) : $HS256;
    my $p = b64u(ref $claims ? $JSON->encode($claims) : $claims);
    my $mac = ($o{alg} // 256) == 512 ? \&hmac_sha512 : \&hmac_sha256;
    my $s = exists $o{sig} ? $o{sig} : b64u($mac->("$h.$p", $o{key} // $SESSION_KEY));
    return "$h.$p.$s";
}

sub claims_for {
    my ($uid, %o) = @_;
    my $now = time;
    return { sub => $uid, sid => rand_hex(16), iat => $now, exp => $now + 3600, %o };
}

start_nginx();

my $owner = signup();
my $other = signup();
my $uid = $owner->{user}{id};

# --- workspaces ------------------------------------------------------------------------

my $cw = req(POST => '/v1/workspaces', $owner->{token}, { name => 'Alpha' });
is $cw->{status}, 201, 'create workspace: 201' or diag diag_resp($cw);
my $w = $cw->{json}{workspace} // {};
is_deeply [sort keys %$w],
    [sort qw(id name default_locale plan storage_quota_bytes suspended role created_at updated_at)],
    'workspace: the spec fields';
like $w->{id} // '', $UUID, 'workspace id is a UUID';
check_subset({ name => 'Alpha', default_locale => 'en', role => 'owner', suspended => JSON::PP::false },
             $w, 'workspace: name, default_locale en, role owner, not suspended');
like $w->{plan} // '', qr/^\w+$/, 'workspace: a plan';
like $w->{storage_quota_bytes} // '', qr/^\d+$/, 'workspace: a storage quota in bytes';
like $w->{created_at} // '', $TS, 'workspace: created_at';
my $wid = $w->{id};

my $cw2 = req(POST => '/v1/workspaces', $owner->{token}, { name => 'Beta', default_locale => 'fr' });
is $cw2->{status}, 201, 'create workspace with default_locale: 201' or diag diag_resp($cw2);
is $cw2->{json}{workspace}{default_locale}, 'fr', 'default_locale kept';
my $wid2 = $cw2->{json}{workspace}{id};

check_err(req(POST => '/v1/workspaces', $owner->{token}, {}), 400, 'name_required', 'create workspace, no name');
check_err(req(POST => '/v1/workspaces', $owner->{token}, { name => '' }), 400, 'name_required', 'create workspace, empty name');
check_err(req(POST => '/v1/workspaces', $owner->{token}, { name => 7 }), 400, 'invalid_field_value', 'create workspace, numeric name');
check_err(req(POST => '/v1/workspaces', $owner->{token}, { name => 'X', colour => 'red' }), 400, 'invalid_request',
          'create workspace, unknown field');
check_err(req(POST => '/v1/workspaces', $owner->{token}, '{"name": "X"'), 400, 'invalid_request',
          'create workspace, malformed JSON');
check_err(http(POST => '/v1/workspaces', ['Authorization' => "Bearer $owner->{token}"], '{"name": "X"}'),
          415, 'unsupported_media_type', 'create workspace without Content-Type');
# Read-only fields the API returns are ignored, not applied.
my $cw3 = req(POST => '/v1/workspaces', $owner->{token},
              { name => 'Gamma', plan => 'enterprise', suspended => JSON::PP::true, role => 'viewer' });
is $cw3->{status}, 201, 'create workspace with read-only fields: 201' or diag diag_resp($cw3);
check_subset({ plan => $w->{plan}, suspended => JSON::PP::false, role => 'owner' }, $cw3->{json}{workspace} // {},
             'read-only fields ignored: plan, suspended, role unchanged');
my $wid3 = ($cw3->{json}{workspace} // {})->{id} // '';
check_err(req(POST => '/v1/workspaces', undef, { name => 'X' }), 401, 'missing_token', 'create workspace, no session');

my $ow = req(POST => '/v1/workspaces', $other->{token}, { name => 'Other' });
is $ow->{status}, 201, 'another user creates a workspace';
my $owid = $ow->{json}{workspace}{id};

my $list = req(GET => '/v1/workspaces', $owner->{token});
is $list->{status}, 200, 'list workspaces: 200' or diag diag_resp($list);
is_deeply [sort map { $_->{id} } @{$list->{json}{workspaces} // []}], [sort $wid, $wid2, $wid3],
    'list: exactly the caller\'s three workspaces';
ok !grep({ ($_->{role} // '') ne 'owner' } @{$list->{json}{workspaces} // []}), 'list: role owner on each';
is_deeply [map { $_->{id} } @{req(GET => '/v1/workspaces', $other->{token})->{json}{workspaces} // []}],
    [$owid], 'the other user lists only theirs';
check_err(req(GET => '/v1/workspaces'), 401, 'missing_token', 'list workspaces, no session');

my $g = req(GET => "/v1/workspaces/$wid", $owner->{token});
is $g->{status}, 200, 'get workspace: 200' or diag diag_resp($g);
is_deeply $g->{json}, { workspace => $w }, 'get workspace: {workspace}, as created';

check_err(req(GET => "/v1/workspaces/$wid", $other->{token}), 403, 'not_workspace_member', 'get workspace, non-member');
check_err(req(GET => '/v1/workspaces/0190a4d6-2f5e-7c3a-9b1d-4e5f60718293', $owner->{token}), 403,
          'not_workspace_member', 'get workspace, unknown id');
check_err(req(GET => '/v1/workspaces/not-a-uuid', $owner->{token}), 403, 'not_workspace_member',
          'get workspace, malformed id');
check_err(req(GET => '/v1/workspaces/' . uc($wid), $other->{token}), 403, 'not_workspace_member',
          'get workspace, upper-case id, non-member');
check_err(req(GET => "/v1/workspaces/$wid"), 401, 'missing_token', 'get workspace, no session');

# --- roles -----------------------------------------------------------------------------

my %m;
for my $role (qw(admin editor author viewer)) {
    $m{$role} = signup();
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
}
$m{owner} = $owner;
my %level = (viewer => 1, author => 2, editor => 3, admin => 4, owner => 5);
for my $role (qw(owner admin editor author viewer)) {
    my $r = req(GET => "/v1/workspaces/$wid", $m{$role}{token});
    is $r->{status}, 200, "get workspace as $role: 200" or diag diag_resp($r);
    is(($r->{json}{workspace} // {})->{role}, $role, "get workspace as $role: role $role");
    my $e = req(GET => "/v1/workspaces/$wid/_test/editor", $m{$role}{token});
    if ($level{$role} >= 3) {
        is $e->{status}, 200, "editor route as $role: 200" or diag diag_resp($e);
        is_deeply $e->{json}, { workspace_id => $wid, user_id => $m{$role}{user}{id}, role => $level{$role} },
            "editor route as $role: the member's workspace, user and role";
    } else {
        check_err($e, 403, 'forbidden', "editor route as $role (role too low)");
    }
    is_deeply [map { $_->{id} } @{req(GET => '/v1/workspaces', $m{$role}{token})->{json}{workspaces} // []}],
        [$wid], "$role lists the one workspace" unless $role eq 'owner';
}
check_err(req(GET => "/v1/workspaces/$wid/_test/editor", $other->{token}), 403, 'not_workspace_member',
          'editor route, non-member');
check_err(req(GET => "/v1/workspaces/$wid2/_test/editor", $m{admin}{token}), 403, 'not_workspace_member',
          'editor route, member of another workspace of the same owner');

# A role change holds on the next request.
psql("UPDATE members SET role = 'viewer' WHERE workspace_id = '$wid' AND user_id = '$m{editor}{user}{id}'");
check_err(req(GET => "/v1/workspaces/$wid/_test/editor", $m{editor}{token}), 403, 'forbidden',
          'editor demoted to viewer: forbidden at once');
psql("DELETE FROM members WHERE workspace_id = '$wid' AND user_id = '$m{editor}{user}{id}'");
check_err(req(GET => "/v1/workspaces/$wid", $m{editor}{token}), 403, 'not_workspace_member',
          'removed member: not_workspace_member at once');

# Suspended workspace.
psql("UPDATE workspaces SET suspended = true WHERE id = '$wid'");
check_err(req(GET => "/v1/workspaces/$wid", $owner->{token}), 403, 'workspace_suspended', 'suspended: owner get');
check_err(req(GET => "/v1/workspaces/$wid/_test/editor", $m{admin}{token}), 403, 'workspace_suspended',
          'suspended: admin on the editor route');
check_err(req(GET => "/v1/workspaces/$wid/api-keys", $owner->{token}), 403, 'workspace_suspended',
          'suspended: owner lists api keys');
check_err(req(GET => "/v1/workspaces/$wid", $other->{token}), 403, 'not_workspace_member',
          'suspended: a non-member still learns nothing');
is req(GET => "/v1/workspaces/$wid2", $owner->{token})->{status}, 200, 'suspended: the owner\'s other workspace works';
psql("UPDATE workspaces SET suspended = false WHERE id = '$wid'");
is req(GET => "/v1/workspaces/$wid", $owner->{token})->{status}, 200, 'unsuspended: get works again';

# --- the JWT matrix --------------------------------------------------------------------

my $good = jwt(claims_for($uid));
is req(GET => '/v1/me', $good)->{status}, 200, 'a token forged with the derived session key is accepted (the harness derives the key right)';
is req(GET => "/v1/workspaces/$wid", $good)->{status}, 200, 'and works on a member route';

my ($gh, $gp, $gs) = split /\./, $good;
my $flip = sub { my ($s, $i) = @_; my $c = substr($s, $i, 1); substr($s, $i, 1) = $c eq 'A' ? 'B' : 'A'; $s };
my $now = time;

my @bad = (
    ['expired', jwt(claims_for($uid, iat => $now - 7200, exp => $now - 10))],
    ['expiring right now', jwt(claims_for($uid, iat => $now - 7200, exp => $now - 1))],
    ['tampered signature (first character)', join '.', $gh, $gp, $flip->($gs, 0)],
    ['tampered signature (last character)', join '.', $gh, $gp, substr($gs, 0, -1) . (substr($gs, -1) eq 'A' ? 'E' : 'A')],
    ['signature of another token', join '.', $gh, $gp, (split /\./, jwt(claims_for($uid)))[2]],
    ['tampered payload, other user', join '.', $gh, b64u($JSON->encode(claims_for($other->{user}{id}))), $gs],
    ['tampered payload, exp pushed out', join '.', $gh,
        b64u($JSON->encode({ %{$JSON->decode(decode_base64url($gp))}, exp => $now + 10 * 86400 })), $gs],
    ['alg none, empty signature', jwt(claims_for($uid), header => '{"alg":"none","typ":"JWT"}', sig => '')],
    ['alg none, no signature segment', b64u('{"alg":"none","typ":"JWT"}') . '.' . b64u($JSON->encode(claims_for($uid)))],
    ['alg none, valid HS256 signature', jwt(claims_for($uid), header => '{"alg":"none","typ":"JWT"}')],
    ['alg "None"', jwt(claims_for($uid), header => '{"alg":"None","typ":"JWT"}', sig => '')],
    ['HS512 header, HS512 signature', jwt(claims_for($uid), header => '{"alg":"HS512","typ":"JWT"}', alg => 512)],
    ['HS512 header, HS256 signature', jwt(claims_for($uid), header => '{"alg":"HS512","typ":"JWT"}')],
    ['RS256 header', jwt(claims_for($uid), header => '{"alg":"RS256","typ":"JWT"}')],
    ['HS256 header with a kid', jwt(claims_for($uid), header => '{"alg":"HS256","typ":"JWT","kid":"1"}')],
    ['HS256 header, other spacing', jwt(claims_for($uid), header => '{"typ":"JWT","alg":"HS256"}')],
    ['signed with another key', jwt(claims_for($uid), key => 'x' x 32)],
    ['signed with the master secret itself', jwt(claims_for($uid), key => master_secret())],
    ['signed with the API key pepper', jwt(claims_for($uid), key => hmac_sha256('cms api key pepper v1', master_secret()))],
    ['user that does not exist', jwt(claims_for('0190a4d6-2f5e-7c3a-9b1d-4e5f60718293'))],
    ['sub not a UUID', jwt(claims_for('admin'))],
    ['sub missing', jwt({ sid => rand_hex(16), iat => $now, exp => $now + 3600 })],
    ['sid missing', jwt({ sub => $uid, iat => $now, exp => $now + 3600 })],
    ['sid not hex', jwt(claims_for($uid, sid => 'z' x 32))],
    ['sid too short', jwt(claims_for($uid, sid => rand_hex(8)))],
    ['exp missing', jwt({ sub => $uid, sid => rand_hex(16), iat => $now })],
    ['exp a string', jwt(claims_for($uid, exp => '' . ($now + 3600)))],
    ['payload not JSON', jwt('not json')],
    ['payload a JSON array', jwt('[1,2,3]')],
    ['padding in the signature', "$good="],
    ['two tokens', "$good.$good"],
    ['garbage', 'garbage'],
    ['three dots', 'a.b.c'],
    ['empty segments', '..'],
    ['very long', $gh . '.' . ('A' x 6000) . '.' . $gs],
    ['a secret API key', 'svc_live_' . ('A' x 49)],
);
for my $t (@bad) {
    my ($name, $tok) = @$t;
    check_err(req(GET => '/v1/me', $tok), 401, 'invalid_token', "me, JWT $name");
}
# The same refusals on the other session routes and by cookie (a sample).
for my $t (@bad[0, 2, 5, 7, 11, 16, 19]) {
    my ($name, $tok) = @$t;
    check_err(req(GET => "/v1/workspaces/$wid", $tok), 401, 'invalid_token', "get workspace, JWT $name");
    check_err(req(POST => '/v1/workspaces', $tok, { name => 'Forged' }), 401, 'invalid_token', "create workspace, JWT $name");
    check_err(http(GET => '/v1/me', ['Cookie' => "cms_session=$tok"]), 401, 'invalid_token', "me by cookie, JWT $name");
    check_err(req(POST => '/v1/auth/logout', $tok), 401, 'invalid_token', "logout, JWT $name");
}
# A forged token of a real member, signed right, works: the signature is all that stands.
my $adm_tok = jwt(claims_for($m{admin}{user}{id}));
is req(GET => "/v1/workspaces/$wid/_test/editor", $adm_tok)->{status}, 200, 'a correctly signed token of the admin works';
is psql(q{SELECT count(*) FROM workspaces WHERE name = 'Forged'})->[0][0], 0, 'no forged token created anything';

done_testing();
