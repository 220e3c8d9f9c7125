# Webhooks (issue 16), registration: /v1/api/webhooks (secret key, webhooks:read and
# webhooks:write, the key's creator an admin or the owner) and the studio mirrors
# /v1/workspaces/{id}/webhooks (owners and admins).
#
# Attacks: every route without a credential, with a bad key, a session on /v1/api, a key
# lacking the scope, a key whose creator was demoted to editor; studio routes with no
# session, an outsider, every role below admin; bad JSON, wrong types, unknown fields,
# unknown event names; unknown and malformed ids, another workspace's id (all 404, nothing
# changed); the URL checked as a site's origin is, through a test DNS server and nginx's
# resolver (http, userinfo, fragments, literals and names in refused ranges, names with a
# private or no address), nothing written on a refusal; the secret: whsec_ + base64 of 32
# bytes, answered once (create and rotate, Cache-Control: no-store), never in a read,
# never in a database dump (text, hex or base64 of its bytes), sealed with AES-256-GCM
# bound to the row ("webhook:<id>"), the rotated one kept for the overlap; ports: 443
# alone, or those cms_webhook_delivery ports= names (any on a public address was taken);
# test and redeliver share a workspace's limit (20, then one every 3 s, on the test
# clock); with cms_outbound_loopback on, plain http to loopback only.
use strict;
use warnings;
use Cms::Test;
use Cms::Dns;
use Cms::Fixtures qw(req req_spec diag_resp check_err one signup signup_defaults workspace key demoted_key
                     api_key master_secret $UUID $TS);
use Digest::SHA qw(hmac_sha256);
use MIME::Base64 qw(decode_base64);
use Time::HiRes ();

signup_defaults(email_prefix => 'hooks');

my @FIELDS = sort qw(id url events enabled description disabled_reason
                     previous_secret_expires_at created_at updated_at);
my $NOBODY = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';
my $SECRET = qr/^whsec_[A-Za-z0-9+\/]{43}=$/;

my $dns = Cms::Dns->start(records => {
    'hooks.test'   => ['93.184.216.34'],
    'v6.test'      => ['2606:2800:220:1::1'],
    'private.test' => ['10.0.0.5'],
    'mixed.test'   => ['93.184.216.34', '10.1.2.3'],
    'loop.test'    => ['127.0.0.1'],
    'meta.test'    => ['169.254.169.254'],
    'empty.test'   => [],
});
my $RESOLVER = 'resolver 127.0.0.1:' . $dns->port . ' valid=1s; resolver_timeout 3s;';
# 8443 allowed beside 443 (ports=); delivery off: nothing here is ever sent
start_nginx(http_config => "$RESOLVER cms_webhook_delivery off ports=443,8443;");

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Hooks');
my %m;
for my $role (qw(viewer author editor admin)) {
    $m{$role} = signup();
    Cms::Test::psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
}
my $K = key($ot, $wid, 'rw', qw(webhooks:read webhooks:write));
my $KR = key($ot, $wid, 'ro', 'webhooks:read');
my $KW = key($ot, $wid, 'wo', 'webhooks:write');
my $KA = key($ot, $wid, 'articles', qw(articles:read articles:write));
# minted by an admin who is then demoted: the key acts for an editor
my $KE = key($m{admin}{token}, $wid, 'demoted', qw(webhooks:read webhooks:write));
my $KD = demoted_key($wid, qw(webhooks:read webhooks:write));
my $outsider = signup();

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other', qw(webhooks:read webhooks:write));

