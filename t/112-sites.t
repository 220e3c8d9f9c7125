# Sites and pages (issue 14, studio): /v1/workspaces/{id}/sites[/{siteId}[/pages...]].
#
# Attacks: one site per workspace (also two concurrent creates: one 201, one 409
# workspace_site_limit); the origin checked before anything is written, through a test
# DNS server on loopback and nginx's resolver: http, a path, userinfo, zone ids, octal,
# hex and dword literals, every refused IPv4 and IPv6 range at its edges, the mapped,
# NAT64, 6to4 and Teredo forms, names resolving to a private address or to a public and a
# private one, names with no address, all refused with invalid_url; public addresses and
# names accepted and stored normalized; the publishable key: pk_live_ with a valid
# checksum, shown in every site answer, never stored (only its keyed hash, and no column
# holds the key), a new one on rotate (the old hash gone at once); roles (viewers read,
# authors edit, editors create and rotate), outsiders and no session refused; another
# workspace's site and pages are 404; bad JSON, wrong types, unknown fields; pages:
# slugs, 409 slug_taken, paging edges, SEO fields set and cleared.
use strict;
use warnings;
use Cms::Test;
use Cms::Dns;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace pepper checksum_ok $UUID $TS);
use Digest::SHA ();

signup_defaults(email_prefix => 'sites');

my $dns = Cms::Dns->start(records => {
    'pub.test'     => ['93.184.216.34'],
    'www.pub.test' => ['93.184.216.34', '2606:2800:220:1::1'],
    'v6.test'      => ['2606:2800:220:1::1'],
    'private.test' => ['10.0.0.5'],
    'mixed.test'   => ['93.184.216.34', '10.1.2.3'],
    'mixed6.test'  => ['93.184.216.34', 'fd00::1'],
    'loop.test'    => ['127.0.0.1'],
    'meta.test'    => ['169.254.169.254'],
    'cgnat.test'   => ['100.64.0.1'],
    'mapped.test'  => ['::ffff:10.0.0.1'],
    'empty.test'   => [],
});
start_nginx(http_config => 'resolver 127.0.0.1:' . $dns->port . ' valid=1s; resolver_timeout 3s;');

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Sites');
my $base = "/v1/workspaces/$wid/sites";

my %m;
for my $role (qw(viewer author editor admin)) {
    $m{$role} = signup();
    Cms::Test::psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
}
my $outsider = signup();
my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');

my $PK = qr/^pk_live_[0-9A-Za-z]{49}$/;

sub key_hash { Digest::SHA::hmac_sha256_hex($_[0], pepper()) }
sub stored_hash { one("SELECT encode(key_hash, 'hex') FROM sites WHERE id = '$_[0]'") }

# --- create ----------------------------------------------------------------------------

check_err(req(POST => $base, undef, { name => 'x' }), 401, 'missing_token', 'create without a session');
check_err(req(POST => $base, $outsider->{token}, { name => 'x' }), 403, 'not_workspace_member', 'create as an outsider');
check_err(req(POST => $base, $m{viewer}{token}, { name => 'x' }), 403, 'forbidden', 'create as a viewer');
check_err(req(POST => $base, $m{author}{token}, { name => 'x' }), 403, 'forbidden', 'create as an author');
check_err(req(POST => $base, $ot, '{"name":'), 400, 'invalid_request', 'malformed JSON');
check_err(req(POST => $base, $ot, { name => 5 }), 400, 'invalid_field_value', 'name of the wrong type');
check_err(req(POST => $base, $ot, {}), 400, 'name_required', 'no name');
check_err(req(POST => $base, $ot, { name => '' }), 400, 'name_required', 'an empty name');
check_err(req(POST => $base, $ot, { name => 'x', mode => 'static' }), 400, 'invalid_field_value', 'an unknown mode');
check_err(req(POST => $base, $ot, { name => 'x', origin => 5 }), 400, 'invalid_url', 'origin of the wrong type');
check_err(req(POST => $base, $ot, { name => 'x', colour => 'red' }), 400, 'invalid_request', 'an unknown field');

