# The purge of soft-deleted articles: cms_retention and cms_purge_interval. With a long
# retention a deleted row stays (only deleted_at is set); with `cms_retention 1s` the
# periodic job removes it (and its revisions) within a few seconds, and leaves articles
# that are not deleted alone. Bad directive values are refused by nginx -t.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp one signup signup_defaults mk);
use Cms::Prom;
use Time::HiRes ();

signup_defaults(email_prefix => 'purge');

sub rows { one("SELECT count(*) FROM articles WHERE id = '$_[0]'") }

# --- directives ------------------------------------------------------------------------

for my $bad ('cms_retention abc;', 'cms_purge_interval xyz;', 'cms_retention;') {
    my $t = nginx_test(http_config => $bad);
    isnt $t->{rc}, 0, "nginx -t refuses '$bad'";
}
is nginx_test(http_config => "cms_retention 7d;\ncms_purge_interval 10m;")->{rc}, 0, 'nginx -t takes 7d and 10m';

# --- a long retention: the deleted row stays -------------------------------------------

# "The row stays after purge runs" waits for the runs to have happened (cms_status counts
# them), never a fixed sleep.
my $STATUS = "location = /status { cms_status; }\n";
start_nginx(config => $STATUS, http_config => "cms_retention 1h;\ncms_purge_interval 200ms;");
my $u = signup();
my $wid = req(POST => '/v1/workspaces', $u->{token}, { name => 'Purge' })->{json}{workspace}{id} or die 'workspace';
my $K = req(POST => "/v1/workspaces/$wid/api-keys", $u->{token},
            { name => 'k', scopes => ['articles:read', 'articles:write'] })->{json}{secret} or die 'key';

my $old = mk($K, { title => 'Old', body => '<p>x</p>' })->{id};
my $kept = mk($K, { title => 'Kept' })->{id};
req(PATCH => "/v1/api/articles/$old", $K, { title => 'Old 2' });
is req(DELETE => "/v1/api/articles/$old", $K)->{status}, 204, 'delete: 204';
ok Cms::Prom::wait_job_runs('purge', 3, 15), 'three purge runs since';
is rows($old), 1, 'retention 1h: the deleted row is still there after several purge runs';
is req(GET => "/v1/api/articles/$old", $K)->{status}, 404, '... and not readable';

# Rows deleted more than the retention ago go, younger ones stay.
my $aged = mk($K, { title => 'Aged' })->{id};
req(DELETE => "/v1/api/articles/$aged", $K);
psql("UPDATE articles SET deleted_at = now() - interval '61 minutes' WHERE id = '$aged'");
psql("UPDATE articles SET deleted_at = now() - interval '50 minutes' WHERE id = '$old'");
ok wait_until(3, sub { rows($aged) == 0 }), 'retention 1h: a row deleted 61 minutes ago is purged';
is rows($old), 1, 'retention 1h: a row deleted 50 minutes ago stays';
is rows($kept), 1, 'retention 1h: the article not deleted stays';

# --- retention 1s: purged --------------------------------------------------------------

restart_nginx(config => $STATUS, http_config => "cms_retention 1s;\ncms_purge_interval 300ms;");
my $fresh = mk($K, { title => 'Fresh' })->{id};
my $t_del = Time::HiRes::time();
is req(DELETE => "/v1/api/articles/$fresh", $K)->{status}, 204, 'delete another: 204';
my $n_fresh = rows($fresh);
my $age = Time::HiRes::time() - $t_del;
# a machine slower than the retention may have purged it, rightly: the row must be there
# unless the check came after the retention
ok $n_fresh == 1 || $age >= 1, sprintf 'just deleted: the row is still there while younger '
   . 'than the retention (%d row, checked after %.2f s)', $n_fresh, $age;

ok wait_until(5, sub { rows($old) == 0 }), 'the long-deleted row is purged';
ok wait_until(6, sub { rows($fresh) == 0 }), 'the fresh one is purged once older than 1s';
is one("SELECT count(*) FROM article_revisions WHERE article_id IN ('$old', '$fresh')"), 0,
    'their revisions went with them';
is rows($kept), 1, 'an article not deleted stays';
is req(GET => "/v1/api/articles/$kept", $K)->{status}, 200, '... and is readable';
ok Cms::Prom::wait_job_runs('purge', 2, 15), 'two more purge runs';
is rows($kept), 1, 'an article not deleted stays after more purge runs';

# Its slug was free already; a new article with it works and stays.
my $again = mk($K, { title => 'Fresh' })->{id};
ok Cms::Prom::wait_job_runs('purge', 2, 15), 'two more purge runs';
is rows($again), 1, 'a new article with the purged one\'s slug stays';

done_testing();
