# Every directive through `nginx -t`: what must pass, and what must fail with an [emerg]
# (and, where the message matters, which words it must contain).
use strict;
use warnings;
use Cms::Test;

my $p = prefix();
my $pg = port();    # any number: nginx -t must not connect anywhere
my $conninfo = "hostaddr=127.0.0.1 port=%%PG_PORT%% dbname=%%DB%% user=postgres";

# Secrets of various lengths for cms_secret.
open my $fh, '>', "$p/conf/short.key" or die $!; print $fh 'x' x 31; close $fh;
open $fh, '>', "$p/conf/exact.key" or die $!; print $fh 'y' x 32; close $fh;
chmod 0600, "$p/conf/short.key", "$p/conf/exact.key";

# nginx -t catches what would break at run time (issue 33): a secret others may read, a
# storage folder the workers (nobody:nogroup: the harness's master runs as root, without
# "user") cannot write in
for my $k (qw(open group)) {
    open $fh, '>', "$p/conf/$k.key" or die $!; print $fh 'z' x 40; close $fh;
}
chmod 0644, "$p/conf/open.key";
chmod 0640, "$p/conf/group.key";
my ($nobody, $nogroup) = ((getpwnam 'nobody')[2], (getgrnam 'nogroup')[2]);
mkdir "$p/st-$_" or die "$p/st-$_: $!" for qw(root group owner);
chmod 0755, "$p/st-root";
chown 0, $nogroup, "$p/st-group"; chmod 0770, "$p/st-group";
chown $nobody, 0, "$p/st-owner"; chmod 0700, "$p/st-owner";

