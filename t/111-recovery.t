# Account recovery and email verification (issue 17): POST /v1/auth/password-reset,
# /v1/auth/password-reset/confirm, /v1/auth/verify-email/request, /v1/auth/verify-email,
# and cms-admin account mail.
#
# Attacks: a request tells nothing about the address (unknown, inactive, verified: the
# same 204 and no message); malformed bodies and bad addresses are refused; the database
# holds only the token's keyed hash (the printed token is nowhere in it) and the mailer
# makes the token again from the row; a token that is forged (another key), altered, of
# the other kind, expired (by its signed time and by the database's), reused, superseded
# by a newer request, or genuine in form but never issued is refused; a second request
# within the minute queues nothing; a reset ends every session and verifies the address;
# with cms_require_verified_email on, signup -> verification -> login works end to end.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(account_token account_token_hash req diag_resp check_err one signup signup_defaults);
use Cms::ExtFixtures qw(cms_admin);
use Digest::SHA qw(hmac_sha256);

signup_defaults(email_prefix => 'recovery');
start_nginx();


sub make_token { account_token(kind => 'pwr', @_) }
sub token_hash { account_token_hash(@_) }

sub reset_req { req(POST => '/v1/auth/password-reset', undef, { email => $_[0] }) }
sub verify_req { req(POST => '/v1/auth/verify-email/request', undef, { email => $_[0] }) }
sub confirm { req(POST => '/v1/auth/password-reset/confirm', undef, { token => $_[0], new_password => $_[1] }) }
sub verify { req(POST => '/v1/auth/verify-email', undef, { token => $_[0] }) }
sub login { req(POST => '/v1/auth/login', undef, { email => $_[0], password => $_[1] }) }
sub outbox { one("SELECT count(*) FROM account_outbox WHERE lower(email) = lower('$_[0]')") }
# the messages cms-admin hands over: [id, type, email, token] each
sub mail { map { [split /\t/] } grep { length } split /\n/, cms_admin('account', 'mail') }
# lets a user ask again at once (the one-minute pause is the database's)
sub age_requests { one("UPDATE account_tokens SET created_at = created_at - interval '2 minutes'"
                       . " WHERE user_id = '$_[0]' RETURNING 1") }

mail();    # nothing from before

# --- a password reset, end to end ------------------------------------------------------------
{
    my $u = signup(password => 'the first password');
    my $uid = $u->{user}{id};
    my $r = reset_req($u->{email});
    is $r->{status}, 204, 'reset request: 204' or diag diag_resp($r);
    is $r->{body} // '', '', 'no body';
    is outbox($u->{email}), 1, 'one message queued';
    my @m = mail();
    is scalar(@m), 1, 'cms-admin account mail hands over one message' or diag explain \@m;
    is_deeply [@{$m[0]}[1, 2]], ['user.password_reset_requested', $u->{email}], 'its type and address';
    my $tok = $m[0][3] // '';
    like $tok, qr/^pwr_[A-Za-z0-9_-]{54}$/, 'the token: pwr_ and 54 characters';
    is scalar(mail()), 0, 'handed over once (marked sent)';
    is one("SELECT encode(token_hash, 'hex') FROM account_tokens WHERE user_id = '$uid'"), token_hash($tok),
       'the database keeps the keyed hash of the token the mailer made';
    is one("SELECT count(*) FROM (SELECT t::text AS x FROM account_tokens t UNION ALL"
           . " SELECT o::text FROM account_outbox o) s WHERE strpos(x, '$tok') > 0"), 0,
       'the token itself is nowhere in the database';

    check_err(confirm($tok, 'short'), 400, 'password_too_short', 'a short new password');
    my $c = confirm($tok, 'a brand new password');
    is $c->{status}, 204, 'confirm: 204' or diag diag_resp($c);
    check_err(req(GET => '/v1/me', $u->{token}), 401, 'invalid_token', 'the old session is over');
    check_err(login($u->{email}, 'the first password'), 401, 'invalid_credentials', 'the old password is refused');
    my $l = login($u->{email}, 'a brand new password');
    is $l->{status}, 200, 'the new password logs in' or diag diag_resp($l);
    is one("SELECT email_verified FROM users WHERE id = '$uid'"), 't', 'the reset verified the address';
    is one("SELECT count(*) FROM audit_events WHERE actor_id = '$uid' AND action = 'user.password_reset'"), 1,
       'audit: user.password_reset';
    check_err(confirm($tok, 'another new password'), 400, 'invalid_account_token', 'the token again (used)');
    is login($u->{email}, 'another new password')->{status}, 401, 'the reused token changed nothing';
}

