# Stored objects (issue 15): GET and HEAD /v1/files/{key}, served from cms_storage with
# nginx's own file machinery, no credential, no database.
#
# Objects are planted straight under the harness' storage root (PREFIX/storage). Shown:
# the header matrix per extension (type from the key's extension, inline raster images,
# audio, video and plain text; SVG, HTML, XML, PDF, JSON, CSV, binary and unknown
# extensions as attachments with a safe filename; X-Content-Type-Options: nosniff on every
# answer, 404s and 416s included; immutable public caching; a strong ETag and
# Last-Modified); a traversal corpus of more than 40 request targets (dot segments, encoded,
# double-encoded and overlong-UTF-8 dots and slashes, NUL, backslashes, absolute paths,
# control bytes, hidden files, a symbolic link planted inside the root to a secret file
# outside it, a symbolic link to a folder outside it and one to a folder inside it), none of
# which gets a byte of the secret (nginx's plain static location, beside, does follow the
# same links: the plants are real); Range (single, suffix, open-ended, several: multipart,
# unsatisfiable: 416 in the API's shape, If-Range); 304 on If-None-Match and
# If-Modified-Since; HEAD; folders, fifos and missing keys: 404; 405 with Allow; an
# Authorization header changes nothing; and with PostgreSQL and Redis unreachable, files
# are still served.
use strict;
use warnings;
use Cms::Test;
use POSIX ();
use File::Path qw(make_path);

my $ROOT = prefix() . '/storage';
my $SECRET_FILE = prefix() . '/secret.txt';
my $SECRET = 'TOP-SECRET-' . join('', map { int rand 10 } 1 .. 20);

sub plant {
    my ($key, $bytes) = @_;
    my $path = "$ROOT/$key";
    (my $dir = $path) =~ s{/[^/]*$}{};
    make_path($dir, { mode => 0755 });
    open my $fh, '>:raw', $path or die "$path: $!";
    print $fh $bytes;
    close $fh or die "$path: $!";
    chmod 0644, $path;
    return $path;
}

# every object answers with bytes that name it
sub content { "object $_[0] " . ('x' x 64) }

open my $sfh, '>', $SECRET_FILE or die "$SECRET_FILE: $!";
print $sfh "$SECRET\n";
close $sfh;
chmod 0644, $SECRET_FILE;

# a plain static location beside the API, on the same folder: it follows links, which
# shows that the links planted below do lead to the secret
# debug: the log names the system call that refused a link
my $PLAIN = "location /plain/ { alias $ROOT/; }";
start_nginx(config => $PLAIN, error_log => 'logs/error.log debug');

my $WS = '3f1c9a1e-2d4b-4c1a-9b1e-5a8f0c2d7e61';

# --- the header matrix ----------------------------------------------------------------------

my @MATRIX = (
    # extension, type, inline
    [png  => 'image/png', 1],
    [PNG  => 'image/png', 1],
    [jpg  => 'image/jpeg', 1],
    [jpeg => 'image/jpeg', 1],
    [gif  => 'image/gif', 1],
    [webp => 'image/webp', 1],
    [mp4  => 'video/mp4', 1],
    [webm => 'video/webm', 1],
    [mp3  => 'audio/mpeg', 1],
    [ogg  => 'audio/ogg', 1],
    [txt  => 'text/plain; charset=utf-8', 1],
    [svg  => 'image/svg+xml', 0],
    [html => 'text/html; charset=utf-8', 0],
    [xml  => 'application/xml', 0],
    [pdf  => 'application/pdf', 0],
    [json => 'application/json', 0],
    [csv  => 'text/csv; charset=utf-8', 0],
    [zip  => 'application/zip', 0],
    [bin  => 'application/octet-stream', 0],
    [xyz  => 'application/octet-stream', 0],
    [''   => 'application/octet-stream', 0],
);