# the origin matrix: each refused, nothing written
my @refused = (
    'http://pub.test', 'ftp://pub.test', 'pub.test', '//pub.test', 'https://',
    'https://pub.test/about', 'https://pub.test//', 'https://pub.test?x=1', 'https://pub.test#top',
    'https://user@pub.test', 'https://user:pw@pub.test', 'https://pub.test.', 'https://pub test',
    'https://[fe80::1%25eth0]', 'https://[::1]', 'https://[::]', 'https://127.0.0.1', 'https://127.255.255.255',
    'https://0177.0.0.1', 'https://0x7f.0.0.1', 'https://0x7f000001', 'https://2130706433', 'https://127.1',
    'https://0.0.0.0', 'https://0.255.255.255', 'https://10.0.0.0', 'https://10.255.255.255',
    'https://100.64.0.0', 'https://100.127.255.255', 'https://169.254.0.0', 'https://169.254.169.254',
    'https://169.254.255.255', 'https://172.16.0.0', 'https://172.31.255.255', 'https://192.0.0.0',
    'https://192.0.0.255', 'https://192.0.2.0', 'https://192.0.2.255', 'https://192.88.99.1',
    'https://192.168.0.0', 'https://192.168.255.255', 'https://198.18.0.0', 'https://198.19.255.255',
    'https://198.51.100.0', 'https://198.51.100.255', 'https://203.0.113.0', 'https://203.0.113.255',
    'https://224.0.0.0', 'https://239.255.255.255', 'https://240.0.0.0', 'https://255.255.255.255',
    'https://[::ffff:127.0.0.1]', 'https://[::ffff:10.0.0.1]', 'https://[::ffff:169.254.169.254]',
    'https://[::127.0.0.1]', 'https://[64:ff9b::127.0.0.1]', 'https://[64:ff9b::a00:1]',
    'https://[64:ff9b:1::1]', 'https://[2002:7f00:1::]', 'https://[2002:c0a8:101::1]',
    'https://[2001:0:808:808::80ff:fffe]', 'https://[2001:0:7f00:1::f7f7:f7f7]', 'https://[fc00::]',
    'https://[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]', 'https://[fe80::]',
    'https://[febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff]', 'https://[fec0::1]', 'https://[ff02::1]',
    'https://[100::1]', 'https://[2001:db8::1]', 'https://[3fff::1]', 'https://[2001:2::1]',
    'https://private.test', 'https://mixed.test', 'https://mixed6.test', 'https://loop.test',
    'https://meta.test', 'https://cgnat.test', 'https://mapped.test', 'https://empty.test',
    'https://nowhere.test', 'https://xn--80ak6aa92e.test',
);
cmp_ok scalar @refused, '>=', 60, 'at least 60 refused origins';
for my $o (@refused) {
    check_err(req(POST => $base, $ot, { name => 'x', origin => $o }), 400, 'invalid_url', "origin $o");
}
is one("SELECT count(*) FROM sites WHERE workspace_id = '$wid'"), 0, 'no refused origin wrote a site';

my $c = req(POST => $base, $ot, { name => 'Main site', origin => 'HTTPS://WWW.Pub.Test:443/' });
is $c->{status}, 201, 'create: 201' or diag diag_resp($c);
my $site = $c->{json}{site};
like $site->{id} // '', $UUID, 'an id';
is $site->{name}, 'Main site', 'name';
is $site->{mode}, 'instrumented', 'mode defaults to instrumented';
is $site->{status}, 'active', 'a new site is active';
is $site->{origin}, 'https://www.pub.test', 'the origin stored normalized (case, default port, no "/")';
like $site->{publishable_key} // '', $PK, 'a publishable key';
ok checksum_ok($site->{publishable_key}), 'its checksum is valid';
like $site->{publishable_key_created_at} // '', $TS, 'publishable_key_created_at';
like $site->{$_} // '', $TS, $_ for qw(created_at updated_at);
my $sid = $site->{id};
my $key = $site->{publishable_key};
is stored_hash($sid), key_hash($key), 'only the keyed hash is stored';
is one("SELECT count(*) FROM sites s WHERE row_to_json(s)::text LIKE '%' || '$key' || '%'"), 0,
    'no column holds the key';

check_err(req(POST => $base, $ot, { name => 'Second' }), 409, 'workspace_site_limit', 'a second site');

my $g = req(GET => "$base/$sid", $m{viewer}{token});
is $g->{status}, 200, 'a viewer reads the site';
is_deeply $g->{json}{site}, $site, 'the same site, the same key';
my $l = req(GET => $base, $m{viewer}{token});
is $l->{status}, 200, 'list: 200';
is_deeply $l->{json}{sites}, [$site], 'the list: the one site';

