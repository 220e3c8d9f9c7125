# The store's sweeper (issue 32, sql/0036_object_removals.sql, docs/object-storage.md
# "Deletes and orphans"), on both backends, with cms_storage_reconcile 1s:
# - a removal is never lost: a row deleted without its object's removal (a crash between
#   the two: the row deleted in SQL) queues the key, and the sweeper removes the object;
#   on the bucket, a DELETE the bucket refuses (the studio's DELETE still answers 204) is
#   tried again, later each time, until the bucket takes it;
# - orphans: objects no row names, older than cms_upload_ttl plus an hour (their time set
#   back a day), are found by listing the bucket or walking the folder past the first page
#   (1,001 young objects before them) and removed; a young orphan, an old object a row
#   names (an upload, an avatar) and an old object whose key is not one the module makes
#   stay.
use strict;
use warnings;
use Cms::Test;
use Cms::S3;
use Cms::Fixtures qw(req diag_resp one signup signup_defaults workspace);
use File::Path qw(make_path);
use MIME::Base64 ();

signup_defaults(email_prefix => 'sweep');

my $PNG = MIME::Base64::decode_base64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==');
my $DAY_AGO = time - 86400;
my $FILLER = '00000000-0000-4000-8000-000000000000';    # sorts first: page one
my $LAST = 'ffffffff-ffff-4fff-8fff-ffffffffffff';      # sorts last: page two
my $N = 0;
sub uuid { sprintf '%08x-0000-4000-8000-%012x', $$, ++$N }

# an upload through the studio: its asset id and storage key
sub upload {
    my ($ot, $wid) = @_;
    my $base = "/v1/workspaces/$wid/media";
    my $r = req(POST => "$base/uploads", $ot, { filename => 'p.png', content_type => 'image/png', size_bytes => 100 });
    die 'reserve: ' . diag_resp($r) unless $r->{status} == 201;
    my $id = $r->{json}{upload}{asset_id};
    $r = http(PUT => "$base/$id/content", [Authorization => "Bearer $ot", 'Content-Type' => 'application/octet-stream'], $PNG);
    die 'content: ' . diag_resp($r) unless $r->{status} == 200;
    return ($id, one("SELECT storage_key FROM media_assets WHERE id = '$id'"));
}

sub avatar_key {
    my $ot = shift;
    my $r = http(PUT => '/v1/me/avatar', [Authorization => "Bearer $ot", 'Content-Type' => 'image/png'], $PNG);
    die 'avatar: ' . diag_resp($r) unless $r->{status} == 200;
    return $r->{json}{user}{avatar_url} =~ m{/v1/files/(\S+)$} ? $1 : die 'no avatar_url';
}

sub queued { one("SELECT count(*) FROM object_removals WHERE storage_key = '$_[0]'") }

# The shared scenario; $b: has($key), put($key, $mtime) (an object placed behind the
# module's back), age($key) (its time set back a day), label
sub sweep {
    my ($b) = @_;
    my $l = $b->{label};
    my $owner = signup();
    my $ot = $owner->{token};
    my $wid = workspace($ot, "Sweep $l");

    # a crash between the row's delete and the object's removal
    my ($id, $key) = upload($ot, $wid);
    ok $b->{has}->($key), "$l: the upload's object is stored";
    # the queue read inside the delete's own transaction: before any sweeper can act
    is one("BEGIN; DELETE FROM media_assets WHERE id = '$id';"
           . " SELECT count(*) FROM object_removals WHERE storage_key = '$key'; COMMIT"), 1,
       "$l: the row's delete queued its key, in its transaction";
    ok wait_until(30, sub { !$b->{has}->($key) && !queued($key) }),
       "$l: the sweeper removed the object and its queued key";

    # orphans, past the first page of 1,000
    $b->{put}->("$FILLER/" . uuid() . '.png', time) for 1 .. 1001;
    my $old = "$LAST/" . uuid() . '.png';
    my $old_avatar = 'users/' . uuid() . '/' . ('ab' x 16) . '.png';
    my $young = "$wid/" . uuid() . '.png';
    my $foreign = "$wid/notes.txt";
    $b->{put}->($_, $DAY_AGO) for $old, $old_avatar, $foreign;
    $b->{put}->($young, time);
    my (undef, $named) = upload($ot, $wid);
    my $avatar = avatar_key($ot);
    $b->{age}->($_) for $named, $avatar;
    # gone from the store, then from the queue (the round's settling statement follows)
    ok wait_until(60, sub { !$b->{has}->($old) && !$b->{has}->($old_avatar)
                            && !queued($old) && !queued($old_avatar) }),
       "$l: old orphans removed (one past the first page, an avatar's)"
        or diag join "\n", (grep { /cms:/ } Cms::Test::error_log_lines()),
                          ($b->{debug} ? $b->{debug}->() : ());
    ok $b->{has}->($young), "$l: a young orphan stays (an upload may still name it)";
    is queued($young), 0, "$l: ... and is not queued";
    ok $b->{has}->($named), "$l: an old object an asset names stays";
    ok $b->{has}->($avatar), "$l: an old object an avatar names stays";
    ok $b->{has}->($foreign), "$l: an old object whose key the module does not make stays";
    is one("SELECT count(*) FROM object_removals"), 0, "$l: nothing left queued";
    return ($ot, $wid);
}

