# The role x action matrix (docs/security.md, "Role x action matrix"), checked exhaustively from
# the table @MATRIX below: every content route, as a session of each of the five roles
# (the studio path /v1/workspaces/{id}/...) and as a secret key holding every scope whose
# creator has that role (/v1/api/...): allowed (the route's own status, and a write
# really wrote) or 403 `forbidden` (the spec's code for a role too low), with nothing
# written. Rows attack what was open before: a viewer (or a viewer's key) creating,
# patching, deleting; an author touching another member's article or giving one away;
# an author writing categories. Then a key outliving its creator's demotion: an admin's
# key, its creator demoted to viewer, is refused every write at once (403 `forbidden`)
# but still reads; demoted to author it writes only its creator's own articles; a key
# lacking the scope is told `missing_scope` first, whatever the role.
#
# A new route family adds its rows to @MATRIX (docs/security.md's matrix gets the same rows):
#   what     the test's name for the action
#   method   the HTTP method
#   path     below /v1/api (keys) and /v1/workspaces/{id} (sessions); "%s" is the
#            target's id
#   scope    the key's scope for the route; undef: a studio-only route (no key row)
#   allow    the roles allowed, a space-separated list
#   status   the status of an allowed request
#   body     the JSON body (a code reference is called with the actor's user record)
#   target   code reference (the actor's user record) returning a fresh record's id for
#            "%s", made by the owner's key before each request
#   tables   the tables a refused request must leave as they were (and an allowed
#            write must change)
#   route    the route's own path when "path" cannot spell it (two ids, or none)
#   state    code reference returning a snapshot of what the route changes, when that is
#            not in PostgreSQL (article locks live in Redis); instead of "tables"
use strict;
use warnings;
use File::Basename qw(dirname);
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key api_key mk mkcat
                     redis_cli);
use Cms::FakeBunny;

signup_defaults(email_prefix => 'roles');

# the video provider's routes call a fake Bunny Stream API on loopback
my $BUNNY = Cms::FakeBunny->start;
start_nginx(http_config => $BUNNY->http_config, config => $BUNNY->location);

my @ROLES = qw(owner admin editor author viewer);
my @SCOPES = qw(articles:read articles:write categories:read categories:write
                comments:read comments:write podcasts:read podcasts:write
                subscribers:read subscribers:write custom:read custom:write
                videos:read videos:write media:read media:write pages:read pages:write
                webhooks:read webhooks:write);

my %U = (owner => signup());
my $wid = workspace($U{owner}{token}, 'Roles');

# Each member is made an admin to mint a key with every scope, then given its role.
sub set_role {
    my ($user, $role) = @_;
    psql("UPDATE members SET role = '$role' WHERE workspace_id = '$wid' AND user_id = '$user->{user}{id}'");
}
sub add_member {
    my ($role) = @_;
    my $u = signup();
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$u->{user}{id}', 'admin')");
    $u->{key} = key($u->{token}, $wid, "key of a $role", @SCOPES);
    set_role($u, $role);
    return $u;
}
$U{owner}{key} = key($U{owner}{token}, $wid, 'key of the owner', @SCOPES);
$U{$_} = add_member($_) for grep { $_ ne 'owner' } @ROLES;

# Someone else whose articles the actors touch ("another member's article").
my $writer = add_member('editor');
my $OK = $U{owner}{key};

# Records made fresh for each request (a DELETE consumes its target).
my $n = 0;
sub article_by {
    my ($author, %f) = @_;
    return mk($OK, { title => 'Target ' . ++$n, author_id => $author->{user}{id}, %f })->{id};
}
my %own = (target => sub { article_by($_[0]) });
my %own_live = (target => sub { article_by($_[0], status => 'published') });
my %theirs = (target => sub { article_by($writer) });
my %theirs_live = (target => sub { article_by($writer, status => 'published') });
my %category = (target => sub { mkcat($OK, { name => 'Target ' . ++$n })->{id} });
my $com_art = mk($OK, { title => 'Commented', status => 'published' })->{id};
my %comment = (target => sub {
    my $r = req(POST => '/v1/api/comments', $OK, { article_id => $com_art, author_name => 'T', content => 'T ' . ++$n });
    die 'comment: ' . diag_resp($r) unless $r->{status} == 201;
    $r->{json}{comment}{id} });
sub show_target {
    my $r = req(POST => "/v1/workspaces/$wid/podcast-shows", $U{owner}{token}, { title => 'Show ' . ++$n });
    die 'show: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{podcast_show}{id};
}
my $the_show = show_target();
my %show = (target => \&show_target);
my %video = (target => sub { req(POST => '/v1/api/videos', $OK, { title => 'Target ' . ++$n })->{json}{video}{id} });
my %video_live = (target => sub { req(POST => '/v1/api/videos', $OK, { title => 'Target ' . ++$n,
                                                                      status => 'published' })->{json}{video}{id} });
my %media = (target => sub { req(POST => '/v1/api/media', $OK, { title => 'Target ' . ++$n })->{json}{media}{id} });
my %upload = (target => sub {
    req(POST => "/v1/workspaces/$wid/media/uploads", $U{owner}{token},
        { content_type => 'application/json', type => 'file' })->{json}{upload}{asset_id} });
