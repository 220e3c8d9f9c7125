# A 1 GiB raw upload into the bucket (issue 32): nginx streams the body to its temporary
# file, the store stages it (hashed and sniffed as it is copied), the parts' SHA-256 are
# taken in the thread pool, and 128 parts of 8 MiB go to the bucket as ranges of the
# staged file, each through the upstream machinery: the worker's RSS grows by less than
# 32 MiB at its peak, the server sees one multipart upload of 128 parts, the object is
# the bytes sent (size and SHA-256), nothing stays staged, and DELETE removes it.
use strict;
use warnings;
use Cms::Test;
use Cms::S3;
use Cms::Fixtures qw(req diag_resp one signup signup_defaults workspace stream_upload);
use Digest::SHA ();

signup_defaults(email_prefix => 'big');

my $GIB = 1024 * 1024 * 1024;
my $s3 = Cms::S3->start;
start_nginx(storage => $s3->storage, config => $s3->locations,
            http_config => 'cms_upload_max_size 1100m;');

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Big');
my $base = "/v1/workspaces/$wid/media";
Cms::Test::psql("INSERT INTO plans (name, storage_limit_bytes, upload_limit_bytes) VALUES ('big', 4294967296, 2147483648)");
Cms::Test::psql("UPDATE workspaces SET plan = 'big' WHERE id = '$wid'");

sub reserved {
    my $r = req(POST => "$base/uploads", $ot, $_[0]);
    die 'reserve: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{upload};
}

my ($worker) = Cms::Test::worker_pids();
{
    # warm-up: the worker's pools and buffers as a small upload leaves them
    my $w = reserved({ content_type => 'video/mp4', type => 'video', size_bytes => 100 });
    my $head = "\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41";
    my $r = http(PUT => "$base/$w->{asset_id}/content", [Authorization => "Bearer $ot", 'Content-Type' => 'video/mp4'],
                 $head . ("\x01" x 70000));
    is $r->{status}, 200, 'a small upload first (warm-up)' or diag diag_resp($r);
}

my $up = reserved({ content_type => 'video/mp4', type => 'video', size_bytes => $GIB });
my $head = "\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41";
my $u = stream_upload(path => "$base/$up->{asset_id}/content", token => $ot, type => 'video/mp4',
                      size => $GIB, chunks => 1024, worker => $worker, timeout => 600,
                      chunk => sub {
                          # every MiB its own bytes: a part sent twice or out of order would show
                          my $c = pack('N', $_[0]) x (256 * 1024);
                          substr($c, 0, length $head) = $head if $_[0] == 0;
                          return $c;
                      });
my ($before, $peak, $after, $digest, $json) = @$u{qw(before peak after sha256 json)};
is $u->{status}, 200, '1 GiB raw upload into the bucket: 200' or diag substr($u->{answer}, 0, 400);
is(($json->{media} // {})->{size_bytes}, $GIB, '... the real size recorded');
is one("SELECT sha256 FROM media_assets WHERE id = '$up->{asset_id}'"), $digest, '... the SHA-256 of the bytes sent';
cmp_ok $peak - $before, '<', 32 * 1024, "the worker's RSS grew less than 32 MiB at its peak "
    . "(before $before kB, peak $peak kB, after $after kB)";
cmp_ok $after - $before, '<', 32 * 1024, '... and after';

my @parts = grep { $_->{method} eq 'PUT' && $_->{url} =~ /[?&]partNumber=\d+/ && $_->{status} == 200 } @{$s3->requests};
is scalar(@parts), 128, 'the server saw a multipart upload of 128 parts of 8 MiB';
ok((grep { $_->{method} eq 'POST' && $_->{url} =~ /\?uploadId=/ && $_->{status} == 200 } @{$s3->requests}),
   '... completed');
is_deeply $s3->open_uploads, [], '... and none left open';
(my $name = $up->{storage_key}) =~ s{^.*/}{};
my $object = $s3->dir . "/data/$Cms::S3::BUCKET/$wid/$name._S3rver_object";
is -s $object, $GIB, 'the bucket holds 1 GiB at the key';
is(Digest::SHA->new(256)->addfile($object)->hexdigest, $digest, '... the bytes sent');
is_deeply [grep { -f } glob($s3->dir . '/stage/*/*'), glob($s3->dir . '/stage/*/.*.tmp')], [], 'nothing left staged';

is req(DELETE => "$base/$up->{asset_id}", $ot)->{status}, 204, 'the 1 GiB object deleted';
ok !-e $object, '... gone from the bucket';

done_testing();
