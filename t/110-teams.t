# Teams and plans (issue 17): members, invitations, roles, plan limits, profiles.
#
# Attacks: invite -> accept -> role change -> remove, with every refusal on the way
# (invalid_email, invalid_role, already_member, an admin granting or touching "owner", a
# member below admin managing, an outsider, no session); the last owner can be neither
# demoted nor removed, also by two owners demoting each other at the same time;
# invitation tokens that are forged (signed under another key), altered, of another kind,
# expired (by their signed time and by the database's), reused, revoked, replaced by a
# new invitation, or accepted by a session of another address are refused; the token is
# stored only as its keyed hash; concurrent invites at the member limit never go over
# it; a removed member's key stops working; a plan changed with cms-admin moves every
# limit, decided in one SQL function; cms_default_plan puts new workspaces on a plan;
# PATCH /v1/me; a password change needs the current password, voids every other
# session (and the caller's old token) and answers a new one; audit rows are written
# for each action and listed to owners and admins only.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(account_token account_token_hash req req_spec diag_resp check_err one signup signup_defaults workspace api_key key
                     master_secret $UUID $TS);
use Cms::ExtFixtures qw(cms_admin);

signup_defaults(email_prefix => 'teams');
start_nginx();

my $INV_RE = qr/^inv_[A-Za-z0-9_-]{54}$/;

sub make_token { account_token(kind => 'inv', @_) }
sub token_hash { account_token_hash(@_) }

my $owner = signup(name => 'Olive Owner');
my $ot = $owner->{token};
my $wid = workspace($ot, 'Team');
my $base = "/v1/workspaces/$wid";
my $outsider = signup();

