# Podcasts: shows (studio CRUD, editors and up; read by keys with podcasts:read and by
# every member), episodes (POST into an existing show of the workspace, 404 otherwise;
# title_required, url_required, invalid_url, invalid_status, wrong types; GET filtered by
# show_id and status, paging edges), and each show's public feed
# GET /v1/feeds/podcasts/{id}.xml: parsed with XML::LibXML as RSS 2.0 with the iTunes
# namespace (the required channel and item elements, published episodes whose time has
# come only, newest first), titles with <, & and ]]> escaped and read back exactly, a
# strong ETag answered with 304 on If-None-Match and changed by a new episode, HEAD, and
# 404 for another name or an unknown show.
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(check_url_field req diag_resp check_err one signup signup_defaults workspace key $UUID $TS);
use Encode qw(decode_utf8);
use XML::LibXML;

signup_defaults(email_prefix => 'pod');

my $NOBODY = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';
my $ITUNES = 'http://www.itunes.com/dtds/podcast-1.0.dtd';
my @SHOW = sort qw(id title slug description image_url link author language category explicit feed_path
                   created_at updated_at);
my @EPISODE = sort qw(id show_id title description audio_url audio_type audio_size_bytes duration_seconds
                      episode_number status published_at created_at updated_at);

start_nginx();

my $owner = signup();
my $tok = $owner->{token};
my $wid = workspace($tok, 'Podcasts');
my $K = key($tok, $wid, 'rw', qw(podcasts:read podcasts:write));
my $KR = key($tok, $wid, 'ro', 'podcasts:read');
my $KW = key($tok, $wid, 'wo', 'podcasts:write');
my $KA = key($tok, $wid, 'articles', qw(articles:read articles:write));
my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other', qw(podcasts:read podcasts:write));

