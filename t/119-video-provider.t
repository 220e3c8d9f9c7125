# The video provider (issue 15, studio): POST /v1/workspaces/{id}/videos/upload-credentials
# and GET /v1/workspaces/{id}/videos/stream/{streamId}/status with Bunny Stream, against a
# fake Bunny API on loopback (t/lib/Cms/FakeBunny.pm) that checks what nginx sends it
# through the internal /_cms_video location (method, path, AccessKey, JSON body).
#
# Proves: the credentials (Bunny's TUS presigned signature recomputed here from the library
# id, the key, the expiry and the video id; the expiry an hour ahead; no-store), the video
# recorded as the workspace's; the poll's status mapping for every Bunny status number
# (and one it does not know), its persistence onto the workspace's matching video rows
# only (not another library's, not another workspace's), a duration kept only once known;
# refusals per route: no session, outsiders, roles, malformed JSON, wrong types, unknown
# fields, unknown and malformed stream ids, another workspace's stream (all without a call
# to the provider); the provider failing (5xx, 401, not JSON, another video, a hang, a
# dropped connection, nothing listening) as 503 provider_unavailable or 502
# provider_error, writing nothing; the directive's nginx -t refusals; without
# cms_video_provider both routes 501 not_configured; the key never in the error log.
use strict;
use warnings;
use Cms::Test;
use Cms::FakeBunny;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace $UUID $TS);
use Digest::SHA qw(sha256_hex);
use JSON::PP ();

signup_defaults(email_prefix => 'video');

my $JSON = JSON::PP->new->canonical(1);

my $bunny = Cms::FakeBunny->start;
my ($LIB, $KEY, $KEYFILE, $API) = ($bunny->library, $bunny->key, $bunny->keyfile, $bunny->api);
my $LOCATION = $bunny->location;
my $PROVIDER = $bunny->http_config;      # api= with a trailing "/"
$bunny->set(strict => 1);
start_nginx(http_config => $PROVIDER, config => $LOCATION);

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Video');
my %m;
for my $role (qw(viewer author editor)) {
    $m{$role} = signup();
    Cms::Test::psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
}
my $outsider = signup();
my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');

my $creds = "/v1/workspaces/$wid/videos/upload-credentials";
sub status_path { "/v1/workspaces/$_[0]/videos/stream/$_[1]/status" }
sub calls { scalar(my @r = $bunny->requests) }
sub streams { one("SELECT count(*) FROM video_streams") }

# --- upload credentials ------------------------------------------------------------------
my $t0 = time;
my $c = req(POST => $creds, $ot, { title => 'Launch day' });
my $t0end = time;
is $c->{status}, 200, 'upload-credentials: 200' or diag diag_resp($c);
my $j = $c->{json} // {};
my @req = $bunny->requests;
is scalar @req, 1, 'one call to the provider';
is $req[0]{method}, 'POST', 'it is a POST';
is $req[0]{path}, "/library/$LIB/videos", 'to /library/{id}/videos';
is $req[0]{headers}{accesskey}, $KEY, 'with the library key in AccessKey';
like $req[0]{headers}{'content-type'} // '', qr{^application/json}, 'a JSON body';
is_deeply eval { $JSON->decode($req[0]{body}) }, { title => 'Launch day' }, 'the body: {title}';
ok !exists $req[0]{headers}{authorization}, 'the client\'s session is not passed on';
is_deeply [sort keys %$j], [sort qw(provider stream_video_id stream_library_id title protocol upload_url
                                     signature expires_at headers)], 'the credentials\' fields';
my $guid = $j->{stream_video_id} // '';
like $guid, $UUID, 'stream_video_id: the provider\'s guid';
is $j->{provider}, 'bunny', 'provider';
is $j->{stream_library_id}, $LIB, 'stream_library_id';
is $j->{title}, 'Launch day', 'title';
is $j->{protocol}, 'tus', 'protocol tus';
is $j->{upload_url}, "$API/tusupload", 'upload_url: the API\'s /tusupload (api= without its "/")';
my $h = $j->{headers} // {};
my $exp = $h->{AuthorizationExpire} // '';
like $exp, qr/^\d+$/, 'AuthorizationExpire: Unix seconds';
ok $exp >= int($t0) + 3600 && $exp <= $t0end + 3601, 'the credentials expire in an hour'
    or diag "$exp not within [$t0, $t0end] + 3600";
