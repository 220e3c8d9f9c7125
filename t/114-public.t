# The publishable-key surface, /v1/public (DESIGN.md, Public surface): the key as ?key= or
# Bearer (missing, malformed, a secret key, an unknown, a rotated and a disabled site's
# key all 401, each answer readable cross-origin and with WWW-Authenticate); the site, its
# pages, a page's published
# sections by id and by path (drafts never appear; another site's page, an unknown path
# 404; a missing path 400; a bad locale 400); read-only (405); CORS: "*" without an
# origin, the site's origin when set, Vary: Origin, the preflight; caching: a strong ETag,
# 304 on If-None-Match, a publish changes the ETag, Cache-Control from
# cms_public_cache_control, Surrogate-Key and Cache-Tag naming the site and the page (by
# id and by path, their 304s too); the
# rate limit per site and client address: a burst of exactly 240 on the test clock, then
# 429 with Retry-After, a rotated key keeping the bucket (t/126: other addresses, the
# site's ceiling, shared caches).
use strict;
use warnings;
use Cms::Test;
use Time::HiRes ();
use JSON::PP ();
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key make_key $UUID);

signup_defaults(email_prefix => 'pub');

start_nginx(http_config => 'cms_public_cache_control "public, max-age=30";');

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Public');
my $K = key($ot, $wid, 'pages', qw(pages:read pages:write));

sub mksite {
    my ($token, $ws, %f) = @_;
    my $r = req(POST => "/v1/workspaces/$ws/sites", $token, { name => 'Site', %f });
    die 'site: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{site};
}
sub mkpage {
    my ($token, $ws, $site, $slug) = @_;
    my $r = req(POST => "/v1/workspaces/$ws/sites/$site/pages", $token, { slug => $slug, title => "Page $slug" });
    die 'page: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{page}{id};
}
my $site = mksite($ot, $wid);
my $pk = $site->{publishable_key};
my $about = mkpage($ot, $wid, $site->{id}, '/about');
my $home = mkpage($ot, $wid, $site->{id}, '/');

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $site2 = mksite($other->{token}, $wid2, origin => 'https://93.184.216.34');
my $theirs = mkpage($other->{token}, $wid2, $site2->{id}, '/theirs');

sub pub { my ($path, @h) = @_; req(GET => $path . ($path =~ /\?/ ? '&' : '?') . "key=$pk", undef, undef, @h) }

# --- the key ------------------------------------------------------------------------------

for my $case (['no key', '/v1/public/site', undef, 'missing_token'],
              ['a malformed key', '/v1/public/site?key=pk_live_nope', undef, 'invalid_api_key'],
              ['a bad checksum', '/v1/public/site?key=' . substr($pk, 0, -1) . (substr($pk, -1) eq 'A' ? 'B' : 'A'),
               undef, 'invalid_api_key'],
              ['a secret key', '/v1/public/site?key=' . $K, undef, 'invalid_api_key'],
              ['a secret key as Bearer', '/v1/public/site', $K, 'invalid_api_key'],
              ['an unknown key', '/v1/public/site?key=' . make_key('pk_live_'), undef, 'invalid_api_key']) {
    my ($name, $path, $cred, $code) = @$case;
    my $r = req(GET => $path, $cred);
    check_err($r, 401, $code, $name);
    is $r->{headers}{'access-control-allow-origin'}, '*', "$name: readable cross-origin";
    is $r->{headers}{'www-authenticate'}, $code eq 'missing_token' ? 'Bearer' : 'Bearer error="invalid_token"',
        "$name: WWW-Authenticate";
}

# --- the site and its pages ------------------------------------------------------------------

my $r = pub('/v1/public/site');
is $r->{status}, 200, 'the site by ?key=' or diag diag_resp($r);
is_deeply $r->{json}, { site => { id => $site->{id}, name => 'Site', mode => 'instrumented', origin => undef } },
    'the site: id, name, mode, origin (no key, no internals)';
