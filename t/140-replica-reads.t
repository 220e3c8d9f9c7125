# Reads from a PostgreSQL streaming replica (cms_postgres_replica), with read-your-writes.
# A primary of the file's own and one replica of it (Cms::Replica): GETs of a principal
# that has not written go to the replica; a principal that just wrote reads its write from
# the primary while the replica's replay is paused, and another principal does not see it
# yet; a key or a user made a moment ago is found (the primary is asked when the replica
# has no such key); writes never go to the replica; a stopped replica costs no 5xx, and
# reads return to it once it is back; nginx -t checks the directive.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:content mk);
use Cms::Replica qw(:all);
use Cms::Prom;
use Cms::Hosts qw(on_hosts);
use Cms::Fixtures qw(req_spec);

my $R = start_replicated();
my $pg = qq{cms_postgres "$R->{primary_conninfo}" max=4;\n}
       . qq{    cms_postgres_replica "$R->{replica_conninfo}" max=4 max_lag=60s;};
# Redis max=1: read-your-writes' lookups and marks wait for the one connection under load
set_conf_defaults(workers => 2, postgres => $pg, redis_params => 'max=1',
                  config => "location = /status { cms_status; }\n");
start_nginx();

sub on_primary { primary_psql($_[0]) }
sub replica_lines { scalar grep { /postgres replica 1 is read from/ } error_log_lines() }
sub answers { join ' ', map { $_->{status} } @_ }
# GETs read on="replica", "primary" or "fallback", summed over the workers
sub reads {
    my ($m, $err) = Cms::Prom::parse(http(GET => '/status')->{body});
    die $err if $err;
    return Cms::Prom::sum($m, 'cms_postgres_reads_total', on => $_[0]);
}

# --- nginx -t -----------------------------------------------------------------------------
for my $bad (['cms_postgres_replica "host=/tmp port=1 dbname=x" max_lag=soon;', 'max_lag'],
             ['cms_postgres_replica "hostaddr=127.0.0.1 port=1 dbname=x" max=0;', 'max='],
             ['cms_postgres_replica "sslmode=prefer hostaddr=127.0.0.1";', 'sslmode']) {
    my $t = nginx_test(postgres => qq{cms_postgres "$R->{primary_conninfo}";\n$bad->[0]});
    ok $t->{rc} && $t->{out} =~ /\Q$bad->[1]\E/, "nginx -t refuses $bad->[0]" or diag $t->{out};
}

# --- every worker finds the replica usable -------------------------------------------------
ok wait_until(20, sub { replica_lines() >= 2 }), 'both workers read from the replica'
    or diag join '', grep { /replica/ } error_log_lines();

my $owner = signup();
my $wid = workspace($owner->{token}, 'Replicated');
my $writer = key($owner->{token}, $wid, 'writer', 'articles:read', 'articles:write');
my $reader = key($owner->{token}, $wid, 'reader', 'articles:read');
ok replica_wait_caught_up(20), 'the replica has the keys';

# --- a principal that has not written reads the replica ------------------------------------
replica_pause();
my $sql_id = on_primary(qq{INSERT INTO articles (workspace_id, title, slug, status, locale)
    VALUES ('$wid', 'Written in SQL', 'written-in-sql', 'draft', 'en') RETURNING id});
my $r = req(GET => "/v1/api/articles/$sql_id", $reader);
is $r->{status}, 404, 'a row the replica has not replayed is not found by the reader'
    or diag diag_resp($r);

# --- read-your-writes ----------------------------------------------------------------------
my $a = mk($writer, { title => 'Mine', status => 'draft' });
my ($on_replica, $on_primary) = (reads('replica'), reads('primary'));
$r = req(GET => "/v1/api/articles/$a->{id}", $writer);
is $r->{status}, 200, 'the writer reads its write at once (the primary)' or diag diag_resp($r);
$r = req(GET => '/v1/api/articles?limit=100', $writer);
ok((grep { $_->{id} eq $a->{id} } @{$r->{json}{articles} || []}), 'and finds it in its list');
is reads('primary') - $on_primary, 2, '... both reads counted on the primary';
$r = req(GET => "/v1/api/articles/$a->{id}", $reader);
is $r->{status}, 404, 'another key does not see it yet (the paused replica)'
    or diag diag_resp($r);
