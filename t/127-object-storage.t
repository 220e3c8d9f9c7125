# Object storage (issue 32, docs/object-storage.md): cms_storage s3 puts every stored
# object in an S3-compatible bucket, here s3rver behind tools/node/s3-server.js, which
# checks each request's SigV4 signature (a wrong one is 403 SignatureDoesNotMatch), so
# every exchange below was signed right or refused. Writes are a subrequest to
# /_cms_s3: the staged file as the PUT's body, x-amz-content-sha256 its SHA-256; reads
# jump to @cms_s3 and stream the bucket's answer (its Range, 206, 416 and 304) with the
# files route's headers; deletes are a DELETE (the studio's, an avatar replaced). The
# object is placed before the row says ready: a finalize refused by the database (the
# quota) removes the object it placed. A wrong secret: 503 in the JSON shape,
# nothing written (no object, the asset still pending, no staged file left).
#
# nginx -t refuses a malformed endpoint, a missing or world-readable credentials file,
# a credentials file without the key pair, a bad bucket name and a missing stage folder.
use strict;
use warnings;
use Cms::Test;
use Cms::S3;
use Cms::Hosts qw(start_host_b stop_host_b host_b_port host_b_errors at);
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace);
use Digest::SHA ();
use MIME::Base64 qw(encode_base64);

signup_defaults(email_prefix => 's3');

my $s3 = Cms::S3->start;
my $dir = $s3->dir;

# --- nginx -t ---------------------------------------------------------------------------