is $r->{headers}{'access-control-allow-origin'}, '*', 'no origin: CORS *';
is $r->{headers}{vary}, 'Origin', 'Vary: Origin';
like $r->{headers}{etag} // '', qr/^"[0-9a-f]{32}"$/, 'a strong ETag';
is $r->{headers}{'cache-control'}, 'public, max-age=30', 'Cache-Control from cms_public_cache_control';
is $r->{headers}{'surrogate-key'}, "site-$site->{id}", 'Surrogate-Key names the site';
is $r->{headers}{'cache-tag'}, "site-$site->{id}", 'Cache-Tag too';
like $r->{headers}{ratelimit} // '', qr/^"default";r=\d+;t=\d+$/, 'RateLimit';
is req(GET => '/v1/public/site', $pk)->{json}{site}{id}, $site->{id}, 'the key as Bearer';

my $nm = pub('/v1/public/site', 'If-None-Match' => $r->{headers}{etag});
is $nm->{status}, 304, 'If-None-Match with the ETag: 304';
is $nm->{body} // '', '', '304: no body';
is $nm->{headers}{etag}, $r->{headers}{etag}, '304: the ETag again';
is pub('/v1/public/site', 'If-None-Match' => '"0123"')->{status}, 200, 'another ETag: 200';

$r = pub('/v1/public/pages');
is $r->{status}, 200, 'pages' or diag diag_resp($r);
is_deeply [map { $_->{slug} } @{ $r->{json}{pages} }], ['/about', '/'], 'the site\'s pages in order (position, then creation)';
is_deeply [sort keys %{ $r->{json}{pages}[0] }], [sort qw(id slug title seo_title seo_description og_image position updated_at)],
    'a page: public fields only';

my $ro = req(POST => "/v1/public/site?key=$pk", undef, {}, Origin => 'https://shop.example');
check_err($ro, 405, 'method_not_allowed', 'read-only: POST is 405');
is $ro->{headers}{'access-control-allow-origin'}, '*', 'the 405 is readable cross-origin (not an opaque network error)';
is $ro->{headers}{vary}, 'Origin', '... with Vary: Origin';

# --- sections: published only -------------------------------------------------------------------

my $sec = "/v1/public/pages/$about/sections";
is_deeply pub($sec)->{json}, { sections => [] }, 'nothing published: an empty list';
req(PUT => "/v1/api/pages/$about/sections", $K, { section_key => 'hero', data => { title => 'Draft v1' } });
is_deeply pub($sec)->{json}, { sections => [] }, 'a draft never appears';
my $before = pub($sec);
req(POST => "/v1/api/pages/$about/sections/publish", $K, {});
$r = pub($sec);
is $r->{status}, 200, 'after the publish' or diag diag_resp($r);
is $r->{json}{sections}[0]{data}{title}, 'Draft v1', 'the published section';
is_deeply [sort keys %{ $r->{json}{sections}[0] }], [sort qw(id page_id section_key locale data version published_at)],
    'the published view';
isnt $r->{headers}{etag}, $before->{headers}{etag}, 'a publish changes the ETag';
is pub($sec, 'If-None-Match' => $before->{headers}{etag})->{status}, 200, 'the old ETag: 200 with the new body';
is $r->{headers}{'surrogate-key'}, "site-$site->{id} page-$about", 'Surrogate-Key names the site and the page';
req(PUT => "/v1/api/pages/$about/sections", $K, { section_key => 'hero', data => { title => 'Draft v2' } });
is pub($sec)->{json}{sections}[0]{data}{title}, 'Draft v1', 'a later draft: still the published one';

