# Edges of the pools (issue 10, found 5). A client that leaves while its password hash
# runs in a thread is logged 499, as nginx logs any client gone mid-request, not
# answered and logged as a 500. Background jobs (the outbox relay and the extension
# tick) also run with master_process off, in the only process there is.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(signup);
use JSON::PP ();

my $JSON = JSON::PP->new->utf8->canonical;

# --- 499 for a client gone during a thread task: one hash at a time, four logins
start_nginx(workers => 1, http_config => "cms_password_jobs 1;\ncms_password_queue 8;");
my $user = signup();
my $spec = { method => 'POST', path => '/v1/auth/login',
             headers => ['Content-Type' => 'application/json'],
             body => $JSON->encode({ email => $user->{email}, password => $user->{password} }) };
my $access = prefix() . '/logs/access.log';
my $off = error_log_size();
my $res = abort_requests(4, $spec, 60);
is $res->{answered}, 0, 'the clients left before any answer';
my @new;
ok wait_until(10, sub {
    open my $fh, '<', $access or return 0;
    @new = grep { m{"POST /v1/auth/login } } <$fh>;
    @new >= 4;
}), 'the four logins reach the access log';
my @codes = map { / (\d{3}) \d+ "/ ? $1 : '?' } @new;
is_deeply [sort @codes], [('499') x 4], 'each is logged 499' or diag @new;
ok !grep({ /answering 500/ } error_log_lines($off)), 'no 500 answered or logged';
my $r = http(POST => '/v1/auth/login', $spec->{headers}, $spec->{body});
is $r->{status}, 200, 'a login after them succeeds' or diag $r->{body};

# --- master_process off: the jobs run in the single process
stop_nginx();
start_nginx(main_config => 'master_process off;',
            http_config => 'cms_events_interval 200ms;');
ok wait_until(5, sub {
    psql_admin("SELECT count(*) FROM pg_stat_activity WHERE datname = '%%DB%%'"
               . " AND application_name = 'ngx_http_cms'"
               . " AND query LIKE '%cms_extensions_tick%'")->[0][0] > 0;
}), 'the extension tick ran';
$r = http(GET => '/v1/health');
is $r->{status}, 200, 'the single process answers' or diag $r->{body};

done_testing();
