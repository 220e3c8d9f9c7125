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
use Cms::Fixtures qw(req diag_resp one signup signup_defaults workspace);
use Digest::SHA ();
use IO::Socket::INET;
use JSON::PP ();
use Time::HiRes ();

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

sub rss_kb {
    open my $fh, '<', "/proc/$_[0]/status" or return 0;
    while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)\s+kB/ }
    return 0;
}
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
my $before = rss_kb($worker);
my $peak = $before;
my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => Cms::Test::port(), Proto => 'tcp')
    or die "connect: $!";
print $sock "PUT $base/$up->{asset_id}/content HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer $ot\r\n"
          . "Content-Type: video/mp4\r\nContent-Length: $GIB\r\nConnection: close\r\n\r\n";
my $head = "\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41";
my $sha = Digest::SHA->new(256);
for my $i (0 .. 1023) {
    # every MiB its own bytes: a part sent twice or out of order would show
    my $c = pack('N', $i) x (256 * 1024);
    substr($c, 0, length $head) = $head if $i == 0;
    print $sock $c or die "write: $!";
    $sha->add($c);
    if ($i % 16 == 0) { my $now = rss_kb($worker); $peak = $now if $now > $peak }
}
my $answer = '';
my $t0 = Time::HiRes::time();
$sock->blocking(0);
while (Time::HiRes::time() - $t0 < 600) {
    my $n = sysread($sock, my $buf, 65536);
    if (defined $n && $n == 0) { last }
    if (defined $n) { $answer .= $buf; next }
    my $now = rss_kb($worker);
    $peak = $now if $now > $peak;
    Time::HiRes::sleep(0.05);
}
close $sock;
my $after = rss_kb($worker);
my $digest = $sha->hexdigest;
my ($status) = $answer =~ m{^HTTP/1\.1 (\d+)};
is $status, 200, '1 GiB raw upload into the bucket: 200' or diag substr($answer, 0, 400);
my $json = eval { JSON::PP->new->decode(substr($answer, index($answer, "\r\n\r\n") + 4)) } // {};
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
