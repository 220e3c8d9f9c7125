# Media registration over /v1/api/media (secret key) and the studio mirrors (session):
# credentials and scopes on every route; create with no field (defaults: image, ready) and
# with every field; mime_type refused when script-executable (HTML, XHTML, XML, SVG,
# JavaScript, anything "script", x-httpd-*, PHP) whatever the type, or not matching the
# type (image/*, video/*, audio/*; file takes the rest), malformed types; size_bytes int64
# >= 0; width and height positive; url and thumbnail_url absolute http(s); get; another
# workspace's ids; the list's paging edges and type filter; the studio's DELETE (204,
# editors and up) and the role matrix of the mirrors; no DELETE for keys (405).
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key $UUID $TS);
use JSON::PP ();

signup_defaults(email_prefix => 'med');

my @FIELDS = sort qw(id type title url thumbnail_url mime_type size_bytes width height folder status created_at
                        color srcset);
my $NOBODY = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';

start_nginx();

my $owner = signup();
my $wid = workspace($owner->{token}, 'Media');
my $K = key($owner->{token}, $wid, 'rw', qw(media:read media:write));
my $KR = key($owner->{token}, $wid, 'ro', 'media:read');
my $KW = key($owner->{token}, $wid, 'wo', 'media:write');
my $KA = key($owner->{token}, $wid, 'videos', 'videos:read', 'videos:write');

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other', qw(media:read media:write));

