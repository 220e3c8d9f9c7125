# The public surface's rate limit and shared caches (docs/public-surface.md): the bucket
# is the site's and the client address's (a burst of exactly 240 on the test clock), so
# one address that drains its own leaves every other address of the site its own; behind
# a CDN the address is the one nginx's realip module takes from a trusted proxy (IPv6 by
# /64), and a forged X-Forwarded-For from anyone else changes nothing; the site's ceiling
# (cms_public_site_limit) counts the reads that reach PostgreSQL, so a flood from many
# addresses meets it while the public cache's bodies and 304s keep answering; a
# header-keyed answer is private with Vary: Authorization, a ?key= one public, and
# through Varnish (conf/varnish.vcl) site A's header-keyed answer never reaches site B, a
# rotated key or no key, while ?key= answers are kept.
use strict;
use warnings;
use Cms::Test;
use Cms::Varnish;
use Time::HiRes ();
use Cms::Fixtures qw(req diag_resp check_err signup signup_defaults workspace key);

signup_defaults(email_prefix => 'plim');

# 127.0.0.9 is the CDN: the only address whose X-Forwarded-For names the client
start_nginx(public_cache => 'cms_public_cache zone=cms_public:4m valid=1h;',
            http_config => "cms_public_site_limit 10r/s burst=30;\n"
                         . "set_real_ip_from 127.0.0.9;\nreal_ip_header X-Forwarded-For;");

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Limits');
my $K = key($ot, $wid, 'pages', qw(pages:read pages:write));

