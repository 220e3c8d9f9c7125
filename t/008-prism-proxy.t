# An independent walk of openapi/openapi.yaml (issue 18): smoke requests of every route
# family, a success and an error each, sent through `prism proxy --errors`
# (@stoplight/prism-cli in tools/node, installed by scripts/deps.sh test) in front of the
# file's nginx, on loopback. Prism checks each request and each answer against the
# document: an answer that drifts from it comes back as its 500 problem+json, and any
# violation it notices (request or answer, error or warning) is in an `sl-violations`
# header and in its log. Every request here is valid per the document (a credential is
# sent where one is needed, bodies fit their schemas), so an error case is one the
# document cannot tell from a success: an unknown id, a wrong key, a taken slug, a
# missing scope, a stale version. Zero violations: each answer is the module's, with the
# status the module gives, no `sl-violations`, and the log has no violation line but the
# canary's (one deliberate drift in prism's copy of the document, to show it would see one).
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp signup workspace key facility extension ext_key invoice
                     idem make_key $UUID);
use Cms::ExtFixtures qw(admin_key);
use File::Basename qw(dirname);
use IO::Socket::INET ();
use Time::HiRes ();
use YAML::XS ();

my $ROOT = $ENV{TEST_CMS_ROOT} // dirname(__FILE__) . '/..';
my $PRISM = "$ROOT/tools/node/node_modules/.bin/prism";
-x $PRISM or BAIL_OUT("no $PRISM: run scripts/deps.sh test");

start_nginx();

# --- prism in front of nginx ----------------------------------------------------------------

# The document prism reads: openapi/openapi.yaml with one canary, a member the plan's
# answer does not have made required, so that the walk shows prism does catch an answer
# that drifts (GET .../plan below must come back as prism's 500 with a violation).
my $DOC = prefix() . '/conf/openapi-canary.yaml';
{
    no warnings 'once';
    local $YAML::XS::Boolean = 'JSON::PP';
    my $d = YAML::XS::LoadFile("$ROOT/openapi/openapi.yaml");
    my $schema = $d->{paths}{'/v1/workspaces/{id}/plan'}{get}{responses}{200}{content}{'application/json'}{schema}
        or BAIL_OUT('no 200 schema for GET /v1/workspaces/{id}/plan: update the canary');
    push @{ $schema->{required} }, 'canary_not_answered';
    YAML::XS::DumpFile($DOC, $d);
}

my $PPORT = free_port();
my $LOG = prefix() . '/logs/prism.log';
my $pid = fork // die "fork: $!";
if (!$pid) {
    open STDOUT, '>', $LOG or die "$LOG: $!";
    open STDERR, '>&', \*STDOUT or die "dup: $!";
    # no telemetry or update check: nothing leaves the machine
    $ENV{NO_COLOR} = 1;
    $ENV{FORCE_COLOR} = 0;
    exec $PRISM, 'proxy', $DOC, 'http://127.0.0.1:' . port(),
         '--errors', '--cors=false', '-h', '127.0.0.1', '-p', $PPORT, '--multiprocess=false',
         '--verboseLevel=warn';    # violations and errors only: logging every body is slow
    die "exec $PRISM: $!";
}
END { if ($pid) { local $?; kill 'TERM', $pid; waitpid $pid, 0 } }

my $t0 = Time::HiRes::time();
my $up = wait_until(60, sub {
    IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $PPORT, Proto => 'tcp') ? 1 : 0
});
ok $up, 'prism proxy listens' or do {
    diag `cat $LOG`;
    BAIL_OUT('prism did not start');
};
note sprintf 'prism up in %.1f s', Time::HiRes::time() - $t0;

# a request through prism: [METHOD, path, credential, body, headers...]
my $N = 0;
sub through {
    my ($name, $want, $m, $path, $cred, $body, @h) = @_;
    my $s = Cms::Fixtures::req_spec($m, $path, $cred, $body, @h);
    # prism's own answers (a 422 for a request it refuses) are not the module's: this file
    # asserts on them itself, Cms::OpenApi checks the module's answers everywhere else
    my $r = http($s->{method}, $s->{path}, $s->{headers}, $s->{body}, port => $PPORT, openapi => 0);
    $N++;
    my $v = $r->{headers}{'sl-violations'};
    # X-Request-Id: the module's answer, forwarded (prism's own have none)
    ok $r->{status} == $want && !defined $v && $r->{headers}{'x-request-id'},
        "$name: $m $path -> $want, no violation"
        or diag(($v ? "sl-violations: $v\n" : '') . diag_resp($r));
    return $r;
}