my %api_key = (target => sub { api_key($U{owner}{token}, $wid, 'target ' . ++$n, 'articles:read')->{api_key}{id} });
my $rmod = req(POST => "/v1/workspaces/$wid/custom-modules", $U{owner}{token},
               { slug => 'roles', name => 'Roles',
                 schema => { fields => [{ key => 'title', label => 'Title', type => 'text' }] } });
die 'custom module: ' . diag_resp($rmod) unless $rmod->{status} == 201;
my %custom_module = (target => sub {
    req(POST => "/v1/workspaces/$wid/custom-modules", $U{owner}{token},
        { slug => 'target-' . ++$n, name => 'Target' })->{json}{custom_module}{id} });
my %custom_entry = (target => sub {
    req(POST => '/v1/api/custom/roles/entries', $OK, { data => { title => 'Target ' . ++$n } })
        ->{json}{custom_entry}{id} });
my %member = (target => sub {
    my $u = signup();
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$u->{user}{id}', 'author')");
    return $u->{user}{id};
});
my %invitation = (target => sub {
    my $r = req(POST => "/v1/workspaces/$wid/invitations", $U{owner}{token},
                { email => 'target' . ++$n . "-$$\@example.com", role => 'viewer' });
    die 'invitation: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{invitation}{id};
});
# the workspace's one site (made again when a row deleted it), its pages and sections
sub the_site {
    my $id = one("SELECT id FROM sites WHERE workspace_id = '$wid'");
    return $id if defined $id;
    my $r = req(POST => "/v1/workspaces/$wid/sites", $U{owner}{token}, { name => 'Roles site' });
    die 'site: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{site}{id};
}
sub page_target {
    my $site = the_site();
    my $r = req(POST => "/v1/workspaces/$wid/sites/$site/pages", $U{owner}{token},
                { slug => '/target-' . ++$n, title => 'Target' });
    die 'page: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{page}{id};
}
my %site = (target => \&the_site);
my %no_site = (target => sub { psql("DELETE FROM sites WHERE workspace_id = '$wid'"); '' });
# a stream the workspace created at the (fake) provider, made once
my $STREAM;
sub stream {
    $STREAM //= req(POST => "/v1/workspaces/$wid/videos/upload-credentials", $U{owner}{token}, {})
        ->{json}{stream_video_id} // die 'upload-credentials: no stream';
}
my %page = (target => sub { my $p = page_target(); the_site() . "/pages/$p" });
my %page_id = (target => \&page_target);
# article locks (Redis): the workspace's lock keys and holders
sub locks_state {
    my @k = sort grep { length } split /\n/, redis_cli('--scan', '--pattern', "cms:lock:{$wid}:*");
    return join ' ', map { my $h = redis_cli('HGET', $_, 'user'); chomp $h; "$_=$h" } @k;
}
my %own_locked = (target => sub {
    my $id = article_by($_[0]);
    my $k = "cms:lock:{$wid}:$id";
    redis_cli('HSET', $k, 'user', $_[0]{user}{id}, 'acquired', 0, 'refreshed', 0);
    redis_cli('PEXPIRE', $k, 600000);
    return $id });
my @LOCK = (state => \&locks_state);
my @SEO = (tables => ['article_seo']);
my %page_draft = (target => sub {
    my $p = page_target();
    my $r = req(PUT => "/v1/api/pages/$p/sections", $OK, { section_key => 'draft', data => { t => 'x' } });
    die 'section: ' . diag_resp($r) unless $r->{status} == 200;
    return $p });

# a webhook to an address literal (no resolver in this file); the rows send test events
# by hand, more than a workspace's 20 at once (t/120 tests that limit): its bucket is
# emptied with each target
my %webhook = (target => sub {
    redis_cli('DEL', "cms:rl:wh:{$wid}");
    my $r = req(POST => '/v1/api/webhooks', $OK, { url => 'https://93.184.216.34/target-' . ++$n });
    die 'webhook: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{webhook}{id};
});

# a queued delivery, as "<webhook>/deliveries/<delivery>" (two ids in one path)
my %delivery = (target => sub {
    my $h = $webhook{target}->();
    my $r = req(POST => "/v1/api/webhooks/$h/test", $OK);
    die 'delivery: ' . diag_resp($r) unless $r->{status} == 202;
    return "$h/deliveries/$r->{json}{delivery}{id}";
});

# the rows below add members, invitations and webhooks: no plan limit in the way
psql("UPDATE plans SET member_limit = NULL, webhook_limit = NULL WHERE name = 'free'");