sub mkmed {
    my ($cred, $f, $path) = @_;
    my $r = req(POST => $path // '/v1/api/media', $cred, $f);
    die 'create media: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{media};
}
my $count = sub { one('SELECT count(*) FROM media_assets') };

# --- credentials and scopes ------------------------------------------------------------

{
    my $m = mkmed($K, { title => 'Auth target' });
    my $bad = 'svc_live_' . ('A' x 49);
    for my $t ([GET => '/v1/api/media', undef, 'read'], [POST => '/v1/api/media', { title => 'x' }, 'write'],
               [GET => "/v1/api/media/$m->{id}", undef, 'read']) {
        my ($meth, $p, $b, $need) = @$t;
        check_err(req($meth, $p, undef, $b), 401, 'missing_token', "$meth $p without a key");
        check_err(req($meth, $p, $bad, $b), 401, 'invalid_api_key', "$meth $p with a bad key");
        check_err(req($meth, $p, $owner->{token}, $b), 401, 'invalid_api_key', "$meth $p with a session token");
        check_err(req($meth, $p, $need eq 'read' ? $KW : $KR, $b), 403, 'missing_scope',
                  "$meth $p without media:$need");
        check_err(req($meth, $p, $KA, $b), 403, 'missing_scope', "$meth $p with only videos scopes");
    }
    is one("SELECT count(*) FROM media_assets WHERE title = 'x'"), 0, 'no refused create was stored';
    my $d = req(DELETE => "/v1/api/media/$m->{id}", $K);
    check_err($d, 405, 'method_not_allowed', 'DELETE /v1/api/media/{id}: keys have no DELETE');
    like $d->{headers}{allow} // '', qr/GET/, '405 names the methods allowed';
    is_deeply req(GET => "/v1/api/media/$m->{id}", $KR)->{json}, { media => $m }, 'the asset is still there';
}

# --- create ----------------------------------------------------------------------------

my $r = req(POST => '/v1/api/media', $K, {});
is $r->{status}, 201, 'create with no field: 201' or diag diag_resp($r);
is_deeply [sort keys %{$r->{json} // {}}], ['media'], 'create: wrapped in {media}';
my $bare = $r->{json}{media} // {};
is_deeply [sort keys %$bare], \@FIELDS, 'create: every media field, nothing else';
like $bare->{id} // '', $UUID, 'create: id is a uuid';
like $bare->{created_at} // '', $TS, 'create: created_at is an RFC 3339 UTC time';
is_deeply { map { $_ => $bare->{$_} } grep { !/^(id|created_at)$/ } @FIELDS },
    { type => 'image', title => '', url => '', thumbnail_url => '', mime_type => '', size_bytes => 0,
      width => undef, height => undef, folder => '', status => 'ready', color => undef,
      srcset => undef },
    'create: defaults (image, ready, size 0, no dimensions)';
is one("SELECT created_by FROM media_assets WHERE id = '$bare->{id}'"), $owner->{user}{id},
    'create: the key\'s creator is recorded';

my %full = (type => 'video', title => 'Launch film', url => 'https://cdn.example.com/launch.mp4',
            thumbnail_url => 'https://cdn.example.com/launch.jpg', mime_type => 'video/mp4', size_bytes => 9007199254740993,
            folder => 'films/2026', width => 1920, height => 1080);
$r = req(POST => '/v1/api/media', $K, \%full);
is $r->{status}, 201, 'create with every field: 201' or diag diag_resp($r);
my $full = $r->{json}{media} // {};
is $full->{$_}, $full{$_}, "create: $_ kept" for sort keys %full;
is $full->{status}, 'ready', 'a registered asset is ready';
is_deeply req(GET => "/v1/api/media/$full->{id}", $KR)->{json}, { media => $full }, 'get: the same record';
is mkmed($K, { size_bytes => 9223372036854775807 })->{size_bytes}, 9223372036854775807, 'size_bytes: the int64 maximum';
is mkmed($K, { width => 1, height => 2147483647 })->{height}, 2147483647, 'height: the int32 maximum';
is mkmed($K, { width => undef, title => undef })->{width}, undef, 'null width: none';
my $ro = mkmed($K, { id => $NOBODY, status => 'pending', created_at => '2000-01-01T00:00:00Z' });
ok $ro->{id} ne $NOBODY && $ro->{status} eq 'ready' && $ro->{created_at} !~ /^2000/, 'read-only fields ignored';

# mime_type: agreement with the type, executable types refused, malformed ones refused.
for my $t (['image', 'image/png'], ['image', 'IMAGE/JPEG'], ['image', 'image/webp; q=1'], ['video', 'video/webm'],
           ['audio', 'audio/mpeg'], ['audio', 'audio/ogg; codecs=opus'], ['file', 'application/pdf'],
           ['file', 'image/png'], ['file', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
           ['file', 'text/plain'], [undef, 'image/gif']) {
    my ($type, $mime) = @$t;
    my $m = req(POST => '/v1/api/media', $K, { defined $type ? (type => $type) : (), mime_type => $mime });
    is $m->{status}, 201, 'type ' . ($type // 'default') . ", mime_type $mime: 201" or diag diag_resp($m);
    is(($m->{json}{media} // {})->{mime_type}, $mime, "mime_type $mime: kept as given");
}
$before::n = $count->();
for my $type (qw(image video audio file)) {
    for my $mime ('text/html', 'TEXT/HTML; charset=utf-8', 'application/xhtml+xml', 'image/svg+xml', 'text/xml',
                  'application/xml', 'text/javascript', 'application/javascript', 'application/ecmascript',
                  'application/x-shellscript', 'application/x-httpd-php', 'application/x-httpd-cgi', 'text/x-php',
                  'image/svg', 'video/x-ecmascript', 'audio/vbscript', "$type/html") {
        my $m = req(POST => '/v1/api/media', $K, { type => $type, mime_type => $mime });
        check_err($m, 400, 'invalid_field_value', "type $type, mime_type $mime (executable)");
        like $m->{json}{error} // '', qr/script/, "type $type, mime_type $mime: the message says why";
    }
}
for my $t (['image', 'video/mp4'], ['image', 'application/pdf'], ['video', 'image/png'], ['video', 'audio/mp4'],
           ['audio', 'video/mp4'], ['audio', 'application/ogg'], [undef, 'video/mp4'], [undef, 'application/pdf']) {
    my ($type, $mime) = @$t;
    my $m = req(POST => '/v1/api/media', $K, { defined $type ? (type => $type) : (), mime_type => $mime });
    check_err($m, 400, 'invalid_field_value', 'type ' . ($type // 'default') . ", mime_type $mime (mismatch)");
    like $m->{json}{error} // '', qr/match/, "mime_type $mime: the message says it does not match";
}
for my $mime ('png', 'image/', '/png', 'image/*', 'image/png;', 'image png', "image/png\nX-A: b", 'image/p ng',
              'imagé/png', 'a/' . ('b' x 128), 'image/png; ' . ('a=b; ' x 50)) {
    check_err(req(POST => '/v1/api/media', $K, { mime_type => $mime }), 400, 'invalid_field_value',
              'malformed mime_type ' . substr($mime, 0, 20));
}

for my $t (
    (map { [{ type => $_ }, 'invalid_field_value', "type '$_'"] } 'document', 'IMAGE', '', 'images'),
    [{ type => 5 }, 'invalid_field_value', 'type a number'],
    (map { [{ size_bytes => $_ }, 'invalid_field_value', "size_bytes $_"] } -1, 1.5, '5'),
    [{ size_bytes => JSON::PP::true }, 'invalid_field_value', 'size_bytes a boolean'],
    (map { [{ width => $_ }, 'invalid_field_value', "width $_"] } 0, -1, 2.5, '10', 2147483648),
    (map { [{ height => $_ }, 'invalid_field_value', "height $_"] } 0, -5),
    (map { [{ url => $_ }, 'invalid_url', "url '$_'"] }
         'javascript:alert(1)', 'data:image/png;base64,AAAA', '/a.png', '//cdn.example.com/a.png', 'ftp://x.example/a',
         'https://user:pw@cdn.example.com/a.png', 'https://cdn.example.com/a b.png'),
    (map { [{ thumbnail_url => $_ }, 'invalid_url', "thumbnail_url '$_'"] } 'vbscript:msgbox(1)', 'a.png'),
    [{ title => 'x' x 501 }, 'invalid_field_value', 'title of 501 characters'],
    [{ folder => [] }, 'invalid_field_value', 'folder an array'],
    [{ mime_type => 5 }, 'invalid_field_value', 'mime_type a number'],
    [{ colour => 'red' }, 'invalid_request', 'an unknown field'],
) {
    my ($body, $code, $name) = @$t;
    check_err(req(POST => '/v1/api/media', $K, $body), 400, $code, "create, $name");
}
check_err(req(POST => '/v1/api/media', $K, '{"title":'), 400, 'invalid_request', 'create, malformed JSON');
check_err(req(POST => '/v1/api/media', $K, '[]'), 400, 'invalid_request', 'create, a JSON array');
is $count->(), $before::n, 'no refused create was stored';
is mkmed($K, { url => '', thumbnail_url => '' })->{url}, '', 'url "": none';

# --- get: unknown, malformed, another workspace's -----------------------------------------

my $theirs = mkmed($K2, { title => 'Theirs' });
for my $id ($NOBODY, 'not-a-uuid', $theirs->{id}) {
    check_err(req(GET => "/v1/api/media/$id", $K), 404, 'not_found', "get $id");
    check_err(req(GET => "/v1/workspaces/$wid/media/$id", $owner->{token}), 404, 'not_found', "studio get $id");
    check_err(req(DELETE => "/v1/workspaces/$wid/media/$id", $owner->{token}), 404, 'not_found', "studio delete $id");
}
is_deeply req(GET => "/v1/api/media/$theirs->{id}", $K2)->{json}{media}, $theirs, 'theirs is untouched';

# --- lists -----------------------------------------------------------------------------

{
    my $lu = signup();
    my $lw = workspace($lu->{token}, 'Media lists');
    my $LK = key($lu->{token}, $lw, 'lists', 'media:read', 'media:write');
    is_deeply req(GET => '/v1/api/media', $LK)->{json}, { media => [], pagination => { total => 0, limit => 50,
        offset => 0 } }, 'empty list: {media: [], pagination}';
    my @types = qw(image video audio file);
    my @made = map { mkmed($LK, { title => "List $_", type => $types[$_ % 4] }) } 1 .. 55;
    my @newest = map { $_->{id} } reverse @made;
    my $page = sub {
        my ($q, $cred, $base) = @_;
        my $r = req(GET => ($base // '/v1/api/media') . $q, $cred // $LK);
        return [$r->{status}, $r->{json}{pagination}, [map { $_->{id} } @{$r->{json}{media} // []}]];
    };
    my $l = req(GET => '/v1/api/media', $LK);
    is_deeply [sort keys %{$l->{json} // {}}], ['media', 'pagination'], 'list: {media, pagination}';
    is_deeply $l->{json}{media}[0], $made[-1], 'list: full records';
    is_deeply $page->(''), [200, { total => 55, limit => 50, offset => 0 }, [@newest[0 .. 49]]],
        'list: 50 by default, newest first';
    is_deeply $page->('?limit=10&offset=50'), [200, { total => 55, limit => 10, offset => 50 }, [@newest[50 .. 54]]],
        'list: the last page';
    is_deeply $page->('?offset=60'), [200, { total => 55, limit => 50, offset => 60 }, []], 'list: past the end';
    is_deeply $page->("?limit=$_"), [200, { total => 55, limit => 50, offset => 0 }, [@newest[0 .. 49]]],
        "list: limit $_ falls back to 50" for '0', '101', '-1', 'abc';
    check_err(req(GET => '/v1/api/media?offset=100001', $LK), 400, 'invalid_field_value', 'list: offset over 100000');
    for my $type (@types) {
        my @want = map { $_->{id} } grep { $_->{type} eq $type } reverse @made;
        is_deeply $page->("?type=$type&limit=100"), [200, { total => scalar @want, limit => 100, offset => 0 }, \@want],
            "list: type=$type";
    }
    check_err(req(GET => '/v1/api/media?type=document', $LK), 400, 'invalid_field_value', 'list: an unknown type');
    check_err(req(GET => '/v1/api/media?type=image&type=video', $LK), 400, 'invalid_request', 'list: a repeated type');
    my %ids = map { $_->{id} => 1 } @{req(GET => '/v1/api/media?limit=100', $K)->{json}{media} // []};
    ok !grep({ $ids{$_->{id}} } @made), 'another workspace\'s list has none of them';
    is_deeply $page->('?type=audio', $lu->{token}, "/v1/workspaces/$lw/media"), $page->('?type=audio'),
        'studio list: the same page';
}

# --- studio mirrors and the studio's DELETE -----------------------------------------------

{
    my %m = (owner => $owner);
    for my $role (qw(admin editor author viewer)) {
        $m{$role} = signup();
        psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
    }
    my %creates = (owner => 1, admin => 1, editor => 1, author => 1, viewer => 0);
    my %deletes = (owner => 1, admin => 1, editor => 1, author => 0, viewer => 0);
    my $base = "/v1/workspaces/$wid/media";
    for my $role (qw(owner admin editor author viewer)) {
        my $t = $m{$role}{token};
        my $target = mkmed($K, { title => "Studio target for $role" });
        is req(GET => "$base?limit=5", $t)->{status}, 200, "studio $role: list 200";
        is_deeply req(GET => "$base/$target->{id}", $t)->{json}, { media => $target }, "studio $role: get";
        my $c = req(POST => $base, $t, { title => "Studio $role", mime_type => 'image/png' });
        if ($creates{$role}) {
            is $c->{status}, 201, "studio $role: create 201" or diag diag_resp($c);
            is one("SELECT created_by FROM media_assets WHERE id = '$c->{json}{media}{id}'"), $m{$role}{user}{id},
                "studio $role: recorded as the creator";
            check_err(req(POST => $base, $t, { mime_type => 'text/html' }), 400, 'invalid_field_value',
                      "studio $role: an executable type");
        } else {
            check_err($c, 403, 'forbidden', "studio $role: create");
        }
        my $d = req(DELETE => "$base/$target->{id}", $t);
        if ($deletes{$role}) {
            is $d->{status}, 204, "studio $role: delete 204" or diag diag_resp($d);
            is $d->{body}, '', "studio $role: delete, no body";
            check_err(req(GET => "/v1/api/media/$target->{id}", $K), 404, 'not_found', "studio $role: gone");
            check_err(req(DELETE => "$base/$target->{id}", $t), 404, 'not_found', "studio $role: delete again");
        } else {
            check_err($d, 403, 'forbidden', "studio $role: delete");
            is_deeply req(GET => "/v1/api/media/$target->{id}", $K)->{json}, { media => $target },
                "studio $role: the refused delete changed nothing";
        }
    }
    my $obase = "/v1/workspaces/$wid2/media";
    for my $t ([GET => $obase], [POST => $obase, {}], [GET => "$obase/$theirs->{id}"],
               [DELETE => "$obase/$theirs->{id}"]) {
        my ($meth, $p, $b) = @$t;
        check_err(req($meth, $p, $owner->{token}, $b), 403, 'not_workspace_member', "studio non-member: $meth $p");
    }
    check_err(req(DELETE => "$base/$theirs->{id}"), 401, 'missing_token', 'studio delete without a session');
    check_err(req(DELETE => "$base/$theirs->{id}", $K), 401, 'invalid_token', 'studio delete with an API key');
    is_deeply req(GET => "/v1/api/media/$theirs->{id}", $K2)->{json}{media}, $theirs,
        'the other workspace\'s asset is untouched';
}

# The list totals come from counters kept by the writes (sql/0014): after every create,
# patch and delete above, they equal a COUNT.
is_deeply psql("SELECT workspace_id, value, n FROM record_counts WHERE kind = 'media' AND n <> 0 ORDER BY 1, 2"),
    psql("SELECT workspace_id, type, count(*) FROM media_assets GROUP BY 1, 2 ORDER BY 1, 2"),
    'the counters behind the list totals equal a COUNT';

done_testing();
