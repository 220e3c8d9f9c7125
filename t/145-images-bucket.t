# Responsive images from a bucket (issue 36, docs/images.md): with cms_storage s3 (s3rver behind
# tools/node/s3-server.js, every signature checked) the first request for a variant asks the
# bucket for it (HEAD), fetches the original, makes the variant in the image lane and stores
# it (a signed PUT of its bytes, their SHA-256 signed), then serves it from the bucket as any
# object; later requests find it there. 20 concurrent first requests make it once (one worker);
# a bomb is refused (415) and nothing stored; a missing original is 404; the media record's
# srcset names the variants.
use strict;
use warnings;
use Cms::Test;
use Cms::S3;
use Cms::Fixtures qw(req diag_resp check_err signup workspace upload_bytes);
use Compress::Zlib ();
use Digest::SHA ();

my $s3 = Cms::S3->start;
my $TMP = prefix() . '/img';
mkdir $TMP;

sub sh { my $c = shift; system("$c >/dev/null 2>&1") == 0 or die "failed: $c\n" }
sub slurp { my $f = shift; open my $fh, '<:raw', $f or die "$f: $!"; local $/; <$fh> }
sub spew { my ($f, $b) = @_; open my $fh, '>:raw', $f or die "$f: $!"; print $fh $b; close $fh or die $! }
sub head_of { my ($f, $field) = @_; my $v = `vipsheader -f $field '$f' 2>/dev/null`; chomp $v; $v }

sh("vips gaussnoise $TMP/g.v 1600 1200");
sh("vips copy $TMP/g.v '$TMP/photo.jpg\[Q=85\]'");
sub png_chunk { my ($t, $d) = @_; pack('N', length $d) . $t . $d . pack('N', Compress::Zlib::crc32($t . $d)) }
spew("$TMP/bomb.png", "\x89PNG\r\n\x1a\n" . png_chunk('IHDR', pack('NNCCCCC', 100000, 100000, 8, 2, 0, 0, 0))
     . png_chunk('IDAT', Compress::Zlib::compress("\x00" x 4096)) . png_chunk('IEND', ''));

set_conf_defaults(storage => $s3->storage, config => $s3->locations);
start_nginx(http_config => 'cms_image_widths 64 320 640;');

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Bucket images');

sub upload { upload_bytes($ot, $wid, $_[0], $_[1], slurp("$TMP/$_[0]")) }

my $photo = upload('photo.jpg', 'image/jpeg');
my $bomb = upload('bomb.png', 'image/png');
is_deeply [@$photo{qw(width height)}], [1600, 1200], 'upload to the bucket: the header read from the staged file';
like $photo->{color} // '', qr/^#[0-9a-f]{6}$/, '... and its colour';
like $photo->{srcset} // '', qr{/v1/files/size/w640/\Q$photo->{key}\E 640w, }, 'srcset names the variants';

my $vkey = "$wid/$photo->{id}/w320.webp";
my $path = "/v1/files/size/w320/format/webp/$photo->{key}";
my $before = scalar @{$s3->requests};
my $v = http(GET => $path);
is $v->{status}, 200, 'the first request: 200 from the bucket' or diag diag_resp($v);
is $v->{headers}{'content-type'}, 'image/webp', '... image/webp';
is $v->{headers}{'cache-control'}, 'public, max-age=31536000, immutable', '... immutable';
spew("$TMP/v.webp", $v->{body} // '');
is_deeply [head_of("$TMP/v.webp", 'width'), head_of("$TMP/v.webp", 'height')], [320, 240], '... 320 x 240';
my @asked = @{$s3->requests}[$before .. $#{$s3->requests}];
is $s3->object($vkey), $v->{body}, 'the bucket holds the variant at <ws>/<asset>/w320.webp';
# (the server logs a request once answered: sorted, not in order)
sub asked { [sort map { "$_->{method} " . ($_->{url} =~ s{^/[^/]+/}{}r =~ s{\?.*}{}r) } @_] }
# (its log has no line for a HEAD answered 404: the variant asked for first)
is_deeply asked(@asked), [sort "GET $photo->{key}", "PUT $vkey", "GET $vkey"],
    'the variant missing: the original read, the variant stored (PUT), then served';
my ($put) = grep { $_->{method} eq 'PUT' } @asked;
is(($put // {})->{payload}, Digest::SHA::sha256_hex($v->{body} // ''), 'the PUT signed the variant\'s SHA-256');

$before = scalar @{$s3->requests};
my $again = http(GET => $path);
is $again->{body}, $v->{body}, 'the second request: the same bytes';
is_deeply asked(@{$s3->requests}[$before .. $#{$s3->requests}]), [sort "HEAD $vkey", "GET $vkey"],
    '... found in the bucket (HEAD), served: not made again';
is http(GET => $path, ['If-None-Match' => $v->{headers}{etag} // 'x'])->{status}, 304,
    'If-None-Match: 304 (the bucket\'s)';

{
    my $p = "/v1/files/size/w640/$photo->{key}";
    my $made = grep { /image variant "\Q$wid\/$photo->{id}\/w640.jpg\E" made/ } error_log_lines();
    my @r = parallel_requests(map { { method => 'GET', path => $p } } 1 .. 20);
    is scalar(grep { $_->{status} == 200 } @r), 20, '20 concurrent first requests: 20 x 200'
        or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 200 } @r;
    my %sums = map { Digest::SHA::sha256_hex($_->{body} // '') => 1 } @r;
    is scalar(keys %sums), 1, '... identical';
    my $now = grep { /image variant "\Q$wid\/$photo->{id}\/w640.jpg\E" made/ } error_log_lines();
    is $now - $made, 1, '... made once';
    is scalar(grep { $_->{method} eq 'PUT' && $_->{url} =~ /w640\.jpg/ } @{$s3->requests}), 1,
        '... stored once';
}

check_err(http(GET => "/v1/files/size/w64/$bomb->{key}"), 415, 'unsupported_media_type', 'the bomb from the bucket');
is $s3->object("$wid/$bomb->{id}/w64.png"), undef, '... nothing stored';
check_err(http(GET => "/v1/files/size/w64/$wid/6a1f3c2a-1d2e-4f5a-8b9c-0d1e2f3a4b5c.jpg"), 404, 'not_found',
          'a missing original');
check_err(http(GET => "/v1/files/size/w100/$photo->{key}"), 404, 'not_found', 'a width off the list');

done_testing();
