# Responsive images (issue 36): GET /v1/files/size/w{width}/{key} and
# .../format/{webp|avif|jpeg|png}/{key} make a variant of an uploaded image once, with libvips in the
# image lane, store it beside the original and serve it as any stored object.
#
# The images are made here (the vips command, exiftool, and by hand for the GIF and the bomb): a
# JPEG with EXIF orientation 6 and a GPS position (the variant upright, no metadata left), a PNG
# with alpha (kept in PNG, flattened on white in JPEG), a two-frame animated GIF (its first frame),
# a 16-bit PNG, a truncated JPEG and a decompression bomb (a 100,000 x 100,000 PNG header in a few
# hundred bytes): both refused with 415, no worker exit. Shown too: the media record's width,
# height (orientation applied), colour and srcset from the header at upload; the served variant's
# headers, ETag, 304, Range and HEAD; widths off the list, formats, keys that are not uploaded
# images, missing originals: 404; bytes that are not an image under an image's key: 415; 50
# concurrent first requests on two workers make one variant (one job logged, 50 identical
# answers); a full lane answers 503 with Retry-After; a job over cms_image_timeout is 503;
# deleting the asset removes its variants, and a variant's key is named as long as its asset is.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup workspace upload_bytes);
use Compress::Zlib ();
use Digest::SHA ();
use File::Path qw(make_path);

my $TMP = prefix() . '/img';
make_path($TMP);
my $STORE = prefix() . '/storage';
my $WIDTHS = 'cms_image_widths 64 320 640 1280;';

sub sh { my $c = shift; system("$c >/dev/null 2>&1") == 0 or die "failed: $c\n" }
sub slurp { my $f = shift; open my $fh, '<:raw', $f or die "$f: $!"; local $/; <$fh> }
sub spew { my ($f, $b) = @_; open my $fh, '>:raw', $f or die "$f: $!"; print $fh $b; close $fh or die $! }
sub head_of { my ($f, $field) = @_; my $v = `vipsheader -f $field '$f' 2>/dev/null`; chomp $v; $v }
sub point { my ($f, $x, $y) = @_; [split ' ', `vips getpoint '$f' $x $y 2>/dev/null`] }
sub exif { my ($f, $tag) = @_; my $v = `exiftool -n -s3 -$tag '$f' 2>/dev/null`; chomp $v; $v }

# --- the images ------------------------------------------------------------------------------

# 300 x 200, the left half red, the right half blue; shown rotated 90 degrees clockwise
# (orientation 6): 200 x 300, red on top
my $orow = ("\xff\x00\x00" x 150) . ("\x00\x00\xff" x 150);
spew("$TMP/o.ppm", "P6\n300 200\n255\n" . $orow x 200);
sh("vips copy $TMP/o.ppm '$TMP/oriented.jpg\[Q=92\]'");
sh("exiftool -q -overwrite_original -n -Orientation=6 -GPSLatitude=48.8584 -GPSLatitudeRef=N"
   . " -GPSLongitude=2.2945 -GPSLongitudeRef=E -Make=TestCam $TMP/oriented.jpg");
is exif("$TMP/oriented.jpg", 'GPSLatitude'), '48.8584', 'the JPEG made carries a GPS position';

# 400 x 300 RGBA: transparent on the left, opaque green on the right
my $arow = ("\x00\x00\x00\x00" x 200) . ("\x00\xc0\x00\xff" x 200);
spew("$TMP/a.raw", $arow x 300);
sh("vips rawload $TMP/a.raw $TMP/a.v 400 300 4");
sh("vips copy $TMP/a.v $TMP/alpha.png");
is head_of("$TMP/alpha.png", 'bands'), 4, 'the PNG made has alpha';

# 16-bit RGB, 300 x 200
spew("$TMP/d.raw", pack('S*', (50000, 20000, 1000) x (300 * 200)));
sh("vips rawload $TMP/d.raw $TMP/d.v 300 200 3 --format ushort");
sh("vips copy $TMP/d.v $TMP/d2.v --interpretation rgb16");
sh("vips copy $TMP/d2.v $TMP/deep.png");
like head_of("$TMP/deep.png", 'format'), qr/USHORT/i, 'the PNG made is 16-bit';

# 2400 x 1600 noise: slow enough to make that concurrent requests meet
sh("vips gaussnoise $TMP/g.v 2400 1600");
sh("vips copy $TMP/g.v '$TMP/big.jpg\[Q=85\]'");

# the first half of a JPEG
my $big = slurp("$TMP/big.jpg");
spew("$TMP/truncated.jpg", substr($big, 0, int(length($big) / 2)));

