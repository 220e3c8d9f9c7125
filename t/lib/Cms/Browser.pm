package Cms::Browser;

=head1 NAME

Cms::Browser - headless Chromium for the browser tests (t/090, t/115)

=head1 SYNOPSIS

    use Cms::Browser qw(chromium_or_skip dump_dom);
    my $chromium = chromium_or_skip();      # skips, or fails under CI=true
    my $r = dump_dom($chromium, "http://127.0.0.1:$port/page.html",
                     dir => $tmp, name => 'open', budget => 5000);
    # $r = { rc, dom, err, secs }

Debian's chromium (packages chromium, chromium-driver: C<scripts/deps.sh test>);
C<TEST_CMS_CHROMIUM> names another browser binary. Without one the file skips, except
under C<CI> where it fails. Needs no services (it does not load L<Cms::Test>).

=head1 FUNCTIONS

=over

=item find_chromium(), chromium_or_skip()

The binary, or undef; C<chromium_or_skip> plans C<skip_all> (or one failure and exit
under C<CI>) when there is none.

=item dump_dom($chromium, $url, %o)

One headless run on a fresh profile (C<$o{dir}/profile-$o{name}>): loads C<$url>, lets
C<$o{budget}> ms of virtual time pass (5000; virtual time stands still while a network
fetch is pending, so a page's own fetches settle first: no real-time sleep), and dumps
the DOM. C<$o{resolver_rules}>: C<--host-resolver-rules> (default: resolve no name);
C<$o{flags}>: more flags (C<--enable-logging=stderr --v=0> puts the page's console,
e.g. a CORS refusal, in C<err>).
Bounded by C<$o{timeout}> seconds (90). Returns C<{ rc =E<gt> exit status or -1 on
timeout, dom, err =E<gt> stderr, secs }>.

=item run_limited($secs, $out, $err, @cmd)

Runs a command in its own process group, stdout and stderr to files; returns the exit
status, or -1 when C<$secs> passed (the group is killed).

=item slurp($path)

The file's bytes, or '' when it cannot be read.

=back

=cut

use strict;
use warnings;
use Test::More ();
use POSIX qw(:sys_wait_h);
use Time::HiRes ();
use Exporter 'import';

our @EXPORT_OK = qw(find_chromium chromium_or_skip dump_dom run_limited slurp);

sub find_chromium {
    return -x $ENV{TEST_CMS_CHROMIUM} ? $ENV{TEST_CMS_CHROMIUM} : undef
        if $ENV{TEST_CMS_CHROMIUM};
    for my $name (qw(chromium chromium-browser)) {
        for my $dir (split /:/, $ENV{PATH} // '') {
            return "$dir/$name" if -x "$dir/$name";
        }
    }
    return undef;
}

sub chromium_or_skip {
    my $chromium = find_chromium();
    return $chromium if $chromium;
    my $why = 'chromium not found '
        . '(Debian packages chromium, chromium-driver: scripts/deps.sh test)';
    if ($ENV{CI}) {
        Test::More::plan(tests => 1);
        Test::More::fail($why);
        exit 1;
    }
    Test::More::plan(skip_all => $why);
}

sub run_limited {
    my ($secs, $out, $err, @cmd) = @_;
    my $pid = fork() // die "fork: $!\n";
    if ($pid == 0) {
        setpgrp(0, 0);
        open STDOUT, '>', $out or die "$out: $!\n";
        open STDERR, '>', $err or die "$err: $!\n";
        exec @cmd or die "exec $cmd[0]: $!\n";
    }
    my $deadline = time + $secs;
    while (time < $deadline) {
        return $? if waitpid($pid, WNOHANG) == $pid;
        select undef, undef, undef, 0.1;
    }
    kill 'KILL', -$pid;
    waitpid $pid, 0;
    return -1;
}

sub slurp {
    my ($path) = @_;
    open my $fh, '<:raw', $path or return '';
    local $/;
    return <$fh>;
}

sub dump_dom {
    my ($chromium, $url, %o) = @_;
    my $name = $o{name} // 'page';
    my $profile = "$o{dir}/profile-$name";
    mkdir $profile or die "$profile: $!\n";
    my @flags = ('--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                 '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', "--user-data-dir=$profile",
                 '--disable-dev-shm-usage', '--mute-audio',
                 '--host-resolver-rules=' . ($o{resolver_rules} // 'MAP * ~NOTFOUND'),
                 @{ $o{flags} // [] },
                 '--virtual-time-budget=' . ($o{budget} // 5000), '--dump-dom', $url);
    my ($out, $err) = ("$o{dir}/$name.dom", "$o{dir}/$name.err");
    my $t0 = Time::HiRes::time();
    my $rc = run_limited($o{timeout} // 90, $out, $err, $chromium, @flags);
    return { rc => $rc, dom => slurp($out), err => slurp($err),
             secs => sprintf('%.1f', Time::HiRes::time() - $t0) };
}

1;