# public addresses and names, on other workspaces
for my $o ('https://pub.test', 'https://v6.test', 'https://93.184.216.34', 'https://[2606:2800:220:1::1]:8443',
           'https://pub.test:8443') {
    my $u = signup();
    my $w = workspace($u->{token}, 'Origin');
    my $r = req(POST => "/v1/workspaces/$w/sites", $u->{token}, { name => 'x', origin => $o, mode => 'rendered' });
    is $r->{status}, 201, "origin $o accepted" or diag diag_resp($r);
    is $r->{json}{site}{origin}, $o, "origin $o stored as given (already normal)";
    is $r->{json}{site}{mode}, 'rendered', 'mode rendered';
}

# two concurrent creates in a new workspace: one wins
my $u2 = signup();
my $w3 = workspace($u2->{token}, 'Race');
my @race = parallel_requests(map {
    { method => 'POST', path => "/v1/workspaces/$w3/sites",
      headers => { Authorization => "Bearer $u2->{token}", 'Content-Type' => 'application/json' },
      body => '{"name":"race"}' } } 1 .. 2);
is_deeply [sort map { $_->{status} } @race], [201, 409], 'two concurrent creates: one 201, one 409';
is one("SELECT count(*) FROM sites WHERE workspace_id = '$w3'"), 1, 'one site in the workspace';

# the plan's site limit, decided in cms_plan_refusal
my $u4 = signup();
my $w4 = workspace($u4->{token}, 'Plan');
Cms::Test::psql("INSERT INTO plans (name, storage_limit_bytes, upload_limit_bytes, site_limit)"
                . " VALUES ('nosites', 1000, 1000, 0) ON CONFLICT DO NOTHING;"
                . " UPDATE workspaces SET plan = 'nosites' WHERE id = '$w4'");
check_err(req(POST => "/v1/workspaces/$w4/sites", $u4->{token}, { name => 'x' }), 409, 'site_limit_reached',
          'a plan without sites');

# --- update ------------------------------------------------------------------------------

check_err(req(PATCH => "$base/$sid", $m{viewer}{token}, { name => 'v' }), 403, 'forbidden', 'PATCH as a viewer');
check_err(req(PATCH => "$base/$sid", $outsider->{token}, { name => 'v' }), 403, 'not_workspace_member',
          'PATCH as an outsider');
check_err(req(PATCH => "$base/$sid", $ot, { status => 'gone' }), 400, 'invalid_status', 'an unknown status');
check_err(req(PATCH => "$base/$sid", $ot, { origin => 'https://private.test' }), 400, 'invalid_url',
          'PATCH to a private origin');
is one("SELECT origin FROM sites WHERE id = '$sid'"), 'https://www.pub.test', 'a refused origin changed nothing';
check_err(req(PATCH => "$base/$sid", $ot, { name => [] }), 400, 'invalid_field_value', 'PATCH name of the wrong type');
check_err(req(PATCH => "$base/$sid", $ot, '[1'), 400, 'invalid_request', 'PATCH malformed JSON');

my $p = req(PATCH => "$base/$sid", $m{author}{token}, { name => 'Renamed' });
is $p->{status}, 200, 'an author renames the site' or diag diag_resp($p);
is $p->{json}{site}{name}, 'Renamed', 'renamed';
is $p->{json}{site}{origin}, 'https://www.pub.test', 'origin kept when not given';
is $p->{json}{site}{publishable_key}, $key, 'the key kept';
$p = req(PATCH => "$base/$sid", $ot, { origin => undef, status => 'disabled' });
is $p->{status}, 200, 'PATCH origin null and status disabled';
is $p->{json}{site}{origin}, undef, 'origin cleared';
is $p->{json}{site}{status}, 'disabled', 'disabled';
$p = req(PATCH => "$base/$sid", $ot, { origin => 'https://pub.test', status => 'active' });
is $p->{json}{site}{origin}, 'https://pub.test', 'origin set again';
is $p->{json}{site}{status}, 'active', 'active again';

# --- rotate ------------------------------------------------------------------------------