for my $m (@MATRIX) {
    my ($ext, $type, $inline) = @$m;
    my $name = length $ext ? "asset-$ext.$ext" : 'asset-noext';
    my $key = "$WS/$name";
    plant($key, content($key));
    my $r = http(GET => "/v1/files/$key");
    my $h = $r->{headers};
    my $what = "GET .$ext";
    is $r->{status}, 200, "$what: 200" or diag "$r->{status} $r->{body}";
    is $r->{body}, content($key), "$what: the bytes";
    is $h->{'content-type'}, $type, "$what: Content-Type $type";
    is $h->{'x-content-type-options'}, 'nosniff', "$what: nosniff";
    is $h->{'cache-control'}, 'public, max-age=31536000, immutable', "$what: immutable";
    is $h->{'content-length'}, length(content($key)), "$what: Content-Length";
    like $h->{etag} // '', qr/^"[0-9a-f]+-[0-9a-f]+"$/, "$what: a strong ETag";
    like $h->{'last-modified'} // '', qr/GMT$/, "$what: Last-Modified";
    is $h->{'accept-ranges'}, 'bytes', "$what: Accept-Ranges";
    ok length($h->{'x-request-id'} // ''), "$what: X-Request-Id";
    if ($inline) {
        ok !exists $h->{'content-disposition'}, "$what: inline (no Content-Disposition)";
    } else {
        is $h->{'content-disposition'}, qq{attachment; filename="$name"}, "$what: attachment";
    }
}

# deeper keys, a query string, an empty object, no credential needed or looked at
{
    my $key = 'users/42/avatar.jpg';
    plant($key, content($key));
    my $r = http(GET => "/v1/files/$key");
    is $r->{status}, 200, 'users/42/avatar.jpg: 200';
    is $r->{body}, content($key), 'users/42/avatar.jpg: the bytes';

    $r = http(GET => "/v1/files/$key?v=2&x");
    is $r->{status}, 200, 'a query string is ignored';
    $r = http(GET => "/v1/files/$key", ['Authorization' => 'Bearer garbage']);
    is $r->{status}, 200, 'an Authorization header is not looked at';
    $r = http(GET => "/v1/files/$key", ['Cookie' => 'cms_session=garbage']);
    is $r->{status}, 200, 'nor a session cookie';

    plant("$WS/empty.txt", '');
    $r = http(GET => "/v1/files/$WS/empty.txt");
    is $r->{status}, 200, 'an empty object: 200';
    is $r->{headers}{'content-length'}, 0, 'an empty object: Content-Length 0';
    is $r->{body}, '', 'an empty object: no bytes';
}

# --- HEAD ---------------------------------------------------------------------------------

my $PNG = "$WS/asset-png.png";
{
    my $g = http(GET => "/v1/files/$PNG");
    my $r = http(HEAD => "/v1/files/$PNG");
    is $r->{status}, 200, 'HEAD: 200';
    is $r->{body}, '', 'HEAD: no body';
    for my $n (qw(content-type content-length etag last-modified cache-control
                  x-content-type-options accept-ranges)) {
        is $r->{headers}{$n}, $g->{headers}{$n}, "HEAD: $n as GET";
    }
    $r = http(HEAD => "/v1/files/$WS/asset-svg.svg");
    is $r->{headers}{'content-disposition'}, 'attachment; filename="asset-svg.svg"',
        'HEAD: Content-Disposition as GET';
    $r = http(HEAD => "/v1/files/$WS/missing.png");
    is $r->{status}, 404, 'HEAD of a missing key: 404';
    is $r->{body}, '', 'HEAD of a missing key: no body';
}

# --- missing, folders, other methods ----------------------------------------------------------

sub is_404 {
    my ($r, $what) = @_;
    is $r->{status}, 404, "$what: 404" or diag "$r->{status} " . substr($r->{body} // '', 0, 200);
    is_deeply $r->{json}, { error => 'Not found', code => 'not_found' }, "$what: the error shape";
    is $r->{headers}{'x-content-type-options'}, 'nosniff', "$what: nosniff";
    ok !exists $r->{headers}{'cache-control'} || $r->{headers}{'cache-control'} !~ /immutable/,
        "$what: not cached as immutable";
}

is_404(http(GET => "/v1/files/$WS/missing.png"), 'a missing key');
is_404(http(GET => "/v1/files/nowhere/missing.png"), 'a missing folder');
is_404(http(GET => "/v1/files/$WS"), 'a folder');
make_path("$ROOT/$WS/folder.png");
is_404(http(GET => "/v1/files/$WS/folder.png"), 'a folder named like an image');
POSIX::mkfifo("$ROOT/$WS/fifo.bin", 0644) or die "mkfifo: $!";
is_404(http(GET => "/v1/files/$WS/fifo.bin", undef, undef, timeout => 5), 'a fifo (not waited on)');
{
    my $r = http(GET => '/v1/files/');
    is $r->{status}, 404, 'no key: 404';
    for my $m (qw(POST PUT PATCH DELETE)) {
        $r = http($m => "/v1/files/$PNG");
        is $r->{status}, 405, "$m: 405";
        is $r->{headers}{allow}, 'GET, HEAD', "$m: Allow: GET, HEAD";
        is $r->{headers}{'x-content-type-options'}, 'nosniff', "$m: the 405 has nosniff too";
    }
}

# --- the traversal corpus -----------------------------------------------------------------

# links planted inside the root: to the secret file, to the folder holding it, and (refused
# all the same: no link is followed) to a folder inside the root
symlink($SECRET_FILE, "$ROOT/$WS/link.png") or die "symlink: $!";
symlink($SECRET_FILE, "$ROOT/link-abs.txt") or die "symlink: $!";
symlink('../../secret.txt', "$ROOT/$WS/link-rel.txt") or die "symlink: $!";
symlink(prefix(), "$ROOT/outside") or die "symlink: $!";
symlink($WS, "$ROOT/inside") or die "symlink: $!";
plant('.hidden', "hidden $SECRET");
plant("$WS/.htaccess", "hidden $SECRET");

# the plants are real: nginx's own static location follows them to the secret
like http(GET => "/plain/$WS/link.png")->{body}, qr/\Q$SECRET\E/, 'control: the file link leads to the secret';
like http(GET => '/plain/outside/secret.txt')->{body}, qr/\Q$SECRET\E/,
    'control: the folder link leads to the secret';
like http(GET => '/plain/.hidden')->{body}, qr/\Q$SECRET\E/, 'control: the hidden file holds it';

my $abs = $SECRET_FILE;
(my $abs_enc = $abs) =~ s{/}{%2f}g;
my @CORPUS = (
    # dot segments, as sent
    '../secret.txt', '../../secret.txt', '../../../secret.txt', '../../../../../../etc/passwd',
    "$WS/../../secret.txt", "$WS/../../../secret.txt", './../secret.txt', "$WS/./../../secret.txt",
    # dot segments that stay inside the root: refused all the same (one spelling per object)
    "$WS/../$PNG", "./$PNG", "$WS/./asset-png.png", "$WS//asset-png.png",
    # percent-encoded dots and slashes
    '%2e%2e/secret.txt', '%2e%2e%2fsecret.txt', '%2E%2E/%2E%2E/secret.txt', '.%2e/secret.txt',
    '%2e./secret.txt', '..%2fsecret.txt', '..%2f..%2fsecret.txt', "$WS%2f..%2f..%2fsecret.txt",
    "$WS%2fasset-png.png", "$WS/asset-png%2epng",
    # double-encoded
    '%252e%252e/secret.txt', '%252e%252e%252fsecret.txt', '..%252fsecret.txt', '%25%32%65%25%32%65/secret.txt',
    # overlong UTF-8 for '.' and '/', escaped and raw
    '%c0%ae%c0%ae/secret.txt', '%c0%ae%c0%ae%c0%afsecret.txt', '%e0%80%ae%e0%80%ae/secret.txt',
    '..%c0%afsecret.txt', '..%e0%80%afsecret.txt', '%f0%80%80%ae%f0%80%80%ae/secret.txt',
    '%c0%2e%c0%2e/secret.txt', "\xc0\xae\xc0\xae/secret.txt", "..\xc0\xafsecret.txt",
    # other Unicode look-alikes: fullwidth dots and solidus, RTL override
    '%ef%bc%8e%ef%bc%8e/secret.txt', '..%ef%bc%8fsecret.txt', "$WS/asset%e2%80%aegnp.png",
    # NUL
    "$PNG%00.txt", '%00../secret.txt', "$WS%00/../../secret.txt",
    # backslashes
    '..\\secret.txt', '..%5csecret.txt', "$WS\\..\\..\\secret.txt", '..%5c..%5csecret.txt',
    "$WS%5casset-png.png",
    # absolute paths
    "/$abs", "$abs_enc", "%2f$abs", '/etc/passwd', '%2fetc%2fpasswd', 'C:\\secret.txt', 'file:///etc/passwd',
    # control bytes and others off the allow-list
    "$WS/asset-png.png%0a", "$WS/asset%0d%0apng.png", "$WS/asset%09.png", "$WS/asset%7f.png",
    "~/secret.txt", "$WS/asset-png.png;.txt", "$WS/asset-png.png%3b.txt", "$WS/asset-png.png/",
    "$WS/asset-png.png/..",
    # links planted inside the root, hidden files
    "$WS/link.png", 'link-abs.txt', "$WS/link-rel.txt", 'outside/secret.txt', 'outside/storage/.hidden',
    'inside/asset-png.png', '.hidden', "$WS/.htaccess", "$WS/%2ehtaccess",
    # 5,000 bytes
    'a' x 5000,
);
ok @CORPUS >= 40, 'the corpus has at least 40 keys (' . scalar(@CORPUS) . ')';

# Run twice: without an open_file_cache (one openat2() beneath the root) and with one
# (nginx's open, a component at a time with O_NOFOLLOW).
sub traversal {
    my ($how) = @_;
    for my $k (@CORPUS) {
        my $r = raw_http("GET /v1/files/$k HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                         timeout => 5);
        (my $shown = $k) =~ s/([^\x21-\x7e])/sprintf '\\x%02x', ord $1/ge;
        $shown = substr($shown, 0, 60) . '...' if length $shown > 63;
        note "$r->{status} $shown";
        ok $r->{status} == 404 || $r->{status} == 400, "$how: traversal $shown: 404 or 400"
            or diag "got $r->{status}";
        unlike $r->{body} // '', qr/\Q$SECRET\E|root:/, "$how: traversal $shown: no secret";
        like $r->{headers}{'content-type'} // '', qr{^application/json}, "$how: traversal $shown: a JSON error";
    }

    # the ones that reach the route answer exactly like a missing file
    is_404(http(GET => "/v1/files/$WS/link.png"), "$how: a link to a file outside");
    is_404(http(GET => '/v1/files/outside/secret.txt'), "$how: a link to a folder outside");
    is_404(http(GET => '/v1/files/inside/asset-png.png'), "$how: a link to a folder inside");
    is_404(http(GET => "/v1/files/$WS/asset-png%2epng"), "$how: an escaped byte");
    is_404(http(GET => '/v1/files/.hidden'), "$how: a hidden file");
    is http(GET => "/v1/files/$PNG")->{status}, 200, "$how: the object itself still 200";
}

my $log = error_log_size();
traversal('openat2');
ok scalar(grep { /openat2\(\) ".*link\.png" failed \(40:/ } error_log_lines($log)),
    'openat2: the link to a file refused by the kernel (ELOOP)';

# --- Range ------------------------------------------------------------------------------------

my $RANGE = "$WS/range.png";
my $BYTES = join '', map { chr($_ % 251) } 0 .. 999;
plant($RANGE, $BYTES);
{
    my $r = http(GET => "/v1/files/$RANGE", ['Range' => 'bytes=0-99']);
    is $r->{status}, 206, 'Range 0-99: 206';
    is $r->{headers}{'content-range'}, 'bytes 0-99/1000', 'Range 0-99: Content-Range';
    is $r->{body}, substr($BYTES, 0, 100), 'Range 0-99: those bytes';
    is $r->{headers}{'content-type'}, 'image/png', 'Range: the type';
    is $r->{headers}{'x-content-type-options'}, 'nosniff', 'Range: nosniff';

    $r = http(GET => "/v1/files/$RANGE", ['Range' => 'bytes=-100']);
    is $r->{status}, 206, 'Range -100 (suffix): 206';
    is $r->{headers}{'content-range'}, 'bytes 900-999/1000', 'suffix: Content-Range';
    is $r->{body}, substr($BYTES, 900), 'suffix: the last 100 bytes';

    $r = http(GET => "/v1/files/$RANGE", ['Range' => 'bytes=990-']);
    is $r->{status}, 206, 'Range 990- (open-ended): 206';
    is $r->{body}, substr($BYTES, 990), 'open-ended: the rest';

    $r = http(GET => "/v1/files/$RANGE", ['Range' => 'bytes=500-5000']);
    is $r->{status}, 206, 'Range past the end: 206, cut at the end';
    is $r->{headers}{'content-range'}, 'bytes 500-999/1000', 'past the end: Content-Range';

    $r = http(GET => "/v1/files/$RANGE", ['Range' => 'bytes=0-9,20-29']);
    is $r->{status}, 206, 'two ranges: 206';
    like $r->{headers}{'content-type'}, qr{^multipart/byteranges; boundary=}, 'two ranges: multipart';
    like $r->{body}, qr{Content-Range: bytes 0-9/1000\r\n\r\n\Q${\ substr($BYTES, 0, 10)}\E}s,
        'two ranges: the first part';
    like $r->{body}, qr{Content-Range: bytes 20-29/1000\r\n\r\n\Q${\ substr($BYTES, 20, 10)}\E}s,
        'two ranges: the second part';

    $r = http(GET => "/v1/files/$RANGE", ['Range' => 'bytes=2000-3000']);
    is $r->{status}, 416, 'Range beyond the file: 416';
    is $r->{headers}{'content-range'}, 'bytes */1000', '416: Content-Range bytes */1000';
    is_deeply $r->{json}, { error => 'The Range asks for no byte of the file', code => 'range_not_satisfiable' },
        '416: in the error shape' or diag $r->{body};
    is $r->{headers}{'x-content-type-options'}, 'nosniff', '416: nosniff';
    ok !defined $r->{headers}{'cache-control'}, '416: no Cache-Control';
    my @ids = grep { lc $_->[0] eq 'x-request-id' } @{$r->{header_list}};
    is scalar(@ids), 1, '416: one X-Request-Id';

    my $etag = http(HEAD => "/v1/files/$RANGE")->{headers}{etag};
    $r = http(GET => "/v1/files/$RANGE", ['Range' => 'bytes=0-9', 'If-Range' => $etag]);
    is $r->{status}, 206, 'If-Range with the ETag: 206';
    $r = http(GET => "/v1/files/$RANGE", ['Range' => 'bytes=0-9', 'If-Range' => '"other"']);
    is $r->{status}, 200, 'If-Range with another ETag: 200, the whole file';
    is length($r->{body}), 1000, 'If-Range with another ETag: 1000 bytes';

    $r = http(HEAD => "/v1/files/$RANGE", ['Range' => 'bytes=0-99']);
    is $r->{status}, 206, 'HEAD with Range: 206';
    is $r->{body}, '', 'HEAD with Range: no body';
}

# --- conditional requests -----------------------------------------------------------------

{
    my $g = http(GET => "/v1/files/$PNG");
    my ($etag, $lm) = @{$g->{headers}}{qw(etag last-modified)};
    my $r = http(GET => "/v1/files/$PNG", ['If-None-Match' => $etag]);
    is $r->{status}, 304, 'If-None-Match with the ETag: 304';
    is $r->{body}, '', '304: no body';
    is $r->{headers}{etag}, $etag, '304: the ETag';
    is $r->{headers}{'cache-control'}, 'public, max-age=31536000, immutable', '304: Cache-Control';
    is $r->{headers}{'x-content-type-options'}, 'nosniff', '304: nosniff';

    $r = http(GET => "/v1/files/$PNG", ['If-None-Match' => qq{"x", $etag}]);
    is $r->{status}, 304, 'If-None-Match with a list holding the ETag: 304';
    $r = http(GET => "/v1/files/$PNG", ['If-None-Match' => '*']);
    is $r->{status}, 304, 'If-None-Match: *: 304';
    $r = http(GET => "/v1/files/$PNG", ['If-None-Match' => '"other"']);
    is $r->{status}, 200, 'If-None-Match with another ETag: 200';

    $r = http(GET => "/v1/files/$PNG", ['If-Modified-Since' => $lm]);
    is $r->{status}, 304, 'If-Modified-Since Last-Modified: 304';
    $r = http(GET => "/v1/files/$PNG", ['If-Modified-Since' => 'Mon, 01 Jan 2001 00:00:00 GMT']);
    is $r->{status}, 200, 'If-Modified-Since long ago: 200';

    # a changed file (same key, new bytes and time) is a new ETag
    utime(time - 3600, time - 3600, "$ROOT/$PNG");
    my $e2 = http(HEAD => "/v1/files/$PNG")->{headers}{etag};
    isnt $e2, $etag, 'another modification time: another ETag';
    is http(GET => "/v1/files/$PNG", ['If-None-Match' => $etag])->{status}, 200, 'the old ETag: 200';
}

# --- the same corpus through nginx's own open, with an open_file_cache ----------------------

restart_nginx(config => "open_file_cache max=64 inactive=30s; open_file_cache_valid 30s; $PLAIN", error_log => 'logs/error.log debug');
$log = error_log_size();
traversal('open_file_cache');
ok scalar(grep { /openat\(\) ".*link\.png" failed \(40:/ } error_log_lines($log)),
    'open_file_cache: the link to a file refused by openat(O_NOFOLLOW) (ELOOP)';
is http(GET => "/v1/files/$RANGE", ['Range' => 'bytes=-100'])->{body}, substr($BYTES, 900),
    'open_file_cache: a range';
is http(GET => "/v1/files/$WS/asset-svg.svg")->{headers}{'content-disposition'},
    'attachment; filename="asset-svg.svg"', 'open_file_cache: an attachment';

# --- no PostgreSQL, no Redis on this path ---------------------------------------------------

restart_nginx(postgres => 'cms_postgres "hostaddr=127.0.0.1 port=%%FREE_PORT%% dbname=x user=postgres" max=1;',
              redis => 'cms_redis 127.0.0.1:%%FREE_PORT%% max=1;');
{
    allow_error_log(qr/connect\(\) failed|postgres|redis/i);
    my $r = http(GET => "/v1/files/$PNG", undef, undef, timeout => 5);
    # the 200 is the proof: a path that needed either server answers 503 (both refuse at
    # once, so a duration would add nothing but a way to fail on a busy machine)
    is $r->{status}, 200, 'PostgreSQL and Redis unreachable: still 200';
}

done_testing();
