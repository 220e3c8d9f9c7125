# The avatar (issue 17): PUT /v1/me/avatar takes the image's raw bytes as the body
# (streamed by nginx to its temporary file, stored by the uploads' store: hashed, sniffed
# by libmagic, fsynced, renamed), DELETE /v1/me/avatar clears it.
#
# Shown: PNG, JPEG, GIF and WebP taken, with Content-Type left out, octet-stream or the
# sniffed type; the key users/<user id>/<32 hex>.<ext> and avatar_url /v1/files/<key> in
# the answer and in GET /v1/me; GET /v1/files/<key> serves the bytes inline with nosniff;
# SVG, HTML and text refused whatever the declared type, a declared type that is not a
# raster refused before the body is stored, a JPEG declared as image/png refused, an
# empty body refused, none of them leaving a file or changing the avatar;
# cms_avatar_max_size to the byte (413 avatar_too_large for a declared length, a huge
# declared length, and a chunked body once it passes the cap; a chunked body under it is
# taken); replacing removes the previous file; DELETE clears it and removes the file (204,
# again 204); another user's avatar untouched throughout; no, a bad, and an API-key
# credential refused; the SQL statement sets nothing for an inactive user; a chunked
# JSON body over cms_body_max_size is 413 payload_too_large; links planted in the storage
# folder are never followed when storing or removing.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key);
use MIME::Base64 ();

signup_defaults(email_prefix => 'avt');

my $CAP = 64 * 1024;
start_nginx(http_config => "cms_avatar_max_size $CAP;");

my $STORE = Cms::Test::prefix() . '/storage';

my %B = (
    png  => MIME::Base64::decode_base64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='),
    jpeg => "\xFF\xD8\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xFF\xD9",
    gif  => MIME::Base64::decode_base64('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'),
    webp => MIME::Base64::decode_base64('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=='),
    svg  => "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>",
    html => "<!DOCTYPE html><html><head><title>x</title></head><body><script>alert(1)</script></body></html>\n",
    text => "hello, plain text\n",
);

sub put_avatar {
    my ($t, $bytes, $type, @more) = @_;
    return Cms::Test::http(PUT => '/v1/me/avatar',
                           [(defined $t ? (Authorization => "Bearer $t") : ()),
                            (defined $type ? ('Content-Type' => $type) : ()), @more], $bytes);
}
sub del_avatar { Cms::Test::http(DELETE => '/v1/me/avatar', [Authorization => "Bearer $_[0]"]) }
sub me { req(GET => '/v1/me', $_[0])->{json}{user} }
sub path_of { (my $k = $_[0]) =~ s{^/v1/files/}{}; "$STORE/$k" }
# every file under the user's folder, temporary ones included
sub files_of { my $d = "$STORE/users/$_[0]"; grep { -f } glob("$d/*"), glob("$d/.*") }

# a chunked request of $bytes in 8 KiB chunks, as raw HTTP
sub chunked {
    my ($method, $path, $t, $type, $bytes) = @_;
    my $req = "$method $path HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
            . "Authorization: Bearer $t\r\nContent-Type: $type\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (my $i = 0; $i < length $bytes; $i += 8192) {
        my $c = substr($bytes, $i, 8192);
        $req .= sprintf("%x\r\n", length $c) . $c . "\r\n";
    }
    return Cms::Test::raw_http($req . "0\r\n\r\n");
}

my $u = signup();
my ($t, $uid) = ($u->{token}, $u->{user}{id});
my $o = signup();
my ($ot, $oid) = ($o->{token}, $o->{user}{id});

# --- credentials ------------------------------------------------------------------------

