package Cms::Dns;
# A DNS server on loopback for the tests (Net::DNS::Nameserver, Debian's
# libnet-dns-perl), in a forked child, UDP and TCP on one free port: nginx's
# "resolver 127.0.0.1:PORT" asks it for names the test controls.
#
#   my $dns = Cms::Dns->start(records => { 'pub.test' => ['93.184.216.34'],
#       'mixed.test' => ['93.184.216.34', '10.1.2.3'] });
#   $dns->port;                            # for "resolver 127.0.0.1:PORT valid=1s;"
#   $dns->set('flip.test' => ['127.0.0.1']);   # answered from the next query on
#   $dns->queries('flip.test');            # questions it answered for the name
#   $dns->forget('flip.test');             # unknown again: NXDOMAIN
#   $dns->stop;                            # also when the object goes
#
# A name's addresses are IPv4 or IPv6 text; each answers its own type (A or
# AAAA) with TTL 1. A name it does not know answers NXDOMAIN; a known name
# asked for a type it has none of answers NOERROR and no record.
use strict;
use warnings;
use Net::DNS::Nameserver;
use Net::DNS::RR;
use File::Temp ();
use IO::Socket::INET;
use JSON::PP ();
use POSIX ();
use Time::HiRes ();

my $JSON = JSON::PP->new->canonical(1);

sub start {
    my ($class, %o) = @_;
    my $dir = File::Temp::tempdir('cms-dns-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    my $self = bless { dir => $dir, records => { %{ $o{records} // {} } } }, $class;
    $self->_write;
    for my $try (1 .. 20) {
        my $probe = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                          Proto => 'udp') or die "Cms::Dns: $!";
        $self->{port} = $probe->sockport;
        close $probe;
        return $self if $self->_spawn;
    }
    die "Cms::Dns: no free port for the server\n";
}

sub port { $_[0]{port} }

sub set {
    my ($self, %records) = @_;
    $self->{records}{$_} = $records{$_} for keys %records;
    $self->_write;
}

sub forget {
    my ($self, @names) = @_;
    delete $self->{records}{$_} for @names;
    $self->_write;
}

sub queries {
    my ($self, $name) = @_;
    open my $fh, '<', "$self->{dir}/queries" or return 0;
    my $n = grep { chomp; lc $_ eq lc $name } <$fh>;
    close $fh;
    return $n;
}

sub stop {
    my ($self) = @_;
    my $pid = delete $self->{pid} or return;
    kill 'TERM', $pid;
    waitpid $pid, 0;
}

sub DESTROY { $_[0]->stop }

# the records file, replaced whole so that a query never reads half of it
sub _write {
    my ($self) = @_;
    my $tmp = "$self->{dir}/records.tmp";
    open my $fh, '>', $tmp or die "Cms::Dns: $tmp: $!";
    print $fh $JSON->encode($self->{records});
    close $fh;
    rename $tmp, "$self->{dir}/records" or die "Cms::Dns: rename: $!";
}

# the child binds, tells the parent through a pipe, then serves; 0 if the
# port was taken meanwhile
sub _spawn {
    my ($self) = @_;
    pipe my $r, my $w or die "Cms::Dns: pipe: $!";
    my $pid = fork // die "Cms::Dns: fork: $!";
    if ($pid == 0) {
        close $r;
        my $dir = $self->{dir};
        my $ns = eval {
            Net::DNS::Nameserver->new(
                LocalAddr => '127.0.0.1', LocalPort => $self->{port},
                ReplyHandler => sub { _reply($dir, @_) }, Verbose => 0)
        };
        syswrite $w, $ns ? "ok\n" : "taken\n";
        close $w;
        POSIX::_exit(1) unless $ns;
        $ns->main_loop;
        POSIX::_exit(0);
    }
    close $w;
    my $said = <$r> // '';
    close $r;
    if ($said ne "ok\n") {
        waitpid $pid, 0;
        return 0;
    }
    $self->{pid} = $pid;
    return 1;
}

sub _reply {
    my ($dir, $qname, $qclass, $qtype) = @_;
    if (open my $q, '>>', "$dir/queries") {
        print $q "$qname\n";
        close $q;
    }
    open my $fh, '<', "$dir/records" or return ('SERVFAIL', [], [], [], {});
    local $/;
    my $records = $JSON->decode(<$fh>);
    close $fh;
    my ($name) = grep { lc $_ eq lc $qname } keys %$records;
    return ('NXDOMAIN', [], [], [], { aa => 1 }) unless defined $name;
    my @ans;
    for my $addr (@{ $records->{$name} }) {
        my $type = $addr =~ /:/ ? 'AAAA' : 'A';
        next unless $type eq $qtype;
        push @ans, Net::DNS::RR->new(name => $qname, type => $type, ttl => 1,
                                     address => $addr);
    }
    return ('NOERROR', \@ans, [], [], { aa => 1 });
}

1;
