# Every SQL function a request reaches is inlined into the statement that calls it, or
# written in PL/pgSQL (sql/0049_plans_kept.sql): an SQL function PostgreSQL cannot inline
# is parsed and planned again on every call from a new statement, so once per request
# (a third of PostgreSQL's time in an article created).  With track_functions = all a
# function is counted only when it runs as a call of its own, which an inlined SQL
# function never does; after a walk through the main writes and reads of the content,
# studio, public and extension routes (each answered 2xx), no SQL-language function of
# ours may have been counted, but for the background jobs' own (listed below).
use strict;
use warnings;
use Cms::Test;
use JSON::PP ();
use Cms::Fixtures qw(req diag_resp one signup signup_defaults workspace key
                     facility extension ext_key invoice post record_path fail_path);

signup_defaults(email_prefix => 'plans');

# the module's connections count their calls; the jobs wait an hour between passes
psql("ALTER DATABASE %%DB%% SET track_functions = 'all'");
set_conf_defaults(http_config => 'cms_events_interval 1h;');
start_nginx();

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Plans');
my $K = key($ot, $wid, 'all', qw(articles:read articles:write comments:read comments:write
                                  custom:read custom:write media:read pages:read pages:write
                                  podcasts:read podcasts:write subscribers:read subscribers:write
                                  videos:read videos:write webhooks:read categories:read));

my @walk;
sub ok2xx {
    my ($what, $r) = @_;
    push @walk, $what;
    ok $r->{status} >= 200 && $r->{status} < 300, "$what: 2xx" or diag diag_resp($r);
    return $r->{json} // {};
}

# articles and comments
my $a = ok2xx('POST /v1/api/articles', req(POST => '/v1/api/articles', $K,
              { title => 'Plans', body => '<p>A body.</p>', status => 'published', tags => ['x'] }))->{article};
ok2xx('GET /v1/api/articles/{id}', req(GET => "/v1/api/articles/$a->{id}", $K));
ok2xx('GET /v1/api/articles', req(GET => '/v1/api/articles?limit=5', $K));
ok2xx('GET /v1/api/articles?status', req(GET => '/v1/api/articles?status=published&limit=5', $K));
ok2xx('PATCH /v1/api/articles/{id}', req(PATCH => "/v1/api/articles/$a->{id}", $K, { subtitle => 'S' }));
ok2xx('POST /v1/api/comments', req(POST => '/v1/api/comments', $K,
      { article_id => $a->{id}, author_name => 'Ann', content => 'A comment' }));
ok2xx('GET /v1/api/comments', req(GET => "/v1/api/comments?article_id=$a->{id}", $K));

# a custom module and its entries
ok2xx('POST custom-modules', req(POST => "/v1/workspaces/$wid/custom-modules", $ot,
      { slug => 'notes', name => 'Notes', schema => { fields => [
          { key => 'title', label => 'Title', type => 'text', required => JSON::PP::true },
          { key => 'n', label => 'N', type => 'number' }] } }));
ok2xx('POST /v1/api/custom/{slug}/entries', req(POST => '/v1/api/custom/notes/entries', $K,
      { data => { title => 'One', n => 1 } }));
ok2xx('GET /v1/api/custom/{slug}/entries', req(GET => '/v1/api/custom/notes/entries?limit=5', $K));
ok2xx('GET entries?sort', req(GET => '/v1/api/custom/notes/entries?sort=n&limit=5', $K));

# a site, a page, its sections, and the public surface
my $site = ok2xx('POST sites', req(POST => "/v1/workspaces/$wid/sites", $ot, { name => 'Site' }))->{site};
my $page = ok2xx('POST pages', req(POST => "/v1/workspaces/$wid/sites/$site->{id}/pages", $ot,
                                   { slug => '/home', title => 'Home' }))->{page};
ok2xx('PUT sections', req(PUT => "/v1/api/pages/$page->{id}/sections", $K,
                          { section_key => 'hero', data => { title => 'Hi' } }));
ok2xx('POST sections/publish', req(POST => "/v1/api/pages/$page->{id}/sections/publish", $K, {}));
my $pk = $site->{publishable_key};
ok2xx('GET /v1/public/site', req(GET => "/v1/public/site?key=$pk"));
ok2xx('GET /v1/public/pages', req(GET => "/v1/public/pages?key=$pk"));
ok2xx('GET /v1/public/sections', req(GET => "/v1/public/sections?path=/home&key=$pk"));
ok2xx('GET /v1/public/custom/{slug}/entries', req(GET => "/v1/public/custom/notes/entries?key=$pk"));
ok2xx('GET site pages', req(GET => "/v1/workspaces/$wid/sites/$site->{id}/pages?limit=5", $ot));

