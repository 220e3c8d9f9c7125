# Who may sign up (issue 33, cms_signup on|off|invite, docs/operations.md):
# - on (the default): anyone; a signup that carries an invitation's token makes the account
#   and its membership in one transaction; a token for another email (403
#   invitation_email_mismatch), a forged one (404 invalid_invitation) or a used one creates
#   no user; a wrong type is 400;
# - invite: a signup without an invitation is 403 invitation_required, with one for its
#   email 201 and a member with the invited role;
# - off: 403 signup_disabled with or without one, no user created; cms-admin still makes
#   users, and an existing user still accepts an invitation;
# - nginx -t refuses another value.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req check_err one signup signup_defaults workspace);

signup_defaults(email_prefix => 'gate');

my $N = 0;
sub email { sprintf 'signup%d-%d@example.com', ++$N, $$ }
sub users { one("SELECT count(*) FROM users WHERE lower(email) = lower('$_[0]')") }
sub signup_req { req(POST => '/v1/auth/signup', undef, { password => 'a long enough password', @_ }) }

my ($owner, $wid);
sub invite {
    my ($email, $role) = @_;
    my $r = req(POST => "/v1/workspaces/$wid/invitations", $owner->{token}, { email => $email, role => $role // 'editor' });
    die "invite: $r->{status} $r->{body}" unless $r->{status} == 201;
    return $r->{json}{token};
}
sub role_of {
    my $email = shift;
    return one("SELECT m.role FROM members m JOIN users u ON u.id = m.user_id"
               . " WHERE m.workspace_id = '$wid' AND lower(u.email) = lower('$email')") // '';
}

# --- on ------------------------------------------------------------------------------------
start_nginx();
$owner = signup();
$wid = workspace($owner->{token}, 'Gate');

my $e = email();
my $r = signup_req(email => $e);
is $r->{status}, 201, 'on: a signup without an invitation is 201';

$e = email();
my $tok = invite($e, 'author');
$r = signup_req(email => $e, invitation => $tok);
is $r->{status}, 201, 'on: a signup with its invitation is 201';
(my $role = role_of($e)) =~ s/\s+$//;
is $role, 'author', '... and the account is a member with the invited role';
is one("SELECT count(*) FROM invitations WHERE workspace_id = '$wid' AND lower(email) = lower('$e')"
       . " AND accepted_at IS NOT NULL"), 1, '... the invitation is accepted';
check_err(signup_req(email => email(), invitation => $tok), 404, 'invalid_invitation', 'on: a used invitation');

my $other = email();
$tok = invite($other);
$e = email();
check_err(signup_req(email => $e, invitation => $tok), 403, 'invitation_email_mismatch',
          'on: an invitation for another email');
is users($e), 0, '... creates no user';
check_err(signup_req(email => $e, invitation => 'inv_forged'), 404, 'invalid_invitation', 'on: a forged token');
is users($e), 0, '... creates no user';
check_err(signup_req(email => $e, invitation => 42), 400, 'invalid_field_value', 'on: an invitation that is not a string');
is users($e), 0, '... creates no user';

# --- invite --------------------------------------------------------------------------------
start_nginx(http_config => 'cms_signup invite;');
$e = email();
check_err(signup_req(email => $e), 403, 'invitation_required', 'invite: a signup without an invitation');
check_err(signup_req(email => $e, invitation => undef), 403, 'invitation_required', 'invite: a null invitation');
is users($e), 0, '... creates no user';
$r = signup_req(email => $other, invitation => $tok);
is $r->{status}, 201, 'invite: a signup with its invitation is 201';
($role = role_of($other)) =~ s/\s+$//;
is $role, 'editor', '... a member with the invited role';
is req(GET => "/v1/workspaces/$wid", $r->{json}{token})->{status}, 200, '... whose session reads the workspace';

# --- off -----------------------------------------------------------------------------------
start_nginx(http_config => 'cms_signup off;');
$e = email();
$tok = invite($e);
check_err(signup_req(email => $e), 403, 'signup_disabled', 'off: a signup');
check_err(signup_req(email => $e, invitation => $tok), 403, 'signup_disabled', 'off: even with an invitation');
check_err(req(POST => '/v1/auth/signup', undef, {}), 403, 'signup_disabled',
          'off: refused before the fields are looked at');
is users($e), 0, '... no user created';
my $admin = $ENV{TEST_CMS_ADMIN} or die 'TEST_CMS_ADMIN is not set';
my $db = 'hostaddr=127.0.0.1 port=' . $ENV{TEST_CMS_PG_PORT} . ' dbname=' . Cms::Test::db_name() . ' user=postgres';
my $id = `$admin --db '$db' user create --email '$e' --password 'a long enough password'`;
is $?, 0, 'off: cms-admin still makes the user';
$r = req(POST => '/v1/auth/login', undef, { email => $e, password => 'a long enough password' });
is $r->{status}, 200, '... who logs in';
is req(POST => "/v1/invitations/$tok/accept", $r->{json}{token})->{status}, 200,
    '... and accepts the invitation';

# --- nginx -t ------------------------------------------------------------------------------
my $t = nginx_test(http_config => 'cms_signup maybe;');
isnt $t->{rc}, 0, 'nginx -t refuses cms_signup maybe';
like $t->{out} // '', qr/invalid value "maybe"/, '... naming the value';

done_testing();