sub mksite {
    my ($name, $token, $ws) = @_;
    my $r = req(POST => "/v1/workspaces/" . ($ws // $wid) . "/sites", $token // $ot, { name => $name });
    die 'site: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{site};
}
my $site = mksite('Site A');
my $pk = $site->{publishable_key};
my $r = req(POST => "/v1/workspaces/$wid/sites/$site->{id}/pages", $ot, { slug => '/', title => 'Home' });
die 'page: ' . diag_resp($r) unless $r->{status} == 201;
my $page = $r->{json}{page}{id};
$r = req(PUT => "/v1/api/pages/$page/sections", $K, { section_key => 'hero', data => { title => 'Hello' } });
die 'save: ' . diag_resp($r) unless $r->{status} == 200;
$r = req(POST => "/v1/api/pages/$page/sections/publish", $K, {});
die 'publish: ' . diag_resp($r) unless $r->{status} == 200;

my $SECTIONS = "/v1/public/pages/$page/sections?key=$pk";
my $SITE = "/v1/public/site?key=$pk";
# an hour ahead of the real clock, and a fresh hour for each part
my $clock = int(Time::HiRes::time() * 1000) + 3_600_000;
sub get_from {
    my ($from, $path, @h) = @_;
    return http(GET => $path, ['X-Cms-Test-Clock' => $clock, @h], undef, from => $from);
}
# requests until the first 429 (at most $max): how many were 200, and the 429
sub drain {
    my ($from, $path, $max, @h) = @_;
    my ($ok, $refused) = (0, undef);
    for (1 .. $max) {
        my $x = get_from($from, $path, @h);
        if ($x->{status} == 200) { $ok++ } else { $refused = $x; last }
    }
    return ($ok, $refused);
}

# --- one address drains its own bucket; the others keep theirs -------------------------------

{
    is get_from('127.0.0.1', $SECTIONS)->{status}, 200, 'a section read (now kept by the public cache)';
    my ($ok, $refused) = drain('127.0.0.2', $SECTIONS, 300);
    is $ok, 240, '127.0.0.2: a burst of exactly 240';
    check_err($refused, 429, 'rate_limited', '127.0.0.2: the 241st');
    ok(($refused->{headers}{'retry-after'} // 0) >= 1, '429: Retry-After');
    is get_from('127.0.0.2', $SECTIONS)->{status}, 429, '127.0.0.2: still refused';
    my $other = get_from('127.0.0.3', $SECTIONS);
    is $other->{status}, 200, '127.0.0.3 at the same moment: 200, its own bucket' or diag diag_resp($other);
    like $other->{headers}{ratelimit} // '', qr/^"default";r=239;/, '127.0.0.3: its own RateLimit (239 left)';
    is $other->{headers}{'ratelimit-policy'}, '"default";q=240;w=120',
       'RateLimit-Policy names the burst (240, full again after 120 s), not 120 a minute';
    is get_from('127.0.0.1', $SITE)->{status}, 200, '127.0.0.1 too, on another route';
    # a forged X-Forwarded-For from an address that is not the CDN changes nothing
    is get_from('127.0.0.2', $SECTIONS, 'X-Forwarded-For' => '198.51.100.7')->{status}, 429,
        'X-Forwarded-For from an untrusted address: still its own (drained) bucket';
}

# --- behind the CDN: each forwarded client its own bucket; IPv6 by /64 -------------------------

{
    my $cdn = sub { ('X-Forwarded-For' => $_[0]) };
    is get_from('127.0.0.9', $SECTIONS, $cdn->('198.51.100.7'))->{status}, 200,
        'through the CDN, client 198.51.100.7: 200';
    my ($ok, $refused) = drain('127.0.0.9', $SECTIONS, 300, $cdn->('2001:db8:1:2::1'));
    is $ok, 240, 'through the CDN, client 2001:db8:1:2::1: a burst of exactly 240';
    check_err($refused, 429, 'rate_limited', 'through the CDN, 2001:db8:1:2::1: the 241st');
    is get_from('127.0.0.9', $SECTIONS, $cdn->('2001:db8:1:2:ffff::9'))->{status}, 429,
        'the same /64 (2001:db8:1:2:ffff::9): the same bucket';
    is get_from('127.0.0.9', $SECTIONS, $cdn->('2001:db8:1:3::1'))->{status}, 200,
        'another /64 (2001:db8:1:3::1): its own';
    is get_from('127.0.0.9', $SECTIONS, $cdn->('198.51.100.8'))->{status}, 200,
        'another IPv4 client behind the same CDN: 200';
}

# --- the site's ceiling: reads that reach PostgreSQL, from any address -------------------------

{
    $clock += 3_600_000;
    my $etag = get_from('127.0.0.1', $SECTIONS)->{headers}{etag};   # kept: costs the ceiling nothing
    my ($ok, $refused) = (0, undef);
    for my $n (1 .. 40) {
        # a different address each time: no client's own bucket is anywhere near empty
        my $x = get_from("127.0.1.$n", $SITE);
        if ($x->{status} == 200) { $ok++ } else { $refused = $x; last }
    }
    is $ok, 30, 'a flood of site reads from 40 addresses: exactly the ceiling\'s burst of 30 answered';
    check_err($refused, 429, 'rate_limited', 'then the site\'s ceiling');
    ok(($refused->{headers}{'retry-after'} // 0) >= 1, 'the ceiling\'s 429: Retry-After');
    like $refused->{headers}{ratelimit} // '', qr/^"default";r=239;/,
        'the client\'s own RateLimit headers (it sent one request)';
    is get_from('127.0.2.1', "/v1/public/pages?key=$pk")->{status}, 429, 'every route that asks PostgreSQL';
    is get_from('127.0.2.2', "$SECTIONS&locale=fr")->{status}, 429, 'a section read not kept yet';
    my $kept = get_from('127.0.2.3', $SECTIONS);
    is $kept->{status}, 200, 'a section read the public cache keeps: 200 at the ceiling' or diag diag_resp($kept);
    is $kept->{headers}{etag}, $etag, '... the kept version';
    my $nm = get_from('127.0.2.4', $SECTIONS, 'If-None-Match' => $etag);
    is $nm->{status}, 304, 'a revalidation: 304 at the ceiling';
    is get_from('127.0.2.5', $SITE)->{status}, 429, 'the site read still refused';
    $clock += 100;
    is get_from('127.0.2.6', $SITE)->{status}, 200, 'a token back 100 ms later (10r/s)';
    is get_from('127.0.2.7', $SITE)->{status}, 429, 'and only one';
}

# --- the key in a header: private; in the URL: public ------------------------------------------

my $owner_b = signup();
my $site_b = mksite('Site B', $owner_b->{token}, workspace($owner_b->{token}, 'Limits B'));
my $pk_b = $site_b->{publishable_key};
sub vary { join ', ', map { $_->[1] } grep { lc $_->[0] eq 'vary' } @{$_[0]{header_list} // []} }
{
    $clock += 3_600_000;
    my $h = get_from('127.0.0.1', '/v1/public/site', Authorization => "Bearer $pk");
    is $h->{status}, 200, 'the key as Bearer: 200' or diag diag_resp($h);
    is $h->{headers}{'cache-control'}, 'private, max-age=60, stale-while-revalidate=600',
        'Bearer: Cache-Control private, the configured ages kept';
    like vary($h), qr/\bAuthorization\b/, 'Bearer: Vary names Authorization';
    like vary($h), qr/\bOrigin\b/, '... and Origin';
    my $u = get_from('127.0.0.1', $SITE);
    is $u->{headers}{'cache-control'}, 'public, max-age=60, stale-while-revalidate=600', '?key=: public';
    unlike vary($u), qr/Authorization/, '?key=: Vary without Authorization';
    my $nm = get_from('127.0.0.1', '/v1/public/site', Authorization => "Bearer $pk", 'If-None-Match' => $h->{headers}{etag});
    is $nm->{status}, 304, 'Bearer: a revalidation is 304';
}

# --- through a shared cache: Varnish with conf/varnish.vcl --------------------------------------

{
    open my $fh, '<', "$ENV{TEST_CMS_ROOT}/conf/varnish.vcl" or die "conf/varnish.vcl: $!";
    my $vcl = do { local $/; <$fh> };
    $vcl =~ s/\.port = "8080";/.port = "%%BACKEND_PORT%%";/ or die 'no backend port in conf/varnish.vcl';
    my $v = Cms::Varnish->start(vcl => $vcl);
    $clock += 3_600_000;
    my $via = sub { my ($path, @h) = @_; http(GET => $path, ['X-Cms-Test-Clock' => $clock, @h], undef, port => $v->port) };
    my $bearer = sub { (Authorization => "Bearer $_[0]") };

    my $a1 = $via->('/v1/public/site', $bearer->($pk));
    is(($a1->{json}{site} // {})->{id}, $site->{id}, 'Varnish: site A by Bearer') or diag diag_resp($a1);
    my $a2 = $via->('/v1/public/site', $bearer->($pk));
    is(($a2->{json}{site} // {})->{id}, $site->{id}, 'Varnish: site A again');
    ok !Cms::Varnish::hit($a2), '... not from the cache (private)';
    my $b1 = $via->('/v1/public/site', $bearer->($pk_b));
    is(($b1->{json}{site} // {})->{id}, $site_b->{id}, 'Varnish: site B by Bearer gets site B, not A')
        or diag diag_resp($b1);
    check_err($via->('/v1/public/site'), 401, 'missing_token', 'Varnish: no key: 401, not A\'s answer');
    my $rot = req(POST => "/v1/workspaces/$wid/sites/$site->{id}/publishable-key/rotate", $ot);
    is $rot->{status}, 200, 'site A\'s key rotated' or diag diag_resp($rot);
    check_err($via->('/v1/public/site', $bearer->($pk)), 401, 'invalid_api_key',
              'Varnish: A\'s rotated key: 401, not the answer it had');
    my $pk2 = $rot->{json}{site}{publishable_key};

    # ?key= answers are the CDN's to keep
    my $k1 = $via->("/v1/public/site?key=$pk2");
    is(($k1->{json}{site} // {})->{id}, $site->{id}, 'Varnish: ?key= read');
    my $k2 = $via->("/v1/public/site?key=$pk2");
    ok Cms::Varnish::hit($k2), '... the second from the cache' or diag $k2->{headers}{'x-varnish'};
    is $k2->{body}, $k1->{body}, '... the same bytes';
    my $kb = $via->("/v1/public/site?key=$pk_b");
    is(($kb->{json}{site} // {})->{id}, $site_b->{id}, 'Varnish: site B\'s ?key= URL is its own');
    $v->stop;
}

done_testing();