$r = pub('/v1/public/sections?path=/about');
is $r->{status}, 200, 'by path' or diag diag_resp($r);
is $r->{json}{sections}[0]{data}{title}, 'Draft v1', 'by path: the same sections';
# the page is known once the query answers: a purge of the page reaches this read too
is $r->{headers}{'surrogate-key'}, "site-$site->{id} page-$about", 'by path: Surrogate-Key names the page too';
is $r->{headers}{'cache-tag'}, "site-$site->{id} page-$about", 'by path: Cache-Tag too';
is pub('/v1/public/sections?path=%2F')->{headers}{'surrogate-key'}, "site-$site->{id} page-$home",
    'by path, nothing published: the page named all the same';
{
    # the harness's cms_public_cache keeps the body with its keys: its 304 has them
    my $x = pub('/v1/public/sections?path=/about', 'If-None-Match' => $r->{headers}{etag});
    is $x->{status}, 304, 'by path, revalidated: 304' or diag diag_resp($x);
    is $x->{headers}{'surrogate-key'}, "site-$site->{id} page-$about", 'by path, 304: the keys the body went out with';
    $x = pub($sec, 'If-None-Match' => pub($sec)->{headers}{etag});
    is $x->{status}, 304, 'by id, revalidated: 304';
    is $x->{headers}{'surrogate-key'}, "site-$site->{id} page-$about", 'by id, 304: the page is in the URL';
}
is_deeply pub('/v1/public/sections?path=%2F')->{json}, { sections => [] }, 'the home page, nothing published';
check_err(pub('/v1/public/sections?path=/nowhere'), 404, 'not_found', 'an unknown path');
check_err(pub('/v1/public/sections'), 400, 'invalid_field_value', 'no path');
check_err(pub('/v1/public/sections?path=%ff'), 400, 'invalid_request', 'a path of invalid UTF-8');
check_err(pub("$sec?locale=no%20t"), 400, 'invalid_field_value', 'a malformed locale');
is_deeply pub("$sec?locale=fr")->{json}, { sections => [] }, 'another locale: nothing';
check_err(pub("/v1/public/pages/$theirs/sections"), 404, 'not_found', "another site's page");
check_err(pub('/v1/public/pages/not-a-uuid/sections'), 404, 'not_found', 'a malformed id');
check_err(pub("/v1/public/sections?path=/theirs"), 404, 'not_found', "another site's path");

# --- custom entries: published ones of enabled modules ----------------------------------------------

{
    my $KC = key($ot, $wid, 'custom', qw(custom:read custom:write));
    my $m = req(POST => "/v1/workspaces/$wid/custom-modules", $ot,
                { slug => 'products', name => 'Products',
                  schema => { fields => [{ key => 'title', label => 'Title', type => 'text' }] } });
    is $m->{status}, 201, 'a module' or diag diag_resp($m);
    my %e;
    for my $t (qw(one two three)) {
        $e{$t} = req(POST => '/v1/api/custom/products/entries', $KC, { data => { title => $t } })->{json}{custom_entry}{id};
    }
    $e{draft} = req(POST => '/v1/api/custom/products/entries', $KC,
                    { data => { title => 'draft' }, status => 'draft' })->{json}{custom_entry}{id};
    like $e{draft} // '', $UUID, 'a draft entry';
    $r = pub('/v1/public/custom/products/entries');
    is $r->{status}, 200, 'entries' or diag diag_resp($r);
    is_deeply [map { $_->{data}{title} } @{ $r->{json}{custom_entries} }], [qw(three two one)],
        'published entries only, newest first';
    is_deeply [sort keys %{ $r->{json}{custom_entries}[0] }], [sort qw(id data created_at updated_at)],
        'an entry: public fields only';
    is_deeply $r->{json}{pagination}, { total => 3, limit => 50, offset => 0 }, 'paged: the draft not counted';
    $r = pub('/v1/public/custom/products/entries?limit=2&offset=2');
    is_deeply [map { $_->{data}{title} } @{ $r->{json}{custom_entries} }], ['one'], 'the last page';
    $r = pub("/v1/public/custom/products/entries/$e{two}");
    is $r->{json}{custom_entry}{data}{title}, 'two', 'one entry' or diag diag_resp($r);
    like $r->{headers}{etag} // '', qr/^"[0-9a-f]{32}"$/, 'an entry has its ETag';
    check_err(pub("/v1/public/custom/products/entries/$e{draft}"), 404, 'not_found', 'a draft entry: 404');
    check_err(pub('/v1/public/custom/products/entries/not-a-uuid'), 404, 'not_found', 'a malformed id');
    check_err(pub('/v1/public/custom/nothing/entries'), 404, 'not_found', 'an unknown module');
    req(PATCH => "/v1/workspaces/$wid/custom-modules/$m->{json}{custom_module}{id}", $ot, { enabled => JSON::PP::false });
    check_err(pub('/v1/public/custom/products/entries'), 404, 'not_found', 'a disabled module: 404');
    check_err(pub("/v1/public/custom/products/entries/$e{one}"), 404, 'not_found', "a disabled module's entry: 404");
    my $m2 = req(POST => "/v1/workspaces/$wid2/custom-modules", $other->{token}, { slug => 'theirs', name => 'T' });
    check_err(pub('/v1/public/custom/theirs/entries'), 404, 'not_found', "another workspace's module");
}