my $ALL = join ' ', @ROLES;
my $AUTHOR_UP = 'owner admin editor author';
my $EDITOR_UP = 'owner admin editor';
my $ADMIN_UP = 'owner admin';
my @ART = (tables => [qw(articles article_revisions outbox_events)]);
my @CAT = (tables => ['categories']);
my @KEYS = (tables => ['api_keys']);
my @COM = (tables => [qw(comments outbox_events)]);
my @SUB = (tables => ['subscribers']);
my @SHOW = (tables => ['podcast_shows']);
my @EP = (tables => ['podcast_episodes']);
my @CUSTOM = (tables => [qw(custom_modules custom_entries outbox_events)]);
my @VID = (tables => [qw(videos outbox_events)]);
my @MED = (tables => ['media_assets']);
my @TEAM = (tables => [qw(members invitations audit_events)]);
my @SITE = (tables => ['sites']);
my @PAGE = (tables => ['pages']);
my @SECT = (tables => ['sections']);
my @HOOK = (tables => ['webhooks']);
my @DELIV = (tables => [qw(webhooks webhook_deliveries)]);
my @STREAM = (tables => ['video_streams']);

my @MATRIX = (
    # articles
    { what => 'list articles', method => 'GET', path => '/articles', scope => 'articles:read',
      allow => $ALL, status => 200, @ART },
    { what => 'get another member\'s draft', method => 'GET', path => '/articles/%s', scope => 'articles:read',
      allow => $ALL, status => 200, %theirs, @ART },
    { what => 'create a draft', method => 'POST', path => '/articles', scope => 'articles:write',
      allow => $AUTHOR_UP, status => 201, body => sub { { title => 'Draft ' . ++$n } }, @ART },
    { what => 'create a published article', method => 'POST', path => '/articles', scope => 'articles:write',
      allow => $AUTHOR_UP, status => 201, body => sub { { title => 'Live ' . ++$n, status => 'published' } }, @ART },
    { what => 'create an article as its own author', method => 'POST', path => '/articles',
      scope => 'articles:write', allow => $AUTHOR_UP, status => 201,
      body => sub { { title => 'Mine ' . ++$n, author_id => $_[0]{user}{id} } }, @ART },
    { what => 'create an article for another member', method => 'POST', path => '/articles',
      scope => 'articles:write', allow => $EDITOR_UP, status => 201,
      body => sub { { title => 'For them ' . ++$n, author_id => $writer->{user}{id} } }, @ART },
    { what => 'patch one\'s own draft', method => 'PATCH', path => '/articles/%s', scope => 'articles:write',
      allow => $AUTHOR_UP, status => 200, body => { title => 'Edited' }, %own, @ART },
    { what => 'publish one\'s own draft', method => 'PATCH', path => '/articles/%s', scope => 'articles:write',
      allow => $AUTHOR_UP, status => 200, body => { status => 'published' }, %own, @ART },
    { what => 'patch one\'s own published article', method => 'PATCH', path => '/articles/%s',
      scope => 'articles:write', allow => $AUTHOR_UP, status => 200, body => { title => 'Edited live' },
      %own_live, @ART },
    { what => 'unpublish one\'s own article', method => 'PATCH', path => '/articles/%s',
      scope => 'articles:write', allow => $AUTHOR_UP, status => 200, body => { status => 'draft' },
      %own_live, @ART },
    { what => 'give one\'s own draft to another member', method => 'PATCH', path => '/articles/%s',
      scope => 'articles:write', allow => $EDITOR_UP, status => 200,
      body => sub { { author_id => $writer->{user}{id} } }, %own, @ART },
    { what => 'unset the author of one\'s own draft', method => 'PATCH', path => '/articles/%s',
      scope => 'articles:write', allow => $EDITOR_UP, status => 200, body => { author_id => undef },
      %own, @ART },
    { what => 'patch another member\'s draft', method => 'PATCH', path => '/articles/%s',
      scope => 'articles:write', allow => $EDITOR_UP, status => 200, body => { title => 'Edited' },
      %theirs, @ART },
    { what => 'autosave another member\'s draft', method => 'PATCH', path => '/articles/%s',
      scope => 'articles:write', allow => $EDITOR_UP, status => 200,
      body => { title => 'Autosaved', autosave => JSON::PP::true }, %theirs, @ART },
    { what => 'take another member\'s draft', method => 'PATCH', path => '/articles/%s',
      scope => 'articles:write', allow => $EDITOR_UP, status => 200,
      body => sub { { author_id => $_[0]{user}{id} } }, %theirs, @ART },
    { what => 'publish another member\'s draft', method => 'PATCH', path => '/articles/%s',
      scope => 'articles:write', allow => $EDITOR_UP, status => 200, body => { status => 'published' },
      %theirs, @ART },
    { what => 'patch another member\'s published article', method => 'PATCH', path => '/articles/%s',
      scope => 'articles:write', allow => $EDITOR_UP, status => 200, body => { title => 'Edited live' },
      %theirs_live, @ART },
    { what => 'delete one\'s own draft', method => 'DELETE', path => '/articles/%s', scope => 'articles:write',
      allow => $AUTHOR_UP, status => 204, %own, @ART },
    { what => 'delete one\'s own published article', method => 'DELETE', path => '/articles/%s',
      scope => 'articles:write', allow => $AUTHOR_UP, status => 204, %own_live, @ART },
    { what => 'delete another member\'s draft', method => 'DELETE', path => '/articles/%s',
      scope => 'articles:write', allow => $EDITOR_UP, status => 204, %theirs, @ART },
    { what => 'delete another member\'s published article', method => 'DELETE', path => '/articles/%s',
      scope => 'articles:write', allow => $EDITOR_UP, status => 204, %theirs_live, @ART },

    # categories
    { what => 'list categories', method => 'GET', path => '/categories', scope => 'categories:read',
      allow => $ALL, status => 200, @CAT },
    { what => 'get a category', method => 'GET', path => '/categories/%s', scope => 'categories:read',
      allow => $ALL, status => 200, %category, @CAT },
    { what => 'create a category', method => 'POST', path => '/categories', scope => 'categories:write',
      allow => $EDITOR_UP, status => 201, body => sub { { name => 'Category ' . ++$n } }, @CAT },
    { what => 'patch a category', method => 'PATCH', path => '/categories/%s', scope => 'categories:write',
      allow => $EDITOR_UP, status => 200, body => { description => 'Edited' }, %category, @CAT },
    { what => 'delete a category', method => 'DELETE', path => '/categories/%s', scope => 'categories:write',
      allow => $EDITOR_UP, status => 204, %category, @CAT },

    # comments: every member comments, editors and up moderate
    { what => 'list comments', method => 'GET', path => '/comments', scope => 'comments:read',
      allow => $ALL, status => 200, @COM },
    { what => 'comment on an article', method => 'POST', path => '/comments', scope => 'comments:write',
      allow => $ALL, status => 201,
      body => sub { { article_id => $com_art, author_name => 'Reader', content => 'Comment ' . ++$n } }, @COM },
    { what => 'moderate a comment', method => 'PATCH', path => '/comments/%s', scope => 'comments:write',
      allow => $EDITOR_UP, status => 200, body => { status => 'approved' }, %comment, @COM },
    { what => 'delete a comment', method => 'DELETE', path => '/comments/%s', scope => 'comments:write',
      allow => $EDITOR_UP, status => 204, %comment, @COM },

    # subscribers: personal data, editors and up
    { what => 'list subscribers', method => 'GET', path => '/subscribers', scope => 'subscribers:read',
      allow => $EDITOR_UP, status => 200, @SUB },
    { what => 'add a subscriber', method => 'POST', path => '/subscribers', scope => 'subscribers:write',
      allow => $EDITOR_UP, status => 201, body => sub { { email => 'reader' . ++$n . '@example.com' } }, @SUB },

    # podcasts: shows are managed in the studio by editors and up; authors publish episodes
    { what => 'list shows', method => 'GET', path => '/podcast-shows', scope => 'podcasts:read',
      allow => $ALL, status => 200, @SHOW },
    { what => 'get a show', method => 'GET', path => '/podcast-shows/%s', scope => 'podcasts:read',
      allow => $ALL, status => 200, %show, @SHOW },
    { what => 'create a show', method => 'POST', path => '/podcast-shows', allow => $EDITOR_UP, status => 201,
      body => sub { { title => 'Show ' . ++$n } }, @SHOW },
    { what => 'patch a show', method => 'PATCH', path => '/podcast-shows/%s', allow => $EDITOR_UP, status => 200,
      body => sub { { description => 'Edited ' . ++$n } }, %show, @SHOW },
    { what => 'delete a show', method => 'DELETE', path => '/podcast-shows/%s', allow => $EDITOR_UP,
      status => 204, %show, @SHOW },
    { what => 'list episodes', method => 'GET', path => '/podcast-episodes', scope => 'podcasts:read',
      allow => $ALL, status => 200, @EP },
    { what => 'publish an episode', method => 'POST', path => '/podcast-episodes', scope => 'podcasts:write',
      allow => $AUTHOR_UP, status => 201,
      body => sub { { show_id => $the_show, title => 'Episode ' . ++$n, status => 'published',
                      audio_url => 'https://cdn.example.com/e.mp3' } }, @EP },
    # custom modules (sessions only) and their entries
    { what => 'list custom modules', method => 'GET', path => '/custom-modules', allow => $ALL, status => 200,
      @CUSTOM },
    { what => 'create a custom module', method => 'POST', path => '/custom-modules', allow => $ADMIN_UP,
      status => 201, body => sub { { slug => 'module-' . ++$n, name => 'Module' } }, @CUSTOM },
    { what => 'patch a custom module', method => 'PATCH', path => '/custom-modules/%s', allow => $ADMIN_UP,
      status => 200, body => { tagline => 'Edited' }, %custom_module, @CUSTOM },
    { what => 'delete a custom module', method => 'DELETE', path => '/custom-modules/%s', allow => $ADMIN_UP,
      status => 204, %custom_module, @CUSTOM },
    { what => 'list custom entries', method => 'GET', path => '/custom/roles/entries', scope => 'custom:read',
      allow => $ALL, status => 200, @CUSTOM },
    { what => 'get a custom entry', method => 'GET', path => '/custom/roles/entries/%s', scope => 'custom:read',
      allow => $ALL, status => 200, %custom_entry, @CUSTOM },
    { what => 'create a custom entry', method => 'POST', path => '/custom/roles/entries',
      scope => 'custom:write', allow => $AUTHOR_UP, status => 201,
      body => sub { { data => { title => 'Entry ' . ++$n } } }, @CUSTOM },
    { what => 'patch a custom entry', method => 'PATCH', path => '/custom/roles/entries/%s',
      scope => 'custom:write', allow => $AUTHOR_UP, status => 200, body => { data => { title => 'Edited' } },
      %custom_entry, @CUSTOM },
    { what => 'delete a custom entry', method => 'DELETE', path => '/custom/roles/entries/%s',
      scope => 'custom:write', allow => $AUTHOR_UP, status => 204, %custom_entry, @CUSTOM },
    # videos: any member reads, editors and up write (no author of their own)
    { what => 'list videos', method => 'GET', path => '/videos', scope => 'videos:read',
      allow => $ALL, status => 200, @VID },
    { what => 'get a video', method => 'GET', path => '/videos/%s', scope => 'videos:read',
      allow => $ALL, status => 200, %video, @VID },
    { what => 'create a video', method => 'POST', path => '/videos', scope => 'videos:write',
      allow => $EDITOR_UP, status => 201, body => sub { { title => 'Video ' . ++$n } }, @VID },
    { what => 'create a published video', method => 'POST', path => '/videos', scope => 'videos:write',
      allow => $EDITOR_UP, status => 201, body => sub { { title => 'Live video ' . ++$n, status => 'published' } },
      @VID },
    { what => 'patch a video', method => 'PATCH', path => '/videos/%s', scope => 'videos:write',
      allow => $EDITOR_UP, status => 200, body => { description => 'Edited' }, %video, @VID },
    { what => 'patch a published video', method => 'PATCH', path => '/videos/%s', scope => 'videos:write',
      allow => $EDITOR_UP, status => 200, body => { description => 'Edited live' }, %video_live, @VID },
    { what => 'delete a video', method => 'DELETE', path => '/videos/%s', scope => 'videos:write',
      allow => $EDITOR_UP, status => 204, %video, @VID },
    { what => 'delete a published video', method => 'DELETE', path => '/videos/%s', scope => 'videos:write',
      allow => $EDITOR_UP, status => 204, %video_live, @VID },

    # media: any member reads, authors and up register, editors and up delete (studio only)
    { what => 'list media', method => 'GET', path => '/media', scope => 'media:read',
      allow => $ALL, status => 200, @MED },
    { what => 'get an asset', method => 'GET', path => '/media/%s', scope => 'media:read',
      allow => $ALL, status => 200, %media, @MED },
    { what => 'register an asset', method => 'POST', path => '/media', scope => 'media:write',
      allow => $AUTHOR_UP, status => 201, body => sub { { title => 'Asset ' . ++$n, mime_type => 'image/png' } },
      @MED },
    { what => 'delete an asset', method => 'DELETE', path => '/media/%s', allow => $EDITOR_UP, status => 204,
      %media, @MED },
    # uploads (studio only): authors and up reserve and finalize
    { what => 'reserve an upload', method => 'POST', path => '/media/uploads', allow => $AUTHOR_UP, status => 201,
      body => sub { { content_type => 'image/png', title => 'Upload ' . ++$n } }, @MED },
    { what => 'finalize an upload', method => 'POST', path => '/media/%s/finalize', allow => $AUTHOR_UP,
      status => 200, body => {}, %upload, @MED, route => '/media/:key/finalize' },
    { what => 'upload the content', method => 'PUT', path => '/media/%s/content', allow => $AUTHOR_UP,
      status => 200, body => { bytes => 'a JSON file' }, %upload, @MED, route => '/media/:key/content' },

    # the workspace and its keys (sessions only)
    { what => 'get the workspace', method => 'GET', path => '', allow => $ALL, status => 200, @KEYS },
    { what => 'list the keys', method => 'GET', path => '/api-keys', allow => $ADMIN_UP, status => 200, @KEYS },
    { what => 'create a key', method => 'POST', path => '/api-keys', allow => $ADMIN_UP, status => 201,
      body => sub { { name => 'Minted ' . ++$n, scopes => ['articles:read'] } }, @KEYS },
    { what => 'revoke a key', method => 'DELETE', path => '/api-keys/%s', allow => $ADMIN_UP, status => 204,
      %api_key, @KEYS },

    # members, invitations, the plan and the audit log (sessions only)
    { what => 'list members', method => 'GET', path => '/members', allow => $ALL, status => 200, @TEAM },
    { what => 'change a member\'s role', method => 'PATCH', path => '/members/%s', allow => $ADMIN_UP,
      status => 200, body => { role => 'viewer' }, %member, @TEAM },
    { what => 'remove another member', method => 'DELETE', path => '/members/%s', allow => $ADMIN_UP,
      status => 204, %member, @TEAM },
    { what => 'invite', method => 'POST', path => '/invitations', allow => $ADMIN_UP, status => 201,
      body => sub { { email => 'invitee' . ++$n . "-$$\@example.com", role => 'editor' } }, @TEAM },
    { what => 'list invitations', method => 'GET', path => '/invitations', allow => $ADMIN_UP, status => 200,
      @TEAM },
    { what => 'revoke an invitation', method => 'DELETE', path => '/invitations/%s', allow => $ADMIN_UP,
      status => 204, %invitation, @TEAM },
    { what => 'get the plan', method => 'GET', path => '/plan', allow => $ALL, status => 200,
      tables => ['plans'] },
    { what => 'read the audit log', method => 'GET', path => '/audit-events', allow => $ADMIN_UP, status => 200,
      @TEAM },

    # the site and its pages (sessions only): members read, authors write, editors create
    # the site and rotate its key; "route" names the route when the path holds two ids
    { what => 'list sites', method => 'GET', path => '/sites', allow => $ALL, status => 200, @SITE },
    { what => 'create the site', method => 'POST', path => '/sites%s', route => '/sites', allow => $EDITOR_UP,
      status => 201, body => sub { { name => 'Site ' . ++$n } }, %no_site, @SITE },
    { what => 'get the site', method => 'GET', path => '/sites/%s', route => '/sites/:site', allow => $ALL,
      status => 200, %site, @SITE },
    { what => 'edit the site', method => 'PATCH', path => '/sites/%s', route => '/sites/:site',
      allow => $AUTHOR_UP, status => 200, body => sub { { name => 'Renamed ' . ++$n } }, %site, @SITE },
    { what => 'delete the site', method => 'DELETE', path => '/sites/%s', route => '/sites/:site',
      allow => $AUTHOR_UP, status => 204, %site, @SITE },
    { what => 'rotate the site key', method => 'POST', path => '/sites/%s/publishable-key/rotate',
      route => '/sites/:site/publishable-key/rotate', allow => $EDITOR_UP, status => 200, %site, @SITE },
    { what => 'list pages', method => 'GET', path => '/sites/%s/pages', route => '/sites/:site/pages',
      allow => $ALL, status => 200, %site, @PAGE },
    { what => 'create a page', method => 'POST', path => '/sites/%s/pages', route => '/sites/:site/pages',
      allow => $AUTHOR_UP, status => 201, body => sub { { slug => '/new-' . ++$n, title => 'New' } }, %site,
      @PAGE },
    { what => 'get a page', method => 'GET', path => '/sites/%s', route => '/sites/:site/pages/:page',
      allow => $ALL, status => 200, %page, @PAGE },
    { what => 'edit a page', method => 'PATCH', path => '/sites/%s', route => '/sites/:site/pages/:page',
      allow => $AUTHOR_UP, status => 200, body => sub { { title => 'Edited ' . ++$n } }, %page, @PAGE },
    { what => 'delete a page', method => 'DELETE', path => '/sites/%s', route => '/sites/:site/pages/:page',
      allow => $AUTHOR_UP, status => 204, %page, @PAGE },

    # article locks and SEO records (studio only): as the article's edit rights
    { what => 'lock one\'s own article', method => 'POST', path => '/articles/%s/lock',
      route => '/articles/:article/lock', allow => $AUTHOR_UP, status => 200, %own, @LOCK },
    { what => 'lock another member\'s article', method => 'POST', path => '/articles/%s/lock',
      route => '/articles/:article/lock', allow => $EDITOR_UP, status => 200, %theirs, @LOCK },
    { what => 'release one\'s own lock', method => 'DELETE', path => '/articles/%s/lock',
      route => '/articles/:article/lock', allow => $AUTHOR_UP, status => 204, %own_locked, @LOCK },
    { what => 'read an article\'s SEO record', method => 'GET', path => '/articles/%s/seo',
      route => '/articles/:article/seo', allow => $ALL, status => 200, %theirs, @SEO },
    { what => 'save the SEO record of one\'s own article', method => 'PUT', path => '/articles/%s/seo',
      route => '/articles/:article/seo', allow => $AUTHOR_UP, status => 200, body => { score => 1 }, %own, @SEO },
    { what => 'save the SEO record of another member\'s article', method => 'PUT', path => '/articles/%s/seo',
      route => '/articles/:article/seo', allow => $EDITOR_UP, status => 200, body => { score => 1 }, %theirs,
      @SEO },

    # page sections: any member reads, authors save drafts, editors and up publish
    { what => 'read sections', method => 'GET', path => '/pages/%s/sections', scope => 'pages:read',
      allow => $ALL, status => 200, %page_id, @SECT },
    { what => 'save a section', method => 'PUT', path => '/pages/%s/sections', scope => 'pages:write',
      allow => $AUTHOR_UP, status => 200, body => sub { { section_key => 'k' . ++$n } }, %page_id, @SECT },
    { what => 'write a section field', method => 'POST', path => '/pages/%s/sections/fields',
      scope => 'pages:write', allow => $AUTHOR_UP, status => 200,
      body => sub { { section => 'k' . ++$n, field => 'f', value => 'v' } }, %page_id, @SECT },
    { what => 'publish sections', method => 'POST', path => '/pages/%s/sections/publish', scope => 'pages:write',
      allow => $EDITOR_UP, status => 200, body => {}, %page_draft, @SECT },

    # webhooks: owners and admins only (their secrets sign what the workspace sends)
    { what => 'list webhooks', method => 'GET', path => '/webhooks', scope => 'webhooks:read',
      allow => $ADMIN_UP, status => 200, @HOOK },
    { what => 'create a webhook', method => 'POST', path => '/webhooks', scope => 'webhooks:write',
      allow => $ADMIN_UP, status => 201, body => sub { { url => 'https://93.184.216.34/new-' . ++$n } }, @HOOK },
    { what => 'get a webhook', method => 'GET', path => '/webhooks/%s', scope => 'webhooks:read',
      allow => $ADMIN_UP, status => 200, %webhook, @HOOK },
    { what => 'patch a webhook', method => 'PATCH', path => '/webhooks/%s', scope => 'webhooks:write',
      allow => $ADMIN_UP, status => 200, body => sub { { description => 'Edited ' . ++$n } }, %webhook, @HOOK },
    { what => 'delete a webhook', method => 'DELETE', path => '/webhooks/%s', scope => 'webhooks:write',
      allow => $ADMIN_UP, status => 204, %webhook, @HOOK },
    { what => 'rotate a webhook secret', method => 'POST', path => '/webhooks/%s/secret/rotate',
      scope => 'webhooks:write', allow => $ADMIN_UP, status => 200, %webhook, @HOOK },
    # the delivery log and the hand-queued deliveries (nothing is sent: no
    # cms_webhook_delivery in this file)
    { what => 'list webhook deliveries', method => 'GET', path => '/webhooks/%s/deliveries',
      scope => 'webhooks:read', allow => $ADMIN_UP, status => 200, %webhook, @DELIV },
    { what => 'test a webhook', method => 'POST', path => '/webhooks/%s/test',
      scope => 'webhooks:write', allow => $ADMIN_UP, status => 202, %webhook, @DELIV },
    { what => 'redeliver a webhook delivery', method => 'POST', path => '/webhooks/%s/redeliver',
      route => '/webhooks/:id/deliveries/:deliveryId/redeliver',
      scope => 'webhooks:write', allow => $ADMIN_UP, status => 202, %delivery, @DELIV },
    # the video provider (studio only): editors and up create videos at the provider, any
    # member polls one the workspace created (a poll keeps its state on video_streams)
    { what => 'get upload credentials', method => 'POST', path => '/videos/upload-credentials',
      allow => $EDITOR_UP, status => 200, body => sub { { title => 'Roles ' . ++$n } }, @STREAM },
    { what => 'poll a stream', method => 'GET', path => '/videos/stream/%s/status',
      route => '/videos/stream/:stream/status', allow => $ALL, status => 200, target => \&stream,
      tables => ['videos'] },
);