check_err(req(POST => "$base/$sid/publishable-key/rotate", $m{author}{token}), 403, 'forbidden', 'rotate as an author');
my $ro = req(POST => "$base/$sid/publishable-key/rotate", $m{editor}{token});
is $ro->{status}, 200, 'an editor rotates the key' or diag diag_resp($ro);
my $key2 = $ro->{json}{site}{publishable_key} // '';
like $key2, $PK, 'a new key';
ok checksum_ok($key2), 'its checksum is valid';
isnt $key2, $key, 'not the old one';
is stored_hash($sid), key_hash($key2), 'the new hash stored';
is one("SELECT count(*) FROM sites WHERE key_hash = decode('" . key_hash($key) . "', 'hex')"), 0,
    'the old key resolves to no site';
is req(GET => "$base/$sid", $ot)->{json}{site}{publishable_key}, $key2, 'reads show the new key';

# --- another workspace's site ------------------------------------------------------------

my $b2 = "/v1/workspaces/$wid2/sites";
my $s2 = req(POST => $b2, $other->{token}, { name => 'Theirs' })->{json}{site};
for my $case ([GET => "$base/$s2->{id}"], [PATCH => "$base/$s2->{id}", { name => 'x' }],
              [DELETE => "$base/$s2->{id}"], [POST => "$base/$s2->{id}/publishable-key/rotate"],
              [GET => "$base/$s2->{id}/pages"], [POST => "$base/$s2->{id}/pages", { slug => '/x', title => 'x' }],
              [GET => "$base/not-a-uuid"], [GET => "$base/00000000-0000-4000-8000-000000000000"]) {
    my ($m, $path, $body) = @$case;
    check_err(req($m => $path, $ot, $body), 404, 'not_found', "$m $path (another workspace's or none)");
}
is req(GET => "$b2/$s2->{id}", $other->{token})->{json}{site}{name}, 'Theirs', 'their site untouched';

# --- pages -------------------------------------------------------------------------------

my $pb = "$base/$sid/pages";
check_err(req(POST => $pb, $m{viewer}{token}, { slug => '/v', title => 'v' }), 403, 'forbidden', 'a viewer creates a page');
check_err(req(POST => $pb, $ot, { title => 't' }), 400, 'slug_required', 'a page without a slug');
check_err(req(POST => $pb, $ot, { slug => '/t' }), 400, 'title_required', 'a page without a title');
check_err(req(POST => $pb, $ot, { slug => 5, title => 't' }), 400, 'invalid_field_value', 'a slug of the wrong type');
for my $bad ('about', '/about/', '//', '/a//b', '/a/../b', '/./a', '/a b', '/a?b', '/a#b', '/%2e%2e', "/a\\b", '/é') {
    check_err(req(POST => $pb, $ot, { slug => $bad, title => 't' }), 400, 'invalid_slug', "slug '$bad'");
}
check_err(req(POST => $pb, $ot, { slug => '/x', title => 't', og_image => 'javascript:alert(1)' }), 400,
          'invalid_url', 'og_image not http(s)');

