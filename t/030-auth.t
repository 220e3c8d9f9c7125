# Accounts and sessions: signup, login, logout and /v1/me, with every error the spec
# names for them (content-api.md "Errors"), the session cookie's attributes, the Redis
# deny-list for logout, inactive accounts and cms_require_verified_email; every 401 with
# WWW-Authenticate: Bearer (error="invalid_token" for a refused token), a Basic header told
# apart from no credential by its message.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err check_subset new_email signup signup_defaults session_key $UUID $TS);
use JSON::PP ();
use Digest::SHA qw(hmac_sha256);
use MIME::Base64 qw(encode_base64url decode_base64url);

my $JSON = JSON::PP->new->utf8->canonical;
signup_defaults(password => sub { "pw-$_[0]-" . ('x' x 12) });

my $JWT_HEADER = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9';
my $SESSION_KEY = session_key();

sub check_user_record {
    my ($u, $email, $name, $what) = @_;
    ok ref $u eq 'HASH', "$what: user is an object" or return;
    is_deeply [sort keys %$u], [sort qw(id email name email_verified avatar_url created_at updated_at)],
        "$what: user has exactly the record's fields";
    ok exists $u->{avatar_url} && !defined $u->{avatar_url}, "$what: avatar_url null (none yet)";
    like $u->{id} // '', $UUID, "$what: user id is a UUID";
    is $u->{email}, $email, "$what: email";
    is $u->{name}, $name, "$what: name" if defined $name;
    ok JSON::PP::is_bool($u->{email_verified}) && !$u->{email_verified},
        "$what: email_verified is false";
    like $u->{created_at} // '', $TS, "$what: created_at is RFC 3339 UTC";
    like $u->{updated_at} // '', $TS, "$what: updated_at is RFC 3339 UTC";
    ok !grep({ /pass|hash/i } keys %$u), "$what: no password field";
}

# Session cookie: the token, and the attributes the design asks for.
sub check_session_cookie {
    my ($r, $token, $what) = @_;
    my @c = map { $_->[1] } grep { lc $_->[0] eq 'set-cookie' } @{$r->{header_list}};
    is scalar(@c), 1, "$what: one Set-Cookie";
    is $c[0], "cms_session=$token; Path=/; Max-Age=86400; HttpOnly; Secure; SameSite=Lax",
        "$what: Set-Cookie cms_session, HttpOnly, Secure, SameSite=Lax, 1 day";
}

