package Cms::Test;

=head1 NAME

Cms::Test - test harness for ngx_http_cms_module (our Test::Nginx)

=head1 SYNOPSIS

Data-driven, in the Test::Nginx style (blocks parsed by Test::Base):

    use Cms::Test;
    set_var(SECRET_KEY => 'svc_live_...');
    run_tests();
    done_testing();

    __DATA__

    === TEST 1: health
    --- request
    GET /v1/health
    --- error_code: 200
    --- response_json
    {"postgres": "ok", "redis": "ok"}

Or in code:

    use Cms::Test;
    start_nginx(pg_params => 'max=2 queue=2 queue_timeout=500ms');
    my $r = http(GET => '/v1/health');
    is $r->{status}, 200;
    done_testing();

Run through C<make test> (or C<scripts/test-env.sh prove -I t/lib t/FILE.t>), which starts a
throwaway PostgreSQL and Redis and sets the C<TEST_*> variables. Without them the file is
skipped with the reason, or fails when C<CI> is set.

=head1 WHAT EACH FILE GETS

A prefix folder C<$TEST_CMS_VAR/E<lt>nameE<gt>-E<lt>pidE<gt>/> with C<conf/ logs/ storage/
temp/>, a database C<t_E<lt>nameE<gt>_E<lt>pidE<gt>> cloned from C<cms_template> (dropped at
the end, C<WITH (FORCE)>), a secret C<conf/secret.key> (32 random bytes, hex), a free port.
nginx runs daemonized with a master (C<nginx -p PREFIX -c PREFIX/conf/nginx.conf>); its
startup stderr goes to C<logs/stderr.log> and is shown when it fails to start. It is
stopped with SIGQUIT. C<done_testing()> (ours) then fails the file if C<logs/error.log> has
an C<[alert]>, C<[crit]> or C<[emerg]> line, or a sanitizer report (C<TEST_CMS_ASAN=1>:
ASan and UBSan write to stderr, which nginx points at error.log in every process).
A worker that exits with a non-zero code or on a signal fails the file too.

The default nginx.conf (see C<render_conf>):

    load_module MODULE;  worker_processes 1;  error_log logs/error.log info;
    pid logs/nginx.pid;  events { worker_connections 1024; }
    MAIN_CONFIG
    http {
        access_log logs/access.log;  *_temp_path temp/...;
        cms_postgres "hostaddr=127.0.0.1 port=PG dbname=DB user=postgres" max=4 depth=4;
        cms_redis 127.0.0.1:REDIS max=4;
        cms_secret PREFIX/conf/secret.key;  cms_storage PREFIX/storage;
        cms_auth_throttle ... 1000r/s burst=100000;   (all four; see render_conf)
        cms_test_routes on;
        HTTP_CONFIG
        server { listen 127.0.0.1:PORT; CONFIG  location /v1/ { cms; } }
    }

=head1 BLOCK SECTIONS

Config: C<main_config http_config config> (pasted in), C<cms_postgres> / C<cms_redis> (the
whole directive line, replacing the default; empty to leave it out), C<pg_params> /
C<redis_params> (replace only the parameters after the address, e.g.
C<max=2 queue=2 queue_timeout=500ms>), C<test_routes> (C<on>, C<off>, or C<omit>: no
directive), C<workers>. nginx is restarted only when the rendered config changes.