# --- the folder ----------------------------------------------------------------------------

start_nginx(http_config => 'cms_storage_reconcile 1s;');
my $STORE = Cms::Test::prefix() . '/storage';
my $nobody = $> == 0 ? getpwnam('nobody') : undef;

sweep({
    label => 'folder',
    has => sub { -f "$STORE/$_[0]" },
    put => sub {
        my ($key, $mtime) = @_;
        (my $dir = "$STORE/$key") =~ s{/[^/]+$}{};
        unless (-d $dir) {
            make_path($dir);
            # the workers (nobody) remove what is in it
            for (my $d = $dir; $d ne $STORE; $d =~ s{/[^/]+$}{}) { chown $nobody, -1, $d if defined $nobody }
        }
        open my $fh, '>', "$STORE/$key" or die "$key: $!";
        print $fh $PNG;
        close $fh;
        utime $mtime, $mtime, "$STORE/$key";
    },
    age => sub { utime $DAY_AGO, $DAY_AGO, "$STORE/$_[0]" or die "$_[0]: $!" },
});
stop_nginx();

# --- the bucket ----------------------------------------------------------------------------

Cms::Test::psql('DELETE FROM object_removals');
my $s3 = Cms::S3->start;
start_nginx(storage => $s3->storage, config => $s3->locations,
            http_config => 'cms_storage_reconcile 1s;');
my ($ot, $wid) = sweep({
    label => 'bucket',
    debug => sub { map { "$_->{method} $_->{url} $_->{status} " . ($_->{refused} // '') } grep { $_->{method} eq 'GET' } @{$s3->requests} },
    has => sub { -f $s3->object_file($_[0]) },
    put => sub {
        my ($key, $mtime) = @_;
        my $f = $s3->object_file($key);
        (my $dir = $f) =~ s{/[^/]+$}{};
        make_path($dir);
        open my $fh, '>', $f or die "$f: $!";
        print $fh $PNG;
        close $fh;
        utime $mtime, $mtime, $f;
    },
    age => sub { my $f = $s3->object_file($_[0]); utime $DAY_AGO, $DAY_AGO, $f or die "$f: $!" },
});

# a DELETE the bucket refuses: the studio's answer stays 204, the sweeper tries again
allow_error_log(qr/removing .* from the bucket failed/, qr/the bucket's DELETE/);
my ($id, $key) = upload($ot, $wid);
$s3->refuse_delete(1);
my $r = req(DELETE => "/v1/workspaces/$wid/media/$id", $ot);
is $r->{status}, 204, 'bucket: the studio DELETE answers 204 while the bucket refuses';
ok -f $s3->object_file($key), 'bucket: ... the object is still there';
ok wait_until(30, sub { one("SELECT attempts FROM object_removals WHERE storage_key = '$key'") // 0 >= 1 }),
   'bucket: the sweeper tried, failed, and will try again';
my $refused = grep { $_->{method} eq 'DELETE' && ($_->{refused} // '') eq 'InternalError' } @{$s3->requests};
cmp_ok $refused, '>=', 2, "bucket: both DELETEs reached the bucket and were refused ($refused)";
$s3->refuse_delete(0);
ok wait_until(30, sub { !-f $s3->object_file($key) && !queued($key) }),
   'bucket: once the bucket takes DELETEs, the object is removed and its key unqueued';

done_testing();