my @SECRETS;
sub mkhook {
    my ($cred, $body, $path) = @_;
    my $r = req(POST => $path // '/v1/api/webhooks', $cred, $body);
    die 'webhook: ' . diag_resp($r) unless $r->{status} == 201;
    push @SECRETS, $r->{json}{secret};
    return $r->{json}{webhook};
}
sub count_hooks { one("SELECT count(*) FROM webhooks WHERE workspace_id = '$_[0]'") }

# --- credentials, scopes, roles ---------------------------------------------------------

{
    my $h = mkhook($K, { url => 'https://hooks.test/auth' });
    my $id = $h->{id};
    my $bad = 'svc_live_' . ('A' x 49);
    for my $t ([GET => '/webhooks', undef, 'read'],
               [POST => '/webhooks', { url => 'https://hooks.test/x' }, 'write'],
               [GET => "/webhooks/$id", undef, 'read'],
               [PATCH => "/webhooks/$id", { description => 'x' }, 'write'],
               [DELETE => "/webhooks/$id", undef, 'write'],
               [POST => "/webhooks/$id/secret/rotate", undef, 'write']) {
        my ($m, $rest, $b, $need) = @$t;
        my $p = "/v1/api$rest";
        check_err(req($m, $p, undef, $b), 401, 'missing_token', "$m $p without a key");
        check_err(req($m, $p, $bad, $b), 401, 'invalid_api_key', "$m $p with a bad key");
        check_err(req($m, $p, $ot, $b), 401, 'invalid_api_key', "$m $p with a session token");
        check_err(req($m, $p, $need eq 'read' ? $KW : $KR, $b), 403, 'missing_scope',
                  "$m $p without webhooks:$need");
        check_err(req($m, $p, $KA, $b), 403, 'missing_scope', "$m $p with only articles scopes");
        check_err(req($m, $p, $KD, $b), 403, 'forbidden', "$m $p with a key whose creator is now an editor");

        my $s = "/v1/workspaces/$wid$rest";
        check_err(req($m, $s, undef, $b), 401, 'missing_token', "$m $s without a session");
        check_err(req($m, $s, $outsider->{token}, $b), 403, 'not_workspace_member', "$m $s as an outsider");
        check_err(req($m, $s, $m{$_}{token}, $b), 403, 'forbidden', "$m $s as $_") for qw(viewer author editor);
    }
    is count_hooks($wid), 1, 'no refused create was stored';
    my $g = req(GET => "/v1/api/webhooks/$id", $KR);
    is_deeply $g->{json}, { webhook => $h }, 'the refused writes changed nothing';
    is req(GET => "/v1/workspaces/$wid/webhooks/$id", $m{admin}{token})->{status}, 200, 'an admin reads in the studio';
    is req(GET => "/v1/api/webhooks/$id", $KE)->{status}, 200, "an admin's key reads";
    is req(DELETE => "/v1/api/webhooks/$id", $KW)->{status}, 204, 'the write-only key deletes';
}

# --- create -----------------------------------------------------------------------------

my $r = req(POST => '/v1/api/webhooks', $K, { url => 'https://hooks.test/in' });
is $r->{status}, 201, 'create with a url only: 201' or diag diag_resp($r);
is_deeply [sort keys %{$r->{json} // {}}], ['secret', 'webhook'], 'create: {webhook, secret}';
is $r->{headers}{'cache-control'}, 'no-store', 'the answer with the secret: no-store';
my $h1 = $r->{json}{webhook} // {};
my $s1 = $r->{json}{secret} // '';
push @SECRETS, $s1;
is_deeply [sort keys %$h1], \@FIELDS, 'every webhook field, nothing else';
like $s1, $SECRET, 'the secret: whsec_ + base64';
is length(decode_base64(substr $s1, 6)), 32, 'of 32 bytes';
like $h1->{id} // '', $UUID, 'an id';
like $h1->{$_} // '', $TS, "$_ is an RFC 3339 time" for qw(created_at updated_at);
is_deeply { map { $_ => $h1->{$_} } qw(url events enabled description disabled_reason previous_secret_expires_at) },
    { url => 'https://hooks.test/in', events => ['*'], enabled => JSON::PP::true, description => '',
      disabled_reason => undef, previous_secret_expires_at => undef },
    'defaults: every event, enabled, no description';

my %full = (url => 'HTTPS://Hooks.Test:443/hook?a=1&b=%2F', events => [qw(article.published page.updated article.published)],
            enabled => JSON::PP::false, description => 'The receiver');
$r = req(POST => "/v1/workspaces/$wid/webhooks", $m{admin}{token}, \%full);
is $r->{status}, 201, 'an admin creates in the studio with every field' or diag diag_resp($r);
my $h2 = $r->{json}{webhook} // {};
push @SECRETS, $r->{json}{secret};
is $h2->{url}, 'https://hooks.test/hook?a=1&b=%2F', 'the url stored normalized (scheme, host, default port)';
is_deeply $h2->{events}, [qw(article.published page.updated)], 'events: a repeat kept once, in order';
ok !$h2->{enabled}, 'enabled false kept';
is $h2->{description}, 'The receiver', 'description kept';
isnt $r->{json}{secret}, $s1, 'each webhook its own secret';
is mkhook($K, { url => 'https://v6.test/', events => [qw(* video.published comment.created custom_entry.published
                                                          article.updated article.unpublished)] })->{events}[0],
   '*', 'every known event name taken';
is mkhook($K, { url => 'https://[2606:2800:220:1::1]:8443/x', id => $NOBODY, created_at => '2000-01-01T00:00:00Z' })->{url},
   'https://[2606:2800:220:1::1]:8443/x', 'a public IPv6 literal; read-only fields ignored';

my $n = count_hooks($wid);
check_err(req(POST => '/v1/api/webhooks', $K, '{"url":'), 400, 'invalid_request', 'malformed JSON');
check_err(req(POST => '/v1/api/webhooks', $K, '[]'), 400, 'invalid_request', 'a body that is no object');
check_err(req(POST => '/v1/api/webhooks', $K, {}), 400, 'url_required', 'no url');
check_err(req(POST => '/v1/api/webhooks', $K, { url => '' }), 400, 'url_required', 'an empty url');
check_err(req(POST => '/v1/api/webhooks', $K, { url => undef }), 400, 'url_required', 'a null url');
check_err(req(POST => '/v1/api/webhooks', $K, { url => 5 }), 400, 'invalid_url', 'url of the wrong type');
for my $bad ([events => 'article.published'], [events => []], [events => [5]], [events => ['article.deleted']],
             [events => ['*', 'nope']], [events => [('*') x 21]], [enabled => 'yes'], [enabled => 1],
             [description => 5], [description => 'x' x 1001], [colour => 'red']) {
    my ($f, $v) = @$bad;
    my $res = req(POST => '/v1/api/webhooks', $K, { url => 'https://hooks.test/', $f => $v });
    ok $res->{status} == 400 && ($res->{json}{code} // '') =~ /^invalid_(?:field_value|request)$/,
       "$f " . JSON::PP->new->allow_nonref->canonical->encode($v) . ': 400' or diag diag_resp($res);
}
is count_hooks($wid), $n, 'no refused body wrote a webhook';

# the URL matrix: each refused with invalid_url, nothing written
my @refused = (
    'http://hooks.test/', 'ftp://hooks.test/', 'hooks.test', '//hooks.test/', 'https://',
    'https://user@hooks.test/', 'https://u:p@hooks.test/', 'https://hooks.test/#frag', 'https://hooks .test/',
    'https://hooks.test/a b', "https://hooks.test/\r\nX: y", 'https://127.0.0.1/', 'https://[::1]/',
    'https://0x7f000001/', 'https://2130706433/', 'https://10.0.0.1/', 'https://169.254.169.254/latest',
    'https://100.64.0.1/', 'https://192.168.1.1/', 'https://[::ffff:10.0.0.1]/', 'https://[fd00::1]/',
    'https://[64:ff9b::a00:1]/', 'https://private.test/', 'https://mixed.test/', 'https://loop.test/',
    'https://meta.test/', 'https://empty.test/', 'https://nowhere.test/', 'https://' . ('a' x 2050) . '.test/',
    'https://hooks.test:22/', 'https://93.184.216.34:6379/', 'https://hooks.test:80/', 'https://hooks.test:8444/',
);
for my $u (@refused) {
    check_err(req(POST => '/v1/api/webhooks', $K, { url => $u }), 400, 'invalid_url', "url $u");
}
is count_hooks($wid), $n, 'no refused url wrote a webhook';

# --- list, get --------------------------------------------------------------------------

my $l = req(GET => '/v1/api/webhooks?limit=2', $KR);
is $l->{status}, 200, 'list: 200' or diag diag_resp($l);
is scalar @{$l->{json}{webhooks} // []}, 2, 'a page of 2';
is $l->{json}{pagination}{total}, $n, 'the total';
is_deeply $l->{json}{webhooks}[0], $h1, 'oldest first, the same record as created';
my $l2 = req(GET => "/v1/workspaces/$wid/webhooks?limit=2&offset=1", $ot);
is_deeply $l2->{json}{webhooks}[0], $h2, 'the studio list, offset 1';
my $past = req(GET => '/v1/api/webhooks?offset=1000', $KR);
is_deeply $past->{json}{webhooks}, [], 'past the end: empty';
ok !grep({ index($l->{body} . $l2->{body}, $_) >= 0 } @SECRETS), 'no list holds a secret';
is_deeply req(GET => "/v1/api/webhooks/$h1->{id}", $KR)->{json}, { webhook => $h1 }, 'get: the same record';
is req(GET => '/v1/api/webhooks', $K2)->{json}{pagination}{total}, 0, 'another workspace lists none of them';

# --- unknown ids, another workspace's -----------------------------------------------------

my $hx = mkhook($K2, { url => 'https://hooks.test/other', description => 'theirs' });
for my $id ($NOBODY, 'not-a-uuid', $hx->{id}) {
    for my $t ([GET => "/v1/api/webhooks/$id"], [PATCH => "/v1/api/webhooks/$id", { description => 'mine' }],
               [DELETE => "/v1/api/webhooks/$id"], [POST => "/v1/api/webhooks/$id/secret/rotate"],
               [GET => "/v1/workspaces/$wid/webhooks/$id", undef, $ot],
               [PATCH => "/v1/workspaces/$wid/webhooks/$id", { description => 'mine' }, $ot]) {
        my ($m, $p, $b, $cred) = @$t;
        check_err(req($m, $p, $cred // $K, $b), 404, 'not_found', "$m $p");
    }
}
is_deeply req(GET => "/v1/api/webhooks/$hx->{id}", $K2)->{json}{webhook}, $hx, "the other workspace's webhook unchanged";
is one("SELECT count(*) FROM webhooks WHERE id = '$hx->{id}' AND previous_secret_sealed IS NULL"), 1,
   'and its secret not rotated';

# --- update -----------------------------------------------------------------------------

check_err(req(PATCH => "/v1/api/webhooks/$h1->{id}", $K, '{"url"'), 400, 'invalid_request', 'PATCH malformed JSON');
check_err(req(PATCH => "/v1/api/webhooks/$h1->{id}", $K, { url => 'https://private.test/' }), 400, 'invalid_url',
          'PATCH to a private host');
check_err(req(PATCH => "/v1/api/webhooks/$h1->{id}", $K, { url => undef }), 400, 'url_required', 'PATCH url null');
check_err(req(PATCH => "/v1/api/webhooks/$h1->{id}", $K, { events => ['x.y'] }), 400, 'invalid_field_value',
          'PATCH an unknown event');
check_err(req(PATCH => "/v1/api/webhooks/$h1->{id}", $K, { enabled => 'no' }), 400, 'invalid_field_value',
          'PATCH enabled of the wrong type');
is_deeply req(GET => "/v1/api/webhooks/$h1->{id}", $KR)->{json}{webhook}, $h1, 'refused patches changed nothing';

my $p = req(PATCH => "/v1/api/webhooks/$h1->{id}", $K, { url => 'https://www.hooks.test:8443/new' });
check_err($p, 400, 'invalid_url', 'a name with no address');
$dns->set('www.hooks.test' => ['93.184.216.34']);
$p = req(PATCH => "/v1/api/webhooks/$h1->{id}", $K, { url => 'https://www.hooks.test:8443/new' });
is $p->{status}, 200, 'PATCH url' or diag diag_resp($p);
is $p->{json}{webhook}{url}, 'https://www.hooks.test:8443/new', 'url changed';
is_deeply $p->{json}{webhook}{events}, ['*'], 'events kept';
is_deeply [sort keys %{$p->{json}}], ['webhook'], 'no secret in a PATCH answer';
Cms::Test::psql("UPDATE webhooks SET enabled = false, disabled_reason = 'gone (410)' WHERE id = '$h1->{id}'");
$p = req(PATCH => "/v1/workspaces/$wid/webhooks/$h1->{id}", $m{admin}{token},
         { events => ['article.updated'], description => 'two' });
is_deeply [@{$p->{json}{webhook}}{qw(events description disabled_reason)}], [['article.updated'], 'two', 'gone (410)'],
    'PATCH events and description; the reason kept while enabled is not given';
$p = req(PATCH => "/v1/api/webhooks/$h1->{id}", $K, { enabled => JSON::PP::true });
ok $p->{json}{webhook}{enabled} && !defined $p->{json}{webhook}{disabled_reason}, 'enabled again: the reason cleared';

# --- the secret: sealed, rotated ----------------------------------------------------------

my $aead = unpack 'H*', hmac_sha256('cms aead v1', master_secret());
my $open = sub {
    my ($hex, $aad) = @_;
    my $py = join "\n", 'import sys', 'from cryptography.hazmat.primitives.ciphers.aead import AESGCM',
        'k, b, a = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3].encode()',
        'try:', '  sys.stdout.write(AESGCM(k).decrypt(b[:12], b[12:], a).decode())',
        'except Exception as e:', '  sys.stdout.write("FAIL:" + type(e).__name__)', '';
    open my $fh, '-|', 'python3', '-c', $py, $aead, $hex, $aad or return undef;
    local $/;
    my $out = <$fh>;
    close $fh;
    return $? ? undef : $out;
};
my $sealed = sub { one("SELECT encode($_[1], 'hex') FROM webhooks WHERE id = '$_[0]'") };
SKIP: {
    my $probe = $open->('00' x 28, 'x');
    skip 'python3 with the cryptography package is needed to open AES-GCM', 3
        unless defined $probe && $probe =~ /^FAIL:/;
    is $open->($sealed->($h1->{id}, 'secret_sealed'), "webhook:$h1->{id}"), $s1,
       'AES-256-GCM under the stored-secrets key, associated data "webhook:<id>": the secret';
    like $open->($sealed->($h1->{id}, 'secret_sealed'), "webhook:$h2->{id}"), qr/^FAIL:InvalidTag/,
         'moved to another webhook: does not open';

    my $ro = req(POST => "/v1/api/webhooks/$h1->{id}/secret/rotate", $KW);
    is $ro->{status}, 200, 'rotate: 200' or diag diag_resp($ro);
    is $ro->{headers}{'cache-control'}, 'no-store', 'rotate: no-store';
    my $s1b = $ro->{json}{secret} // '';
    push @SECRETS, $s1b;
    like $s1b, $SECRET, 'a new secret';
    isnt $s1b, $s1, 'not the old one';
    like $ro->{json}{webhook}{previous_secret_expires_at} // '', $TS, 'the old one kept until a time';
    ok one("SELECT previous_secret_expires_at BETWEEN now() + interval '23 hours' AND now() + interval '25 hours'"
           . " FROM webhooks WHERE id = '$h1->{id}'") eq 't', 'for 24 hours';
    is $open->($sealed->($h1->{id}, 'previous_secret_sealed'), "webhook:$h1->{id}"), $s1, 'the previous secret sealed';
    is $open->($sealed->($h1->{id}, 'secret_sealed'), "webhook:$h1->{id}"), $s1b, 'the new one sealed';
}
{
    my $ro = req(POST => "/v1/workspaces/$wid/webhooks/$h2->{id}/secret/rotate", $m{admin}{token});
    is $ro->{status}, 200, 'an admin rotates in the studio';
    push @SECRETS, $ro->{json}{secret};
}

{
    my $dump = `pg_dump -h 127.0.0.1 -p $ENV{TEST_CMS_PG_PORT} -U postgres --no-owner @{[db_name()]} 2>&1`;
    is $?, 0, 'pg_dump of the database' or diag substr($dump, 0, 500);
    like $dump, qr/COPY public\.webhooks/, 'the dump has the webhooks';
    cmp_ok scalar(@SECRETS), '>=', 8, scalar(@SECRETS) . ' secrets issued';
    my @leaked = grep {
        my $raw = decode_base64(substr $_, 6);
        index($dump, $_) >= 0 || index($dump, substr($_, 6)) >= 0 || index($dump, unpack('H*', $raw)) >= 0
            || index($dump, unpack('H*', $_)) >= 0
    } @SECRETS;
    is scalar(@leaked), 0, 'no secret in the dump: as text, its base64, hex of its bytes or of its text'
        or diag "@leaked";
    my $log = join "\n", error_log_lines();
    ok !grep({ index($log, $_) >= 0 } @SECRETS), 'error.log holds no secret';
}

# --- delete -------------------------------------------------------------------------------

is req(DELETE => "/v1/workspaces/$wid/webhooks/$h2->{id}", $m{admin}{token})->{status}, 204, 'studio delete: 204';
check_err(req(GET => "/v1/api/webhooks/$h2->{id}", $K), 404, 'not_found', 'gone');
check_err(req(DELETE => "/v1/api/webhooks/$h2->{id}", $K), 404, 'not_found', 'a second delete: 404');

# --- endpoints per workspace: the plan's webhook_limit ---------------------------------------

{
    # another workspace on a plan of three endpoints; it has one already ($hx)
    Cms::Test::psql("INSERT INTO plans (name, storage_limit_bytes, upload_limit_bytes, webhook_limit)"
                    . " VALUES ('hooks3', 1000000, 1000, 3)");
    Cms::Test::psql("UPDATE workspaces SET plan = 'hooks3' WHERE id = '$wid2'");
    my $before = count_hooks($wid2);
    my @burst = parallel_requests(map { req_spec(POST => '/v1/api/webhooks', $K2, { url => "https://hooks.test/b$_" }) }
                                  1 .. 6);
    my %st;
    $st{$_->{status}}++ for @burst;
    is $st{201}, 3 - $before, '6 concurrent creates: exactly the free endpoints made' or diag explain \%st;
    ok !grep({ $_->{status} != 201 && !($_->{status} == 409 && ($_->{json}{code} // '') eq 'webhook_limit_reached') }
             @burst), 'the others: 409 webhook_limit_reached';
    is count_hooks($wid2), 3, 'never over the limit';
    push @SECRETS, map { $_->{json}{secret} } grep { $_->{status} == 201 } @burst;
    check_err(req(POST => "/v1/workspaces/$wid2/webhooks", $other->{token}, { url => 'https://hooks.test/s' }), 409,
              'webhook_limit_reached', 'the studio route too');
    is req(POST => '/v1/api/webhooks', $K, { url => 'https://hooks.test/mine' })->{status}, 201,
       'a workspace on another plan: not counted against it';
    Cms::Test::psql("UPDATE workspaces SET plan = 'free' WHERE id = '$wid2'");
}

# --- hand-queued sends: test and redeliver share the workspace's limit ---------------------

{
    my $hook = mkhook($K, { url => 'https://hooks.test/limited' });
    my $clock = int(Time::HiRes::time() * 1000) + 3_600_000;
    my @c = ('X-Cms-Test-Clock' => $clock);
    my ($ok, $refused, $delivery) = (0, undef, undef);
    for (1 .. 25) {
        my $x = req(POST => "/v1/api/webhooks/$hook->{id}/test", $K, undef, @c);
        if ($x->{status} == 202) { $ok++; $delivery //= $x->{json}{delivery}{id} } else { $refused = $x; last }
    }
    is $ok, 20, 'test: a burst of exactly 20 queued';
    check_err($refused, 429, 'rate_limited', 'the 21st test');
    ok(($refused->{headers}{'retry-after'} // 0) >= 1, '429: Retry-After');
    check_err(req(POST => "/v1/api/webhooks/$hook->{id}/deliveries/$delivery/redeliver", $K, undef, @c), 429,
              'rate_limited', 'redeliver shares the bucket');
    check_err(req(POST => "/v1/workspaces/$wid/webhooks/$hook->{id}/test", $ot, undef, @c), 429, 'rate_limited',
              'the studio mirror too');
    my $theirs = mkhook($K2, { url => 'https://hooks.test/theirs' });
    is req(POST => "/v1/api/webhooks/$theirs->{id}/test", $K2, undef, @c)->{status}, 202,
       'another workspace: its own bucket';
    my @later = ('X-Cms-Test-Clock' => $clock + 3000);
    my $r = req(POST => "/v1/api/webhooks/$hook->{id}/deliveries/$delivery/redeliver", $K, undef, @later);
    is $r->{status}, 202, 'one send back 3 s later: a redeliver' or diag diag_resp($r);
    check_err(req(POST => "/v1/api/webhooks/$hook->{id}/test", $K, undef, @later), 429, 'rate_limited', 'and only one');
    is one("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = '$hook->{id}'"), 21,
       'twenty tests and one redelivery queued, nothing for a refusal';
}

# --- ports: 443 alone without ports= ----------------------------------------------------------

start_nginx(http_config => $RESOLVER);
check_err(req(POST => '/v1/api/webhooks', $K, { url => 'https://hooks.test:8443/x' }), 400, 'invalid_url',
          'without ports=: 8443 refused');
like(req(POST => '/v1/api/webhooks', $K, { url => 'https://hooks.test:8443/x' })->{json}{error} // '', qr/port/,
     '... saying it is the port');
my $p443 = req(POST => '/v1/api/webhooks', $K, { url => 'https://hooks.test:443/x' });
is $p443->{status}, 201, 'without ports=: 443 taken' or diag diag_resp($p443);
push @SECRETS, $p443->{json}{secret};
for my $bad ('ports=0', 'ports=x', 'ports=443,', 'ports=65536', 'ports=' . join(',', 1 .. 9)) {
    isnt nginx_test(http_config => "cms_webhook_delivery off $bad;")->{rc}, 0, "nginx -t refuses $bad";
}

# --- cms_outbound_loopback on: http to loopback only ----------------------------------------

start_nginx(http_config => "$RESOLVER cms_outbound_loopback on;");
for my $u ('http://127.0.0.1:9/hook', 'http://loop.test:9/', 'https://127.0.0.1/', 'http://[::1]:8080/') {
    my $res = req(POST => '/v1/api/webhooks', $K, { url => $u });
    is $res->{status}, 201, "with cms_outbound_loopback on: $u" or diag diag_resp($res);
    push @SECRETS, $res->{json}{secret};
}
for my $u ('http://hooks.test/', 'http://93.184.216.34/', 'http://mixed.test/', 'https://private.test/') {
    check_err(req(POST => '/v1/api/webhooks', $K, { url => $u }), 400, 'invalid_url',
              "with cms_outbound_loopback on, still refused: $u");
}

done_testing();
