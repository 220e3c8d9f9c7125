# Uploads (issue 15): POST /media/uploads reserves a pending asset (its storage key, the
# declared size against the plan's per-file cap, cms_upload_max_size and the storage
# quota); POST /media/{id}/finalize stores data_base64 (written beside its place in the
# thread pool, hashed, sniffed with libmagic, fsynced, renamed) or, without data, finalizes
# an asset stored elsewhere; PUT /media/{id}/content takes the raw bytes as the body,
# streamed by nginx to its temporary file.
#
# Attacks: the libmagic matrix (PNG declared as JPEG refused, HTML and SVG as images
# refused, SVG and HTML refused at reservation, unknown declared types accept any bytes
# but script); finalizing twice (409 conflict), an unknown, malformed or other workspace's
# asset (404); 20 concurrent reservations and 20 concurrent finalizations that together
# exceed the quota never store more than it; the real size re-checked at finalization;
# a refused upload leaves no file; the studio DELETE removes the object and gives the
# quota back; a 200 MiB raw upload grows the worker's RSS by less than 16 MiB; lapsed
# reservations are refused and given back by the job (cms_upload_ttl 3s); credentials,
# roles, malformed JSON and wrong types on every route.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace stream_upload $UUID $TS);
use Digest::SHA ();
use IO::Socket::INET;
use JSON::PP ();
use MIME::Base64 qw(encode_base64);
use Time::HiRes ();

signup_defaults(email_prefix => 'upl');

my $MAX = 256 * 1024 * 1024;
start_nginx(http_config => "cms_upload_max_size $MAX;");

my $STORE = Cms::Test::prefix() . '/storage';

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Uploads');
my $base = "/v1/workspaces/$wid/media";

my %m;
for my $role (qw(viewer author)) {
    $m{$role} = signup();
    Cms::Test::psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
}
my $outsider = signup();
my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');

# room for the 200 MiB upload; the quota tests put the workspace on smaller plans
Cms::Test::psql("INSERT INTO plans (name, storage_limit_bytes, upload_limit_bytes)"
                . " VALUES ('upl-big', 1073741824, 314572800), ('upl-tiny', 10000, 5000)");
sub on_plan { Cms::Test::psql("UPDATE workspaces SET plan = '$_[0]' WHERE id = '$wid'") }
on_plan('upl-big');

my %BYTES = (
    png  => MIME::Base64::decode_base64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='),
    jpeg => "\xFF\xD8\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xFF\xD9",
    html => "<!DOCTYPE html><html><head><title>x</title></head><body><script>alert(1)</script></body></html>\n",
    svg  => "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>",
    pdf  => "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n",
    text => "hello, plain text\n",
);