$r = req(GET => '/v1/api/articles?limit=100', $reader);
is $r->{status}, 200, 'the reader lists from the replica';
ok !(grep { $_->{id} eq $a->{id} } @{$r->{json}{articles} || []}), 'without the new article';
is reads('replica') - $on_replica, 2, '... both reads counted on the replica';

# a key made while the replica is paused works (the primary is asked for a key it lacks)
my $fresh = key($owner->{token}, $wid, 'fresh', 'articles:read');
$r = req(GET => "/v1/api/articles/$a->{id}", $fresh);
is $r->{status}, 200, 'a key made a moment ago is found, and reads on the primary'
    or diag diag_resp($r);
$r = req(GET => '/v1/api/articles/00000000-0000-4000-8000-000000000000', 'svc_live_' . ('a' x 40));
ok $r->{status} == 401 || $r->{status} == 400, 'an unknown key is still refused' or diag diag_resp($r);

# a user who signed up a moment ago reads with their session
my $new = signup();
$r = req(GET => '/v1/me', $new->{token});
is $r->{status}, 200, 'a new session reads its user at once' or diag diag_resp($r);

# --- at once: lookups and marks that wait for Redis's one connection -----------------------
my @many = on_hosts((map { [port(), req_spec(GET => "/v1/api/articles/$a->{id}", $writer)] } 1 .. 24),
                    (map { [port(), req_spec(GET => '/v1/api/articles?limit=5', $reader)] } 1 .. 24),
                    (map { [port(), req_spec(POST => '/v1/api/articles', $writer,
                                             { title => "Burst $_", status => 'draft' })] } 1 .. 8));
is answers(grep { $_->{status} != 200 } @many[0 .. 47]), '', '48 reads at once: all 200';
is answers(grep { $_->{status} != 201 } @many[48 .. 55]), '', '8 writes at once: all 201';

# --- the replica replays: everyone sees it -------------------------------------------------
replica_resume();
ok replica_wait_caught_up(20), 'the replica caught up';
ok wait_until(10, sub { req(GET => "/v1/api/articles/$a->{id}", $reader)->{status} == 200 }),
    'the reader sees the article once the replica replayed it';

# --- a stopped replica costs no 5xx --------------------------------------------------------
my $before = replica_lines();
my ($fell, $prim) = (reads('fallback'), reads('primary'));
replica_stop();
my @r = map { req(GET => "/v1/api/articles/$a->{id}", $reader) } 1 .. 20;
is answers(grep { $_->{status} != 200 } @r), '', '20 reads with the replica down: all 200';
my @l = map { req(GET => '/v1/api/articles?limit=5', $reader) } 1 .. 10;
is answers(grep { $_->{status} != 200 } @l), '', 'lists too';
# each read went to the replica and fell back, or (the replica seen down) to the primary
is reads('fallback') - $fell + reads('primary') - $prim, 30,
   'the primary answered all 30 (counted as fallback or primary)';
ok wait_until(30, sub { grep { /postgres replica 1 is skipped/ } error_log_lines() }),
    'the replica is skipped once a check finds it down';

