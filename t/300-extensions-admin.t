# /v1/extensions with admin credentials (sk_admin_, issued by cms-admin): the credential
# matrix on every admin route (missing, other schemes, malformed, bad checksum, unknown,
# revoked, keys of other families, a user session) -> 401 unauthenticated; the privilege
# matrix (view, manage, manage implies view, none) -> 403 insufficient_scope; facility
# isolation (another facility's extension is 404 on every :name route and absent from its
# list; names are per facility); the list (fields, order by name, limit, starting_after,
# has_more, category and enabled filters, 422 on bad query values); Idempotency-Key on every
# POST (400 without, replay with Idempotent-Replayed, 409 on another body); rate-limit
# headers; and file: manifests refused when no cms_extensions_manifests folder is set.
use strict;
use warnings;
use Cms::Test;
use JSON::PP ();
use Digest::SHA qw(hmac_sha256);
use Time::HiRes qw(time sleep);
use MIME::Base64 ();
use File::Path qw(make_path);

# --- helpers: t/lib/Cms/Fixtures.pm (shared with the other API tests) and
# t/lib/Cms/ExtFixtures.pm (admin keys, cms-admin, manifests, installs) ------------
use Cms::Fixtures qw(base62 crc32 make_key master_secret one req_spec req idem post diag_resp
                     facility redis_cli $UUID);
use Cms::ExtFixtures qw(:all);

set_conf_defaults(http_config => "cms_extensions_manifests $MDIR;");
start_nginx();

put_manifest('iso.toml', manifest(name => 'iso-one', fields => [[note => { type => 'string' }]]));
put_manifest('min.toml', manifest(name => 'min-one', privileges => []));

# --- credentials from cms-admin ---------------------------------------------------------
my $fa = cms_admin(qw(facility create --name), 'Facility A');
like $fa, $UUID, 'cms-admin facility create prints the facility id';
my $fb = cms_admin(qw(facility create --name), 'Facility B');
my %K;
$K{manage} = cms_admin('admin', 'create', '--facility', $fa, '--name', 'ops');
like $K{manage}, qr/^sk_admin_[0-9A-Za-z]{40,}$/, 'cms-admin admin create prints an sk_admin_ key';
$K{view} = cms_admin('admin', 'create', '--facility', $fa, '--name', 'viewer', '--privileges', 'admin:extensions:view');
$K{manage_only} = cms_admin('admin', 'create', '--facility', $fa, '--name', 'm', '--privileges', 'admin:extensions:manage');
$K{none} = admin_key($fa, privs => []);
$K{b} = cms_admin('admin', 'create', '--facility', $fb, '--name', 'ops-b',
                  '--privileges', 'admin:extensions:view,admin:extensions:manage');
