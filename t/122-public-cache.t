# The public surface without the database (DESIGN.md, Public surface; docs/api-notes.md,
# "Public surface"): cms_public_cache keeps, per host, the sites publishable keys resolve to (for
# valid=) and the bodies of section reads by site, content version and request line.
# Shown here: a section read's ETag names its version; while PostgreSQL's sites, pages
# and sections tables are locked by another session (any query on them would wait), a
# revalidation is 304 and a read is the kept body, both at once (a read by path keeps the
# Surrogate-Key its first answer had, the page's included; a host that keeps no body
# answers a by-path 304 without the keys rather than with the site's alone); a write on
# the same host is seen at once (a publish, a key rotated, a site disabled, a page
# renamed); a publish on one host is seen by a second host once its valid= (500 ms) has
# passed; the rate limit is one bucket per site across both hosts (exactly 240 in a
# burst on the test clock).
use strict;
use warnings;
use Cms::Test;
use Cms::Hosts qw(:all);
use Time::HiRes qw(time);
use JSON::PP ();
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key hold_in_session
                      release_hold);

signup_defaults(email_prefix => 'pcache');

# a long valid= on this host: nothing but a write makes it ask PostgreSQL again
set_conf_defaults(public_cache => 'cms_public_cache zone=cms_public:4m valid=1h;');
start_nginx();

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Cached');
my $K = key($ot, $wid, 'pages', qw(pages:read pages:write));

my $r = req(POST => "/v1/workspaces/$wid/sites", $ot, { name => 'Site' });
die 'site: ' . diag_resp($r) unless $r->{status} == 201;
my $site = $r->{json}{site};
my $pk = $site->{publishable_key};
$r = req(POST => "/v1/workspaces/$wid/sites/$site->{id}/pages", $ot, { slug => '/about', title => 'About' });
die 'page: ' . diag_resp($r) unless $r->{status} == 201;
my $page = $r->{json}{page}{id};

