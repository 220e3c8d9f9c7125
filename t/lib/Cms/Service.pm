package Cms::Service;

=head1 NAME

Cms::Service - a helper process of a test (a cache, a bucket) on a loopback port

=head1 SYNOPSIS

    my $svc = Cms::Service->start(name => 'varnishd', port => $port, log => "$dir/x.log",
                                  cmd => ['varnishd', '-F', ...]);
    $svc->stop;                                        # also at exit

=head1 DESCRIPTION

Forks and execs C<cmd> with its output in C<log>, then waits (30 s at most) until it
accepts connections on 127.0.0.1:C<port>; dies with the log when it exits or never
listens. C<stop> sends TERM, then KILL after 10 s.

=cut

use strict;
use warnings;
use Cms::Test ();
use IO::Socket::INET;
use POSIX ();

my @RUNNING;

sub start {
    my ($class, %o) = @_;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', $o{log};
        open STDERR, '>&', \*STDOUT;
        exec @{$o{cmd}} or POSIX::_exit(127);
    }
    my $self = bless { pid => $pid, %o }, $class;
    push @RUNNING, $self;
    Cms::Test::wait_until(30, sub {
        die "$o{name} exited:\n" . `cat $o{log}` if waitpid($pid, POSIX::WNOHANG()) == $pid;
        IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $o{port}, Proto => 'tcp') })
        or die "$o{name} does not accept connections:\n" . `cat $o{log}`;
    return $self;
}

sub stop {
    my $self = shift;
    return unless $self->{pid};
    kill 'TERM', $self->{pid};
    Cms::Test::wait_until(10, sub { waitpid($self->{pid}, POSIX::WNOHANG()) == $self->{pid} })
        or kill 'KILL', $self->{pid};
    waitpid($self->{pid}, 0);
    delete $self->{pid};
}

END { local $?; $_->stop for @RUNNING }

1;