# the other lists and their writes
ok2xx('POST /v1/api/subscribers', req(POST => '/v1/api/subscribers', $K, { email => 'sub@example.com' }));
ok2xx('GET /v1/api/subscribers', req(GET => '/v1/api/subscribers?limit=5', $K));
ok2xx('POST /v1/api/videos', req(POST => '/v1/api/videos', $K, { title => 'A video' }));
ok2xx('GET /v1/api/videos', req(GET => '/v1/api/videos?limit=5', $K));
my $show = ok2xx('POST podcast-shows', req(POST => "/v1/workspaces/$wid/podcast-shows", $ot,
                                           { title => 'Show' }))->{podcast_show};
ok2xx('POST /v1/api/podcast-episodes', req(POST => '/v1/api/podcast-episodes', $K,
      { show_id => $show->{id}, title => 'E1', audio_url => 'https://cdn.example.com/e1.mp3' }));
ok2xx('GET /v1/api/podcast-episodes', req(GET => "/v1/api/podcast-episodes?show_id=$show->{id}&limit=5", $K));
ok2xx('GET /v1/api/media', req(GET => '/v1/api/media?limit=5', $K));
ok2xx('GET /v1/api/categories', req(GET => '/v1/api/categories', $K));
ok2xx('GET /v1/api/webhooks', req(GET => '/v1/api/webhooks', $K));
ok2xx('GET members', req(GET => "/v1/workspaces/$wid/members?limit=5", $ot));

# the extension billing routes
my $fac = facility();
my $ext = extension($fac);
my $EK = ext_key(fac => $fac, ext => $ext);
my ($i1, $i2) = (invoice($fac, 1, 5000), invoice($fac, 1, 5000));
ok2xx('GET /v1/ext/billing/invoices/{id}', req(GET => "/v1/ext/billing/invoices/$i1", $EK));
ok2xx('POST .../record', post(record_path($i1), $EK, { reference => 'R1', amount => 5000 }));
ok2xx('POST .../fail', post(fail_path($i2), $EK, { reason => 'insufficient_funds' }));

# the pools' connections end with nginx: each backend flushes what it counted as it
# exits, after it left pg_stat_activity, so what is waited for is its process gone
my @backends = map { $_->[0] } @{psql("SELECT pid FROM pg_stat_activity"
                                      . " WHERE application_name = 'ngx_http_cms'")};
ok @backends > 0, 'the module\'s connections: ' . scalar(@backends);
stop_nginx();
# (a worker still finishing a background job's statement keeps its connections a while on
# a busy machine: those left are ended, which flushes their counts as an exit does)
psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ngx_http_cms'");
ok wait_until(30, sub { !grep { -e "/proc/$_" } @backends }), '... all ended with nginx';

# the background jobs' statements (src/ngx_http_cms_jobs.c, deliver.c, cdn.c, the
# storage sweeps) run once a pass, not per request, whenever a pass falls in the walk
my %jobs = map { $_ => 1 } qw(cms_articles_purge cms_cdn_purges_claim cms_cdn_purges_expire
                                cms_cdn_purges_retry cms_ext_events_claim cms_ext_events_purge
                                cms_extensions_reload_expired cms_job_turn cms_media_expire
                                cms_object_orphans cms_object_removals_claim
                                cms_object_removals_settle cms_outbox_events_purge
                                cms_webhook_deliveries_claim cms_webhook_deliveries_purge);
my $rows = psql("SELECT p.proname, s.calls FROM pg_stat_user_functions s
                   JOIN pg_proc p ON p.oid = s.funcid
                   JOIN pg_language l ON l.oid = p.prolang
                  WHERE l.lanname = 'sql' AND p.proname LIKE 'cms\\_%' ORDER BY 1");
my @planned = map { "$_->[0] ($_->[1] calls)" } grep { !$jobs{$_->[0]} } @$rows;
is_deeply \@planned, [], 'no SQL function of ours ran as a call of its own (planned per call) in '
                         . scalar(@walk) . ' requests';
cmp_ok one("SELECT count(*) FROM pg_stat_user_functions s JOIN pg_proc p ON p.oid = s.funcid"
           . " WHERE p.proname = 'cms_article_save'"), '==', 1,
       '... while the PL/pgSQL ones were counted (the counts are there to read)';

done_testing();
