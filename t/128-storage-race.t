# A studio DELETE racing a finalize (issue 32): the finalize places the object before the
# row says ready (sql/0035), and removes what it placed when the row is gone; the DELETE
# removes a ready row's object. Each try reserves an upload, then sends its PUT .../content
# and its DELETE at once, each after a random delay of up to 30 ms; whichever wins, the
# asset ends deleted. After the tries: no object left (no orphan), no row left (so no row
# without its object), the storage quota's usage 0, as the sizes stored; no staged or
# temporary file. Each order once for certain, then 100 tries on the folder backend and
# 200 on the bucket (Cms::S3).
use strict;
use warnings;
use Cms::Test;
use Cms::S3;
use Cms::Fixtures qw(req diag_resp one signup signup_defaults workspace);
use MIME::Base64 ();

signup_defaults(email_prefix => 'race');

my $PNG = MIME::Base64::decode_base64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==');
srand(128);

sub race {
    my ($label, $tries, $objects, $leftovers) = @_;
    my $owner = signup();
    my $ot = $owner->{token};
    my $wid = workspace($ot, "Race $label");
    my $base = "/v1/workspaces/$wid/media";
    my (%put, %del);
    # each order once for certain (on a busy machine the random delays may all fall one
    # way), then the race itself
    for my $first (qw(put delete)) {
        my $r = req(POST => "$base/uploads", $ot, { filename => 'p.png', content_type => 'image/png', size_bytes => 100 });
        die 'reserve: ' . diag_resp($r) unless $r->{status} == 201;
        my $id = $r->{json}{upload}{asset_id};
        my @steps = ([PUT => "$base/$id/content", [Authorization => "Bearer $ot", 'Content-Type' => 'application/octet-stream'], $PNG],
                     [DELETE => "$base/$id", [Authorization => "Bearer $ot"], undef]);
        @steps = reverse @steps if $first eq 'delete';
        my @got = map { http(@$_)->{status} } @steps;
        @got = reverse @got if $first eq 'delete';
        is_deeply \@got, $first eq 'put' ? [200, 204] : [404, 204],
            "$label: the finalize first (200, then the DELETE 204), or the DELETE first (the finalize 404)";
    }
    for (1 .. $tries) {
        my $r = req(POST => "$base/uploads", $ot, { filename => 'p.png', content_type => 'image/png', size_bytes => 100 });
        die 'reserve: ' . diag_resp($r) unless $r->{status} == 201;
        my $id = $r->{json}{upload}{asset_id};
        my ($p, $d) = parallel_requests(
            { method => 'PUT', path => "$base/$id/content", body => $PNG, delay => rand(0.03),
              headers => [Authorization => "Bearer $ot", 'Content-Type' => 'application/octet-stream'] },
            { method => 'DELETE', path => "$base/$id", delay => rand(0.03),
              headers => [Authorization => "Bearer $ot"] });
        $put{$p->{status}}++;
        $del{$d->{status}}++;
    }
    my @put_bad = grep { $_ != 200 && $_ != 404 } keys %put;
    ok !@put_bad, "$label: every finalize 200 or 404 (" . join(', ', map { "$_ x $put{$_}" } sort keys %put) . ')';
    is_deeply [keys %del], [204], "$label: every DELETE 204";
    is_deeply $objects->($wid), [], "$label: no object left (no orphan)";
    is one("SELECT count(*) FROM media_assets WHERE workspace_id = '$wid'"), 0,
       "$label: no row left (none without its object)";
    is one("SELECT cms_plan_usage('$wid', 'storage_bytes')"), 0, "$label: the quota's usage is 0, as stored";
    is_deeply [$leftovers->()], [], "$label: no staged or temporary file";
}

# --- the folder ----------------------------------------------------------------------------

start_nginx();
my $STORE = Cms::Test::prefix() . '/storage';
race('folder', 100,
     sub { my $w = shift; [grep { -f } glob("$STORE/$w/*")] },
     sub { grep { -f } glob("$STORE/*/.*.tmp") });
stop_nginx();

# --- the bucket ----------------------------------------------------------------------------

my $s3 = Cms::S3->start;
start_nginx(storage => $s3->storage, config => $s3->locations);
race('bucket', 200,
     sub { $s3->keys("$_[0]/") },
     sub { my $d = $s3->dir; grep { -f } glob("$d/stage/*/*"), glob("$d/stage/*/.*.tmp") });

done_testing();