Request: C<request> (first line C<METHOD /path>, the body after it, its last newline
removed; POST/PUT/PATCH without a body send C<Content-Length: 0>), C<more_headers>
(C<Name: value> lines), C<raw_request> (bytes sent as they are; use the C<eval> filter for
C<\r\n>), C<sql> (run with psql on the file's database before the request), C<timeout>
(seconds, default 30).

Checks: C<error_code> (default 200), C<response_headers> (C<Name: value> exact, C<!Name>
absent), C<response_headers_like> (C<Name: regex>), C<response_body> (exact),
C<response_body_like> (regex, C</s>), C<response_json> (canonical compare),
C<response_json_subset> (every key given must be there with that value, recursively;
arrays must have the same length, compared element by element), C<error_log> /
C<no_error_log> (one per line: a substring, or C<qr/.../> for a regex; only what the log
got during this block).

Placeholders C<%%NAME%%> are replaced in every section: C<PORT PREFIX DB PG_PORT REDIS_PORT
PG_CONNINFO SECRET_FILE MODULE FREE_PORT> (a port nothing listens on) and anything given to
C<set_var>. An unknown one is an error.

=head1 FUNCTIONS

=over

=item run_tests()

Runs the C<__DATA__> blocks.

=item done_testing()

Ours, exported instead of Test::More's: stops nginx, runs the end-of-file checks above,
then Test::More's C<done_testing>.

=item set_var(NAME => value, ...), var(NAME)

Placeholder values.

=item set_conf_defaults(%opts)

Options for C<render_conf> that every later start in this file uses (blocks and code),
e.g. C<set_conf_defaults(pg_params =E<gt> 'max=2 queue=2')>; per-call options win.

=item start_nginx(%opts), stop_nginx(), restart_nginx(%opts)

C<%opts> as for C<render_conf>. C<start_nginx> does nothing when nginx already runs with
the same config; it dies with nginx's stderr when nginx cannot start.

=item render_conf(%opts)

The config text. Options: C<main_config http_config config> (strings), C<postgres> /
C<redis> (whole directive line), C<pg_params> / C<redis_params>, C<test_routes>
(C<on>/C<off>/C<omit>), C<workers>, C<secret> (path), C<storage> (path), C<cms_location>
(0: no C<location /v1/>), C<error_log> (the main error_log line's target and level),
C<conf> (the whole text; placeholders still replaced), C<throttle> (the
C<cms_auth_throttle> lines; by default all four raised to 1000r/s with a burst of
100000, since every test client is 127.0.0.1; C<''> leaves the shipped limits).

=item nginx_test(%opts)

C<nginx -t> on C<render_conf(%opts)> in a scratch prefix; returns
C<{ rc =E<gt> exit status, out =E<gt> stderr and stdout, conf =E<gt> text }>.

=item http($method, $path, \@headers_or_\%headers, $body, %opts)

One request on a new connection (C<Connection: close>). Returns
C<{ status, headers =E<gt> {lowercased name =E<gt> value}, header_list =E<gt> [[name,
value]...], body, json (decoded, or undef), elapsed (seconds), error (on connect/timeout
failure, with status 0) }>. C<%opts>: C<timeout> (30), C<raw> (send these bytes instead),
C<host>, C<port> (another loopback port than nginx's: a proxy in front of it), C<from> (the
client's own address, another of 127.0.0.0/8: a second client), C<openapi>
(0: not checked against the document; see L<Cms::OpenApi>, which checks every other
answer).

=item raw_http($bytes, %opts)

The same with the request given as bytes.

=item start_request(...) / finish_request($h)

C<start_request> takes what C<http> takes, sends the request and returns at once;
C<finish_request> waits for and returns the response (C<elapsed> counts from the start).

=item parallel_requests(@specs)

Opens one connection per spec at once (non-blocking, IO::Select, no fork) and returns the
responses in the same order, each with its own C<elapsed>. A spec is C<[METHOD, path,
headers, body]> or C<{ method, path, headers, body, raw, timeout, delay }> (C<delay>:
seconds to wait before connecting).

=item abort_requests($n, $spec, $after_ms, %opts)

Sends C<$n> copies of C<$spec> at once, waits C<$after_ms> and closes every socket
(C<rst =E<gt> 1>: with an RST instead of a FIN). Returns C<{ sent, answered }>
(C<answered>: connections that got any response bytes before the close).

=item psql($sql), psql_admin($sql)

Runs SQL with psql (ON_ERROR_STOP) on the file's database (C<psql_admin>: on C<postgres>);
returns an array ref of rows, each an array ref (NULL is undef). Dies with psql's stderr.

=item pg_stop pg_start pg_restart redis_stop redis_start

C<scripts/services.sh> on the shared services in C<TEST_CMS_VAR>: they affect later files
too, so a file that stops one starts it again.

=item as_postgres(@command)

Runs a command (a PostgreSQL server program: C<initdb>, C<pg_ctl>, ...) as the
C<postgres> user when the file runs as root (the server refuses root), from C</>; returns
C<(exit status, stdout and stderr)>. For files that start a PostgreSQL of their own.

=item error_log_lines(), error_log_size()

Lines of C<logs/error.log>; its size (to read only what comes after:
C<error_log_lines($offset)>).

=item master_pid(), worker_pids()

=item allow_error_log(qr/.../)

Lines matching it are not held against the file at the end.

=item psql_cmd($db)

The harness's psql command for database C<$db> (not exported): for a session of a
test's own, one that holds a lock across statements, say (Cms::Fixtures'
C<lock_invoice_row()>).

=item port() prefix() db_name() free_port() json_subset($expected, $got) wait_until($secs, $code)

C<json_subset> returns undef when C<$got> contains C<$expected>, else a message naming the
first difference. C<wait_until> polls C<$code> every 50 ms until true or C<$secs> pass;
returns its last value.

=back

=cut

use strict;
use warnings;

use Test::More ();
use Test::Base ();
use JSON::PP ();
use IO::Socket::INET ();
use IO::Select ();
use Socket qw(SOL_SOCKET SO_LINGER);
use POSIX ();
use Errno qw(EAGAIN EWOULDBLOCK EINPROGRESS EINTR);
use File::Path qw(make_path remove_tree);
use File::Temp ();
use File::Basename qw(basename);
use Time::HiRes ();
use Exporter ();
use Cms::OpenApi ();

our @EXPORT = qw(
    run_tests done_testing set_var var set_conf_defaults
    start_nginx stop_nginx restart_nginx render_conf nginx_test
    http raw_http start_request finish_request parallel_requests abort_requests
    psql psql_admin pg_stop pg_start pg_restart redis_stop redis_start as_postgres
    error_log_lines error_log_size master_pid worker_pids allow_error_log
    port prefix db_name free_port json_subset wait_until pg_flaky pg_flaky_runs
    pg_end_sleeping
);

# Bodies and sections are bytes: decode and encode as UTF-8.
my $JSON = JSON::PP->new->utf8(1)->canonical(1)->allow_nonref(1);
my %S;               # this file's state
my %PSQL;            # database => the psql kept open for it (_psql_co)
my $psql_n = 0;      # the last script's marker number
my %VARS;            # placeholders from set_var

sub import {
    my $caller = caller;
    # Test::More's functions for the test file, except done_testing: ours wraps it.
    eval "package $caller; Test::More->import(import => ['!done_testing']); 1" or die $@;
    Exporter::export($_[0], $caller, @EXPORT);
    _setup();
}

# ---------------------------------------------------------------------------------------
# Environment and per-file setup

sub _truthy { my $v = shift; defined $v && $v ne '' && $v ne '0' && lc $v ne 'false' }

# Missing pieces skip the file locally; under CI every skip is a failure.
sub _unavailable {
    my $reason = shift;
    if (_truthy($ENV{CI})) {
        Test::More::plan(tests => 1);
        Test::More::fail("test environment: $reason");
        exit 1;
    }
    Test::More::plan(skip_all => "$reason (run through make test)");
}

sub _setup {
    return if $S{setup}++;
    # Writing to a connection the server closed (413, aborts) must be an error, not death.
    $SIG{PIPE} = 'IGNORE';
    my %e = map { $_ => $ENV{$_} } qw(TEST_CMS_MODULE TEST_CMS_VAR TEST_CMS_PG_PORT
                                         TEST_CMS_REDIS_PORT);
    for my $k (sort keys %e) {
        _unavailable("$k is not set") unless defined $e{$k} && length $e{$k};
    }
    $S{nginx} = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
    _unavailable("nginx binary $S{nginx} not executable") unless -x $S{nginx};
    _unavailable("module $e{TEST_CMS_MODULE} not found (make build)")
        unless -f $e{TEST_CMS_MODULE};
    _unavailable("TEST_CMS_VAR=$e{TEST_CMS_VAR} is not a folder") unless -d $e{TEST_CMS_VAR};
    $S{module} = $e{TEST_CMS_MODULE};
    $S{var} = $e{TEST_CMS_VAR};
    $S{pg_port} = $e{TEST_CMS_PG_PORT};
    $S{redis_port} = $e{TEST_CMS_REDIS_PORT};
    $S{template} = $ENV{TEST_CMS_PG_TEMPLATE} || 'cms_template';
    $S{asan} = _truthy($ENV{TEST_CMS_ASAN});
    ($S{root} = $ENV{TEST_CMS_ROOT}) ||= do {
        my $d = __FILE__; $d =~ s{/t/lib/Cms/Test\.pm$}{}; $d eq __FILE__ ? '.' : $d
    };

    my ($rc, $out, $err) = _run([qw(psql -X -q -At -h 127.0.0.1 -p), $S{pg_port},
                                 qw(-U postgres -d postgres -c), 'SELECT 1']);
    _unavailable("PostgreSQL on 127.0.0.1:$S{pg_port}: $err") if $rc;
    _unavailable("Redis on 127.0.0.1:$S{redis_port} does not answer PING")
        unless _redis_ping();

    (my $name = basename($0)) =~ s/\.t$//;
    $name =~ s/[^A-Za-z0-9]+/_/g;
    $S{name} = lc $name;
    $S{prefix} = "$S{var}/$S{name}-$$";
    $S{db} = substr("t_$S{name}", 0, 50) . "_$$";
    $S{owner_pid} = $$;
    make_path(map { "$S{prefix}/$_" } qw(conf logs storage temp));
    chmod 0755, $S{prefix}, map { "$S{prefix}/$_" } qw(conf logs temp);
    if ($> == 0) {
        # Workers run as nobody (master is root, no `user` directive).
        my $uid = getpwnam('nobody');
        chown $uid, -1, "$S{prefix}/storage", "$S{prefix}/temp" if defined $uid;
    }
    $S{secret} = "$S{prefix}/conf/secret.key";
    _write_file($S{secret}, unpack('H*', _random_bytes(32)));
    chmod 0600, $S{secret};
    $S{port} = free_port();
    $S{free_port} = free_port();
    $S{elog} = "$S{prefix}/logs/error.log";
    $S{allowed} = [];

    for my $try (1 .. 20) {
        my ($rc2, undef, $err2) = _run([psql_cmd('postgres'), '-c',
            qq{CREATE DATABASE "$S{db}" TEMPLATE "$S{template}"}]);
        last unless $rc2;
        # Another session still on the template (a previous file's clone): try again.
        die "cannot create database $S{db}: $err2"
            if $try == 20 || $err2 !~ /being accessed by other users/;
        Time::HiRes::sleep(0.25);
    }
    $S{db_created} = 1;
}

sub _redis_ping {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $S{redis_port},
                                  Proto => 'tcp', Timeout => 2) or return 0;
    print $s "PING\r\n";
    my $line = <$s>;
    return defined $line && $line =~ /^\+PONG/;
}

sub _random_bytes {
    my $n = shift;
    open my $fh, '<:raw', '/dev/urandom' or die "/dev/urandom: $!";
    read($fh, my $buf, $n) == $n or die "short read from /dev/urandom";
    return $buf;
}

sub _write_file {
    my ($path, $data) = @_;
    open my $fh, '>:raw', $path or die "$path: $!";
    print $fh $data;
    close $fh or die "$path: $!";
}

sub _read_file {
    my ($path, $offset) = @_;
    open my $fh, '<:raw', $path or return undef;
    seek $fh, $offset, 0 if $offset;
    local $/;
    my $d = <$fh>;
    return defined $d ? $d : '';
}

# Runs a command; returns (exit status, stdout, stderr). $o{stdin}: text for its stdin,
# $o{env}: extra environment.
sub _run {
    my ($cmd, %o) = @_;
    my $out = File::Temp->new;
    my $err = File::Temp->new;
    my $in = File::Temp->new;
    print $in (defined $o{stdin} ? $o{stdin} : '');
    close $in;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDIN, '<', $in->filename or POSIX::_exit(127);
        open STDOUT, '>', $out->filename or POSIX::_exit(127);
        open STDERR, '>', $err->filename or POSIX::_exit(127);
        @ENV{keys %{$o{env}}} = values %{$o{env}} if $o{env};
        exec @$cmd or POSIX::_exit(127);
    }
    waitpid $pid, 0;
    my $rc = $? >> 8;
    $rc = 128 + ($? & 127) if $? & 127;
    return ($rc, _read_file($out->filename), _read_file($err->filename));
}