sub invite { req(POST => "$base/invitations", $_[0], { email => $_[1], role => $_[2] }) }
sub accept_inv { req(POST => "/v1/invitations/$_[1]/accept", $_[0]) }
sub members { req(GET => "$base/members", $_[0] // $ot)->{json}{members} // [] }
sub role_of { one("SELECT role FROM members WHERE workspace_id = '$wid' AND user_id = '$_[0]{user}{id}'") }
sub audit_count {
    one("SELECT count(*) FROM audit_events WHERE workspace_id " . (defined $_[1] ? "= '$_[1]'" : 'IS NULL')
        . " AND action = '$_[0]'");
}

# Joins a user to the workspace through the API: invite (by the owner) and accept.
sub join_as {
    my ($role, $by) = @_;
    my $u = signup();
    my $r = invite($by // $ot, $u->{email}, $role);
    die 'invite: ' . diag_resp($r) unless $r->{status} == 201;
    my $a = accept_inv($u->{token}, $r->{json}{token});
    die 'accept: ' . diag_resp($a) unless $a->{status} == 200;
    return $u;
}

# --- the plan a new workspace is on --------------------------------------------------------

my $p = req(GET => "$base/plan", $ot);
is $p->{status}, 200, 'GET plan: 200' or diag diag_resp($p);
is_deeply $p->{json}, { plan => { name => 'free', member_limit => 25, storage_limit_bytes => 1073741824,
    upload_limit_bytes => 52428800, custom_modules => JSON::PP::true, site_limit => 5, webhook_limit => 16,
    members_used => 1, storage_used_bytes => 0 } }, 'a new workspace is on "free": its limits and what is used';

# --- members: list ---------------------------------------------------------------------------

my $l = req(GET => "$base/members", $ot);
is $l->{status}, 200, 'list members: 200' or diag diag_resp($l);
is_deeply $l->{json}{members}, [{ workspace_id => $wid, user_id => $owner->{user}{id}, name => 'Olive Owner',
    email => $owner->{email}, role => 'owner', joined_at => $l->{json}{members}[0]{joined_at} }],
    'members: the owner, with name, email, role';
like $l->{json}{members}[0]{joined_at} // '', $TS, 'joined_at is a time';
is_deeply $l->{json}{pagination}, { total => 1, limit => 50, offset => 0 }, 'members are paged'
    or diag explain $l->{json}{pagination};
check_err(req(GET => "$base/members", $outsider->{token}), 403, 'not_workspace_member', 'list members as an outsider');
check_err(req(GET => "$base/members"), 401, 'missing_token', 'list members without a session');

# --- invitations: validation and who may invite -----------------------------------------------

my $alice = signup(name => 'Alice');
for my $t (['invalid_email', { email => 'not-an-email', role => 'editor' }],
           ['email_required', { role => 'editor' }],
           ['invalid_role', { email => $alice->{email}, role => 'superuser' }],
           ['invalid_role', { email => $alice->{email}, role => 'Owner' }],
           ['invalid_role', { email => $alice->{email} }],
           ['invalid_role', { email => $alice->{email}, role => 5 }],
           ['invalid_request', { email => $alice->{email}, role => 'editor', token => 'mine' }]) {
    check_err(req(POST => "$base/invitations", $ot, $t->[1]), 400, $t->[0],
              'invite ' . JSON::PP->new->canonical->encode($t->[1]));
}
check_err(invite($ot, $owner->{email}, 'editor'), 409, 'already_member', 'invite an existing member');
check_err(invite($ot, uc $owner->{email}, 'viewer'), 409, 'already_member', 'invite a member, email in upper case');
check_err(invite($outsider->{token}, $alice->{email}, 'editor'), 403, 'not_workspace_member', 'invite as an outsider');
is one("SELECT count(*) FROM invitations"), 0, 'refused invitations stored nothing';

my $inv = invite($ot, $alice->{email}, 'admin');
is $inv->{status}, 201, 'owner invites alice as admin: 201' or diag diag_resp($inv);
my $i1 = $inv->{json}{invitation} // {};
my $t1 = $inv->{json}{token} // '';
is_deeply [sort keys %{$inv->{json}}], [qw(invitation token)], 'answer: {invitation, token}';
like $t1, $INV_RE, 'token: inv_ and 54 base64url characters';
like $i1->{id} // '', $UUID, 'invitation.id';
is $i1->{status}, 'pending', 'status pending';
is $i1->{role}, 'admin', 'role';
is $i1->{email}, $alice->{email}, 'email';
is $i1->{invited_by}, $owner->{user}{id}, 'invited_by';
ok defined $i1->{expires_at} && !defined $i1->{accepted_at} && !defined $i1->{revoked_at}, 'expires_at; not accepted or revoked';
is $inv->{headers}{'cache-control'}, 'no-store', 'the answer with the token: Cache-Control: no-store';
is one("SELECT encode(token_hash, 'hex') FROM invitations WHERE id = '$i1->{id}'"), token_hash($t1),
    'stored: HMAC-SHA256 under the derived key of "cms token id:" + token';
is one("SELECT count(*) FROM invitations i WHERE i::text LIKE '%" . substr($t1, 4, 20) . "%'"), 0,
    'no part of the token in the row';
my $li = req(GET => "$base/invitations", $ot);
is $li->{status}, 200, 'list invitations: 200';
ok !grep({ index($li->{body}, $_) >= 0 } $t1, substr($t1, 4)), 'the list holds no token';
is audit_count('member.invited', $wid), 1, 'audit: member.invited';

# --- accepting ---------------------------------------------------------------------------------

check_err(accept_inv($outsider->{token}, $t1), 403, 'invitation_email_mismatch', 'accept with another address\'s session');
check_err(accept_inv(undef, $t1), 401, 'missing_token', 'accept without a session');
my $forged = make_token(key => 'k' x 32);
my $altered = $t1;
substr($altered, 30, 1) = substr($altered, 30, 1) eq 'A' ? 'B' : 'A';
for my $t (['forged (signed under another key)', $forged],
           ['one character altered', $altered],
           ['another kind (pwr_, validly signed)', make_token(kind => 'pwr')],
           ['kind changed on a real token', 'pwr' . substr($t1, 3)],
           ['truncated', substr($t1, 0, -1)],
           ['extended', "${t1}A"],
           ['garbage', 'inv_' . ('!' x 54)],
           ['validly signed, never issued', make_token()],
           ['validly signed, expired', make_token(exp => time - 5)]) {
    check_err(accept_inv($alice->{token}, $t->[1]), 404, 'invalid_invitation', "accept: $t->[0]");
}
is role_of($alice), undef, 'alice is not a member yet';

my $acc = accept_inv($alice->{token}, $t1);
is $acc->{status}, 200, 'alice accepts: 200' or diag diag_resp($acc);
is_deeply $acc->{json}{member}, { workspace_id => $wid, user_id => $alice->{user}{id}, name => 'Alice',
    email => $alice->{email}, role => 'admin', joined_at => ($acc->{json}{member} // {})->{joined_at} },
    'answer: {member}, the new admin';
check_err(accept_inv($alice->{token}, $t1), 404, 'invalid_invitation', 'the same token again (single use)');
is one("SELECT cms_invitation_status(i) FROM invitations i WHERE id = '$i1->{id}'"), 'accepted', 'invitation accepted';
is audit_count('member.added', $wid), 1, 'audit: member.added';
is scalar(@{members()}), 2, 'two members';

# expired in the database before its signed time; revoked; replaced
my $bob = signup();
my $tb = invite($ot, $bob->{email}, 'editor')->{json};
psql("UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = '$tb->{invitation}{id}'");
check_err(accept_inv($bob->{token}, $tb->{token}), 404, 'invalid_invitation', 'accept an invitation expired in the database');
my $tb2 = invite($alice->{token}, $bob->{email}, 'editor')->{json};
ok $tb2->{token}, 'the admin invites bob again';
my $tb3 = invite($alice->{token}, $bob->{email}, 'author')->{json};
check_err(accept_inv($bob->{token}, $tb2->{token}), 404, 'invalid_invitation', 'a replaced invitation\'s token');
check_err(req(DELETE => "$base/invitations/$tb3->{invitation}{id}", $bob->{token}), 403, 'not_workspace_member',
          'revoke as a non-member');
my $rv = req(DELETE => "$base/invitations/$tb3->{invitation}{id}", $alice->{token});
is $rv->{status}, 204, 'the admin revokes it: 204' or diag diag_resp($rv);
check_err(req(DELETE => "$base/invitations/$tb3->{invitation}{id}", $ot), 404, 'not_found', 'revoke it again');
check_err(req(DELETE => "$base/invitations/nope", $ot), 404, 'not_found', 'revoke a malformed id');
check_err(accept_inv($bob->{token}, $tb3->{token}), 404, 'invalid_invitation', 'a revoked invitation\'s token');
is audit_count('invitation.revoked', $wid), 3, 'audit: invitation.revoked, for the two replaced and the one revoked';
is one("SELECT data->>'replaced_by' FROM audit_events WHERE action = 'invitation.revoked'"
       . " AND target_id = '$tb2->{invitation}{id}'"), $tb3->{invitation}{id},
   'a replaced invitation\'s audit row names the one that replaced it';
is one("SELECT count(*) FROM audit_events WHERE action = 'invitation.revoked'"
       . " AND target_id = '$tb3->{invitation}{id}' AND NOT data ? 'replaced_by'"), 1,
   'the revoked one\'s row does not';
my $statuses = { map { ($_->{id} => $_->{status}) } @{req(GET => "$base/invitations", $ot)->{json}{invitations}} };
is_deeply [@$statuses{$i1->{id}, $tb->{invitation}{id}, $tb2->{invitation}{id}, $tb3->{invitation}{id}}],
    [qw(accepted revoked revoked revoked)], 'list: accepted; expired, replaced and revoked (a new invitation to the address revokes its open ones)';

# only owners invite owners; below admin nobody invites
check_err(invite($alice->{token}, $bob->{email}, 'owner'), 403, 'forbidden', 'an admin invites an owner');
# an admin cannot replace (so cancel or downgrade) an owner's invitation
{
    my $carol = signup();
    my $own = invite($ot, $carol->{email}, 'owner');
    is $own->{status}, 201, 'the owner invites carol as owner' or diag diag_resp($own);
    my $revoked = audit_count('invitation.revoked', $wid);
    check_err(invite($alice->{token}, $carol->{email}, 'viewer'), 403, 'forbidden',
              'the admin invites carol as viewer while her owner invitation is open');
    check_err(invite($alice->{token}, uc $carol->{email}, 'admin'), 403, 'forbidden', '... the address in capitals');
    is one("SELECT cms_invitation_status(i) FROM invitations i WHERE id = '$own->{json}{invitation}{id}'"), 'pending',
       'the owner invitation is still pending';
    is one("SELECT count(*) FROM invitations WHERE workspace_id = '$wid' AND lower(email) = lower('$carol->{email}')"), 1,
       'and no other was written';
    my $by_owner = invite($ot, $carol->{email}, 'editor');
    is $by_owner->{status}, 201, 'the owner may replace it' or diag diag_resp($by_owner);
    is audit_count('invitation.revoked', $wid), $revoked + 1, '... with its invitation.revoked row';
    my $acc_c = accept_inv($carol->{token}, $own->{json}{token});
    check_err($acc_c, 404, 'invalid_invitation', 'the replaced owner invitation\'s token');
    is req(DELETE => "$base/invitations/$by_owner->{json}{invitation}{id}", $ot)->{status}, 204,
       'and revoke it (it would hold a seat below)';
}
my $ed = join_as('editor');
check_err(invite($ed->{token}, $bob->{email}, 'viewer'), 403, 'forbidden', 'an editor invites');
check_err(req(GET => "$base/invitations", $ed->{token}), 403, 'forbidden', 'an editor lists invitations');

# --- role changes --------------------------------------------------------------------------------

my $vw = join_as('viewer', $alice->{token});
my $patch = sub { req(PATCH => "$base/members/$_[1]{user}{id}", $_[0], { role => $_[2] }) };
my $pr = $patch->($alice->{token}, $vw, 'author');
is $pr->{status}, 200, 'the admin makes the viewer an author: 200' or diag diag_resp($pr);
is(($pr->{json}{member} // {})->{role}, 'author', 'answer: {member} with the new role');
is role_of($vw), 'author', 'stored';
check_err($patch->($alice->{token}, $vw, 'owner'), 403, 'forbidden', 'an admin grants owner');
check_err($patch->($alice->{token}, $owner, 'admin'), 403, 'forbidden', 'an admin demotes the owner');
check_err($patch->($ed->{token}, $vw, 'viewer'), 403, 'forbidden', 'an editor changes a role');
check_err($patch->($ot, $vw, 'boss'), 400, 'invalid_role', 'an unknown role');
check_err(req(PATCH => "$base/members/$vw->{user}{id}", $ot, {}), 400, 'invalid_role', 'no role');
check_err($patch->($ot, $outsider, 'viewer'), 404, 'not_found', 'a user who is not a member');
check_err(req(PATCH => "$base/members/nope", $ot, { role => 'viewer' }), 404, 'not_found', 'a malformed id');
check_err($patch->($ot, $owner, 'admin'), 409, 'last_owner', 'the last owner demotes themselves');
is role_of($owner), 'owner', 'still the owner';
is $patch->($ot, $alice, 'owner')->{status}, 200, 'the owner makes alice an owner';
is $patch->($alice->{token}, $owner, 'admin')->{status}, 200, 'now alice (owner) demotes the first owner';
check_err($patch->($alice->{token}, $alice, 'editor'), 409, 'last_owner', 'the last owner again');
is $patch->($alice->{token}, $owner, 'owner')->{status}, 200, 'alice makes them owner again';
is audit_count('member.role_changed', $wid), 4, 'audit: four role changes';

# two owners demoting each other at the same moment: one of them stays owner
for my $round (1 .. 5) {
    my @r = parallel_requests(req_spec(PATCH => "$base/members/$alice->{user}{id}", $ot, { role => 'admin' }),
                              req_spec(PATCH => "$base/members/$owner->{user}{id}", $alice->{token}, { role => 'admin' }));
    my $owners = one("SELECT count(*) FROM members WHERE workspace_id = '$wid' AND role = 'owner'");
    is $owners, 1, "round $round: exactly one owner left" or diag join ' / ', map { diag_resp($_) } @r;
    my @st = sort map { $_->{status} } @r;
    ok(($st[0] == 200 && ($st[1] == 409 || $st[1] == 403)), "round $round: one 200, the other refused (@st)");
    # both owners again
    psql("UPDATE members SET role = 'owner' WHERE workspace_id = '$wid' AND user_id IN ('$owner->{user}{id}', '$alice->{user}{id}')");
}
psql("UPDATE members SET role = 'admin' WHERE workspace_id = '$wid' AND user_id = '$alice->{user}{id}'");

# --- removal -------------------------------------------------------------------------------------

my $vkey = key($ot, $wid, 'owner key', 'articles:read');
psql("UPDATE members SET role = 'admin' WHERE workspace_id = '$wid' AND user_id = '$vw->{user}{id}'");
my $vk = key($vw->{token}, $wid, 'key of a leaving member', 'articles:read');
psql("UPDATE members SET role = 'author' WHERE workspace_id = '$wid' AND user_id = '$vw->{user}{id}'");
is req(GET => '/v1/api/articles', $vk)->{status}, 200, 'the member\'s key works';
check_err(req(DELETE => "$base/members/$vw->{user}{id}", $ed->{token}), 403, 'forbidden', 'an editor removes another');
check_err(req(DELETE => "$base/members/$owner->{user}{id}", $alice->{token}), 403, 'forbidden', 'an admin removes the owner');
check_err(req(DELETE => "$base/members/$owner->{user}{id}", $ot), 409, 'last_owner', 'the last owner leaves');
check_err(req(DELETE => "$base/members/$outsider->{user}{id}", $ot), 404, 'not_found', 'remove a non-member');
my $rm = req(DELETE => "$base/members/$vw->{user}{id}", $alice->{token});
is $rm->{status}, 204, 'the admin removes the author: 204' or diag diag_resp($rm);
is role_of($vw), undef, 'gone';
check_err(req(GET => '/v1/api/articles', $vk), 401, 'invalid_api_key', 'the removed member\'s key stops at once');
check_err(req(GET => "$base/members", $vw->{token}), 403, 'not_workspace_member', 'the removed member is out');
is req(GET => '/v1/api/articles', $vkey)->{status}, 200, 'the owner\'s key still works';
my $leave = req(DELETE => "$base/members/$ed->{user}{id}", $ed->{token});
is $leave->{status}, 204, 'an editor leaves: 204' or diag diag_resp($leave);
is audit_count('member.removed', $wid), 1, 'audit: member.removed';
is audit_count('member.left', $wid), 1, 'audit: member.left';

# --- the member limit under concurrent invites ---------------------------------------------------

is cms_admin('plan', 'set', '--name', 'small', '--members', '6'), 'small', 'cms-admin plan set small (6 members)';
is cms_admin('plan', 'assign', '--workspace', $wid, '--name', 'small'), $wid, 'cms-admin plan assign';
my $used = req(GET => "$base/plan", $ot)->{json}{plan}{members_used};
is $used, 2, 'used: two members (expired and revoked invitations hold no seat)';
my @inv = parallel_requests(map { req_spec(POST => "$base/invitations", $ot,
                                           { email => "burst$_-$$\@example.com", role => 'viewer' }) } 1 .. 12);
my %st;
$st{$_->{status}}++ for @inv;
is $st{201}, 6 - $used, '12 concurrent invites: exactly the free seats succeed' or diag explain \%st;
is $st{409}, 12 - (6 - $used), 'the others: 409';
ok !grep({ $_->{status} == 409 && ($_->{json}{code} // '') ne 'member_limit_reached' } @inv), '... member_limit_reached';
is one("SELECT cms_plan_usage('$wid', 'members')"), 6, 'never over the limit';
check_err(invite($ot, "late-$$\@example.com", 'viewer'), 409, 'member_limit_reached', 'one more');

# --- a plan change moves every limit (decided by cms_plan_refusal) -------------------------------

sub refusal { one("SELECT coalesce(cms_plan_refusal('$wid', '$_[0]', $_[1]" . (defined $_[2] ? ", $_[2]" : '') . "), 'ok')") }
psql("INSERT INTO media_assets (workspace_id, size_bytes) VALUES ('$wid', 700), ('$wid', 300)");
my %before = (members => refusal('members', 1), storage => refusal('storage_bytes', 1),
              upload => refusal('upload_bytes', 2000), modules => refusal('custom_modules', 1),
              sites => refusal('sites', 1, 2), webhooks => refusal('webhooks', 1, 3));
is_deeply \%before, { members => 'member_limit_reached', storage => 'ok', upload => 'ok', modules => 'ok', sites => 'ok',
                      webhooks => 'ok' },
    'plan small: members full; 1,000 bytes stored of 1 GiB; 2,000-byte upload, custom modules, a third site allowed';
cms_admin('plan', 'set', '--name', 'small', '--members', '7', '--storage', '1000', '--upload', '1999',
          '--custom-modules', 'no', '--sites', '2', '--webhooks', '3');
my %after = (members => refusal('members', 1), storage => refusal('storage_bytes', 1),
             upload => refusal('upload_bytes', 2000), modules => refusal('custom_modules', 1),
             sites => refusal('sites', 1, 2), webhooks => refusal('webhooks', 1, 3));
is_deeply \%after, { members => 'ok', storage => 'storage_limit_exceeded', upload => 'upload_too_large',
                     modules => 'module_not_allowed', sites => 'site_limit_reached', webhooks => 'webhook_limit_reached' },
    'plan changed: every limit moved (one seat more, storage full, upload over the cap, no custom modules, 2 sites)';
is_deeply req(GET => "$base/plan", $alice->{token})->{json}{plan},
    { name => 'small', member_limit => 7, storage_limit_bytes => 1000, upload_limit_bytes => 1999,
      custom_modules => JSON::PP::false, site_limit => 2, webhook_limit => 3, members_used => 6,
      storage_used_bytes => 1000 },
    'GET plan shows the new limits and usage';
is req(GET => $base, $ot)->{json}{workspace}{storage_quota_bytes}, 1000, 'the workspace record\'s quota follows the plan';
# the custom-module routes ask the same decision (sql/0017)
check_err(req(POST => "$base/custom-modules", $ot, { slug => 'on-small', name => 'On small' }),
          403, 'module_not_allowed', 'a plan without custom modules: the studio refuses a module');
is invite($ot, "seat7-$$\@example.com", 'viewer')->{status}, 201, 'the seventh seat is taken by an invite';
cms_admin('plan', 'set', '--name', 'small', '--members', 'none');
is refusal('members', 100), 'ok', '--members none: no member limit';
is audit_count('plan.changed', $wid), 1, 'audit: plan.changed';
eval { cms_admin('plan', 'assign', '--workspace', $wid, '--name', 'nope') };
like $@, qr/exit 1/, 'cms-admin plan assign to an unknown plan fails';
eval { cms_admin('plan', 'set', '--name', 'x', '--members', '-1') };
like $@, qr/exit 1/, 'cms-admin plan set with a negative limit fails';
my $list = cms_admin('plan', 'list');
like $list, qr/^small\tnone\t1000\t1999\tno\t2\t3$/m, 'cms-admin plan list' or diag $list;

# cms_default_plan: new workspaces go on it
cms_admin('plan', 'set', '--name', 'pro', '--members', '100');
start_nginx(http_config => 'cms_default_plan pro;');
my $w2 = req(POST => '/v1/workspaces', $outsider->{token}, { name => 'On pro' });
is(($w2->{json}{workspace} // {})->{plan}, 'pro', 'cms_default_plan pro: a new workspace is on pro') or diag diag_resp($w2);
start_nginx(http_config => 'cms_default_plan missing;');
my $w3 = req(POST => '/v1/workspaces', $outsider->{token}, { name => 'On nothing' });
is $w3->{status}, 500, 'cms_default_plan naming no plan: 500 (the log names it)';
start_nginx();

# --- profile and password --------------------------------------------------------------------------

my $me = req(PATCH => '/v1/me', $ot, { name => 'Olive Renamed' });
is $me->{status}, 200, 'PATCH /v1/me: 200' or diag diag_resp($me);
is(($me->{json}{user} // {})->{name}, 'Olive Renamed', 'answer: {user} with the new name');
is req(GET => '/v1/me', $ot)->{json}{user}{name}, 'Olive Renamed', 'GET /v1/me sees it';
is req(PATCH => '/v1/me', $ot, { id => 'x', email => 'other@example.com' })->{json}{user}{email}, $owner->{email},
    'read-only fields are ignored (the email does not change here)';
check_err(req(PATCH => '/v1/me', $ot, { name => 'x' x 201 }), 400, 'invalid_field_value', 'a name over 200 characters');
check_err(req(PATCH => '/v1/me', $ot, { password => 'x' x 12 }), 400, 'invalid_request', 'an unknown field');
check_err(req(PATCH => '/v1/me', undef, { name => 'x' }), 401, 'missing_token', 'PATCH /v1/me without a session');

my $cu = signup(password => 'the first password');
my $login = sub { req(POST => '/v1/auth/login', undef, { email => $cu->{email}, password => $_[0] }) };
my $other = $login->('the first password')->{json}{token};
my $third = cms_admin('session', '--email', $cu->{email});
is req(GET => '/v1/me', $other)->{status}, 200, 'another session works';
is req(GET => '/v1/me', $third)->{status}, 200, 'a cms-admin session works';
my $pw = sub { req(POST => '/v1/me/password', $_[0], { current_password => $_[1], new_password => $_[2] }) };
check_err($pw->($cu->{token}, 'not the password', 'a brand new password'), 400, 'invalid_current_password',
          'wrong current password');
check_err($pw->($cu->{token}, 'the first password', 'short'), 400, 'password_too_short', 'a short new password');
check_err(req(POST => '/v1/me/password', $cu->{token}, { new_password => 'a brand new password' }), 400,
          'invalid_request', 'no current password');
check_err($pw->(undef, 'the first password', 'a brand new password'), 401, 'missing_token', 'no session');
is req(GET => '/v1/me', $other)->{status}, 200, 'refused changes end no session';
my $ch = $pw->($cu->{token}, 'the first password', 'a brand new password');
is $ch->{status}, 200, 'password changed: 200' or diag diag_resp($ch);
is_deeply [sort keys %{$ch->{json} // {}}], [qw(token user)], 'answer: {token, user}';
is $ch->{headers}{'cache-control'}, 'no-store', 'Cache-Control: no-store';
check_err(req(GET => '/v1/me', $other), 401, 'invalid_token', 'the other session is void');
check_err(req(GET => '/v1/me', $third), 401, 'invalid_token', 'the cms-admin session is void');
check_err(req(GET => '/v1/me', $cu->{token}), 401, 'invalid_token', 'the caller\'s old token is void too');
is req(GET => '/v1/me', $ch->{json}{token})->{status}, 200, 'the new token works';
check_err($login->('the first password'), 401, 'invalid_credentials', 'the old password no longer logs in');
my $nl = $login->('a brand new password');
is $nl->{status}, 200, 'the new password logs in';
is req(GET => '/v1/me', $nl->{json}{token})->{status}, 200, 'and its session works';
is req(GET => '/v1/me', cms_admin('session', '--email', $cu->{email}))->{status}, 200,
    'a new cms-admin session works (it signs the current generation)';
is audit_count('user.password_changed', undef), 1, 'audit: user.password_changed (the account\'s, no workspace)';

# --- the audit log ---------------------------------------------------------------------------------

my $revoked = api_key($ot, $wid, 'to revoke', 'articles:read')->{api_key}{id};
is req(DELETE => "$base/api-keys/$revoked", $ot)->{status}, 204, 'a key revoked';
my $al = req(GET => "$base/audit-events?limit=100", $alice->{token});
is $al->{status}, 200, 'the admin lists the audit log: 200' or diag diag_resp($al);
my @ev = @{$al->{json}{audit_events} // []};
my %actions;
$actions{$_->{action}}++ for @ev;
for my $a (qw(member.invited member.added member.role_changed member.removed member.left invitation.revoked
              api_key.created api_key.revoked plan.changed)) {
    ok $actions{$a}, "audit log lists $a";
}
is_deeply [sort keys %{$ev[0] // {}}], [qw(action actor_id created_at data id target_id target_type)], 'an event\'s fields';
is $ev[0]{action}, 'api_key.revoked', 'newest first';
my ($rc) = grep { $_->{action} eq 'member.role_changed' } @ev;
ok $rc && ref $rc->{data} eq 'HASH' && $rc->{data}{from} && $rc->{data}{to}, 'a role change records from and to';
is $al->{json}{pagination}{total}, scalar(@ev), 'paged, with the total';
check_err(req(GET => "$base/audit-events", $bob->{token}), 403, 'not_workspace_member', 'an outsider reads the log');
my $ed2 = join_as('editor');
check_err(req(GET => "$base/audit-events", $ed2->{token}), 403, 'forbidden', 'an editor reads the log');

# the members total is the workspace's counters (sql/0046), after every join, role change and removal above
is req(GET => "$base/members", $ot)->{json}{pagination}{total}, one("SELECT count(*) FROM members WHERE workspace_id = '$wid'"),
    'the members total is the count of the rows';
is one("SELECT count(*) FROM (SELECT role, count(*) FROM members WHERE workspace_id = '$wid' GROUP BY role"
       . " EXCEPT SELECT value, n FROM record_counts WHERE kind = 'members' AND workspace_id = '$wid' AND n > 0) x"), 0,
    'each role\'s counter holds its members';

done_testing();