# What a refused request must not change: each table's rows, as one digest.
sub snapshot {
    my $tables = shift;
    return one('SELECT concat_ws(\' \', ' . join(', ', map {
        "(SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM $_ t)"
    } @$tables) . ')');
}

# One cell of the matrix: the row, a role, a credential ('session' or 'key').
sub cell {
    my ($row, $role, $cred) = @_;
    my $u = $U{$role};
    my $path = $row->{path};
    $path = sprintf $path, $row->{target}->($u) if $row->{target};
    $path = $cred eq 'key' ? "/v1/api$path" : "/v1/workspaces/$wid$path";
    my $body = ref $row->{body} eq 'CODE' ? $row->{body}->($u) : $row->{body};
    my $allowed = grep { $_ eq $role } split ' ', $row->{allow};
    my $name = "$row->{what}: $role " . ($cred eq 'key' ? "key ($row->{method} /v1/api)" : 'session');
    my $state = $row->{state} // sub { snapshot($row->{tables}) };
    my $before = $state->();
    my $r = req($row->{method}, $path, $cred eq 'key' ? $u->{key} : $u->{token}, $body);
    my $after = $state->();
    if ($allowed) {
        is $r->{status}, $row->{status}, "$name: $row->{status}" or diag diag_resp($r);
        if ($row->{method} eq 'GET') {
            is $after, $before, "$name: a read writes nothing";
        } else {
            isnt $after, $before, "$name: written";
        }
    } else {
        check_err($r, 403, 'forbidden', $name);
        is $after, $before, "$name: nothing written";
    }
}