my $SHOWS = "/v1/workspaces/$wid/podcast-shows";
sub show {
    my ($f, $t, $w) = @_;
    my $r = req(POST => "/v1/workspaces/" . ($w // $wid) . "/podcast-shows", $t // $tok, $f);
    die 'show: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{podcast_show};
}
my $n = 0;
sub episode {
    my ($show, %f) = @_;
    my $r = req(POST => '/v1/api/podcast-episodes', delete $f{key} // $K,
                { show_id => $show, title => 'Episode ' . ++$n, audio_url => "https://cdn.example.com/e$n.mp3", %f });
    die 'episode: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{podcast_episode};
}

# --- shows -----------------------------------------------------------------------------

my $s;
{
    my $r = req(POST => $SHOWS, $tok, { title => 'The Show' });
    is $r->{status}, 201, 'create a show: 201' or diag diag_resp($r);
    $s = $r->{json}{podcast_show} // {};
    is_deeply [sort keys %$s], \@SHOW, 'every show field';
    is_deeply { map { $_ => $s->{$_} } qw(title slug description image_url link author language category explicit) },
        { title => 'The Show', slug => 'the-show', description => '', image_url => '', link => '', author => '',
          language => 'en', category => '', explicit => JSON::PP::false }, 'defaults; slug derived from the title';
    is $s->{feed_path}, "/v1/feeds/podcasts/$s->{id}.xml", 'feed_path';
    check_err(req(POST => $SHOWS, $tok, { title => 'Another', slug => 'the-show' }), 409, 'slug_taken', 'a taken slug');
    is show({ title => 'The Show' }, $other->{token}, $wid2)->{slug}, 'the-show', 'the same slug in another workspace';
    # (in the other workspace: this one's list is counted below)
    my @again = map { show({ title => 'The Show' }, $other->{token}, $wid2)->{slug} } 1 .. 2;
    is_deeply \@again, ['the-show-2', 'the-show-3'], 'the same title again: the next free derived slug';
    is show({ title => "\x{041d}\x{043e}\x{0432}\x{043e}\x{0441}\x{0442}\x{0438}" }, $other->{token}, $wid2)->{slug},
        "\x{043d}\x{043e}\x{0432}\x{043e}\x{0441}\x{0442}\x{0438}", 'a Cyrillic title keeps its letters, lowercased';
    for my $t ([{}, 'title_required', 'no title'], [{ title => '' }, 'title_required', 'empty title'],
               [{ title => 'x', slug => 'Bad Slug' }, 'invalid_slug', 'bad slug'],
               [{ title => 'x', language => 'english language' }, 'invalid_field_value', 'bad language'],
               [{ title => 'x', explicit => 'yes' }, 'invalid_field_value', 'explicit a string'],
               [{ title => 'x', colour => 'red' }, 'invalid_request', 'unknown field']) {
        my ($b, $code, $name) = @$t;
        check_err(req(POST => $SHOWS, $tok, $b), 400, $code, "create show, $name");
    }
    my $p = req(PATCH => "$SHOWS/$s->{id}", $tok, { description => 'About things', author => 'Ann & Bob',
                                                     category => 'Technology', explicit => JSON::PP::true,
                                                     image_url => 'https://cdn.example.com/cover.jpg',
                                                     link => 'https://show.example.com/' });
    is $p->{status}, 200, 'patch a show: 200' or diag diag_resp($p);
    $s = $p->{json}{podcast_show};
    is_deeply [@$s{qw(description author category slug)}], ['About things', 'Ann & Bob', 'Technology', 'the-show'],
        'patched; the slug stays';
    is_deeply req(GET => "/v1/api/podcast-shows/$s->{id}", $KR)->{json}, { podcast_show => $s }, 'a key reads it';
    is_deeply req(GET => "$SHOWS/$s->{id}", $tok)->{json}, { podcast_show => $s }, 'the studio reads it';
    my $l = req(GET => '/v1/api/podcast-shows', $KR)->{json};
    is_deeply [map { $_->{id} } @{$l->{podcast_shows}}], [$s->{id}], 'the key lists the workspace\'s shows only';
    is $l->{pagination}{total}, 1, 'list: total';
    my $theirs = req(GET => '/v1/api/podcast-shows', $K2)->{json}{podcast_shows}[0]{id};
    for my $id ($theirs, $NOBODY, 'nope') {
        check_err(req(GET => "/v1/api/podcast-shows/$id", $K), 404, 'not_found', "get show $id");
        check_err(req(PATCH => "$SHOWS/$id", $tok, { title => 'Mine' }), 404, 'not_found', "patch show $id");
        check_err(req(DELETE => "$SHOWS/$id", $tok), 404, 'not_found', "delete show $id");
    }
    check_err(req(POST => '/v1/api/podcast-shows', $K, { title => 'By key' }), 405, 'method_not_allowed',
              'a key cannot create a show');
    check_err(req(GET => '/v1/api/podcast-shows', $KA), 403, 'missing_scope', 'shows without podcasts:read');

    my %m;
    for my $role (qw(admin editor author viewer)) {
        $m{$role} = signup();
        psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
    }
    for my $role (qw(admin editor)) {
        my $x = show({ title => "By $role" }, $m{$role}{token});
        is req(DELETE => "$SHOWS/$x->{id}", $m{$role}{token})->{status}, 204, "studio $role: creates and deletes a show";
    }
    for my $role (qw(author viewer)) {
        check_err(req(POST => $SHOWS, $m{$role}{token}, { title => "By $role" }), 403, 'forbidden',
                  "studio $role: create a show");
        check_err(req(PATCH => "$SHOWS/$s->{id}", $m{$role}{token}, { title => 'No' }), 403, 'forbidden',
                  "studio $role: patch a show");
        is req(GET => "$SHOWS/$s->{id}", $m{$role}{token})->{status}, 200, "studio $role: reads a show";
    }
    check_url_field($tok, podcast_show => $SHOWS, { title => "URL check $_" }, $_) for qw(image_url link);
}

# --- episodes --------------------------------------------------------------------------

{
    my $r = req(POST => '/v1/api/podcast-episodes', $K,
                { show_id => $s->{id}, title => 'First', audio_url => 'https://cdn.example.com/1.mp3' });
    is $r->{status}, 201, 'create an episode: 201' or diag diag_resp($r);
    my $e = $r->{json}{podcast_episode} // {};
    is_deeply [sort keys %$e], \@EPISODE, 'every episode field';
    is_deeply { map { $_ => $e->{$_} } qw(show_id title status published_at audio_type audio_size_bytes episode_number) },
        { show_id => $s->{id}, title => 'First', status => 'draft', published_at => undef, audio_type => 'audio/mpeg',
          audio_size_bytes => 0, episode_number => undef }, 'defaults: a draft';
    my $pub = episode($s->{id}, status => 'published', episode_number => 2, duration_seconds => 1800,
                      audio_size_bytes => 12345678, audio_type => 'audio/x-m4a', description => 'Two');
    like $pub->{published_at} // '', $TS, 'published: published_at set';
    is_deeply [@$pub{qw(episode_number duration_seconds audio_size_bytes audio_type)}],
        [2, 1800, 12345678, 'audio/x-m4a'], 'the optional fields kept';

    my $theirs = req(GET => '/v1/api/podcast-shows', $K2)->{json}{podcast_shows}[0]{id};
    for my $t ([$NOBODY, 'no such show'], [$theirs, 'another workspace\'s show']) {
        check_err(req(POST => '/v1/api/podcast-episodes', $K, { show_id => $t->[0], title => 'x',
                                                                 audio_url => 'https://cdn.example.com/x.mp3' }),
                  404, 'not_found', "episode into $t->[1]");
    }
    my $base = { show_id => $s->{id}, title => 'x', audio_url => 'https://cdn.example.com/x.mp3' };
    for my $t ([{ %$base, show_id => undef }, 'id_required', 'no show'],
               [{ %$base, show_id => 'nope' }, 'invalid_field_value', 'malformed show_id'],
               [{ %$base, title => '' }, 'title_required', 'empty title'],
               [{ show_id => $s->{id}, audio_url => 'https://cdn.example.com/x.mp3' }, 'title_required', 'no title'],
               [{ show_id => $s->{id}, title => 'x' }, 'url_required', 'no audio_url'],
               [{ %$base, audio_url => '' }, 'url_required', 'empty audio_url'],
               (map { [{ %$base, audio_url => $_ }, 'invalid_url', "audio_url '$_'"] }
                    'javascript:alert(1)', '/x.mp3', 'ftp://cdn.example.com/x.mp3', 'https://'),
               [{ %$base, status => 'archived' }, 'invalid_status', 'unknown status'],
               [{ %$base, episode_number => 0 }, 'invalid_field_value', 'episode_number 0'],
               [{ %$base, episode_number => '3' }, 'invalid_field_value', 'episode_number a string'],
               [{ %$base, duration_seconds => -1 }, 'invalid_field_value', 'negative duration'],
               [{ %$base, audio_size_bytes => -1 }, 'invalid_field_value', 'negative size'],
               [{ %$base, audio_type => 'text/html' }, 'invalid_field_value', 'audio_type text/html'],
               [{ %$base, published_at => 'yesterday' }, 'invalid_field_value', 'published_at not RFC 3339'],
               [{ %$base, colour => 'red' }, 'invalid_request', 'unknown field']) {
        my ($b, $code, $name) = @$t;
        check_err(req(POST => '/v1/api/podcast-episodes', $K, $b), 400, $code, "create episode, $name");
    }
    is one("SELECT count(*) FROM podcast_episodes WHERE title = 'x'"), 0, 'no refused episode stored';
    check_err(req(POST => '/v1/api/podcast-episodes', $KR, $base), 403, 'missing_scope', 'episode without podcasts:write');
    check_err(req(GET => '/v1/api/podcast-episodes', $KW), 403, 'missing_scope', 'list without podcasts:read');

    my $s2 = show({ title => 'Second show' });
    my @more = map { episode($s2->{id}) } 1 .. 3;
    my $l = req(GET => "/v1/api/podcast-episodes?show_id=$s2->{id}", $K)->{json};
    is_deeply [map { $_->{id} } @{$l->{podcast_episodes}}], [map { $_->{id} } reverse @more], 'show_id filter, newest first';
    is_deeply $l->{pagination}, { total => 3, limit => 50, offset => 0 }, 'show_id filter: pagination';
    is req(GET => '/v1/api/podcast-episodes', $K)->{json}{pagination}{total}, 5, 'all episodes: 5';
    is req(GET => "/v1/api/podcast-episodes?status=published", $K)->{json}{pagination}{total}, 1, 'status filter';
    is_deeply req(GET => "/v1/api/podcast-episodes?show_id=$theirs", $K)->{json}{podcast_episodes}, [],
        'another workspace\'s show: empty';
    check_err(req(GET => '/v1/api/podcast-episodes?show_id=nope', $K), 400, 'invalid_field_value', 'show_id malformed');
    check_err(req(GET => '/v1/api/podcast-episodes?status=gone', $K), 400, 'invalid_status', 'status unknown');
    my $p = req(GET => "/v1/api/podcast-episodes?show_id=$s2->{id}&limit=1&offset=1", $K)->{json};
    is_deeply [map { $_->{id} } @{$p->{podcast_episodes}}], [$more[1]{id}], 'limit=1&offset=1';
    for my $lim (qw(0 101 -1 abc)) {
        is req(GET => "/v1/api/podcast-episodes?limit=$lim", $K)->{json}{pagination}{limit}, 50, "limit=$lim: 50";
    }
    is req(GET => "/v1/workspaces/$wid/podcast-episodes?show_id=$s2->{id}", $tok)->{json}{pagination}{total}, 3,
        'the studio mirror lists them';
    # the totals are counters kept by the writes (sql/0044), by show and status: a status
    # change and a deletion move them, and each equals what a count of the rows says
    my $totals = sub {
        [map { req(GET => "/v1/api/podcast-episodes$_", $K)->{json}{pagination}{total} }
             '', "?show_id=$s2->{id}", "?show_id=$s2->{id}&status=published", '?status=draft'] };
    my $counted = sub {
        [map { one("SELECT count(*) FROM podcast_episodes WHERE workspace_id = '$wid' $_") }
             '', "AND show_id = '$s2->{id}'", "AND show_id = '$s2->{id}' AND status = 'published'",
             "AND status = 'draft'"] };
    psql("UPDATE podcast_episodes SET status = 'published' WHERE id = '$more[0]{id}'");
    is_deeply $totals->(), $counted->(), 'an episode published: every total as counted';
    psql("DELETE FROM podcast_episodes WHERE id IN ('$more[1]{id}', '$more[2]{id}')");
    is_deeply $totals->(), $counted->(), 'two deleted in one statement: every total as counted';
    is $totals->()[1], 1, 'the show has one left';
}

# --- the feed --------------------------------------------------------------------------

{
    my $fs = show({ title => 'Feed <test> & "more" ]]> end', description => 'A <b>show</b> & ]]> all',
                    author => 'Ann & Bob <ab@example.com>', image_url => 'https://cdn.example.com/c.jpg?a=1&b=2',
                    category => 'Society & Culture', explicit => JSON::PP::true, language => 'fr' });
    my $path = "/v1/feeds/podcasts/$fs->{id}.xml";
    is $fs->{feed_path}, $path, 'the show says where its feed is';

    my $empty = req(GET => $path);
    is $empty->{status}, 200, 'a show without episodes: 200' or diag diag_resp($empty);
    my $doc = eval { XML::LibXML->load_xml(string => $empty->{body}) };
    ok $doc, 'the empty feed parses' or diag $@;

    my $old = episode($fs->{id}, status => 'published', title => 'Old <one> & ]]> done', episode_number => 1,
                      duration_seconds => 61, audio_size_bytes => 1000, published_at => '2020-01-02T03:04:05Z',
                      description => "Line <1>\n& ]]>");
    my $new = episode($fs->{id}, status => 'published', title => 'New', episode_number => 2,
                      published_at => '2021-06-01T00:00:00Z');
    episode($fs->{id}, title => 'A draft');
    episode($fs->{id}, status => 'published', title => 'Later', published_at => '2999-01-01T00:00:00Z');
    episode($s->{id}, status => 'published', title => 'Other show');

    my $r = req(GET => $path);
    is $r->{status}, 200, 'feed: 200 without a credential' or diag diag_resp($r);
    like $r->{headers}{'content-type'} // '', qr{^application/rss\+xml; charset=utf-8$}i, 'feed: RSS content type';
    like $r->{headers}{etag} // '', qr/^"[0-9a-f]{32}"$/, 'feed: a strong ETag';
    like $r->{headers}{'cache-control'} // '', qr/public/, 'feed: cacheable';
    like $r->{headers}{'x-request-id'} // '', qr/^[0-9a-f]{32}$/, 'feed: a request id';
    unlike $r->{body}, qr/CDATA/, 'no CDATA sections';
    unlike $r->{body}, qr/\]\]>/, 'no raw ]]> anywhere';

    $doc = eval { XML::LibXML->load_xml(string => $r->{body}) };
    ok $doc, 'the feed is well-formed XML' or diag $@;
    $doc //= XML::LibXML::Document->new;
    my $xc = XML::LibXML::XPathContext->new($doc);
    $xc->registerNs(itunes => $ITUNES);
    $xc->registerNs(atom => 'http://www.w3.org/2005/Atom');
    my $root = $doc->documentElement;
    is $root && $root->nodeName, 'rss', 'root: rss';
    is $root && $root->getAttribute('version'), '2.0', 'rss version 2.0';
    is $root && $root->lookupNamespaceURI('itunes'), $ITUNES, 'the iTunes namespace';
    is $xc->findvalue('count(/rss/channel)'), 1, 'one channel';
    my $v = sub { $xc->findvalue($_[0]) };
    is $v->('/rss/channel/title'), 'Feed <test> & "more" ]]> end', 'channel title: <, &, ", ]]> read back exactly';
    is $v->('/rss/channel/description'), 'A <b>show</b> & ]]> all', 'channel description (text, not markup)';
    is $xc->findvalue('count(/rss/channel/description/*)'), 0, 'the description holds no elements';
    like $v->('/rss/channel/link'), qr{^http://localhost/v1/feeds/podcasts/$fs->{id}\.xml$}, 'channel link (the feed)';
    is $v->('/rss/channel/language'), 'fr', 'language';
    like $v->('/rss/channel/lastBuildDate'), qr/^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/, 'lastBuildDate (RFC 822)';
    is $v->('/rss/channel/atom:link[@rel="self"]/@href'), $v->('/rss/channel/link'), 'atom:link self';
    is $v->('/rss/channel/itunes:author'), 'Ann & Bob <ab@example.com>', 'itunes:author';
    is $v->('/rss/channel/itunes:image/@href'), 'https://cdn.example.com/c.jpg?a=1&b=2', 'itunes:image href';
    is $v->('/rss/channel/itunes:category/@text'), 'Society & Culture', 'itunes:category';
    is $v->('/rss/channel/itunes:explicit'), 'true', 'itunes:explicit';

    my @items = $xc->findnodes('/rss/channel/item');
    is scalar @items, 2, 'items: the published episodes whose time has come only';
    is_deeply [map { $xc->findvalue('title', $_) } @items], ['New', 'Old <one> & ]]> done'], 'items: newest first';
    my $it = $items[1];
    is $xc->findvalue('description', $it), "Line <1>\n& ]]>", 'item description read back exactly';
    is $xc->findvalue('enclosure/@url', $it), $old->{audio_url}, 'enclosure url';
    is $xc->findvalue('enclosure/@length', $it), 1000, 'enclosure length';
    is $xc->findvalue('enclosure/@type', $it), 'audio/mpeg', 'enclosure type';
    is $xc->findvalue('guid', $it), $old->{id}, 'guid: the episode id';
    is $xc->findvalue('guid/@isPermaLink', $it), 'false', 'guid is not a link';
    is $xc->findvalue('pubDate', $it), 'Thu, 02 Jan 2020 03:04:05 GMT', 'pubDate (RFC 822)';
    is $xc->findvalue('itunes:duration', $it), 61, 'itunes:duration';
    is $xc->findvalue('itunes:episode', $it), 1, 'itunes:episode';
    is $xc->findvalue('count(description)', $items[0]), 0, 'no empty description for an episode without one';
    for my $i (@items) {
        ok $xc->findvalue('title', $i) ne '' && $xc->findvalue('enclosure/@url', $i) ne ''
           && $xc->findvalue('guid', $i) ne '', 'every item: title, enclosure, guid';
    }

    # Conditional GET.
    my $etag = $r->{headers}{etag};
    my $c = http(GET => $path, ['If-None-Match' => $etag]);
    is $c->{status}, 304, 'If-None-Match with the ETag: 304';
    is $c->{body}, '', '304: no body';
    is $c->{headers}{etag}, $etag, '304: the ETag again';
    is http(GET => $path, ['If-None-Match' => '"0000"'])->{status}, 200, 'another ETag: 200';
    is http(GET => $path, ['If-None-Match' => "W/$etag"])->{status}, 304, 'the weak form matches too (RFC 9110)';
    my $h = http(HEAD => $path);
    is $h->{status}, 200, 'HEAD: 200';
    is $h->{body}, '', 'HEAD: no body';
    is $h->{headers}{etag}, $etag, 'HEAD: the same ETag';
    is req(GET => $path)->{body}, $r->{body}, 'the same bytes again';
    episode($fs->{id}, status => 'published', title => 'Newest');
    my $r2 = req(GET => $path);
    isnt $r2->{headers}{etag}, $etag, 'a new episode: a new ETag';
    is http(GET => $path, ['If-None-Match' => $etag])->{status}, 200, 'the old ETag: 200';

    # The site's link when the show has one.
    req(PATCH => "$SHOWS/$fs->{id}", $tok, { link => 'https://show.example.com/?a=1&b=2' });
    my $d2 = XML::LibXML->load_xml(string => req(GET => $path)->{body});
    is $d2->findvalue('/rss/channel/link'), 'https://show.example.com/?a=1&b=2', 'channel link: the show\'s site';

    # Control characters and invalid code points never make the XML ill-formed.
    my $odd = show({ title => "Odd \x{1}\x{1f} title \x{fffe}" });
    episode($odd->{id}, status => 'published', title => "Bell \x{7} and tab\t");
    my $od = eval { XML::LibXML->load_xml(string => req(GET => "/v1/feeds/podcasts/$odd->{id}.xml")->{body}) };
    ok $od, 'control characters: still well-formed' or diag $@;
    is $od && $od->findvalue('/rss/channel/title'), "Odd \x{fffd}\x{fffd} title \x{fffd}", 'replaced by U+FFFD';

    for my $bad ("/v1/feeds/podcasts/$NOBODY.xml", "/v1/feeds/podcasts/$fs->{id}", "/v1/feeds/podcasts/$fs->{id}.rss",
                 '/v1/feeds/podcasts/nope.xml', "/v1/feeds/podcasts/$fs->{id}.xmlx") {
        check_err(req(GET => $bad), 404, 'not_found', "feed $bad");
    }
    check_err(req(POST => $path, undef, {}), 405, 'method_not_allowed', 'POST to a feed');

    # Deleting the show removes its episodes and its feed.
    is req(DELETE => "$SHOWS/$fs->{id}", $tok)->{status}, 204, 'delete the show';
    is one("SELECT count(*) FROM podcast_episodes WHERE show_id = '$fs->{id}'"), 0, 'its episodes went with it';
    check_err(req(GET => $path), 404, 'not_found', 'its feed is gone');
}

done_testing();
