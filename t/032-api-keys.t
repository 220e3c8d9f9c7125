# Secret API keys: minting (owner/admin only, scopes checked), listing without secrets,
# revoking; the secret-key credential matrix on /v1/api (missing, malformed, bad checksum,
# unknown, revoked, creator gone or inactive, suspended workspace, missing scope, session
# token instead of a key; each 401 with WWW-Authenticate: Bearer, error="invalid_token" for a
# credential refused, another scheme told apart by its message); a bad checksum is refused
# before any database query; revocation
# holds on the very next request under concurrent traffic; a database dump holds no secret
# key and no password in plain text.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err signup signup_defaults api_key master_secret pepper
                     make_key key_from_body checksum_ok bad_checksum crc32 one $UUID $TS);
use Digest::SHA qw(hmac_sha256_hex);
use MIME::Base64 qw(encode_base64url);
use Time::HiRes qw(time sleep);
use POSIX ();

my @PASSWORDS;
signup_defaults(password => sub {
    my $pw = sprintf 'Pw-%d-%s', $_[0], join '', map { ('a' .. 'z')[rand 26] } 1 .. 16;
    push @PASSWORDS, $pw;
    return $pw;
});

my $PEPPER = pepper();
my $SECRET_RE = qr/^svc_live_[0-9A-Za-z]{43}[0-9A-Za-z]{6}$/;
my @ALL_SCOPES = map { ("$_:read", "$_:write") }
    qw(articles videos categories media comments custom pages webhooks podcasts subscribers);
my @SECRETS;

is crc32('123456789'), 0xcbf43926, 'the test\'s CRC-32 is zlib\'s';

# Every statement of this database goes to the PostgreSQL log (prefix '%m [%p] %d '):
# that is how "no query for a bad checksum" is seen. Set before nginx connects.
my $db = db_name();
psql(qq{ALTER DATABASE "$db" SET log_statement = 'all'});
my $PG_LOG = "$ENV{TEST_CMS_VAR}/pg.log";

# The pool's timeouts far out (20 s): "answered at once" while PostgreSQL is down is then
# well apart from an answer at a timeout, however slow the machine.
start_nginx(pg_params => 'max=4 connect_timeout=20s queue_timeout=20s query_timeout=20s');

my $owner = signup();
my $ot = $owner->{token};
my $wid = req(POST => '/v1/workspaces', $ot, { name => 'Keys' })->{json}{workspace}{id}
    or die 'workspace';
my %m = (owner => $owner);
for my $role (qw(admin editor author viewer)) {
    $m{$role} = signup();
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
}
my $outsider = signup();

