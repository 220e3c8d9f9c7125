# Workspace isolation: a session or a secret key of workspace A gets 403 or 404 for
# everything of workspace B, even with B's ids in hand, and never sees B's records.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err signup workspace api_key);

# key(...) as api_key, returned as {id, secret, record}.
sub key {
    my $j = api_key(@_);
    return { id => $j->{api_key}{id}, secret => $j->{secret}, record => $j->{api_key} };
}

sub ids { [sort map { $_->{id} } @{$_[0] // []}] }

start_nginx();

my $ua = signup();
my $ub = signup();
my ($ta, $tb) = ($ua->{token}, $ub->{token});
my $wa = workspace($ta, 'A');
my $wb = workspace($tb, 'B');
my $ka = key($ta, $wa, 'A key', 'articles:read', 'articles:write');
my $kb = key($tb, $wb, 'B key', 'articles:read', 'articles:write');
my $kb2 = key($tb, $wb, 'B key 2', 'videos:read');

# --- A's session against B --------------------------------------------------------------

check_err(req(GET => "/v1/workspaces/$wb", $ta), 403, 'not_workspace_member', 'A session: get workspace B');
check_err(req(GET => "/v1/workspaces/$wb/api-keys", $ta), 403, 'not_workspace_member', 'A session: list B\'s keys');
check_err(req(POST => "/v1/workspaces/$wb/api-keys", $ta, { name => 'intruder', scopes => ['articles:read'] }),
          403, 'not_workspace_member', 'A session: create a key in B');
check_err(req(DELETE => "/v1/workspaces/$wb/api-keys/$kb->{id}", $ta), 403, 'not_workspace_member',
          'A session: revoke B\'s key by B\'s path');
check_err(req(DELETE => "/v1/workspaces/$wa/api-keys/$kb->{id}", $ta), 404, 'not_found',
          'A session: revoke B\'s key id through A\'s path');
check_err(req(GET => "/v1/workspaces/$wb/_test/editor", $ta), 403, 'not_workspace_member', 'A session: B\'s editor route');
is_deeply ids(req(GET => '/v1/workspaces', $ta)->{json}{workspaces}), [$wa], 'A session: lists only A';
my $la = req(GET => "/v1/workspaces/$wa/api-keys", $ta);
is_deeply ids($la->{json}{api_keys}), [$ka->{id}], 'A session: A\'s key list has only A\'s key';
ok index($la->{body}, $kb->{id}) < 0 && index($la->{body}, $wb) < 0, 'A session: nothing of B in A\'s key list';

# B's key is untouched by all that.
is req(GET => '/v1/api/key', $kb->{secret})->{status}, 200, 'B\'s key still works';
ok !defined psql("SELECT revoked_at FROM api_keys WHERE id = '$kb->{id}'")->[0][0], 'B\'s key is not revoked';
is psql(qq{SELECT count(*) FROM api_keys WHERE name = 'intruder'})->[0][0], 0, 'no key was created in B';

# --- A's key against B ------------------------------------------------------------------

my $self = req(GET => '/v1/api/key', $ka->{secret});
is $self->{status}, 200, 'A key: /v1/api/key 200';
is_deeply $self->{json}, { api_key => $ka->{record} }, 'A key: /v1/api/key shows A\'s key only';
ok index($self->{body}, $wb) < 0 && index($self->{body}, $kb->{id}) < 0, 'A key: nothing of B';
is_deeply req(GET => '/v1/_test/scoped', $ka->{secret})->{json},
    { workspace_id => $wa, user_id => $ua->{user}{id}, role => 5 }, 'A key: acts in A, for A\'s owner';
is_deeply req(GET => '/v1/_test/scoped', $kb->{secret})->{json},
    { workspace_id => $wb, user_id => $ub->{user}{id}, role => 5 }, 'B key: acts in B, for B\'s owner';
# A key is not a session: every studio route of B (and A) refuses it.
for my $t ([GET => "/v1/workspaces/$wb"], [GET => "/v1/workspaces/$wb/api-keys"],
           [POST => "/v1/workspaces/$wb/api-keys", { name => 'x', scopes => ['articles:read'] }],
           [DELETE => "/v1/workspaces/$wb/api-keys/$kb->{id}"], [GET => "/v1/workspaces/$wa"]) {
    my ($m, $p, $b) = @$t;
    check_err(req($m, $p, $ka->{secret}, $b), 401, 'invalid_token', "A key: $m $p");
}
# A session is not a key.
check_err(req(GET => '/v1/api/key', $ta), 401, 'invalid_api_key', 'A session on /v1/api/key');

# --- one user in both workspaces -------------------------------------------------------

# A's owner becomes a viewer of B: sees B, but can do nothing with B's keys, and A's key
# still only sees A.
psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wb', '$ua->{user}{id}', 'viewer')");
my $gb = req(GET => "/v1/workspaces/$wb", $ta);
is $gb->{status}, 200, 'A\'s owner, viewer in B: get B' or diag diag_resp($gb);
is(($gb->{json}{workspace} // {})->{role}, 'viewer', 'role in B: viewer');
is((req(GET => "/v1/workspaces/$wa", $ta)->{json}{workspace} // {})->{role}, 'owner', 'role in A: still owner');
check_err(req(GET => "/v1/workspaces/$wb/api-keys", $ta), 403, 'forbidden', 'viewer in B: list B\'s keys');
check_err(req(DELETE => "/v1/workspaces/$wb/api-keys/$kb->{id}", $ta), 403, 'forbidden', 'viewer in B: revoke B\'s key');
check_err(req(POST => "/v1/workspaces/$wb/api-keys", $ta, { name => 'x', scopes => ['articles:read'] }), 403, 'forbidden',
          'viewer in B: create a key in B');
is_deeply ids(req(GET => '/v1/workspaces', $ta)->{json}{workspaces}), [sort $wa, $wb], 'A\'s owner lists both';
is_deeply req(GET => '/v1/_test/scoped', $ka->{secret})->{json}{workspace_id}, $wa, 'A key: still acts in A only';

# Admin in B: B's keys reachable through B's path only, A's keys never through B's path.
psql("UPDATE members SET role = 'admin' WHERE workspace_id = '$wb' AND user_id = '$ua->{user}{id}'");
is_deeply ids(req(GET => "/v1/workspaces/$wb/api-keys", $ta)->{json}{api_keys}), [sort $kb->{id}, $kb2->{id}],
    'admin in B: lists B\'s keys, not A\'s';
check_err(req(DELETE => "/v1/workspaces/$wb/api-keys/$ka->{id}", $ta), 404, 'not_found', 'admin in B: A\'s key id through B\'s path');
check_err(req(DELETE => "/v1/workspaces/$wa/api-keys/$kb2->{id}", $ta), 404, 'not_found', 'owner of A: B\'s key id through A\'s path');
is req(GET => '/v1/api/key', $ka->{secret})->{status}, 200, 'A\'s key survived';
is req(GET => '/v1/api/key', $kb2->{secret})->{status}, 200, 'B\'s key 2 survived';
my $kab = key($ta, $wb, 'A owner\'s key in B', 'articles:write');
is_deeply req(GET => '/v1/_test/scoped', $kab->{secret})->{json},
    { workspace_id => $wb, user_id => $ua->{user}{id}, role => 4 }, 'a key minted in B acts in B, with the creator\'s role there';
is_deeply ids(req(GET => "/v1/workspaces/$wa/api-keys", $ta)->{json}{api_keys}), [$ka->{id}], 'and is not listed in A';
# The membership in B ends: the key made in B stops; A's key is unaffected.
psql("DELETE FROM members WHERE workspace_id = '$wb' AND user_id = '$ua->{user}{id}'");
check_err(req(GET => '/v1/api/key', $kab->{secret}), 401, 'invalid_api_key', 'after leaving B: the key made in B');
is req(GET => '/v1/api/key', $ka->{secret})->{status}, 200, 'after leaving B: A\'s key still works';
check_err(req(GET => "/v1/workspaces/$wb", $ta), 403, 'not_workspace_member', 'after leaving B: get B');

# B suspended: A is unaffected.
psql("UPDATE workspaces SET suspended = true WHERE id = '$wb'");
check_err(req(GET => '/v1/api/key', $kb->{secret}), 403, 'workspace_suspended', 'B suspended: B\'s key');
is req(GET => '/v1/api/key', $ka->{secret})->{status}, 200, 'B suspended: A\'s key works';
is req(GET => "/v1/workspaces/$wa", $ta)->{status}, 200, 'B suspended: A\'s session works on A';
check_err(req(GET => "/v1/workspaces/$wb", $ta), 403, 'not_workspace_member', 'B suspended: A still learns nothing of B');

done_testing();