my @cases = (
    # [ name, { render_conf options }, expect ('ok' | 'fail'), optional stderr regex ]
    ['default test config', {}, 'ok'],

    # cms_postgres
    ['cms_postgres with every parameter',
     { postgres => qq{cms_postgres "$conninfo" max=8 queue=16 queue_timeout=2s query_timeout=30s;} }, 'ok'],
    ['cms_postgres with a unix socket folder',
     { postgres => qq{cms_postgres "host=/var/run/postgresql dbname=cms user=postgres" max=2;} }, 'ok'],
    ['cms_postgres host=localhost without a resolver is refused (libpq would block)',
     { postgres => qq{cms_postgres "host=localhost port=5432 dbname=cms user=postgres" max=2;} },
     'fail', qr/"localhost" is a host name.*no "resolver"/],
    ['cms_postgres host=localhost with a resolver (resolved by nginx at connect)',
     { postgres => qq{cms_postgres "host=localhost port=5432 dbname=cms user=postgres" max=2;},
       http_config => 'resolver 127.0.0.1;' }, 'ok'],
    ['cms_postgres with neither hostaddr nor host',
     { postgres => qq{cms_postgres "dbname=cms user=postgres" max=2;} }, 'fail', qr/hostaddr/],
    ['cms_postgres max=0', { pg_params => 'max=0' }, 'fail'],
    ['cms_postgres max=abc', { pg_params => 'max=abc' }, 'fail'],
    ['cms_postgres unknown parameter', { pg_params => 'max=2 bogus=1' }, 'fail'],
    ['cms_postgres queue_timeout=abc', { pg_params => 'max=2 queue_timeout=abc' }, 'fail'],
    ['cms_postgres query_timeout=abc', { pg_params => 'max=2 query_timeout=abc' }, 'fail'],
    ['cms_postgres with a malformed conninfo',
     { postgres => qq{cms_postgres "hostaddr=127.0.0.1 port" max=2;} }, 'fail'],
    ['cms_postgres twice',
     { http_config => qq{cms_postgres "$conninfo" max=2;} }, 'fail', qr/duplicate|cms_postgres/],

    # cms_redis
    ['cms_redis with timeout', { redis_params => 'max=2 timeout=500ms' }, 'ok'],
    ['cms_redis on a unix socket', { redis => 'cms_redis unix:/tmp/cms-test-redis.sock max=2;' }, 'ok'],
    ['cms_redis with a host name and no resolver is refused',
     { redis => 'cms_redis localhost:6379 max=2;' }, 'fail', qr/no "resolver"/],
    ['cms_redis with a host name and a resolver',
     { redis => 'cms_redis localhost:6379 max=2;', http_config => 'resolver 127.0.0.1;' }, 'ok'],
    ['cms_redis without a port', { redis => 'cms_redis 127.0.0.1 max=2;' }, 'fail'],
    ['cms_redis max=0', { redis_params => 'max=0' }, 'fail'],
    ['cms_redis max=abc', { redis_params => 'max=abc' }, 'fail'],
    ['cms_redis timeout=abc', { redis_params => 'max=2 timeout=abc' }, 'fail'],

    # cms_secret
    ['cms_secret of exactly 32 bytes', { secret => "$p/conf/exact.key" }, 'ok'],
    ['cms_secret file missing', { secret => "$p/conf/none.key" }, 'fail', qr/none\.key/],
    ['cms_secret shorter than 32 bytes', { secret => "$p/conf/short.key" }, 'fail'],

    # cms_storage, cms_test_routes
    ['cms_storage elsewhere', { storage => "$p/storage" }, 'ok'],
    ['cms_test_routes off', { test_routes => 'off' }, 'ok'],
    ['cms_test_routes omitted', { test_routes => 'omit' }, 'ok'],
    ['cms_test_routes with a bad value', { test_routes => 'maybe' }, 'fail'],

    # cms_error_pages: http, server and location; on|off only (the default
    # test config sets it at server level, so a second one there is refused)
    ['cms_error_pages at http level', { http_config => 'cms_error_pages on;' }, 'ok'],
    ['cms_error_pages off in a location', { config => 'location /static/ { cms_error_pages off; }' }, 'ok'],
    ['cms_error_pages twice in a server', { config => 'cms_error_pages off;' }, 'fail', qr/duplicate/],
    ['cms_error_pages with a bad value', { http_config => 'cms_error_pages maybe;' }, 'fail'],

    # cms_status: a location's content handler, no arguments (t/046 scrapes it)
    ['cms_status in a location', { config => 'location = /status { cms_status; }' }, 'ok'],
    ['cms_status in two locations', { config => "location = /status { cms_status; }\n"
                                                . 'location = /metrics { cms_status; }' }, 'ok'],
    ['cms_status at server level is refused', { config => 'cms_status;' }, 'fail'],
    ['cms_status with an argument is refused', { config => 'location = /s { cms_status on; }' }, 'fail'],

    # cms_redis AUTH (t/047 tries the credential against a Redis with ACL users)
    ['cms_redis user= without password_file=', { redis_params => 'max=2 user=cms' }, 'fail',
     qr/needs "password_file="/],
    ['cms_redis password_file= missing', { redis_params => "max=2 password_file=$p/conf/none.pass" },
     'fail', qr/none\.pass/],
    ['cms_redis with an empty user=', { redis_params => 'max=2 user= password_file=x' }, 'fail'],

    # cms at location level only
    ['cms at server level is refused', { config => 'cms;' }, 'fail'],
    ['cms with an argument is refused', { config => 'location /x/ { cms on; }' }, 'fail'],

    # body and depth limits at every level
    ['cms_body_max_size and cms_json_max_depth at http, server and location level',
     { http_config => "cms_body_max_size 2m;\ncms_json_max_depth 16;",
       config => "cms_body_max_size 512k;\ncms_json_max_depth 8;\n"
                 . "location /v1/_test/ { cms; cms_body_max_size 1k; cms_json_max_depth 4; }" },
     'ok'],
    ['cms_body_max_size abc', { http_config => 'cms_body_max_size abc;' }, 'fail'],
    ['cms_json_max_depth abc', { http_config => 'cms_json_max_depth abc;' }, 'fail'],

    # cms_extensions_registry: read by the strict URL parser manifests go through
    ['cms_extensions_registry names, addresses and ports',
     { http_config => 'cms_extensions_registry registry.example.com Reg.Example.org:8443 127.0.0.1:9000 [::1]:8443;' },
     'ok'],
    map({ ["cms_extensions_registry $_->[0]", { http_config => "cms_extensions_registry $_->[0];" }, 'fail',
           $_->[1]] }
        ['registry.example.com.', qr/not a host\[:port\].*host/],
        ['user@registry.example.com', qr/userinfo/],
        ['registry.example.com#.evil.example', qr/fragment/],
        ['registry.example.com/path', qr/path or query/],
        ['xn--registry-4nf.example', qr/punycode/],
        ['0177.0.0.1', qr/IP address/],
        ['registry.example.com:0', qr/port/],
        ['registry_example.com', qr/host/]),

    # thread lanes: jobs 1 .. 1024, queue 0 .. 65536, http level only
    ['cms_password_jobs/_queue and cms_sanitize_jobs/_queue',
     { http_config => "cms_password_jobs 4;\ncms_password_queue 0;\n"
                      . "cms_sanitize_jobs 1;\ncms_sanitize_queue 65536;" }, 'ok'],
    ['cms_password_jobs 0', { http_config => 'cms_password_jobs 0;' }, 'fail'],
    ['cms_password_queue -1', { http_config => 'cms_password_queue -1;' }, 'fail'],
    ['cms_sanitize_jobs abc', { http_config => 'cms_sanitize_jobs abc;' }, 'fail'],
    ['cms_sanitize_queue 65537', { http_config => 'cms_sanitize_queue 65537;' }, 'fail'],
    ['cms_password_queue in a server', { config => 'cms_password_queue 8;' }, 'fail'],

    # cms_auth_throttle: the shipped limits when omitted; each of the four at most once
    ['no cms_auth_throttle (the shipped limits)', { throttle => '' }, 'ok'],
    ['cms_auth_throttle, all four, with and without burst, and off',
     { throttle => "cms_auth_throttle login email 10r/m burst=10;\n"
                   . "cms_auth_throttle login address 1000r/s;\n"
                   . "cms_auth_throttle signup email off;\n"
                   . "cms_auth_throttle signup address 1r/h burst=1;" }, 'ok'],
    ['cms_auth_throttle twice for one bucket',
     { throttle => "cms_auth_throttle login email 10r/m;\ncms_auth_throttle login email 20r/m;" },
     'fail', qr/duplicate/],
    ['cms_auth_throttle logout email', { throttle => 'cms_auth_throttle logout email 1r/s;' },
     'fail', qr/login.*signup/],
    ['cms_auth_throttle login user', { throttle => 'cms_auth_throttle login user 1r/s;' },
     'fail', qr/email.*address/],
    ['cms_auth_throttle rate 10/m', { throttle => 'cms_auth_throttle login email 10/m;' },
     'fail', qr/invalid rate/],
    ['cms_auth_throttle rate 0r/m', { throttle => 'cms_auth_throttle login email 0r/m;' },
     'fail', qr/invalid rate/],
    ['cms_auth_throttle rate 10r/d', { throttle => 'cms_auth_throttle login email 10r/d;' },
     'fail', qr/invalid rate/],
    ['cms_auth_throttle faster than one a ms', { throttle => 'cms_auth_throttle login email 1001r/s;' },
     'fail', qr/invalid rate/],
    ['cms_auth_throttle rate r/s', { throttle => 'cms_auth_throttle login email r/s;' },
     'fail', qr/invalid rate/],
    ['cms_auth_throttle burst=0', { throttle => 'cms_auth_throttle login email 1r/s burst=0;' },
     'fail', qr/invalid burst/],
    ['cms_auth_throttle bust=5', { throttle => 'cms_auth_throttle login email 1r/s bust=5;' },
     'fail', qr/invalid burst/],
    ['cms_auth_throttle off with a burst', { throttle => 'cms_auth_throttle login email off burst=5;' },
     'fail', qr/invalid rate/],
    ['cms_auth_throttle with two words', { throttle => 'cms_auth_throttle login email;' }, 'fail'],

    # cms_default_plan, cms_invitation_ttl (teams)
    ['cms_default_plan and cms_invitation_ttl',
     { http_config => "cms_default_plan pro-2;\ncms_invitation_ttl 2d;" }, 'ok'],
    ['cms_default_plan not a plan name', { http_config => 'cms_default_plan Pro;' },
     'fail', qr/not a plan name/],
    ['cms_default_plan starting with a dash', { http_config => 'cms_default_plan -x;' },
     'fail', qr/not a plan name/],
    ['cms_default_plan twice', { http_config => "cms_default_plan a;\ncms_default_plan b;" },
     'fail', qr/duplicate/],
    ['cms_invitation_ttl abc', { http_config => 'cms_invitation_ttl abc;' }, 'fail'],

    # cms_public_cache (the harness sets one; public_cache replaces it)
    ['cms_public_cache with valid=', { public_cache => 'cms_public_cache zone=pc:1m valid=250ms;' }, 'ok'],
    ['cms_public_cache omitted', { public_cache => '' }, 'ok'],
    ['cms_public_cache without a size', { public_cache => 'cms_public_cache zone=pc;' }, 'fail',
     qr/zone=NAME:SIZE/],
    ['cms_public_cache too small', { public_cache => 'cms_public_cache zone=pc:1k;' }, 'fail',
     qr/at least/],
    ['cms_public_cache without a zone', { public_cache => 'cms_public_cache valid=1s;' }, 'fail',
     qr/needs zone/],
    ['cms_public_cache valid=0', { public_cache => 'cms_public_cache zone=pc:1m valid=0;' }, 'fail',
     qr/valid/],
    ['cms_public_cache unknown parameter', { public_cache => 'cms_public_cache zone=pc:1m x=1;' }, 'fail',
     qr/unknown parameter/],
    ['cms_public_cache twice', { http_config => 'cms_public_cache zone=pc2:1m;' }, 'fail',
     qr/duplicate/],
    ['cms_public_cache in a server', { public_cache => '', config => 'cms_public_cache zone=pc:1m;' },
     'fail', qr/not allowed/],
    # secrets others may read; folders the workers may not write in
    ['cms_secret readable by others (0644)', { secret => "$p/conf/open.key" }, 'fail',
     qr/cms_secret: ".*open\.key" is readable or writable by others \(mode 0644\)/],
    ['cms_secret readable by its group (0640)', { secret => "$p/conf/group.key" }, 'ok'],
    ['cms_storage owned by root, 0755: the workers cannot write', { storage => "$p/st-root" },
     'fail', qr/cms_storage: the workers' user \(uid $nobody, gid $nogroup\) cannot write in ".*st-root"/],
    ['cms_storage writable by the workers\' group (0770)', { storage => "$p/st-group" }, 'ok'],
    ['cms_storage owned by the workers\' user (0700)', { storage => "$p/st-owner" }, 'ok'],
    ['cms_storage not a folder', { storage => "$p/conf/open.key" }, 'fail', qr/is not a folder/],

    # cms_lock_ttl (article locks): 1s to 24h
    ['cms_lock_ttl 1s', { http_config => 'cms_lock_ttl 1s;' }, 'ok'],
    ['cms_lock_ttl 24h', { http_config => 'cms_lock_ttl 24h;' }, 'ok'],
    ['cms_lock_ttl 500ms', { http_config => 'cms_lock_ttl 500ms;' }, 'fail', qr/cms_lock_ttl.*1s to 24h/],
    ['cms_lock_ttl 25h', { http_config => 'cms_lock_ttl 25h;' }, 'fail', qr/cms_lock_ttl.*1s to 24h/],
    ['cms_lock_ttl abc', { http_config => 'cms_lock_ttl abc;' }, 'fail'],
);

for my $c (@cases) {
    my ($name, $opts, $expect, $re) = @$c;
    my $t = nginx_test(%$opts);
    if ($expect eq 'ok') {
        ok($t->{rc} == 0 && $t->{out} =~ /test is successful/, "passes: $name")
            or diag("exit $t->{rc}\n$t->{out}");
    } else {
        ok($t->{rc} != 0 && $t->{out} =~ /\[emerg\]/, "fails: $name")
            or diag("exit $t->{rc}\n$t->{out}");
        like($t->{out}, $re, "message for: $name") if $re;
    }
}

# a directive that needs a resolver is named at its own line, not at the end of http{}
for my $c (['cms_postgres', { postgres => qq{cms_postgres "host=db.internal port=5432 dbname=cms user=postgres" max=2;} }],
           ['cms_redis', { redis => 'cms_redis cache.internal:6379 max=2;' }]) {
    my ($directive, $opts) = @$c;
    my $t = nginx_test(%$opts);
    my ($line) = $t->{out} =~ /no "resolver" directive in \S+:(\d+)/;
    ok $line, "$directive with a host name, no resolver: the error names a line" or diag $t->{out};
    my @conf = split /\n/, $t->{conf};
    like $conf[($line // 1) - 1] // '', qr/^\s*\Q$directive\E\s/, "... the line of $directive itself";
}

done_testing();
