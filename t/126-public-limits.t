# The public surface's rate limit and shared caches (docs/public-surface.md): the bucket
# is the site's and the client address's (a burst of exactly 240 on the test clock), so
# one address that drains its own leaves every other address of the site its own; behind
# a CDN the address is the one nginx's realip module takes from a trusted proxy (IPv6 by
# /64), and a forged X-Forwarded-For from anyone else changes nothing; the site's ceiling
# (cms_public_site_limit) counts the reads that reach PostgreSQL, so a flood from many
# addresses meets it while the public cache's bodies and 304s keep answering; a
# header-keyed answer is private with Vary: Authorization, a ?key= one public, and
# through Varnish (conf/varnish.vcl) site A's header-keyed answer never reaches site B, a
# rotated key or no key, while ?key= answers are kept, and purged by their surrogate
# key (xkey) when the site publishes (cms_cdn_purge, sql/0034_cdn_purges.sql); with
# the cache down, a purge stays queued for another attempt.
use strict;
use warnings;
use Cms::Test;
use Cms::Varnish;
use Time::HiRes ();
use Cms::Fixtures qw(req diag_resp check_err signup signup_defaults workspace key one);

signup_defaults(email_prefix => 'plim');

# cms_cdn_purge: http(s) URLs read by the strict URL parser, at least one
for my $bad ('cms_cdn_purge ftp://127.0.0.1/;', 'cms_cdn_purge http://user@127.0.0.1/;',
             'cms_cdn_purge timeout=5s;', 'cms_cdn_purge http://127.0.0.1:6081/ timeout=x;',
             "cms_cdn_purge http://127.0.0.1/;\ncms_cdn_purge http://127.0.0.2/;") {
    isnt nginx_test(http_config => $bad)->{rc}, 0, "nginx -t refuses '$bad'";
}
like nginx_test(http_config => 'cms_cdn_purge http://user@127.0.0.1/;')->{out}, qr/cms_cdn_purge: .*userinfo/,
     '... saying why';
is nginx_test(http_config => 'cms_cdn_purge http://127.0.0.1:6081/ https://[::1]/purge?x=1 timeout=2s;')->{rc}, 0,
   'nginx -t takes two targets and a timeout';

