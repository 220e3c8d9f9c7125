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
use Cms::Service;
use File::Path qw(make_path);

sub start {
    my ($class, %o) = @_;
    my $port = $o{port} // Cms::Test::free_port();
    my $dir = Cms::Test::prefix() . "-varnish-$port";
    make_path($dir);
    (my $vcl = $o{vcl}) =~ s/%%BACKEND_PORT%%/Cms::Test::port()/ge;
    open my $fh, '>', "$dir/default.vcl" or die "$dir/default.vcl: $!";
    print $fh $vcl;
    close $fh;
    my $svc = Cms::Service->start(
        name => 'varnishd', port => $port, log => "$dir/varnishd.log",
        cmd => ['varnishd', '-F', '-j', 'none', '-n', "$dir/work", '-a', "127.0.0.1:$port",
                '-f', "$dir/default.vcl", '-s', 'malloc,16m', '-T', 'none']);
    return bless { svc => $svc, port => $port, dir => $dir }, $class;
}

sub port { $_[0]{port} }

sub stop { $_[0]{svc}->stop }

sub hit { (($_[0]{headers} // {})->{'x-varnish'} // '') =~ /^\d+ \d+$/ }

1;
