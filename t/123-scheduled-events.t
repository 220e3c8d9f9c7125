# The event scheduled content owes (issue 16): a "scheduled" article whose time passes
# gets exactly one article.published in the outbox (event_outbox), written by worker 0's
# job (cms_events_interval) through cms_articles_announce_due().
#
# Attacks: the event not before the time; exactly one after it, however many job runs
# follow; an article saved scheduled with a time already past (the save announces, the
# job does not again); rescheduled after its announcement (announced again, once); a
# draft or a deleted article with a past time (nothing); 40 articles due at once while
# four other "hosts" (psql sessions calling the function in a loop) race worker 0's job:
# one event each; an article that falls due while nginx is stopped: announced once after
# the restart.  No fixed sleeps: each "nothing more" is checked after a later article's
# announcement proves the job ran again.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp one signup signup_defaults workspace key);
use POSIX qw(strftime);
use Time::HiRes ();

signup_defaults(email_prefix => 'sched');

my $CONF = 'cms_events_interval 100ms;';
start_nginx(http_config => $CONF);

my $owner = signup();
my $wid = workspace($owner->{token}, 'Scheduled');
my $K = key($owner->{token}, $wid, 'rw', qw(articles:read articles:write));

sub at { strftime('%Y-%m-%dT%H:%M:%SZ', gmtime(time + $_[0])) }
my $N = 0;
sub article {
    my (%f) = @_;
    my $r = req(POST => '/v1/api/articles', $K, { title => 'Scheduled ' . ++$N, %f });
    die 'article: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{article}{id};
}
sub events {
    my ($id, $type) = @_;
    one("SELECT count(*) FROM outbox_events WHERE data->>'id' = '$id' AND type = '" . ($type // 'article.published') . "'");
}
sub announced { my $id = shift; Cms::Test::wait_until(15, sub { events($id) >= 1 }) }
# a later article announced: the job has run again since
sub job_ran_again { announced(article(status => 'scheduled', published_at => at(1))) }

# --- one event, at the time -----------------------------------------------------------------

my $a1 = article(status => 'scheduled', published_at => at(3));
is events($a1), 0, 'nothing before the time';
ok announced($a1), 'article.published once the time passed';
my $data = Cms::Test::psql("SELECT data->>'status', workspace_id, data->>'title' FROM outbox_events"
                           . " WHERE data->>'id' = '$a1' AND type = 'article.published'")->[0];
is_deeply $data, ['published', $wid, 'Scheduled 1'], 'the event: the article as the API answers it, published';
is req(GET => "/v1/api/articles/$a1", $K)->{json}{article}{status}, 'published', 'reads say published';
ok job_ran_again(), 'the job ran again';
is events($a1), 1, 'still exactly one event';

# --- saved with a time already past: the save announces ------------------------------------

my $a2 = article(status => 'scheduled', published_at => at(-60));
is events($a2), 1, 'a past time: the save wrote article.published';
my $draft = article(status => 'draft', published_at => at(-60));
my $gone = article(status => 'scheduled', published_at => at(2));
is req(DELETE => "/v1/api/articles/$gone", $K)->{status}, 204, 'a scheduled article deleted';
ok job_ran_again(), 'the job ran again';
ok job_ran_again(), 'and again, past the deleted one\'s time';
is events($a2), 1, 'the job did not announce it again';
is events($draft), 0, 'a draft with a past time: nothing';
is events($gone), 0, 'a deleted scheduled article: nothing';

# --- rescheduled: announced again ----------------------------------------------------------------

my $p = req(PATCH => "/v1/api/articles/$a1", $K, { status => 'scheduled', published_at => at(2) });
is $p->{status}, 200, 'reschedule the announced article' or diag diag_resp($p);
is events($a1, 'article.unpublished'), 1, 'the save: article.unpublished (it went back to scheduled)';
ok Cms::Test::wait_until(15, sub { events($a1) == 2 }), 'the new time: article.published again';
ok job_ran_again(), 'the job ran again';
is events($a1), 2, 'once for each time';

# --- many due at once, four other hosts racing worker 0 --------------------------------------

my @many = map { article(status => 'scheduled', published_at => at(2)) } 1 .. 40;
my @kids;
for my $k (1 .. 4) {
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        # no die out of here: the parent's END blocks must not run in a child
        my $ok = eval {
            my $end = Time::HiRes::time() + 20;
            while (Time::HiRes::time() < $end) {
                Cms::Test::psql('SELECT cms_articles_announce_due(7)');
                last if one("SELECT count(*) FROM articles WHERE status = 'scheduled' AND published_at > updated_at"
                            . " AND announced_for IS DISTINCT FROM published_at") == 0;
            }
            1;
        };
        POSIX::_exit($ok ? 0 : 1);
    }
    push @kids, $pid;
}
my @failed = grep { waitpid($_, 0); $? != 0 } @kids;
is scalar @failed, 0, 'the four other announcers ran without an error';
my $ids = join ',', map { "'$_'" } @many;
ok Cms::Test::wait_until(15, sub {
    one("SELECT count(DISTINCT data->>'id') FROM outbox_events WHERE type = 'article.published'"
        . " AND data->>'id' IN ($ids)") == 40 }), 'all 40 announced';
is one("SELECT count(*) FROM outbox_events WHERE type = 'article.published' AND data->>'id' IN ($ids)"), 40,
   'exactly one event each, five announcers racing';

# --- due while nginx is stopped ----------------------------------------------------------------

my $a3 = article(status => 'scheduled', published_at => at(2));
stop_nginx();
ok Cms::Test::wait_until(10, sub { one("SELECT published_at <= now() FROM articles WHERE id = '$a3'") eq 't' }),
   'its time passed while nginx was down';
is events($a3), 0, 'nothing written meanwhile';
start_nginx(http_config => $CONF);
ok announced($a3), 'announced after the restart';
ok job_ran_again(), 'the job ran again';
is events($a3), 1, 'once';

done_testing();
