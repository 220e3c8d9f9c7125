# Hostile input on every route, from the corpus that t/data/hostile/gen-corpus.pl writes
# (on every run, from its route table: a new route family adds its routes
# there, not here). Each route gets a control request with benign values (2xx: the
# credential is valid, so the hostile cases reach the input checks), then invalid UTF-8,
# NUL bytes, 5,000-byte values, 30-digit numbers and wrong JSON types in every path
# parameter, query parameter and body field, and duplicated Authorization,
# Idempotency-Key and Service-Version headers; then raw HTTP (duplicate and oversized
# headers, an oversized URL, bad Content-Length, Content-Length with chunked, TRACE, %00
# in the path, bad Host, HTTP/9.9, an unknown transfer coding, paths outside /v1/ and
# without a route) over /v1/..., /v1/ext/... and /v1/extensions.
#
# Every answer: 4xx (or 503 with Retry-After; 501/505 where the case says so; 2xx where
# the corpus says why), never 500; JSON in the route's error shape, at most 1024 bytes;
# X-Request-Id; no version in Server. The worker never dies: its pid is the same after
# the corpus (and right after the regression case first below), and done_testing()'s end
# checks (no sanitizer report, no worker exit) pass.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp signup workspace api_key key mk mkcat facility extension make_key pepper
                     idem one);
use Cms::ExtFixtures qw(cms_admin put_manifest manifest install $MDIR);
use Cms::Hostile qw(load_corpus send_case check_case problem_kind short);
use Cms::FakeBunny;
use Digest::SHA qw(hmac_sha256);
use File::Basename qw(dirname);
use MIME::Base64 ();

my $CORPUS = dirname(__FILE__) . '/data/hostile/gen-corpus.pl';
my @CASES = load_corpus($CORPUS);

# the video provider's routes call a fake Bunny Stream API on loopback
my $BUNNY = Cms::FakeBunny->start;
set_conf_defaults(http_config => "cms_extensions_manifests $MDIR;\n" . $BUNNY->http_config,
                  config => $BUNNY->location);
start_nginx();

# --- fixtures ------------------------------------------------------------------------------

my @ALL_SCOPES = map { ("$_:read", "$_:write") }
    qw(articles videos categories media comments custom pages webhooks podcasts subscribers);

my $owner = signup();
my $ws = workspace($owner->{token}, 'Hostile');
my $API = key($owner->{token}, $ws, 'all scopes', @ALL_SCOPES);
my $article = mk($API, { title => 'Hostile target' })->{id};
my $category = mkcat($API, { name => 'Hostile target' })->{id};
sub mkcomment {
    my $r = req(POST => '/v1/api/comments', $API, { article_id => $article, author_name => 'H', content => 'Target' });
    die 'comment: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{comment}{id};
}
sub mkshow {
    my $r = req(POST => "/v1/workspaces/$ws/podcast-shows", $owner->{token}, { title => "Hostile show $_[0]" });
    die 'show: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{podcast_show}{id};
}
my $comment = mkcomment();
my $show = mkshow('target');
my $unsub = req(POST => '/v1/api/subscribers', $API, { email => 'unsubscribe-target@example.com' });
die 'subscriber: ' . diag_resp($unsub) unless $unsub->{status} == 201;
my $custom_module = req(POST => "/v1/workspaces/$ws/custom-modules", $owner->{token},
    { slug => 'hostile', name => 'Hostile',
      schema => { fields => [{ key => 'title', label => 'Title', type => 'text' }] } })->{json}{custom_module}{id};