replica_start();
# bounded, not tight: a restarted replica replays (waited for first, on the replica
# itself), then each worker's next checks (one a second, on a new connection) must find
# it current; beside a CPU hog, or under ASan beside another suite, each took over 20 s
ok replica_wait_caught_up(90), 'the restarted replica caught up';
# a worker whose check was still waiting on its connect when the replica came back never
# saw it down: what is asserted is that no worker is left skipping it
sub replica_skipped {
    my %st;
    for (error_log_lines()) {
        $st{$1} = $2 if /\] (\d+)#\d+: cms: postgres replica 1 (is read from|is skipped)/;
    }
    return grep { $_ eq 'is skipped' } values %st;
}
ok wait_until(90, sub { !replica_skipped() }), 'every worker reads from it again once it is back';
replica_pause();
my $late = on_primary(qq{INSERT INTO articles (workspace_id, title, slug, status, locale)
    VALUES ('$wid', 'Late', 'late', 'draft', 'en') RETURNING id});
is req(GET => "/v1/api/articles/$late", $reader)->{status}, 404,
    'and the reader is back on the replica (a row it has not replayed)';
replica_resume();

# --- a GET's statement that writes: refused by the replica, run on the primary, learnt -----
on_primary(<<'SQL');
CREATE SEQUENCE cms_test_flaky_seq;
CREATE FUNCTION cms_test_flaky() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('cms_test_flaky_seq');
    RETURN 'ok';
END $$;
SQL
ok replica_wait_caught_up(20), 'the replica has the writing function';
my $off = error_log_size();
$fell = reads('fallback');
my @f = map { http(GET => '/v1/_test/flaky') } 1 .. 6;
is answers(grep { $_->{status} != 200 } @f), '', 'six GETs whose statement writes: all 200';
is on_primary("SELECT last_value FROM cms_test_flaky_seq"), 6, 'each ran on the primary once';
my $learnt = grep { /writes: it runs on the primary from now on/ } error_log_lines($off);
ok $learnt >= 1 && $learnt <= 2, "the statement is the primary's after one refusal per worker ($learnt)";
is reads('fallback') - $fell, $learnt, '... each refusal answered by the primary (counted as fallback)';

# --- writes never go to the replica --------------------------------------------------------
my $b = mk($writer, { title => 'Second', status => 'draft' });
is on_primary("SELECT title FROM articles WHERE id = '$b->{id}'"), 'Second', 'a write lands on the primary';

# --- a replica cut off from its primary: skipped once the primary moved on for max_lag ----
# Its link cut (no primary_conninfo), it has replayed all it received and stays in
# recovery: only the primary's own position tells that it is behind.
my $r0 = error_log_size();
restart_nginx(postgres => qq{cms_postgres "$R->{primary_conninfo}" max=4;\n}
    . qq{    cms_postgres_replica "$R->{replica_conninfo}" max=4 max_lag=2s;});
ok wait_until(20, sub { (grep { /postgres replica 1 is read from/ } error_log_lines($r0)) >= 2 }),
   'max_lag=2s: both workers read from the replica';
my $link = replica_psql("SHOW primary_conninfo", 'postgres');
replica_psql("ALTER SYSTEM SET primary_conninfo = ''", 'postgres');
replica_psql("SELECT pg_reload_conf()", 'postgres');
ok wait_until(20, sub { replica_psql("SELECT count(*) FROM pg_stat_wal_receiver", 'postgres') == 0 }),
   'the replica no longer receives';
my $cut = error_log_size();
on_primary("INSERT INTO articles (workspace_id, title, slug, status, locale)
    VALUES ('$wid', 'After the cut', 'after-the-cut', 'draft', 'en')");
ok wait_until(20, sub { grep { /postgres replica 1 is skipped/ } error_log_lines($cut) }),
   'the primary moved on: the cut-off replica is skipped within max_lag and a check';
(my $quoted = $link) =~ s/'/''/g;
replica_psql("ALTER SYSTEM SET primary_conninfo = '$quoted'", 'postgres');
replica_psql("SELECT pg_reload_conf()", 'postgres');
ok wait_until(30, sub { grep { /postgres replica 1 is read from/ } error_log_lines($cut) }),
   'linked again, it catches up and is read from again';

done_testing();
