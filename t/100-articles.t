# Articles over /v1/api with a secret key: the credential and scope checks of every route;
# create with every field and with none; validation (each error code that applies, wrong
# types, unknown and read-only fields); slugs derived, validated and unique per workspace
# and locale; published_at and scheduling; read-time estimate; the sanitized body and its
# size and depth caps; PATCH (clear_category, excerpt, published_at cleared); revisions
# written or not (autosave); outbox events; soft delete; lists (filters, order, paging
# edges); another workspace's ids; the publish-rights matrix by the key creator's role (a
# viewer's key writes nothing).
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(check_url_field req req_spec diag_resp check_err one signup signup_defaults workspace key mk revisions
                     rows_read $UUID $TS);
use JSON::PP ();
use Time::Local qw(timegm);

my $JSON = JSON::PP->new->utf8->canonical;
my ($T, $F) = (JSON::PP::true, JSON::PP::false);

signup_defaults(email_prefix => 'art');

sub events {
    [map { $_->[0] } @{psql("SELECT type FROM outbox_events WHERE data->>'id' = '$_[0]' ORDER BY created_at, id")}]
}
sub ts_epoch {
    my $s = shift // return undef;
    $s =~ /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?Z$/ or return undef;
    return timegm($6, $5, $4, $3, $2 - 1, $1);
}
sub words { '<p>' . join(' ', map { "word$_" } 1 .. $_[0]) . '</p>' }

my @FIELDS = sort qw(id title slug subtitle excerpt body status locale image_url category_id author_id
                     tags is_featured is_breaking is_opinion focus_keyword read_time_minutes
                     comment_count published_at created_at updated_at);
my $NOBODY = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';

start_nginx();

my $owner = signup();
my $oid = $owner->{user}{id};
my $wid = workspace($owner->{token}, 'Articles');
my $K = key($owner->{token}, $wid, 'rw', qw(articles:read articles:write categories:read categories:write));
my $KR = key($owner->{token}, $wid, 'read only', 'articles:read');
my $KW = key($owner->{token}, $wid, 'write only', 'articles:write');
my $KC = key($owner->{token}, $wid, 'categories', 'categories:read', 'categories:write');

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other rw', qw(articles:read articles:write categories:read categories:write));

my $cat = req(POST => '/v1/api/categories', $K, { name => 'News' })->{json}{category}{id} or die 'category';
my $cat2 = req(POST => '/v1/api/categories', $K2, { name => 'Other news' })->{json}{category}{id} or die 'category 2';

# --- credentials and scopes on every route ---------------------------------------------

{
    my $a = mk($K, { title => 'Auth target' });
    my $id = $a->{id};
    my @routes = (
        [GET => '/v1/api/articles', undef, 'read'],
        [POST => '/v1/api/articles', { title => 'x' }, 'write'],
        [GET => "/v1/api/articles/$id", undef, 'read'],
        [PATCH => "/v1/api/articles/$id", { title => 'x' }, 'write'],
        [DELETE => "/v1/api/articles/$id", undef, 'write'],
    );
    my $bad = 'svc_live_' . ('A' x 49);
    for my $t (@routes) {
        my ($m, $p, $b, $need) = @$t;
        check_err(req($m, $p, undef, $b), 401, 'missing_token', "$m $p without a key");
        check_err(req($m, $p, $bad, $b), 401, 'invalid_api_key', "$m $p with a bad key");
        check_err(req($m, $p, $owner->{token}, $b), 401, 'invalid_api_key', "$m $p with a session token");
        check_err(req($m, $p, $need eq 'read' ? $KW : $KR, $b), 403, 'missing_scope',
                  "$m $p without articles:$need");
        check_err(req($m, $p, $KC, $b), 403, 'missing_scope', "$m $p with only categories scopes");
    }
    is req(GET => "/v1/api/articles/$id", $KR)->{status}, 200, 'read-only key reads';
    is req(POST => '/v1/api/articles', $KW, { title => 'Written by the write-only key' })->{status}, 201,
        'write-only key creates';
    my $g = req(GET => "/v1/api/articles/$id", $K);
    is_deeply $g->{json}{article}, $a, 'the refused writes changed nothing';
}

# --- create: every field ---------------------------------------------------------------