# --- what a request never tells ----------------------------------------------------------------
{
    my $unknown = reset_req('nobody-at-all@example.com');
    is $unknown->{status}, 204, 'an unknown address: the same 204' or diag diag_resp($unknown);
    is $unknown->{body} // '', '', 'and the same empty body';
    is outbox('nobody-at-all@example.com'), 0, 'and no message';
    my $off = signup();
    one("UPDATE users SET active = false WHERE id = '$off->{user}{id}' RETURNING 1");
    is reset_req($off->{email})->{status}, 204, 'an inactive account: 204';
    is outbox($off->{email}), 0, 'and no message';
    my $u = signup();
    is reset_req(uc $u->{email})->{status}, 204, 'the address in capitals: 204';
    is reset_req($u->{email})->{status}, 204, 'asked again at once: 204';
    is outbox($u->{email}), 1, 'one message only within the minute';
    mail();

    check_err(req(POST => '/v1/auth/password-reset', undef, {}), 400, 'email_required', 'no email');
    check_err(reset_req('not an address'), 400, 'invalid_email', 'not an address');
    check_err(reset_req(42), 400, 'invalid_field_value', 'a number for email');
    check_err(req(POST => '/v1/auth/password-reset', undef, '{"email":'), 400, 'invalid_request', 'malformed JSON');
    check_err(req(POST => '/v1/auth/password-reset', undef, { email => $u->{email}, admin => 1 }), 400,
              'invalid_request', 'an unknown field');
    check_err(req(POST => '/v1/auth/password-reset/confirm', undef, { new_password => 'long enough pw' }), 400,
              'invalid_request', 'confirm without a token');
    check_err(req(POST => '/v1/auth/password-reset/confirm', undef, { token => make_token() }), 400,
              'invalid_request', 'confirm without a new password');
    check_err(req(POST => '/v1/auth/verify-email', undef, '[]'), 400, 'invalid_request', 'verify: not an object');
}

# --- refused tokens ------------------------------------------------------------------------------
{
    my $u = signup(password => 'the first password');
    my $uid = $u->{user}{id};
    reset_req($u->{email});
    my ($m) = mail();
    my $tok = $m->[3];
    my $other = hmac_sha256('cms account token v1', 'another secret entirely, 32+ bytes long');
    my $altered = $tok;
    substr($altered, 10, 1) = substr($altered, 10, 1) eq 'A' ? 'B' : 'A';
    for my $t ([make_token(key => $other), 'forged under another key'],
               [$altered, 'altered'],
               [make_token(exp => time - 10), 'expired by its signed time'],
               [make_token(), 'genuine in form, never issued'],
               [make_token(kind => 'vfy'), 'a verification token'],
               [make_token(kind => 'inv'), 'an invitation token'],
               ['pwr_', 'empty body'], ['x' x 60, 'garbage']) {
        check_err(confirm($t->[0], 'a brand new password'), 400, 'invalid_account_token', "reset: $t->[1]");
    }
    check_err(verify($tok), 400, 'invalid_account_token', 'a reset token on verify-email');
    check_err(confirm('x' x 70, 'a brand new password'), 400, 'invalid_field_value', 'a token over 63 characters');

    # expired by the database's time, while its signed time is ahead
    one("UPDATE account_tokens SET expires_at = now() - interval '1 second' WHERE user_id = '$uid' RETURNING 1");
    check_err(confirm($tok, 'a brand new password'), 400, 'invalid_account_token', 'expired in the database');

    # a newer request supersedes the open one
    age_requests($uid);
    reset_req($u->{email});
    my ($first) = mail();
    age_requests($uid);
    reset_req($u->{email});
    my ($second) = mail();
    isnt $second->[3], $first->[3], 'a new request, a new token';
    check_err(confirm($first->[3], 'a brand new password'), 400, 'invalid_account_token', 'the superseded token');
    is confirm($second->[3], 'a brand new password')->{status}, 204, 'the newer one works';
    is login($u->{email}, 'a brand new password')->{status}, 200, 'and set the password';
    is login($u->{email}, 'the first password')->{status}, 401, 'the first password is gone';
}

# --- email verification, with cms_require_verified_email on ----------------------------------------
{
    restart_nginx(http_config => 'cms_require_verified_email on;');
    my $u = signup(password => 'the first password');
    my $uid = $u->{user}{id};
    check_err(login($u->{email}, 'the first password'), 403, 'email_not_verified', 'unverified: no login');
    my $r = verify_req($u->{email});
    is $r->{status}, 204, 'verification request: 204' or diag diag_resp($r);
    my @m = mail();
    is scalar(@m), 1, 'one message' or diag explain \@m;
    is $m[0][1], 'user.verification_requested', 'its type';
    like $m[0][3], qr/^vfy_[A-Za-z0-9_-]{54}$/, 'a vfy_ token';
    check_err(confirm($m[0][3], 'a brand new password'), 400, 'invalid_account_token',
              'a verification token cannot reset the password');
    check_err(verify(make_token(kind => 'vfy')), 400, 'invalid_account_token', 'a token never issued');
    my $v = verify($m[0][3]);
    is $v->{status}, 204, 'verify: 204' or diag diag_resp($v);
    is one("SELECT email_verified FROM users WHERE id = '$uid'"), 't', 'the address is verified';
    is one("SELECT count(*) FROM audit_events WHERE actor_id = '$uid' AND action = 'user.email_verified'"), 1,
       'audit: user.email_verified';
    my $l = login($u->{email}, 'the first password');
    is $l->{status}, 200, 'now the login works' or diag diag_resp($l);
    is req(GET => '/v1/me', $l->{json}{token})->{status}, 200, 'and its session reads /v1/me';
    check_err(verify($m[0][3]), 400, 'invalid_account_token', 'the verification again (used)');
    age_requests($uid);
    is verify_req($u->{email})->{status}, 204, 'a verified address asks again: 204';
    is scalar(mail()), 0, 'and no message';
    restart_nginx();
}

done_testing();