# --- fixtures (straight to nginx) -------------------------------------------------------------

my $owner = signup();
my $tok = $owner->{token};
my $ws = workspace($tok, 'Prism');
my $K = key($tok, $ws, 'all', map { ("$_:read", "$_:write") }
            qw(articles videos categories media comments custom pages podcasts subscribers));
my $KR = key($tok, $ws, 'read only', 'articles:read');
my $stranger = signup();
my $ws2 = workspace($stranger->{token}, 'Elsewhere');
my $NOPE = '0b6f4a52-2a8e-4c43-9d0e-8f1f2b7c9a11';

# --- health, docs, auth, account --------------------------------------------------------------

through('health', 200, GET => '/v1/health');
my $doc = through('openapi', 200, GET => '/v1/openapi.json');
through('openapi, not modified', 304, GET => '/v1/openapi.json', undef, undef,
        'If-None-Match' => $doc->{headers}{etag} // '"x"');
through('docs', 200, GET => '/v1/docs');

my $email = "prism-$$\@example.com";
my $su = through('signup', 201, POST => '/v1/auth/signup', undef, { email => $email, password => 'password number 1' });
through('signup, taken', 409, POST => '/v1/auth/signup', undef, { email => $email, password => 'password number 1' });
my $li = through('login', 200, POST => '/v1/auth/login', undef, { email => $email, password => 'password number 1' });
through('login, wrong password', 401, POST => '/v1/auth/login', undef, { email => $email, password => 'not the password' });
my $stok = $li->{json}{token};
through('me', 200, GET => '/v1/me', $stok);
through('me, a forged session', 401, GET => '/v1/me', 'eyJhbGciOiJIUzI1NiJ9.e30.AAAA');
through('profile', 200, PATCH => '/v1/me', $stok, { name => 'Prism' });
through('password reset request', 204, POST => '/v1/auth/password-reset', undef, { email => $email });
through('password reset, a bad token', 400, POST => '/v1/auth/password-reset/confirm', undef,
        { token => 'pwr_nope', new_password => 'another password' });
through('verify request', 204, POST => '/v1/auth/verify-email/request', undef, { email => $email });
through('verify, a bad token', 400, POST => '/v1/auth/verify-email', undef, { token => 'vfy_nope' });

# --- workspaces, keys, members ------------------------------------------------------------------

through('workspaces', 200, GET => '/v1/workspaces', $tok);
through('workspace', 200, GET => "/v1/workspaces/$ws", $tok);
through('workspace, not a member', 403, GET => "/v1/workspaces/$ws2", $tok);
my $nk = through('mint a key', 201, POST => "/v1/workspaces/$ws/api-keys", $tok,
                 { name => 'smoke', scopes => ['articles:read'] });
through('keys', 200, GET => "/v1/workspaces/$ws/api-keys", $tok);
through('revoke a key', 204, DELETE => "/v1/workspaces/$ws/api-keys/" . ($nk->{json}{api_key}{id} // $NOPE), $tok);
through('revoke, unknown', 404, DELETE => "/v1/workspaces/$ws/api-keys/$NOPE", $tok);
through('own key', 200, GET => '/v1/api/key', $K);
through('own key, unknown', 401, GET => '/v1/api/key', make_key('svc_live_'));
through('members', 200, GET => "/v1/workspaces/$ws/members", $tok);
through('member, last owner', 409, PATCH => "/v1/workspaces/$ws/members/$owner->{user}{id}", $tok, { role => 'admin' });
my $inv = through('invite', 201, POST => "/v1/workspaces/$ws/invitations", $tok,
                  { email => "invitee-$$\@example.com", role => 'editor' });
through('invitations', 200, GET => "/v1/workspaces/$ws/invitations", $tok);
through('accept, another address', 403, POST => '/v1/invitations/' . ($inv->{json}{token} // 'inv_x') . '/accept',
        $stranger->{token});
through('revoke an invitation, unknown', 404, DELETE => "/v1/workspaces/$ws/invitations/$NOPE", $tok);
{
    my $s = Cms::Fixtures::req_spec(GET => "/v1/workspaces/$ws/plan", $tok);
    my $r = http($s->{method}, $s->{path}, $s->{headers}, undef, port => $PPORT, openapi => 0);
    ok $r->{status} == 500 && ($r->{headers}{'sl-violations'} // '') =~ /canary_not_answered/,
        'the canary: an answer that drifts from the document is caught (prism answers 500, sl-violations)'
        or diag diag_resp($r);
    is http(GET => "/v1/workspaces/$ws/plan", { Authorization => "Bearer $tok" })->{status}, 200,
        '... which nginx answered 200';
}
through('audit', 200, GET => "/v1/workspaces/$ws/audit-events", $tok);

# --- content ------------------------------------------------------------------------------------

my $cat = through('category', 201, POST => '/v1/api/categories', $K, { name => 'News', slug => 'news' });
through('category, slug taken', 409, POST => '/v1/api/categories', $K, { name => 'News 2', slug => 'news' });
through('categories', 200, GET => '/v1/api/categories', $K);
through('category, unknown', 404, GET => "/v1/api/categories/$NOPE", $K);

my $art = through('article', 201, POST => '/v1/api/articles', $K,
                  { title => 'Hello', body => '<p>Hi</p>', tags => ['a'], category_id => $cat->{json}{category}{id} });
my $aid = $art->{json}{article}{id} // $NOPE;
through('article, no scope', 403, POST => '/v1/api/articles', $KR, { title => 'No' });
through('article, a URL not http', 400, POST => '/v1/api/articles', $K, { title => 'Bad', image_url => 'ftp://x.example/a.png' });
through('articles', 200, GET => '/v1/api/articles?limit=5', $K);
through('article', 200, GET => "/v1/api/articles/$aid", $K);
through('article, studio', 200, GET => "/v1/workspaces/$ws/articles/$aid", $tok);
through('article, unknown', 404, GET => "/v1/api/articles/$NOPE", $K);
through('article, patch', 200, PATCH => "/v1/api/articles/$aid", $K, { status => 'published' });

my $com = through('comment', 201, POST => '/v1/api/comments', $K,
                  { article_id => $aid, author_name => 'Ann', content => 'Nice' });
through('comment, unknown article', 404, POST => '/v1/api/comments', $K,
        { article_id => $NOPE, author_name => 'Ann', content => 'Nice' });
through('comments', 200, GET => '/v1/api/comments', $K);
through('comment, moderate', 200, PATCH => '/v1/api/comments/' . ($com->{json}{comment}{id} // $NOPE), $K,
        { status => 'approved' });

my $vid = through('video', 201, POST => '/v1/api/videos', $K, { title => 'Clip' });
through('video', 200, GET => '/v1/api/videos/' . ($vid->{json}{video}{id} // $NOPE), $K);
through('video, unknown', 404, DELETE => "/v1/api/videos/$NOPE", $K);

my $med = through('media', 201, POST => '/v1/api/media', $K, { title => 'Pic', url => 'https://cdn.example/p.png' });
through('media list', 200, GET => '/v1/api/media?type=image', $K);
through('media, unknown', 404, GET => "/v1/api/media/$NOPE", $K);
through('media, delete', 204, DELETE => "/v1/workspaces/$ws/media/" . ($med->{json}{media}{id} // $NOPE), $tok);

through('custom module', 201, POST => "/v1/workspaces/$ws/custom-modules", $tok,
        { slug => 'products', name => 'Products', schema => { fields => [{ key => 'sku', label => 'SKU', type => 'text' }] } });
through('custom modules', 200, GET => "/v1/workspaces/$ws/custom-modules", $tok);
my $ent = through('custom entry', 201, POST => '/v1/api/custom/products/entries', $K, { data => { sku => 'A1' } });
through('custom entries', 200, GET => '/v1/api/custom/products/entries', $K);
through('custom entry, unknown module', 404, GET => '/v1/api/custom/nothing/entries', $K);

my $show = through('podcast show', 201, POST => "/v1/workspaces/$ws/podcast-shows", $tok, { title => 'Show' });
my $sid = $show->{json}{podcast_show}{id} // $NOPE;
through('podcast episode', 201, POST => '/v1/api/podcast-episodes', $K,
        { show_id => $sid, title => 'Ep 1', audio_url => 'https://cdn.example/1.mp3', status => 'published' });
through('podcast episode, unknown show', 404, POST => '/v1/api/podcast-episodes', $K,
        { show_id => $NOPE, title => 'Ep', audio_url => 'https://cdn.example/1.mp3' });
through('podcast shows', 200, GET => '/v1/api/podcast-shows', $K);
through('podcast feed', 200, GET => "/v1/feeds/podcasts/$sid.xml");
through('podcast feed, unknown', 404, GET => "/v1/feeds/podcasts/$NOPE.xml");

my $sub = through('subscriber', 201, POST => '/v1/api/subscribers', $K, { email => "reader-$$\@example.com" });
through('subscriber, known', 200, POST => '/v1/api/subscribers', $K, { email => "reader-$$\@example.com" });
through('subscribers', 200, GET => '/v1/api/subscribers', $K);
through('unsubscribe', 200, POST => '/v1/unsubscribe/' . ($sub->{json}{unsubscribe_token} // 'x'));
through('unsubscribe, an altered token', 404, POST => '/v1/unsubscribe/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');

# --- sites, pages, sections, the public surface ----------------------------------------------------

my $site = through('site', 201, POST => "/v1/workspaces/$ws/sites", $tok, { name => 'Site' });
my $site_id = $site->{json}{site}{id} // $NOPE;
my $pk = $site->{json}{site}{publishable_key} // 'pk_live_x';
through('sites', 200, GET => "/v1/workspaces/$ws/sites", $tok);
through('site, unknown', 404, GET => "/v1/workspaces/$ws/sites/$NOPE", $tok);
my $page = through('page', 201, POST => "/v1/workspaces/$ws/sites/$site_id/pages", $tok,
                   { slug => '/about', title => 'About' });
my $pid_ = $page->{json}{page}{id} // $NOPE;
through('page, slug taken', 409, POST => "/v1/workspaces/$ws/sites/$site_id/pages", $tok,
        { slug => '/about', title => 'Again' });
through('pages', 200, GET => "/v1/workspaces/$ws/sites/$site_id/pages", $tok);
my $sec = through('section draft', 200, PUT => "/v1/api/pages/$pid_/sections", $K,
                  { section_key => 'hero', data => { headline => 'Hi' } });
through('section, a stale version', 409, PUT => "/v1/api/pages/$pid_/sections", $K,
        { section_key => 'hero', data => { headline => 'Old' }, base_version => 0 });
through('section field', 200, POST => "/v1/api/pages/$pid_/sections/fields", $K,
        { section => 'hero', field => 'body', value => { html => '<p>x</p>' } });
through('publish', 200, POST => "/v1/api/pages/$pid_/sections/publish", $K, {});
through('sections', 200, GET => "/v1/api/pages/$pid_/sections", $K);

through('public site', 200, GET => "/v1/public/site?key=$pk");
through('public site, an unknown key', 401, GET => '/v1/public/site?key=' . make_key('pk_live_'));
through('public pages', 200, GET => "/v1/public/pages?key=$pk");
through('public sections', 200, GET => "/v1/public/pages/$pid_/sections?key=$pk");
through('public sections by path', 200, GET => "/v1/public/sections?path=/about&key=$pk");
through('public sections, no such path', 404, GET => "/v1/public/sections?path=/none&key=$pk");
through('public preflight', 204, OPTIONS => '/v1/public/pages', undef, undef,
        Origin => 'https://www.example.com', 'Access-Control-Request-Method' => 'GET');

# --- the extension surface and extension management ------------------------------------------------

my $fac = facility();
my $ext = extension($fac);
my $XK = ext_key(fac => $fac, ext => $ext);
my $invc = invoice($fac, 1, '120.5');
through('invoice', 200, GET => "/v1/ext/billing/invoices/$invc", $XK);
through('invoice, unknown', 404, GET => "/v1/ext/billing/invoices/$NOPE", $XK);
through('record payment', 200, POST => "/v1/ext/billing/payments/$invc/record", $XK,
        { reference => 'ref-1', amount => 120.5 }, 'Idempotency-Key' => idem());
through('record payment, paid already', 409, POST => "/v1/ext/billing/payments/$invc/record", $XK,
        { reference => 'ref-2', amount => 120.5 }, 'Idempotency-Key' => idem());
through('invoice, another key', 401, GET => "/v1/ext/billing/invoices/$invc", make_key('sk_live_'));

my $AK = admin_key($fac);
through('extensions', 200, GET => '/v1/extensions', $AK);
through('extension config, unknown', 404, PUT => '/v1/extensions/nothing-here/config', $AK, { note => 'x' });

through('logout', 204, POST => '/v1/auth/logout', $stok);

# --- what prism logged ---------------------------------------------------------------------------

note sprintf '%d requests in %.1f s', $N, Time::HiRes::time() - $t0;
my $log = do { open my $fh, '<', $LOG or die "$LOG: $!"; local $/; <$fh> };
# with --errors a drifting answer is logged as the request's end, not as a violation line
my @violations = grep { /Violation|VALIDATOR|Request terminated/ && !m{/plan\b} } split /\n/, $log;
like $log, qr{/plan\b.*VIOLATIONS}, 'prism logged the canary\'s violation';
is scalar(@violations), 0, "prism logged no violation over $N requests" or diag join "\n", grep { defined } @violations[0 .. 19];

done_testing();
