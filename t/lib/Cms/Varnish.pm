package Cms::Varnish;

=head1 NAME

Cms::Varnish - Debian's varnishd in front of the test's nginx, as a shared cache

=head1 SYNOPSIS

    use Cms::Varnish;
    my $v = Cms::Varnish->start(vcl => $vcl_text);   # %%BACKEND_PORT%% is nginx's port
    Cms::Varnish->start(vcl => $vcl_text, port => $port);   # a port chosen before
    my $r = Cms::Test::http(GET => '/v1/public/site?key=...', undef, undef, port => $v->port);
    Cms::Varnish::hit($r);                             # answered from the cache
    $v->stop;                                          # also at exit

=head1 DESCRIPTION

Starts C<varnishd -F> (no jail, a malloc store of 16 MB) on a free loopback port with
the given VCL, its working folder under the test's prefix, and waits until it accepts
connections. C<hit($response)> tells a cache hit by C<X-Varnish> naming two requests.

=cut

use strict;
use warnings;
use Cms::Test ();
use File::Path qw(make_path);
use IO::Socket::INET;
use POSIX ();

my @RUNNING;

sub start {
    my ($class, %o) = @_;
    my $port = $o{port} // Cms::Test::free_port();
    my $dir = Cms::Test::prefix() . "-varnish-$port";
    make_path($dir);
    (my $vcl = $o{vcl}) =~ s/%%BACKEND_PORT%%/Cms::Test::port()/ge;
    open my $fh, '>', "$dir/default.vcl" or die "$dir/default.vcl: $!";
    print $fh $vcl;
    close $fh;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', "$dir/varnishd.log";
        open STDERR, '>&', \*STDOUT;
        exec 'varnishd', '-F', '-j', 'none', '-n', "$dir/work", '-a', "127.0.0.1:$port",
             '-f', "$dir/default.vcl", '-s', 'malloc,16m', '-T', 'none'
            or POSIX::_exit(127);
    }
    my $self = bless { pid => $pid, port => $port, dir => $dir }, $class;
    push @RUNNING, $self;
    Cms::Test::wait_until(30, sub {
        die "varnishd exited:\n" . `cat $dir/varnishd.log` if waitpid($pid, POSIX::WNOHANG()) == $pid;
        IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp') })
        or die "varnishd does not accept connections:\n" . `cat $dir/varnishd.log`;
    return $self;
}

sub port { $_[0]{port} }

sub stop {
    my $self = shift;
    return unless $self->{pid};
    kill 'TERM', $self->{pid};
    Cms::Test::wait_until(10, sub { waitpid($self->{pid}, POSIX::WNOHANG()) == $self->{pid} })
        or kill 'KILL', $self->{pid};
    waitpid($self->{pid}, 0);
    delete $self->{pid};
}

sub hit { (($_[0]{headers} // {})->{'x-varnish'} // '') =~ /^\d+ \d+$/ }

END { local $?; $_->stop for @RUNNING }

1;
