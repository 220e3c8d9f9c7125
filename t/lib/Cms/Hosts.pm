package Cms::Hosts;
# A second nginx host for the tests: its own prefix, port, pid and logs, from the
# harness's rendered config (the same database, Redis and secret), so that two hosts
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
# Requests go through the harness's connection driver (Cms::Test::_new_conn and
# _drive, which skip connecting when a socket is already there). Host B is stopped at
# exit when the file did not stop it.
use strict;
use warnings;
use Exporter qw(import);
use File::Path qw(make_path);
use IO::Socket::INET ();
use Time::HiRes ();
use Cms::Test ();
use Cms::Fixtures qw(req_spec);

our @EXPORT_OK = qw(start_host_b stop_host_b workers_b host_b_port host_b_prefix host_b_errors
                    on_hosts start_at finish_at at);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

die 'Cms::Test internals changed: _new_conn/_drive are needed to talk to a second host'
    unless Cms::Test->can('_new_conn') && Cms::Test->can('_drive');

my $NGINX = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
my ($PORT_B, $PREFIX_B, $MASTER_B);

sub host_b_port { $PORT_B }
sub host_b_prefix { $PREFIX_B }

sub start_host_b {
    my %o = @_;
    $PORT_B = Cms::Test::free_port();
    $PREFIX_B = Cms::Test::prefix() . '-host-b';
    make_path(map { "$PREFIX_B/$_" } qw(conf logs temp));
    chmod 0755, $PREFIX_B, map { "$PREFIX_B/$_" } qw(conf logs temp);
    if ($> == 0) {
        my $uid = getpwnam('nobody');
        chown $uid, -1, "$PREFIX_B/temp" if defined $uid;
    }
    my $conf = Cms::Test::render_conf();
    my $port_a = Cms::Test::port();
    $conf =~ s/listen 127\.0\.0\.1:$port_a;/listen 127.0.0.1:$PORT_B;/ or die "no listen line in\n$conf";
    $conf = $o{edit}->($conf) if $o{edit};
    open my $fh, '>', "$PREFIX_B/conf/nginx.conf" or die $!;
    print $fh $conf;
    close $fh;
    my %env = Cms::Test->can('_nginx_env') ? Cms::Test::_nginx_env() : ();
    local @ENV{keys %env} = values %env;
    my $out = `$NGINX -p $PREFIX_B/ -c $PREFIX_B/conf/nginx.conf 2>&1`;
    die "host B did not start: $out" if $?;
    Cms::Test::wait_until(10, sub {
        IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $PORT_B, Proto => 'tcp') })
        or die 'host B does not accept connections';
    ($MASTER_B) = (`cat $PREFIX_B/logs/nginx.pid` =~ /(\d+)/);
    return $PORT_B;
}

sub stop_host_b {
    return unless $MASTER_B && kill 0, $MASTER_B;
    kill 'QUIT', $MASTER_B;
    Cms::Test::wait_until(10, sub { !kill 0, $MASTER_B }) or kill 'KILL', $MASTER_B;
    $MASTER_B = undef;
}
END { stop_host_b() }

# Host B's error.log lines with [alert], [crit] or [emerg] (but a worker killed with -9).
sub host_b_errors {
    open my $fh, '<', "$PREFIX_B/logs/error.log" or die $!;
    return grep { /\[(alert|crit|emerg)\]/ && !/exited on signal 9/ } <$fh>;
}

sub workers_b {
    return () unless $MASTER_B;
    my @w;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open my $fh, '<', $stat or next;
        my $s = <$fh> // next;
        push @w, $1 if $s =~ /^(\d+) \(.*\) [^Z] (\d+)/s && $2 == $MASTER_B;
    }
    return sort { $a <=> $b } @w;
}

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
    $c->{sock} = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $p, Proto => 'tcp', Timeout => 5)
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