# ---------------------------------------------------------------------------------------
# Placeholders

sub set_var {
    my %v = @_;
    @VARS{keys %v} = values %v;
}

sub var { $VARS{$_[0]} }

sub _builtin_vars {
    return (
        PORT => $S{port}, PREFIX => $S{prefix}, DB => $S{db}, PG_PORT => $S{pg_port},
        REDIS_PORT => $S{redis_port}, SECRET_FILE => $S{secret}, MODULE => $S{module},
        FREE_PORT => $S{free_port},
        PG_CONNINFO => "hostaddr=127.0.0.1 port=$S{pg_port} dbname=$S{db} user=postgres",
    );
}

sub _subst {
    my $text = shift;
    return $text unless defined $text;
    my %v = (_builtin_vars(), %VARS);
    $text =~ s{%%([A-Za-z0-9_]+)%%}{
        defined $v{$1} ? $v{$1} : die "unknown placeholder %%$1%%\n"
    }ge;
    return $text;
}

# ---------------------------------------------------------------------------------------
# nginx

sub port { $S{port} }
sub prefix { $S{prefix} }
sub db_name { $S{db} }

sub free_port {
    my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp',
                                  Listen => 1) or die "free_port: $!";
    return $s->sockport;
}

my %DEFAULTS;

sub set_conf_defaults { %DEFAULTS = (%DEFAULTS, @_) }