sub mkentry {
    my $r = req(POST => '/v1/api/custom/hostile/entries', $API, { data => { title => $_[0] } });
    die 'custom entry: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{custom_entry}{id};
}
my $custom_entry = mkentry('Hostile target');
my $video = req(POST => '/v1/api/videos', $API, { title => 'Hostile target' })->{json}{video}{id};
my $media = req(POST => '/v1/api/media', $API, { title => 'Hostile target' })->{json}{media}{id};
sub mksite {
    my $r = req(POST => "/v1/workspaces/$_[0]/sites", $owner->{token}, { name => 'Hostile site' });
    die 'site: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{site}{id};
}
my $site = mksite($ws);
sub mkpage {
    my $r = req(POST => "/v1/workspaces/$ws/sites/$site/pages", $owner->{token},
                { slug => "/$_[0]", title => 'Hostile page' });
    die 'page: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{page}{id};
}
my $page = mkpage('target');
sub mkwebhook {
    my $r = req(POST => '/v1/api/webhooks', $API, { url => "https://93.184.216.34/$_[0]" });
    die 'webhook: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{webhook}{id};
}
my $webhook = mkwebhook('target');
# a delivery to redeliver (queued only: no cms_webhook_delivery here, nothing is sent)
my $delivery = do {
    my $r = req(POST => "/v1/api/webhooks/$webhook/test", $API);
    die 'delivery: ' . diag_resp($r) unless $r->{status} == 202;
    $r->{json}{delivery}{id};
};
# one site a workspace: creates go to a workspace emptied first, deletes to another
my $siteless_ws = workspace($owner->{token}, 'Hostile siteless');
my $victim_site_ws = workspace($owner->{token}, 'Hostile site victims');

my $fac = facility();
my $ext = extension($fac);
my $pepper = pepper();

# Keys by SQL in one statement each (ExtFixtures' helpers take one psql run per key).
# A pool per kind: /v1/ext and /v1/extensions limit each credential to a burst of 120.
sub many_keys {
    my ($n, $prefix, $table, $cols, $row) = @_;
    my @k = map { make_key($prefix) } 1 .. $n;
    psql("INSERT INTO $table ($cols) VALUES "
         . join(', ', map { $row->($_, unpack('H*', hmac_sha256($_, $pepper))) } @k));
    return @k;
}
my @EXT_KEYS = many_keys(8, 'sk_live_', 'extension_keys',
    'extension_id, facility_id, livemode, privileges, key_prefix, secret_hash',
    sub { sprintf "('%s', '%s', true, '{ext:billing:read,ext:billing:write,ext:control:write}', '%s', decode('%s', 'hex'))",
          $ext, $fac, substr($_[0], 0, 12), $_[1] });
my @ADMIN_KEYS = many_keys(8, 'sk_admin_', 'admin_credentials',
    'facility_id, name, privileges, key_prefix, secret_hash',
    sub { sprintf "('%s', 'hostile', '{admin:extensions:view,admin:extensions:manage}', '%s', decode('%s', 'hex'))",
          $fac, substr($_[0], 0, 13), $_[1] });

