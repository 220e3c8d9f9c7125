package Cms::Replica;
# A PostgreSQL primary of the test's own and one streaming replica of it, for reads that go
# to a replica (cms_postgres_replica). Not the harness's shared server: a small cluster of
# its own, so that pausing, stopping or lagging the replica touches no other file.
#
#   use Cms::Replica qw(:all);
#   my $R = start_replicated();          # options: dbname [cms], migrate [1], dir
#   $R->{primary_conninfo}; $R->{replica_conninfo};     # libpq conninfo, for the config
#   $R->{primary_port}; $R->{replica_port}; $R->{dbname}; $R->{dir};
#   primary_psql("INSERT INTO ...");     # psql -At output, last newline removed; dies on
#                                        # an error; a second argument: another database
#   ok replica_wait_caught_up(10), '...';   # 1 once the replica replayed all the primary
#                                        # had written, 0 after 10 s (paused, stopped)
#   is replica_psql("SELECT count(*) FROM ..."), 1;
#   replica_pause(); ...; replica_resume();  # WAL replay stopped / going: waits until
#                                        # pg_get_wal_replay_pause_state() says so (dies
#                                        # after 10 s, or the seconds given)
#   replica_stop(); ...; replica_start();    # the replica's server down / up (streaming)
#   stop_replicated();                   # both clusters; also at exit (END, this process)
#   replica_info();                      # start_replicated's hash again
#
# The primary is scripts/services.sh's cluster (CMS_PG_FAST=1: fsync off; its Redis is
# stopped at once) in DIR/primary, with a database created and migrated from sql/
# (scripts/migrate.sh) and synchronous_commit back on, so that pg_current_wal_lsn() after
# a commit covers it. The replica is pg_basebackup -R -X stream of it through a
# replication slot (WAL kept while the replica is stopped), in DIR/replica/data with its
# own port and socket folder DIR/replica/run, hot_standby on, started with pg_ctl (log:
# DIR/replica/postgres.log). DIR is the file's prefix (Cms::Test::prefix()) . '/replica', or
# $TEST_CMS_VAR/replica-PID when Cms::Test was loaded without setting up a file. Ports are
# free loopback ports. Every wait is bounded (Cms::Test::wait_until); none is a fixed sleep.
use strict;
use warnings;
use Exporter qw(import);
use File::Path qw(make_path);
use File::Temp ();
use POSIX ();
use Cms::Test ();

our @EXPORT_OK = qw(start_replicated stop_replicated primary_psql replica_psql
                    replica_pause replica_resume replica_wait_caught_up
                    replica_stop replica_start replica_info);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

my %R;                  # the running pair: ports, folders, owner pid
my $SLOT = 'cms_test_replica';

sub replica_info { $R{info} }

sub _root {
    return $ENV{TEST_CMS_ROOT} if $ENV{TEST_CMS_ROOT};
    (my $d = __FILE__) =~ s{/t/lib/Cms/Replica\.pm$}{};
    return $d eq __FILE__ ? '.' : $d;
}

sub _bindir {
    my ($bin) = grep { -x "$_/pg_ctl" } '/usr/lib/postgresql/15/bin',
                                         glob '/usr/lib/postgresql/*/bin';
    die "Cms::Replica: no PostgreSQL server binaries (scripts/deps.sh run)\n" unless $bin;
    return $bin;
}

# Runs a command; returns (exit status, stdout, stderr).
sub _run {
    my ($cmd, %env) = @_;
    my ($out, $err) = (File::Temp->new, File::Temp->new);
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDIN, '<', '/dev/null' or POSIX::_exit(127);
        open STDOUT, '>', $out->filename or POSIX::_exit(127);
        open STDERR, '>', $err->filename or POSIX::_exit(127);
        @ENV{keys %env} = values %env;
        exec @$cmd or POSIX::_exit(127);
    }
    waitpid $pid, 0;
    my $rc = $? & 127 ? 128 + ($? & 127) : $? >> 8;
    my $slurp = sub { open my $fh, '<', $_[0] or return ''; local $/; <$fh> // '' };
    return ($rc, $slurp->($out->filename), $slurp->($err->filename));
}

sub _services {
    my @args = @_;
    my ($rc, $out, $err) = _run(["$R{root}/scripts/services.sh", @args], CMS_PG_FAST => 1);
    die "Cms::Replica: services.sh @args failed: $out$err" if $rc;
}