sub publish {
    my $title = shift;
    my $x = req(PUT => "/v1/api/pages/$page/sections", $K, { section_key => 'hero', data => { title => $title } });
    die 'save: ' . diag_resp($x) unless $x->{status} == 200;
    $x = req(POST => "/v1/api/pages/$page/sections/publish", $K, {});
    die 'publish: ' . diag_resp($x) unless $x->{status} == 200;
}
sub sec_path { my $k = shift // $pk; "/v1/public/pages/$page/sections?key=$k" }
sub title { (($_[0]{json} || {})->{sections} || [])->[0]{data}{title} // '' }
sub version { one("SELECT content_version FROM sites WHERE id = '$site->{id}'") }

publish('One');

# --- the ETag names the version ------------------------------------------------------------------

$r = req(GET => sec_path());
is $r->{status}, 200, 'a section read' or diag diag_resp($r);
is title($r), 'One', 'the published section';
my $v = version();
like $r->{headers}{etag} // '', qr/^"$v-[0-9a-f]{8}"$/, 'the ETag: the site\'s content version, then the request';
my $etag = $r->{headers}{etag};
my $body = $r->{body};
my $again = req(GET => sec_path());
is $again->{headers}{etag}, $etag, 'the same read: the same ETag';
is $again->{body}, $body, 'the same bytes';
isnt req(GET => sec_path() . '&locale=fr')->{headers}{etag}, $etag, 'another request line: another ETag';

# by path, the page is known from the answer: the body is kept with its Surrogate-Key
my $by_path = "/v1/public/sections?path=/about&key=$pk";
my $tags = "site-$site->{id} page-$page";
my $first = req(GET => $by_path);
is $first->{status}, 200, 'a read by path' or diag diag_resp($first);
is $first->{headers}{'surrogate-key'}, $tags, 'by path, first read: Surrogate-Key names the site and the page';
is $first->{headers}{'cache-tag'}, $tags, 'by path, first read: Cache-Tag too';

# --- PostgreSQL's tables locked: 304s and kept bodies still answer at once ---------------------------

{
    my $lock = hold_in_session('LOCK TABLE sites, pages, sections IN ACCESS EXCLUSIVE MODE;');
    ok wait_until(20, sub {
        one("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
            . " WHERE c.relname IN ('sites', 'pages', 'sections') AND l.mode = 'AccessExclusiveLock'"
            . " AND l.granted") == 3 }), 'another session holds the three tables';

    my ($n304, $n200, $slow) = (0, 0, 0);
    for (1 .. 20) {
        my $t = time;
        my $x = req(GET => sec_path(), undef, undef, 'If-None-Match' => $etag);
        $n304++ if $x->{status} == 304 && ($x->{headers}{etag} // '') eq $etag && ($x->{body} // '') eq '';
        my $y = req(GET => sec_path());
        $n200++ if $y->{status} == 200 && $y->{body} eq $body && ($y->{headers}{etag} // '') eq $etag;
        $slow++ if time - $t > 15;   # the lock is held until released, 120 s at most
    }
    is $n304, 20, 'tables locked: 20 revalidations, 20 304s with the ETag and no body';
    is $n200, 20, 'tables locked: 20 reads, the kept body with its ETag';
    is $slow, 0, 'none waited on the lock';

    my $y = req(GET => $by_path);
    ok $y->{status} == 200 && $y->{body} eq $first->{body}, 'tables locked: the kept body by path'
        or diag diag_resp($y);
    is $y->{headers}{'surrogate-key'}, $tags, 'tables locked: the kept body by path has the same Surrogate-Key';
    is $y->{headers}{'cache-tag'}, $tags, 'tables locked: and the same Cache-Tag';
    $y = req(GET => $by_path, undef, undef, 'If-None-Match' => $first->{headers}{etag});
    is $y->{status}, 304, 'tables locked: a revalidation by path, 304' or diag diag_resp($y);
    is $y->{headers}{'surrogate-key'}, $tags, 'tables locked: its 304 has the kept Surrogate-Key';

    ok release_hold($lock), 'the tables released';
}

# --- writes on this host are seen at once -------------------------------------------------------------

publish('Two');
$r = req(GET => sec_path());
is title($r), 'Two', 'a publish: the next read has it';
isnt $r->{headers}{etag}, $etag, 'a publish: a new ETag';
is req(GET => sec_path(), undef, undef, 'If-None-Match' => $etag)->{status}, 200, 'the old ETag: 200';
$etag = $r->{headers}{etag};

my $x = req(PATCH => "/v1/workspaces/$wid/sites/$site->{id}/pages/$page", $ot, { slug => '/about-us' });
is $x->{status}, 200, 'a page renamed' or diag diag_resp($x);
check_err(req(GET => "/v1/public/sections?path=/about&key=$pk"), 404, 'not_found', 'its old path: 404 at once');
is title(req(GET => "/v1/public/sections?path=/about-us&key=$pk")), 'Two', 'its new path';
isnt req(GET => sec_path())->{headers}{etag}, $etag, 'a page renamed: a new ETag';

my $rot = req(POST => "/v1/workspaces/$wid/sites/$site->{id}/publishable-key/rotate", $ot);
is $rot->{status}, 200, 'rotated' or diag diag_resp($rot);
check_err(req(GET => sec_path()), 401, 'invalid_api_key', 'the rotated key: 401 at once');
$pk = $rot->{json}{site}{publishable_key};
is req(GET => sec_path())->{status}, 200, 'the new key';
req(PATCH => "/v1/workspaces/$wid/sites/$site->{id}", $ot, { status => 'disabled' });
check_err(req(GET => sec_path()), 401, 'invalid_api_key', 'a disabled site: 401 at once');
req(PATCH => "/v1/workspaces/$wid/sites/$site->{id}", $ot, { status => 'active' });
is req(GET => sec_path())->{status}, 200, 'active again';

# --- a second host: a publish seen once valid= passes-------------------------------------------------------

start_host_b(edit => sub {
    my $c = shift;
    $c =~ s/cms_public_cache zone=cms_public:4m valid=1h;/cms_public_cache zone=cms_public:4m valid=500ms;/
        or die "no cms_public_cache line in\n$c";
    $c;
});
my $B = host_b_port();
{
    # host B keeps no body of this read: its 304 comes before the query, which alone
    # knows the page, so it leaves out the keys rather than cut the page from a CDN's
    my $path = "/v1/public/sections?path=/about-us&key=$pk";
    my $a = req(GET => $path);
    my $tags_now = "site-$site->{id} page-$page";
    is $a->{headers}{'surrogate-key'}, $tags_now, 'host A, by path: the page\'s keys';
    my $y = at($B, GET => $path, undef, undef, 'If-None-Match' => $a->{headers}{etag});
    is $y->{status}, 304, 'host B, by path, revalidated with host A\'s ETag: 304' or diag diag_resp($y);
    ok !defined $y->{headers}{'surrogate-key'} && !defined $y->{headers}{'cache-tag'},
        'host B, its 304 before the query: no Surrogate-Key or Cache-Tag without the page'
        or diag explain $y->{headers};
    $y = at($B, GET => $path);
    is $y->{headers}{'surrogate-key'}, $tags_now, 'host B, by path, read: the page\'s keys';
    $y = at($B, GET => $path, undef, undef, 'If-None-Match' => $a->{headers}{etag});
    is $y->{status}, 304, 'host B, revalidated again: 304';
    is $y->{headers}{'surrogate-key'}, $tags_now, 'host B, now with the body kept: its 304 has the page\'s keys';
}
my $pb = at($B, GET => sec_path());
is title($pb), 'Two', 'host B reads the section';
is at($B, GET => sec_path())->{headers}{etag}, $pb->{headers}{etag}, 'host B: its kept answer';
publish('Three');
# host B's kept answer lives 500 ms; 20 s only bounds the wait (valid=1h would never end it)
ok wait_until(20, sub { title(at($B, GET => sec_path())) eq 'Three' }), 'host B sees the publish once valid= passes';

# --- the rate limit: one bucket across both hosts ---------------------------------------------------------

{
    my $clock = int(time() * 1000) + 3_600_000;
    my ($ok, $first429) = (0, undef);
    for my $n (1 .. 241) {
        my $y = at($n % 2 ? $B : port(), GET => sec_path(), undef, undef, 'X-Cms-Test-Clock' => $clock);
        if ($y->{status} == 200) { $ok++ } else { $first429 //= $y; last }
    }
    is $ok, 240, 'both hosts together: a burst of exactly 240';
    check_err($first429, 429, 'rate_limited', 'the 241st, on host A: 429');
    check_err(at($B, GET => sec_path(), undef, undef, 'X-Cms-Test-Clock' => $clock), 429, 'rate_limited',
              'and on host B');
}

stop_host_b();
done_testing();