# 127.0.0.9 is the CDN: the only address whose X-Forwarded-For names the client;
# Varnish will listen on $vport, the target of the purges
my $vport = free_port();
start_nginx(public_cache => 'cms_public_cache zone=cms_public:4m valid=1h;',
            http_config => "cms_public_site_limit 10r/s burst=30;\n"
                         . "set_real_ip_from 127.0.0.9;\nreal_ip_header X-Forwarded-For;\n"
                         . "cms_cdn_purge http://127.0.0.1:$vport/ timeout=5s;\n"
                         . "cms_events_interval 200ms;");

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
my $wid_b = workspace($owner_b->{token}, 'Limits B');
my $site_b = mksite('Site B', $owner_b->{token}, $wid_b);
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
    my $v = Cms::Varnish->start(vcl => $vcl, port => $vport);
    # every purge sent: the ones queued while Varnish was not there yet made due now
    # (their retry delays would run into what follows), then none left
    my $settled = sub {
        psql("UPDATE cdn_purges SET next_at = now() WHERE claimed_until IS NULL");
        wait_until(30, sub { one("SELECT count(*) FROM cdn_purges") == 0 })
            or BAIL_OUT('cache purges are not sent: ' . one("SELECT string_agg(keys || ':' || attempts, ' ') FROM cdn_purges"));
    };
    $settled->();
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
    $settled->();    # the rotation's purge (site A's record changed)

    # ?key= answers are the CDN's to keep
    my $k1 = $via->("/v1/public/site?key=$pk2");
    is(($k1->{json}{site} // {})->{id}, $site->{id}, 'Varnish: ?key= read');
    my $k2 = $via->("/v1/public/site?key=$pk2");
    ok Cms::Varnish::hit($k2), '... the second from the cache' or diag $k2->{headers}{'x-varnish'};
    is $k2->{body}, $k1->{body}, '... the same bytes';
    my $kb = $via->("/v1/public/site?key=$pk_b");
    is(($kb->{json}{site} // {})->{id}, $site_b->{id}, 'Varnish: site B\'s ?key= URL is its own');

    # purged when the site publishes: the next read is a miss (a purge, not the 60 s
    # of max-age: an expired object would be served stale, as a hit, within its grace)
    my $SEC = "/v1/public/pages/$page/sections?key=$pk2";
    my $s1 = $via->($SEC);
    like $s1->{body}, qr/Hello/, 'Varnish: the published section';
    ok Cms::Varnish::hit($via->($SEC)), '... kept';
    $r = req(PUT => "/v1/api/pages/$page/sections", $K, { section_key => 'hero', data => { title => 'Changed' } });
    is $r->{status}, 200, 'the section changed (a draft)' or diag diag_resp($r);
    is one("SELECT count(*) FROM cdn_purges"), 0, 'a draft queues no purge';
    ok Cms::Varnish::hit($via->($SEC)), '... the kept answer stays';
    $r = req(POST => "/v1/api/pages/$page/sections/publish", $K, {});
    is $r->{status}, 200, 'and published' or diag diag_resp($r);
    my $fresh;
    wait_until(30, sub { my $x = $via->($SEC); $fresh = $x if !Cms::Varnish::hit($x); $fresh });
    ok $fresh, 'Varnish: the next read after the publish is a miss: site-<id> purged';
    like(($fresh // {})->{body} // '', qr/Changed/, '... with the published change');
    $settled->();
    ok Cms::Varnish::hit($via->($SEC)), '... then kept again';

    # a custom module's entries: a draft queues nothing, a published one its site's key
    my $tb = $owner_b->{token};
    $r = req(POST => "/v1/workspaces/$wid_b/custom-modules", $tb, { slug => 'notes', name => 'Notes' });
    is $r->{status}, 201, 'site B\'s workspace: a custom module' or diag diag_resp($r);
    my $ents = "/v1/workspaces/$wid_b/custom/notes/entries";
    $r = req(POST => $ents, $tb, { data => {}, status => 'draft' });
    is $r->{status}, 201, 'a draft entry' or diag diag_resp($r);
    my $entry = ($r->{json}{custom_entry} // {})->{id} // '';
    is one("SELECT count(*) FROM cdn_purges"), 0, 'a draft entry queues no purge';
    $r = req(PATCH => "$ents/$entry", $tb, { status => 'published' });
    is $r->{status}, 200, 'the entry published' or diag diag_resp($r);
    is one("SELECT count(*) FROM cdn_purges WHERE keys = 'site-$site_b->{id}'"), 1,
       '... queues a purge of site B, in the same transaction';
    $settled->();

    # the site's own record changing purges too (the publish purged every answer of
    # the site: they all carry site-<id>)
    $via->("/v1/public/site?key=$pk2");
    ok Cms::Varnish::hit($via->("/v1/public/site?key=$pk2")), 'the site read: kept';
    $r = req(PATCH => "/v1/workspaces/$wid/sites/$site->{id}", $ot, { name => 'Site A2' });
    is $r->{status}, 200, 'the site renamed' or diag diag_resp($r);
    my $renamed;
    wait_until(30, sub { my $x = $via->("/v1/public/site?key=$pk2");
                         $renamed = $x if !Cms::Varnish::hit($x); $renamed });
    is((($renamed // {})->{json}{site} // {})->{name}, 'Site A2', 'Varnish: the renamed site, purged');
    $settled->();
    is one("SELECT count(*) FROM cdn_purges"), 0, 'every purge sent is deleted';

    # the cache down: the purge that found no one waits for another attempt
    $v->stop;
    $r = req(PATCH => "/v1/workspaces/$wid/sites/$site->{id}", $ot, { name => 'Site A3' });
    is $r->{status}, 200, 'the site renamed again, Varnish stopped' or diag diag_resp($r);
    my $row;
    wait_until(30, sub { $row = Cms::Test::psql("SELECT attempts,"
                                                 . " next_at >= created_at + interval '2 seconds'"
                                                 . " FROM cdn_purges"
                                                 . " WHERE keys = 'site-$site->{id}'")->[0];
                         $row && $row->[0] >= 1 });
    ok((($row // [])->[0] // 0) >= 1, 'the failed purge is queued again, its attempts counted')
        or diag explain $row;
    is(($row // [])->[1], 't', '... due two seconds or more after it was queued');
}

done_testing();