my %full = (
    title => 'Full article', slug => 'full-article', subtitle => 'The deck',
    body => '<p>Hello <strong>world</strong></p>', status => 'draft', locale => 'en',
    image_url => 'https://img.example.com/a.png', category_id => $cat, author_id => $oid,
    tags => ['alpha', 'beta'], is_featured => $T, is_breaking => $T, is_opinion => $F,
    focus_keyword => 'world', read_time_minutes => 7, published_at => '2024-01-02T03:04:05Z',
);
my $r = req(POST => '/v1/api/articles', $K, \%full);
is $r->{status}, 201, 'create with every field: 201' or diag diag_resp($r);
my $full = $r->{json}{article} // {};
is_deeply [sort keys %{$r->{json} // {}}], ['article'], 'create: wrapped in {article}';
is_deeply [sort keys %$full], \@FIELDS, 'create: every article field, nothing else';
like $full->{id} // '', $UUID, 'create: id is a uuid';
is $full->{$_}, $full{$_}, "create: $_ kept" for qw(title slug subtitle status locale image_url category_id
                                                     author_id focus_keyword read_time_minutes);
is $full->{excerpt}, 'The deck', 'create: excerpt mirrors subtitle';
is $full->{body}, '<p>Hello <strong>world</strong></p>', 'create: clean HTML body kept as is';
is_deeply $full->{tags}, ['alpha', 'beta'], 'create: tags';
ok $full->{is_featured} && $full->{is_breaking} && !$full->{is_opinion}
    && JSON::PP::is_bool($full->{is_opinion}), 'create: booleans are JSON booleans';
is $full->{comment_count}, 0, 'create: comment_count 0';
is $full->{published_at}, '2024-01-02T03:04:05.000Z', 'create: published_at normalised to UTC';
like $full->{$_} // '', $TS, "create: $_ is an RFC 3339 UTC time" for qw(created_at updated_at);
ok abs(ts_epoch($full->{created_at}) - time) < 30, 'create: created_at is now';

my $g = req(GET => "/v1/api/articles/$full->{id}", $K);
is $g->{status}, 200, 'get: 200';
is_deeply $g->{json}, { article => $full }, 'get: the same record';
is revisions($full->{id}), 1, 'create: one revision row';
is_deeply psql("SELECT created_by, snapshot->>'title', snapshot->>'slug' FROM article_revisions"
               . " WHERE article_id = '$full->{id}'"),
    [[$oid, 'Full article', 'full-article']], 'create: the revision snapshot, by the key\'s creator';
is_deeply events($full->{id}), [], 'create a draft: no outbox event';

# --- create: defaults ------------------------------------------------------------------

my $min = mk($K, { title => 'Only a title' });
is_deeply { map { $_ => $min->{$_} } grep { !/^(id|created_at|updated_at)$/ } keys %$min }, {
    title => 'Only a title', slug => 'only-a-title', subtitle => '', excerpt => '', body => '',
    status => 'draft', locale => 'en', image_url => '', category_id => undef, author_id => $oid,
    tags => [], is_featured => $F, is_breaking => $F, is_opinion => $F, focus_keyword => '',
    read_time_minutes => 1, comment_count => 0, published_at => undef,
}, 'create with a title only: the defaults (draft, en, author = key creator, read time 1)';
is $min->{created_at}, $min->{updated_at}, 'create: updated_at = created_at';

is mk($K, { title => 'Excerpt only', excerpt => 'E' })->{subtitle}, 'E', 'excerpt alone sets subtitle';
my $both = mk($K, { title => 'Both', subtitle => 'S', excerpt => 'E' });
is "$both->{subtitle}/$both->{excerpt}", 'S/S', 'subtitle wins over excerpt';
my $noauth = mk($K, { title => 'No author', author_id => undef });
ok !defined $noauth->{author_id}, 'author_id null: no author';
my $ro = mk($K, { title => 'Read-only fields', id => $NOBODY, comment_count => 9,
                  created_at => '2000-01-01T00:00:00Z', updated_at => '2000-01-01T00:00:00Z' });
ok $ro->{id} ne $NOBODY && $ro->{comment_count} == 0 && $ro->{created_at} !~ /^2000/
    && $ro->{updated_at} !~ /^2000/, 'read-only fields are ignored';
is mk($K, { title => 'x' x 500 })->{title}, 'x' x 500, 'a 500-character title';
my $wide = req(POST => '/v1/api/articles', $K, { title => 'é' x 500 });
is $wide->{status}, 201, 'a 500-character title of 2-byte characters' or diag diag_resp($wide);
my $ss = req(POST => '/v1/api/articles', $K, { title => 'Sluggy', slug => 'a' x 200 });
is $ss->{status}, 201, 'a 200-character slug' or diag diag_resp($ss);

# --- slugs derived ---------------------------------------------------------------------

for my $t (['Hello, World!', 'hello-world'],
           ['Crème Brûlée à la Française', 'creme-brulee-a-la-francaise'],
           ['Die Straße', 'die-strasse'],
           ['  --Multiple   spaces & dashes--  ', 'multiple-spaces-dashes'],
           ['Version 2.0 Released', 'version-2-0-released'],
           ['UPPER lower 123', 'upper-lower-123'],
           ["Don't Stop", 'dont-stop'],
           ['Øresund Æble Ñandú', 'oresund-aeble-nandu'],
           ['日本語のタイトル', '日本語のタイトル'],
           ['Привет, Мир', 'привет-мир'],
           ['!!! ???', 'untitled', 'it']) {
    my ($title, $slug, $loc) = @$t;
    my $r = req(POST => '/v1/api/articles', $K, { title => $title, locale => $loc // 'de' });
    is $r->{status}, 201, "derive from '$title': 201" or diag diag_resp($r);
    is(($r->{json}{article} // {})->{slug}, $slug, "derive from '$title': $slug");
}
my $long = mk($K, { title => join(' ', ('word') x 100), locale => 'de' });
ok length($long->{slug}) <= 200 && $long->{slug} =~ /^[a-z0-9]+(-[a-z0-9]+)*$/,
    'a slug derived from a long title is valid and at most 200 characters';

# --- validation ------------------------------------------------------------------------

for my $t (
    [{}, 'title_required', 'no title'],
    [{ title => '' }, 'title_required', 'empty title'],
    [{ title => undef }, 'title_required', 'null title'],
    [{ title => 'x' x 501 }, 'invalid_field_value', 'title of 501 characters'],
    [{ title => 5 }, 'invalid_field_value', 'title a number'],
    [{ title => ['x'] }, 'invalid_field_value', 'title an array'],
    (map { [{ title => 'x', slug => $_ }, 'invalid_slug', "slug '$_'"] }
         'Bad Slug', 'a--b', '-a', 'a-', 'ABC', 'a_b', 'é', 'a.b', '', 'a' x 201),
    [{ title => 'x', status => 'live' }, 'invalid_status', "status 'live'"],
    [{ title => 'x', status => 'PUBLISHED' }, 'invalid_status', "status 'PUBLISHED'"],
    [{ title => 'x', status => '' }, 'invalid_status', 'status empty'],
    (map { [{ title => 'x', locale => $_ }, 'invalid_field_value', "locale '$_'"] }
         'english language', '!!', 'e', '', '12', 'en--us', 'en-'),
    [{ title => 'x', locale => 5 }, 'invalid_field_value', 'locale a number'],
    [{ title => 'x', category_id => $NOBODY }, 'invalid_field_value', 'unknown category_id'],
    [{ title => 'x', category_id => $cat2 }, 'invalid_field_value', 'another workspace\'s category_id'],
    [{ title => 'x', category_id => 'not-a-uuid' }, 'invalid_field_value', 'malformed category_id'],
    [{ title => 'x', category_id => 5 }, 'invalid_field_value', 'category_id a number'],
    [{ title => 'x', author_id => $other->{user}{id} }, 'invalid_field_value', 'author_id not a member'],
    [{ title => 'x', author_id => $NOBODY }, 'invalid_field_value', 'unknown author_id'],
    [{ title => 'x', author_id => 'xyz' }, 'invalid_field_value', 'malformed author_id'],
    [{ title => 'x', tags => 'x' }, 'invalid_field_value', 'tags a string'],
    [{ title => 'x', tags => [1] }, 'invalid_field_value', 'tags of numbers'],
    [{ title => 'x', tags => ['ok', ''] }, 'invalid_field_value', 'an empty tag'],
    [{ title => 'x', tags => { a => 1 } }, 'invalid_field_value', 'tags an object'],
    [{ title => 'x', is_featured => 'yes' }, 'invalid_field_value', 'is_featured a string'],
    [{ title => 'x', is_breaking => 1 }, 'invalid_field_value', 'is_breaking a number'],
    [{ title => 'x', is_opinion => [] }, 'invalid_field_value', 'is_opinion an array'],
    [{ title => 'x', read_time_minutes => 'five' }, 'invalid_field_value', 'read_time_minutes a string'],
    [{ title => 'x', read_time_minutes => 2.5 }, 'invalid_field_value', 'read_time_minutes a fraction'],
    (map { [{ title => 'x', published_at => $_ }, 'invalid_field_value', "published_at '$_'"] }
         'not a date', 'yesterday', 'now', 'infinity', 'epoch', 'Jan 2 2024', '2024-01-02',
         '2024-01-02T03:04:05', '2024-13-01T00:00:00Z', '2024-02-30T00:00:00Z', '2024-01-02T25:00:00Z'),
    [{ title => 'x', published_at => 5 }, 'invalid_field_value', 'published_at a number'],
    [{ title => 'x', image_url => 5 }, 'invalid_field_value', 'image_url a number'],
    [{ title => 'x', focus_keyword => [] }, 'invalid_field_value', 'focus_keyword an array'],
    [{ title => 'x', subtitle => {} }, 'invalid_field_value', 'subtitle an object'],
    [{ title => 'x', excerpt => 5 }, 'invalid_field_value', 'excerpt a number'],
    [{ title => 'x', body => 5 }, 'invalid_field_value', 'body a number'],
    [{ title => 'x', status => 'scheduled' }, 'invalid_field_value', 'scheduled without published_at'],
    [{ title => 'x', colour => 'red' }, 'invalid_request', 'an unknown field'],
    [{ title => 'x', workspace_id => $wid2 }, 'invalid_request', 'workspace_id (not a field)'],
) {
    my ($body, $code, $name) = @$t;
    my $r = req(POST => '/v1/api/articles', $K, $body);
    check_err($r, 400, $code, "create, $name");
    # an accepted one would hold the slug "x" for the next cases
    req(DELETE => "/v1/api/articles/$r->{json}{article}{id}", $K) if $r->{status} == 201;
}
check_err(req(POST => '/v1/api/articles', $K, '{"title": "x",'), 400, 'invalid_request', 'create, malformed JSON');
check_err(req(POST => '/v1/api/articles', $K, '["title"]'), 400, 'invalid_request', 'create, a JSON array');
check_err(req(POST => '/v1/api/articles', $K, '"title"'), 400, 'invalid_request', 'create, a JSON string');
check_err(req(POST => '/v1/api/articles', $K), 400, 'invalid_request', 'create, no body');
check_err(http(POST => '/v1/api/articles', [Authorization => "Bearer $K", 'Content-Type' => 'text/plain'],
               '{"title": "x"}'), 415, 'unsupported_media_type', 'create, text/plain body');
is one("SELECT count(*) FROM articles WHERE workspace_id = '$wid2'"), 0, 'nothing landed in the other workspace';
is one("SELECT count(*) FROM articles WHERE title = 'x'"), 0, 'no refused create was stored';

# Locales that are fine.
for my $loc (qw(fr pt-BR zh-Hant-TW es-419)) {
    my $r = req(POST => '/v1/api/articles', $K, { title => "Locale $loc" , locale => $loc });
    is $r->{status}, 201, "locale $loc: 201" or diag diag_resp($r);
    is(($r->{json}{article} // {})->{locale}, $loc, "locale $loc kept");
}

# --- body: sanitized, capped -----------------------------------------------------------

{
    my $dirty = '<p onclick="steal()">Hi<script>alert(1)</script> <a href="javascript:alert(2)">bad</a>'
        . ' <a href="https://example.com/x">good</a><img src="https://example.com/i.png" onerror="alert(3)"></p>'
        . '<iframe src="https://evil.example"></iframe><style>p{}</style>';
    my $a = mk($K, { title => 'Dirty', body => $dirty });
    my $b = $a->{body};
    unlike $b, qr/<script|alert|onclick|onerror|javascript:|<iframe|<style/i, 'body: scripts, handlers, javascript: URLs, iframes, styles removed';
    like $b, qr{<a [^>]*href="https://example\.com/x"[^>]*>good</a>}, 'body: the safe link stays';
    like $b, qr{<a [^>]*rel="noopener noreferrer"[^>]*>good</a>}, 'body: links get rel="noopener noreferrer"';
    like $b, qr{<img [^>]*src="https://example\.com/i\.png"}, 'body: the http(s) image stays';
    is one("SELECT body FROM articles WHERE id = '$a->{id}'"), $b, 'body: stored sanitized';
    is_deeply req(GET => "/v1/api/articles/$a->{id}", $K)->{json}{article}, $a, 'body: read back the same';
    my $p = req(PATCH => "/v1/api/articles/$a->{id}", $K, { body => '<p>ok</p><script>x()</script>' });
    is $p->{status}, 200, 'patch body: 200' or diag diag_resp($p);
    is(($p->{json}{article} // {})->{body}, '<p>ok</p>', 'patch body: sanitized too');

    my $max = 512 * 1024;
    my $big = '<p>' . ('word ' x (($max - 7) / 5));
    $big .= 'x' x ($max - 4 - length $big) . '</p>';
    is length $big, $max, 'a body of exactly 512 KiB';
    my $r = req(POST => '/v1/api/articles', $K, { title => 'Big', body => $big });
    is $r->{status}, 201, 'body of 512 KiB: 201' or diag diag_resp($r);
    ok(($r->{json}{article}{read_time_minutes} // 0) >= 500, 'body of 512 KiB: read time estimated (> 500 min)');
    check_err(req(POST => '/v1/api/articles', $K, { title => 'Too big', body => $big . ' ' }), 400,
              'invalid_field_value', 'body of 512 KiB + 1');
    my $nest = sub { my $n = shift; ('<blockquote>' x $n) . 'deep' . ('</blockquote>' x $n) };
    $r = req(POST => '/v1/api/articles', $K, { title => 'Nested 60', body => $nest->(60) });
    is $r->{status}, 201, 'body nested 60 deep: 201' or diag diag_resp($r);
    like(($r->{json}{article} // {})->{body} // '', qr/deep/, 'nested 60 deep: the text stays');
    check_err(req(POST => '/v1/api/articles', $K, { title => 'Nested 150', body => $nest->(150) }), 400,
              'invalid_field_value', 'body nested 150 deep');
    check_err(req(POST => '/v1/api/articles', $K, { title => 'Nested 150', body => '<div>' x 150 }), 400,
              'invalid_field_value', 'body of 150 unclosed divs');
    my $pd = req(PATCH => "/v1/api/articles/$a->{id}", $K, { body => $nest->(150) });
    check_err($pd, 400, 'invalid_field_value', 'patch body nested 150 deep');
    is one("SELECT count(*) FROM articles WHERE title IN ('Too big', 'Nested 150')"), 0, 'refused bodies stored nothing';
}

# --- read time -------------------------------------------------------------------------

my $rn = 0;
for my $t ([0, undef, 1], [200, undef, 1], [201, undef, 2], [450, undef, 3], [450, 9, 9],
           [450, 0, 3], [450, -2, 3], [1000, 1, 1]) {
    my ($n, $rt, $want) = @$t;
    $rn++;
    my %b = (title => "Read $n $rn", body => words($n), locale => 'fr');
    $b{read_time_minutes} = $rt if defined $rt;
    my $a = mk($K, \%b);
    is $a->{read_time_minutes}, $want, "$n words, read_time_minutes " . ($rt // 'omitted') . ": $want";
}
{
    my $a = mk($K, { title => 'Script words', body => '<p>hi</p><script>' . ('w ' x 1000) . '</script>', locale => 'fr' });
    is $a->{read_time_minutes}, 1, 'words inside a removed script are not counted';
    $a = mk($K, { title => 'Tag words', body => '<p>' . join(' ', map { "<b>w$_</b>" } 1 .. 450) . '</p>', locale => 'fr' });
    is $a->{read_time_minutes}, 3, 'tags are not words (450 bold words: 3)';
    my $p = req(PATCH => "/v1/api/articles/$min->{id}", $K, { body => words(650) });
    is(($p->{json}{article} // {})->{read_time_minutes}, 4, 'patch body: read time estimated again (650 words: 4)');
    $p = req(PATCH => "/v1/api/articles/$min->{id}", $K, { read_time_minutes => 12 });
    is(($p->{json}{article} // {})->{read_time_minutes}, 12, 'patch read_time_minutes alone: set');
}

# --- status, published_at, scheduling --------------------------------------------------

{
    my $a = mk($K, { title => 'Published now', status => 'published' });
    is $a->{status}, 'published', 'create published';
    ok defined $a->{published_at} && abs(ts_epoch($a->{published_at}) - ts_epoch($a->{created_at})) <= 2,
        'create published: published_at set to now';
    is_deeply events($a->{id}), ['article.published'], 'create published: article.published in the outbox';
    is one("SELECT workspace_id FROM outbox_events WHERE data->>'id' = '$a->{id}'"), $wid, 'outbox: the workspace';

    $a = mk($K, { title => 'Published then', status => 'published', published_at => '2020-05-05T10:00:00Z' });
    is $a->{published_at}, '2020-05-05T10:00:00.000Z', 'create published with published_at: kept';

    $a = mk($K, { title => 'Offset', published_at => '2024-06-01T12:00:00+02:00' });
    is $a->{published_at}, '2024-06-01T10:00:00.000Z', 'published_at with an offset: in UTC';

    my $fut = mk($K, { title => 'Future', status => 'scheduled', published_at => '2099-01-01T00:00:00Z' });
    is $fut->{status}, 'scheduled', 'scheduled in the future: scheduled';
    is_deeply events($fut->{id}), [], 'scheduled in the future: no event';
    my $past = mk($K, { title => 'Past schedule', status => 'scheduled', published_at => '2020-01-01T00:00:00Z' });
    is $past->{status}, 'published', 'scheduled in the past: returned as published';
    is req(GET => "/v1/api/articles/$past->{id}", $K)->{json}{article}{status}, 'published',
        'scheduled in the past: read as published';
    my %ids = map { $_->{id} => $_->{status} }
        @{req(GET => '/v1/api/articles?status=published&limit=100', $K)->{json}{articles} // []};
    is $ids{$past->{id}}, 'published', 'scheduled in the past: listed under status=published, as published';
    ok !exists $ids{$fut->{id}}, 'scheduled in the future: not under status=published';
    %ids = map { $_->{id} => 1 } @{req(GET => '/v1/api/articles?status=scheduled&limit=100', $K)->{json}{articles} // []};
    ok $ids{$fut->{id}} && !$ids{$past->{id}}, 'status=scheduled: the future one only';

    my $d = mk($K, { title => 'To schedule' });
    my $need = 'A scheduled article needs published_at';
    my $p = req(PATCH => "/v1/api/articles/$d->{id}", $K, { status => 'scheduled' });
    check_err($p, 400, 'invalid_field_value', 'patch to scheduled without published_at');
    is(($p->{json} // {})->{error}, $need, 'patch to scheduled without published_at: the message says so');
    $p = req(POST => '/v1/api/articles', $K, { title => 'x', status => 'scheduled' });
    is(($p->{json} // {})->{error}, $need, 'create scheduled without published_at: the message says so');
    $p = req(PATCH => "/v1/api/articles/$d->{id}", $K, { status => 'scheduled', published_at => '2099-02-02T00:00:00Z' });
    is(($p->{json}{article} // {})->{status}, 'scheduled', 'patch to scheduled with published_at');
    for my $clear (undef, '') {
        my $how = defined $clear ? '""' : 'null';
        my $x = req(PATCH => "/v1/api/articles/$d->{id}", $K, { published_at => $clear });
        check_err($x, 400, 'invalid_field_value', "a scheduled article's published_at $how");
        is(($x->{json} // {})->{error}, $need, "a scheduled article's published_at $how: the message says so");
    }
    is one("SELECT published_at IS NOT NULL FROM articles WHERE id = '$d->{id}'"), 't',
        'a refused clearing kept published_at';

    my $c = mk($K, { title => 'Clear me', published_at => '2024-01-01T00:00:00Z' });
    $p = req(PATCH => "/v1/api/articles/$c->{id}", $K, { published_at => '' });
    is $p->{status}, 200, 'patch published_at "": 200' or diag diag_resp($p);
    ok exists $p->{json}{article}{published_at} && !defined $p->{json}{article}{published_at},
        'patch published_at "": cleared';
    req(PATCH => "/v1/api/articles/$c->{id}", $K, { published_at => '2024-01-01T00:00:00Z' });
    $p = req(PATCH => "/v1/api/articles/$c->{id}", $K, { published_at => undef });
    ok !defined(($p->{json}{article} // { published_at => 1 })->{published_at}), 'patch published_at null: cleared';
    check_err(req(PATCH => "/v1/api/articles/$c->{id}", $K, { published_at => 'someday' }), 400,
              'invalid_field_value', 'patch published_at unparseable');
    $p = req(PATCH => "/v1/api/articles/$c->{id}", $K, { status => 'published' });
    ok defined(($p->{json}{article} // {})->{published_at}), 'patch to published: published_at set';
    my $at = $p->{json}{article}{published_at};
    $p = req(PATCH => "/v1/api/articles/$c->{id}", $K, { title => 'Clear me again' });
    is(($p->{json}{article} // {})->{published_at}, $at, 'patch a published article: published_at unchanged');
    for my $s (qw(in_review archived draft)) {
        $p = req(PATCH => "/v1/api/articles/$c->{id}", $K, { status => $s });
        is(($p->{json}{article} // {})->{status}, $s, "patch status $s");
    }
    check_err(req(PATCH => "/v1/api/articles/$c->{id}", $K, { status => 'gone' }), 400, 'invalid_status',
              'patch status invalid');
}

# --- slugs: unique per workspace and locale --------------------------------------------

{
    my $en = mk($K, { title => 'Same A', slug => 'same' });
    my $t = req(POST => '/v1/api/articles', $K, { title => 'Same B', slug => 'same' });
    check_err($t, 409, 'slug_taken', 'same slug, same locale');
    # an article's slug is unique per locale: "in this language" is the rule
    is(($t->{json} // {})->{error}, 'The slug is taken in this language', 'same slug: the message names the language');
    # a derived slug never collides (issue 12): the first free of same-2, same-3...
    is mk($K, { title => 'Same', locale => 'en' })->{slug}, 'same-2', 'same derived slug, same locale: same-2';
    is mk($K, { title => 'Same', locale => 'en' })->{slug}, 'same-3', 'same derived slug again: same-3';
    my @race = parallel_requests(map { req_spec(POST => '/v1/api/articles', $K, { title => 'Article Race' }) } 1 .. 8);
    is scalar(grep { $_->{status} == 201 } @race), 8, '8 concurrent creates of one title: all 201'
        or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 201 } @race;
    my %slugs = map { (($_->{json} // {})->{article} // {})->{slug} // 'none' => 1 } @race;
    is_deeply [sort keys %slugs], [sort 'article-race', map { "article-race-$_" } 2 .. 8],
        '8 concurrent creates: article-race, article-race-2 .. -8';
    my $fr = req(POST => '/v1/api/articles', $K, { title => 'Same FR', slug => 'same', locale => 'fr' });
    is $fr->{status}, 201, 'same slug, locale fr: 201' or diag diag_resp($fr);
    my $pt = req(POST => '/v1/api/articles', $K, { title => 'Same PT', slug => 'same', locale => 'pt-BR' });
    is $pt->{status}, 201, 'same slug, locale pt-BR: 201' or diag diag_resp($pt);
    check_err(req(POST => '/v1/api/articles', $K, { title => 'Same FR 2', slug => 'same', locale => 'fr' }), 409,
              'slug_taken', 'same slug again in fr');
    my $o = req(POST => '/v1/api/articles', $K2, { title => 'Same elsewhere', slug => 'same' });
    is $o->{status}, 201, 'same slug, another workspace: 201' or diag diag_resp($o);

    my $b = mk($K, { title => 'Other slug', slug => 'other-slug' });
    check_err(req(PATCH => "/v1/api/articles/$b->{id}", $K, { slug => 'same' }), 409, 'slug_taken',
              'patch to a taken slug');
    my $de = mk($K, { title => 'German same', slug => 'same', locale => 'de' });
    check_err(req(PATCH => "/v1/api/articles/$de->{id}", $K, { locale => 'en' }), 409, 'slug_taken',
              'patch the locale onto a taken slug');
    is req(GET => "/v1/api/articles/$de->{id}", $K)->{json}{article}{locale}, 'de', 'the refused patch changed nothing';
    my $p = req(PATCH => "/v1/api/articles/$en->{id}", $K, { slug => 'same', title => 'Same A2' });
    is $p->{status}, 200, 'patch keeping its own slug: 200' or diag diag_resp($p);

    is req(DELETE => "/v1/api/articles/$en->{id}", $K)->{status}, 204, 'delete the en "same"';
    my $again = req(POST => '/v1/api/articles', $K, { title => 'Same reborn', slug => 'same' });
    is $again->{status}, 201, 'after a delete the slug is free again' or diag diag_resp($again);
    $p = req(PATCH => "/v1/api/articles/$b->{id}", $K, { slug => 'same', locale => 'de' });
    check_err($p, 409, 'slug_taken', 'patch slug and locale together onto a taken pair');

    # a derived slug taken between its lookup and its insert (another write named it): the
    # save answers the retry loop NULL, writing nothing, where it raises slug_taken to anyone
    # else (sql/0051: no subtransaction)
    my $save = "SELECT cms_article_save('$wid', '$owner->{user}{id}', true, NULL,"
             . " '{\"title\": \"Late\", \"slug\": \"same\", \"locale\": \"en\"%s}', false) IS NULL";
    my $n = one("SELECT count(*) FROM articles WHERE workspace_id = '$wid'");
    is one(sprintf $save, ', "slug_retry": true'), 't', 'a taken slug answers the derived slug\'s retry NULL';
    is one("SELECT count(*) FROM articles WHERE workspace_id = '$wid'"), $n, '... and writes nothing';
    ok !eval { one(sprintf $save, ''); 1 } && $@ =~ /slug_taken/, 'a taken slug raises slug_taken otherwise';

    # a taken base reads its own series, not the workspace's slugs (sql/0052): beside 3,000
    # other articles, videos and shows, under the generic plans of the module's connections
    my $uid = $owner->{user}{id};
    psql("INSERT INTO articles (workspace_id, title, slug, locale, author_id)
          SELECT '$wid', 'Bulk', s, 'en', '$uid'
            FROM (SELECT 'bulk-' || g AS s FROM generate_series(1, 3000) g
                  UNION ALL VALUES ('serie'), ('serie-2'), ('serie-9'), ('serie-x'), ('seriea-5')) v;
          INSERT INTO videos (workspace_id, title, slug)
          SELECT '$wid', 'Bulk', s FROM (SELECT 'bulk-' || g AS s FROM generate_series(1, 3000) g
                  UNION ALL VALUES ('serie'), ('serie-2'), ('serie-9'), ('serie-x'), ('seriea-5')) v;
          INSERT INTO podcast_shows (workspace_id, title, slug)
          SELECT '$wid', 'Bulk', s FROM (SELECT 'bulk-' || g AS s FROM generate_series(1, 3000) g
                  UNION ALL VALUES ('serie'), ('serie-2'), ('serie-9'), ('serie-x'), ('seriea-5')) v;
          ANALYZE articles; ANALYZE videos; ANALYZE podcast_shows");
    for my $t (['articles', "cms_article_slug_free('$wid', 'en', 'serie')"],
               ['videos', "cms_video_slug_free('$wid', 'en', 'serie')"],
               ['podcast_shows', "cms_show_slug_free('$wid', 'serie')"]) {
        my ($table, $call) = @$t;
        my ($read, $slug) = rows_read([$table], "CREATE TEMP TABLE cms_slug ON COMMIT DROP AS SELECT $call AS s",
                                       'SELECT s FROM cms_slug');
        is $slug->[0][0], 'serie-10', "$table: a taken base gets one more than its largest number";
        cmp_ok $read->{$table}, '<', 100, "$table: ... reading $read->{$table} rows, not the 3,000 others";
    }
}

# --- PATCH -----------------------------------------------------------------------------

{
    my $a = mk($K, { title => 'Patch me', category_id => $cat, tags => ['t'] });
    select(undef, undef, undef, 0.05);    # core sleep takes whole seconds
    my $p = req(PATCH => "/v1/api/articles/$a->{id}", $K, { title => 'Patched', excerpt => 'Ex', tags => [],
                                                             is_featured => $T, focus_keyword => 'kw',
                                                             image_url => 'https://x.example/y.jpg' });
    is $p->{status}, 200, 'patch: 200' or diag diag_resp($p);
    my $b = $p->{json}{article} // {};
    is_deeply [sort keys %{$p->{json} // {}}], ['article'], 'patch: wrapped in {article}';
    is_deeply { map { $_ => $b->{$_} } qw(title subtitle excerpt tags is_featured focus_keyword image_url slug
                                          category_id created_at id) },
        { title => 'Patched', subtitle => 'Ex', excerpt => 'Ex', tags => [], is_featured => $T, focus_keyword => 'kw',
          image_url => 'https://x.example/y.jpg', slug => 'patch-me', category_id => $cat,
          created_at => $a->{created_at}, id => $a->{id} },
        'patch: the fields given change, the slug is not derived again, created_at stays';
    ok ts_epoch($b->{updated_at}) >= ts_epoch($a->{updated_at}) && $b->{updated_at} ne $a->{updated_at},
        'patch: updated_at moves';
    is_deeply req(GET => "/v1/api/articles/$a->{id}", $K)->{json}{article}, $b, 'patch: read back';

    $p = req(PATCH => "/v1/api/articles/$a->{id}", $K, {});
    is $p->{status}, 200, 'empty patch: 200';
    is(($p->{json}{article} // {})->{title}, 'Patched', 'empty patch: nothing changes');

    $p = req(PATCH => "/v1/api/articles/$a->{id}", $K, { clear_category => $T, category_id => $cat });
    ok exists $p->{json}{article}{category_id} && !defined $p->{json}{article}{category_id},
        'clear_category wins over category_id';
    $p = req(PATCH => "/v1/api/articles/$a->{id}", $K, { category_id => $cat, clear_category => $F });
    is(($p->{json}{article} // {})->{category_id}, $cat, 'category_id with clear_category false: set');
    $p = req(PATCH => "/v1/api/articles/$a->{id}", $K, { category_id => undef });
    ok !defined(($p->{json}{article} // { category_id => 1 })->{category_id}), 'category_id null: unset';
    $p = req(PATCH => "/v1/api/articles/$a->{id}", $K, { author_id => undef });
    ok !defined(($p->{json}{article} // { author_id => 1 })->{author_id}), 'author_id null: unset';
    $p = req(PATCH => "/v1/api/articles/$a->{id}", $K, { author_id => $oid });
    is(($p->{json}{article} // {})->{author_id}, $oid, 'author_id a member: set');

    for my $t (
        [{ title => '' }, 400, 'title_required', 'empty title'],
        [{ title => 'x' x 501 }, 400, 'invalid_field_value', 'title of 501 characters'],
        [{ title => 5 }, 400, 'invalid_field_value', 'title a number'],
        [{ slug => 'Not OK' }, 400, 'invalid_slug', 'bad slug'],
        [{ slug => '' }, 400, 'invalid_slug', 'empty slug'],
        [{ status => 'nope' }, 400, 'invalid_status', 'bad status'],
        [{ locale => 'x y' }, 400, 'invalid_field_value', 'bad locale'],
        [{ category_id => $cat2 }, 400, 'invalid_field_value', 'another workspace\'s category'],
        [{ category_id => $NOBODY }, 400, 'invalid_field_value', 'unknown category'],
        [{ author_id => $other->{user}{id} }, 400, 'invalid_field_value', 'author not a member'],
        [{ tags => [''] }, 400, 'invalid_field_value', 'empty tag'],
        [{ is_breaking => 'no' }, 400, 'invalid_field_value', 'is_breaking a string'],
        [{ clear_category => 'yes' }, 400, 'invalid_field_value', 'clear_category a string'],
        [{ autosave => 'yes' }, 400, 'invalid_field_value', 'autosave a string'],
        [{ read_time_minutes => '3' }, 400, 'invalid_field_value', 'read_time_minutes a string'],
        [{ published_at => 'soon' }, 400, 'invalid_field_value', 'published_at unparseable'],
        [{ colour => 'red' }, 400, 'invalid_request', 'unknown field'],
    ) {
        my ($body, $status, $code, $name) = @$t;
        check_err(req(PATCH => "/v1/api/articles/$a->{id}", $K, $body), $status, $code, "patch, $name");
    }
    check_err(req(PATCH => "/v1/api/articles/$a->{id}", $K, '{"title":'), 400, 'invalid_request',
              'patch, malformed JSON');
    $p = req(PATCH => "/v1/api/articles/$a->{id}", $K, { id => $NOBODY, comment_count => 5, created_at => '2000-01-01T00:00:00Z' });
    is $p->{status}, 200, 'patch read-only fields: 200 (ignored)' or diag diag_resp($p);
    ok(($p->{json}{article}{id} // '') eq $a->{id} && $p->{json}{article}{comment_count} == 0
       && $p->{json}{article}{created_at} eq $a->{created_at}, 'patch read-only fields: unchanged');
    my $now = req(GET => "/v1/api/articles/$a->{id}", $K)->{json}{article};
    is $now->{title}, 'Patched', 'the refused patches changed nothing';
}

# --- revisions -------------------------------------------------------------------------

{
    my $a = mk($K, { title => 'Rev', body => '<p>one</p>' });
    my $id = $a->{id};
    my @steps = (
        [{ title => 'Rev 2' }, 2, 'title change'],
        [{ tags => ['x'] }, 2, 'tags only: no revision'],
        [{ is_featured => $T }, 2, 'is_featured only: no revision'],
        [{ focus_keyword => 'k', image_url => 'https://i.example/1.png', read_time_minutes => 4 }, 2,
         'focus_keyword, image_url, read_time_minutes: no revision'],
        [{ category_id => $cat }, 2, 'category only: no revision'],
        [{ title => 'Rev 3', autosave => $T }, 2, 'title change with autosave: no revision'],
        [{ body => '<p>two</p>', autosave => $T }, 2, 'body change with autosave: no revision'],
        [{ body => '<p>three</p>', autosave => $F }, 3, 'body change, autosave false'],
        [{ subtitle => 'sub' }, 4, 'subtitle change'],
        [{ excerpt => 'sub 2' }, 5, 'subtitle change by excerpt'],
        [{ slug => 'rev-slug' }, 6, 'slug change'],
        [{ status => 'in_review' }, 7, 'status change'],
        [{ status => 'in_review', title => 'Rev 3' }, 7, 'same values again: no revision'],
        [{ status => 'draft', autosave => $T }, 7, 'status change with autosave: no revision'],
        [{}, 7, 'empty patch: no revision'],
    );
    is revisions($id), 1, 'revisions: one on create';
    for my $s (@steps) {
        my ($body, $n, $name) = @$s;
        my $p = req(PATCH => "/v1/api/articles/$id", $K, $body);
        is $p->{status}, 200, "revisions, $name: 200" or diag diag_resp($p);
        is revisions($id), $n, "revisions, $name: $n rows";
    }
    is_deeply psql("SELECT snapshot->>'title', snapshot->>'body', snapshot->>'slug', created_by::text"
                   . " FROM article_revisions WHERE article_id = '$id' ORDER BY created_at DESC, id DESC LIMIT 1"),
        [['Rev 3', '<p>three</p>', 'rev-slug', $oid]], 'the last snapshot holds the article as it became';
    check_err(req(PATCH => "/v1/api/articles/$id", $K, { title => '' }), 400, 'title_required', 'a refused patch');
    is revisions($id), 7, 'a refused patch writes no revision';
}

# --- outbox ----------------------------------------------------------------------------

{
    my $a = mk($K, { title => 'Evented' });
    my $id = $a->{id};
    req(PATCH => "/v1/api/articles/$id", $K, { title => 'Evented 2' });
    is_deeply events($id), [], 'draft changes: no events';
    req(PATCH => "/v1/api/articles/$id", $K, { status => 'published' });
    is_deeply events($id), ['article.published'], 'becomes published: article.published';
    req(PATCH => "/v1/api/articles/$id", $K, { title => 'Evented 3' });
    req(PATCH => "/v1/api/articles/$id", $K, { tags => ['t'], autosave => $T });
    is_deeply events($id), [qw(article.published article.updated article.updated)],
        'a published article changes (even tags, even autosave): article.updated';
    is one("SELECT data->>'title' FROM outbox_events WHERE data->>'id' = '$id' AND type = 'article.updated'"
           . ' ORDER BY created_at LIMIT 1'), 'Evented 3', 'the event data is the article';
    req(PATCH => "/v1/api/articles/$id", $K, { status => 'draft' });
    is_deeply events($id), [qw(article.published article.updated article.updated article.unpublished)],
        'leaves published: article.unpublished';
    req(PATCH => "/v1/api/articles/$id", $K, { title => 'Evented 4' });
    is scalar @{events($id)}, 4, 'a draft again: no event';
    req(PATCH => "/v1/api/articles/$id", $K, { status => 'published' });
    is req(DELETE => "/v1/api/articles/$id", $K)->{status}, 204, 'delete the published article';
    is_deeply [@{events($id)}[4, 5]], [qw(article.published article.unpublished)],
        'delete a published article: article.unpublished';
    my $d = mk($K, { title => 'Deleted draft' });
    req(DELETE => "/v1/api/articles/$d->{id}", $K);
    is_deeply events($d->{id}), [], 'delete a draft: no event';
    is one("SELECT count(*) FROM outbox_events WHERE workspace_id <> '$wid' AND data->>'id' = '$id'"), 0,
        'events are in the article\'s workspace';
    my $same = mk($K, { title => 'No-op', status => 'published' });
    req(PATCH => "/v1/api/articles/$same->{id}", $K, {});
    req(PATCH => "/v1/api/articles/$same->{id}", $K, { title => 'No-op' });
    is_deeply events($same->{id}), ['article.published'],
        'patches of a published article that change nothing: no article.updated';
}

# --- GET / PATCH / DELETE by id: not found ---------------------------------------------

my $theirs = mk($K2, { title => 'Theirs', status => 'published' });
{
    for my $id ($NOBODY, 'not-a-uuid', '12345', $theirs->{id}, uc $NOBODY . 'x') {
        check_err(req(GET => "/v1/api/articles/$id", $K), 404, 'not_found', "get $id");
        check_err(req(PATCH => "/v1/api/articles/$id", $K, { title => 'mine now' }), 404, 'not_found', "patch $id");
        check_err(req(DELETE => "/v1/api/articles/$id", $K), 404, 'not_found', "delete $id");
    }
    is_deeply req(GET => "/v1/api/articles/$theirs->{id}", $K2)->{json}{article}, $theirs,
        'the other workspace\'s article is untouched';
    is one("SELECT deleted_at IS NULL FROM articles WHERE id = '$theirs->{id}'"), 't', '... and not deleted';
    my %mine = map { $_->{id} => 1 } @{req(GET => '/v1/api/articles?limit=100', $K)->{json}{articles} // []};
    ok !$mine{$theirs->{id}}, 'the other workspace\'s article is not in my list';
    check_err(req(GET => '/v1/api/articles/', $K), 404, 'not_found', 'get with an empty id');
}

# --- DELETE ----------------------------------------------------------------------------

{
    my $a = mk($K, { title => 'Doomed', slug => 'doomed' });
    my $r = req(DELETE => "/v1/api/articles/$a->{id}", $K);
    is $r->{status}, 204, 'delete: 204';
    is $r->{body}, '', 'delete: no body';
    check_err(req(GET => "/v1/api/articles/$a->{id}", $K), 404, 'not_found', 'get after delete');
    check_err(req(PATCH => "/v1/api/articles/$a->{id}", $K, { title => 'Back' }), 404, 'not_found', 'patch after delete');
    check_err(req(DELETE => "/v1/api/articles/$a->{id}", $K), 404, 'not_found', 'delete again');
    my %ids = map { $_->{id} => 1 } @{req(GET => '/v1/api/articles?limit=100', $K)->{json}{articles} // []};
    ok !$ids{$a->{id}}, 'delete: gone from the list';
    is_deeply psql("SELECT title, deleted_at IS NOT NULL FROM articles WHERE id = '$a->{id}'"), [['Doomed', 't']],
        'delete: the row stays, with deleted_at';
    is mk($K, { title => 'Doomed again', slug => 'doomed' })->{slug}, 'doomed', 'delete: the slug can be reused';
}

# --- lists -----------------------------------------------------------------------------

{
    my $lu = signup();
    my $lw = workspace($lu->{token}, 'Lists');
    my $LK = key($lu->{token}, $lw, 'lists', 'articles:read', 'articles:write');
    my $LR = key($lu->{token}, $lw, 'lists ro', 'articles:read');
    my $e = req(GET => '/v1/api/articles', $LK);
    is $e->{status}, 200, 'empty list: 200';
    is_deeply $e->{json}, { articles => [], pagination => { total => 0, limit => 50, offset => 0 } },
        'empty list: {articles: [], pagination}';

    my @made;
    my @st = qw(draft in_review published archived draft);
    for my $i (1 .. 25) {
        push @made, mk($LK, { title => "List $i", status => $st[$i % 5] });
    }
    my @fr = map { mk($LK, { title => "Liste $_", locale => 'fr' }) } 1 .. 3;
    my @newest = map { $_->{id} } reverse @made;

    my $l = req(GET => '/v1/api/articles', $LR);
    is $l->{status}, 200, 'list: 200';
    is_deeply [sort keys %{$l->{json} // {}}], ['articles', 'pagination'], 'list: {articles, pagination}';
    is_deeply $l->{json}{pagination}, { total => 25, limit => 50, offset => 0 }, 'list: pagination defaults';
    is_deeply [map { $_->{id} } @{$l->{json}{articles}}], \@newest, 'list: newest first, drafts included, default locale only';
    is_deeply $l->{json}{articles}[0], $made[-1], 'list: full article records';
    is_deeply [sort keys %{$l->{json}{articles}[0]}], \@FIELDS, 'list: every field';

    my $page = sub {
        my $q = shift;
        my $r = req(GET => "/v1/api/articles$q", $LK);
        return [$r->{status}, $r->{json}{pagination}, [map { $_->{id} } @{$r->{json}{articles} // []}]];
    };
    is_deeply $page->('?limit=10'), [200, { total => 25, limit => 10, offset => 0 }, [@newest[0 .. 9]]], 'limit=10';
    is_deeply $page->('?limit=10&offset=10'), [200, { total => 25, limit => 10, offset => 10 }, [@newest[10 .. 19]]],
        'limit=10&offset=10';
    is_deeply $page->('?limit=10&offset=20'), [200, { total => 25, limit => 10, offset => 20 }, [@newest[20 .. 24]]],
        'limit=10&offset=20: the last 5';
    is_deeply $page->('?offset=25'), [200, { total => 25, limit => 50, offset => 25 }, []], 'offset=25: empty page';
    is_deeply $page->('?offset=1000'), [200, { total => 25, limit => 50, offset => 1000 }, []], 'offset past the end';
    is_deeply $page->('?limit=1'), [200, { total => 25, limit => 1, offset => 0 }, [$newest[0]]], 'limit=1';
    is_deeply $page->('?limit=100'), [200, { total => 25, limit => 100, offset => 0 }, \@newest], 'limit=100 (the maximum)';
    for my $lim ('0', '101', '-1', 'abc', '', '1e2', '10abc', '99999999999999999999') {
        is_deeply $page->("?limit=$lim"), [200, { total => 25, limit => 50, offset => 0 }, \@newest],
            "limit='$lim': falls back to 50";
    }
    for my $off ('-1', 'abc', '', '-100', '1.5x') {
        is_deeply $page->("?limit=5&offset=$off"), [200, { total => 25, limit => 5, offset => 0 }, [@newest[0 .. 4]]],
            "offset='$off': 0";
    }
    my %want;
    push @{$want{$_->{status}}}, $_->{id} for reverse @made;
    for my $s (qw(draft in_review published archived)) {
        is_deeply $page->("?status=$s"), [200, { total => scalar @{$want{$s}}, limit => 50, offset => 0 }, $want{$s}],
            "status=$s";
    }
    is_deeply $page->('?status=scheduled'), [200, { total => 0, limit => 50, offset => 0 }, []], 'status=scheduled: none';
    is_deeply $page->('?status=draft&limit=2&offset=1'),
        [200, { total => scalar @{$want{draft}}, limit => 2, offset => 1 }, [@{$want{draft}}[1, 2]]],
        'status with paging';
    check_err(req(GET => '/v1/api/articles?status=bogus', $LK), 400, 'invalid_status', 'list status=bogus');
    check_err(req(GET => '/v1/api/articles?status=', $LK), 400, 'invalid_status', 'list status empty');
    is_deeply $page->('?locale=fr'), [200, { total => 3, limit => 50, offset => 0 }, [map { $_->{id} } reverse @fr]],
        'locale=fr';
    is_deeply $page->('?locale=de'), [200, { total => 0, limit => 50, offset => 0 }, []], 'locale=de: none';
    is_deeply $page->('?locale=en&status=published'), $page->('?status=published'), 'locale=en is the default';
    check_err(req(GET => '/v1/api/articles?locale=!!', $LK), 400, 'invalid_field_value', 'list locale=!!');

    # Another default locale for the workspace: lists and creates follow it.
    psql("UPDATE workspaces SET default_locale = 'fr' WHERE id = '$lw'");
    is_deeply $page->(''), [200, { total => 3, limit => 50, offset => 0 }, [map { $_->{id} } reverse @fr]],
        'default locale fr: the list shows fr';
    is mk($LK, { title => 'Défaut' })->{locale}, 'fr', 'default locale fr: a new article is fr';

    # Ties on created_at are broken by id, descending.
    psql("UPDATE articles SET created_at = '2024-01-01T00:00:00Z' WHERE workspace_id = '$lw' AND locale = 'fr'");
    my @tied = map { $_->[0] } @{psql("SELECT id FROM articles WHERE workspace_id = '$lw' AND locale = 'fr' ORDER BY id DESC")};
    is_deeply $page->('')->[2], \@tied, 'equal created_at: id descending';

    # Deleted ones are not counted.
    req(DELETE => "/v1/api/articles/$made[-1]{id}", $LK);
    is_deeply $page->('?locale=en&limit=3'), [200, { total => 24, limit => 3, offset => 0 }, [@newest[1 .. 3]]],
        'a deleted article leaves the list and the total';
    my $ol = req(GET => '/v1/api/articles?locale=en&limit=100', $K2)->{json};
    is $ol->{pagination}{total},
        one("SELECT count(*) FROM articles WHERE workspace_id = '$wid2' AND locale = 'en' AND deleted_at IS NULL"),
        'another workspace\'s key: its own total';
    ok !grep({ my $x = $_->{id}; grep { $_->{id} eq $x } @made } @{$ol->{articles}}),
        'another workspace\'s key sees none of these';

    # The total comes from counters the writes keep (sql/0006): it follows
    # status and locale changes, SQL writes too, and a scheduled article
    # whose time has come counts as published.
    my $real = sub {
        my ($loc, $st) = @_;
        my $f = $st ? "AND cms_article_status(a) = '$st'" : '';
        return one("SELECT count(*) FROM articles a WHERE workspace_id = '$lw' AND locale = '$loc'"
                   . " AND deleted_at IS NULL $f");
    };
    # ($want{draft}[0] is the one deleted above)
    is req(PATCH => "/v1/api/articles/$want{draft}[1]", $LK, { status => 'in_review' })->{status}, 200,
        'count: a draft to review';
    is req(PATCH => "/v1/api/articles/$want{draft}[2]", $LK, { locale => 'de' })->{status}, 200,
        'count: a draft to de';
    psql("UPDATE articles SET status = 'scheduled', published_at = now() - interval '1 hour'"
         . " WHERE id = '$want{archived}[0]'");
    psql("UPDATE articles SET status = 'scheduled', published_at = now() + interval '1 day'"
         . " WHERE id = '$want{archived}[1]'");
    for my $loc (qw(en de fr)) {
        for my $st (undef, qw(draft in_review scheduled published archived)) {
            my $q = "?locale=$loc" . ($st ? "&status=$st" : '') . '&limit=1';
            is req(GET => "/v1/api/articles$q", $LR)->{json}{pagination}{total}, $real->($loc, $st),
                "count: total of $q is the real count";
        }
    }
    is $page->('?locale=en&status=scheduled')->[2][0], $want{archived}[1], 'count: only the future one is scheduled';
    ok grep({ $_ eq $want{archived}[0] } @{$page->('?locale=en&status=published')->[2]}),
        'count: the due one is listed as published';

    # The deepest offset (docs/api-notes.md, Pagination): beyond it 400, not a silent first page.
    is_deeply $page->('?locale=en&offset=100000'), [200, { total => $real->('en'), limit => 50, offset => 100000 }, []],
        'offset=100000 (the cap): an empty page';
    check_err(req(GET => '/v1/api/articles?offset=100001', $LK), 400, 'invalid_field_value', 'offset beyond the cap');

    # The key and the page are read in one statement; a query the list
    # refuses falls back to the key alone, so the credential is judged first.
    my $gone = key($lu->{token}, $lw, 'gone', 'articles:read');
    psql("UPDATE api_keys SET revoked_at = now() WHERE workspace_id = '$lw' AND name = 'gone'");
    check_err(req(GET => '/v1/api/articles?status=bogus', $gone), 401, 'invalid_api_key',
              'a revoked key and a bad query: 401 first');
    check_err(req(GET => '/v1/api/articles', $gone), 401, 'invalid_api_key', 'a revoked key: 401');
    check_err(req(GET => '/v1/api/articles?offset=100001', $LR), 400, 'invalid_field_value',
              'a good key and a bad query: the query\'s error');
}

# --- methods, concurrency, text ---------------------------------------------------------

{
    my $a = mk($K, { title => 'Methods' });
    for my $t ([PUT => "/v1/api/articles/$a->{id}"], [POST => "/v1/api/articles/$a->{id}"],
               [PUT => '/v1/api/articles'], [DELETE => '/v1/api/articles']) {
        my ($m, $p) = @$t;
        my $r = req($m, $p, $K, { title => 'x' });
        check_err($r, 405, 'method_not_allowed', "$m $p");
        like $r->{headers}{allow} // '', qr/GET/, "$m $p: Allow lists GET";
    }

    # Two creates of one slug at once: one wins, the other is told slug_taken.
    my @rs = parallel_requests(map { [POST => '/v1/api/articles',
                                      [Authorization => "Bearer $K", 'Content-Type' => 'application/json'],
                                      $JSON->encode({ title => "Race $_", slug => 'race' })] } 1 .. 4);
    is_deeply [sort map { $_->{status} } @rs], [201, 409, 409, 409], 'four racing creates of one slug: one 201, three 409'
        or diag join ', ', map { diag_resp($_) } @rs;
    is one("SELECT count(*) FROM articles WHERE slug = 'race' AND workspace_id = '$wid'"), 1, 'one row with that slug';

    # Text round-trips as UTF-8.
    my $u = mk($K, { title => 'Ünïcødé ✓ 😀 "quoted" \\ back', subtitle => "line\nbreak\ttab", tags => ['naïve', '日本'],
                     body => '<p>café &amp; ☕ &lt;tag&gt;</p>' });
    is $u->{title}, 'Ünïcødé ✓ 😀 "quoted" \\ back', 'UTF-8 title round-trips';
    is $u->{subtitle}, "line\nbreak\ttab", 'control characters in the subtitle round-trip';
    is_deeply $u->{tags}, ['naïve', '日本'], 'UTF-8 tags round-trip';
    like $u->{body}, qr/café &amp; ☕ &lt;tag&gt;/, 'escaped text in the body stays escaped';
    is $u->{slug}, 'unicode-quoted-back', 'slug from a title with symbols';

    # Reads are written in C from the columns (the times' and the tags' text); each
    # read must answer what the write answered (cms_article_json(), sql/0003) to the
    # byte: tags PostgreSQL's array text quotes or escapes, and a time with microseconds
    # (truncated to the millisecond, as cms_ts() does).
    my $odd = mk($K, { title => 'Odd tags', status => 'scheduled',
                       published_at => '2031-01-02T03:04:05.678901+02:00',
                       tags => ['a b', 'q"uote', 'back\\slash', 'com,ma', 'NULL', 'null', '{brace}',
                                "tab\tline\n", 'ünï', '"', '\\', ' lead', 'x' x 100] });
    is $odd->{published_at}, '2031-01-02T01:04:05.678Z', 'the write: published_at in UTC, truncated to ms';
    is $odd->{status}, 'scheduled', 'the write: a future publication is scheduled';
    my %read = (api => req(GET => "/v1/api/articles/$odd->{id}", $K),
                studio => req(GET => "/v1/workspaces/$wid/articles/$odd->{id}", $owner->{token}));
    for my $how (sort keys %read) {
        is $read{$how}{status}, 200, "$how read: 200" or diag diag_resp($read{$how});
        is_deeply $read{$how}{json}{article}, $odd, "$how read: the write's answer, member for member";
    }
    my $listed = req(GET => '/v1/api/articles?limit=100', $K);
    my ($item) = grep { $_->{id} eq $odd->{id} } @{ $listed->{json}{articles} // [] };
    is_deeply $item, $odd, 'the list: the same article';
    my $zero = mk($K, { title => 'Whole second', published_at => '2030-06-07T08:09:10Z', tags => [] });
    my $z = req(GET => "/v1/api/articles/$zero->{id}", $K)->{json}{article};
    is $z->{published_at}, '2030-06-07T08:09:10.000Z', 'a whole second: .000Z';
    is_deeply $z->{tags}, [], 'no tags: []';
    is_deeply $z, $zero, 'and the rest as written';
    # tags the API never writes but SQL can: a two-dimensional array (many short elements,
    # then a quoted one, in each row) is flattened, its elements in order
    my $many = join ',', map { "{" . join(',', ('a') x 150) . ",\"x y\"}" } 1 .. 2;
    psql("UPDATE articles SET tags = '{$many}' WHERE id = '$zero->{id}'");
    my $two = req(GET => "/v1/api/articles/$zero->{id}", $K);
    is $two->{status}, 200, 'a two-dimensional tags array: 200' or diag diag_resp($two);
    is_deeply $two->{json}{article}{tags}, [(('a') x 150, 'x y') x 2], '... its elements, flattened';
    psql("UPDATE articles SET tags = '{}' WHERE id = '$zero->{id}'");
    psql("UPDATE articles SET published_at = now() - interval '1 minute' WHERE id = '$odd->{id}'");
    is req(GET => "/v1/api/articles/$odd->{id}", $K)->{json}{article}{status}, 'published',
        'a scheduled article whose time has come reads published';
    my $nul = req(POST => '/v1/api/articles', $K, { title => "nul\x{0}byte" });
    ok $nul->{status} == 400 && ($nul->{json}{code} // '') =~ /^(invalid_request|invalid_field_value)$/,
        'a NUL character (\\u0000) in the title: 400' or diag diag_resp($nul);
}

# --- publish rights by the key creator's current role ----------------------------------
# The articles a key acts on here are its creator's own (author_id), which an author may
# write (t/036-roles.t has the whole role matrix: others' articles, categories, sessions).
# A viewer's key writes nothing: 403 forbidden before publish rights are looked at.

{
    my $holder = signup();
    my $hid = $holder->{user}{id};
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$hid', 'admin')");
    my $HK = key($holder->{token}, $wid, 'holder', 'articles:read', 'articles:write');
    my $setrole = sub { psql("UPDATE members SET role = '$_[0]' WHERE workspace_id = '$wid' AND user_id = '$hid'") };
    my %can = (owner => 1, admin => 1, editor => 1, author => 1, viewer => 0);
    my %mine = (author_id => $hid);
    my $n = 0;
    for my $role (qw(owner admin editor author viewer)) {
        $setrole->($role);
        my $c = $can{$role};
        my $tag = "key of a $role";
        $n++;

        my $r = req(POST => '/v1/api/articles', $HK, { title => "Pub $role $n", status => 'published' });
        $c ? is($r->{status}, 201, "$tag: create published: 201") : check_err($r, 403, 'forbidden', "$tag: create published");
        is $r->{json}{article}{author_id}, $hid, "$tag: author is the key creator" if $c;
        $r = req(POST => '/v1/api/articles', $HK, { title => "Sched $role $n", status => 'scheduled',
                                                    published_at => '2099-01-01T00:00:00Z' });
        $c ? is($r->{status}, 201, "$tag: create scheduled: 201") : check_err($r, 403, 'forbidden', "$tag: create scheduled");
        for my $s (qw(draft in_review archived)) {
            $r = req(POST => '/v1/api/articles', $HK, { title => "$s $role $n", status => $s });
            $c ? is($r->{status}, 201, "$tag: create $s: 201") : check_err($r, 403, 'forbidden', "$tag: create $s");
        }

        my $d = mk($K, { title => "Draft for $role", %mine });
        $r = req(PATCH => "/v1/api/articles/$d->{id}", $HK, { title => "Draft for $role, edited" });
        $c ? is($r->{status}, 200, "$tag: patch a draft: 200") : check_err($r, 403, 'forbidden', "$tag: patch a draft");
        $r = req(PATCH => "/v1/api/articles/$d->{id}", $HK, { status => 'in_review' });
        $c ? is($r->{status}, 200, "$tag: draft to in_review: 200")
           : check_err($r, 403, 'forbidden', "$tag: draft to in_review");
        $r = req(PATCH => "/v1/api/articles/$d->{id}", $HK, { status => 'published' });
        $c ? is($r->{status}, 200, "$tag: patch to published: 200") : check_err($r, 403, 'forbidden', "$tag: patch to published");
        $r = req(PATCH => "/v1/api/articles/$d->{id}", $HK, { status => 'scheduled', published_at => '2099-01-01T00:00:00Z' });
        $c ? is($r->{status}, 200, "$tag: patch to scheduled: 200") : check_err($r, 403, 'forbidden', "$tag: patch to scheduled");
        unless ($c) {
            is_deeply req(GET => "/v1/api/articles/$d->{id}", $K)->{json}{article}, $d,
                "$tag: the refused writes changed nothing";
            is_deeply events($d->{id}), [], "$tag: no event for the refused publish";
        }

        for my $live (['published', {}], ['scheduled', { published_at => '2099-01-01T00:00:00Z' }],
                      ['scheduled in the past', { published_at => '2020-01-01T00:00:00Z' }]) {
            my ($what, $extra) = @$live;
            (my $st = $what) =~ s/ .*//;
            my $a = mk($K, { title => "Live $what for $role", status => $st, %$extra, %mine });
            my $revs = revisions($a->{id});
            $r = req(PATCH => "/v1/api/articles/$a->{id}", $HK, { title => "Live $what, edited by $role" });
            $c ? is($r->{status}, 200, "$tag: patch a $what article: 200")
               : check_err($r, 403, 'forbidden', "$tag: patch a $what article");
            $r = req(PATCH => "/v1/api/articles/$a->{id}", $HK, { tags => ['x'], autosave => $T });
            $c ? is($r->{status}, 200, "$tag: autosave a $what article: 200")
               : check_err($r, 403, 'forbidden', "$tag: autosave a $what article");
            $r = req(PATCH => "/v1/api/articles/$a->{id}", $HK, { status => 'draft' });
            $c ? is($r->{status}, 200, "$tag: unpublish a $what article: 200")
               : check_err($r, 403, 'forbidden', "$tag: unpublish a $what article");
            unless ($c) {
                is_deeply req(GET => "/v1/api/articles/$a->{id}", $K)->{json}{article}, $a,
                    "$tag: the $what article is unchanged";
                is revisions($a->{id}), $revs, "$tag: no revision for the refused patches";
            }
            my $b = mk($K, { title => "Live $what to delete for $role", status => $st, %$extra, %mine });
            $r = req(DELETE => "/v1/api/articles/$b->{id}", $HK);
            $c ? is($r->{status}, 204, "$tag: delete a $what article: 204")
               : check_err($r, 403, 'forbidden', "$tag: delete a $what article");
            is one("SELECT deleted_at IS NULL FROM articles WHERE id = '$b->{id}'"), 't',
                "$tag: the $what article is not deleted" unless $c;
        }
        my $arch = mk($K, { title => "Archived for $role", status => 'archived', %mine });
        $r = req(PATCH => "/v1/api/articles/$arch->{id}", $HK, { title => "Archived, edited by $role" });
        $c ? is($r->{status}, 200, "$tag: patch an archived article: 200")
           : check_err($r, 403, 'forbidden', "$tag: patch an archived article");
        my $dd = mk($K, { title => "Draft to delete for $role", %mine });
        $r = req(DELETE => "/v1/api/articles/$dd->{id}", $HK);
        $c ? is($r->{status}, 204, "$tag: delete a draft: 204") : check_err($r, 403, 'forbidden', "$tag: delete a draft");
        is one("SELECT deleted_at IS NULL FROM articles WHERE id = '$dd->{id}'"), 't',
            "$tag: the draft is not deleted" unless $c;
        is req(GET => '/v1/api/articles', $HK)->{status}, 200, "$tag: list: 200";
    }
    # The role is read on each request: back to author, publishing works at once.
    $setrole->('author');
    is req(POST => '/v1/api/articles', $HK, { title => 'Author again', status => 'published' })->{status}, 201,
        'promoted back to author: publishes at once';

    # cannot_publish and cannot_edit_live stay in cms_article_save() for a writer without
    # publish rights; among the five roles none is left (a viewer writes nothing and is
    # refused first), so the rule is checked on the SQL functions themselves.
    my $sql_err = sub {
        return 'no error' if eval { psql($_[0]); 1 };
        return $@ =~ /ERROR:\s+(\w+)/ ? $1 : $@;
    };
    my $live = mk($K, { title => 'Live, without publish rights', status => 'published', %mine });
    is $sql_err->("SELECT cms_article_save_as('$wid', '$hid', false, false, NULL,"
                  . " '{\"title\": \"No rights\", \"status\": \"published\"}', false)"), 'cannot_publish',
        'SQL: publishing without publish rights: cannot_publish';
    is $sql_err->("SELECT cms_article_save_as('$wid', '$hid', false, false, '$live->{id}',"
                  . " '{\"title\": \"No rights\"}', false)"), 'cannot_edit_live',
        'SQL: editing a live article without publish rights: cannot_edit_live';
    is $sql_err->("SELECT cms_article_delete_as('$wid', '$hid', false, false, '$live->{id}')"), 'cannot_edit_live',
        'SQL: deleting a live article without publish rights: cannot_edit_live';
    is_deeply req(GET => "/v1/api/articles/$live->{id}", $K)->{json}{article}, $live, 'SQL: the live article is unchanged';
}

# --- image_url: an absolute http(s) URL, or "" for none (issue 11) -----------------------
# javascript:, data:, vbscript:, relative and scheme-relative URLs, "http://" alone, spaces,
# control characters, userinfo, non-ASCII hosts: 400 invalid_url on POST and PATCH, over the
# secret-key routes and the studio mirror (t/lib/Cms/Fixtures.pm, check_url_field).

check_url_field($K, article => '/v1/api/articles', { title => 'URL check' }, 'image_url');
check_url_field($owner->{token}, article => "/v1/workspaces/$wid/articles", { title => 'Studio URL check' },
                'image_url');

done_testing();
