# The error log's lines about PostgreSQL and Redis (issue 33): one line each (libpq's
# multi-line messages joined), naming the server they concern.  PostgreSQL and Redis
# here are ports nothing listens on: a health check fails on both, and every line of
# the error log starts with nginx's timestamp (nothing spills onto a line of its own),
# the PostgreSQL failure ends ", postgres: 127.0.0.1:<port>", the Redis one
# ", redis: 127.0.0.1:<port>".
use strict;
use warnings;
use Cms::Test;
use Time::HiRes ();

my ($pg, $redis) = (free_port(), free_port());
start_nginx(postgres => qq{cms_postgres "hostaddr=127.0.0.1 port=$pg dbname=cms user=postgres" max=2;},
            redis => "cms_redis 127.0.0.1:$redis max=2;");
allow_error_log(qr/Connection refused|postgres|redis/);

my $r = http(GET => '/v1/health');
is $r->{status}, 503, 'neither answers: /v1/health 503';

# the lines are written before the answer; read them with a bound all the same
my @lines;
my $until = Time::HiRes::time() + 10;
while (1) {
    @lines = error_log_lines();
    last if (grep { /postgres: 127\.0\.0\.1:$pg\b/ } @lines) && (grep { /redis: 127\.0\.0\.1:$redis\b/ } @lines);
    last if Time::HiRes::time() > $until;
    Time::HiRes::sleep(0.05);
}
my @pg = grep { /postgres: 127\.0\.0\.1:$pg\b/ } @lines;
ok @pg, "a PostgreSQL failure names the server (127.0.0.1:$pg)" or diag join "\n", @lines;
like $pg[0] // '', qr/^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[\w+\] .*Connection refused.*; .*postgres: /,
    '... libpq\'s lines joined by "; " into one log line';
ok scalar(grep { /redis: 127\.0\.0\.1:$redis\b/ } @lines), "a Redis failure names the server (127.0.0.1:$redis)"
    or diag join "\n", @lines;
is_deeply [grep { !/^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[/ } @lines], [],
    'every line of the error log starts with its timestamp: no message spills over';

done_testing();