for my $row (@MATRIX) {
    for my $role (@ROLES) {
        cell($row, $role, 'session');
        cell($row, $role, 'key') if defined $row->{scope};
    }
}

# The matrix covers every route of the content families and the studio's workspace and
# key routes: a route added to those families without a row here fails.
{
    my $root = $ENV{TEST_CMS_ROOT} // dirname(__FILE__) . '/..';
    my (%have, %want);
    for my $row (@MATRIX) {
        (my $p = $row->{route} // $row->{path}) =~ s/%s/:id/;
        $p =~ s{^/custom/roles/}{/custom/:slug/};
        $have{"$row->{method} /v1/api$p"} = 1 if defined $row->{scope};
        $have{"$row->{method} /v1/workspaces/:ws$p"} = 1;
    }
    for (`perl $root/scripts/routes`) {
        my ($m, $path, $cred) = split /\t/;
        next unless $cred eq 'secret key' || $cred eq 'session, member';
        next if $path eq '/v1/api/key';     # a key's own record: any key, no role
        $path =~ s{^/v1/workspaces/:id}{/v1/workspaces/:ws};
        $path =~ s{/:key$}{/:id};
        $path =~ s{/:module$}{/:id};
        $path =~ s{/:(?:user|inv)$}{/:id};
        $want{"$m $path"} = 1;
    }
    ok keys(%want) >= 20, 'role-bound routes found (' . scalar(keys %want) . ')';
    is_deeply [sort grep { !$have{$_} } keys %want], [], 'every role-bound route has a row in the matrix';
}

# --- a key outlives no demotion --------------------------------------------------------

{
    my $d = add_member('admin');
    my $k = $d->{key};
    my $mine = mk($k, { title => 'Written while an admin' });
    my $cat = mkcat($k, { name => 'Made while an admin' });
    my $theirs = article_by($writer);
    is req(POST => '/v1/api/categories', $k, { name => 'Admin category' })->{status}, 201,
        'admin\'s key: creates a category';
    my $kr = key($d->{token}, $wid, 'read only', 'articles:read');

    # Demoted to viewer: every write refused at once, reads still answer.
    set_role($d, 'viewer');
    my $T = [qw(articles article_revisions outbox_events categories)];
    my $before = snapshot($T);
    check_err(req(POST => '/v1/api/articles', $k, { title => 'After the demotion' }), 403, 'forbidden',
              'creator demoted to viewer: POST an article');
    check_err(req(PATCH => "/v1/api/articles/$mine->{id}", $k, { title => 'Mine still?' }), 403, 'forbidden',
              'creator demoted to viewer: PATCH the creator\'s own article');
    check_err(req(DELETE => "/v1/api/articles/$mine->{id}", $k), 403, 'forbidden',
              'creator demoted to viewer: DELETE the creator\'s own article');
    check_err(req(POST => '/v1/api/categories', $k, { name => 'After the demotion' }), 403, 'forbidden',
              'creator demoted to viewer: POST a category');
    check_err(req(PATCH => "/v1/api/categories/$cat->{id}", $k, { name => 'Renamed' }), 403, 'forbidden',
              'creator demoted to viewer: PATCH a category');
    check_err(req(DELETE => "/v1/api/categories/$cat->{id}", $k), 403, 'forbidden',
              'creator demoted to viewer: DELETE a category');
    is snapshot($T), $before, 'creator demoted to viewer: the refused writes changed nothing';
    my $g = req(GET => "/v1/api/articles/$mine->{id}", $k);
    is $g->{status}, 200, 'creator demoted to viewer: the key still reads an article' or diag diag_resp($g);
    is_deeply $g->{json}{article}, $mine, 'creator demoted to viewer: the same article';
    is req(GET => '/v1/api/articles', $k)->{status}, 200, 'creator demoted to viewer: the key still lists articles';
    is req(GET => "/v1/api/categories/$cat->{id}", $k)->{status}, 200,
        'creator demoted to viewer: the key still reads a category';

    # The scope is checked first: a viewer's key without the scope is told missing_scope.
    check_err(req(POST => '/v1/api/articles', $kr, { title => 'x' }), 403, 'missing_scope',
              'creator demoted to viewer, a key without articles:write: missing_scope first');
    is req(GET => '/v1/api/articles', $kr)->{status}, 200, 'creator demoted to viewer: the read-only key reads';

    # Demoted to author: the creator's own articles only, no categories.
    set_role($d, 'author');
    my $p = req(PATCH => "/v1/api/articles/$mine->{id}", $k, { title => 'Mine, as an author' });
    is $p->{status}, 200, 'creator demoted to author: PATCH the creator\'s own article' or diag diag_resp($p);
    my $c = req(POST => '/v1/api/articles', $k, { title => 'As an author' });
    is $c->{status}, 201, 'creator demoted to author: POST an article' or diag diag_resp($c);
    is(($c->{json}{article} // {})->{author_id}, $d->{user}{id}, 'creator demoted to author: the creator is its author');
    $before = snapshot($T);
    check_err(req(PATCH => "/v1/api/articles/$theirs", $k, { title => 'Theirs, mine now' }), 403, 'forbidden',
              'creator demoted to author: PATCH another member\'s article');
    check_err(req(DELETE => "/v1/api/articles/$theirs", $k), 403, 'forbidden',
              'creator demoted to author: DELETE another member\'s article');
    check_err(req(POST => '/v1/api/categories', $k, { name => 'As an author' }), 403, 'forbidden',
              'creator demoted to author: POST a category');
    is snapshot($T), $before, 'creator demoted to author: the refused writes changed nothing';

    # Promoted back: the same key writes again at once.
    set_role($d, 'editor');
    is req(PATCH => "/v1/api/articles/$theirs", $k, { title => 'Edited by an editor' })->{status}, 200,
        'creator promoted to editor: PATCH another member\'s article at once';

    # Gone from the workspace: the key stops working.
    psql("DELETE FROM members WHERE workspace_id = '$wid' AND user_id = '$d->{user}{id}'");
    check_err(req(GET => '/v1/api/articles', $k), 401, 'invalid_api_key', 'creator removed: the key is refused');
}

done_testing();
