package Cms::OpenApi;

=head1 NAME

Cms::OpenApi - every answer the suite receives, checked against openapi/openapi.yaml

=head1 DESCRIPTION

Cms::Test hands each answer of C<http>, C<start_request>/C<finish_request> and
C<parallel_requests> to C<observe>. The first one starts a co-process,
C<node tools/node/openapi-validate.js> (ajv; see its header for what "matches" means), fed
over a pipe; the file goes on without waiting for it. An answer that does not match the
document is a failing test, named after the request, with the file and line (or the
C<run_tests> block) that sent it. C<finish> (Cms::Test's C<done_testing>) waits until
every answer sent is checked.

Not checked: requests given as raw bytes (C<raw>, C<raw_request>: the hostile corpus and
the malformed-request tests mean to be outside the document), the test-only routes
(C</v1/_test/...> and C</v1/workspaces/ID/_test/...>, answered only with
C<cms_test_routes on>), paths outside C</v1/> that no path of the document matches
(locations of a test's own config: the module serves C</v1/>), requests whose spec says C<< openapi => 0 >> (a location of the
test's own config that is not the module), answers without a status (connect failures,
timeouts, aborted connections), and requests sent from a forked child.

C<TEST_CMS_OPENAPI=0> turns it off (to measure what it costs). The document is converted
to JSON once per C<scripts/test-env.sh> run (YAML::XS; kept in C<TEST_CMS_VAR>).

=cut

use strict;
use warnings;

use Test::More ();
use JSON::PP ();
use IPC::Open2 ();
use IO::Select ();
use File::Basename qw(dirname);
use File::Spec ();
use Errno qw(EAGAIN EWOULDBLOCK EINTR);
use Time::HiRes ();

my $ROOT = $ENV{TEST_CMS_ROOT} // dirname(__FILE__) . '/../../..';
my %P;          # the co-process: pid, in, out, owner (pid of the file), buf
my $SEQ = 0;
my %SENT;       # id => what the request was, for the failure's name
my $BROKEN;     # the reason the validator cannot run (reported once)
our $BLOCK;     # the run_tests block under way, set by Cms::Test

sub enabled {
    my $v = $ENV{TEST_CMS_OPENAPI};
    return !(defined $v && ($v eq '0' || lc $v eq 'off' || lc $v eq 'false'));
}

# openapi/openapi.yaml as JSON: once per test-env run, else beside the file's temp files
sub _doc_json {
    my $yaml = "$ROOT/openapi/openapi.yaml";
    my @st = stat $yaml or die "no $yaml\n";
    my $dir = $ENV{TEST_CMS_VAR} && -d $ENV{TEST_CMS_VAR} ? $ENV{TEST_CMS_VAR} : File::Spec->tmpdir;
    my $json = "$dir/openapi-$st[9]-$st[7].json";
    return $json if -s $json;
    require YAML::XS;
    my $doc = do { no warnings 'once'; local $YAML::XS::Boolean = 'JSON::PP'; YAML::XS::LoadFile($yaml) };
    my $tmp = "$json.$$";
    open my $fh, '>', $tmp or die "$tmp: $!\n";
    print $fh JSON::PP->new->canonical->encode($doc);
    close $fh or die "$tmp: $!\n";
    rename $tmp, $json or die "rename $tmp: $!\n";
    return $json;
}

sub _start {
    my $script = "$ROOT/tools/node/openapi-validate.js";
    -d "$ROOT/tools/node/node_modules/ajv" or die "tools/node has no ajv: run scripts/deps.sh test\n";
    my $json = _doc_json();
    my ($out, $in);
    my $pid = IPC::Open2::open2($out, $in, 'node', $script, $json);
    $_->blocking(0) for $in, $out;
    %P = (pid => $pid, in => $in, out => $out, owner => $$, buf => '', wbuf => '');
}

# what to call a request in a failure: the file's line that sent it, or the block
sub _where {
    for (my $i = 1; my @c = caller($i); $i++) {
        return "$c[1] line $c[2]" . (defined $BLOCK ? " ($BLOCK)" : '') if $c[1] =~ /\.t\z/;
    }
    return defined $BLOCK ? $BLOCK : '?';
}

sub _broken {
    my $why = shift;
    return if $BROKEN;
    $BROKEN = $why;
    Test::More::fail('the OpenAPI validator runs');
    Test::More::diag("openapi validator: $why");
}

sub observe {
    my ($spec, $r) = @_;
    return if $BROKEN || !enabled();
    return if defined $spec->{raw} || !$spec->{method} || !defined $spec->{path};
    return if defined $spec->{openapi} && !$spec->{openapi};
    # a timed-out or cut answer is the client's verdict, not the server's
    return if !$r->{status} || $r->{error} || $spec->{path} =~ m{^/v1/(?:workspaces/[^/?]+/)?_test(?:[/?]|$)};
    return if $P{owner} && $P{owner} != $$;
    unless ($P{pid}) {
        eval { _start(); 1 } or return _broken("cannot start: $@");
    }
    my $id = ++$SEQ;
    $SENT{$id} = "$spec->{method} $spec->{path} -> $r->{status}, from " . _where();
    my $hdrs = join '', map { "$_->[0]: $_->[1]\n" } @{ $r->{header_list} || [] };
    my $body = $spec->{method} eq 'HEAD' ? '' : ($r->{body} // '');
    (my $path = $spec->{path}) =~ s/[\t\n\r]/ /g;
    _send(join("\t", $id, $spec->{method}, $r->{status}, $path, length $hdrs, length $body) . "\n" . $hdrs . $body);
}

# writes what is queued, reading the validator's lines meanwhile (it only writes
# failures, but a pipe full in both directions would hang both)
sub _send {
    $P{wbuf} .= shift;
    _pump(0);
}

sub _pump {
    my ($until_sync, $deadline) = @_;
    local $SIG{PIPE} = 'IGNORE';
    while (1) {
        my $want_w = length $P{wbuf};
        return 1 if !$want_w && !$until_sync;
        return 1 if $until_sync && $P{synced};
        if ($deadline && Time::HiRes::time() > $deadline) {
            _broken('no answer from the validator in time');
            return 0;
        }
        my $rs = IO::Select->new($P{out});
        my $ws = IO::Select->new($want_w ? ($P{in}) : ());
        my ($r, $w) = IO::Select->select($rs, $ws, undef, 1);
        if ($r && @$r) {
            my $n = sysread($P{out}, my $buf, 65536);
            if (defined $n && $n == 0) { _broken('the validator exited'); return 0 }
            if (defined $n) { $P{buf} .= $buf; _lines() }
            elsif ($! != EAGAIN && $! != EWOULDBLOCK && $! != EINTR) { _broken("read: $!"); return 0 }
        }
        if ($w && @$w) {
            my $n = syswrite($P{in}, $P{wbuf});
            if (defined $n) { substr($P{wbuf}, 0, $n) = '' }
            elsif ($! != EAGAIN && $! != EWOULDBLOCK && $! != EINTR) { _broken("write: $!"); return 0 }
        }
    }
}

sub _lines {
    while ($P{buf} =~ s/\A([^\n]*)\n//) {
        my $line = $1;
        if ($line =~ /^SYNC (\d+)$/) {
            $P{synced} = 1 if $1 == $P{sync_id};
            next;
        }
        my ($id, $msgs) = $line =~ /^FAIL (\d+)\t(.*)$/ or next;
        my $what = delete $SENT{$id} // "request $id";
        my $list = eval { JSON::PP->new->decode($msgs) } || [$msgs];
        Test::More::fail("the answer matches openapi/openapi.yaml: $what");
        Test::More::diag("  $_") for @$list;
    }
}

# waits until every answer sent is checked (and reported)
sub finish {
    return unless $P{pid} && $P{owner} == $$ && !$BROKEN;
    $P{sync_id} = ++$SEQ;
    $P{synced} = 0;
    _send("$P{sync_id}\tSYNC\n");
    _pump(1, Time::HiRes::time() + 60);
    %SENT = ();
}

sub _stop {
    return unless $P{pid} && $P{owner} == $$;
    close $P{in};
    close $P{out};
    waitpid $P{pid}, 0;
    %P = ();
}

# a file that ends without Cms::Test's done_testing: still report (as tests after the end)
END { local $?; finish(); _stop() }

1;
