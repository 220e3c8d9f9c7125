# Credentials in caches, logs and early answers (issue 11):
# - answers carrying a session token or a new key (signup, login, API key creation) have
#   Cache-Control: no-store; other answers do not;
# - a malformed JSON body holding a password (login, signup, an /v1/ext route) is logged
#   with its reason and position only: with the error log at debug level, the password is
#   in no log nginx wrote, nor in the 400 answer;
# - the body is read after the credential and the permission: a 1 MB POST with a bad or
#   missing credential, or without the scope, is answered (401/403) while the client has
#   sent its headers only; a refused body is discarded, so that what it holds is never
#   taken as the next request on the connection (two requests, two answers).
use strict;
use warnings;
use Cms::Test;
use JSON::PP ();
use IO::Socket::INET ();
use IO::Select ();
use Time::HiRes qw(time);

use Cms::Fixtures qw(req diag_resp check_err signup workspace api_key facility extension ext_key
                     invoice record_path idem make_key);

set_conf_defaults(error_log => 'logs/error.log debug');
start_nginx();

sub no_store {
    my ($r, $what) = @_;
    is $r->{headers}{'cache-control'}, 'no-store', "$what: Cache-Control: no-store";
}

# --- Cache-Control: no-store where a credential is answered --------------------------------
my $u = signup(password => 'a long enough password');
no_store($u->{resp}, 'signup');
my $login = req(POST => '/v1/auth/login', undef, { email => $u->{email}, password => 'a long enough password' });
is $login->{status}, 200, 'login: 200' or diag diag_resp($login);
no_store($login, 'login');
my $ws = workspace($u->{token}, 'Seal works');
my $kr = req(POST => "/v1/workspaces/$ws/api-keys", $u->{token}, { name => 'k', scopes => ['articles:read'] });
is $kr->{status}, 201, 'api key creation: 201' or diag diag_resp($kr);
like $kr->{json}{secret} // '', qr/^svc_live_/, 'api key creation: the secret';
no_store($kr, 'api key creation');
my $KEY = $kr->{json}{secret};
for my $r ([GET => '/v1/me', $u->{token}], [GET => "/v1/workspaces/$ws/api-keys", $u->{token}],
           [GET => '/v1/health', undef]) {
    my $x = req(@$r);
    is $x->{status}, 200, "$r->[0] $r->[1]: 200";
    ok !defined $x->{headers}{'cache-control'}, "$r->[0] $r->[1]: no Cache-Control (no credential in it)";
}
my $bad_login = req(POST => '/v1/auth/login', undef, { email => $u->{email}, password => 'a wrong password!' });
is $bad_login->{status}, 401, 'a refused login: 401';

# --- malformed bodies with a password: reason and position only ----------------------------
# letters only: jansson quotes a bare word, or a string up to a control character or a bad
# escape, in its error text ("invalid token near 'hunterTwo...'")
my $PW = 'hunterTwo' . join '', map { ('a' .. 'z')[rand 26] } 1 .. 8;
my $fac = facility();
my $EXT = extension($fac);
my $EK = ext_key(fac => $fac, ext => $EXT);
my $inv = invoice($fac);
my $log_at = error_log_size();
for my $case (
    ['login, a control character', '/v1/auth/login', undef,
        qq({"email": "a\@example.com", "password": "$PW\x01"})],
    ['login, a bare word', '/v1/auth/login', undef, qq({"email": "a\@example.com", "password": $PW})],
    ['signup, a bad escape', '/v1/auth/signup', undef, qq({"email": "b\@example.com", "password": "$PW\\q"})],
    ['ext record, a bare word', record_path($inv), $EK, qq({"amount": 5000, "note": $PW})],
) {
    my ($what, $path, $cred, $body) = @$case;
    my $r = req(POST => $path, $cred, $body, $cred ? ('Idempotency-Key' => idem()) : ());
    is $r->{status}, 400, "$what: malformed JSON is 400" or diag diag_resp($r);
    ok index($r->{body}, 'hunterTwo') < 0, "$what: the answer does not echo the body";
}
my @new = error_log_lines($log_at);
ok scalar(grep { /\[debug\]/ } @new) > 10, 'the error log is at debug level';
my @why = grep { /cms: invalid json body: .* at line \d+, column \d+ \(byte \d+\)/ } @new;
is scalar(@why), 4, 'each malformed body is logged with its reason and position';
for my $log ('error.log', 'access.log') {
    open my $fh, '<:raw', prefix() . "/logs/$log" or die "$log: $!";
    local $/;
    my $text = <$fh> // '';
    ok index($text, 'hunterTwo') < 0, "$log: the password is not there";
    ok index($text, 'a long enough password') < 0, "$log: nor the signup password";
}

# (at debug level nginx itself logs request headers, Authorization included: the access
# log, which production keeps, must not hold the key)
{
    open my $fh, '<:raw', prefix() . '/logs/access.log' or die "access.log: $!";
    local $/;
    my $text = <$fh> // '';
    ok index($text, $KEY) < 0 && index($text, $u->{token}) < 0, 'access.log: no key, no session token';
}

