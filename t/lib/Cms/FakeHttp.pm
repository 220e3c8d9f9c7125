package Cms::FakeHttp;
# A scripted HTTP/1.1 server on loopback for the tests, in a forked child (one
# connection at a time, Connection: close): it stands for a third-party API the module
# calls (t/119: the video provider).
#
#   my $f = Cms::FakeHttp->start(handler => sub {
#       my ($req, $state) = @_;     # {method, path, headers => {lc name => value}, body}
#       return [200, { 'Content-Type' => 'application/json' }, '{"ok":true}'];
#   });
#   $f->port;
#   $f->set(mode => 'down');       # the state the handler gets, from the next request on
#   $f->requests;                  # every request so far, oldest first (hashes as above)
#   $f->stop;                      # also when the object goes
#
# The handler runs in the child. It may answer 'hang' (the request is read, kept open,
# never answered: a timeout) or 'close' (the connection is closed without an answer).
use strict;
use warnings;
use File::Temp ();
use IO::Socket::INET;
use IO::Select;
use JSON::PP ();
use POSIX ();

my $JSON = JSON::PP->new->canonical(1);

sub start {
    my ($class, %o) = @_;
    my $dir = File::Temp::tempdir('cms-fake-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    my $self = bless { dir => $dir, state => {}, handler => $o{handler} }, $class;
    $self->_write;
    my $ls = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp',
                                   Listen => 64, ReuseAddr => 1) or die "Cms::FakeHttp: $!";
    $self->{port} = $ls->sockport;
    my $pid = fork // die "Cms::FakeHttp: fork: $!";
    if ($pid == 0) {
        eval { $self->_serve($ls) };
        POSIX::_exit(0);
    }
    close $ls;
    $self->{pid} = $pid;
    return $self;
}

sub port { $_[0]{port} }

sub set {
    my ($self, %state) = @_;
    $self->{state}{$_} = $state{$_} for keys %state;
    $self->_write;
}

sub state { $_[0]{state} }

sub requests {
    my ($self) = @_;
    open my $fh, '<', "$self->{dir}/requests" or return ();
    my @r = map { $JSON->decode($_) } grep { /\S/ } <$fh>;
    close $fh;
    return @r;
}

sub stop {
    my ($self) = @_;
    return unless $self->{pid};
    kill 'TERM', $self->{pid};
    waitpid $self->{pid}, 0;
    delete $self->{pid};
}

sub DESTROY { $_[0]->stop }

sub _write {
    my ($self) = @_;
    my $tmp = "$self->{dir}/state.tmp";
    open my $fh, '>', $tmp or die "Cms::FakeHttp: $tmp: $!";
    print $fh $JSON->encode($self->{state});
    close $fh;
    rename $tmp, "$self->{dir}/state" or die "Cms::FakeHttp: rename: $!";
}

sub _state {
    my ($self) = @_;
    open my $fh, '<', "$self->{dir}/state" or return {};
    local $/;
    my $t = <$fh>;
    close $fh;
    return $JSON->decode($t);
}

sub _serve {
    my ($self, $ls) = @_;
    my @held;
    while (1) {
        my $c = $ls->accept or next;
        my $req = _read($c) or do { close $c; next };
        open my $fh, '>>', "$self->{dir}/requests" or die $!;
        print $fh $JSON->encode($req), "\n";
        close $fh;
        my $a = $self->{handler}->($req, $self->_state);
        if (!ref $a && $a eq 'hang') { push @held, $c; next }
        if (!ref $a && $a eq 'close') { close $c; next }
        my ($status, $headers, $body) = @$a;
        $body //= '';
        my $head = "HTTP/1.1 $status X\r\nConnection: close\r\nContent-Length: " . length($body) . "\r\n";
        $head .= "$_: $headers->{$_}\r\n" for sort keys %{ $headers // {} };
        print $c "$head\r\n$body";
        close $c;
    }
}

# one request: its line, headers and a Content-Length body (5 s at most)
sub _read {
    my ($c) = @_;
    my $sel = IO::Select->new($c);
    my $buf = '';
    my $deadline = time + 5;
    until ($buf =~ /\r\n\r\n/) {
        return undef if time > $deadline || !$sel->can_read(1);
        sysread($c, $buf, 65536, length $buf) or return undef;
    }
    my ($head, $body) = split /\r\n\r\n/, $buf, 2;
    my ($line, @h) = split /\r\n/, $head;
    my ($method, $path) = split / /, $line;
    my %h = map { my ($n, $v) = split /:\s*/, $_, 2; (lc $n => $v) } @h;
    my $len = $h{'content-length'} // 0;
    while (length($body) < $len) {
        return undef if time > $deadline || !$sel->can_read(1);
        sysread($c, $body, 65536, length $body) or return undef;
    }
    return { method => $method, path => $path, headers => \%h, body => $body };
}

1;