is $j->{signature}, sha256_hex($LIB . $KEY . $exp . $guid), 'signature = sha256(library + key + expiry + video)';
is $h->{AuthorizationSignature}, $j->{signature}, 'AuthorizationSignature header';
is $h->{VideoId}, $guid, 'VideoId header';
is $h->{LibraryId}, $LIB, 'LibraryId header';
like $j->{expires_at} // '', $TS, 'expires_at';
my @t = gmtime $exp;
is substr($j->{expires_at} // '', 0, 19), sprintf('%04d-%02d-%02dT%02d:%02d:%02d', $t[5] + 1900, $t[4] + 1, @t[3, 2, 1, 0]),
    'expires_at is AuthorizationExpire';
like $c->{headers}{'cache-control'} // '', qr/no-store/, 'Cache-Control: no-store';
is_deeply Cms::Test::psql("SELECT workspace_id, library_id, title, created_by, stream_status FROM video_streams
                           WHERE stream_video_id = '$guid'"),
    [[$wid, $LIB, 'Launch day', $owner->{user}{id}, undef]], 'the video recorded as the workspace\'s';

# no body, an empty object, a null title: the default title
for my $b (undef, {}, { title => undef }) {
    my $n = calls();
    my $r = req(POST => $creds, $m{editor}{token}, $b);
    is $r->{status}, 200, 'an editor, body ' . ($b ? $JSON->encode($b) : 'none') . ': 200' or diag diag_resp($r);
    is $r->{json}{title}, 'Untitled video', 'the default title';
    is_deeply eval { $JSON->decode(($bunny->requests)[$n]{body}) }, { title => 'Untitled video' }, 'sent as the title';
}

# refusals: nothing reaches the provider, nothing is written
{
    my ($n, $s) = (calls(), streams());
    check_err(req(POST => $creds, undef, { title => 'x' }), 401, 'missing_token', 'no session');
    check_err(req(POST => $creds, 'not.a.jwt', { title => 'x' }), 401, 'invalid_token', 'a bad token');
    check_err(req(POST => $creds, $outsider->{token}, { title => 'x' }), 403, 'not_workspace_member', 'an outsider');
    check_err(req(POST => "/v1/workspaces/$wid2/videos/upload-credentials", $ot, { title => 'x' }), 403,
              'not_workspace_member', 'another workspace');
    check_err(req(POST => "/v1/workspaces/00000000-0000-4000-8000-000000000000/videos/upload-credentials", $ot,
                  { title => 'x' }), 403, 'not_workspace_member', 'an unknown workspace');
    check_err(req(POST => $creds, $m{viewer}{token}, { title => 'x' }), 403, 'forbidden', 'a viewer');
    check_err(req(POST => $creds, $m{author}{token}, { title => 'x' }), 403, 'forbidden', 'an author');
    check_err(req(POST => $creds, $ot, '{"title":'), 400, 'invalid_request', 'malformed JSON');
    check_err(req(POST => $creds, $ot, '[]'), 400, 'invalid_request', 'an array body');
    check_err(req(POST => $creds, $ot, { title => 5 }), 400, 'invalid_field_value', 'a number title');
    check_err(req(POST => $creds, $ot, { title => ['x'] }), 400, 'invalid_field_value', 'an array title');
    check_err(req(POST => $creds, $ot, { title => '' }), 400, 'title_required', 'an empty title');
    check_err(req(POST => $creds, $ot, { title => 'x' x 501 }), 400, 'invalid_field_value', 'a title over 500');
    check_err(req(POST => $creds, $ot, { title => 'x', library => '1' }), 400, 'invalid_request', 'an unknown field');
    check_err(Cms::Test::http(POST => $creds, ['Authorization' => "Bearer $ot", 'Content-Type' => 'text/plain'],
                              'title=x'), 415, 'unsupported_media_type', 'not JSON');
    is calls(), $n, 'no refused request reached the provider';
    is streams(), $s, 'nor wrote anything';
}
is req(GET => $creds, $ot)->{status}, 404, 'GET upload-credentials: no such video';

# --- status --------------------------------------------------------------------------------
my $sp = status_path($wid, $guid);
sub poll { my ($tok, $path) = @_; req(GET => $path // $sp, $tok) }

$bunny->set(videos => { $guid => { status => 4, length => 93 } });
my $g = poll($ot);
is $g->{status}, 200, 'status: 200' or diag diag_resp($g);
is_deeply $g->{json}, { status => 'ready', duration_seconds => 93, stream_video_id => $guid,
                        stream_library_id => $LIB }, 'ready, 93 s';
my $last = ($bunny->requests)[-1];
is "$last->{method} $last->{path}", "GET /library/$LIB/videos/$guid", 'GET /library/{id}/videos/{videoId}';
is $last->{headers}{accesskey}, $KEY, 'with AccessKey';
is_deeply Cms::Test::psql("SELECT stream_status, duration_seconds FROM video_streams WHERE stream_video_id = '$guid'"),
    [['ready', 93]], 'the stream\'s last state kept';
is poll($m{viewer}{token})->{status}, 200, 'a viewer polls';

# persistence onto the workspace's rows naming the stream
sub video {
    my ($tok, $w, %f) = @_;
    my $r = req(POST => "/v1/workspaces/$w/videos", $tok, { title => 'v' . rand, %f });
    die 'video: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{video}{id};
}
my $v_match = video($ot, $wid, stream_video_id => $guid, stream_library_id => $LIB, duration_seconds => 5);
my $v_nolib = video($ot, $wid, stream_video_id => $guid);
my $v_lib = video($ot, $wid, stream_video_id => $guid, stream_library_id => '999', stream_status => 'pending');
my $v_other = video($other->{token}, $wid2, stream_video_id => $guid, stream_library_id => $LIB,
                    stream_status => 'pending');
sub row { Cms::Test::psql("SELECT coalesce(stream_status, '-'), coalesce(duration_seconds::text, '-'), updated_at
                           FROM videos WHERE id = '$_[0]'")->[0] }
my %before = map { $_ => row($_) } $v_match, $v_nolib, $v_lib, $v_other;

my @matrix = ([0, 'pending'], [1, 'processing'], [2, 'processing'], [3, 'processing'], [4, 'ready'],
              [5, 'failed'], [6, 'failed'], [7, 'processing'], [8, 'ready'], [42, 'processing']);
for my $case (@matrix) {
    my ($n, $want) = @$case;
    $bunny->set(videos => { $guid => { status => $n, length => 0 } });
    my $r = poll($ot);
    is $r->{status}, 200, "Bunny status $n: 200" or diag diag_resp($r);
    is $r->{json}{status}, $want, "Bunny status $n is $want";
    is $r->{json}{duration_seconds}, 0, 'duration 0 while unknown';
    is row($v_match)->[0], $want, "kept on the matching row ($want)";
    is row($v_match)->[1], '5', 'its duration kept while the provider has none';
}
$bunny->set(videos => { $guid => { status => 4, length => 61.5 } });
is poll($ot)->{json}{duration_seconds}, 61.5, 'a fractional duration';
is_deeply [@{ row($v_match) }[0, 1]], ['ready', '61.5'], 'the matching row: ready, 61.5 s';
is_deeply [@{ row($v_nolib) }[0, 1]], ['ready', '61.5'], 'a row naming no library: ready, 61.5 s';
is_deeply row($v_lib), $before{$v_lib}, 'a row of another library: untouched';
is_deeply row($v_other), $before{$v_other}, 'another workspace\'s row: untouched';
my $upd = row($v_match)->[2];
poll($ot);
is row($v_match)->[2], $upd, 'the same state again: the row is not rewritten';

# refusals: no call to the provider
{
    my $n = calls();
    check_err(poll(undef), 401, 'missing_token', 'status without a session');
    check_err(poll($outsider->{token}), 403, 'not_workspace_member', 'status as an outsider');
    check_err(poll($ot, status_path($wid, '0190a0f0-0000-7000-8000-000000000000')), 404, 'not_found',
              'a stream never issued');
    check_err(poll($ot, status_path($wid, 'not-a-guid')), 404, 'not_found', 'a malformed stream id');
    check_err(poll($ot, status_path($wid, "$guid%2f..")), 404, 'not_found', 'an encoded slash');
    is calls(), $n, 'none reached the provider';
}
is req(POST => $sp, $ot)->{status}, 405, 'POST on status: 405';

# another workspace's stream
my $c2 = req(POST => "/v1/workspaces/$wid2/videos/upload-credentials", $other->{token}, { title => 'Theirs' });
is $c2->{status}, 200, 'the other workspace gets credentials' or diag diag_resp($c2);
my $guid2 = $c2->{json}{stream_video_id};
$bunny->set(videos => { $guid => { status => 4, length => 61.5 }, $guid2 => { status => 2 } });
{
    my $n = calls();
    check_err(poll($ot, status_path($wid, $guid2)), 404, 'not_found', 'another workspace\'s stream');
    is calls(), $n, 'the provider is not asked';
}
is poll($other->{token}, status_path($wid2, $guid2))->{json}{status}, 'processing', 'its own workspace polls it';
check_err(poll($other->{token}, status_path($wid2, $guid)), 404, 'not_found', 'and not ours');

# gone at the provider
$bunny->set(videos => {});
check_err(poll($ot), 404, 'not_found', 'a stream the provider no longer has');

# --- the provider failing ---------------------------------------------------------------
$bunny->set(videos => { $guid => { status => 4, length => 61.5 } });
for my $case (['status500', 503, 'provider_unavailable', 'a 500'],
              ['status401', 502, 'provider_error', 'a 401 (a wrong key)'],
              ['garbage', 502, 'provider_error', 'an answer that is not JSON'],
              ['hang', 503, 'provider_unavailable', 'no answer in time'],
              ['close', 503, 'provider_unavailable', 'a dropped connection']) {
    my ($mode, $status, $code, $name) = @$case;
    $bunny->set(mode => $mode);
    my ($s, $t1) = (streams(), time);
    check_err(req(POST => $creds, $ot, { title => 'x' }), $status, $code, "credentials, $name");
    is streams(), $s, "credentials, $name: nothing recorded";
    my $r = poll($ot);
    check_err($r, $status, $code, "status, $name");
    is $r->{headers}{'retry-after'}, '1', "$name: Retry-After: 1" if $status == 503;
    # two requests through 1 s proxy timeouts; a hang would be the client's 30 s each
    cmp_ok time - $t1, '<', 25, "$name: answered within the proxy's timeouts, not hung";
}
$bunny->set(mode => 'badguid');
check_err(req(POST => $creds, $ot, { title => 'x' }), 502, 'provider_error', 'a created video without a guid');
$bunny->set(mode => 'otherguid');
check_err(poll($ot), 502, 'provider_error', 'a poll answered with another video');
$bunny->set(mode => 'ok');
is poll($ot)->{status}, 200, 'the provider back: 200';

# --- configuration ------------------------------------------------------------------------
my $badkey = $bunny->file('bad.key', "two words\n");
my $empty = $bunny->file('empty.key', "\n");
for my $case (["cms_video_provider vimeo library=1 api_key_file=$KEYFILE;", 'unknown provider'],
              ["cms_video_provider bunny api_key_file=$KEYFILE;", 'are required'],
              ["cms_video_provider bunny library=1;", 'are required'],
              ["cms_video_provider bunny library=1 api_key_file=@{[$bunny->dir]}/none;", 'cannot open'],
              ["cms_video_provider bunny library=1 api_key_file=$badkey;", 'must hold the API key'],
              ["cms_video_provider bunny library=1 api_key_file=$empty;", 'must hold the API key'],
              ["cms_video_provider bunny library=1/2 api_key_file=$KEYFILE;", 'library='],
              ["cms_video_provider bunny library=1 api_key_file=$KEYFILE api=ftp://x;", 'api='],
              ["cms_video_provider bunny library=1 api_key_file=$KEYFILE api=http://x/?a;", 'api='],
              ["cms_video_provider bunny library=1 api_key_file=$KEYFILE upload_ttl=never;", 'invalid parameter'],
              ["cms_video_provider bunny library=1 api_key_file=$KEYFILE colour=red;", 'invalid parameter'],
              ["$PROVIDER\n$PROVIDER", 'is duplicate']) {
    my ($conf, $want) = @$case;
    my $t = nginx_test(http_config => $conf, config => $LOCATION);
    isnt $t->{rc}, 0, "nginx -t refuses: $want";
    like $t->{out}, qr/\Q$want\E/, "and says \"$want\"";
    unlike $t->{out}, qr/\Q$KEY\E/, 'without the key';
}
my $ok = nginx_test(http_config => "cms_video_provider bunny library=1 api_key_file=$KEYFILE upload_ttl=10m;",
                    config => $LOCATION);
is $ok->{rc}, 0, 'upload_ttl=10m and the default API: nginx -t passes' or diag $ok->{out};

# nothing listening at the API's address
my $down = Cms::Test::free_port();
restart_nginx(http_config => "cms_video_provider bunny library=$LIB api_key_file=$KEYFILE api=http://127.0.0.1:$down;",
              config => $LOCATION);
check_err(req(POST => $creds, $ot, { title => 'x' }), 503, 'provider_unavailable', 'credentials, connection refused');
check_err(poll($ot), 503, 'provider_unavailable', 'status, connection refused');

# a shorter upload_ttl
restart_nginx(http_config => "cms_video_provider bunny library=$LIB api_key_file=$KEYFILE api=$API upload_ttl=10m;",
              config => $LOCATION);
my $ts0 = time;
my $short = req(POST => $creds, $ot, { title => 'Short' });
my $sexp = $short->{json}{headers}{AuthorizationExpire} // 0;
ok $sexp >= int($ts0) + 600 && $sexp <= time + 601, 'upload_ttl=10m' or diag $sexp;

# no provider: 501, after the credential and the role
restart_nginx(config => $LOCATION);
check_err(req(POST => $creds, $ot, { title => 'x' }), 501, 'not_configured', 'credentials without a provider');
check_err(poll($ot), 501, 'not_configured', 'status without a provider');
check_err(req(POST => $creds, $m{viewer}{token}, { title => 'x' }), 403, 'forbidden', 'the role still first');
check_err(poll(undef), 401, 'missing_token', 'the credential still first');

# the key is never written to the error log
{
    open my $fh, '<', Cms::Test::prefix() . '/logs/error.log' or die $!;
    local $/;
    my $log = <$fh>;
    unlike $log, qr/\Q$KEY\E/, 'the API key is not in the error log';
}

$bunny->stop;
done_testing();