# --- CORS ------------------------------------------------------------------------------------

$r = req(GET => '/v1/public/site', $site2->{publishable_key});
is $r->{headers}{'access-control-allow-origin'}, 'https://93.184.216.34', "a site with an origin: only that origin";
$r = req(OPTIONS => "/v1/public/pages/$about/sections", undef, undef,
         Origin => 'https://elsewhere.example', 'Access-Control-Request-Method' => 'GET',
         'Access-Control-Request-Headers' => 'authorization');
is $r->{status}, 204, 'preflight: 204' or diag diag_resp($r);
is $r->{headers}{'access-control-allow-origin'}, '*', 'preflight: any origin may ask';
like $r->{headers}{'access-control-allow-methods'} // '', qr/^GET, HEAD, OPTIONS$/, 'preflight: methods';
like $r->{headers}{'access-control-allow-headers'} // '', qr/Authorization/, 'preflight: Authorization allowed';
is $r->{headers}{'access-control-max-age'}, '600', 'preflight: cached 10 minutes';
is req(OPTIONS => '/v1/api/articles')->{status}, 405, 'OPTIONS elsewhere: 405';

# --- rotation and disabling -----------------------------------------------------------------------

my $rot = req(POST => "/v1/workspaces/$wid/sites/$site->{id}/publishable-key/rotate", $ot);
my $pk2 = $rot->{json}{site}{publishable_key};
check_err(pub('/v1/public/site'), 401, 'invalid_api_key', 'the rotated key stops at once');
is req(GET => '/v1/public/site', $pk2)->{status}, 200, 'the new key works';
$pk = $pk2;
req(PATCH => "/v1/workspaces/$wid/sites/$site->{id}", $ot, { status => 'disabled' });
check_err(pub('/v1/public/site'), 401, 'invalid_api_key', "a disabled site's key");
req(PATCH => "/v1/workspaces/$wid/sites/$site->{id}", $ot, { status => 'active' });
is pub('/v1/public/site')->{status}, 200, 'active again';

# --- the rate limit: 240 at once, then 429 --------------------------------------------------------

{
    # an hour ahead of the real clock the earlier requests were counted on
    my $clock = int(Time::HiRes::time() * 1000) + 3_600_000;
    my ($ok, $first429) = (0, undef);
    for my $n (1 .. 241) {
        my $x = pub('/v1/public/site', 'X-Cms-Test-Clock' => $clock);
        if ($x->{status} == 200) { $ok++ } else { $first429 //= $x; last }
    }
    is $ok, 240, 'a burst of exactly 240';
    check_err($first429, 429, 'rate_limited', 'the 241st: 429');
    ok(($first429->{headers}{'retry-after'} // 0) >= 1, '429: Retry-After');
    is $first429->{headers}{'access-control-allow-origin'}, '*', '429: readable cross-origin';
    is pub('/v1/public/site', 'X-Cms-Test-Clock' => $clock + 500)->{status}, 200, 'a token back after 500 ms';
    my $rot2 = req(POST => "/v1/workspaces/$wid/sites/$site->{id}/publishable-key/rotate", $ot);
    $pk = $rot2->{json}{site}{publishable_key};
    is pub('/v1/public/site', 'X-Cms-Test-Clock' => $clock + 500)->{status}, 429, 'a rotated key keeps the bucket';
}

done_testing();