# --- the body after the credential --------------------------------------------------------
# Headers of a 1 MB POST, then nothing: the answer must come before the body does.
sub headers_only {
    my ($path, @h) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => port(), Proto => 'tcp', Timeout => 5)
        or die "connect: $!";
    my $req = "POST $path HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            . "Content-Length: 1000000\r\n";
    $req .= "$_\r\n" for @h;
    syswrite $s, "$req\r\n";
    my ($in, $t0) = ('', time);
    my $sel = IO::Select->new($s);
    while (time - $t0 < 15) {
        last if $in =~ /\r\n\r\n/ && $in =~ /^content-length:\s*(\d+)/im
                && length($in) - index($in, "\r\n\r\n") - 4 >= $1;
        next unless $sel->can_read(0.2);
        my $n = sysread $s, my $buf, 65536;
        last unless $n;
        $in .= $buf;
    }
    close $s;
    my ($status) = $in =~ m{^HTTP/1\.1 (\d{3})};
    my $body = $in =~ /\r\n\r\n(.*)\z/s ? $1 : '';
    return { status => $status // 0, raw => $in, json => eval { JSON::PP->new->decode($body) } };
}
for my $case (
    ['no credential', '/v1/api/articles', 401, 'missing_token', []],
    ['a malformed key', '/v1/api/articles', 401, 'invalid_api_key', ['Authorization: Bearer svc_live_nope']],
    ['an unknown key', '/v1/api/articles', 401, 'invalid_api_key', ['Authorization: Bearer ' . make_key('svc_live_')]],
    ['a key without the scope', '/v1/api/articles', 403, 'missing_scope', ["Authorization: Bearer $KEY"]],
    ['an expired session', "/v1/workspaces/$ws/articles", 401, undef, ['Authorization: Bearer a.b.c']],
    ['a non-member', "/v1/workspaces/$ws/categories", 403, undef,
        ['Authorization: Bearer ' . signup(password => 'another long password')->{token}]],
    ['an unknown extension key', record_path($inv), 401, undef,
        ['Authorization: Bearer ' . make_key('sk_live_'), 'Idempotency-Key: x']],
) {
    my ($what, $path, $status, $code, $h) = @$case;
    my $r = headers_only($path, @$h);
    is $r->{status}, $status, "1 MB POST, $what: $status before the body is sent"
        or diag substr($r->{raw}, 0, 300);
    is(($r->{json} // {})->{code}, $code, "  with code $code") if $code;
}

# everything the server sends until it closes (at most 15 s)
sub read_to_eof {
    my ($s, $sel) = @_;
    $sel //= IO::Select->new($s);
    my ($in, $t0) = ('', time);
    while (time - $t0 < 15) {
        next unless $sel->can_read(0.2);
        my $n = sysread $s, my $buf, 65536;
        last unless $n;
        $in .= $buf;
    }
    close $s;
    return $in;
}

# A refused body is discarded, not read as a request: one connection, a POST refused with
# 401 whose body is a request line, then a GET: two answers, 401 then 200.
{
    my $smuggled = "GET /v1/me HTTP/1.1\r\nHost: localhost\r\n\r\n";
    my $bytes = "POST /v1/api/articles HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              . "Content-Length: " . length($smuggled) . "\r\n\r\n$smuggled"
              . "GET /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => port(), Proto => 'tcp', Timeout => 5)
        or die "connect: $!";
    syswrite $s, $bytes;
    my $in = read_to_eof($s);
    my @st = $in =~ m{HTTP/1\.1 (\d{3}) }g;
    is_deeply \@st, [401, 200], 'a refused POST and a GET on one connection: 401, then 200 (the body was dropped)';
}

# A fused read (the key and the record in one statement) whose body comes late: the read
# step waits, the record is read again by the plain handler, the answer is right.
{
    my $key_c = api_key($u->{token}, $ws, 'c', 'categories:read', 'categories:write')->{secret};
    my $cat = req(POST => '/v1/api/categories', $key_c, { name => 'Late body' });
    is $cat->{status}, 201, 'a category' or diag diag_resp($cat);
    my $id = ($cat->{json} // {})->{category}{id} // ($cat->{json} // {})->{id} // '';
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => port(), Proto => 'tcp', Timeout => 5)
        or die "connect: $!";
    syswrite $s, "GET /v1/api/categories/$id HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                 . "Authorization: Bearer $key_c\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n";
    my $sel = IO::Select->new($s);
    ok !$sel->can_read(0.5), 'a GET with a body still to come waits for it';
    syswrite $s, '{}';
    my $in = read_to_eof($s, $sel);
    like $in, qr{^HTTP/1\.1 200 }, 'then answers 200';
    like $in, qr/"name":"Late body"/, 'with the record';
}

# An authenticated POST still reads its body (here a large one, refused by its content).
{
    my $key_w = api_key($u->{token}, $ws, 'w', 'articles:write')->{secret};
    my $r = req(POST => '/v1/api/articles', $key_w, { title => 'big', body => '<p>' . ('x' x 200_000) . '</p>' });
    is $r->{status}, 201, 'an authenticated 200 KB POST is read and served' or diag diag_resp($r);
}

done_testing();