# A GIF of two 100 x 100 frames, red then blue: LZW with a clear code before every second pixel,
# so that every code stays 3 bits wide
sub gif_frame {
    my ($index, $w, $h) = @_;
    my ($bits, $n, $out) = (0, 0, '');
    my $put = sub { $bits |= $_[0] << $n; $n += 3; while ($n >= 8) { $out .= chr($bits & 255); $bits >>= 8; $n -= 8 } };
    for my $i (0 .. $w * $h - 1) { $put->(4) if $i % 2 == 0; $put->($index) }
    $put->(5);
    $out .= chr($bits & 255) if $n;
    my $blocks = '';
    $blocks .= chr(length $_) . $_ for unpack '(a255)*', $out;
    return "\x21\xF9\x04\x00\x0A\x00\x00\x00"                      # graphic control: 0.1 s
         . "\x2C" . pack('vvvv', 0, 0, $w, $h) . "\x00"             # image descriptor
         . "\x02" . $blocks . "\x00";
}
spew("$TMP/anim.gif", "GIF89a" . pack('vv', 100, 100) . "\xF1\x00\x00"
     . "\xff\x00\x00" . "\x00\x00\xff" . "\x00\x00\x00" x 2      # 4 colours
     . "\x21\xFF\x0BNETSCAPE2.0\x03\x01\x00\x00\x00"              # loop forever
     . gif_frame(0, 100, 100) . gif_frame(1, 100, 100) . "\x3B");
is head_of("$TMP/anim.gif", 'n-pages'), 2, 'the GIF made has two frames';

# the bomb: a valid PNG that declares 100,000 x 100,000 pixels
sub png_chunk { my ($t, $d) = @_; pack('N', length $d) . $t . $d . pack('N', Compress::Zlib::crc32($t . $d)) }
spew("$TMP/bomb.png", "\x89PNG\r\n\x1a\n" . png_chunk('IHDR', pack('NNCCCCC', 100000, 100000, 8, 2, 0, 0, 0))
     . png_chunk('IDAT', Compress::Zlib::compress("\x00" x 4096)) . png_chunk('IEND', ''));
cmp_ok -s "$TMP/bomb.png", '<', 1000, 'the bomb is under a kilobyte';

# --- uploads ------------------------------------------------------------------------------------

start_nginx(http_config => $WIDTHS);

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Images');
Cms::Test::psql("INSERT INTO plans (name, storage_limit_bytes, upload_limit_bytes)"
                . " VALUES ('img-big', 1073741824, 104857600)");
Cms::Test::psql("UPDATE workspaces SET plan = 'img-big' WHERE id = '$wid'");

my %TYPE = (jpg => 'image/jpeg', png => 'image/png', gif => 'image/gif');

sub upload {
    my ($file) = @_;
    my ($ext) = $file =~ /\.(\w+)$/;
    return upload_bytes($ot, $wid, $file, $TYPE{$ext}, slurp("$TMP/$file"));
}

my %m = map { $_ => upload($_) } qw(oriented.jpg alpha.png deep.png big.jpg truncated.jpg anim.gif bomb.png);

is_deeply [@{$m{'oriented.jpg'}}{qw(width height)}], [200, 300],
    'upload: width and height from the header, EXIF orientation applied (300 x 200 shown upright)';
like $m{'oriented.jpg'}{color}, qr/^#[0-9a-f]{6}$/, 'upload: the average colour, #rrggbb';
my ($r, $g, $b) = map { hex } $m{'oriented.jpg'}{color} =~ /^#(..)(..)(..)$/;
ok $r > 90 && $b > 90 && $g < 60, "the colour is between red and blue ($m{'oriented.jpg'}{color})";
is_deeply [@{$m{'big.jpg'}}{qw(width height)}], [2400, 1600], 'upload: a big JPEG\'s size';
is_deeply [@{$m{'anim.gif'}}{qw(width height)}], [100, 100], 'upload: a GIF\'s size is a frame\'s';
is_deeply [@{$m{'bomb.png'}}{qw(width height color)}], [100000, 100000, undef],
    'upload: the bomb\'s header is read, its pixels never (no colour)';
is $m{'truncated.jpg'}{color}, undef, 'upload: a truncated JPEG has no colour';

my $url = $m{'oriented.jpg'}{url};
(my $prefix = $url) =~ s{\Q$m{'oriented.jpg'}{key}\E$}{};
is $m{'oriented.jpg'}{srcset}, "${prefix}size/w64/$m{'oriented.jpg'}{key} 64w, $url 200w",
    'srcset: the variants narrower than the image, then the original at its width';
