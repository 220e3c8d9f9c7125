package Cms::HostB;
# A second nginx host for a test file: its own prefix, port, pid and logs, from the same
# rendered config as the harness's host (same database, Redis and secret). Requests to
# either host go through the harness's connection driver (Cms::Test::_new_conn and
# _drive, which skip connecting when a socket is already there).
#
#   start_host_b(%edit)   starts it; edit => sub { $conf } may change the config text
#   host_b_port, host_b_prefix, host_b_master, workers_b
#   on_hosts([$port, $spec], ...)   requests to either host at once
#   at($port, @req)       one request (Cms::Fixtures::req's arguments) to a host
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req_spec);
use Time::HiRes qw(time);
use IO::Socket::INET ();
use File::Path qw(make_path);
use Exporter 'import';

our @EXPORT = qw(start_host_b stop_host_b host_b_port host_b_prefix host_b_master workers_b
                 on_hosts at);

die 'Cms::Test internals changed: _new_conn/_drive are needed to talk to a second host'
    unless Cms::Test->can('_new_conn') && Cms::Test->can('_drive');

my $NGINX = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
my ($PORT_B, $PREFIX_B, $MASTER_B);

sub host_b_port { $PORT_B }
sub host_b_prefix { $PREFIX_B }
sub host_b_master { $MASTER_B }

sub start_host_b {
    my %o = @_;
    $PORT_B = free_port();
    $PREFIX_B = prefix() . '-host-b';
    make_path(map { "$PREFIX_B/$_" } qw(conf logs temp));
    chmod 0755, $PREFIX_B, map { "$PREFIX_B/$_" } qw(conf logs temp);
    if ($> == 0) {
        my $uid = getpwnam('nobody');
        chown $uid, -1, "$PREFIX_B/temp" if defined $uid;
    }
    my $conf = render_conf();
    my $port_a = port();
    $conf =~ s/listen 127\.0\.0\.1:$port_a;/listen 127.0.0.1:$PORT_B;/ or die "no listen line in\n$conf";
    $conf = $o{edit}->($conf) if $o{edit};
    open my $fh, '>', "$PREFIX_B/conf/nginx.conf" or die $!;
    print $fh $conf;
    close $fh;
    my %env = Cms::Test->can('_nginx_env') ? Cms::Test::_nginx_env() : ();
    local @ENV{keys %env} = values %env;
    my $out = `$NGINX -p $PREFIX_B/ -c $PREFIX_B/conf/nginx.conf 2>&1`;
    die "host B did not start: $out" if $?;
    wait_until(10, sub { IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $PORT_B, Proto => 'tcp') })
        or die 'host B does not accept connections';
    ($MASTER_B) = (`cat $PREFIX_B/logs/nginx.pid` =~ /(\d+)/);
}

sub stop_host_b {
    return unless $MASTER_B && kill 0, $MASTER_B;
    kill 'QUIT', $MASTER_B;
    wait_until(10, sub { !kill 0, $MASTER_B }) or kill 'KILL', $MASTER_B;
    $MASTER_B = undef;
}
END { stop_host_b() }

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
    my $t0 = time;
    my @c;
    for my $item (@_) {
        my ($p, $spec) = @$item;
        my $c = Cms::Test::_new_conn($spec, $t0);
        $c->{t_start} = time;
        $c->{sock} = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $p, Proto => 'tcp',
                                           Blocking => 0) or die "connect to $p: $!";
        push @c, $c;
    }
    return Cms::Test::_drive(@c);
}

sub at { my ($p, @req) = @_; my ($r) = on_hosts([$p, req_spec(@req)]); $r }

1;