$K{revoked} = cms_admin('admin', 'create', '--facility', $fa, '--name', 'gone');
{
    my ($row) = grep { /\bgone\b/ } split /\n/, cms_admin(qw(admin list --facility), $fa);
    my ($id) = ($row // '') =~ /^(\S+)/;
    ok $id, 'cms-admin admin list shows the credential' or diag $row;
    is req(GET => '/v1/extensions', $K{revoked})->{status}, 200, 'the credential works before it is revoked';
    cms_admin(qw(admin revoke --id), $id);
}
is one("SELECT count(*) FROM admin_credentials WHERE secret_hash = decode('"
       . unpack('H*', hmac_sha256($K{manage}, $PEPPER)) . "', 'hex')"), 1,
   'only HMAC(pepper, key) is stored for an admin credential';
is one("SELECT count(*) FROM admin_credentials WHERE key_prefix = " . q_($K{manage})), 0, 'not the key itself';

# --- installs used below -----------------------------------------------------------------
my $r = install($K{manage}, 'file:iso.toml', {});
is $r->{status}, 201, 'install iso-one in facility A' or diag diag_resp($r);
my $EXT_A_KEY = $r->{json}{api_key};
$r = install($K{manage}, 'file:min.toml');
is $r->{status}, 201, 'install min-one in facility A' or diag diag_resp($r);
ok wait_status($fa, 'iso-one', 'running'), 'iso-one running';
ok wait_status($fa, 'min-one', 'running'), 'min-one running';

# --- the credential matrix on every admin route -------------------------------------------
my @ROUTES = (
    [GET => '/v1/extensions', undef],
    [POST => '/v1/extensions', { manifest_url => 'file:iso.toml' }],
    [PUT => '/v1/extensions/iso-one/config', { note => 'x' }],
    [POST => '/v1/extensions/iso-one/reload', undef],
    [POST => '/v1/extensions/iso-one/keys/rotate', undef],
);
my $user = req(POST => '/v1/auth/signup', undef, { email => "admin-$$\@example.com", password => 'password number 1', name => 'U' });
is $user->{status}, 201, 'a user signs up' or diag diag_resp($user);
my $bad_crc = $K{manage};
substr($bad_crc, -1, 1) = substr($bad_crc, -1, 1) eq 'A' ? 'B' : 'A';
my @CREDS = (
    ['no Authorization', undef],
    ['empty Authorization', ''],
    ['Bearer without a token', 'Bearer'],
    ['Basic scheme', 'Basic ' . MIME::Base64::encode_base64("$K{manage}:", '')],
    ['Token scheme', "Token $K{manage}"],
    ['malformed: too short', 'Bearer sk_admin_short'],
    ['bad checksum', "Bearer $bad_crc"],
    ['unknown key (valid format, not stored)', 'Bearer ' . make_key('sk_admin_')],
    ['revoked key', "Bearer $K{revoked}"],
    ['an sk_live_ key whose hash is stored as an admin credential', do {
        my $k = make_key('sk_live_');
        psql(sprintf "INSERT INTO admin_credentials (facility_id, name, privileges, key_prefix, secret_hash)
                      VALUES ('%s', 'x', '{admin:extensions:view,admin:extensions:manage}', 'sk_live_', decode('%s', 'hex'))",
             $fa, unpack('H*', hmac_sha256($k, $PEPPER)));
        "Bearer $k" }],
    ['a user session token', "Bearer $user->{json}{token}"],
    ['a svc_live_ secret key', 'Bearer ' . make_key('svc_live_')],
);
for my $route (@ROUTES) {
    my ($m, $path, $body) = @$route;
    for my $c (@CREDS) {
        my @h = defined $c->[1] ? (Authorization => $c->[1]) : ();
        push @h, 'Idempotency-Key' => idem() if $m eq 'POST';
        my $b = defined $body ? $JSON->encode($body) : undef;
        push @h, 'Content-Type' => 'application/json' if defined $b;
        check_err(http($m, $path, \@h, $b), 401, 'unauthenticated', undef, "$m $path, $c->[0]");
    }
}
# a live extension key is a credential, of the wrong kind: 403, not "invalid or revoked"
for my $route (@ROUTES) {
    my ($m, $path, $body) = @$route;
    my @h = (Authorization => "Bearer $EXT_A_KEY");
    push @h, 'Idempotency-Key' => idem() if $m eq 'POST';
    my $b = defined $body ? $JSON->encode($body) : undef;
    push @h, 'Content-Type' => 'application/json' if defined $b;
    my $x = http($m, $path, \@h, $b);
    check_err($x, 403, 'insufficient_scope', undef, "$m $path, an extension key (sk_live_) of the facility");
    like(($x->{json}{error} // {})->{message} // '', qr/admin credential/, '... saying which credential is needed');
}
is ext_status($fa, 'iso-one'), 'running', 'nothing changed by the refused requests';
is one("SELECT count(*) FROM extension_keys k JOIN extensions e ON e.id = k.extension_id
        WHERE e.facility_id = '$fa' AND e.name = 'iso-one'"), 1, 'no key rotated by the refused requests';

# --- the privilege matrix -------------------------------------------------------------------
for my $route (@ROUTES) {
    my ($m, $path, $body) = @$route;
    my $call = sub { $m eq 'POST' ? post($path, $_[0], $body) : req($m, $path, $_[0], $body) };
    check_err($call->($K{none}), 403, 'insufficient_scope', undef, "$m $path, a credential without privileges");
    if ($m eq 'GET') {
        is $call->($K{view})->{status}, 200, "$m $path, admin:extensions:view: 200";
        my $x = $call->($K{manage_only});
        is $x->{status}, 200, "$m $path, admin:extensions:manage alone: 200 (manage implies view)" or diag diag_resp($x);
    } else {
        check_err($call->($K{view}), 403, 'insufficient_scope', undef, "$m $path, view only");
    }
}
is ext_status($fa, 'iso-one'), 'running', 'view-only and privilege-less credentials changed nothing';
{
    my $x = req(PUT => '/v1/extensions/iso-one/config', $K{manage_only}, { note => 'by manage' });
    is $x->{status}, 200, 'PUT config with admin:extensions:manage alone: 200' or diag diag_resp($x);
}

# --- facility isolation ---------------------------------------------------------------------
{
    my $lb = req(GET => '/v1/extensions', $K{b});
    is $lb->{status}, 200, 'facility B lists' or diag diag_resp($lb);
    is_deeply $lb->{json}{data}, [], 'facility B sees none of facility A\'s extensions';
    check_err(req(PUT => '/v1/extensions/iso-one/config', $K{b}, { note => 'b' }), 404, 'not_found', undef,
              'B: PUT config of A\'s extension');
    check_err(post('/v1/extensions/iso-one/reload', $K{b}), 404, 'not_found', undef, 'B: reload A\'s extension');
    check_err(post('/v1/extensions/iso-one/keys/rotate', $K{b}), 404, 'not_found', undef, 'B: rotate A\'s key');
    is ext_status($fa, 'iso-one'), 'running', 'A\'s extension untouched';
    is one("SELECT value FROM extension_configs c JOIN extensions e ON e.id = c.extension_id
            WHERE e.facility_id = '$fa' AND e.name = 'iso-one' AND c.name = 'note'"), 'by manage',
       'A\'s configuration untouched';
    is one("SELECT count(*) FROM extension_keys k JOIN extensions e ON e.id = k.extension_id
            WHERE e.facility_id = '$fa' AND e.name = 'iso-one'"), 1, 'A\'s keys untouched';

    my $ib = install($K{b}, 'file:iso.toml', {});
    is $ib->{status}, 201, 'B installs an extension of the same name: names are per facility' or diag diag_resp($ib);
    ok wait_status($fb, 'iso-one', 'running'), 'B\'s iso-one running';
    my $rl = post('/v1/extensions/iso-one/reload', $K{b});
    is $rl->{status}, 200, 'B reloads its own iso-one' or diag diag_resp($rl);
    is ext_status($fb, 'iso-one'), 'reloading', 'B\'s is reloading';
    is ext_status($fa, 'iso-one'), 'running', 'A\'s of the same name is not';
    my $pb = req(PUT => '/v1/extensions/iso-one/config', $K{b}, { note => 'b note' });
    is $pb->{status}, 200, 'B configures its own' or diag diag_resp($pb);
    is one("SELECT value FROM extension_configs c JOIN extensions e ON e.id = c.extension_id
            WHERE e.facility_id = '$fa' AND e.name = 'iso-one' AND c.name = 'note'"), 'by manage',
       'A\'s configuration still its own';
    my $la = req(GET => '/v1/extensions', $K{view});
    is_deeply [map { $_->{name} } @{$la->{json}{data} // []}], [qw(iso-one min-one)], 'A lists exactly its two';
    # A's extension key does not act on B
    my $kb = $ib->{json}{api_key};
    my $d = post('/v1/ext/control/drain-complete', $EXT_A_KEY);
    is $d->{status}, 200, 'A\'s extension key: drain-complete 200' or diag diag_resp($d);
    is ext_status($fb, 'iso-one'), 'reloading', 'A\'s key does not end B\'s reload';
    is post('/v1/ext/control/drain-complete', $kb)->{status}, 200, 'B\'s key: drain-complete';
    is ext_status($fb, 'iso-one'), 'running', 'B\'s reload ended by B\'s key';
    # cms-admin sees the same per facility
    my @la = split /\n/, cms_admin(qw(extension list --facility), $fa);
    is scalar(@la), 2, 'cms-admin extension list: A has two' or diag join "\n", @la;
    ok +(grep { /\biso-one\b/ && /\brunning\b/ } @la), 'cms-admin lists iso-one running';
}

# --- unknown names ----------------------------------------------------------------------------
for my $name ('nope', 'Bad_Name', 'a' x 65) {
    check_err(req(PUT => "/v1/extensions/$name/config", $K{manage}, {}), 404, 'not_found', undef, "PUT config of '$name'");
    check_err(post("/v1/extensions/$name/reload", $K{manage}), 404, 'not_found', undef, "reload '$name'");
    check_err(post("/v1/extensions/$name/keys/rotate", $K{manage}), 404, 'not_found', undef, "rotate '$name'");
}

# --- the list ---------------------------------------------------------------------------------
my $fl = facility();
my $KL = admin_key($fl, privs => ['admin:extensions:view']);
my (@names, @values);
for my $i (1 .. 45) {
    my $name = sprintf 'ext-%02d', 46 - $i;     # inserted out of order
    my $cat = $i % 3 == 0 ? 'insurance' : 'payment';
    my $en = $i % 5 == 0 ? 'false' : 'true';
    my $st = $i % 7 == 0 ? 'reloading' : 'running';
    push @values, "('$fl', '$name', '1.$i.0', '$cat', '$st', $en, '{}', now() - interval '$i minutes')";
    push @names, $name;
}
psql("INSERT INTO extensions (facility_id, name, version, category, status, is_enabled, privileges, updated_at) VALUES "
     . join(', ', @values));
@names = sort @names;
my %row = map { $_->[0] => { name => $_->[0], version => $_->[1], category => $_->[2], is_enabled => $_->[3] eq 't',
                             status => $_->[4] } }
          @{psql("SELECT name, version, category, is_enabled, status FROM extensions WHERE facility_id = '$fl'")};
{
    my $x = req(GET => '/v1/extensions', $KL);
    is $x->{status}, 200, 'list: 200' or diag diag_resp($x);
    like $x->{headers}{'content-type'} // '', qr{^application/json}, 'list: JSON';
    is_deeply [sort keys %{$x->{json}}], [qw(data has_more)], 'list: {data, has_more}';
    is scalar(@{$x->{json}{data}}), 20, 'list: 20 by default';
    ok $x->{json}{has_more}, 'list: has_more';
    ok JSON::PP::is_bool($x->{json}{has_more}), 'has_more is a boolean';
    is_deeply [map { $_->{name} } @{$x->{json}{data}}], [@names[0 .. 19]], 'list: ordered by name';
    my $it = $x->{json}{data}[0];
    is_deeply [sort keys %$it], [sort qw(name version category is_enabled status updated_at)], 'item: its fields';
    like $it->{updated_at} // '', $TS, 'item: updated_at in RFC 3339 with milliseconds';
    ok JSON::PP::is_bool($it->{is_enabled}), 'item: is_enabled a boolean';
    my $bad = grep {
        my $w = $row{$_->{name}};
        !$w || $w->{version} ne $_->{version} || $w->{category} ne $_->{category} || $w->{status} ne $_->{status}
            || ($w->{is_enabled} ? 1 : 0) != ($_->{is_enabled} ? 1 : 0)
    } @{$x->{json}{data}};
    is $bad, 0, 'items: version, category, status and is_enabled as stored';
}
{
    # walk every page with starting_after
    my (@seen, $after, $pages);
    while (1) {
        my $q = '/v1/extensions?limit=7' . (defined $after ? "&starting_after=$after" : '');
        my $x = req(GET => $q, $KL);
        last unless $x->{status} == 200 && ++$pages < 20;
        push @seen, map { $_->{name} } @{$x->{json}{data}};
        last unless $x->{json}{has_more};
        $after = $x->{json}{data}[-1]{name};
    }
    is_deeply \@seen, \@names, "paging by 7 with starting_after: every extension once, in order ($pages pages)";
    my $x = req(GET => '/v1/extensions?limit=5&starting_after=ext-42', $KL);
    is_deeply [map { $_->{name} } @{$x->{json}{data}}], [qw(ext-43 ext-44 ext-45)], 'the last page';
    ok !$x->{json}{has_more}, 'the last page: has_more false';
    $x = req(GET => '/v1/extensions?limit=3&starting_after=ext-45', $KL);
    is_deeply $x->{json}, { data => [], has_more => JSON::PP::false }, 'after the last: empty';
    $x = req(GET => '/v1/extensions?limit=2&starting_after=ext-10x', $KL);
    is_deeply [map { $_->{name} } @{$x->{json}{data}}], [qw(ext-11 ext-12)], 'starting_after a name not installed: the next names';
    $x = req(GET => '/v1/extensions?limit=45', $KL);
    ok !$x->{json}{has_more} && @{$x->{json}{data}} == 45, 'limit = the count: all, has_more false';
    $x = req(GET => '/v1/extensions?limit=44', $KL);
    ok $x->{json}{has_more} && @{$x->{json}{data}} == 44, 'limit = count - 1: has_more true';
    $x = req(GET => '/v1/extensions?limit=100', $KL);
    is $x->{status}, 200, 'limit=100: 200';
    $x = req(GET => '/v1/extensions?limit=1', $KL);
    is_deeply [map { $_->{name} } @{$x->{json}{data}}], ['ext-01'], 'limit=1';
}
{
    my $x = req(GET => '/v1/extensions?category=insurance&limit=100', $KL);
    my @want = grep { $row{$_}{category} eq 'insurance' } @names;
    is_deeply [map { $_->{name} } @{$x->{json}{data}}], \@want, 'category=insurance: exactly those (' . scalar(@want) . ')';
    $x = req(GET => '/v1/extensions?enabled=false&limit=100', $KL);
    @want = grep { !$row{$_}{is_enabled} } @names;
    is_deeply [map { $_->{name} } @{$x->{json}{data}}], \@want, 'enabled=false: exactly those (' . scalar(@want) . ')';
    $x = req(GET => '/v1/extensions?enabled=true&category=payment&limit=100', $KL);
    @want = grep { $row{$_}{is_enabled} && $row{$_}{category} eq 'payment' } @names;
    is_deeply [map { $_->{name} } @{$x->{json}{data}}], \@want, 'enabled=true&category=payment: both filters';
    $x = req(GET => '/v1/extensions?category=insurance&limit=3', $KL);
    ok $x->{json}{has_more}, 'a filtered page: has_more';
    my $last = $x->{json}{data}[-1]{name};
    $x = req(GET => "/v1/extensions?category=insurance&limit=100&starting_after=$last", $KL);
    @want = grep { $row{$_}{category} eq 'insurance' && $_ gt $last } @names;
    is_deeply [map { $_->{name} } @{$x->{json}{data}}], \@want, 'filtered pages with starting_after';
    $x = req(GET => '/v1/extensions?category=nothing', $KL);
    is_deeply $x->{json}, { data => [], has_more => JSON::PP::false }, 'a category with none: empty page';
}
for my $v ('yes', '1', 'TRUE', '', 'true%20') {
    check_err(req(GET => "/v1/extensions?enabled=$v", $KL), 422, 'validation_error', 'enabled', "enabled=$v");
}
for my $v ('0', '101', '-1', 'abc', '', '1e2', '99999999999999999999') {
    check_err(req(GET => "/v1/extensions?limit=$v", $KL), 422, 'validation_error', 'limit', "limit=$v");
}
# the cursor list's other refusals (the list engine: ngx_http_cms_list_cursor)
{
    my $x = req(GET => '/v1/extensions?limit=0', $KL);
    is $x->{json}{error}{message}, 'limit must be an integer from 1 to 100', 'limit=0: the message gives the range';
    check_err(req(GET => '/v1/extensions?limit=5&limit=6', $KL), 400, 'invalid_request', 'limit', 'limit given twice');
    check_err(req(GET => '/v1/extensions?limit=%zz', $KL), 400, 'invalid_request', 'limit', 'limit with a bad escape');
    check_err(req(GET => '/v1/extensions?starting_after=' . ('a' x 65), $KL), 400, 'invalid_request', 'starting_after',
              'starting_after over 64 bytes');
    $x = req(GET => '/v1/extensions?limit=1&starting_after=' . ('z' x 64), $KL);
    is $x->{status}, 200, 'starting_after of 64 bytes: 200' or diag diag_resp($x);
    is_deeply $x->{json}, { data => [], has_more => JSON::PP::false }, 'after a name past every other: empty';
    check_err(req(GET => '/v1/extensions?starting_after=a&starting_after=b', $KL), 400, 'invalid_request',
              'starting_after', 'starting_after given twice');
    check_err(req(GET => '/v1/extensions?starting_after=%ff', $KL), 400, 'invalid_request', 'starting_after',
              'starting_after not UTF-8');
    check_err(req(GET => '/v1/extensions?starting_after=a%00b', $KL), 400, 'invalid_request', 'starting_after',
              'starting_after with a NUL');
    $x = req(GET => '/v1/extensions?starting_after=', $KL);
    is_deeply [map { $_->{name} } @{$x->{json}{data} // []}], [@names[0 .. 19]],
              'an empty starting_after: the first page (every name sorts after it)';
    $x = req(GET => '/v1/extensions?limit=20', $KL);
    unlike $x->{body}, qr/" : |": |, "/, 'the page is compact JSON';
}

# --- Idempotency-Key on every POST ------------------------------------------------------------
{
    my $fi = facility();
    my $KI = admin_key($fi);
    for my $p ('/v1/extensions', '/v1/extensions/iso-one/reload', '/v1/extensions/iso-one/keys/rotate') {
        my $b = $p eq '/v1/extensions' ? { manifest_url => 'file:iso.toml' } : undef;
        check_err(req(POST => $p, $KI, $b), 400, 'invalid_request', 'Idempotency-Key', "POST $p without Idempotency-Key");
        check_err(req(POST => $p, $KI, $b, 'Idempotency-Key' => ''), 400, 'invalid_request', 'Idempotency-Key',
                  "POST $p with an empty Idempotency-Key");
        check_err(req(POST => $p, $KI, $b, 'Idempotency-Key' => 'x' x 256), 400, 'invalid_request', 'Idempotency-Key',
                  "POST $p with a 256-character Idempotency-Key");
    }
    is one("SELECT count(*) FROM extensions WHERE facility_id = '$fi'"), 0, 'nothing installed without a key';

    my $k = idem();
    my $body = '{"manifest_url":"file:iso.toml","config":{"note":"first"}}';
    my $a = req(POST => '/v1/extensions', $KI, $body, 'Idempotency-Key' => $k);
    is $a->{status}, 201, 'install with an Idempotency-Key' or diag diag_resp($a);
    ok !$a->{headers}{'idempotent-replayed'}, 'the first answer is not a replay';
    my $b = req(POST => '/v1/extensions', $KI, $body, 'Idempotency-Key' => $k);
    is $b->{status}, 201, 'the same install again: 201' or diag diag_resp($b);
    is $b->{body}, $a->{body}, 'byte for byte the first answer (the same api_key, not a second install)';
    is $b->{headers}{'idempotent-replayed'}, 'true', 'Idempotent-Replayed: true';
    is one("SELECT count(*) FROM extensions WHERE facility_id = '$fi'"), 1, 'one extension';
    is one("SELECT count(*) FROM extension_keys WHERE facility_id = '$fi'"), 1, 'one key';
    check_err(req(POST => '/v1/extensions', $KI, '{"manifest_url":"file:iso.toml","config":{"note":"other"}}',
                  'Idempotency-Key' => $k), 409, 'idempotency_conflict', 'Idempotency-Key', 'the key with another body');
    my $c = req(POST => '/v1/extensions', $KI, $body, 'Idempotency-Key' => idem());
    check_err($c, 409, 'conflict', undef, 'the same install under a new key: the name is taken');

    ok wait_status($fi, 'iso-one', 'running'), 'running';
    $k = idem();
    my $r1 = req(POST => '/v1/extensions/iso-one/reload', $KI, undef, 'Idempotency-Key' => $k);
    is $r1->{status}, 200, 'reload' or diag diag_resp($r1);
    my $r2 = req(POST => '/v1/extensions/iso-one/reload', $KI, undef, 'Idempotency-Key' => $k);
    ok $r2->{status} == 200 && $r2->{body} eq $r1->{body} && ($r2->{headers}{'idempotent-replayed'} // '') eq 'true',
       'reload replayed: the first answer, not 409 invalid_state' or diag diag_resp($r2);
    check_err(req(POST => '/v1/extensions/iso-one/reload', $KI, undef, 'Idempotency-Key' => idem()), 409, 'invalid_state',
              undef, 'reload under a new key while reloading: 409 invalid_state');

    $k = idem();
    my $o1 = req(POST => '/v1/extensions/iso-one/keys/rotate', $KI, undef, 'Idempotency-Key' => $k);
    is $o1->{status}, 200, 'rotate' or diag diag_resp($o1);
    my $o2 = req(POST => '/v1/extensions/iso-one/keys/rotate', $KI, undef, 'Idempotency-Key' => $k);
    ok $o2->{status} == 200 && $o2->{body} eq $o1->{body} && ($o2->{headers}{'idempotent-replayed'} // '') eq 'true',
       'rotate replayed: the same new key' or diag diag_resp($o2);
    is one("SELECT count(*) FROM extension_keys WHERE facility_id = '$fi'"), 2, 'one rotation: two keys';

    # keys are scoped to the credential: the same Idempotency-Key from another admin credential is a new request
    my $KI2 = admin_key($fi);
    my $o3 = req(POST => '/v1/extensions/iso-one/keys/rotate', $KI2, undef, 'Idempotency-Key' => $k);
    ok $o3->{status} == 200 && !$o3->{headers}{'idempotent-replayed'} && $o3->{body} ne $o1->{body},
       'the same Idempotency-Key from another credential: a new rotation' or diag diag_resp($o3);
}

# --- rate-limit headers and the response basics ----------------------------------------------
{
    my $KR = admin_key($fa, privs => ['admin:extensions:view']);
    my $x = req(GET => '/v1/extensions', $KR);
    is $x->{headers}{'ratelimit-policy'} // '', '"default";q=120;w=60', 'RateLimit-Policy';
    like $x->{headers}{ratelimit} // '', qr/^"default";r=\d+;t=\d+$/, 'RateLimit';
    like $x->{headers}{'x-request-id'} // '', qr/^[0-9a-f]{32}$/, 'X-Request-Id';
    my $y = post('/v1/extensions/nope/reload', $K{manage});
    like $y->{headers}{ratelimit} // '', qr/^"default";r=\d+;t=\d+$/, 'RateLimit on a 404 too';
    my $s = req(GET => '/v1/extensions', $KR, undef, 'Service-Version' => '2024-06-01');
    is $s->{headers}{'service-version'}, '2024-06-01', 'Service-Version echoed';
    check_err(req(GET => '/v1/extensions', $KR, undef, 'Service-Version' => '2024-13-01'), 400, 'invalid_request',
              undef, 'a bad Service-Version');
    # the bucket: 120 in a burst, then 429 with Retry-After
    my @r = parallel_requests(map { req_spec(GET => '/v1/extensions?limit=1', $KR) } 1 .. 125);
    my $ok = grep { $_->{status} == 200 } @r;
    my @lim = grep { $_->{status} == 429 } @r;
    ok $ok <= 120 && $ok >= 110, "a burst of 125: about 120 accepted ($ok)";
    ok @lim >= 5, 'the rest refused with 429 (' . scalar(@lim) . ')';
    check_err($lim[0] // {status => 0}, 429, 'rate_limited', undef, 'the refusal');
    like(($lim[0] // {headers => {}})->{headers}{'retry-after'} // '', qr/^[1-9]\d*$/, 'Retry-After');
    is req(GET => '/v1/extensions', $K{view})->{status}, 200, 'another credential of the facility is not limited';
}

# --- no manifests folder, no registries: file: and https: refused -----------------------------
{
    restart_nginx(http_config => '');
    my $fn = facility();
    my $KN = admin_key($fn);
    check_err(install($KN, 'file:iso.toml'), 422, 'validation_error', 'manifest_url',
              'file: without cms_extensions_manifests');
    check_err(install($KN, 'https://127.0.0.1:1/x.toml'), 422, 'validation_error', 'manifest_url',
              'https: without cms_extensions_registry');
    is one("SELECT count(*) FROM extensions WHERE facility_id = '$fn'"), 0, 'nothing installed';
    my $t = nginx_test(http_config => 'cms_extensions_registry "bad host/";');
    ok $t->{rc} != 0 && $t->{out} =~ /cms_extensions_registry/, 'nginx -t: a bad registry host is refused'
        or diag $t->{out};
    $t = nginx_test(http_config => 'cms_extensions_reload_grace soon;');
    ok $t->{rc} != 0, 'nginx -t: a bad cms_extensions_reload_grace is refused' or diag $t->{out};
    $t = nginx_test(http_config => "cms_extensions_manifests $MDIR; cms_extensions_registry 127.0.0.1:8443 registry.example.com;\n"
                                   . "cms_extensions_reload_grace 2s; cms_extensions_rotation_grace 1h; cms_ui_token_ttl 5m;");
    is $t->{rc}, 0, 'nginx -t: the extension directives' or diag $t->{out};
}

done_testing();