is $m{'big.jpg'}{srcset}, join(', ', (map { "${prefix}size/w$_/$m{'big.jpg'}{key} ${_}w" } 64, 320, 640, 1280),
                                     "$m{'big.jpg'}{url} 2400w"), 'srcset: every width under 2400';
{
    my $got = req(GET => "/v1/workspaces/$wid/media/$m{'oriented.jpg'}{id}", $ot)->{json}{media};
    is_deeply [@$got{qw(width height color srcset)}], [@{$m{'oriented.jpg'}}{qw(width height color srcset)}],
        'the media record read back says the same';
    my $reg = req(POST => '/v1/api/media', Cms::Fixtures::key($ot, $wid, 'm', qw(media:read media:write)),
                  { title => 'Elsewhere', url => 'https://img.example/x.jpg', width => 10 });
    is_deeply [@{$reg->{json}{media} // {}}{qw(color srcset)}], [undef, undef],
        'an asset registered by URL has no colour and no srcset' or diag diag_resp($reg);
}

# --- variants --------------------------------------------------------------------------------------

sub variant { my ($w, $key, $fmt, @h) = @_; http(GET => "/v1/files/size/w$w/" . ($fmt ? "format/$fmt/" : '') . $key, [@h]) }
sub keep { my ($name, $body) = @_; spew("$TMP/out-$name", $body); "$TMP/out-$name" }

{
    my $k = $m{'oriented.jpg'}{key};
    my $v = variant(64, $k);
    is $v->{status}, 200, 'a JPEG at w64: 200' or diag diag_resp($v);
    is $v->{headers}{'content-type'}, 'image/jpeg', '... in its own format';
    is $v->{headers}{'cache-control'}, 'public, max-age=31536000, immutable', '... cached for a year, immutable';
    is $v->{headers}{'x-content-type-options'}, 'nosniff', '... nosniff';
    like $v->{headers}{etag} // '', qr/^"[0-9a-f]+-[0-9a-f]+"$/, '... a strong ETag';
    my $f = keep('o64.jpg', $v->{body});
    is_deeply [head_of($f, 'width'), head_of($f, 'height')], [64, 96], '... 64 wide, upright (64 x 96)';
    my ($top, $bottom) = (point($f, 32, 8), point($f, 32, 88));
    ok $top->[0] > 200 && $top->[2] < 60, 'orientation applied: red on top' or diag "@$top";
    ok $bottom->[2] > 200 && $bottom->[0] < 60, '... blue below' or diag "@$bottom";
    is exif($f, 'GPSLatitude'), '', 'no GPS position left';
    is exif($f, 'Make'), '', 'no EXIF left at all';
    is exif($f, 'Orientation'), '', 'no orientation tag (the pixels are upright)';
    ok -f "$STORE/$wid/$m{'oriented.jpg'}{id}/w64.jpg", 'stored beside the original: <ws>/<asset>/w64.jpg';

    my $again = variant(64, $k);
    is $again->{body}, $v->{body}, 'the second request: the same bytes';
    is $again->{headers}{etag}, $v->{headers}{etag}, '... the same ETag (served from disk)';
    is variant(64, $k, undef, 'If-None-Match' => $v->{headers}{etag})->{status}, 304, 'If-None-Match: 304';
    my $range = variant(64, $k, undef, Range => 'bytes=0-9');
    is $range->{status}, 206, 'Range: 206';
    is $range->{body}, substr($v->{body}, 0, 10), '... the first ten bytes';
    my $head = http(HEAD => "/v1/files/size/w64/$k");
    is_deeply [$head->{status}, $head->{body}, $head->{headers}{'content-length'}], [200, '', length $v->{body}],
        'HEAD: the headers alone';

    my $wide = variant(640, $k);
    is $wide->{status}, 200, 'a width over the image\'s: 200';
    is head_of(keep('o640.jpg', $wide->{body}), 'width'), 200, '... at the image\'s own width, never enlarged';

    for my $fmt (qw(webp avif png jpeg)) {
        my $x = variant(320, $m{'big.jpg'}{key}, $fmt);
        is $x->{status}, 200, "big.jpg at w320 as $fmt: 200" or diag diag_resp($x);
        my %ct = (webp => 'image/webp', avif => 'image/avif', png => 'image/png', jpeg => 'image/jpeg');
        is $x->{headers}{'content-type'}, $ct{$fmt}, "... $ct{$fmt}";
        my $f2 = keep("big320.$fmt", $x->{body});
        is_deeply [head_of($f2, 'width'), head_of($f2, 'height')], [320, 213], '... 320 x 213';
    }
}

{
    my $k = $m{'alpha.png'}{key};
    my $png = keep('a.png', variant(320, $k)->{body});
    is_deeply [head_of($png, 'width'), head_of($png, 'bands')], [320, 4], 'PNG with alpha: kept in PNG, alpha kept';
    my $jpg = variant(320, $k, 'jpeg');
    is $jpg->{status}, 200, 'PNG with alpha as JPEG: 200';
    my $f = keep('a.jpg', $jpg->{body});
    my ($left, $right) = (point($f, 40, 100), point($f, 280, 100));
    ok $left->[0] > 240 && $left->[1] > 240 && $left->[2] > 240, '... transparency flattened on white'
        or diag "@$left";
    ok $right->[1] > 150 && $right->[0] < 60, '... the opaque part kept' or diag "@$right";
    my $webp = keep('a.webp', variant(320, $k, 'webp')->{body});
    is head_of($webp, 'bands'), 4, 'PNG with alpha as WebP: alpha kept';
}

{
    my $gif = variant(64, $m{'anim.gif'}{key});
    is $gif->{status}, 200, 'an animated GIF at w64: 200' or diag diag_resp($gif);
    is $gif->{headers}{'content-type'}, 'image/gif', '... a GIF';
    my $f = keep('g.gif', $gif->{body});
    is_deeply [head_of($f, 'width'), head_of($f, 'height')], [64, 64], '... its first frame, 64 x 64';
    my $p = point($f, 32, 32);
    ok $p->[0] > 200 && $p->[2] < 60, '... red (the first frame)' or diag "@$p";
    my $webp = variant(64, $m{'anim.gif'}{key}, 'webp');
    is $webp->{status}, 200, 'the GIF as WebP: 200';
}

{
    my $deep = variant(64, $m{'deep.png'}{key}, 'webp');
    is $deep->{status}, 200, 'a 16-bit PNG as WebP: 200' or diag diag_resp($deep);
    my $f = keep('d.webp', $deep->{body});
    is head_of($f, 'width'), 64, '... 64 wide';
    my $p = point($f, 10, 10);
    ok $p->[0] > 180 && $p->[2] < 40, '... its colour kept in 8 bits' or diag "@$p";
    my $png = variant(64, $m{'deep.png'}{key});
    is $png->{status}, 200, 'a 16-bit PNG as PNG: 200';
}

# --- refusals ------------------------------------------------------------------------------------

check_err(variant(64, $m{'truncated.jpg'}{key}), 415, 'unsupported_media_type', 'a truncated JPEG');
check_err(variant(64, $m{'bomb.png'}{key}), 415, 'unsupported_media_type', 'the decompression bomb');
check_err(variant(64, $m{'bomb.png'}{key}, 'webp'), 415, 'unsupported_media_type', 'the bomb as WebP');
ok !-e "$STORE/$wid/$m{'bomb.png'}{id}/w64.png", 'no variant stored for a refusal';
ok scalar(grep { /refused: the image has 10000000000 pixels, over 50000000/ } error_log_lines()),
    'the refusal logged with its reason';
{
    # bytes that are not an image under an image's key (planted: an upload would be refused)
    my $id = '0b6f3c2a-1d2e-4f5a-8b9c-0d1e2f3a4b5c';
    spew("$STORE/$wid/$id.png", "<html><script>alert(1)</script></html>\n");
    check_err(variant(64, "$wid/$id.png"), 415, 'unsupported_media_type', 'HTML under a .png key');
    check_err(variant(64, "$wid/6a1f3c2a-1d2e-4f5a-8b9c-0d1e2f3a4b5c.png"), 404, 'not_found', 'a missing original');
}
my $k = $m{'oriented.jpg'}{key};
for my $bad ("/v1/files/size/w100/$k", "/v1/files/size/w0064/$k", "/v1/files/size/64/$k", "/v1/files/size/w/$k",
             "/v1/files/size/w99999999999999999999/$k", "/v1/files/size/w64/format/bmp/$k",
             "/v1/files/size/w64/format/gif/$k", "/v1/files/size/w64/format/WEBP/$k",
             "/v1/files/size/w64/format/webp", "/v1/files/size/w64/users/$k",
             "/v1/files/size/w64/$wid/not-a-uuid.jpg", "/v1/files/size/w64/$k/extra",
             "/v1/files/size/w64/../$k", "/v1/files/size/w64/$wid%2F$m{'oriented.jpg'}{id}.jpg")
{
    my $x = http(GET => $bad);
    check_err($x, 404, 'not_found', "GET $bad");
    is $x->{headers}{'x-content-type-options'}, 'nosniff', '... nosniff on the 404';
}
{
    my $pdf = req(POST => "/v1/workspaces/$wid/media/uploads", $ot,
                  { filename => 'doc.pdf', content_type => 'application/pdf', type => 'file', size_bytes => 10 });
    my $pk = $pdf->{json}{upload}{storage_key};
    check_err(variant(64, $pk), 404, 'not_found', 'a key that is not an image\'s');
    check_err(http(POST => "/v1/files/size/w64/$k"), 405, 'method_not_allowed', 'POST');
}

# --- one job for 50 concurrent first requests, on two workers ------------------------------------

start_nginx(workers => 2, http_config => $WIDTHS);
{
    my $vk = "$wid/$m{'big.jpg'}{id}/w1280.webp";
    my $before = grep { /\Qimage variant "$vk" made\E/ } error_log_lines();
    my @r = parallel_requests(map { { method => 'GET', path => "/v1/files/size/w1280/format/webp/$m{'big.jpg'}{key}" } } 1 .. 50);
    is scalar(grep { $_->{status} == 200 } @r), 50, '50 concurrent first requests: 50 x 200'
        or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 200 } @r;
    my %sums = map { Digest::SHA::sha256_hex($_->{body} // '') => 1 } @r;
    is scalar(keys %sums), 1, '... 50 identical answers';
    my $after = grep { /\Qimage variant "$vk" made\E/ } error_log_lines();
    is $after - $before, 1, '... made by one libvips job';
}

# --- a full lane, a job over its time -------------------------------------------------------------

start_nginx(http_config => "$WIDTHS\ncms_image_jobs 1;\ncms_image_queue 1;");
{
    my $l = http(GET => '/v1/_test/pool')->{json}{image} // {};
    is_deeply [@$l{qw(jobs queue)}], [1, 1], 'the image lane: 1 running, 1 waiting';
    my @r = parallel_requests(map { my ($w, $f) = @$_; { method => 'GET', path => "/v1/files/size/w$w/format/$f/$m{'big.jpg'}{key}" } }
                              map { my $w = $_; map { [$w, $_] } qw(avif png jpeg) } 64, 640, 1280);
    my @busy = grep { $_->{status} == 503 } @r;
    is scalar(grep { $_->{status} == 200 || $_->{status} == 503 } @r), scalar(@r), 'a burst: every answer 200 or 503'
        or diag join "\n", map { diag_resp($_) } @r;
    cmp_ok scalar(@busy), '>=', 1, '... the lane full: refused at once (' . scalar(@busy) . ' x 503)';
    check_err($busy[0], 503, 'service_unavailable', 'a full image lane') if @busy;
    ok(($busy[0]{headers}{'retry-after'} // '') =~ /^\d+$/, '... with Retry-After') if @busy;
    $l = http(GET => '/v1/_test/pool')->{json}{image} // {};
    is_deeply [@$l{qw(running queued)}], [0, 0], 'the lane drained';
}

start_nginx(http_config => "$WIDTHS\ncms_image_timeout 1ms;");
{
    my $x = variant(1280, $m{'big.jpg'}{key}, 'avif');
    check_err($x, 503, 'service_unavailable', 'a job over cms_image_timeout');
    ok !-e "$STORE/$wid/$m{'big.jpg'}{id}/w1280.avif", '... leaves no variant';
    ok scalar(grep { /ran out of time/ } error_log_lines()), '... logged';
}

# --- deletion, and the orphans' rule ----------------------------------------------------------------

start_nginx(http_config => $WIDTHS);
{
    my $id = $m{'big.jpg'}{id};
    my $vk = "$wid/$id/w320.webp";
    ok -f "$STORE/$vk", 'big.jpg has variants';
    is one("SELECT cms_object_named('$vk')"), 't', 'a variant\'s key is named while its asset is';
    is one("SELECT cms_object_named('$wid/$id/w320')"), 'f', '... not a key of another shape';
    my $d = req(DELETE => "/v1/workspaces/$wid/media/$id", $ot);
    is $d->{status}, 204, 'the asset deleted' or diag diag_resp($d);
    ok !-e "$STORE/$wid/$id", '... its variants gone with their folder';
    ok !-e "$STORE/$m{'big.jpg'}{key}", '... and the original';
    is one("SELECT cms_object_named('$vk')"), 'f', '... the variant\'s key no longer named (an orphan if left)';
    check_err(variant(320, $m{'big.jpg'}{key}, 'webp'), 404, 'not_found', 'its variant now');
}

done_testing();
