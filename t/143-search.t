# Search, ?q= (docs/search.md): the article list (secret key, and the studio's with a
# session), videos, podcast episodes, custom entries (with a filter; a sort refused) and
# the public entry list (published only). Credentials and scopes still come first; each
# language's stemming (an English plural, a German compound's plural, a French word
# without its accents); title above body, the newest first among equals; phrases, "or"
# and -exclusions; HTML stripped before indexing; highlights escaped with <mark> around
# the matches; the trigram fallback for near spellings ("fuzzy": true); hostile queries
# (unbalanced quotes, 5,000 characters, operators only, invalid UTF-8, NUL) never a 500;
# drafts never on the public surface; another workspace's content never found; the
# status filter and paging combined; rows written before the index filled in batches.
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key);
use Encode ();

signup_defaults(email_prefix => 'search');

start_nginx();

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Search');
my $K = key($ot, $wid, 'all', qw(articles:read articles:write videos:read videos:write podcasts:read
                                   podcasts:write custom:read custom:write));
my $KV = key($ot, $wid, 'videos', qw(videos:read));

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other', qw(articles:read articles:write custom:read custom:write));

sub art {
    my ($f, $cred) = @_;
    my $r = req(POST => '/v1/api/articles', $cred // $K, { status => 'published', %$f });
    die 'article: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{article}{id};
}
sub qe { my $b = Encode::encode('UTF-8', $_[0]); $b =~ s/([^A-Za-z0-9\-_.~])/sprintf('%%%02X', ord $1)/ge; $b }
sub search {
    my ($path, $q, $cred, $extra) = @_;
    my $r = req(GET => "$path?q=" . qe($q) . ($extra // ''), $cred // $K);
    return $r;
}
sub titles {
    my ($r, $list) = @_;
    return [map { $_->{title} // $_->{data}{title} } @{ $r->{json}{$list // 'articles'} // [] }];
}

# --- English: plurals, weights, recency, phrases, exclusions, HTML --------------------------

my %a;
$a{body} = art({ title => 'Harbour notes', body => '<p>The new <strong>running shoes</strong> arrived.</p>' });
$a{title} = art({ title => 'Shoe shopping guide', body => '<p>Where to buy.</p>' });
$a{old} = art({ title => 'Quiet lanterns', body => '<p>Lanterns over the quick brown fox.</p>' });
$a{new} = art({ title => 'Quiet lanterns', body => '<p>Lanterns over the quick brown fox.</p>' });
$a{lazy} = art({ title => 'Lazy afternoon', body => '<p>A brown fox and a lazy dog.</p>' });
$a{draft} = art({ title => 'Draft shoes', status => 'draft' });
$a{weather} = art({ title => 'Weather report for Monday', body => '<p>Rain.</p>' });
$a{xss} = art({ title => 'Escapes',
                body => '<p>Type &lt;script&gt;alert(1)&lt;/script&gt; if 5 &lt; 6 &amp; "seven" near the marker zebra.</p>' });
art({ title => 'Other shoes', body => 'shoe' }, $K2);

my $r = search('/v1/api/articles', 'shoe');
is $r->{status}, 200, 'a search: 200' or diag diag_resp($r);
is_deeply titles($r), ['Draft shoes', 'Shoe shopping guide', 'Harbour notes'],
    '"shoe" finds "shoes" and "Shoe" (English stems), titles above the body, the newer first among equals;'
    . ' not the other workspace';
is $r->{json}{fuzzy}, JSON::PP::false, 'an exact match: fuzzy false';
is_deeply $r->{json}{pagination}, { total => 3, limit => 50, offset => 0 }, 'the total is the matches';
like $r->{json}{articles}[2]{highlight}, qr{<mark>shoes</mark>}, 'the highlight marks the match';
is_deeply [sort grep { $_ ne 'highlight' } keys %{ $r->{json}{articles}[0] }],
    [sort keys %{ req(GET => "/v1/api/articles/$a{title}", $K)->{json}{article} }],
    'an item: the article as the list writes it, and its highlight';

is_deeply titles(search('/v1/api/articles', 'shoe', undef, '&status=published')),
    ['Shoe shopping guide', 'Harbour notes'], 'combined with the status filter';
$r = search('/v1/api/articles', 'shoe', undef, '&limit=1&offset=1');
is_deeply titles($r), ['Shoe shopping guide'], 'paged: limit and offset';
is_deeply $r->{json}{pagination}, { total => 3, limit => 1, offset => 1 }, 'paged: the total';
$r = search('/v1/api/articles', 'shoe', undef, '&offset=10');
is_deeply [$r->{status}, $r->{json}{articles}, $r->{json}{pagination}{total}], [200, [], 3], 'past the end';

is_deeply titles(search('/v1/api/articles', 'lanterns')), ['Quiet lanterns', 'Quiet lanterns'], 'equal matches';
is_deeply [map { $_->{id} } @{ search('/v1/api/articles', 'lanterns')->{json}{articles} }], [$a{new}, $a{old}],
    'equal ranks: the newest first';
is_deeply titles(search('/v1/api/articles', '"quick brown"')), ['Quiet lanterns', 'Quiet lanterns'],
    'a quoted phrase: only where the words are adjacent';
is_deeply [sort @{ titles(search('/v1/api/articles', 'fox -lazy')) }], ['Quiet lanterns', 'Quiet lanterns'],
    '-word excludes';
is_deeply [sort @{ titles(search('/v1/api/articles', 'afternoon or harbour')) }], ['Harbour notes', 'Lazy afternoon'],
    '"or"';
is_deeply titles(search('/v1/api/articles', 'strong')), [], 'HTML tags are not indexed';

$r = search('/v1/api/articles', 'zebra');
my $hl = $r->{json}{articles}[0]{highlight} // '';
like $hl, qr{5 &lt; 6 &amp; &quot;seven&quot;}, 'the highlight escapes the text it shows';
unlike $hl, qr{<(?!/?mark>)}, 'the highlight holds no element but <mark>';
like $hl, qr{<mark>zebra</mark>}, 'the match is marked';

# --- the fallback -------------------------------------------------------------------------------

$r = search('/v1/api/articles', 'wheather');
is_deeply titles($r), ['Weather report for Monday'], 'a misspelling: the trigram fallback finds the title';
is $r->{json}{fuzzy}, JSON::PP::true, 'and says so: fuzzy true';
is $r->{json}{pagination}{total}, 1, 'the fallback counts its own hits';
$r = search('/v1/api/articles', 'qwxzv');
is_deeply [titles($r), $r->{json}{fuzzy}], [[], JSON::PP::false], 'nothing near: empty, fuzzy false';

# --- hostile queries ------------------------------------------------------------------------------

for my $q ('"unbalanced', 'fox"" or or -', '-|&!():*<->', 'the', "'; DROP TABLE articles; --", '\\', '%',
           ('fox ' x 240)) {
    $r = search('/v1/api/articles', $q);
    is $r->{status}, 200, 'a hostile query answers 200: ' . substr($q, 0, 30) or diag diag_resp($r);
}
is_deeply titles(search('/v1/api/articles', '-|&!():*')), [], 'operators only: nothing';
check_err(search('/v1/api/articles', 'x' x 5000), 400, 'invalid_request', '5,000 characters: 400');
check_err(req(GET => '/v1/api/articles?q=%ff%fe', $K), 400, 'invalid_request', 'invalid UTF-8: 400');
check_err(req(GET => '/v1/api/articles?q=a%00b', $K), 400, 'invalid_request', 'a NUL: 400');
check_err(req(GET => '/v1/api/articles?q=a&q=b', $K), 400, 'invalid_request', 'q twice: 400');
is_deeply titles(req(GET => '/v1/api/articles?q=%20%20', $K)),
    titles(req(GET => '/v1/api/articles', $K)), 'a blank q: the plain list';
is one('SELECT count(*) FROM articles'), 9, 'nothing was written';

# --- credentials ----------------------------------------------------------------------------------

check_err(req(GET => '/v1/api/articles?q=shoe'), 401, 'missing_token', 'no key');
check_err(req(GET => '/v1/api/articles?q=shoe', 'svc_live_' . ('A' x 49)), 401, 'invalid_api_key', 'a bad key');
check_err(req(GET => '/v1/api/articles?q=shoe', $KV), 403, 'missing_scope', 'without articles:read');
check_err(req(GET => '/v1/api/articles?q=%ff', $KV), 403, 'missing_scope', 'the scope before the query');
check_err(req(GET => '/v1/api/articles?q=shoe', $ot), 401, 'invalid_api_key', 'a session token on /v1/api');

# the studio's list (a session), and another workspace's
$r = req(GET => "/v1/workspaces/$wid/articles?q=shoe", $ot);
is_deeply titles($r), ['Draft shoes', 'Shoe shopping guide', 'Harbour notes'], 'the studio searches too'
    or diag diag_resp($r);
check_err(req(GET => "/v1/workspaces/$wid2/articles?q=shoe", $ot), 403, 'not_workspace_member',
          "another workspace's studio");
is_deeply titles(search('/v1/api/articles', 'shoe', $K2)), ['Other shoes'], 'the other key sees its own only';

# --- other languages ---------------------------------------------------------------------------------

art({ title => 'Die Fußballweltmeisterschaften', locale => 'de', body => '<p>Häuser am See.</p>' });
art({ title => 'Un élève à l’école', locale => 'fr', body => '<p>Les élèves étudient.</p>' });
is_deeply titles(search('/v1/api/articles', 'Fußballweltmeisterschaft', undef, '&locale=de')),
    ['Die Fußballweltmeisterschaften'], 'German: a compound found by its singular';
is_deeply titles(search('/v1/api/articles', 'Haus', undef, '&locale=de')), ['Die Fußballweltmeisterschaften'],
    'German: "Haus" finds "Häuser"';
is_deeply titles(search('/v1/api/articles', 'eleve', undef, '&locale=fr')), ['Un élève à l’école'],
    'French: "eleve" finds "élève" (accents folded)';
is_deeply titles(search('/v1/api/articles', 'Fußballweltmeisterschaft')), [],
    'the list is one language: the workspace default (en) holds no German article';

# --- rows written before the index: filled in batches --------------------------------------------------

# as before sql/0040: rows without a vector (the trigger that would make them again skipped)
psql("SET session_replication_role = replica; UPDATE articles SET search = NULL WHERE workspace_id = '$wid'");
$r = search('/v1/api/articles', 'shoe');
is_deeply [titles($r), $r->{json}{fuzzy}], [['Shoe shopping guide', 'Draft shoes'], JSON::PP::true],
    'rows without a vector: the text search finds none (the fallback a title)';
psql('CALL cms_search_backfill()');
is one("SELECT count(*) FROM articles WHERE search IS NULL"), 0, 'cms_search_backfill() filled every row';
is_deeply titles(search('/v1/api/articles', 'shoe')), ['Draft shoes', 'Shoe shopping guide', 'Harbour notes'],
    'and they are found again';
my $edit = req(PATCH => "/v1/api/articles/$a{title}", $K, { title => 'Boot shopping guide' });
is $edit->{status}, 200, 'an edit' or diag diag_resp($edit);
is_deeply titles(search('/v1/api/articles', 'boot')), ['Boot shopping guide'], 'an edit is searchable at once';
is_deeply titles(search('/v1/api/articles', 'shoe')), ['Draft shoes', 'Harbour notes'], 'and its old words are gone';

# --- videos, episodes ------------------------------------------------------------------------------------

for my $v (['Northern lights timelapse', 'published'], ['Harbour lights', 'draft'], ['Cooking pasta', 'published']) {
    my $rr = req(POST => '/v1/api/videos', $K, { title => $v->[0], status => $v->[1],
                                                 description => "About $v->[0]." });
    die diag_resp($rr) unless $rr->{status} == 201;
}
$r = search('/v1/api/videos', 'light', $KV);
is_deeply [sort @{ titles($r, 'videos') }], ['Harbour lights', 'Northern lights timelapse'], 'videos: searched'
    or diag diag_resp($r);
is_deeply titles(search('/v1/api/videos', 'light', $KV, '&status=draft'), 'videos'), ['Harbour lights'],
    'videos: with the status filter';
check_err(search('/v1/api/videos', 'light', $K2), 403, 'missing_scope', 'videos: without the scope');
is_deeply titles(search('/v1/api/videos', 'zqxv', $KV), 'videos'), [], 'not near enough: nothing';
is_deeply titles(search('/v1/api/videos', 'cookin', $KV), 'videos'), ['Cooking pasta'], 'videos: the fallback';

my $show = req(POST => "/v1/workspaces/$wid/podcast-shows", $ot, { title => 'Talk', language => 'en' });
is $show->{status}, 201, 'a show' or diag diag_resp($show);
my $sid = $show->{json}{podcast_show}{id} // $show->{json}{show}{id};
for my $t ('Gardening in winter', 'Winter tires explained') {
    my $rr = req(POST => '/v1/api/podcast-episodes', $K,
                 { show_id => $sid, title => $t, audio_url => 'https://cdn.example/a.mp3', episode_number => 1 });
    die diag_resp($rr) unless $rr->{status} == 201;
}
$r = search('/v1/api/podcast-episodes', 'gardens');
is_deeply titles($r, 'podcast_episodes'), ['Gardening in winter'], 'episodes: searched (stems)' or diag diag_resp($r);
is scalar @{ titles(search('/v1/api/podcast-episodes', 'winter', undef, "&show_id=$sid"), 'podcast_episodes') }, 2,
    'episodes: with the show filter';
check_err(search('/v1/api/podcast-episodes', 'winter', undef, '&show_id=nope'), 400, 'invalid_field_value',
          'episodes: a bad filter still refused');
like one("SELECT search::text FROM podcast_episodes WHERE title = 'Gardening in winter'"), qr/'garden'/,
    'episodes: indexed in their show\'s language (English)';
psql("UPDATE podcast_shows SET language = 'de' WHERE id = '$sid'");
like one("SELECT search::text FROM podcast_episodes WHERE title = 'Gardening in winter'"), qr/'gardening'/,
    'a show\'s language changed: its episodes indexed again (German)';

# --- custom entries, and the public surface ---------------------------------------------------------------

my $m = req(POST => "/v1/workspaces/$wid/custom-modules", $ot,
            { slug => 'recipes', name => 'Recipes',
              schema => { fields => [{ key => 'title', label => 'Title', type => 'text' },
                                     { key => 'course', label => 'Course', type => 'select',
                                       options => ['main', 'dessert'] },
                                     { key => 'method', label => 'Method', type => 'richtext' }] } });
is $m->{status}, 201, 'a module' or diag diag_resp($m);
sub entry {
    my ($data, $status) = @_;
    my $rr = req(POST => '/v1/api/custom/recipes/entries', $K, { data => $data, status => $status // 'published' });
    die diag_resp($rr) unless $rr->{status} == 201;
}
entry({ title => 'Lemon tart', course => 'dessert', method => '<p>Bake the <em>pastry</em> blind.</p>' });
entry({ title => 'Roast potatoes', course => 'main', method => '<p>Parboil, then roast with <b>lemon</b>.</p>' });
entry({ title => 'Secret lemon cake', course => 'dessert' }, 'draft');

$r = search('/v1/api/custom/recipes/entries', 'lemon');
is_deeply titles($r, 'custom_entries'), ['Secret lemon cake', 'Lemon tart', 'Roast potatoes'],
    'entries: the title field above rich text' or diag diag_resp($r);
is_deeply $r->{json}{pagination}, { total => 3, offset => 0 }, 'entries: their pagination shape';
is_deeply titles(search('/v1/api/custom/recipes/entries', 'lemon', undef, '&filter[course]=main'), 'custom_entries'),
    ['Roast potatoes'], 'entries: with a filter';
like search('/v1/api/custom/recipes/entries', 'pastry')->{json}{custom_entries}[0]{highlight} // '',
    qr{<mark>pastry</mark>}, 'entries: rich text highlighted, its tags gone';
check_err(search('/v1/api/custom/recipes/entries', 'lemon', undef, '&sort=title'), 400, 'invalid_field_value',
          'entries: a sort with q is refused');
check_err(search('/v1/api/custom/nothing/entries', 'lemon'), 404, 'not_found', 'entries: an unknown module');
check_err(search('/v1/api/custom/recipes/entries', 'lemon', $K2), 404, 'not_found',
          "entries: another workspace's module");
$r = search('/v1/api/custom/recipes/entries', 'lemmon');
is_deeply [sort(@{ titles($r, 'custom_entries') }), $r->{json}{fuzzy}], ['Lemon tart', 'Secret lemon cake', JSON::PP::true],
    'entries: the fallback over the title field';

psql("UPDATE custom_modules SET schema = jsonb_set(schema, '{fields,0,type}', '\"richtext\"')"
     . " WHERE slug = 'recipes'");
is one("SELECT count(*) FROM custom_entries WHERE search_title IS NOT NULL"), 0,
    'a schema changed: its entries indexed again (no text field left for a title)';
psql("UPDATE custom_modules SET schema = jsonb_set(schema, '{fields,0,type}', '\"text\"')"
     . " WHERE slug = 'recipes'");

my $site = req(POST => "/v1/workspaces/$wid/sites", $ot, { name => 'Site' });
is $site->{status}, 201, 'a site' or diag diag_resp($site);
my $pk = $site->{json}{site}{publishable_key};
sub pub { req(GET => "$_[0]" . ($_[0] =~ /\?/ ? '&' : '?') . "key=$pk") }
$r = pub('/v1/public/custom/recipes/entries?q=lemon');
is_deeply titles($r, 'custom_entries'), ['Lemon tart', 'Roast potatoes'], 'public: published entries only'
    or diag diag_resp($r);
like $r->{json}{custom_entries}[0]{highlight} // '', qr{<mark>Lemon</mark>}, 'public: highlighted';
is_deeply [sort keys %{ $r->{json}{custom_entries}[0] }], [sort qw(id data created_at updated_at highlight)],
    'public: the public fields and the highlight';
is_deeply titles(pub('/v1/public/custom/recipes/entries?q=secret'), 'custom_entries'), [],
    'public: a draft is never found';
is pub('/v1/public/custom/recipes/entries?q=secrett')->{json}{fuzzy}, JSON::PP::false,
    'public: nor by the fallback';
check_err(pub('/v1/public/custom/nothing/entries?q=lemon'), 404, 'not_found', 'public: an unknown module');
check_err(pub('/v1/public/custom/recipes/entries?q=%ff'), 400, 'invalid_request', 'public: invalid UTF-8');
check_err(req(GET => '/v1/public/custom/recipes/entries?q=lemon'), 401, 'missing_token', 'public: no key');

done_testing();
