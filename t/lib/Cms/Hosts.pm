package Cms::Hosts;
# More nginx hosts for the tests: each its own prefix, port, pid and logs, from the
# harness's rendered config (the same database, Redis and secret), so that several hosts
# share the state a load balancer would put them in front of.
#
#   start_host_b(edit => sub { $_[0] =~ s/x/y/r });  # optional: change its config
#   my $B = host_b_port();
#   my $r = at($B, GET => $path, $cred);              # req()'s arguments, on a port
#   my @r = on_hosts([$A, req_spec(...)], [$B, req_spec(...)]);   # at once
#   my $c = start_at($B, POST => ...); ...; my $r = finish_at($c);
#   workers_b();                                      # its worker pids
#   stop_host_b(); host_b_errors();                   # its [alert|crit|emerg] lines
#
# Any number of hosts, by name (host B above is the host named 'b'):
#
#   my $C = start_host('c', %opts);      # edit => as above; render => {render_conf's opts}
#   host_port('c'); host_prefix('c'); host_master('c'); host_workers('c');
#   stop_host('c'); host_errors('c');
#   my @pids = kill_host('c');           # kill -9 of its master, then of its workers; waits
#                                        # (10 s at most) until none is left; their pids
#   host_connections('c', $port);        # local ports of its processes' TCP connections to
#                                        # 127.0.0.1:$port (established), from /proc
#   my $p = prepare_host('c', %opts);    # prefix and config only: nginx not started;
#   my @cmd = host_command('c');         # the command that starts it (run it yourself, e.g.
#   adopt_host('c');                     # many hosts at once), then wait (10 s at most) until
#                                        # it accepts connections and note its master
#
# Requests go through the harness's connection driver (Cms::Test::_new_conn and
# _drive, which skip connecting when a socket is already there). The hosts are stopped
# at exit when the file did not stop them.
use strict;
use warnings;
use Exporter qw(import);
use File::Path qw(make_path);
use IO::Socket::INET ();
use Time::HiRes ();
use Cms::Test ();
use Cms::Fixtures qw(req_spec);

our @EXPORT_OK = qw(start_host_b stop_host_b workers_b host_b_port host_b_prefix host_b_errors
                    on_hosts start_at finish_at at
                    start_host stop_host kill_host host_port host_prefix host_master
                    host_workers host_errors host_connections prepare_host host_command
                    adopt_host);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

die 'Cms::Test internals changed: _new_conn/_drive are needed to talk to a second host'
    unless Cms::Test->can('_new_conn') && Cms::Test->can('_drive');

my $NGINX = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
my %H;          # name => { port, prefix, master, owner }

