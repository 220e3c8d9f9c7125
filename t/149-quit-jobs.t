# A worker told to quit starts no background work (src/ngx_http_cms_jobs.c,
# ngx_http_cms_jobs_arm()). The jobs' timers are cancelable, so they do not hold an
# exiting worker, but nginx still fires them while the worker waits for a request in
# flight; a job's query started then would hold the worker for its connection, its wait
# for a slot and its timeout. Here the jobs tick every 100 ms; a payment waits on its
# invoice's row lock while nginx is told to quit; once the worker's other connections to
# the database are gone, the tables the jobs read are locked from another session, and the
# payment's row released: the payment is answered and the worker exits while those tables
# are still locked (a job's query started after the quit would wait on them until its
# timeout).
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:ext hold_in_session);

# a job's query that waited would hold the worker for a minute (its timeout), longer
# than the bound below, which an ASan build's exit fits in
start_nginx(http_config => 'cms_events_interval 100ms;', pg_params => 'max=4 query_timeout=60s');

my $fa = facility();
my $K = ext_key(fac => $fa, ext => extension($fa));
my $i = invoice($fa, 1, 40);

# the module's connections to this database
sub module_sessions {
    one("SELECT count(*) FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'ngx_http_cms'");
}

my $row = lock_invoice_row($i);
ok invoice_row_locked($i), 'the invoice row is locked';
my $h = start_request(req_spec(POST => record_path($i), $K, '{"reference":"quit","amount":40}',
                               'Idempotency-Key' => 'quit-1')->@{qw(method path headers body)});
ok waiting_on_lock(), 'the payment waits on the row';

my $master = master_pid();
my $log = error_log_size();
kill 'QUIT', $master;
ok wait_until(10, sub { grep { /gracefully shutting down/ } error_log_lines($log) }),
   'the worker was told to quit';
ok wait_until(10, sub { module_sessions() == 1 }),
   "the worker's other connections closed: only the payment's is left";

my $tables = hold_in_session('LOCK TABLE schema_migrations, outbox_events, webhook_deliveries,'
                             . ' cdn_purges, object_removals, articles IN ACCESS EXCLUSIVE MODE;');
ok wait_until(10, sub { one("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                              WHERE c.relname = 'outbox_events' AND l.mode = 'AccessExclusiveLock'
                                AND l.granted") == 1 }),
   "the jobs' tables are locked from another session";

ok release_hold($row), 'the invoice row released';
my $f = finish_request($h);
is $f->{status}, 200, 'the payment is answered: 200' or diag diag_resp($f);
ok wait_until(30, sub { !kill 0, $master }),
   'nginx exits while the jobs\' tables are still locked: no job started after the quit';
is module_sessions(), 0, 'no connection of the module is left';
ok release_hold($tables), "the jobs' tables released";

done_testing();