my @INVOICES;
sub fresh_invoice {
    @INVOICES = map { $_->[0] } @{psql("INSERT INTO invoices (facility_id, livemode, patient_id, amount, currency)
        SELECT '$fac', true, 'patient-h' || g, 5000, 'XOF' FROM generate_series(1, 100) g RETURNING id")}
        unless @INVOICES;
    return shift @INVOICES;
}
my $invoice = fresh_invoice();

my @FIELDS = ([note => { type => 'string' }], [count => { type => 'number' }], [flag => { type => 'boolean' }],
              [token => { type => 'secret' }]);
put_manifest('hx-conf.toml', manifest(name => 'hx-conf', required_privilege => 'hx:view', fields => \@FIELDS));
put_manifest('hx-reload.toml', manifest(name => 'hx-reload'));
for my $m (qw(hx-conf hx-reload)) {
    my $r = install($ADMIN_KEYS[0], "file:$m.toml", {});
    die "install $m: " . diag_resp($r) unless $r->{status} == 201;
}
my $MANIFESTS = 0;

# teams: the workspace on a plan without a member limit (invitations pile up); a
# member to change the role of, members to remove, someone inviting the owner elsewhere
cms_admin('plan', 'set', '--name', 'hostile', '--members', 'none');
cms_admin('plan', 'assign', '--workspace', $ws, '--name', 'hostile');
sub join_ws {
    my $u = signup();
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$ws', '$u->{user}{id}', '$_[0]')");
    return $u->{user}{id};
}
my $member = join_ws('editor');
my $inviter = signup();

my $ui_user = signup();
cms_admin('facility', 'member', '--facility', $fac, '--email', $ui_user->{email}, '--privileges', 'hx:view');

# a fresh account's token, as the mailer gets it (cms-admin account mail)
sub account_token {
    my $u = signup();
    my $r = req(POST => $_[0], undef, { email => $u->{email} });
    die "$_[0]: " . diag_resp($r) unless $r->{status} == 204;
    my ($line) = grep { /\t\Q$u->{email}\E\t/ } split /\n/, cms_admin('account', 'mail');
    die "no account message for $u->{email}" unless defined $line;
    return (split /\t/, $line)[3];
}

# a stored object under the storage root (GET /v1/files/*key)
{
    my $dir = prefix() . "/storage/$ws";
    mkdir $dir, 0755 or die "$dir: $!";
    open my $fh, '>:raw', "$dir/hostile.png" or die "$dir/hostile.png: $!";
    print $fh "\x89PNG\r\n\x1a\n";
    close $fh;
    chmod 0644, "$dir/hostile.png";
    # an image under an upload's key (GET /v1/files/size/...): a 1x1 PNG
    open $fh, '>:raw', "$dir/0b6f3c2a-1d2e-4f5a-8b9c-0d1e2f3a4b5c.png" or die "$dir: $!";
    print $fh MIME::Base64::decode_base64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==');
    close $fh;
    chmod 0644, "$dir/0b6f3c2a-1d2e-4f5a-8b9c-0d1e2f3a4b5c.png";
    # the workers store uploads of this workspace in the same folder
    if ($> == 0) {
        my ($uid, $gid) = (getpwnam('nobody'))[2, 3];
        chown $uid, $gid, $dir if defined $uid;
    }
}

my ($N, $EMAILS, $STREAM) = (0, 0);
my %FILL = (
    file_key => sub { "$ws/hostile.png" },
    image_key => sub { "$ws/0b6f3c2a-1d2e-4f5a-8b9c-0d1e2f3a4b5c.png" },
    # a 1x1 PNG: what PUT /v1/me/avatar's control stores
    png => sub { MIME::Base64::decode_base64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==') },
    n => sub { ++$N },
    email => sub { sprintf 'hostile%d-%d@example.com', ++$EMAILS, $$ },
    login_email => sub { $owner->{email} },
    login_password => sub { $owner->{password} },
    ws => sub { $ws },
    article => sub { $article },
    category => sub { $category },
    victim_article => sub { mk($API, { title => 'Victim ' . ++$N })->{id} },
    victim_category => sub { mkcat($API, { name => 'Victim ' . ++$N })->{id} },
    webhook => sub { $webhook },
    victim_webhook => sub { mkwebhook('victim-' . ++$N) },
    delivery => sub { $delivery },
    comment => sub { $comment },
    victim_comment => \&mkcomment,
    show => sub { $show },
    victim_show => sub { mkshow('victim ' . ++$N) },
    unsubscribe_token => sub { $unsub->{json}{unsubscribe_token} },
    custom => sub { 'hostile' },
    custom_module => sub { $custom_module },
    custom_entry => sub { $custom_entry },
    victim_entry => sub { mkentry('Victim ' . ++$N) },
    victim_module => sub {
        my $r = req(POST => "/v1/workspaces/$ws/custom-modules", $owner->{token},
                    { slug => 'victim-' . ++$N, name => 'Victim' });
        die 'custom module: ' . diag_resp($r) unless $r->{status} == 201;
        $r->{json}{custom_module}{id} },
    video => sub { $video },
    stream => sub {
        $STREAM //= req(POST => "/v1/workspaces/$ws/videos/upload-credentials", $owner->{token}, {})
            ->{json}{stream_video_id} // die 'upload-credentials: no stream';
        $STREAM },
    media => sub { $media },
    site => sub { $site },
    page => sub { $page },
    victim_page => sub { mkpage('victim-' . ++$N) },
    siteless_ws => sub { psql("DELETE FROM sites WHERE workspace_id = '$siteless_ws'"); $siteless_ws },
    victim_site_ws => sub { $victim_site_ws },
    victim_site => sub {
        psql("DELETE FROM sites WHERE workspace_id = '$victim_site_ws'");
        mksite($victim_site_ws) },
    victim_video => sub { req(POST => '/v1/api/videos', $API, { title => 'Victim ' . ++$N })->{json}{video}{id} },
    victim_media => sub { req(POST => '/v1/api/media', $API, { title => 'Victim ' . ++$N })->{json}{media}{id} },
    # a fresh reservation of a JSON file: what the upload routes' controls finalize
    pending_upload => sub {
        my $r = req(POST => "/v1/workspaces/$ws/media/uploads", $owner->{token},
                    { content_type => 'application/json', type => 'file', title => 'Pending ' . ++$N });
        die 'reserve: ' . diag_resp($r) unless $r->{status} == 201;
        $r->{json}{upload}{asset_id} },
    victim_key => sub { api_key($owner->{token}, $ws, 'victim ' . ++$N, 'articles:read')->{api_key}{id} },
    member => sub { $member },
    victim_member => sub { join_ws('viewer') },
    victim_invitation => sub {
        one("INSERT INTO invitations (workspace_id, email, role, token_hash, expires_at) VALUES ('$ws', "
            . "'victim" . ++$N . "\@example.com', 'viewer', decode('" . unpack('H*', pack('N8', $N, 0, 0, 0, 0, 0, 0, 0))
            . "', 'hex'), now() + interval '1 day') RETURNING id") },
    invite_token => sub {
        my $w = workspace($inviter->{token}, 'Inviting ' . ++$N);
        my $r = req(POST => "/v1/workspaces/$w/invitations", $inviter->{token},
                    { email => $owner->{email}, role => 'viewer' });
        die 'invite: ' . diag_resp($r) unless $r->{status} == 201;
        $r->{json}{token} },
    reset_token => sub { account_token('/v1/auth/password-reset') },
    verify_token => sub { account_token('/v1/auth/verify-email/request') },
    invoice => sub { $invoice },
    fresh_invoice => \&fresh_invoice,
    facility => sub { $fac },
    ext_conf => sub { 'hx-conf' },
    # reload needs a running extension: set it back before each use
    ext_running => sub {
        psql("UPDATE extensions SET status = 'running' WHERE facility_id = '$fac' AND name = 'hx-reload'");
        'hx-reload' },
    manifest => sub {
        my $name = 'hx-m' . ++$MANIFESTS;
        put_manifest("$name.toml", manifest(name => $name, fields => \@FIELDS));
        "$name.toml" },
    idem => \&idem,
    'cred:api' => sub { $API },
    # the site's key now: the rotate route's cases rotate it
    'cred:pk' => sub { req(GET => "/v1/workspaces/$ws/sites/$site", $owner->{token})->{json}{site}{publishable_key} },
    'cred:session' => sub { $owner->{token} },
    'cred:ui_session' => sub { $ui_user->{token} },
    'cred:fresh_user' => sub { signup(password => 'hostile password 1')->{token} },
    'cred:fresh_session' => sub {
        my $r = req(POST => '/v1/auth/login', undef, { email => $owner->{email}, password => $owner->{password} });
        die 'login: ' . diag_resp($r) unless $r->{status} == 200;
        $r->{json}{token} },
    'cred:ext' => sub { $EXT_KEYS[$N++ % @EXT_KEYS] },
    'cred:admin' => sub { $ADMIN_KEYS[$N++ % @ADMIN_KEYS] },
);

my @pids = worker_pids();
is scalar(@pids), 1, 'one worker' or diag "workers: @pids";

# --- the regression first: a 5,000-byte status once overflowed a heap buffer by one byte --

{
    my $r = req(GET => '/v1/api/articles?status=' . ('a' x 5000), $API);
    ok $r->{status} == 400 && ref $r->{json} eq 'HASH'
       && ($r->{json}{code} // '') =~ /^(?:invalid_status|invalid_request)$/,
       'GET /v1/api/articles?status=<5000 x a>: 400 invalid_status or invalid_request' or diag diag_resp($r);
    is_deeply [worker_pids()], \@pids, 'the worker survived it (same pid)';
}

# --- the corpus ------------------------------------------------------------------------------

ok @CASES >= 500, 'the corpus has at least 500 requests (' . scalar(@CASES) . ')';

# Every route of the module's route tables is in the corpus (the test-only /_test routes
# aside): a new route family adds its routes to gen-corpus.pl's table.  scripts/routes reads
# the tables, studio mirrors included.
{
    my $root = $ENV{TEST_CMS_ROOT} // dirname(__FILE__) . '/..';
    my $src = "$root/src";
    my (%want, %have);
    for (`perl $root/scripts/routes`) {
        my ($m, $path) = split /\t/;
        $want{"$m $path"} = 1;
    }
    $have{$_->{route}} = 1 for @CASES;
    ok keys(%want) >= 40, 'routes found in ' . $src . ' (' . scalar(keys %want) . ')';
    is_deeply [sort grep { !$have{$_} } keys %want], [], 'every route is in the corpus';
    is_deeply [sort grep { !$want{$_} && $_ ne 'raw' } keys %have], [], 'every corpus route is a route';
}

# TEST_HOSTILE_DUMP=FILE: every case's status and body, one a line (to look at the answers)
my $DUMP;
open $DUMP, '>', $ENV{TEST_HOSTILE_DUMP} or die "$ENV{TEST_HOSTILE_DUMP}: $!" if $ENV{TEST_HOSTILE_DUMP};

my (%kinds, $failed);
for my $c (@CASES) {
    my $r = send_case($c, \%FILL);
    my @bad = check_case($c, $r);
    printf $DUMP "%s\t%s\t%s\t%s\n", $r->{status}, (@bad ? 'FAIL' : 'ok'), $c->{name}, short($r->{body}) if $DUMP;
    ok !@bad, $c->{name} or do {
        $failed++;
        diag join("\n", map { "  $_" } @bad) . "\n  got $r->{status} " . short($r->{body});
        for my $p (@bad) {
            my $k = problem_kind($p);
            my $cat = $c->{route} eq 'raw' ? "raw $c->{mutation}"
                    : $c->{target} =~ /^(path|query|body)\./ ? "$1 $c->{mutation}"
                    : "$c->{target} $c->{mutation}";
            push @{$kinds{$k}{$cat}}, $c->{name};
        }
    };
}

is_deeply [worker_pids()], \@pids, 'after the corpus: the same worker (none died)';

# What failed, counted by problem and by what was mutated (the kind of target: path
# parameter, query parameter, body field, header, raw case): the list the C side works from.
if ($failed) {
    my @out = ("$failed of " . scalar(@CASES) . " cases failed; by problem, then by what was mutated:");
    my $total = sub { my $n = 0; $n += @$_ for values %{$_[0]}; $n };
    for my $k (sort { $total->($kinds{$b}) <=> $total->($kinds{$a}) || $a cmp $b } keys %kinds) {
        my $n = $total->($kinds{$k});
        if ($n == @CASES) {
            push @out, "  $k: every case";
            next;
        }
        push @out, "  $k: $n case(s)";
        for my $cat (sort keys %{$kinds{$k}}) {
            my @names = @{$kinds{$k}{$cat}};
            push @out, sprintf "    %-32s %4d  e.g. %s", $cat, scalar @names, $names[0];
        }
    }
    diag join "\n", @out;
}

done_testing();