sub host_port { ($H{$_[0]} // {})->{port} }
sub host_prefix { ($H{$_[0]} // {})->{prefix} }
sub host_master { ($H{$_[0]} // {})->{master} }

sub prepare_host {
    my ($name, %o) = @_;
    die "Cms::Hosts: host '$name' is running\n" if host_master($name) && kill 0, host_master($name);
    my $port = Cms::Test::free_port();
    my $prefix = Cms::Test::prefix() . "-host-$name";
    make_path(map { "$prefix/$_" } qw(conf logs temp));
    chmod 0755, $prefix, map { "$prefix/$_" } qw(conf logs temp);
    if ($> == 0) {
        my $uid = getpwnam('nobody');
        chown $uid, -1, "$prefix/temp" if defined $uid;
    }
    my $conf = Cms::Test::render_conf(%{ $o{render} // {} });
    my $port_a = Cms::Test::port();
    $conf =~ s/listen 127\.0\.0\.1:$port_a;/listen 127.0.0.1:$port;/
        or die "no listen line in\n$conf";
    $conf = $o{edit}->($conf) if $o{edit};
    open my $fh, '>', "$prefix/conf/nginx.conf" or die $!;
    print $fh $conf;
    close $fh;
    $H{$name} = { port => $port, prefix => $prefix, owner => $$ };
    return $port;
}

sub host_command {
    my $p = host_prefix($_[0]) // die "Cms::Hosts: no host '$_[0]'\n";
    return ($NGINX, '-p', "$p/", '-c', "$p/conf/nginx.conf");
}

sub adopt_host {
    my $name = shift;
    my $h = $H{$name} // die "Cms::Hosts: no host '$name'\n";
    Cms::Test::wait_until(10, sub {
        IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $h->{port}, Proto => 'tcp') })
        or die "host $name does not accept connections";
    ($h->{master}) = (`cat $h->{prefix}/logs/nginx.pid` =~ /(\d+)/);
    return $h->{port};
}

sub start_host {
    my ($name, %o) = @_;
    prepare_host($name, %o);
    my %env = Cms::Test->can('_nginx_env') ? Cms::Test::_nginx_env() : ();
    local @ENV{keys %env} = values %env;
    my @cmd = host_command($name);
    my $out = `@cmd 2>&1`;
    die "host $name did not start: $out" if $?;
    return adopt_host($name);
}

sub stop_host {
    my $h = $H{$_[0]} or return;
    my $m = $h->{master};
    return unless $m && kill 0, $m;
    kill 'QUIT', $m;
    Cms::Test::wait_until(10, sub { !_alive($m) }) or kill 'KILL', $m;
    $h->{master} = undef;
}
END {
    local $?;
    for my $n (sort keys %H) { stop_host($n) if $H{$n}{owner} == $$ }
}

# a zombie (no reaper in some containers) counts as gone
sub _alive {
    my $pid = shift;
    return 0 unless $pid && kill 0, $pid;
    open my $fh, '<', "/proc/$pid/stat" or return 0;
    my $s = <$fh> // return 0;
    return $s !~ /^\d+ \(.*\) Z/s;
}

# Every process of the host dies at once: its master first (so that it starts no new
# worker), then its workers.
sub kill_host {
    my $h = $H{$_[0]} // die "Cms::Hosts: no host '$_[0]'\n";
    my @pids = grep { $_ } $h->{master}, host_workers($_[0]);
    kill 'KILL', @pids;
    Cms::Test::wait_until(10, sub { !grep { _alive($_) } @pids })
        or die "host $_[0]: processes left after kill -9: @{[grep { _alive($_) } @pids]}";
    $h->{master} = undef;
    return @pids;
}

# The lines of its error.log with [alert], [crit] or [emerg] (but a worker killed with -9).
sub host_errors {
    my $p = host_prefix($_[0]) // die "Cms::Hosts: no host '$_[0]'\n";
    open my $fh, '<', "$p/logs/error.log" or die "$p/logs/error.log: $!";
    return grep { /\[(alert|crit|emerg)\]/ && !/exited on signal 9/ } <$fh>;
}

sub host_workers {
    my $m = host_master($_[0]) or return ();
    my @w;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open my $fh, '<', $stat or next;
        my $s = <$fh> // next;
        push @w, $1 if $s =~ /^(\d+) \(.*\) [^Z] (\d+)/s && $2 == $m;
    }
    return sort { $a <=> $b } @w;
}

# The local ports of the host's established TCP connections to 127.0.0.1:$port: the
# sockets its processes hold (/proc/PID/fd), found in /proc/net/tcp by inode.
sub host_connections {
    my ($name, $port) = @_;
    my %inode;
    for my $pid (grep { $_ } host_master($name), host_workers($name)) {
        for my $fd (glob "/proc/$pid/fd/*") {
            my $l = readlink $fd // next;
            $inode{$1} = 1 if $l =~ /^socket:\[(\d+)\]$/;
        }
    }
    my $want = sprintf '0100007F:%04X', $port;
    my @ports;
    open my $fh, '<', '/proc/net/tcp' or die "/proc/net/tcp: $!";
    while (<$fh>) {
        my @f = split ' ';
        next unless @f > 9 && $f[2] eq $want && $f[3] eq '01' && $inode{$f[9]};
        push @ports, hex((split /:/, $f[1])[1]);
    }
    return sort { $a <=> $b } @ports;
}

# host B: the host named 'b'
sub start_host_b { start_host('b', @_) }
sub stop_host_b { stop_host('b') }
sub host_b_port { host_port('b') }
sub host_b_prefix { host_prefix('b') }
sub host_b_errors { host_errors('b') }
sub workers_b { host_workers('b') }

# Requests to either host, at once: each item is [port, spec].
sub on_hosts {
    my $t0 = Time::HiRes::time();
    my @c;
    for my $item (@_) {
        my ($p, $spec) = @$item;
        my $c = Cms::Test::_new_conn($spec, $t0);
        $c->{t_start} = Time::HiRes::time();
        $c->{sock} = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $p, Proto => 'tcp',
                                           Blocking => 0) or die "connect to $p: $!";
        push @c, $c;
    }
    return Cms::Test::_drive(@c);
}

# Sends a request to a host and returns at once; finish_at() waits for its answer.
sub start_at {
    my ($p, @req) = @_;
    my $c = Cms::Test::_new_conn(req_spec(@req), Time::HiRes::time());
    $c->{t_start} = Time::HiRes::time();
    $c->{sock} = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $p, Proto => 'tcp',
                                       Timeout => 5)
        or die "connect to $p: $!";
    while ($c->{off} < length $c->{out}) {
        my $n = syswrite($c->{sock}, $c->{out}, length($c->{out}) - $c->{off}, $c->{off});
        die "write: $!" unless defined $n;
        $c->{off} += $n;
    }
    $c->{sock}->blocking(0);
    return $c;
}
sub finish_at { my ($r) = Cms::Test::_drive($_[0]); $r }
sub at { my ($p, @req) = @_; my ($r) = on_hosts([$p, req_spec(@req)]); $r }

1;