sub reserve {
    my ($f, $t) = @_;
    return req(POST => "$base/uploads", $t // $ot, $f);
}
sub reserved {
    my $r = reserve(@_);
    die 'reserve: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{upload};
}
sub finalize { req(POST => "$base/$_[0]/finalize", $_[2] // $ot, $_[1]) }
sub put_content {
    my ($id, $bytes, $t) = @_;
    return Cms::Test::http(PUT => "$base/$id/content",
                           [Authorization => 'Bearer ' . ($t // $ot), 'Content-Type' => 'application/octet-stream'],
                           $bytes);
}
sub stored_files {
    my @f;
    for my $d (glob "$STORE/*") { push @f, glob("$d/*"), glob("$d/.*.tmp") }
    return grep { -f } @f;
}
sub tmp_files { grep { m{/\.[^/]*\.tmp$} } stored_files() }
sub usage { one("SELECT cms_plan_usage('$wid', 'storage_bytes')") }

# --- reserve, finalize with data ------------------------------------------------------

my $u = reserved({ filename => 'pixel.png', content_type => 'image/png', size_bytes => 100, title => 'Pixel' });
is_deeply [sort keys %$u], [qw(asset_id content_type expires_at storage_key)], 'reserve: the upload session';
like $u->{asset_id}, $UUID, 'reserve: asset_id is a uuid';
is $u->{storage_key}, "$wid/$u->{asset_id}.png", 'reserve: the key is <workspace>/<asset>.<ext>';
is $u->{content_type}, 'image/png', 'reserve: the content type';
like $u->{expires_at}, $TS, 'reserve: expires_at';
is one("SELECT status || ' ' || size_bytes FROM media_assets WHERE id = '$u->{asset_id}'"), 'pending 100',
    'reserve: a pending asset holding the declared size';
is usage(), 100, 'the reservation counts against the quota';
is req(GET => "$base/$u->{asset_id}", $ot)->{json}{media}{status}, 'pending', 'the media record says pending';

my $r = finalize($u->{asset_id}, { data_base64 => encode_base64($BYTES{png}, ''), width => 1, height => 1 });
is $r->{status}, 200, 'finalize with data: 200' or diag diag_resp($r);
my $med = $r->{json}{media} // {};
is_deeply { map { $_ => $med->{$_} } qw(id status size_bytes mime_type url title width height type) },
    { id => $u->{asset_id}, status => 'ready', size_bytes => length $BYTES{png}, mime_type => 'image/png',
      url => "http://localhost/v1/files/$u->{storage_key}", title => 'Pixel', width => 1, height => 1,
      type => 'image' },
    'finalize: ready, the real size, the files route\'s absolute URL (the request\'s scheme and Host)';
{
    # the url read back is one the content API takes again (it types it as a URI)
    my $K = Cms::Fixtures::key($ot, $wid, 'media', qw(media:read media:write));
    my $again = req(POST => '/v1/api/media', $K, { title => 'Again', url => $med->{url}, mime_type => 'image/png' });
    is $again->{status}, 201, 'the stored asset\'s url registered again: 201' or diag diag_resp($again);
    is(($again->{json}{media} // {})->{url}, $med->{url}, '... the same url');
    my $served = http(GET => $med->{url} =~ s{^http://localhost}{}r);
    is $served->{status}, 200, 'and the files route answers at it';
}
my $path = "$STORE/$u->{storage_key}";
ok -f $path, 'finalize: the object is at <cms_storage>/<key>';
is do { local (@ARGV, $/) = $path; <> }, $BYTES{png}, 'finalize: the bytes stored';
is sprintf('%04o', (stat $path)[2] & 07777), '0644', 'the file is 0644';
is sprintf('%04o', (stat "$STORE/$wid")[2] & 07777), '0755', 'its folder is 0755';
is one("SELECT sha256 FROM media_assets WHERE id = '$u->{asset_id}'"), Digest::SHA::sha256_hex($BYTES{png}),
    'finalize: the SHA-256 recorded';
is usage(), length $BYTES{png}, 'the real size replaced the reservation';
check_err(finalize($u->{asset_id}, { data_base64 => encode_base64($BYTES{png}, '') }), 409, 'conflict',
          'finalize twice');
check_err(finalize($u->{asset_id}, {}), 409, 'conflict', 'finalize twice, without data');
check_err(put_content($u->{asset_id}, $BYTES{png}), 409, 'conflict', 'PUT content after finalize');

# --- the libmagic matrix ------------------------------------------------------------------
# Decisions: the bytes must be what the key's extension says (a PNG declared as JPEG is
# refused: the files route would serve it as image/jpeg); bytes that run as script are
# refused whatever was declared; a declared type outside the storage table (stored as .bin,
# served as an attachment) takes any bytes but script.

for my $t (
    ['image/png', 'image', 'png', 1], ['image/jpeg', 'image', 'jpeg', 1], ['text/plain', 'file', 'text', 1],
    ['application/pdf', 'file', 'pdf', 1], ['application/octet-stream', 'file', 'pdf', 1],
    ['application/x-unknown', 'file', 'png', 1],
    ['image/jpeg', 'image', 'png', 0], ['image/png', 'image', 'jpeg', 0], ['image/png', 'image', 'html', 0],
    ['image/png', 'image', 'svg', 0], ['image/gif', 'image', 'svg', 0], ['application/pdf', 'file', 'html', 0],
    ['application/octet-stream', 'file', 'html', 0], ['application/octet-stream', 'file', 'svg', 0],
    ['text/plain', 'file', 'html', 0],
) {
    my ($ct, $type, $bytes, $ok) = @$t;
    for my $way (qw(finalize content)) {
        my $up = reserved({ content_type => $ct, type => $type, size_bytes => length $BYTES{$bytes} });
        my $res = $way eq 'finalize' ? finalize($up->{asset_id}, { data_base64 => encode_base64($BYTES{$bytes}, '') })
                                     : put_content($up->{asset_id}, $BYTES{$bytes});
        my $name = "$way: $bytes bytes declared $ct ($type)";
        if ($ok) {
            is $res->{status}, 200, "$name: stored" or diag diag_resp($res);
            ok -f "$STORE/$up->{storage_key}", "$name: the object is there";
        } else {
            check_err($res, 400, 'invalid_field_value', "$name: refused");
            ok !-e "$STORE/$up->{storage_key}", "$name: nothing stored";
            is one("SELECT status FROM media_assets WHERE id = '$up->{asset_id}'"), 'pending', "$name: still pending";
        }
    }
}
is_deeply [tmp_files()], [], 'no temporary file left behind';

for my $t (['image/svg+xml', 'image'], ['image/svg+xml', 'file'], ['text/html', 'file'],
           ['application/javascript', 'file'], ['video/mp4', 'image'], ['image/png', 'audio'], ['not a type', 'file']) {
    my ($ct, $type) = @$t;
    check_err(reserve({ content_type => $ct, type => $type }), 400, 'invalid_field_value',
              "reserve: $ct as $type refused");
}
{
    my $up = reserved({ filename => 'clip.MP4', type => 'video' });
    is_deeply [$up->{content_type}, $up->{storage_key} =~ /(\.\w+)$/], ['video/mp4', '.mp4'],
        'reserve: no content_type: the filename\'s extension gives it';
    $up = reserved({ type => 'file' });
    is_deeply [$up->{content_type}, $up->{storage_key} =~ /(\.\w+)$/], ['application/octet-stream', '.bin'],
        'reserve: neither: application/octet-stream, .bin';
    check_err(reserve({}), 400, 'invalid_field_value', 'reserve: nothing declared for an image: no image type');
    my $e = reserved({ content_type => 'image/png' });
    check_err(finalize($e->{asset_id}, { data_base64 => '' }), 400, 'invalid_field_value', 'finalize: empty data');
    check_err(finalize($e->{asset_id}, { data_base64 => '!!!!' }), 400, 'invalid_field_value', 'finalize: not base64');
    check_err(finalize($e->{asset_id}, { data_base64 => 'AAAA', url => 'https://cdn.example.com/a.png' }), 400,
              'invalid_field_value', 'finalize: url with data');
    check_err(put_content($e->{asset_id}, ''), 400, 'invalid_field_value', 'PUT content: an empty body');
    is_deeply [tmp_files()], [], 'no temporary file left behind';
}

# --- finalize without data: stored elsewhere ----------------------------------------------

{
    my $up = reserved({ content_type => 'image/png', size_bytes => 5000 });
    my $before = usage();
    my $res = finalize($up->{asset_id}, { url => 'https://cdn.example.com/p.png', title => 'Elsewhere' });
    is $res->{status}, 200, 'finalize without data: 200' or diag diag_resp($res);
    is_deeply { map { $_ => $res->{json}{media}{$_} } qw(status url size_bytes title) },
        { status => 'ready', url => 'https://cdn.example.com/p.png', size_bytes => 0, title => 'Elsewhere' },
        'without data: ready at its URL, nothing stored here';
    is usage(), $before - 5000, 'without data: the reservation is given back';
    check_err(finalize($up->{asset_id}, {}), 409, 'conflict', 'without data, twice');
}

# --- caps and the quota ------------------------------------------------------------------

check_err(reserve({ content_type => 'image/png', size_bytes => 314572801 }), 413, 'upload_too_large',
          'reserve over the plan\'s per-file cap');
Cms::Test::psql("UPDATE plans SET upload_limit_bytes = 2 * $MAX WHERE name = 'upl-big'");
check_err(reserve({ content_type => 'image/png', size_bytes => $MAX + 1 }), 413, 'upload_too_large',
          'reserve over cms_upload_max_size');
Cms::Test::psql("UPDATE plans SET upload_limit_bytes = 314572800 WHERE name = 'upl-big'");
Cms::Test::psql("UPDATE plans SET storage_limit_bytes = 1000 WHERE name = 'upl-big'");
check_err(reserve({ content_type => 'image/png', size_bytes => 2000 }), 413, 'storage_limit_exceeded',
          'reserve over the quota');
Cms::Test::psql("UPDATE plans SET storage_limit_bytes = 1073741824 WHERE name = 'upl-big'");
{
    my $res = Cms::Test::http(PUT => "$base/" . reserved({ content_type => 'image/png' })->{asset_id} . '/content',
                              [Authorization => "Bearer $ot", 'Content-Length' => $MAX + 1], '');
    # the route's own cap, before a byte is read (nginx's client_max_body_size is off)
    check_err($res, 413, 'upload_too_large', 'PUT content declaring more than cms_upload_max_size');
}

# quota races: the workspace alone on a 10,000-byte plan
Cms::Test::psql("DELETE FROM media_assets WHERE workspace_id = '$wid'");
on_plan('upl-tiny');
{
    my @res = Cms::Test::parallel_requests(map {
        { method => 'POST', path => "$base/uploads",
          headers => [Authorization => "Bearer $ot", 'Content-Type' => 'application/json'],
          body => '{"content_type":"image/png","size_bytes":1000}', timeout => 30 }
    } 1 .. 20);
    my %st;
    $st{$_->{status}}++ for @res;
    is_deeply \%st, { 201 => 10, 413 => 10 }, '20 concurrent reservations of 1,000 bytes, quota 10,000: 10 fit';
    ok !grep({ $_->{status} == 413 && ($_->{json}{code} // '') ne 'storage_limit_exceeded' } @res),
        '... the others storage_limit_exceeded';
    is usage(), 10000, 'the quota is used exactly';
}
Cms::Test::psql("DELETE FROM media_assets WHERE workspace_id = '$wid'");
{
    # reservations of nothing, then 20 finalizations of 1,000 real bytes at once
    my $png = $BYTES{png} . ("\0" x (1000 - length $BYTES{png}));
    my @ids = map { reserved({ content_type => 'image/png' })->{asset_id} } 1 .. 20;
    my $data = encode_base64($png, '');
    my @res = Cms::Test::parallel_requests(map {
        { method => 'POST', path => "$base/$_/finalize",
          headers => [Authorization => "Bearer $ot", 'Content-Type' => 'application/json'],
          body => qq({"data_base64":"$data"}), timeout => 30 }
    } @ids);
    my %st;
    $st{$_->{status}}++ for @res;
    is_deeply \%st, { 200 => 10, 413 => 10 }, '20 concurrent finalizations of 1,000 bytes, quota 10,000: 10 stored';
    is usage(), 10000, 'the total stored never exceeds the quota';
    my @keys = map { ($_->{json}{media}{url} // '') =~ s{^http://localhost/v1/files/}{}r } grep { $_->{status} == 200 } @res;
    is scalar(grep { -f "$STORE/$_" } @keys), 10, 'the ten objects are on disk';
    is one("SELECT count(*) FROM media_assets WHERE workspace_id = '$wid' AND status = 'pending'"
           . " AND storage_key <> ''"), 10, 'the ten refused are still pending';
    is_deeply [tmp_files()], [], 'no temporary file left behind';
    my $one = (grep { $_->{status} == 200 } @res)[0]{json}{media};
    my $key = $one->{url} =~ s{^http://localhost/v1/files/}{}r;
    my $d = req(DELETE => "$base/$one->{id}", $ot);
    is $d->{status}, 204, 'studio DELETE of a stored upload: 204';
    ok !-e "$STORE/$key", 'DELETE removed the object';
    is usage(), 9000, 'DELETE gave the quota back';
    # the real size is checked again: a reservation of 1 byte finalized with 2,000
    my $small = reserved({ content_type => 'image/png', size_bytes => 1 });
    check_err(finalize($small->{asset_id}, { data_base64 => encode_base64($png . $png, '') }), 413,
              'storage_limit_exceeded', 'finalize: the real size over the quota');
    ok !-e "$STORE/$small->{storage_key}", '... nothing stored';
    check_err(finalize($small->{asset_id}, { data_base64 => encode_base64($png x 6, '') }), 413,
              'upload_too_large', 'finalize: the real size over the per-file cap');
    is_deeply [tmp_files()], [], 'no temporary file left behind';
}
Cms::Test::psql("DELETE FROM media_assets WHERE workspace_id = '$wid'");
on_plan('upl-big');

# --- a 200 MiB raw upload: streamed to disk, the worker's memory flat -----------------------

{
    my $size = 200 * 1024 * 1024;
    my $up = reserved({ content_type => 'video/mp4', type => 'video', size_bytes => $size });
    my ($worker) = Cms::Test::worker_pids();
    my $warm = reserved({ content_type => 'image/png' });
    is put_content($warm->{asset_id}, $BYTES{png})->{status}, 200, 'a small raw upload first (warm-up)';
    my $head = "\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41";
    my $chunk = "\x01" x (1024 * 1024);
    my $u = stream_upload(path => "$base/$up->{asset_id}/content", token => $ot, type => 'video/mp4',
                          size => $size, chunks => 200, worker => $worker,
                          chunk => sub { $_[0] == 0 ? $head . substr($chunk, length $head) : $chunk });
    my ($before, $peak, $after) = @$u{qw(before peak after)};
    is $u->{status}, 200, '200 MiB raw upload: 200' or diag substr($u->{answer}, 0, 400);
    is $u->{json}{media}{size_bytes}, $size, '200 MiB: the real size recorded';
    is -s "$STORE/$up->{storage_key}", $size, '200 MiB: the object on disk';
    is one("SELECT sha256 FROM media_assets WHERE id = '$up->{asset_id}'"), $u->{sha256},
        '200 MiB: the SHA-256 of the bytes sent';
    cmp_ok $peak - $before, '<', 16 * 1024, "200 MiB: the worker's RSS grew less than 16 MiB at its peak "
        . "(before $before kB, peak $peak kB, after $after kB)";
    cmp_ok $after - $before, '<', 16 * 1024, '200 MiB: and after';
    is req(DELETE => "$base/$up->{asset_id}", $ot)->{status}, 204, 'the 200 MiB object deleted';
    ok !-e "$STORE/$up->{storage_key}", '... gone from disk';
}

# --- failures per route ------------------------------------------------------------------

{
    my $up = reserved({ content_type => 'image/png' });
    my $id = $up->{asset_id};
    my $theirs = req(POST => "/v1/workspaces/$wid2/media/uploads", $other->{token}, { content_type => 'image/png' });
    is $theirs->{status}, 201, 'another workspace reserves' or diag diag_resp($theirs);
    my $tid = $theirs->{json}{upload}{asset_id};
    my @routes = (['POST', "$base/uploads", { content_type => 'image/png' }],
                  ['POST', "$base/$id/finalize", {}], ['PUT', "$base/$id/content", undef]);
    for my $t (@routes) {
        my ($meth, $p, $b) = @$t;
        check_err(req($meth, $p, undef, $b), 401, 'missing_token', "$meth $p without a session");
        check_err(req($meth, $p, 'x.y.z', $b), 401, 'invalid_token', "$meth $p with a bad token");
        check_err(req($meth, $p, $outsider->{token}, $b), 403, 'not_workspace_member', "$meth $p as an outsider");
        check_err(req($meth, $p, $m{viewer}{token}, $b), 403, 'forbidden', "$meth $p as a viewer");
    }
    is one("SELECT status FROM media_assets WHERE id = '$id'"), 'pending', 'no refused request finalized it';
    for my $t (['POST', "$base/uploads"], ['POST', "$base/$id/finalize"]) {
        my ($meth, $p) = @$t;
        check_err(req($meth, $p, $ot, '{"title":'), 400, 'invalid_request', "$meth $p: malformed JSON");
        check_err(req($meth, $p, $ot, '[]'), 400, 'invalid_request', "$meth $p: a JSON array");
    }
    for my $t ([{ size_bytes => 'big' }, 'size_bytes a string'], [{ size_bytes => -1 }, 'size_bytes negative'],
               [{ content_type => 5 }, 'content_type a number'], [{ type => 'document' }, 'an unknown type'],
               [{ filename => [] }, 'filename an array'], [{ title => 'x' x 501 }, 'title of 501 characters']) {
        check_err(reserve($t->[0]), 400, 'invalid_field_value', "reserve: $t->[1]");
    }
    check_err(reserve({ colour => 'red' }), 400, 'invalid_request', 'reserve: an unknown field');
    for my $t ([{ data_base64 => 5 }, 'data_base64 a number'], [{ width => 'wide' }, 'width a string'],
               [{ height => 0 }, 'height 0'], [{ thumbnail_url => 'javascript:x' }, 'thumbnail_url not http(s)', 'invalid_url']) {
        check_err(finalize($id, $t->[0]), 400, $t->[2] // 'invalid_field_value', "finalize: $t->[1]");
    }
    check_err(finalize($id, { colour => 'red' }), 400, 'invalid_request', 'finalize: an unknown field');
    my $nobody = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';
    for my $bad ($nobody, 'not-a-uuid', $tid) {
        check_err(finalize($bad, { data_base64 => 'AAAA' }), 404, 'not_found', "finalize $bad");
        check_err(finalize($bad, {}), 404, 'not_found', "finalize $bad without data");
        check_err(put_content($bad, $BYTES{png}), 404, 'not_found', "PUT content $bad");
    }
    is one("SELECT status FROM media_assets WHERE id = '$tid'"), 'pending', 'the other workspace\'s asset untouched';
    # a registered asset (POST /media) is no upload: finalizing it is a conflict
    my $reg = req(POST => $base, $ot, { title => 'registered' })->{json}{media}{id};
    check_err(finalize($reg, {}), 409, 'conflict', 'finalize a registered asset');
}

# --- lapsed reservations --------------------------------------------------------------------

start_nginx(http_config => "cms_upload_max_size $MAX; cms_upload_ttl 3s;");
Cms::Test::psql("DELETE FROM media_assets WHERE workspace_id = '$wid'");
on_plan('upl-tiny');
{
    my @ups = map { reserved({ content_type => 'image/png', size_bytes => 5000 }) } 1 .. 2;
    check_err(reserve({ content_type => 'image/png', size_bytes => 1 }), 413, 'storage_limit_exceeded',
              'the quota is reserved whole');
    ok Cms::Test::wait_until(20, sub { one("SELECT count(*) FROM media_assets WHERE workspace_id = '$wid'") == 0 }),
        'the job gives lapsed reservations back';
    is usage(), 0, 'the quota is free again';
    check_err(finalize($ups[0]{asset_id}, { data_base64 => encode_base64($BYTES{png}, '') }), 404, 'not_found',
              'finalize a lapsed reservation');
    my $up = reserved({ content_type => 'image/png', size_bytes => 5000 });
    Cms::Test::psql("UPDATE media_assets SET reserved_until = now() - interval '1 second' WHERE id = '$up->{asset_id}'");
    check_err(put_content($up->{asset_id}, $BYTES{png}), 404, 'not_found', 'PUT content to a lapsed reservation');
    is reserve({ content_type => 'image/png', size_bytes => 5000 })->{status}, 201, 'a reservation';
    is reserve({ content_type => 'image/png', size_bytes => 5000 })->{status}, 201,
        'a reservation gives the lapsed ones of its workspace back first';
}

# --- cms_storage base_url=: the address assets are given (a CDN in front) -----------------------

for my $bad ('base_url=ftp://cdn.example.com', 'base_url=https://cdn.example.com/', 'base_url=', 'cdn.example.com') {
    isnt nginx_test(storage => "$STORE $bad")->{rc}, 0, "nginx -t refuses cms_storage ... $bad";
}
start_nginx(http_config => "cms_upload_max_size $MAX;", storage => "$STORE base_url=https://cdn.example.com/assets");
on_plan('upl-big');
{
    my $up = reserved({ content_type => 'image/png' });
    my $f = finalize($up->{asset_id}, { data_base64 => encode_base64($BYTES{png}, '') });
    is(($f->{json}{media} // {})->{url}, "https://cdn.example.com/assets/v1/files/$up->{storage_key}",
       'base_url=: the asset\'s url starts with it') or diag diag_resp($f);
    my $p = reserved({ content_type => 'image/png' });
    is put_content($p->{asset_id}, $BYTES{png})->{json}{media}{url},
       "https://cdn.example.com/assets/v1/files/$p->{storage_key}", 'a raw upload too';
}

done_testing();