sub render_conf {
    my %o = (%DEFAULTS, @_);
    return _subst($o{conf}) if defined $o{conf};
    my $prefix = $o{prefix} || $S{prefix};
    my $pg = defined $o{postgres} ? $o{postgres}
        : sprintf('cms_postgres "hostaddr=127.0.0.1 port=%s dbname=%s user=postgres" %s;',
                  $S{pg_port}, $S{db}, defined $o{pg_params} ? $o{pg_params} : 'max=4 depth=4');
    my $redis = defined $o{redis} ? $o{redis}
        : sprintf('cms_redis 127.0.0.1:%s %s;', $S{redis_port},
                  defined $o{redis_params} ? $o{redis_params} : 'max=4');
    # Every test request comes from 127.0.0.1 and the suite signs up and logs in
    # again and again: the login and signup throttles are raised out of the way,
    # except in files that test them (throttle => '' for the shipped limits).
    my $throttle = defined $o{throttle} ? $o{throttle}
        : join "\n    ", map { "cms_auth_throttle $_ 1000r/s burst=100000;" }
              'login email', 'login address', 'signup email', 'signup address';
    my $tr = defined $o{test_routes} ? $o{test_routes} : 'on';
    $tr = $tr eq 'omit' ? '' : "cms_test_routes $tr;";
    my $loc = (defined $o{cms_location} && !$o{cms_location}) ? '' : 'location /v1/ { cms; }';
    my $conf = <<"EOF";
load_module $S{module};
worker_processes @{[ $o{workers} || 1 ]};
error_log @{[ $o{error_log} || 'logs/error.log info' ]};
pid logs/nginx.pid;
events { worker_connections 1024; }
@{[ $S{asan} ? "# workers get a cleared environment; UBSan reads its options late\nenv ASAN_OPTIONS;\nenv UBSAN_OPTIONS;" : '' ]}
@{[ $o{main_config} // '' ]}
http {
    access_log logs/access.log;
    # Keep every temp path in the prefix: nothing may touch /var/lib/nginx.
    client_body_temp_path temp/body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    $pg
    $redis
    cms_secret @{[ $o{secret} || $S{secret} ]};
    cms_storage @{[ $o{storage} || "$S{prefix}/storage" ]};
    @{[ $o{public_cache} // 'cms_public_cache zone=cms_public:4m;' ]}
    $throttle
    $tr
@{[ $o{http_config} // '' ]}
    server {
        listen 127.0.0.1:$S{port};
        # as conf/nginx.conf.in: the edge answers in JSON, without a version
        server_tokens off;
        cms_error_pages on;
        client_header_timeout 10s;
        client_body_timeout 10s;
@{[ $o{config} // '' ]}
        $loc
    }
}
EOF
    return _subst($conf);
}

sub _nginx_env {
    return () unless $S{asan};
    my @pre;
    for my $lib (qw(libasan.so libubsan.so)) {
        chomp(my $p = `gcc -print-file-name=$lib`);
        push @pre, $p if $p =~ m{/} && -e $p;
    }
    # Reports go to stderr, which nginx points at error.log for the master and
    # every worker: no file of the workers' own to create (they run as nobody,
    # and a report they cannot write is lost with the worker), and one place,
    # error.log, that _end_checks reads.
    return (
        LD_PRELOAD => join(' ', @pre),
        ASAN_OPTIONS => "detect_leaks=0:log_path=stderr:abort_on_error=0",
        # GCC 12's UBSan runtime ignores log_path: its reports reach error.log via stderr.
        UBSAN_OPTIONS => "print_stacktrace=1",
    );
}

sub _alive {
    my $pid = shift;
    return 0 unless $pid && kill 0, $pid;
    # A zombie (no reaper in some containers) counts as gone.
    my $stat = _read_file("/proc/$pid/stat");
    return 0 if defined $stat && $stat =~ /^\d+ \(.*\) Z/s;
    return 1;
}

sub master_pid {
    my $pid = _read_file("$S{prefix}/logs/nginx.pid");
    # The pid seen at start, should the file be gone (a removed prefix).
    $pid = $S{master} unless defined $pid && $pid =~ /\d/;
    return undef unless defined $pid && $pid =~ /(\d+)/;
    return _alive($1) ? $1 : undef;
}

sub worker_pids {
    my $master = shift // master_pid() or return ();
    my @w;
    for my $stat (glob '/proc/[0-9]*/stat') {
        my $s = _read_file($stat);
        next unless defined $s && $s =~ /^(\d+) \(.*\) \S (\d+)/s;
        push @w, $1 if $2 == $master && _alive($1);
    }
    return sort { $a <=> $b } @w;
}

sub _port_open {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $S{port},
                                  Proto => 'tcp', Timeout => 1);
    return $s ? 1 : 0;
}

sub wait_until {
    my ($secs, $code) = @_;
    my $end = Time::HiRes::time() + $secs;
    my $v;
    while (1) {
        $v = $code->();
        return $v if $v || Time::HiRes::time() >= $end;
        Time::HiRes::sleep(0.05);
    }
}

sub start_nginx {
    my %o = @_;
    my $conf = render_conf(%o);
    return if $S{running} && defined $S{conf} && $S{conf} eq $conf && master_pid();
    stop_nginx() if $S{running} || master_pid();
    _write_file("$S{prefix}/conf/nginx.conf", $conf);
    $S{conf} = $conf;
    my $stderr = "$S{prefix}/logs/stderr.log";
    my ($rc, $out, $err) = _run([$S{nginx}, '-p', "$S{prefix}/", '-c',
                                 "$S{prefix}/conf/nginx.conf"], env => {_nginx_env()});
    _write_file($stderr, $out . $err);
    if ($rc) {
        die "nginx failed to start (exit $rc):\n$out$err\n"
            . "config ($S{prefix}/conf/nginx.conf):\n" . _numbered($conf);
    }
    my $limit = $S{asan} ? 30 : 10;
    my $ok = wait_until($limit, sub { master_pid() && _port_open() });
    unless ($ok) {
        die "nginx did not accept connections on 127.0.0.1:$S{port} within $limit s\n"
            . "stderr:\n$out$err\nerror.log (tail):\n" . _elog_tail(20);
    }
    $S{running} = 1;
    $S{master} = master_pid();
    return 1;
}

sub _numbered {
    my $n = 0;
    return join '', map { sprintf "%3d  %s", ++$n, $_ } split /^/, shift;
}

sub stop_nginx {
    my $pid = master_pid();
    $S{running} = 0;
    $S{master} = undef;
    return 1 unless $pid;
    kill 'QUIT', $pid;                     # graceful: finish requests in flight
    my $limit = $S{asan} ? 30 : 10;
    return 1 if wait_until($limit, sub { !_alive($pid) });
    Test::More::diag("nginx $pid did not quit within $limit s; sending TERM/KILL");
    _stuck_diag($pid);
    kill 'TERM', $pid;
    wait_until(3, sub { !_alive($pid) }) or kill 'KILL', $pid;
    Test::More::fail("nginx stopped gracefully within $limit s");
    return 0;
}

# What a worker that did not exit was doing: its state and wait channel, its open
# sockets, the error log's tail.
sub _stuck_diag {
    my ($master) = @_;
    for my $pid (worker_pids($master), $master) {
        my $stat = _read_file("/proc/$pid/stat") // next;
        my $wchan = _read_file("/proc/$pid/wchan") // '';
        my @fds = map { readlink($_) // '' } glob("/proc/$pid/fd/*");
        my $socks = grep { /^socket:/ } @fds;
        Test::More::diag("pid $pid: state " . (split ' ', $stat)[2] . ", wchan $wchan, $socks sockets");
    }
    Test::More::diag("error.log (tail):\n" . _elog_tail(40));
}

# the error log's last $n lines
sub _elog_tail {
    my $n = shift;
    my @lines = split /^/, _read_file($S{elog}) // '';
    return join '', @lines > $n ? @lines[-$n .. -1] : @lines;
}

sub restart_nginx {
    stop_nginx();
    start_nginx(@_);
}

sub nginx_test {
    my %o = @_;
    my $dir = "$S{prefix}/nginx-t-" . ++$S{ntest};
    make_path("$dir/conf", "$dir/logs", "$dir/temp");
    my $conf = render_conf(%o);
    _write_file("$dir/conf/nginx.conf", $conf);
    my ($rc, $out, $err) = _run([$S{nginx}, '-t', '-p', "$dir/", '-c', "$dir/conf/nginx.conf"],
                                env => {_nginx_env()});
    return { rc => $rc, out => $err . $out, conf => $conf };
}

# ---------------------------------------------------------------------------------------
# Error log

sub error_log_size { -s $S{elog} || 0 }

sub error_log_lines {
    my $offset = shift || 0;
    my $d = _read_file($S{elog}, $offset);
    return () unless defined $d;
    return split /\n/, $d;
}

sub allow_error_log { push @{$S{allowed}}, @_ }

sub _match_log_line {
    my ($pattern, @lines) = @_;
    if ($pattern =~ m{^qr/(.*)/([a-z]*)$}) {
        my $re = eval "qr/$1/$2" or die "bad regex $pattern: $@";
        return grep { $_ =~ $re } @lines;
    }
    return grep { index($_, $pattern) >= 0 } @lines;
}

sub _end_checks {
    my @lines = error_log_lines();
    # A worker that exits non-zero (e.g. a sanitizer stopped it) is logged as a [notice].
    my @bad = grep {
        my $l = $_;
        (/\[(alert|crit|emerg)\]/ || /worker process \d+ exited (with code [1-9]|on signal)/)
            && !grep { $l =~ $_ } @{$S{allowed}}
    } @lines;
    Test::More::ok(!@bad, "error.log has no [alert], [crit] or [emerg], no worker exited with an error")
        or Test::More::diag(join "\n", @bad);
    my @san = grep { /runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|SUMMARY: \w+Sanitizer/ } @lines;
    Test::More::ok(!@san, "error.log has no sanitizer report")
        or Test::More::diag(join "\n", @san);
}

sub done_testing {
    Cms::OpenApi::finish();
    if ($S{owner_pid} && $$ == $S{owner_pid}) {
        stop_nginx();
        _end_checks();
        $S{end_checked} = 1;
    }
    Test::More::done_testing(@_);
}

END {
    if ($S{owner_pid} && $$ == $S{owner_pid}) {
        local $?;
        eval { stop_nginx() } if master_pid();
        _psql_co_end($_) for keys %PSQL;
        if ($S{db_created}) {
            _run([psql_cmd('postgres'), '-c', qq{DROP DATABASE IF EXISTS "$S{db}" WITH (FORCE)}]);
        }
    }
}

# ---------------------------------------------------------------------------------------
# PostgreSQL and Redis

sub psql_cmd {
    my $db = shift;
    return (qw(psql -X -q -A -t -v ON_ERROR_STOP=1 -P), 'null=\\N', '-F', "\x1f", '-R', "\x1e",
            '-h', '127.0.0.1', '-p', $S{pg_port}, '-U', 'postgres', '-d', $db);
}

# One psql per database and process, kept open: a test runs hundreds of statements, and
# starting psql for each cost more than the statements (t/036 spent most of its time so).
# A script's output ends at a marker \echo'ed after it; DISCARD ALL keeps one script's
# settings and prepared statements out of the next. On an error psql leaves
# (ON_ERROR_STOP) and the next script starts another; a connection lost before the script
# ran (a restarted server) is retried once on a new one.
sub _psql_co {
    my $db = shift;
    my $co = $PSQL{$db};
    return $co if $co && $co->{owner} == $$;
    pipe(my $in_r, my $in_w) or die "pipe: $!";
    pipe(my $out_r, my $out_w) or die "pipe: $!";
    my $err = File::Temp->new;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $in_w;
        close $out_r;
        open STDIN, '<&', $in_r or POSIX::_exit(127);
        open STDOUT, '>&', $out_w or POSIX::_exit(127);
        open STDERR, '>', $err->filename or POSIX::_exit(127);
        $ENV{PGOPTIONS} = '-c client_min_messages=warning';
        exec psql_cmd($db), '-f', '-' or POSIX::_exit(127);
    }
    close $in_r;
    close $out_w;
    $in_w->autoflush(1);
    return $PSQL{$db} = {owner => $$, pid => $pid, in => $in_w, out => $out_r, err => $err};
}

sub _psql_co_end {
    my $db = shift;
    my $co = delete $PSQL{$db} or return;
    return if $co->{owner} != $$;
    close $co->{in};
    close $co->{out};
    waitpid $co->{pid}, 0;
}

sub _psql_co_run {
    my ($db, $sql) = @_;
    my $co = _psql_co($db);
    my $mark = "\x1dcms-psql-" . ++$psql_n . "\x1d";
    local $SIG{PIPE} = 'IGNORE';
    print {$co->{in}} "$sql\n;\nDISCARD ALL;\n\\echo $mark\n";
    my $out = '';
    my $sel = IO::Select->new($co->{out});
    my $limit = Time::HiRes::time() + 300;
    while ($out !~ /\Q$mark\E\n\z/) {
        die "psql: no answer in 300 s\nSQL: $sql\n" if Time::HiRes::time() > $limit;
        next unless $sel->can_read(1);
        my $n = sysread $co->{out}, $out, 65536, length $out;
        next if !defined $n && $!{EINTR};
        last if !$n;
    }
    if ($out =~ s/\Q$mark\E\n\z//) {
        # settings of a database or role reach new sessions only, as they did when every
        # script had its own psql: the next script starts a new one
        if ($sql =~ /\bALTER\s+(?:DATABASE|ROLE|USER|SYSTEM)\b/i) {
            _psql_co_end($_) for keys %PSQL;
        }
        return (0, $out, '');
    }
    _psql_co_end($db);
    my $err = _read_file($co->{err}->filename);
    return (1, $out, $err || 'psql left without a message');
}

sub _psql_on {
    my ($db, $sql) = @_;
    my ($rc, $out, $err) = _psql_co_run($db, $sql);
    ($rc, $out, $err) = _psql_co_run($db, $sql)
        if $rc && $out eq '' && $err =~ /connection to server|server closed the connection|terminating connection/
           && $err !~ /ERROR:/;
    die "psql failed (exit $rc): $err\nSQL: $sql\n" if $rc;
    $out =~ s/\n\z//;
    return [ map { [ map { $_ eq '\\N' ? undef : $_ } split /\x1f/, $_, -1 ] }
             grep { length } split /\x1e/, $out ];
}

sub psql { _psql_on($S{db}, _subst(shift)) }

# The statement of /v1/_test/flaky, cms_test_flaky(): refused with SQLSTATE $state but
# each $every-th run; pg_flaky_runs() counts the runs (a sequence: not rolled back with a
# refusal). t/047-pg-refusals.t, t/150-pg-pipeline.t.
sub pg_flaky {
    my ($state, $every) = @_;
    psql(<<"SQL");
DROP FUNCTION IF EXISTS cms_test_flaky();
DROP SEQUENCE IF EXISTS cms_test_flaky_seq;
CREATE SEQUENCE cms_test_flaky_seq;
CREATE FUNCTION cms_test_flaky() RETURNS text LANGUAGE plpgsql AS \$\$
BEGIN
    IF nextval('cms_test_flaky_seq') % $every <> 0 THEN
        RAISE EXCEPTION 'refused for the test' USING ERRCODE = '$state';
    END IF;
    RETURN 'ok';
END \$\$;
SQL
}
sub pg_flaky_runs { psql("SELECT last_value FROM cms_test_flaky_seq")->[0][0] }

# Ends (pg_terminate_backend) the module's backend running pg_sleep (/v1/_test/sleep)
# once it is seen, within 5 s; returns its pid, or undef when none was seen.
sub pg_end_sleeping {
    my $pid = wait_until(5, sub {
        my $rows = psql_admin("SELECT pid FROM pg_stat_activity WHERE datname = '%%DB%%'"
                              . " AND query LIKE '%pg_sleep%' AND state = 'active'"
                              . " AND application_name = 'ngx_http_cms'");
        @$rows ? $rows->[0][0] : undef;
    });
    psql_admin("SELECT pg_terminate_backend($pid)") if $pid;
    return $pid;
}
sub psql_admin { _psql_on('postgres', _subst(shift)) }

sub _services {
    my $cmd = shift;
    my ($rc, $out, $err) = _run(["$S{root}/scripts/services.sh", $cmd, $S{var}]);
    die "services.sh $cmd failed: $out$err" if $rc;
    return 1;
}

sub as_postgres {
    my @cmd = @_;
    unshift @cmd, 'runuser', '-u', 'postgres', '--' if $> == 0;
    my $out = `cd / && @{[ join ' ', map { "'$_'" } @cmd ]} 2>&1`;
    return ($? >> 8, $out);
}

sub pg_stop { _services('pg-stop') }
sub pg_start { _services('pg-start') }
sub pg_restart { _services('pg-restart') }
sub redis_stop { _services('redis-stop') }
sub redis_start { _services('redis-start') }

# ---------------------------------------------------------------------------------------
# HTTP over raw sockets

sub _spec {
    my $s = shift;
    if (ref $s eq 'ARRAY') {
        my ($method, $path, $headers, $body) = @$s;
        return { method => $method, path => $path, headers => $headers, body => $body };
    }
    return { %$s };
}

sub _header_pairs {
    my $h = shift;
    return () unless $h;
    return map { ($_, $h->{$_}) } sort keys %$h if ref $h eq 'HASH';
    return @$h;
}

sub _request_bytes {
    my $r = shift;
    return $r->{raw} if defined $r->{raw};
    my @h = _header_pairs($r->{headers});
    my %have;
    for (my $i = 0; $i < @h; $i += 2) { $have{lc $h[$i]} = 1 }
    my $body = $r->{body};
    $body = '' if !defined $body && ($r->{method} || '') =~ /^(POST|PUT|PATCH)$/;
    my $req = "$r->{method} $r->{path} HTTP/1.1\r\n";
    $req .= "Host: " . ($r->{host} || 'localhost') . "\r\n" unless $have{host};
    $req .= "Connection: close\r\n" unless $have{connection};
    for (my $i = 0; $i < @h; $i += 2) { $req .= "$h[$i]: $h[$i + 1]\r\n" }
    $req .= "Content-Length: " . length($body) . "\r\n"
        if defined $body && !$have{'content-length'} && !$have{'transfer-encoding'};
    $req .= "\r\n";
    $req .= $body if defined $body;
    return $req;
}

sub _new_conn {
    my ($spec, $t0) = @_;
    my $r = _spec($spec);
    return {
        spec => $r, out => _request_bytes($r), off => 0, in => '',
        timeout => $r->{timeout} || 30, start_at => $t0 + ($r->{delay} || 0),
    };
}

sub _connect {
    my $c = shift;
    $c->{t_start} = Time::HiRes::time();
    $c->{sock} = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $c->{spec}{port} || $S{port},
                                       ($c->{spec}{from} ? (LocalAddr => $c->{spec}{from}) : ()),
                                       Proto => 'tcp', Blocking => 0);
    unless ($c->{sock}) {
        _finish_conn($c, "connect: $!");
    }
}

# A response is complete at EOF, or once Content-Length bytes (or the last chunk) are in:
# the latter gives a latency that does not include the server's close.
sub _complete {
    my $c = shift;
    my $i = index($c->{in}, "\r\n\r\n");
    return 0 if $i < 0;
    my $head = substr($c->{in}, 0, $i);
    my $body_len = length($c->{in}) - $i - 4;
    return 1 if $head =~ /^HTTP\/\S+ (1\d\d|204|304)/;
    if ($head =~ /^content-length:\s*(\d+)/im) {
        return $body_len >= $1;
    }
    if ($head =~ /^transfer-encoding:\s*chunked/im) {
        return substr($c->{in}, $i + 4) =~ /(?:^|\r\n)0\r\n(?:.*?\r\n)?\r\n\z/s;
    }
    return 0;
}

sub _finish_conn {
    my ($c, $error) = @_;
    return if $c->{done};
    $c->{done} = 1;
    $c->{t_end} = Time::HiRes::time();
    close $c->{sock} if $c->{sock} && !$c->{keep_open};
    $c->{resp} = _parse_response($c->{in}, $error,
                                 ($c->{spec}{method} // '') eq 'HEAD');
    $c->{resp}{elapsed} = $c->{t_end} - ($c->{t_start} || $c->{t_end});
    Cms::OpenApi::observe($c->{spec}, $c->{resp});
}

# Drives the connections until each is complete, failed or timed out.
sub _drive {
    my @conns = @_;
    while (1) {
        my $now = Time::HiRes::time();
        my ($rs, $ws) = (IO::Select->new, IO::Select->new);
        my $next = $now + 0.05;
        my $pending = 0;
        for my $c (@conns) {
            next if $c->{done};
            $pending++;
            if (!$c->{sock} && !$c->{t_start}) {
                if ($now >= $c->{start_at}) { _connect($c) } else {
                    $next = $c->{start_at} if $c->{start_at} < $next;
                    next;
                }
                next if $c->{done};
            }
            if ($now - $c->{t_start} > $c->{timeout}) {
                _finish_conn($c, "timeout after $c->{timeout} s");
                next;
            }
            if ($c->{off} < length $c->{out}) { $ws->add($c->{sock}) } else { $rs->add($c->{sock}) }
        }
        last unless $pending;
        my $wait = $next - $now;
        $wait = 0 if $wait < 0;
        my ($r, $w) = IO::Select->select($rs, $ws, undef, $wait);
        my %ready = map { fileno($_) => 1 } (@{$r || []}, @{$w || []});
        for my $c (@conns) {
            next if $c->{done} || !$c->{sock} || !$ready{fileno($c->{sock})};
            if ($c->{off} < length $c->{out}) {
                my $n = syswrite($c->{sock}, $c->{out}, length($c->{out}) - $c->{off}, $c->{off});
                if (defined $n) { $c->{off} += $n; $c->{t_sent} = Time::HiRes::time() if $c->{off} == length $c->{out} }
                elsif ($! != EAGAIN && $! != EWOULDBLOCK && $! != EINTR && $! != EINPROGRESS) {
                    # The server may answer (e.g. 413) and close before taking the whole body.
                    $c->{off} = length $c->{out};
                    $c->{write_error} = "$!";
                }
                next;
            }
            my $n = sysread($c->{sock}, my $buf, 65536);
            if (!defined $n) {
                next if $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
                _finish_conn($c, length $c->{in} ? undef : "read: $!");
            } elsif ($n == 0) {
                _finish_conn($c, length $c->{in} ? undef : 'connection closed without a response'
                    . ($c->{write_error} ? " (write: $c->{write_error})" : ''));
            } else {
                $c->{in} .= $buf;
                _finish_conn($c) if _complete($c);
            }
        }
    }
    return map { $_->{resp} } @conns;
}

sub _parse_response {
    my ($raw, $error, $head) = @_;
    my $r = { status => 0, headers => {}, header_list => [], body => '', raw => $raw };
    $r->{error} = $error if $error;
    my $i = index($raw, "\r\n\r\n");
    if ($i < 0) {
        $r->{error} ||= 'incomplete response head';
        return $r;
    }
    my ($status_line, @lines) = split /\r\n/, substr($raw, 0, $i);
    ($r->{status}) = $status_line =~ m{^HTTP/\d\.\d (\d{3})} or $r->{error} ||= "bad status line";
    $r->{status} ||= 0;
    for my $l (@lines) {
        my ($k, $v) = $l =~ /^([^:]+):\s*(.*?)\s*$/ or next;
        push @{$r->{header_list}}, [$k, $v];
        my $lk = lc $k;
        $r->{headers}{$lk} = exists $r->{headers}{$lk} ? "$r->{headers}{$lk}, $v" : $v;
    }
    my $body = substr($raw, $i + 4);
    if (($r->{headers}{'transfer-encoding'} || '') =~ /chunked/i) {
        my ($out, $last) = ('', length($body) == 0);
        while ($body =~ s/^([0-9a-fA-F]+)[^\r\n]*\r\n//) {
            my $len = hex $1;
            if ($len == 0) { $last = 1; last }
            $out .= substr($body, 0, $len, '');
            $body =~ s/^\r\n//;
        }
        $r->{error} ||= 'incomplete body' unless $last || $head;
        $body = $out;
    } elsif (defined $r->{headers}{'content-length'}) {
        # an answer cut short (a timeout, a reset) is not a whole answer,
        # whatever its status line said
        $r->{error} ||= 'incomplete body'
            if !$head && length($body) < $r->{headers}{'content-length'};
        $body = substr($body, 0, $r->{headers}{'content-length'});
    }
    $r->{body} = $body;
    if (length $body && (($r->{headers}{'content-type'} || '') =~ /json/i || $body =~ /^\s*[\[{]/)) {
        $r->{json} = eval { $JSON->decode($body) };
    }
    return $r;
}

sub http {
    my ($method, $path, $headers, $body, %o) = @_;
    my ($r) = _drive(_new_conn({ %o, method => $method, path => $path, headers => $headers,
                                 body => $body }, Time::HiRes::time()));
    return $r;
}

sub raw_http {
    my ($bytes, %o) = @_;
    my ($r) = _drive(_new_conn({ %o, raw => $bytes }, Time::HiRes::time()));
    return $r;
}

sub start_request {
    my ($method, $path, $headers, $body, %o) = @_;
    my $c = _new_conn({ %o, method => $method, path => $path, headers => $headers,
                        body => $body }, Time::HiRes::time());
    $c->{t_start} = Time::HiRes::time();
    $c->{sock} = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $c->{spec}{port} || $S{port},
                                       Proto => 'tcp', Timeout => 5)
        or do { _finish_conn($c, "connect: $!"); return $c };
    my $off = 0;
    while ($off < length $c->{out}) {
        my $n = syswrite($c->{sock}, $c->{out}, length($c->{out}) - $off, $off);
        defined $n or do { _finish_conn($c, "write: $!"); return $c };
        $off += $n;
    }
    $c->{off} = $off;
    $c->{sock}->blocking(0);
    return $c;
}

sub finish_request {
    my $c = shift;
    my ($r) = _drive($c);
    return $r;
}

sub parallel_requests {
    my $t0 = Time::HiRes::time();
    return _drive(map { _new_conn($_, $t0) } @_);
}

sub abort_requests {
    my ($n, $spec, $after_ms, %o) = @_;
    my $t0 = Time::HiRes::time();
    my @conns = map { my $c = _new_conn($spec, $t0); $c->{keep_open} = 1; $c } 1 .. $n;
    _connect($_) for @conns;
    my $deadline = $t0 + $after_ms / 1000;
    # Write the requests (and take whatever comes back) until the deadline.
    while (Time::HiRes::time() < $deadline) {
        my ($rs, $ws) = (IO::Select->new, IO::Select->new);
        for my $c (grep { $_->{sock} && !$_->{closed} } @conns) {
            if ($c->{off} < length $c->{out}) { $ws->add($c->{sock}) } else { $rs->add($c->{sock}) }
        }
        my $wait = $deadline - Time::HiRes::time();
        last if $wait <= 0;
        my ($r, $w) = IO::Select->select($rs, $ws, undef, $wait);
        my %ready = map { fileno($_) => 1 } (@{$r || []}, @{$w || []});
        for my $c (@conns) {
            next unless $c->{sock} && !$c->{closed} && $ready{fileno($c->{sock})};
            if ($c->{off} < length $c->{out}) {
                my $k = syswrite($c->{sock}, $c->{out}, length($c->{out}) - $c->{off}, $c->{off});
                $c->{off} += $k if $k;
            } else {
                my $k = sysread($c->{sock}, my $buf, 65536);
                if (defined $k && $k > 0) { $c->{in} .= $buf }
                elsif (defined $k) { $c->{closed} = 1 }
            }
        }
    }
    my $sent = grep { $_->{sock} && $_->{off} == length $_->{out} } @conns;
    my $answered = grep { length $_->{in} } @conns;
    for my $c (grep { $_->{sock} } @conns) {
        setsockopt($c->{sock}, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0)) if $o{rst};
        close $c->{sock};
    }
    return { sent => $sent, answered => $answered };
}

# ---------------------------------------------------------------------------------------
# JSON comparison

sub _canon {
    my $v = shift;
    return $JSON->encode($v);
}

sub _is_bool { ref $_[0] && JSON::PP::is_bool($_[0]) }

sub _looks_number { defined $_[0] && !ref $_[0] && $_[0] =~ /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/ }

sub json_subset {
    my ($exp, $got, $path) = @_;
    $path = '$' unless defined $path;
    if (ref $exp eq 'HASH') {
        return "$path: expected an object, got " . _canon($got) unless ref $got eq 'HASH';
        for my $k (sort keys %$exp) {
            return "$path.$k: missing" unless exists $got->{$k};
            my $e = json_subset($exp->{$k}, $got->{$k}, "$path.$k");
            return $e if defined $e;
        }
        return undef;
    }
    if (ref $exp eq 'ARRAY') {
        return "$path: expected an array, got " . _canon($got) unless ref $got eq 'ARRAY';
        return "$path: expected " . @$exp . " elements, got " . @$got if @$exp != @$got;
        for my $i (0 .. $#$exp) {
            my $e = json_subset($exp->[$i], $got->[$i], "$path\[$i]");
            return $e if defined $e;
        }
        return undef;
    }
    if (_is_bool($exp)) {
        return undef if _is_bool($got) && !!$got == !!$exp;
        return "$path: expected " . _canon($exp) . ", got " . _canon($got);
    }
    if (!defined $exp) {
        return defined $got ? "$path: expected null, got " . _canon($got) : undef;
    }
    if (!defined $got || ref $got) {
        return "$path: expected " . _canon($exp) . ", got " . _canon($got);
    }
    if (_looks_number($exp) && _looks_number($got)) {
        return $exp == $got ? undef : "$path: expected $exp, got $got";
    }
    return $exp eq $got ? undef : "$path: expected " . _canon($exp) . ", got " . _canon($got);
}

# ---------------------------------------------------------------------------------------
# Blocks

# Long bodies (a 1 MiB test) must not flood the TAP output.
sub _short {
    my $s = shift;
    return 'undef' unless defined $s;
    return length($s) > 600 ? substr($s, 0, 300) . "... (" . length($s) . " bytes) ..." . substr($s, -200) : $s;
}

sub _is_text {
    my ($got, $exp, $name) = @_;
    return Test::More::pass($name) if defined $got && defined $exp && $got eq $exp;
    Test::More::fail($name);
    Test::More::diag("     got: " . _short($got) . "\nexpected: " . _short($exp));
    return 0;
}

sub _section {
    my ($block, $name) = @_;
    return undef unless exists $block->{$name};
    my $v = join '', map { defined $_ ? $_ : '' } @{$block->{$name}};
    return _subst($v);
}

sub _trimmed_lines {
    my $v = shift;
    return () unless defined $v;
    return grep { length } map { s/^\s+|\s+$//gr } split /\n/, $v;
}

sub run_tests {
    my $spec = do { no warnings 'once'; local $/; my $fh = \*main::DATA; <$fh> };
    die "run_tests: no __DATA__ section\n" unless defined $spec;
    my $tb = Test::Base->new;
    $tb->_spec_string($spec);
    for my $block (@{$tb->block_list}) {
        $block->run_filters unless $block->is_filtered;
        my $name = $block->name;
        local $Cms::OpenApi::BLOCK = $name;
        my $ok = eval { _run_block($block, $name); 1 };
        Test::More::fail("$name") or Test::More::diag($@) unless $ok;
    }
}

sub _run_block {
    my ($block, $name) = @_;
    my %conf;
    for my $k (qw(main_config http_config config pg_params redis_params test_routes workers)) {
        my $v = _section($block, $k);
        if (defined $v) { chomp $v; $conf{$k} = $v }
    }
    for my $k (qw(cms_postgres cms_redis)) {
        my $v = _section($block, $k);
        if (defined $v) { chomp $v; $conf{$k eq 'cms_postgres' ? 'postgres' : 'redis'} = $v }
    }
    start_nginx(%conf);

    if (defined(my $sql = _section($block, 'sql'))) {
        psql($sql);
    }

    my $log_offset = error_log_size();
    my $timeout = _section($block, 'timeout') || 30;
    my $resp;
    if (defined(my $raw = _section($block, 'raw_request'))) {
        $resp = raw_http($raw, timeout => $timeout);
    } else {
        my $req = _section($block, 'request');
        die "$name: no request or raw_request section\n" unless defined $req;
        my ($line, $body) = split /\n/, $req, 2;
        my ($method, $path) = $line =~ /^\s*(\S+)\s+(\S+)/ or die "$name: bad request line '$line'\n";
        $body = undef if defined $body && $body eq '';
        $body =~ s/\n\z// if defined $body;
        my @headers;
        for my $l (_trimmed_lines(_section($block, 'more_headers'))) {
            my ($k, $v) = $l =~ /^([^:]+):\s*(.*)$/ or die "$name: bad header line '$l'\n";
            push @headers, $k, $v;
        }
        $resp = http($method, $path, \@headers, $body, timeout => $timeout);
    }
    Test::More::diag("$name: $resp->{error}") if $resp->{error};

    my $code = _section($block, 'error_code');
    $code = 200 unless defined $code && length $code;
    Test::More::is($resp->{status}, $code, "$name - status code")
        or Test::More::diag("body: " . _short($resp->{body}));

    for my $l (_trimmed_lines(_section($block, 'response_headers'))) {
        if ($l =~ /^!\s*(.+)$/) {
            Test::More::ok(!exists $resp->{headers}{lc $1}, "$name - no header $1")
                or Test::More::diag("$1: $resp->{headers}{lc $1}");
            next;
        }
        my ($k, $v) = $l =~ /^([^:]+):\s*(.*)$/ or die "$name: bad response_headers line '$l'\n";
        Test::More::is($resp->{headers}{lc $k}, $v, "$name - header $k");
    }
    for my $l (_trimmed_lines(_section($block, 'response_headers_like'))) {
        my ($k, $v) = $l =~ /^([^:]+):\s*(.*)$/ or die "$name: bad response_headers_like line '$l'\n";
        my $got = $resp->{headers}{lc $k};
        Test::More::like(defined $got ? $got : '', qr/$v/, "$name - header $k like /$v/")
            or Test::More::diag(defined $got ? '' : "header $k missing");
    }
    if (defined(my $exp = _section($block, 'response_body'))) {
        _is_text($resp->{body}, $exp, "$name - response body");
    }
    if (defined(my $exp = _section($block, 'response_body_like'))) {
        chomp $exp;
        Test::More::ok($resp->{body} =~ /$exp/s, "$name - response body like /" . _short($exp) . "/")
            or Test::More::diag("body: " . _short($resp->{body}));
    }
    if (defined(my $exp = _section($block, 'response_json'))) {
        my $e = $JSON->decode($exp);
        if (defined $resp->{json} || $resp->{body} =~ /^\s*null\s*$/) {
            _is_text(_canon($resp->{json}), _canon($e), "$name - response json");
        } else {
            Test::More::fail("$name - response json");
            Test::More::diag("body is not JSON: " . _short($resp->{body}));
        }
    }
    if (defined(my $exp = _section($block, 'response_json_subset'))) {
        my $e = $JSON->decode($exp);
        my $err = defined $resp->{json} ? json_subset($e, $resp->{json})
                                        : "body is not JSON: " . _short($resp->{body});
        Test::More::ok(!defined $err, "$name - response json subset")
            or Test::More::diag(_short($err) . "\n     got: " . _short($resp->{body}));
    }

    my @want = _trimmed_lines(_section($block, 'error_log'));
    my @unwanted = _trimmed_lines(_section($block, 'no_error_log'));
    if (@want || @unwanted) {
        # The worker may log after the response has left (finalization, cleanups).
        Time::HiRes::sleep(0.1);
        for my $p (@want) {
            my $found = wait_until(1, sub { _match_log_line($p, error_log_lines($log_offset)) });
            Test::More::ok($found, "$name - error_log has: $p");
        }
        for my $p (@unwanted) {
            my @hits = _match_log_line($p, error_log_lines($log_offset));
            Test::More::ok(!@hits, "$name - error_log has no: $p")
                or Test::More::diag(join "\n", @hits);
        }
    }
    return $resp;
}

1;