sub _psql {
    my ($port, $sql, $db) = @_;
    my ($rc, $out, $err) = _run([qw(psql -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p), $port,
                                 qw(-U postgres -d), $db // $R{info}{dbname}, '-c', $sql],
                                PGOPTIONS => '-c client_min_messages=warning');
    die "Cms::Replica: psql on port $port failed: $err\nSQL: $sql\n" if $rc;
    $out =~ s/\n\z//;
    return $out;
}

sub primary_psql { _psql($R{info}{primary_port}, @_) }
sub replica_psql { _psql($R{info}{replica_port}, @_) }

sub _replica_ctl {
    my @args = @_;
    my ($rc, $out) = Cms::Test::as_postgres("$R{bin}/pg_ctl", '-D', "$R{dir}/replica/data",
        '-l', "$R{dir}/replica/postgres.log", '-w', '-t', '60', @args);
    die "Cms::Replica: pg_ctl @args (replica): $out" . _log_tail() if $rc;
}

sub _log_tail {
    open my $fh, '<', "$R{dir}/replica/postgres.log" or return '';
    my @l = <$fh>;
    return "\n$R{dir}/replica/postgres.log:\n" . join '', @l > 20 ? @l[-20 .. -1] : @l;
}

sub _streaming {
    return eval {
        replica_psql("SELECT status FROM pg_stat_wal_receiver", 'postgres') eq 'streaming'
    };
}

sub start_replicated {
    my %o = @_;
    die "Cms::Replica: already started in $R{dir}\n" if $R{owner};
    my $base = $o{dir} // (Cms::Test::prefix() ? Cms::Test::prefix() . '/replica'
                          : $ENV{TEST_CMS_VAR} ? "$ENV{TEST_CMS_VAR}/replica-$$" : undef);
    die "Cms::Replica: no TEST_CMS_VAR (run through scripts/test-env.sh)\n" unless $base;
    %R = (root => _root(), bin => _bindir(), dir => $base);
    my $db = $o{dbname} // 'cms';
    my ($pp, $rp, $redis) = map { Cms::Test::free_port() } 1 .. 3;
    $R{info} = { primary_port => $pp, replica_port => $rp, dbname => $db, dir => $base,
                 primary_conninfo => "hostaddr=127.0.0.1 port=$pp dbname=$db user=postgres",
                 replica_conninfo => "hostaddr=127.0.0.1 port=$rp dbname=$db user=postgres" };
    make_path("$base/replica");
    chmod 0755, $base;
    $R{owner} = $$;

    # the primary: services.sh's cluster, as cms.sh uses it without Redis
    _services('start', "$base/primary", $pp, $redis);
    _services('redis-stop', "$base/primary");
    primary_psql("ALTER SYSTEM SET synchronous_commit = on", 'postgres');
    primary_psql("SELECT pg_reload_conf()", 'postgres');
    primary_psql(qq{CREATE DATABASE "$db"}, 'postgres');
    if ($o{migrate} // 1) {
        my ($rc, $out, $err) = _run(["$R{root}/scripts/migrate.sh", $R{info}{primary_conninfo}]);
        die "Cms::Replica: migrate.sh failed: $out$err" if $rc;
    }

    # the replica: a base backup that streams, with its own port and socket folder
    if ($> == 0) {
        my (undef, undef, $uid, $gid) = getpwnam('postgres');
        chown $uid, $gid, "$base/replica";
    }
    my ($rc, $out) = Cms::Test::as_postgres("$R{bin}/pg_basebackup", '-h', '127.0.0.1',
        '-p', $pp, '-U', 'postgres', '-D', "$base/replica/data", '-R', '-X', 'stream',
        '-C', '-S', $SLOT, '-c', 'fast', '--no-sync');
    die "Cms::Replica: pg_basebackup: $out" if $rc;
    make_path("$base/replica/run");
    # cms.conf came with the backup: the primary's settings (max_connections must not be
    # lower on a standby), with the replica's own port and socket folder
    open my $in, '<', "$base/primary/pg/data/cms.conf" or die "cms.conf: $!";
    my $conf = do { local $/; <$in> };
    close $in;
    $conf =~ s/^port = .*$/port = $rp/m or die "no port in the primary's cms.conf\n";
    $conf =~ s{^unix_socket_directories = .*$}{unix_socket_directories = '$base/replica/run'}m;
    open my $fh, '>', "$base/replica/data/cms.conf" or die "cms.conf: $!";
    print $fh "$conf\nhot_standby = on\n";
    close $fh;
    if ($> == 0) {
        my (undef, undef, $uid, $gid) = getpwnam('postgres');
        chown $uid, $gid, "$base/replica/run", "$base/replica/data/cms.conf";
    }
    replica_start();
    return $R{info};
}

sub replica_start {
    die "Cms::Replica: not started\n" unless $R{owner};
    _replica_ctl('start');
    Cms::Test::wait_until(30, \&_streaming)
        or die "Cms::Replica: the replica does not stream from the primary" . _log_tail();
    return 1;
}

sub replica_stop {
    return 0 unless $R{owner} && -f "$R{dir}/replica/data/postmaster.pid";
    _replica_ctl('-m', 'fast', 'stop');
    return 1;
}

sub _pause_state { replica_psql("SELECT pg_get_wal_replay_pause_state()", 'postgres') }

# Asks the replica to pause or resume its replay, then waits (bounded) for that state.
sub _replay {
    my ($call, $state, $timeout) = @_;
    replica_psql("SELECT $call()", 'postgres');
    Cms::Test::wait_until($timeout // 10, sub { _pause_state() eq $state })
        or die "Cms::Replica: replay not '$state' in time (" . _pause_state() . ")\n";
    return 1;
}

sub replica_pause { _replay('pg_wal_replay_pause', 'paused', @_) }
sub replica_resume { _replay('pg_wal_replay_resume', 'not paused', @_) }

# True once the replica replayed everything the primary had written when called; false
# after $timeout seconds (a paused or stopped replica).
sub replica_wait_caught_up {
    my $timeout = shift // 10;
    my $lsn = primary_psql("SELECT pg_current_wal_lsn()", 'postgres');
    return Cms::Test::wait_until($timeout, sub {
        eval { replica_psql("SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn",
                            'postgres') eq 't' }
    }) ? 1 : 0;
}

sub stop_replicated {
    return unless $R{owner} && $R{owner} == $$;
    eval { replica_stop() };
    my $err = $@;
    _services('stop', "$R{dir}/primary");
    delete $R{owner};
    die $err if $err;
}

END {
    local $?;
    if ($R{owner} && $R{owner} == $$) {
        eval { stop_replicated() };
        warn $@ if $@;
    }
}

1;
