# Videos over /v1/api (secret key) and the studio mirrors (session): credentials and
# scopes on every route; create with a title only (defaults: draft, en, slug derived) and
# with every field; validation (every code a field can give); derived slugs take -2, -3...
# (also under concurrency) while an explicit slug still answers slug_taken; non-Latin
# titles keep their letters; clear_stream and nulls unset stream fields; publishing sets
# published_at and writes video.published once, in the same transaction; publish rights
# on the SQL functions; get, patch, delete; another workspace's ids; the list's paging
# edges and status filter (fused with the key, and the studio's); the studio mirror.
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(check_url_field req req_spec diag_resp check_err one signup signup_defaults workspace key
                     $UUID $TS);
use JSON::PP ();

signup_defaults(email_prefix => 'vid');

my @FIELDS = sort qw(id title slug description poster_url stream_video_id stream_library_id stream_status
                     source_url duration_seconds status locale published_at created_at updated_at);
my $NOBODY = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';

start_nginx();

my $owner = signup();
my $wid = workspace($owner->{token}, 'Videos');
my $K = key($owner->{token}, $wid, 'rw', qw(videos:read videos:write));
my $KR = key($owner->{token}, $wid, 'ro', 'videos:read');
my $KW = key($owner->{token}, $wid, 'wo', 'videos:write');
my $KA = key($owner->{token}, $wid, 'articles', 'articles:read', 'articles:write');

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other', qw(videos:read videos:write));