{
    my $good = $s3->storage;
    my @bad = (
        [($good =~ s{endpoint=\S+}{endpoint=ftp://127.0.0.1/}r), 'an endpoint that is not http(s)'],
        [($good =~ s{endpoint=\S+}{endpoint=http://127.0.0.1:1/path}r), 'an endpoint with a path'],
        [($good =~ s{credentials=\S+}{credentials=$dir/none}r), 'a credentials file that is not there'],
        [($good =~ s{bucket=\S+}{bucket=No_Such}r), 'a bucket name S3 refuses'],
        [($good =~ s{stage=\S+}{stage=$dir/none}r), 'a stage folder that is not there'],
        [($good =~ s{ region=\S+}{}r), 'no region='],
        [($good =~ s{path_style=on}{}r), 'an address as endpoint without path_style=on'],
    );
    $s3->credentials("$dir/open", 'x', 0644);
    push @bad, [($good =~ s{credentials=\S+}{credentials=$dir/open}r), 'a credentials file others may read'];
    open my $fh, '>', "$dir/empty" or die; print $fh "[default]\n# nothing\n"; close $fh; chmod 0600, "$dir/empty";
    push @bad, [($good =~ s{credentials=\S+}{credentials=$dir/empty}r), 'a credentials file without the key pair'];
    for my $b (@bad) {
        my $t = nginx_test(storage => $b->[0], config => $s3->locations);
        isnt $t->{rc}, 0, "nginx -t refuses $b->[1]" or diag $t->{out};
        unlike $t->{out}, qr/\Q$Cms::S3::SECRET\E/, '... and never prints the secret';
    }
    my $t = nginx_test(storage => $good, config => $s3->locations);
    is $t->{rc}, 0, 'nginx -t takes the documented configuration' or diag $t->{out};
    $t = nginx_test(storage => $s3->storage(prefix => 'media/2026/'), config => $s3->locations);
    is $t->{rc}, 0, '... and a prefix' or diag $t->{out};
    $t = nginx_test(storage => $s3->storage(prefix => '/media'), config => $s3->locations);
    isnt $t->{rc}, 0, 'nginx -t refuses a prefix that starts with "/" or does not end with one';
    $t = nginx_test(storage => $s3->storage(part_size => '1m'), config => $s3->locations);
    isnt $t->{rc}, 0, 'nginx -t refuses parts under 5 MiB (S3\'s least)';
    $t = nginx_test(storage => $s3->storage(multipart => '6m', part_size => '8m'), config => $s3->locations);
    isnt $t->{rc}, 0, '... and multipart= under part_size=';
}

set_conf_defaults(storage => $s3->storage, config => $s3->locations);
start_nginx();

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Bucket');
my $base = "/v1/workspaces/$wid/media";

my $PNG = MIME::Base64::decode_base64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==');
my $PDF = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n" . ('x' x 300_000) . "\n%%EOF\n";

sub reserved {
    my $r = req(POST => "$base/uploads", $ot, $_[0]);
    die 'reserve: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{upload};
}
sub put_content {
    my ($id, $bytes) = @_;
    return http(PUT => "$base/$id/content",
                [Authorization => "Bearer $ot", 'Content-Type' => 'application/octet-stream'], $bytes);
}
sub staged { grep { -f } glob("$dir/stage/*/*"), glob("$dir/stage/*/.*.tmp") }

# --- finalize with data: into the bucket, read back ----------------------------------------

my $u = reserved({ filename => 'pixel.png', content_type => 'image/png', size_bytes => 100 });
my $r = req(POST => "$base/$u->{asset_id}/finalize", $ot, { data_base64 => encode_base64($PNG, '') });
is $r->{status}, 200, 'finalize with data: 200' or diag diag_resp($r), join("\n", grep { /error|crit|alert/ } error_log_lines());
is(($r->{json}{media} // {})->{status}, 'ready', '... ready');
is $s3->object($u->{storage_key}), $PNG, 'the bucket holds the bytes at the key (read with curl\'s SigV4)';
my ($put) = grep { $_->{method} eq 'PUT' } @{$s3->requests};
is(($put // {})->{payload}, Digest::SHA::sha256_hex($PNG), 'the PUT signed the payload\'s SHA-256, not UNSIGNED-PAYLOAD');
is_deeply [staged()], [], 'nothing left in the stage folder';
ok((grep { $_ eq $u->{storage_key} } @{$s3->keys("$wid/")}), 'the bucket lists the key');

my $f = http(GET => "/v1/files/$u->{storage_key}");
is $f->{status}, 200, 'GET /v1/files: 200 from the bucket' or diag diag_resp($f);
is $f->{body}, $PNG, '... the bytes';
is $f->{headers}{'content-type'}, 'image/png', '... Content-Type from the key';
is $f->{headers}{'x-content-type-options'}, 'nosniff', '... nosniff';
is $f->{headers}{'cache-control'}, 'public, max-age=31536000, immutable', '... immutable';
ok $f->{headers}{etag}, '... an ETag';
ok !(grep { /^x-amz-/i } keys %{$f->{headers}}), '... no x-amz-* header of the bucket';

my $h = http(HEAD => "/v1/files/$u->{storage_key}");
is $h->{status}, 200, 'HEAD: 200';
is $h->{headers}{'content-length'}, length $PNG, '... the length';
is $h->{body}, '', '... no body';

my $nm = http(GET => "/v1/files/$u->{storage_key}", ['If-None-Match' => $f->{headers}{etag}]);
is $nm->{status}, 304, 'If-None-Match: 304';

check_err(http(GET => "/v1/files/$wid/no-such-object.png"), 404, 'not_found', 'a key the bucket lacks: 404 in the JSON shape');
{
    my $miss = http(GET => "/v1/files/$wid/no-such-object.png");
    is $miss->{headers}{'x-content-type-options'}, 'nosniff', '... nosniff too';
    unlike $miss->{headers}{'cache-control'} // '', qr/immutable/, '... not to be kept for a year';
    like $miss->{headers}{'x-request-id'} // '', qr/^[0-9a-f]{32}$/, '... one X-Request-Id';
}
check_err(http(GET => "/v1/files/../etc/passwd.png"), 404, 'not_found', 'a refused key: 404, before the bucket');

# --- the AWS SDK for JavaScript: what the module wrote, and what the SDK wrote -------------

is $s3->sdk(get => $u->{storage_key}), $PNG, 'the official AWS SDK reads the module\'s object byte for byte';
{
    my $key = "$wid/from-the-sdk.png";
    ok $s3->sdk(put => $key, $PNG . "sdk", 'image/png'), 'the SDK stores an object under a key the module knows';
    my $x = http(GET => "/v1/files/$key");
    is $x->{status}, 200, '... /v1/files serves it' or diag diag_resp($x);
    is $x->{body}, $PNG . "sdk", '... byte for byte';
    is $x->{headers}{'content-type'}, 'image/png', '... typed by its key';
}

# --- the raw body: PUT .../content, Range, attachment --------------------------------------

my $d = reserved({ filename => 'doc.pdf', content_type => 'application/pdf', type => 'file', size_bytes => length $PDF });
$r = put_content($d->{asset_id}, $PDF);
is $r->{status}, 200, 'PUT content (300 KB): 200' or diag diag_resp($r);
is $s3->object($d->{storage_key}), $PDF, 'the bucket holds the raw body';
my $rg = http(GET => "/v1/files/$d->{storage_key}", [Range => 'bytes=0-7']);
is $rg->{status}, 206, 'Range: 206';
is $rg->{body}, '%PDF-1.4', '... the bytes asked for';
is $rg->{headers}{'content-range'}, 'bytes 0-7/' . length($PDF), '... Content-Range';
like http(GET => "/v1/files/$d->{storage_key}")->{headers}{'content-disposition'} // '', qr/^attachment; filename="/,
     'a PDF: attachment';
my $bad = http(GET => "/v1/files/$d->{storage_key}", [Range => 'bytes=999999999-']);
is $bad->{status}, 416, 'a range past the end: 416';

# --- the avatar: into the bucket, the one it replaces out of it ----------------------------

sub put_avatar { http(PUT => '/v1/me/avatar', [Authorization => "Bearer $ot", 'Content-Type' => 'image/png'], $_[0]) }
sub avatar_key { (($_[0]{json}{user} // {})->{avatar_url} // '') =~ m{/v1/files/(\S+)$} ? $1 : '' }
$r = put_avatar($PNG);
is $r->{status}, 200, 'PUT /v1/me/avatar: 200' or diag diag_resp($r);
my $a1 = avatar_key($r);
like $a1, qr{^users/}, '... its key';
is $s3->object($a1), $PNG, 'the avatar is in the bucket';
is http(GET => "/v1/files/$a1")->{body}, $PNG, 'and served by the files route';
$r = put_avatar($PNG);
my $a2 = avatar_key($r);
ok $a2 && $a2 ne $a1, 'a new avatar: a new key';
is $s3->object($a2), $PNG, '... in the bucket';
is $s3->object($a1), undef, 'the one it replaced: gone from the bucket';

# --- two hosts, one bucket: what A stored B serves, what B deleted A no longer serves ------

start_host_b();
my $B = host_b_port();
{
    my $t = reserved({ filename => 'two.png', content_type => 'image/png', size_bytes => 100 });
    $r = req(POST => "$base/$t->{asset_id}/finalize", $ot, { data_base64 => encode_base64($PNG . "two", '') });
    is $r->{status}, 200, 'host A stores an upload' or diag diag_resp($r);
    my $x = at($B, GET => "/v1/files/$t->{storage_key}");
    is $x->{status}, 200, 'host B serves it from the bucket' or diag diag_resp($x);
    is $x->{body}, $PNG . "two", '... the bytes';
    $x = at($B, DELETE => "$base/$t->{asset_id}", $ot);
    is $x->{status}, 204, 'host B deletes it' or diag diag_resp($x);
    check_err(http(GET => "/v1/files/$t->{storage_key}"), 404, 'not_found',
              'host A no longer serves it (no proxy_cache here: at once)');
    is_deeply [host_b_errors()], [], 'host B logged no [alert], [crit] or [emerg]';
}
stop_host_b();

# --- delete -------------------------------------------------------------------------------

$r = http(DELETE => "$base/$d->{asset_id}", [Authorization => "Bearer $ot"]);
ok $r->{status} == 200 || $r->{status} == 204, 'the studio DELETE' or diag diag_resp($r), join("\n", grep { /error|crit|alert/ } error_log_lines());
is $s3->object($d->{storage_key}), undef, 'the object is gone from the bucket';
check_err(http(GET => "/v1/files/$d->{storage_key}"), 404, 'not_found', 'and the files route: 404');

# --- the database refuses after the object was placed: the object removed ------------------

my $plan = one("SELECT plan FROM workspaces WHERE id = '$wid'");
Cms::Test::psql("INSERT INTO plans (name, storage_limit_bytes, upload_limit_bytes) VALUES ('s3-tiny', 1000, 100000)");
Cms::Test::psql("UPDATE workspaces SET plan = 's3-tiny' WHERE id = '$wid'");
my $q = reserved({ filename => 'pixel.png', content_type => 'image/png', size_bytes => 10 });
$r = put_content($q->{asset_id}, $PNG . ("\0" x 2000));
is $r->{status}, 413, 'finalize over the quota: 413' or diag diag_resp($r);
is $s3->object($q->{storage_key}), undef, '... the object it placed is removed from the bucket';
is one("SELECT status || ' ' || (finalizing_until IS NULL)::text FROM media_assets WHERE id = '$q->{asset_id}'"),
   'pending true', '... the asset still pending, its claim released';
Cms::Test::psql("UPDATE workspaces SET plan = '$plan' WHERE id = '$wid'");

# --- reads=redirect: a presigned URL instead of the proxy -----------------------------------

stop_nginx();
start_nginx(storage => $s3->storage(reads => 'redirect', expires => '2m'));
{
    my $x = http(GET => "/v1/files/$u->{storage_key}");
    is $x->{status}, 307, 'reads=redirect: 307' or diag diag_resp($x);
    my $loc = $x->{headers}{location} // '';
    like $loc, qr{^\Q@{[$s3->endpoint]}\E/media/\Q$u->{storage_key}\E\?.*X-Amz-Signature=[0-9a-f]{64}},
         '... to the object\'s presigned URL';
    like $loc, qr/X-Amz-Expires=120(&|$)/, '... valid for expires= (2m)';
    is $x->{headers}{'cache-control'}, 'no-store', '... kept by no cache beyond the URL\'s life';
    is $x->{headers}{'x-content-type-options'}, 'nosniff', '... nosniff';
    my $got = `curl -s -D - -o - '$loc'`;
    like $got, qr{^HTTP/1\.1 200}, 'the presigned URL: 200 from the bucket (its signature checked)';
    like $got, qr{^Content-Type: image/png\r?$}mi, '... typed by the key';
    like $got, qr{^Cache-Control: public, max-age=31536000, immutable\r?$}mi, '... immutable';
    ok index($got, $PNG) > 0, '... the bytes';
    (my $bad = $loc) =~ s/(X-Amz-Signature=[0-9a-f])/$1 eq 'X-Amz-Signature=0' ? 'X-Amz-Signature=1' : 'X-Amz-Signature=0'/e;
    like `curl -s -D - -o /dev/null '$bad'`, qr{^HTTP/1\.1 403}, 'a tampered signature: 403 from the bucket';
    (my $other = $loc) =~ s{\Q$u->{storage_key}\E}{$d->{storage_key}};
    like `curl -s -D - -o /dev/null '$other'`, qr{^HTTP/1\.1 403}, 'the URL for another key: 403';
    is http(HEAD => "/v1/files/$u->{storage_key}")->{status}, 307, 'HEAD: 307 too';
}

# --- multipart: above multipart=, parts of part_size= --------------------------------------

stop_nginx();
start_nginx(storage => $s3->storage(multipart => '10m', part_size => '5m'), config => $s3->locations,
            http_config => 'cms_upload_max_size 64m;');
Cms::Test::psql("INSERT INTO plans (name, storage_limit_bytes, upload_limit_bytes) VALUES ('s3-big', 1073741824, 104857600)");
Cms::Test::psql("UPDATE workspaces SET plan = 's3-big' WHERE id = '$wid'");
my $BIG = "%PDF-1.4\n" . join('', map { sprintf("%08d\n", $_) } 1 .. (23 * 1024 * 1024 / 9));
my $mp = reserved({ filename => 'big.pdf', content_type => 'application/pdf', type => 'file', size_bytes => length $BIG });
my $before = @{$s3->requests};
$r = put_content($mp->{asset_id}, $BIG);
is $r->{status}, 200, 'PUT content of 23 MiB: 200' or diag diag_resp($r), join("\n", grep { /bucket|error|crit/ } error_log_lines());
my @seen = @{$s3->requests}[$before .. $#{$s3->requests}];
my @parts = grep { $_->{method} eq 'PUT' && $_->{url} =~ /[?&]partNumber=\d+/ } @seen;
ok((grep { $_->{method} eq 'POST' && $_->{url} =~ /\?uploads=?$/ } @seen), 'the bucket saw a multipart upload begin');
is scalar(@parts), 5, '... five parts of 5 MiB (the last 3 MiB)';
ok !(grep { ($_->{payload} // '') eq 'UNSIGNED-PAYLOAD' } @parts), '... each part\'s SHA-256 signed';
ok((grep { $_->{method} eq 'POST' && $_->{url} =~ /\?uploadId=/ && $_->{status} == 200 } @seen), '... and complete');
is_deeply $s3->open_uploads, [], '... leaving no upload open';
is Digest::SHA::sha256_hex($s3->sdk(get => $mp->{storage_key}) // ''), Digest::SHA::sha256_hex($BIG),
   'the object is the bytes sent (read with the AWS SDK)';
my $across = http(GET => "/v1/files/$mp->{storage_key}", [Range => 'bytes=5242870-5242889']);
is $across->{body}, substr($BIG, 5242870, 20), 'a range across two parts';

# a part the bucket refuses: the upload aborted, no object, no parts kept
$s3->refuse_part(3);
my $mp2 = reserved({ filename => 'big.pdf', content_type => 'application/pdf', type => 'file', size_bytes => length $BIG });
$before = @{$s3->requests};
$r = put_content($mp2->{asset_id}, $BIG);
$s3->refuse_part(undef);
check_err($r, 503, 'service_unavailable', 'part 3 refused by the bucket: 503');
@seen = @{$s3->requests}[$before .. $#{$s3->requests}];
ok((grep { $_->{method} eq 'DELETE' && $_->{url} =~ /\?uploadId=/ && $_->{status} == 204 } @seen),
   '... the multipart upload aborted (its parts gone)');
ok !(grep { $_->{url} =~ /partNumber=4/ } @seen), '... no part sent after the refused one';
is_deeply $s3->open_uploads, [], '... the bucket keeps no upload begun (no orphan parts)';
is $s3->object($mp2->{storage_key}), undef, '... no object';
is one("SELECT status FROM media_assets WHERE id = '$mp2->{asset_id}'"), 'pending', '... the asset still pending';
is_deeply [staged()], [], '... no staged file left';

# --- a wrong secret: 503, nothing half-written ----------------------------------------------

stop_nginx();
start_nginx(storage => $s3->storage(secret => 'not-the-secret'), config => $s3->locations);
my $w = reserved({ filename => 'pixel.png', content_type => 'image/png', size_bytes => 100 });
$r = req(POST => "$base/$w->{asset_id}/finalize", $ot, { data_base64 => encode_base64($PNG, '') });
check_err($r, 503, 'service_unavailable', 'finalize with a wrong secret: 503 in the JSON shape');
is one("SELECT status FROM media_assets WHERE id = '$w->{asset_id}'"), 'pending', '... the asset still pending';
is $s3->object($w->{storage_key}), undef, '... no object in the bucket';
is_deeply [staged()], [], '... no staged file left';
ok((grep { ($_->{refused} // '') eq 'SignatureDoesNotMatch' } @{$s3->requests}), 'the bucket refused the signature');
check_err(http(GET => "/v1/files/$u->{storage_key}"), 503, 'service_unavailable', 'a read with a wrong secret: 503');

done_testing();