sub create_key {
    my $j = api_key($_[0], $wid, @_[1 .. $#_]);
    push @SECRETS, $j->{secret};
    return $j;
}

# --- minting ---------------------------------------------------------------------------

my $c1 = req(POST => "/v1/workspaces/$wid/api-keys", $ot, { name => 'everything', scopes => \@ALL_SCOPES });
is $c1->{status}, 201, 'owner creates a key with every scope: 201' or diag diag_resp($c1);
push @SECRETS, $c1->{json}{secret};
is_deeply [sort keys %{$c1->{json}}], [qw(api_key secret)], 'create: {api_key, secret}';
my $k1 = $c1->{json}{api_key} // {};
my $s1 = $c1->{json}{secret} // '';
is_deeply [sort keys %$k1],
    [sort qw(id workspace_id created_by name key_prefix scopes created_at revoked_at)],
    'api_key: the record\'s fields, no secret or hash';
like $k1->{id} // '', $UUID, 'api_key.id is a UUID';
is $k1->{workspace_id}, $wid, 'api_key.workspace_id';
is $k1->{created_by}, $owner->{user}{id}, 'api_key.created_by is the owner';
is $k1->{name}, 'everything', 'api_key.name';
is_deeply [sort @{$k1->{scopes} // []}], [sort @ALL_SCOPES], 'api_key.scopes: all twenty';
like $k1->{created_at} // '', $TS, 'api_key.created_at';
ok exists $k1->{revoked_at} && !defined $k1->{revoked_at}, 'api_key.revoked_at is null';
like $s1, $SECRET_RE, 'secret: svc_live_ + 43 + 6 base62 characters';
ok checksum_ok($s1), 'secret: its last 6 characters are the CRC-32 of the rest, in base62';
is $k1->{key_prefix}, substr($s1, 0, 15), 'key_prefix: svc_live_ + the first 6 body characters';
my $row = psql("SELECT encode(secret_hash, 'hex'), key_prefix FROM api_keys WHERE id = '$k1->{id}'")->[0];
is $row->[0], hmac_sha256_hex($s1, $PEPPER), 'stored: HMAC-SHA256(pepper, secret), pepper = HMAC(master, "cms api key pepper v1")';
is $row->[1], $k1->{key_prefix}, 'stored: the visible prefix';

my $ka = create_key($m{admin}{token}, 'by admin', 'articles:write');
is $ka->{api_key}{created_by}, $m{admin}{user}{id}, 'admin creates a key: created_by is the admin';
my $k3 = create_key($ot, 'videos only', 'videos:read');
my $k4 = create_key($ot, 'articles read', 'articles:read');
isnt $k3->{secret}, $k4->{secret}, 'every key its own secret';

for my $role (qw(editor author viewer)) {
    check_err(req(POST => "/v1/workspaces/$wid/api-keys", $m{$role}{token}, { name => 'x', scopes => ['articles:read'] }),
              403, 'forbidden', "create key as $role (role too low)");
    check_err(req(GET => "/v1/workspaces/$wid/api-keys", $m{$role}{token}), 403, 'forbidden', "list keys as $role");
    check_err(req(DELETE => "/v1/workspaces/$wid/api-keys/$k1->{id}", $m{$role}{token}), 403, 'forbidden',
              "revoke a key as $role");
}
check_err(req(POST => "/v1/workspaces/$wid/api-keys", $outsider->{token}, { name => 'x', scopes => ['articles:read'] }),
          403, 'not_workspace_member', 'create key as a non-member');
check_err(req(POST => "/v1/workspaces/$wid/api-keys", undef, { name => 'x', scopes => ['articles:read'] }),
          401, 'missing_token', 'create key without a session');
check_err(req(POST => "/v1/workspaces/$wid/api-keys", $s1, { name => 'x', scopes => ['articles:read'] }),
          401, 'invalid_token', 'create key with a secret key instead of a session');
check_err(req(GET => "/v1/workspaces/$wid/api-keys", $s1), 401, 'invalid_token',
          'list keys with a secret key instead of a session');

my @scope_errors = (
    ['unknown scope', ['articles:delete']],
    ['scope without action', ['articles']],
    ['one good, one unknown', ['articles:read', 'nope:read']],
    ['upper case', ['ARTICLES:READ']],
    ['empty array', []],
    ['a string', 'articles:read'],
    ['a number in the array', [5]],
    ['null', undef],
);
for my $t (@scope_errors) {
    check_err(req(POST => "/v1/workspaces/$wid/api-keys", $ot, { name => 'bad', scopes => $t->[1] }),
              400, 'invalid_scope', "create key, scopes $t->[0]");
}
check_err(req(POST => "/v1/workspaces/$wid/api-keys", $ot, { name => 'bad' }), 400, 'invalid_scope',
          'create key, scopes missing');
my $nn = req(POST => "/v1/workspaces/$wid/api-keys", $ot, { scopes => ['articles:read'] });
is $nn->{status}, 400, 'create key, name missing: 400' or diag diag_resp($nn);
check_err(req(POST => "/v1/workspaces/$wid/api-keys", $ot, { name => 'x', scopes => ['articles:read'], secret => 'mine' }),
          400, 'invalid_request', 'create key, unknown field (a chosen secret)');
is psql("SELECT count(*) FROM api_keys WHERE name IN ('bad', 'x')")->[0][0], 0, 'refused creations stored nothing';

# --- listing ---------------------------------------------------------------------------

my $l = req(GET => "/v1/workspaces/$wid/api-keys", $ot);
is $l->{status}, 200, 'list keys: 200' or diag diag_resp($l);
my @listed = @{$l->{json}{api_keys} // []};
is_deeply [map { $_->{id} } @listed], [map { $_->{api_key}{id} } $k4, $k3, $ka, $c1->{json}], 'list: the four keys, newest first';
is_deeply $listed[-1], $k1, 'list: the same record as at creation';
ok !grep({ my $k = $_; grep { /secret|hash/i } keys %$k } @listed), 'list: no secret or hash field';
ok !grep({ index($l->{body}, $_) >= 0 } @SECRETS), 'list: no secret anywhere in the body';
is req(GET => "/v1/workspaces/$wid/api-keys", $m{admin}{token})->{status}, 200, 'admin lists keys';

# --- using a key -----------------------------------------------------------------------

my $self = req(GET => '/v1/api/key', $s1);
is $self->{status}, 200, '/v1/api/key: 200' or diag diag_resp($self);
is_deeply $self->{json}, { api_key => $k1 }, '/v1/api/key: {api_key}, the calling key\'s record';
my $self3 = req(GET => '/v1/api/key', $k3->{secret});
is $self3->{status}, 200, '/v1/api/key needs no scope (a videos:read key)';
is(($self3->{json}{api_key} // {})->{id}, $k3->{api_key}{id}, '/v1/api/key: that key');
is req(GET => '/v1/api/key', undef, undef, Authorization => "bearer $s1")->{status}, 200,
    'the auth scheme is case-insensitive';

my $sc = req(GET => '/v1/_test/scoped', $s1);
is $sc->{status}, 200, 'scoped route, owner key with articles:write: 200' or diag diag_resp($sc);
is_deeply $sc->{json}, { workspace_id => $wid, user_id => $owner->{user}{id}, role => 5 },
    'a key acts for its creator: the owner, role 5';
my $sca = req(GET => '/v1/_test/scoped', $ka->{secret});
is_deeply $sca->{json}, { workspace_id => $wid, user_id => $m{admin}{user}{id}, role => 4 },
    'the admin\'s key acts for the admin, role 4' or diag diag_resp($sca);
check_err(req(GET => '/v1/_test/scoped', $k3->{secret}), 403, 'missing_scope', 'scoped route, videos:read key');
check_err(req(GET => '/v1/_test/scoped', $k4->{secret}), 403, 'missing_scope', 'scoped route, articles:read key');

# The creator's current role, not the role at creation.
psql("UPDATE members SET role = 'editor' WHERE workspace_id = '$wid' AND user_id = '$m{admin}{user}{id}'");
is((req(GET => '/v1/_test/scoped', $ka->{secret})->{json} // {})->{role}, 3,
   'creator demoted to editor: the key acts with role 3 at once');
psql("UPDATE members SET role = 'admin' WHERE workspace_id = '$wid' AND user_id = '$m{admin}{user}{id}'");

# --- the credential matrix -------------------------------------------------------------

my $jwt = $owner->{token};
# Two neighbouring characters of the checksum (the last 6) that differ, swapped: swapping
# two equal ones would leave the key as it is (one key in 62 ends so).
sub swap_checksum {
    my $k = shift;
    my $n = length $k;
    my ($i) = grep { substr($k, $_, 1) ne substr($k, $_ + 1, 1) } reverse($n - 6 .. $n - 2);
    substr($k, $i, 2) = reverse substr($k, $i, 2);
    return $k;
}
my @matrix = (
    ['no Authorization', [], 401, 'missing_token'],
    ['empty Bearer', ['Authorization' => 'Bearer '], 401, 'missing_token'],
    ['Basic credentials', ['Authorization' => 'Basic ' . encode_base64url("u:$s1")], 401, 'missing_token'],
    ['the key without "Bearer"', ['Authorization' => $s1], 401, 'missing_token'],
    ['a publishable key (valid checksum)', ['Authorization' => 'Bearer ' . make_key('pk_live_')], 401, 'invalid_api_key'],
    ['an extension key (valid checksum)', ['Authorization' => 'Bearer ' . make_key('sk_live_')], 401, 'invalid_api_key'],
    ['an admin key (valid checksum)', ['Authorization' => 'Bearer ' . make_key('sk_admin_')], 401, 'invalid_api_key'],
    ['the secret with the pk_live_ prefix', ['Authorization' => 'Bearer pk_live_' . substr($s1, 9)], 401, 'invalid_api_key'],
    ['upper-case prefix', ['Authorization' => 'Bearer SVC_LIVE_' . substr($s1, 9)], 401, 'invalid_api_key'],
    ['one character short', ['Authorization' => 'Bearer ' . substr($s1, 0, -1)], 401, 'invalid_api_key'],
    ['one character long', ['Authorization' => "Bearer ${s1}0"], 401, 'invalid_api_key'],
    ['a character outside base62', ['Authorization' => 'Bearer ' . substr($s1, 0, 20) . '-' . substr($s1, 21)], 401, 'invalid_api_key'],
    ['bad checksum', ['Authorization' => 'Bearer ' . bad_checksum($s1)], 401, 'invalid_api_key'],
    ['checksum characters swapped', ['Authorization' => 'Bearer ' . swap_checksum($s1)], 401, 'invalid_api_key'],
    ['unknown key (valid format and checksum)', ['Authorization' => 'Bearer ' . make_key()], 401, 'invalid_api_key'],
    ['body above 2^256, right checksum', ['Authorization' => 'Bearer ' . key_from_body('svc_live_', 'z' x 43)], 401, 'invalid_api_key'],
    ['just the prefix', ['Authorization' => 'Bearer svc_live_'], 401, 'invalid_api_key'],
    ['the key_prefix', ['Authorization' => "Bearer $k1->{key_prefix}"], 401, 'invalid_api_key'],
    ['the stored hash', ['Authorization' => "Bearer $row->[0]"], 401, 'invalid_api_key'],
    ['a session JWT', ['Authorization' => "Bearer $jwt"], 401, 'invalid_api_key'],
    ['a session cookie only', ['Cookie' => "cms_session=$jwt"], 401, 'missing_token'],
);
for my $t (@matrix) {
    my ($name, $h, $status, $code) = @$t;
    my $x = http(GET => '/v1/api/key', $h);
    check_err($x, $status, $code, "/v1/api/key, $name");
    # RFC 6750: the scheme on every 401, error="invalid_token" when a credential was refused
    is $x->{headers}{'www-authenticate'}, $code eq 'missing_token' ? 'Bearer' : 'Bearer error="invalid_token"',
        "/v1/api/key, $name: WWW-Authenticate";
    check_err(http(GET => '/v1/_test/scoped', $h), $status, $code, "scoped route, $name");
}
# Another scheme is not "no credential": the same code, a message that says what is taken.
for my $t (['no Authorization', [], 'No credential was sent'],
           ['empty Bearer', ['Authorization' => 'Bearer '], 'No credential was sent'],
           ['Basic credentials', ['Authorization' => 'Basic ' . encode_base64url("u:$s1")],
            'Only Bearer credentials are accepted'],
           ['the key without "Bearer"', ['Authorization' => $s1], 'Only Bearer credentials are accepted']) {
    my ($name, $h, $msg) = @$t;
    is((http(GET => '/v1/api/key', $h)->{json} // {})->{error}, $msg, "/v1/api/key, $name: the message");
}
# A key's secret sent to session routes.
check_err(req(GET => '/v1/me', $s1), 401, 'invalid_token', 'me with a secret key');
check_err(req(GET => "/v1/workspaces/$wid", $s1), 401, 'invalid_token', 'get workspace with a secret key');

# --- a bad checksum costs no query -----------------------------------------------------

sub pg_log_size { -s $PG_LOG || 0 }
sub pg_log_key_queries {
    my $off = shift;
    open my $fh, '<', $PG_LOG or return ();
    seek $fh, $off, 0;
    local $/;
    my $t = <$fh> // '';
    # the database name contains "api_keys" too: match the table in a statement
    return grep { index($_, " $db ") >= 0 && /FROM api_keys\b/ } split /\n/, $t;
}
SKIP: {
    skip "PostgreSQL log $PG_LOG not readable", 3 unless -r $PG_LOG;
    my $off = pg_log_size();
    my $bc = bad_checksum($k3->{secret});
    my @r = map { (req(GET => '/v1/api/key', $bc), req(GET => '/v1/_test/scoped', $bc),
                   req(GET => '/v1/api/key', 'svc_live_' . ('A' x 48))) } 1 .. 3;
    is scalar(grep { $_->{status} == 401 } @r), 9, 'bad checksum and malformed keys: 401';
    # a barrier, not a sleep: a statement sent after the answers came is logged after any
    # statement the module could have sent for them
    my $mark = "relstatus-barrier-$$-" . int(rand 1e9);
    psql("SELECT '$mark'");
    ok wait_until(5, sub { my $fh; open($fh, '<', $PG_LOG) && do { local $/; index(<$fh> // '', $mark) >= 0 } }),
       'the log has caught up with the requests';
    my @q = pg_log_key_queries($off);
    is scalar(@q), 0, 'bad checksum and malformed keys: no api_keys query reached PostgreSQL'
        or diag join "\n", @q;
    # The control: an unknown key of the right form is looked up.
    $off = pg_log_size();
    req(GET => '/v1/api/key', make_key());
    my $seen = wait_until(2, sub { scalar pg_log_key_queries($off) });
    ok $seen, 'control: an unknown well-formed key is looked up (the log method sees queries)';
}

# The same seen from outside: with PostgreSQL down, a bad checksum still answers 401 (no
# query needed), while a well-formed key can only be 503.
pg_stop();
my @down = (
    [bad_checksum($s1), 401, 'invalid_api_key', 'bad checksum'],
    ['svc_live_short', 401, 'invalid_api_key', 'malformed key'],
    [make_key('pk_live_'), 401, 'invalid_api_key', 'publishable key'],
    [make_key(), 503, 'service_unavailable', 'unknown well-formed key'],
    [$s1, 503, 'service_unavailable', 'valid key'],
);
for my $t (@down) {
    my $r = req(GET => '/v1/api/key', $t->[0]);
    check_err($r, $t->[1], $t->[2], "PostgreSQL down: $t->[3]");
    cmp_ok $r->{elapsed}, '<', 10, "PostgreSQL down: $t->[3] answered at once, not at a 20 s timeout";
}
pg_start();
ok wait_until(10, sub { req(GET => '/v1/api/key', $s1)->{status} == 200 }), 'PostgreSQL back: the key works again';

# --- revoking --------------------------------------------------------------------------

check_err(req(DELETE => "/v1/workspaces/$wid/api-keys/0190a4d6-2f5e-7c3a-9b1d-4e5f60718293", $ot), 404, 'not_found',
          'revoke an unknown key id');
check_err(req(DELETE => "/v1/workspaces/$wid/api-keys/not-a-uuid", $ot), 404, 'not_found', 'revoke a malformed key id');
check_err(req(DELETE => "/v1/workspaces/$wid/api-keys/$k4->{api_key}{id}", $outsider->{token}), 403,
          'not_workspace_member', 'revoke as a non-member');
my $d4 = req(DELETE => "/v1/workspaces/$wid/api-keys/$k4->{api_key}{id}", $m{admin}{token});
is $d4->{status}, 204, 'admin revokes the owner\'s key: 204' or diag diag_resp($d4);
is $d4->{body}, '', 'revoke: no body';
check_err(req(GET => '/v1/api/key', $k4->{secret}), 401, 'invalid_api_key', 'revoked key, the next request');
check_err(req(DELETE => "/v1/workspaces/$wid/api-keys/$k4->{api_key}{id}", $ot), 404, 'not_found',
          'revoke an already revoked key');
my ($r4) = grep { $_->{id} eq $k4->{api_key}{id} } @{req(GET => "/v1/workspaces/$wid/api-keys", $ot)->{json}{api_keys} // []};
like(($r4 // {})->{revoked_at} // '', $TS, 'the revoked key stays listed, with revoked_at');
is req(GET => '/v1/api/key', $k3->{secret})->{status}, 200, 'the other keys still work';

# Under concurrent traffic: requests with the key are in flight while it is revoked; every
# request sent after the DELETE answered is refused.
{
    my $kr = create_key($ot, 'revoked under load', 'articles:write');
    my $auth = ['Authorization' => "Bearer $kr->{secret}"];
    my @warm = parallel_requests(map { [GET => '/v1/_test/scoped', $auth] } 1 .. 20);
    is scalar(grep { $_->{status} == 200 } @warm), 20, 'under load: 20 parallel requests with the key, all 200'
        or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 200 } @warm;

    my (@before, @after);
    push @before, start_request(GET => '/v1/_test/scoped', $auth) for 1 .. 20;
    my $del = start_request(DELETE => "/v1/workspaces/$wid/api-keys/$kr->{api_key}{id}", ['Authorization' => "Bearer $ot"]);
    push @before, start_request(GET => '/v1/_test/scoped', $auth) for 1 .. 20;
    my $dr = finish_request($del);
    my $t_revoked = time;
    is $dr->{status}, 204, 'under load: DELETE answered 204' or diag diag_resp($dr);
    push @after, start_request(GET => '/v1/_test/scoped', $auth) for 1 .. 20;
    my @rb = map { finish_request($_) } @before;
    my @ra = map { finish_request($_) } @after;
    push @ra, parallel_requests(map { [GET => '/v1/_test/scoped', $auth] } 1 .. 20);
    push @ra, parallel_requests(map { { method => 'GET', path => '/v1/_test/scoped', headers => $auth, delay => $_ * 0.01 } } 1 .. 20);
    ok !grep({ $_->{t_start} <= $t_revoked } @after), 'under load: the "after" requests were sent after the DELETE answered';
    my @bad_b = grep { !($_->{status} == 200 || ($_->{status} == 401 && ($_->{json}{code} // '') eq 'invalid_api_key')) } @rb;
    is scalar(@bad_b), 0, 'under load: requests in flight during the DELETE answer 200 or 401 invalid_api_key'
        or diag join "\n", map { diag_resp($_) } @bad_b;
    my @bad_a = grep { !($_->{status} == 401 && ($_->{json}{code} // '') eq 'invalid_api_key') } @ra;
    is scalar(@bad_a), 0, sprintf('under load: all %d requests sent after the DELETE answered are 401 invalid_api_key', scalar @ra)
        or diag join "\n", map { diag_resp($_) } @bad_a;
    diag sprintf 'under load: in flight during the DELETE: %d x 200, %d x 401',
        scalar(grep { $_->{status} == 200 } @rb), scalar(grep { $_->{status} == 401 } @rb);
}

# The same with a continuous stream: two client processes send requests with the key in a
# loop (5 at a time) and record when each was sent; the key is revoked in the middle.
{
    my $kr = create_key($ot, 'revoked in a stream', 'articles:write');
    my $auth = ['Authorization' => "Bearer $kr->{secret}"];
    my $out = prefix() . '/stream';
    my @kids;
    # the clients run until told to stop, the key is revoked once they have sent enough,
    # and they stop once enough went after: counts, not times, so a slow machine only
    # makes it longer
    my $lines = sub {
        my ($since) = @_;
        my $n = 0;
        for my $f (glob "$out.[12]") {
            open my $fh, '<', $f or next;
            $n += grep { my @f = split; @f == 3 && $f[0] > $since && $f[1] == ($since ? 401 : 200) } <$fh>;
        }
        return $n;
    };
    for my $n (1 .. 2) {
        my $pid = fork // die "fork: $!";
        if (!$pid) {
            open my $fh, '>', "$out.$n" or POSIX::_exit(1);
            $fh->autoflush(1);
            my $t_end = time + 60;
            while (!-e "$out.stop" && time < $t_end) {
                my @c = map { start_request(GET => '/v1/_test/scoped', $auth) } 1 .. 5;
                for my $c (@c) {
                    my $r = finish_request($c);
                    printf $fh "%.6f %d %s\n", $c->{t_start}, $r->{status}, ($r->{json} || {})->{code} // '-';
                }
            }
            close $fh;
            POSIX::_exit(0);
        }
        push @kids, $pid;
    }
    ok wait_until(30, sub { $lines->(0) >= 20 }), 'stream: 20 answers before the revocation';
    my $dr = req(DELETE => "/v1/workspaces/$wid/api-keys/$kr->{api_key}{id}", $ot);
    my $t_revoked = time;
    is $dr->{status}, 204, 'stream: DELETE answered 204' or diag diag_resp($dr);
    ok wait_until(30, sub { $lines->($t_revoked) >= 20 }), 'stream: 20 answers after it';
    open my $stop, '>', "$out.stop" or die "$out.stop: $!";
    close $stop;
    waitpid $_, 0 for @kids;
    my @rec;
    for my $n (1 .. 2) {
        open my $fh, '<', "$out.$n" or die "$out.$n: $!";
        push @rec, map { [split] } <$fh>;
    }
    my @before = grep { $_->[0] <= $t_revoked } @rec;
    my @after = grep { $_->[0] > $t_revoked } @rec;
    cmp_ok scalar(grep { $_->[1] == 200 } @before), '>=', 20, 'stream: the key answered 200 before the revocation ('
        . scalar(grep { $_->[1] == 200 } @before) . ' times)';
    cmp_ok scalar(@after), '>=', 20, 'stream: ' . scalar(@after) . ' requests sent after the DELETE answered';
    my @bad = grep { !($_->[1] == 401 && $_->[2] eq 'invalid_api_key') } @after;
    is scalar(@bad), 0, 'stream: every request sent after the DELETE answered is 401 invalid_api_key'
        or diag join "\n", map { sprintf '%.3f s after: %s %s', $_->[0] - $t_revoked, $_->[1], $_->[2] } @bad[0 .. ($#bad < 9 ? $#bad : 9)];
    my @odd = grep { !($_->[1] == 200 || ($_->[1] == 401 && $_->[2] eq 'invalid_api_key')) } @before;
    is scalar(@odd), 0, 'stream: before, only 200 or 401 invalid_api_key' or diag join "\n", map { "@$_" } @odd[0 .. ($#odd < 9 ? $#odd : 9)];
    diag sprintf 'stream: %d requests before (%d x 401 in flight), %d after', scalar(@before),
        scalar(grep { $_->[1] == 401 } @before), scalar(@after);
}

# --- the creator leaves, is deactivated; the workspace is suspended --------------------

{
    my $adm2 = signup();
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$adm2->{user}{id}', 'admin')");
    my $kl = create_key($adm2->{token}, 'creator leaves', 'articles:write');
    my $kd = create_key($m{admin}{token}, 'creator deactivated', 'articles:write');
    is req(GET => '/v1/_test/scoped', $kl->{secret})->{status}, 200, 'creator present: the key works';
    psql("DELETE FROM members WHERE workspace_id = '$wid' AND user_id = '$adm2->{user}{id}'");
    check_err(req(GET => '/v1/_test/scoped', $kl->{secret}), 401, 'invalid_api_key', 'the key\'s creator left the workspace: scoped route');
    check_err(req(GET => '/v1/api/key', $kl->{secret}), 401, 'invalid_api_key', 'the key\'s creator left the workspace: /v1/api/key');
    is one('SELECT cms_key_principal_drift()'), 0, 'the keys\' copies of their principal match the tables (removal)';

    # back as an author: the key works again, with the new role (sql/0045's copy)
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$adm2->{user}{id}', 'author')");
    my $back = req(GET => '/v1/_test/scoped', $kl->{secret});
    is_deeply [$back->{status}, ($back->{json} // {})->{role}], [200, 2],
        'the creator rejoined as an author: the key acts with role 2' or diag diag_resp($back);
    psql("UPDATE members SET role = 'viewer' WHERE workspace_id = '$wid' AND user_id = '$adm2->{user}{id}'");
    is((req(GET => '/v1/_test/scoped', $kl->{secret})->{json} // {})->{role}, 1,
       'and demoted to viewer: role 1 at once');

    is req(GET => '/v1/_test/scoped', $kd->{secret})->{status}, 200, 'creator active: the key works';
    psql("UPDATE users SET active = false WHERE id = '$m{admin}{user}{id}'");
    check_err(req(GET => '/v1/_test/scoped', $kd->{secret}), 401, 'invalid_api_key', 'the key\'s creator was deactivated');
    check_err(req(GET => '/v1/_test/scoped', $ka->{secret}), 401, 'invalid_api_key', 'and so is the creator\'s other key');
    psql("UPDATE users SET active = true WHERE id = '$m{admin}{user}{id}'");
    is req(GET => '/v1/_test/scoped', $s1)->{status}, 200, 'the owner\'s key is unaffected';
    is one('SELECT cms_key_principal_drift()'), 0, 'the copies match the tables (deactivation)';
}

psql("UPDATE workspaces SET suspended = true WHERE id = '$wid'");
check_err(req(GET => '/v1/api/key', $s1), 403, 'workspace_suspended', 'suspended workspace: /v1/api/key');
check_err(req(GET => '/v1/_test/scoped', $s1), 403, 'workspace_suspended', 'suspended workspace: scoped route');
is one('SELECT cms_key_principal_drift()'), 0, 'the copies match the tables (suspension)';
is one("SELECT count(*) FROM api_keys WHERE workspace_id = '$wid' AND NOT workspace_suspended"), 0,
   'every key of the suspended workspace carries it';
check_err(req(GET => '/v1/api/key', make_key()), 401, 'invalid_api_key', 'suspended workspace: an unknown key is still just invalid');
check_err(req(GET => '/v1/api/key', $k4->{secret}), 401, 'invalid_api_key', 'suspended workspace: a revoked key is still just invalid');
psql("UPDATE workspaces SET suspended = false WHERE id = '$wid'");
is req(GET => '/v1/api/key', $s1)->{status}, 200, 'unsuspended: the key works again';

# --- a key written while its creator's membership is written (sql/0045) ---------------
# Two sessions, each order: the one that comes second waits on the workspace's row for the
# first to commit, then the key's copy of its principal is the role (never a stale NULL).
{
    my @conn = ('-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', $ENV{TEST_CMS_PG_PORT},
                '-U', 'postgres', '-d', $db);
    my $waiting = sub {      # some session waits on a lock held by another, within 60 s
        my $t0 = time;
        while (time - $t0 < 60) {
            return 1 if one("SELECT count(*) FROM pg_stat_activity WHERE datname = '$db'"
                            . " AND cardinality(pg_blocking_pids(pid)) > 0") > 0;
            select(undef, undef, undef, 0.05);
        }
        return 0;
    };
    for my $first (qw(member key)) {
        my $u = signup();
        my $hash = Digest::SHA::sha256_hex("race $first $$ " . rand());
        my $member = "INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$u->{user}{id}', 'editor');";
        my $key = "INSERT INTO api_keys (workspace_id, created_by, name, key_prefix, secret_hash, scopes)"
                . " VALUES ('$wid', '$u->{user}{id}', 'race', 'svc_live_race', decode('$hash', 'hex'), '{articles:read}');";
        my ($one, $two) = $first eq 'member' ? ($member, $key) : ($key, $member);
        open(my $held, '|-', 'psql', @conn) or die "psql: $!";
        $held->autoflush(1);
        print $held "BEGIN;\n$one\n";
        # the first statement's locks are taken once its row is there
        my $t0 = time;
        until (one("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                   . " WHERE a.datname = '$db' AND a.state = 'idle in transaction'") > 0 || time - $t0 > 60) {
            select(undef, undef, undef, 0.05);
        }
        my $pid = fork // die "fork: $!";
        if (!$pid) { exec 'psql', @conn, '-c', $two or exit 127 }
        ok $waiting->(), "$first first: the second session waits for it";
        print $held "COMMIT;\n";
        close $held;
        waitpid $pid, 0;
        is $? >> 8, 0, "$first first: the second session's write went through";
        is one("SELECT principal_role FROM api_keys WHERE secret_hash = decode('$hash', 'hex')"), 'editor',
           "$first first: the key acts with the member's role";
    }
    is one('SELECT cms_key_principal_drift()'), 0, 'the copies match the tables (concurrent writes)';
}

# --- nothing secret in a database dump -------------------------------------------------

{
    my $dump = `pg_dump -h 127.0.0.1 -p $ENV{TEST_CMS_PG_PORT} -U postgres "$db" 2>&1`;
    is $? >> 8, 0, 'pg_dump ran' or diag substr($dump, 0, 500);
    cmp_ok length($dump), '>', 1000, 'the dump has content';
    like $dump, qr/\Q$k1->{key_prefix}\E/, 'the dump has the keys (their visible prefixes)';
    cmp_ok scalar(@SECRETS), '>=', 7, scalar(@SECRETS) . ' secret keys issued';
    my @leaked = grep { index($dump, $_) >= 0 || index($dump, substr($_, 9, 43)) >= 0 } @SECRETS;
    is scalar(@leaked), 0, 'no issued secret key (nor its body) is in the dump' or diag join "\n", @leaked;
    my @pw = grep { index($dump, $_) >= 0 } @PASSWORDS;
    is scalar(@pw), 0, scalar(@PASSWORDS) . ' passwords used, none is in the dump' or diag join "\n", @pw;
    ok index($dump, master_secret()) < 0, 'the master secret is not in the dump';
    my $hashes = psql('SELECT password_hash FROM users');
    ok !grep({ $_->[0] !~ /^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/ } @$hashes), 'every stored password is an argon2id hash';
}

done_testing();