sub mkvid {
    my ($cred, $f, $path) = @_;
    my $r = req(POST => $path // '/v1/api/videos', $cred, $f);
    die 'create video: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{video};
}
sub events { one("SELECT count(*) FROM outbox_events WHERE type = 'video.published' AND data->>'id' = '$_[0]'") }

# --- credentials and scopes ------------------------------------------------------------

{
    my $v = mkvid($K, { title => 'Auth target' });
    my $bad = 'svc_live_' . ('A' x 49);
    for my $t ([GET => '/v1/api/videos', undef, 'read'], [POST => '/v1/api/videos', { title => 'x' }, 'write'],
               [GET => "/v1/api/videos/$v->{id}", undef, 'read'],
               [PATCH => "/v1/api/videos/$v->{id}", { title => 'x' }, 'write'],
               [DELETE => "/v1/api/videos/$v->{id}", undef, 'write']) {
        my ($m, $p, $b, $need) = @$t;
        check_err(req($m, $p, undef, $b), 401, 'missing_token', "$m $p without a key");
        check_err(req($m, $p, $bad, $b), 401, 'invalid_api_key', "$m $p with a bad key");
        check_err(req($m, $p, $owner->{token}, $b), 401, 'invalid_api_key', "$m $p with a session token");
        check_err(req($m, $p, $need eq 'read' ? $KW : $KR, $b), 403, 'missing_scope', "$m $p without videos:$need");
        check_err(req($m, $p, $KA, $b), 403, 'missing_scope', "$m $p with only articles scopes");
    }
    is_deeply req(GET => "/v1/api/videos/$v->{id}", $KR)->{json}, { video => $v },
        'read-only key reads; the refused writes changed nothing';
    is one("SELECT count(*) FROM videos WHERE title = 'x'"), 0, 'no refused create was stored';
    check_err(req(PUT => '/v1/api/videos', $K, {}), 405, 'method_not_allowed', 'PUT /videos');
}

# --- create ----------------------------------------------------------------------------

my $r = req(POST => '/v1/api/videos', $K, { title => 'First Light' });
is $r->{status}, 201, 'create with a title only: 201' or diag diag_resp($r);
is_deeply [sort keys %{$r->{json} // {}}], ['video'], 'create: wrapped in {video}';
my $first = $r->{json}{video} // {};
is_deeply [sort keys %$first], \@FIELDS, 'create: every video field, nothing else';
like $first->{id} // '', $UUID, 'create: id is a uuid';
like $first->{$_} // '', $TS, "create: $_ is an RFC 3339 UTC time" for qw(created_at updated_at);
is_deeply { map { $_ => $first->{$_} } grep { !/^(id|created_at|updated_at)$/ } @FIELDS },
    { title => 'First Light', slug => 'first-light', description => '', poster_url => '', stream_video_id => undef,
      stream_library_id => undef, stream_status => undef, source_url => undef, duration_seconds => undef,
      status => 'draft', locale => 'en', published_at => undef },
    'create: defaults (draft, en, slug from the title, stream fields null)';
is events($first->{id}), 0, 'a draft writes no event';

my %full = (title => 'Full video', slug => 'full', description => 'All of it', poster_url => 'https://i.example/p.jpg',
            stream_video_id => 'vid-123', stream_library_id => 'lib-9', stream_status => 'ready',
            source_url => 'https://media.example/v.mp4', duration_seconds => 93.25, status => 'published',
            locale => 'pt-BR', published_at => '2026-01-02T03:04:05.678Z');
$r = req(POST => '/v1/api/videos', $K, \%full);
is $r->{status}, 201, 'create with every field: 201' or diag diag_resp($r);
my $full = $r->{json}{video} // {};
is $full->{$_}, $full{$_}, "create: $_ kept" for sort keys %full;
is events($full->{id}), 1, 'create published: one video.published in the outbox';
is one("SELECT data->>'slug' FROM outbox_events WHERE type = 'video.published' AND data->>'id' = '$full->{id}'"),
    'full', 'the event carries the video';
is_deeply req(GET => "/v1/api/videos/$full->{id}", $KR)->{json}, { video => $full }, 'get: the same record';
my $pub = mkvid($K, { title => 'Published now', status => 'published' });
like $pub->{published_at} // '', $TS, 'published without published_at: set to now';
is mkvid($K, { title => 'Integer duration', duration_seconds => 60 })->{duration_seconds}, 60,
    'duration_seconds an integer';
my $ro = mkvid($K, { title => 'Read only', id => $NOBODY, created_at => '2000-01-01T00:00:00Z' });
ok $ro->{id} ne $NOBODY && $ro->{created_at} !~ /^2000/, 'read-only fields ignored';
is mkvid($K, { title => 'Nulls', stream_video_id => undef, source_url => undef, published_at => undef,
               description => undef })->{description}, '', 'null on create: defaults';

my $before = one('SELECT count(*) FROM videos');
for my $t (
    [{}, 'title_required', 'no title'],
    [{ title => '' }, 'title_required', 'empty title'],
    [{ title => undef }, 'title_required', 'null title'],
    [{ description => 'd' }, 'title_required', 'description without a title'],
    [{ title => 'x' x 501 }, 'invalid_field_value', 'title of 501 characters'],
    [{ title => 5 }, 'invalid_field_value', 'title a number'],
    (map { [{ title => 'x', slug => $_ }, 'invalid_slug', "slug '$_'"] }
         'Bad Slug', 'a--b', '-a', 'a-', 'ABC', 'a_b', 'é', 'a.b', '', 'a' x 201),
    [{ title => 'x', slug => 'Мир' }, 'invalid_slug', 'slug in uppercase Cyrillic'],
    [{ title => 'x', slug => 5 }, 'invalid_field_value', 'slug a number'],
    (map { [{ title => 'x', status => $_ }, 'invalid_status', "status '$_'"] } 'live', 'PUBLISHED', '', 'scheduled'),
    (map { [{ title => 'x', stream_status => $_ }, 'invalid_status', "stream_status '$_'"] } 'done', 'READY', ''),
    [{ title => 'x', stream_status => 3 }, 'invalid_field_value', 'stream_status a number'],
    (map { [{ title => 'x', source_url => $_ }, 'invalid_url', "source_url '$_'"] }
         'javascript:alert(1)', '/v.mp4', '', 'ftp://media.example/v.mp4'),
    (map { [{ title => 'x', poster_url => $_ }, 'invalid_url', "poster_url '$_'"] } 'javascript:alert(1)', 'p.jpg'),
    (map { [{ title => 'x', duration_seconds => $_ }, 'invalid_field_value', "duration_seconds $_"] }
         -1, -0.5, 100000001),
    [{ title => 'x', duration_seconds => '12' }, 'invalid_field_value', 'duration_seconds a string'],
    [{ title => 'x', duration_seconds => JSON::PP::true }, 'invalid_field_value', 'duration_seconds a boolean'],
    (map { [{ title => 'x', locale => $_ }, 'invalid_field_value', "locale '$_'"] } 'e', '!!', ''),
    (map { [{ title => 'x', published_at => $_ }, 'invalid_field_value', "published_at '$_'"] }
         'yesterday', '2026-13-01T00:00:00Z', '2026-01-01 00:00:00'),
    [{ title => 'x', stream_video_id => '' }, 'invalid_field_value', 'stream_video_id empty'],
    [{ title => 'x', stream_library_id => 'l' x 201 }, 'invalid_field_value', 'stream_library_id too long'],
    [{ title => 'x', clear_stream => 'yes' }, 'invalid_field_value', 'clear_stream a string'],
    [{ title => 'x', author_id => $NOBODY }, 'invalid_request', 'an unknown field'],
) {
    my ($body, $code, $name) = @$t;
    my $r = req(POST => '/v1/api/videos', $K, $body);
    check_err($r, 400, $code, "create, $name");
}
check_err(req(POST => '/v1/api/videos', $K, '{"title":'), 400, 'invalid_request', 'create, malformed JSON');
check_err(req(POST => '/v1/api/videos', $K, '[]'), 400, 'invalid_request', 'create, a JSON array');
check_err(req(POST => '/v1/api/videos', $K), 400, 'invalid_request', 'create, no body');
is one('SELECT count(*) FROM videos'), $before, 'no refused create was stored';

# --- slugs -----------------------------------------------------------------------------

{
    my @s = map { mkvid($K, { title => 'Same Title' })->{slug} } 1 .. 3;
    is_deeply \@s, [qw(same-title same-title-2 same-title-3)], 'derived slugs: -2, -3 on collision';
    is mkvid($K, { title => 'Same Title', locale => 'fr' })->{slug}, 'same-title', 'another locale: the base again';
    is mkvid($K2, { title => 'Same Title' })->{slug}, 'same-title', 'another workspace: the base again';
    check_err(req(POST => '/v1/api/videos', $K, { title => 'Explicit', slug => 'same-title' }), 409, 'slug_taken',
              'an explicit slug that is taken: 409');
    my $e = mkvid($K, { title => 'Explicit', slug => 'same-title-10' });
    is mkvid($K, { title => 'Same title' })->{slug}, 'same-title-11', 'derived: one more than the largest taken';
    my $o = mkvid($K, { title => 'Other slug' });
    check_err(req(PATCH => "/v1/api/videos/$o->{id}", $K, { slug => 'same-title' }), 409, 'slug_taken',
              'patch to a taken slug: 409');
    is req(GET => "/v1/api/videos/$o->{id}", $K)->{json}{video}{slug}, 'other-slug', 'the refused patch changed nothing';
    is mkvid($K, { title => 'Привет, мир!' })->{slug}, 'привет-мир', 'a Cyrillic title keeps its letters';
    is mkvid($K, { title => 'Привет, мир!' })->{slug}, 'привет-мир-2', 'a Cyrillic slug takes -2 too';
    is mkvid($K, { title => '東京の夜' })->{slug}, '東京の夜', 'a Japanese title keeps its letters';
    is mkvid($K, { title => "\x{41f}\x{440}\x{438}\x{432}\x{435}\x{301}\x{442}" })->{slug}, "при\x{432}е\x{301}т",
        'a mark on a Cyrillic letter stays (NFC)';
    is mkvid($K, { title => "Cafe\x{301} Noir" })->{slug}, 'cafe-noir', 'decomposed Latin: ASCII as composed';
    is mkvid($K, { title => '!!! ???' })->{slug}, 'untitled', 'nothing usable: untitled';
    is mkvid($K, { title => '!!! ???' })->{slug}, 'untitled-2', 'untitled takes -2 too';
    is mkvid($K, { title => 'Explicit Unicode', slug => 'мир' })->{slug}, 'мир', 'an explicit non-Latin slug';
    my $long = mkvid($K, { title => join(' ', ('word') x 100) });
    ok length($long->{slug}) <= 190, 'a derived slug leaves room for its number';
    my $long2 = mkvid($K, { title => join(' ', ('word') x 100) });
    is $long2->{slug}, "$long->{slug}-2", 'a long derived slug takes -2 within 200 characters';

    # Concurrent creates of one title: every one 201, every slug different.
    my @r = parallel_requests(map { req_spec(POST => '/v1/api/videos', $K, { title => 'Race Title' }) } 1 .. 12);
    is scalar(grep { $_->{status} == 201 } @r), 12, '12 concurrent creates of one title: all 201'
        or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 201 } @r;
    my %seen = map { (($_->{json} // {})->{video} // {})->{slug} // 'none' => 1 } @r;
    is scalar(keys %seen), 12, '12 concurrent creates: 12 different slugs';
    is_deeply [sort { $a <=> $b } map { /^race-title(?:-(\d+))?$/ ? $1 // 1 : 0 } keys %seen], [1 .. 12],
        'concurrent creates: race-title, race-title-2 .. -12';
}

# --- patch, clear_stream, publishing ----------------------------------------------------

my $theirs = mkvid($K2, { title => 'Theirs' });
{
    my $v = mkvid($K, { title => 'Streamed', stream_video_id => 's1', stream_library_id => 'l1',
                        stream_status => 'processing', source_url => 'https://m.example/s.mp4' });
    select(undef, undef, undef, 0.05);
    my $p = req(PATCH => "/v1/api/videos/$v->{id}", $K, { title => 'Streamed 2', description => 'new',
                                                           duration_seconds => 1.5 });
    is $p->{status}, 200, 'patch: 200' or diag diag_resp($p);
    my $n = $p->{json}{video} // {};
    is_deeply [map { $n->{$_} } qw(title slug description duration_seconds stream_video_id created_at)],
        ['Streamed 2', 'streamed', 'new', 1.5, 's1', $v->{created_at}], 'patch: fields change, the slug stays';
    isnt $n->{updated_at}, $v->{updated_at}, 'patch: updated_at moves';
    is_deeply req(GET => "/v1/api/videos/$v->{id}", $K)->{json}{video}, $n, 'patch: read back';
    my $same = req(PATCH => "/v1/api/videos/$v->{id}", $K, { title => 'Streamed 2' })->{json}{video};
    is $same->{updated_at}, $n->{updated_at}, 'a patch that changes nothing keeps updated_at';

    $p = req(PATCH => "/v1/api/videos/$v->{id}", $K, { clear_stream => JSON::PP::true, stream_video_id => 's2',
                                                        stream_status => 'ready' });
    is_deeply [map { $p->{json}{video}{$_} } qw(stream_video_id stream_library_id stream_status source_url)],
        [undef, undef, undef, 'https://m.example/s.mp4'], 'clear_stream unsets the stream fields and wins';
    $p = req(PATCH => "/v1/api/videos/$v->{id}", $K, { stream_video_id => 's3', clear_stream => JSON::PP::false });
    is $p->{json}{video}{stream_video_id}, 's3', 'clear_stream false changes nothing';
    $p = req(PATCH => "/v1/api/videos/$v->{id}", $K, { stream_video_id => undef, source_url => undef,
                                                        duration_seconds => undef });
    is_deeply [map { $p->{json}{video}{$_} } qw(stream_video_id source_url duration_seconds)], [undef, undef, undef],
        'null unsets a nullable field';
    $p = req(PATCH => "/v1/api/videos/$v->{id}", $K, { title => undef, description => undef });
    is_deeply [map { $p->{json}{video}{$_} } qw(title description)], ['Streamed 2', 'new'],
        'null on title and description changes nothing';

    for my $t ([{ title => '' }, 'title_required', 'empty title'], [{ slug => 'No Good' }, 'invalid_slug', 'bad slug'],
               [{ status => 'live' }, 'invalid_status', 'bad status'],
               [{ stream_status => 'x' }, 'invalid_status', 'bad stream_status'],
               [{ source_url => 'javascript:alert(1)' }, 'invalid_url', 'bad source_url'],
               [{ duration_seconds => -3 }, 'invalid_field_value', 'negative duration'],
               [{ colour => 'red' }, 'invalid_request', 'unknown field']) {
        my ($body, $code, $name) = @$t;
        check_err(req(PATCH => "/v1/api/videos/$v->{id}", $K, $body), 400, $code, "patch, $name");
    }
    is_deeply req(GET => "/v1/api/videos/$v->{id}", $K)->{json}{video}, $p->{json}{video},
        'refused patches changed nothing';

    # Publishing: published_at set, video.published once; later edits and re-saves write no more.
    $p = req(PATCH => "/v1/api/videos/$v->{id}", $K, { status => 'published' });
    like $p->{json}{video}{published_at} // '', $TS, 'publish: published_at set';
    is events($v->{id}), 1, 'publish: one video.published';
    req(PATCH => "/v1/api/videos/$v->{id}", $K, { title => 'Edited live' });
    req(PATCH => "/v1/api/videos/$v->{id}", $K, { status => 'published' });
    is events($v->{id}), 1, 'editing a published video: no second video.published';
    req(PATCH => "/v1/api/videos/$v->{id}", $K, { status => 'archived' });
    $p = req(PATCH => "/v1/api/videos/$v->{id}", $K, { status => 'published', published_at => '' });
    is events($v->{id}), 2, 'published again after archiving: video.published again';
    like $p->{json}{video}{published_at} // '', $TS, 'published_at "" while publishing: set to now';
    $p = req(PATCH => "/v1/api/videos/$v->{id}", $K, { status => 'draft', published_at => '' });
    is $p->{json}{video}{published_at}, undef, 'published_at "" clears it';
    # A refused write writes no event: the statement is one transaction.
    my $n0 = events($v->{id});
    check_err(req(PATCH => "/v1/api/videos/$v->{id}", $K, { status => 'published', slug => 'same-title' }), 409,
              'slug_taken', 'publishing onto a taken slug');
    is events($v->{id}), $n0, 'the refused publish wrote no event';

    # Publish rights: none of the roles that write lacks them, so on the SQL functions.
    my $sql_err = sub {
        return 'no error' if eval { psql($_[0]); 1 };
        return $@ =~ /ERROR:\s+(\w+)/ ? $1 : $@;
    };
    my $uid = $owner->{user}{id};
    my $live = mkvid($K, { title => 'Live, no rights', status => 'published' });
    is $sql_err->("SELECT cms_video_save('$wid', '$uid', false, NULL, '{\"title\": \"t\", \"status\": \"published\"}')"),
        'cannot_publish', 'SQL: publishing without publish rights';
    is $sql_err->("SELECT cms_video_save('$wid', '$uid', false, '$live->{id}', '{\"title\": \"t\"}')"),
        'cannot_edit_live', 'SQL: editing a live video without publish rights';
    is $sql_err->("SELECT cms_video_delete('$wid', false, '$live->{id}')"), 'cannot_edit_live',
        'SQL: deleting a live video without publish rights';
    is $sql_err->("SELECT cms_video_save('$wid', '$uid', false, '$v->{id}', '{\"title\": \"a draft\"}')"), 'no error',
        'SQL: editing a draft needs no publish rights';
    is_deeply req(GET => "/v1/api/videos/$live->{id}", $K)->{json}{video}, $live, 'SQL: the live video is unchanged';

    # Another workspace's ids, unknown and malformed ones.
    for my $id ($NOBODY, 'not-a-uuid', $theirs->{id}) {
        check_err(req(GET => "/v1/api/videos/$id", $K), 404, 'not_found', "get $id");
        check_err(req(PATCH => "/v1/api/videos/$id", $K, { title => 'mine' }), 404, 'not_found', "patch $id");
        check_err(req(DELETE => "/v1/api/videos/$id", $K), 404, 'not_found', "delete $id");
    }
    is_deeply req(GET => "/v1/api/videos/$theirs->{id}", $K2)->{json}{video}, $theirs, 'theirs is untouched';

    my $d = req(DELETE => "/v1/api/videos/$v->{id}", $K);
    is $d->{status}, 204, 'delete: 204';
    is $d->{body}, '', 'delete: no body';
    check_err(req(GET => "/v1/api/videos/$v->{id}", $K), 404, 'not_found', 'get after delete');
    check_err(req(DELETE => "/v1/api/videos/$v->{id}", $K), 404, 'not_found', 'delete again');
    is one("SELECT count(*) FROM videos WHERE id = '$v->{id}'"), 0, 'delete: the row is gone';
}

# --- lists -----------------------------------------------------------------------------

{
    my $lu = signup();
    my $lw = workspace($lu->{token}, 'Video lists');
    my $LK = key($lu->{token}, $lw, 'lists', 'videos:read', 'videos:write');
    is_deeply req(GET => '/v1/api/videos', $LK)->{json}, { videos => [], pagination => { total => 0, limit => 50,
        offset => 0 } }, 'empty list: {videos: [], pagination}';
    my @st = qw(draft published archived);
    my @made = map { mkvid($LK, { title => "List $_", status => $st[$_ % 3] }) } 1 .. 55;
    my @newest = map { $_->{id} } reverse @made;
    my $page = sub {
        my ($q, $cred, $base) = @_;
        my $r = req(GET => ($base // '/v1/api/videos') . $q, $cred // $LK);
        return [$r->{status}, $r->{json}{pagination}, [map { $_->{id} } @{$r->{json}{videos} // []}]];
    };
    my $l = req(GET => '/v1/api/videos', $LK);
    is_deeply [sort keys %{$l->{json} // {}}], ['pagination', 'videos'], 'list: {videos, pagination}';
    is_deeply $l->{json}{videos}[0], $made[-1], 'list: full records';
    is_deeply $page->(''), [200, { total => 55, limit => 50, offset => 0 }, [@newest[0 .. 49]]],
        'list: 50 by default, newest first';
    is_deeply $page->('?limit=10&offset=50'), [200, { total => 55, limit => 10, offset => 50 }, [@newest[50 .. 54]]],
        'list: the last page';
    is_deeply $page->('?offset=55'), [200, { total => 55, limit => 50, offset => 55 }, []], 'list: past the end';
    is_deeply $page->("?limit=$_->[0]"), [200, { total => 55, limit => 50, offset => 0 }, [@newest[0 .. 49]]],
        "list: limit $_->[1] falls back to 50" for ['0', '0'], ['101', '101'], ['-1', '-1'], ['abc', 'abc'];
    is_deeply $page->('?limit=100'), [200, { total => 55, limit => 100, offset => 0 }, \@newest], 'list: limit 100';
    is_deeply $page->('?offset=abc&limit=1'), [200, { total => 55, limit => 1, offset => 0 }, [$newest[0]]],
        'list: offset abc is 0';
    check_err(req(GET => '/v1/api/videos?offset=100001', $LK), 400, 'invalid_field_value', 'list: offset over 100000');
    my @pub = map { $_->{id} } grep { $_->{status} eq 'published' } reverse @made;
    is_deeply $page->('?status=published&limit=100'), [200, { total => scalar @pub, limit => 100, offset => 0 }, \@pub],
        'list: status filter';
    check_err(req(GET => '/v1/api/videos?status=live', $LK), 400, 'invalid_status', 'list: an unknown status');
    check_err(req(GET => '/v1/api/videos?status=live', 'svc_live_' . ('A' x 49)), 401, 'invalid_api_key',
              'list: a bad key is told before a bad query');
    my %ids = map { $_->{id} => 1 } @{req(GET => '/v1/api/videos?limit=100', $K)->{json}{videos} // []};
    ok !grep({ $ids{$_->{id}} } @made), 'another workspace\'s list has none of them';
    is_deeply $page->('?status=published&limit=100', $lu->{token}, "/v1/workspaces/$lw/videos"),
        $page->('?status=published&limit=100'), 'studio list: the same page';
}

# --- studio mirrors ---------------------------------------------------------------------

{
    my %m = (owner => $owner);
    for my $role (qw(admin editor author viewer)) {
        $m{$role} = signup();
        psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
    }
    my %writes = (owner => 1, admin => 1, editor => 1, author => 0, viewer => 0);
    my $base = "/v1/workspaces/$wid/videos";
    my $target = mkvid($K, { title => 'Studio target' });
    for my $role (qw(owner admin editor author viewer)) {
        my $t = $m{$role}{token};
        is req(GET => "$base?limit=5", $t)->{status}, 200, "studio $role: list 200";
        is_deeply req(GET => "$base/$target->{id}", $t)->{json}, { video => $target }, "studio $role: get";
        if ($writes{$role}) {
            my $c = req(POST => $base, $t, { title => "Studio $role", status => 'published' });
            is $c->{status}, 201, "studio $role: create 201" or diag diag_resp($c);
            my $id = $c->{json}{video}{id} // 'none';
            is_deeply req(GET => "/v1/api/videos/$id", $K)->{json}, $c->{json}, "studio $role: the key sees it";
            is req(PATCH => "$base/$id", $t, { description => "by $role" })->{status}, 200, "studio $role: patch 200";
            is req(DELETE => "$base/$id", $t)->{status}, 204, "studio $role: delete 204";
        } else {
            check_err(req(POST => $base, $t, { title => "Studio $role" }), 403, 'forbidden', "studio $role: create");
            check_err(req(PATCH => "$base/$target->{id}", $t, { title => 'Nope' }), 403, 'forbidden',
                      "studio $role: patch");
            check_err(req(DELETE => "$base/$target->{id}", $t), 403, 'forbidden', "studio $role: delete");
        }
    }
    is_deeply req(GET => "/v1/api/videos/$target->{id}", $K)->{json}, { video => $target },
        'studio: the refused writes changed nothing';
    my $obase = "/v1/workspaces/$wid2/videos";
    check_err(req(GET => $obase, $owner->{token}), 403, 'not_workspace_member', 'studio non-member: list');
    check_err(req(GET => "$base/$theirs->{id}", $owner->{token}), 404, 'not_found', 'studio: another workspace\'s id');
}

# --- poster_url: an absolute http(s) URL, or "" for none ----------------------------------

check_url_field($K, video => '/v1/api/videos', { title => 'URL check' }, 'poster_url');

# The list totals come from counters kept by the writes (sql/0014): after every create,
# patch and delete above, they equal a COUNT.
is_deeply psql("SELECT workspace_id, value, n FROM record_counts WHERE kind = 'videos' AND n <> 0 ORDER BY 1, 2"),
    psql("SELECT workspace_id, status, count(*) FROM videos GROUP BY 1, 2 ORDER BY 1, 2"),
    'the counters behind the list totals equal a COUNT';

done_testing();