sub check_token {
    my ($token, $user_id, $what) = @_;
    my ($h, $p, $s) = split /\./, $token // '', -1;
    is $h, $JWT_HEADER, "$what: JWT header is {alg: HS256, typ: JWT}";
    my $claims = eval { $JSON->decode(decode_base64url($p // '')) } || {};
    is $claims->{sub}, $user_id, "$what: sub is the user id";
    like $claims->{sid} // '', qr/^[0-9a-f]{32}$/, "$what: sid is 32 hex";
    ok defined $claims->{iat} && abs($claims->{iat} - time) < 60, "$what: iat is now";
    is(($claims->{exp} // 0) - ($claims->{iat} // 0), 86400, "$what: exp is iat + 1 day");
    is $s, encode_base64url(hmac_sha256("$h.$p", $SESSION_KEY)),
        "$what: signature is HMAC-SHA256 under HMAC(master, 'cms session jwt v1')";
    return $claims;
}

start_nginx();

# --- signup ----------------------------------------------------------------------------

my $email_a = new_email();
my $ua = signup(email => $email_a, password => 'first password A', name => 'Ada');
is $ua->{resp}{status}, 201, 'signup: 201';
like $ua->{resp}{headers}{'content-type'} // '', qr{^application/json}, 'signup: JSON';
check_user_record($ua->{user}, $email_a, 'Ada', 'signup');
check_session_cookie($ua->{resp}, $ua->{token}, 'signup');
my $claims_a = check_token($ua->{token}, $ua->{user}{id}, 'signup token');

# name is optional; exactly 10 characters is long enough
my $ub = signup(password => '0123456789');
is $ub->{user}{name}, '', 'signup without name: name is ""';
isnt $ub->{user}{id}, $ua->{user}{id}, 'two users, two ids';

my @signup_errors = (
    ['missing email', { password => 'long enough password' }, 400, 'email_required'],
    ['email without @', { email => 'no-at-sign.example.com', password => 'long enough password' },
        400, 'invalid_email'],
    ['email with two @', { email => 'a@b@example.com', password => 'long enough password' },
        400, 'invalid_email'],
    ['email with a space', { email => 'a b@example.com', password => 'long enough password' },
        400, 'invalid_email'],
    ['password of 9 characters', { email => new_email(), password => '123456789' },
        400, 'password_too_short'],
    ['empty password', { email => new_email(), password => '' }, 400, 'password_too_short'],
    ['missing password', { email => new_email() }, 400, 'invalid_request'],
    ['email is a number', { email => 5, password => 'long enough password' },
        400, 'invalid_field_value'],
    ['password is a number', { email => new_email(), password => 12345678901 },
        400, 'invalid_field_value'],
    ['name is an object', { email => new_email(), password => 'long enough password', name => {} },
        400, 'invalid_field_value'],
    ['unknown field', { email => new_email(), password => 'long enough password', admin => JSON::PP::true },
        400, 'invalid_request'],
    ['duplicate email', { email => $email_a, password => 'another password' }, 409, 'email_taken'],
    ['duplicate email, other case', { email => uc($email_a), password => 'another password' },
        409, 'email_taken'],
);
for my $t (@signup_errors) {
    my ($name, $body, $status, $code) = @$t;
    check_err(req(POST => '/v1/auth/signup', undef, $body), $status, $code, "signup, $name");
}
{
    # the rule's text, not a field reader's "is not valid": the minimum is what to fix
    my $r = req(POST => '/v1/auth/signup', undef, { email => new_email(), password => '123456789' });
    is(($r->{json} // {})->{error}, 'The password must have at least 10 characters',
       'signup, a short password: the message gives the minimum length');
}
check_err(req(POST => '/v1/auth/signup', undef, '{"email": "x@example.com", "password": '),
          400, 'invalid_request', 'signup, malformed JSON');
check_err(req(POST => '/v1/auth/signup', undef, '["x@example.com"]'),
          400, 'invalid_request', 'signup, JSON array body');
check_err(http(POST => '/v1/auth/signup', [],
               '{"email": "' . new_email() . '", "password": "long enough password"}'),
          415, 'unsupported_media_type', 'signup without Content-Type');
check_err(http(POST => '/v1/auth/signup', ['Content-Type' => 'text/plain'],
               '{"email": "' . new_email() . '", "password": "long enough password"}'),
          415, 'unsupported_media_type', 'signup as text/plain');
is psql(q{SELECT count(*) FROM users})->[0][0], 2, 'the refused signups created no user';

# --- login -----------------------------------------------------------------------------

my $login = req(POST => '/v1/auth/login', undef, { email => $email_a, password => 'first password A' });
is $login->{status}, 200, 'login: 200' or diag diag_resp($login);
check_user_record($login->{json}{user}, $email_a, 'Ada', 'login');
is $login->{json}{user}{id}, $ua->{user}{id}, 'login: the same user';
check_session_cookie($login, $login->{json}{token}, 'login');
my $claims_l = check_token($login->{json}{token}, $ua->{user}{id}, 'login token');
isnt $claims_l->{sid}, $claims_a->{sid}, 'login: a new session id';

my $login_uc = req(POST => '/v1/auth/login', undef, { email => uc $email_a, password => 'first password A' });
is $login_uc->{status}, 200, 'login with the email in upper case: 200' or diag diag_resp($login_uc);

my $wrong = req(POST => '/v1/auth/login', undef, { email => $email_a, password => 'wrong password A' });
check_err($wrong, 401, 'invalid_credentials', 'login, wrong password');
my $unknown = req(POST => '/v1/auth/login', undef, { email => 'nobody-' . new_email(), password => 'first password A' });
check_err($unknown, 401, 'invalid_credentials', 'login, unknown email');
is $unknown->{json}{error}, $wrong->{json}{error}, 'unknown email and wrong password: the same message';
ok !exists $wrong->{headers}{'set-cookie'}, 'failed login sets no cookie';

# The same answer in similar time: both run argon2 (a dummy hash for the unknown email).
{
    my (@tw, @tu);
    for (1 .. 3) {
        push @tw, req(POST => '/v1/auth/login', undef, { email => $email_a, password => 'wrong password A' })->{elapsed};
        push @tu, req(POST => '/v1/auth/login', undef, { email => "nobody$_-" . new_email(), password => 'wrong password A' })->{elapsed};
    }
    my ($mw) = (sort { $a <=> $b } @tw)[1];
    my ($mu) = (sort { $a <=> $b } @tu)[1];
    cmp_ok $mu, '>', $mw * 0.4, sprintf('unknown email (%.0f ms) takes about as long as a wrong password (%.0f ms)', $mu * 1000, $mw * 1000);
    cmp_ok $mu, '<', $mw * 2.5, 'and not much longer';
}

check_err(req(POST => '/v1/auth/login', undef, { email => $email_a }), 400, 'invalid_request',
          'login, missing password');
check_err(req(POST => '/v1/auth/login', undef, '{"email":'), 400, 'invalid_request',
          'login, malformed JSON');
check_err(http(POST => '/v1/auth/login', [], $JSON->encode({ email => $email_a, password => 'first password A' })),
          415, 'unsupported_media_type', 'login without Content-Type');

# --- /v1/me ----------------------------------------------------------------------------

my $me = req(GET => '/v1/me', $ua->{token});
is $me->{status}, 200, 'me with Bearer: 200' or diag diag_resp($me);
is_deeply $me->{json}, { user => $ua->{user} }, 'me: {user}, the signup record';
my $me_c = http(GET => '/v1/me', ['Cookie' => "theme=dark; cms_session=$ua->{token}; other=1"]);
is $me_c->{status}, 200, 'me with the cms_session cookie: 200' or diag diag_resp($me_c);
is(($me_c->{json}{user} // {})->{id}, $ua->{user}{id}, 'me by cookie: the user');

check_err(http(GET => '/v1/me'), 401, 'missing_token', 'me, no credential');
check_err(http(GET => '/v1/me', ['Authorization' => 'Bearer ']), 401, 'missing_token', 'me, empty Bearer');
check_err(http(GET => '/v1/me', ['Cookie' => 'other=1']), 401, 'missing_token', 'me, unrelated cookie');
check_err(req(GET => '/v1/me', 'garbage'), 401, 'invalid_token', 'me, garbage token');
check_err(http(GET => '/v1/me', ['Cookie' => 'cms_session=garbage']), 401, 'invalid_token', 'me, garbage cookie');

# every 401 names the scheme (RFC 6750); a refused credential says invalid_token, and
# another scheme is told apart from none under the same code
for my $t (['no credential', [], 'missing_token', 'Bearer', 'No credential was sent'],
           ['Basic', ['Authorization' => 'Basic dTpw'], 'missing_token', 'Bearer',
            'Only Bearer credentials are accepted'],
           ['garbage token', ['Authorization' => 'Bearer garbage'], 'invalid_token', 'Bearer error="invalid_token"',
            undef],
           ['garbage cookie', ['Cookie' => 'cms_session=garbage'], 'invalid_token',
            'Bearer error="invalid_token"', undef]) {
    my ($name, $h, $code, $challenge, $msg) = @$t;
    my $x = http(GET => '/v1/me', $h);
    check_err($x, 401, $code, "me, $name");
    is $x->{headers}{'www-authenticate'}, $challenge, "me, $name: WWW-Authenticate";
    is(($x->{json} // {})->{error}, $msg, "me, $name: the message") if defined $msg;
}
{
    my $x = http(GET => '/v1/me', ['Authorization' => 'Basic dTpw', 'Cookie' => "cms_session=$ua->{token}"]);
    is $x->{status}, 200, 'me, Basic beside the session cookie: the cookie counts' or diag diag_resp($x);
    $x = req(POST => '/v1/auth/login', undef, { email => $email_a, password => 'not the password' });
    check_err($x, 401, 'invalid_credentials', 'login, wrong password, again');
    is $x->{headers}{'www-authenticate'}, 'Bearer', 'login, wrong password: WWW-Authenticate Bearer';
}

# --- inactive accounts -----------------------------------------------------------------

my $c = signup(name => 'Cy');
psql("UPDATE users SET active = false WHERE id = '$c->{user}{id}'");
check_err(req(POST => '/v1/auth/login', undef, { email => $c->{email}, password => $c->{password} }),
          403, 'account_inactive', 'login, inactive user, right password');
check_err(req(POST => '/v1/auth/login', undef, { email => $c->{email}, password => 'not the password' }),
          401, 'invalid_credentials', 'login, inactive user, wrong password: nothing revealed');
check_err(req(GET => '/v1/me', $c->{token}), 403, 'account_inactive', 'me, inactive user');
check_err(req(POST => '/v1/workspaces', $c->{token}, { name => 'W' }), 403, 'account_inactive',
          'create workspace, inactive user');
psql("UPDATE users SET active = true WHERE id = '$c->{user}{id}'");
is req(GET => '/v1/me', $c->{token})->{status}, 200, 'me, reactivated user: 200';

# --- logout ----------------------------------------------------------------------------

my $s1 = req(POST => '/v1/auth/login', undef, { email => $c->{email}, password => $c->{password} })->{json}{token};
my $s2 = req(POST => '/v1/auth/login', undef, { email => $c->{email}, password => $c->{password} })->{json}{token};
ok $s1 && $s2 && $s1 ne $s2, 'two sessions of one user';
is req(GET => '/v1/me', $s1)->{status}, 200, 'session 1 works before logout';

my $out = req(POST => '/v1/auth/logout', $s1);
is $out->{status}, 204, 'logout: 204' or diag diag_resp($out);
is $out->{body}, '', 'logout: no body';
my @oc = map { $_->[1] } grep { lc $_->[0] eq 'set-cookie' } @{$out->{header_list}};
is scalar(@oc), 1, 'logout: one Set-Cookie';
like $oc[0] // '', qr/^cms_session=;/, 'logout: the cookie is emptied';
like $oc[0] // '', qr/;\s*Max-Age=0(;|$)/, 'logout: Max-Age=0';
like $oc[0] // '', qr/;\s*Path=\/(;|$)/, 'logout: Path=/';

check_err(req(GET => '/v1/me', $s1), 401, 'invalid_token', 'me after logout');
check_err(http(GET => '/v1/me', ['Cookie' => "cms_session=$s1"]), 401, 'invalid_token',
          'me after logout, the token as cookie');
check_err(req(POST => '/v1/auth/logout', $s1), 401, 'invalid_token', 'logout again with the same token');
check_err(req(POST => '/v1/workspaces', $s1, { name => 'W' }), 401, 'invalid_token',
          'create workspace after logout');
is req(GET => '/v1/me', $s2)->{status}, 200, 'the other session of the same user still works';
is req(GET => '/v1/me', $c->{token})->{status}, 200, 'and so does the signup session';

# logout by cookie
my $oc2 = http(POST => '/v1/auth/logout', ['Cookie' => "cms_session=$s2"]);
is $oc2->{status}, 204, 'logout by cookie: 204' or diag diag_resp($oc2);
check_err(req(GET => '/v1/me', $s2), 401, 'invalid_token', 'me after logout by cookie');
check_err(http(POST => '/v1/auth/logout'), 401, 'missing_token', 'logout without a credential');
check_err(req(POST => '/v1/auth/logout', 'a.b.c'), 401, 'invalid_token', 'logout with a bad token');

# --- cms_require_verified_email on ------------------------------------------------------

restart_nginx(http_config => 'cms_require_verified_email on;');
my $d = signup(name => 'Dee');     # signing up still works; the session does not until verified
check_err(req(POST => '/v1/auth/login', undef, { email => $d->{email}, password => $d->{password} }),
          403, 'email_not_verified', 'verified email required: login, unverified');
check_err(req(POST => '/v1/auth/login', undef, { email => $d->{email}, password => 'not the password' }),
          401, 'invalid_credentials', 'verified email required: wrong password, unverified');
check_err(req(GET => '/v1/me', $d->{token}), 403, 'email_not_verified',
          'verified email required: me, unverified');
check_err(req(POST => '/v1/workspaces', $d->{token}, { name => 'W' }), 403, 'email_not_verified',
          'verified email required: create workspace, unverified');
psql("UPDATE users SET email_verified = true WHERE id = '$d->{user}{id}'");
my $dl = req(POST => '/v1/auth/login', undef, { email => $d->{email}, password => $d->{password} });
is $dl->{status}, 200, 'verified email required: login once verified' or diag diag_resp($dl);
ok $dl->{json}{user}{email_verified}, 'verified email required: user.email_verified is true';
is req(GET => '/v1/me', $d->{token})->{status}, 200, 'verified email required: me once verified';

restart_nginx();
is req(GET => '/v1/me', $ub->{token})->{status}, 200, 'default config: an unverified user is fine';

done_testing();