my %pages;
for my $slug ('/', '/about', '/docs/getting-started', '/a.b_c~d') {
    my $r = req(POST => $pb, $m{author}{token}, { slug => $slug, title => "Page $slug", position => length $slug });
    is $r->{status}, 201, "page $slug: 201" or diag diag_resp($r);
    is $r->{json}{page}{slug}, $slug, "page $slug: slug";
    is $r->{json}{page}{site_id}, $sid, "page $slug: site_id";
    $pages{$slug} = $r->{json}{page};
}
my $taken = req(POST => $pb, $ot, { slug => '/about', title => 'again' });
check_err($taken, 409, 'slug_taken', 'a taken slug');
# a page's slug is unique in its site: pages have no language
is(($taken->{json} // {})->{error}, 'The slug is taken on this site', 'a taken slug: the message names the site');

my $pl = req(GET => $pb, $m{viewer}{token});
is $pl->{status}, 200, 'pages: 200';
is_deeply [map { $_->{slug} } @{ $pl->{json}{pages} }], ['/', '/about', '/a.b_c~d', '/docs/getting-started'],
    'pages in position order';
is_deeply $pl->{json}{pagination}, { total => 4, limit => 50, offset => 0 }, 'pages are paged';
for my $case (['?limit=2', 2, 2, 0], ['?limit=2&offset=3', 1, 2, 3], ['?limit=0', 4, 50, 0],
              ['?limit=101', 4, 50, 0], ['?limit=-1', 4, 50, 0], ['?limit=abc', 4, 50, 0],
              ['?offset=9', 0, 50, 9]) {
    my ($q, $n, $limit, $offset) = @$case;
    my $r = req(GET => "$pb$q", $ot);
    is scalar @{ $r->{json}{pages} // [] }, $n, "pages$q: $n";
    is_deeply $r->{json}{pagination}, { total => 4, limit => $limit, offset => $offset }, "pages$q: pagination";
}
check_err(req(GET => "$pb?offset=100001", $ot), 400, 'invalid_field_value', 'an offset past the bound');

my $pid = $pages{'/about'}{id};
my $pg = req(GET => "$pb/$pid", $m{viewer}{token});
is $pg->{status}, 200, 'a viewer reads a page';
is_deeply $pg->{json}{page}, $pages{'/about'}, 'the page';
my $pp = req(PATCH => "$pb/$pid", $m{author}{token},
             { title => 'About us', seo_title => 'About', seo_description => 'Who we are',
               og_image => 'https://pub.test/og.png' });
is $pp->{status}, 200, 'PATCH page' or diag diag_resp($pp);
is $pp->{json}{page}{$_->[0]}, $_->[1], "page $_->[0]"
    for ['title', 'About us'], ['seo_title', 'About'], ['seo_description', 'Who we are'],
        ['og_image', 'https://pub.test/og.png'], ['slug', '/about'];
$pp = req(PATCH => "$pb/$pid", $ot, { seo_title => undef, og_image => undef });
is $pp->{json}{page}{seo_title}, undef, 'seo_title cleared by null';
is $pp->{json}{page}{og_image}, undef, 'og_image cleared by null';
is $pp->{json}{page}{seo_description}, 'Who we are', 'seo_description kept';
check_err(req(PATCH => "$pb/$pid", $ot, { slug => '/' }), 409, 'slug_taken', 'PATCH to a taken slug');
check_err(req(PATCH => "$pb/$pid", $m{viewer}{token}, { title => 'x' }), 403, 'forbidden', 'PATCH page as a viewer');
check_err(req(PATCH => "$pb/$pid", $ot, { title => '' }), 400, 'title_required', 'PATCH an empty title');

# another workspace's pages, and a page of another site under this one's path
my $op = req(POST => "$b2/$s2->{id}/pages", $other->{token}, { slug => '/theirs', title => 'T' })->{json}{page};
for my $path ("$pb/$op->{id}", "$base/$s2->{id}/pages/$op->{id}", "$pb/not-a-uuid") {
    check_err(req(GET => $path, $ot), 404, 'not_found', "GET $path");
    check_err(req(PATCH => $path, $ot, { title => 'x' }), 404, 'not_found', "PATCH $path");
    check_err(req(DELETE => $path, $ot), 404, 'not_found', "DELETE $path");
}

is req(DELETE => "$pb/$pid", $m{author}{token})->{status}, 204, 'DELETE page: 204';
check_err(req(GET => "$pb/$pid", $ot), 404, 'not_found', 'the page is gone');

# the total is the site's counter (sql/0046): a deletion, pages written and removed by SQL
{
    my $total = sub { req(GET => $pb, $ot)->{json}{pagination}{total} };
    is $total->(), 3, 'a page deleted: the total is one fewer';
    psql("INSERT INTO pages (site_id, workspace_id, slug, title)"
         . " SELECT '$sid', '$wid', '/sql-' || g, 'By SQL ' || g FROM generate_series(1, 5) g");
    is $total->(), 8, 'five pages written by SQL: counted';
    psql("DELETE FROM pages WHERE site_id = '$sid' AND slug LIKE '/sql-%' AND slug <> '/sql-1'");
    is $total->(), one("SELECT count(*) FROM pages WHERE site_id = '$sid'"), 'four removed in one statement: the total is the count';
    is one("SELECT n FROM record_counts WHERE kind = 'pages' AND value = '$sid'"), 4, 'the counter row';
}

# --- delete ------------------------------------------------------------------------------

check_err(req(DELETE => "$base/$sid", $m{viewer}{token}), 403, 'forbidden', 'DELETE as a viewer');
is req(DELETE => "$base/$sid", $m{author}{token})->{status}, 204, 'DELETE site: 204';
check_err(req(GET => "$base/$sid", $ot), 404, 'not_found', 'the site is gone');
is one("SELECT count(*) FROM pages WHERE site_id = '$sid'"), 0, 'its pages with it';
my $again = req(POST => $base, $ot, { name => 'New' });
is $again->{status}, 201, 'a new site once the old one is deleted';

done_testing();