ok exists me($t)->{avatar_url} && !defined me($t)->{avatar_url}, 'GET /v1/me: avatar_url null before any';
check_err(put_avatar(undef, $B{png}, 'image/png'), 401, 'missing_token', 'PUT without a credential');
check_err(put_avatar('not-a-token', $B{png}, 'image/png'), 401, 'invalid_token', 'PUT with a bad token');
check_err(Cms::Test::http(DELETE => '/v1/me/avatar', []), 401, 'missing_token', 'DELETE without a credential');
{
    my $ws = workspace($t, 'Avatars');
    my $sk = key($t, $ws, 'k', 'media:write');
    my $me = req(GET => '/v1/me', $sk);
    my $r = put_avatar($sk, $B{png}, 'image/png');
    is "$r->{status} " . ($r->{json}{code} // ''), "$me->{status} " . ($me->{json}{code} // ''),
        'PUT with a secret key: refused as GET /v1/me refuses it';
    ok $r->{status} == 401 || $r->{status} == 403, 'PUT with a secret key: 401 or 403';
}
is scalar(files_of($uid)), 0, 'refused credentials store nothing';

# --- a PNG, then GET /v1/files -------------------------------------------------------------

my $r = put_avatar($t, $B{png}, 'image/png');
is $r->{status}, 200, 'PUT a PNG: 200' or diag diag_resp($r);
my $png_url = $r->{json}{user}{avatar_url} // '';
like $png_url, qr{^/v1/files/users/\Q$uid\E/[0-9a-f]{32}\.png$}, 'avatar_url: /v1/files/users/<id>/<32 hex>.png';
is $r->{json}{user}{id}, $uid, 'the answer is the caller';
is_deeply me($t), $r->{json}{user}, 'GET /v1/me answers the same user';
is one("SELECT avatar_key FROM users WHERE id = '$uid'"), substr($png_url, length '/v1/files/'),
    'users.avatar_key is the key';
{
    my $f = Cms::Test::http(GET => $png_url);
    is $f->{status}, 200, 'GET the avatar: 200';
    ok $f->{body} eq $B{png}, 'GET the avatar: the bytes';
    is $f->{headers}{'content-type'}, 'image/png', 'GET the avatar: image/png';
    is $f->{headers}{'x-content-type-options'}, 'nosniff', 'GET the avatar: nosniff';
    ok !defined $f->{headers}{'content-disposition'}, 'GET the avatar: inline (no attachment)';
}
is_deeply [files_of($uid)], [path_of($png_url)], 'one file, the avatar, no temporary file';
is sprintf('%o', (stat path_of($png_url))[2] & 0777), '644', 'the file is 0644';

# another user's avatar, to stay untouched
$r = put_avatar($ot, $B{gif}, undef);
is $r->{status}, 200, 'the other user PUTs a GIF without Content-Type: 200' or diag diag_resp($r);
my $other_url = $r->{json}{user}{avatar_url} // '';
like $other_url, qr{^/v1/files/users/\Q$oid\E/[0-9a-f]{32}\.gif$}, 'the GIF is stored as .gif under its user';

# --- refusals: nothing stored, nothing changed ----------------------------------------------

my @refused = (
    [svg => 'image/png', 'an SVG declared as PNG'],
    [svg => undef, 'an SVG without Content-Type'],
    [html => 'application/octet-stream', 'HTML as octet-stream'],
    [html => 'image/jpeg', 'HTML declared as JPEG'],
    [text => undef, 'plain text'],
    [jpeg => 'image/png', 'a JPEG declared as image/png'],
    [png => 'image/gif', 'a PNG declared as image/gif'],
);
for my $c (@refused) {
    my ($kind, $type, $what) = @$c;
    check_err(put_avatar($t, $B{$kind}, $type), 400, 'invalid_field_value', $what);
}
for my $type ('image/svg+xml', 'text/html', 'application/json', 'image/bmp', 'not a type') {
    check_err(put_avatar($t, $B{png}, $type), 400, 'invalid_field_value',
              "Content-Type $type: refused before the body is stored");
}
check_err(put_avatar($t, '', 'image/png'), 400, 'invalid_field_value', 'an empty body');
is me($t)->{avatar_url}, $png_url, 'the refusals left the avatar as it was';
is_deeply [files_of($uid)], [path_of($png_url)], 'the refusals left no file behind';

# --- the cap, to the byte --------------------------------------------------------------------

{
    my $at_cap = $B{png} . ("\0" x ($CAP - length $B{png}));
    check_err(put_avatar($t, $at_cap . "\0", 'image/png'), 413, 'avatar_too_large',
              'one byte over cms_avatar_max_size, declared');
    check_err(put_avatar($t, '', 'image/png', 'Content-Length' => 100 * 1024 * 1024), 413,
              'avatar_too_large', 'a declared 100 MiB (more than any other cap): nothing read');
    check_err(chunked(PUT => '/v1/me/avatar', $t, 'image/png', $at_cap . ("\0" x $CAP)), 413,
              'avatar_too_large', 'a chunked body past the cap');
    is me($t)->{avatar_url}, $png_url, 'over the cap: the avatar as it was';
    is_deeply [files_of($uid)], [path_of($png_url)], 'over the cap: no file behind';

    $r = put_avatar($t, $at_cap, 'image/png');
    is $r->{status}, 200, 'exactly cms_avatar_max_size: 200' or diag diag_resp($r);
    my $cap_url = $r->{json}{user}{avatar_url} // '';
    is -s path_of($cap_url), $CAP, 'the stored file has every byte';
    ok !-e path_of($png_url), 'replacing removed the previous file';
    is_deeply [files_of($uid)], [path_of($cap_url)], 'one file: the new avatar';
    is Cms::Test::http(GET => $png_url)->{status}, 404, 'the previous URL is 404';

    $r = chunked(PUT => '/v1/me/avatar', $t, 'image/jpeg', $B{jpeg});
    is $r->{status}, 200, 'a chunked JPEG under the cap: 200' or diag diag_resp($r);
    like $r->{json}{user}{avatar_url} // '', qr{\.jpg$}, 'stored as .jpg';
    ok !-e path_of($cap_url), 'the previous file removed';
}

# a chunked JSON body over cms_body_max_size: the JSON cap's code
check_err(chunked(PATCH => '/v1/me', $t, 'application/json', '{"name":"' . ('x' x (1024 * 1024)) . '"}'), 413,
          'payload_too_large', 'a chunked JSON body over cms_body_max_size');

# --- WebP, then DELETE ------------------------------------------------------------------------

$r = put_avatar($t, $B{webp}, 'image/webp');
is $r->{status}, 200, 'PUT a WebP: 200' or diag diag_resp($r);
my $webp_url = $r->{json}{user}{avatar_url} // '';
like $webp_url, qr{\.webp$}, 'stored as .webp';
is Cms::Test::http(GET => $webp_url)->{headers}{'content-type'}, 'image/webp', 'served as image/webp';
is scalar(files_of($uid)), 1, 'one file';

$r = del_avatar($t);
is $r->{status}, 204, 'DELETE: 204' or diag diag_resp($r);
is $r->{body}, '', 'DELETE: no body';
ok !defined me($t)->{avatar_url}, 'DELETE: avatar_url null';
ok !-e path_of($webp_url), 'DELETE: the file removed';
is scalar(files_of($uid)), 0, 'DELETE: nothing left';
is del_avatar($t)->{status}, 204, 'DELETE again: 204';

# the other user's avatar went through all of it untouched
is me($ot)->{avatar_url}, $other_url, 'the other user\'s avatar_url is unchanged';
ok -e path_of($other_url), 'the other user\'s file is still there';
is Cms::Test::http(GET => $other_url)->{body}, $B{gif}, 'and served';

# the statement sets nothing for an inactive user (the race after the credential check)
Cms::Test::psql("UPDATE users SET active = false WHERE id = '$oid'");
is one("SELECT count(*) FROM cms_user_avatar_set('$oid', NULL)"), 0, 'an inactive user: no row';
is one("SELECT avatar_key FROM users WHERE id = '$oid'"), substr($other_url, length '/v1/files/'),
    'an inactive user: the avatar as it was';

# --- links planted in the storage folder are never followed ---------------------------------
# The store reaches every folder beneath its descriptor of the root, no component a link
# (ngx_http_cms_store_beneath(), the one GET /v1/files uses): a link planted as a user's
# folder is refused when storing and when removing, never written or removed through.
{
    my $outside = Cms::Test::prefix() . '/outside';
    mkdir $outside, 0777 or die "$outside: $!";
    chmod 0777, $outside;    # the workers could write there, were the link followed
    my $l = signup();
    my ($lt, $lid) = ($l->{token}, $l->{user}{id});
    Cms::Test::allow_error_log(qr/storing "users\/\Q$lid\E\//);
    symlink $outside, "$STORE/users/$lid" or die "symlink: $!";

    my $r = put_avatar($lt, $B{png}, 'image/png');
    is $r->{status}, 500, 'the user\'s folder a planted link: the upload fails' or diag diag_resp($r);
    ok !defined me($lt)->{avatar_url}, 'a planted link: nothing set';
    is_deeply [grep { !m{/\.\.?$} } glob("$outside/* $outside/.*")], [], 'nothing written through the link';

    # a row naming a file beyond the link: DELETE clears the row, removes nothing beyond
    my $name = 'a' x 32;
    open my $fh, '>', "$outside/$name.png" or die $!;
    print $fh $B{png};
    close $fh;
    Cms::Test::psql("UPDATE users SET avatar_key = 'users/$lid/$name.png' WHERE id = '$lid'");
    is del_avatar($lt)->{status}, 204, 'DELETE with the key beyond a link: 204 (the row is cleared)';
    ok !defined me($lt)->{avatar_url}, '... avatar_url null';
    ok -e "$outside/$name.png", '... and the file beyond the link is still there';

    # a link as the stored file itself: replacing the avatar removes the link, not its target
    unlink "$STORE/users/$lid" or die $!;
    $r = put_avatar($lt, $B{png}, 'image/png');
    is $r->{status}, 200, 'a real folder again: 200' or diag diag_resp($r);
    my $file = path_of($r->{json}{user}{avatar_url} // '');
    unlink $file or die "$file: $!";
    symlink "$outside/$name.png", $file or die "symlink: $!";
    is Cms::Test::http(GET => $r->{json}{user}{avatar_url})->{status}, 404,
        'GET /v1/files does not follow the planted link (404)';
    is put_avatar($lt, $B{gif}, 'image/gif')->{status}, 200, 'replacing an avatar that is a planted link: 200';
    ok !-l $file && !-e $file, 'the link is gone';
    ok -e "$outside/$name.png", 'its target is not';
}

done_testing();
