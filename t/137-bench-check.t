# make bench-check (scripts/bench-check, issue 35): the guard against the next performance
# regression, tried on recorded data rather than by timing anything here.  The committed
# baseline (bench/baseline.tsv, a real `make bench` run) passes against itself; the same
# run with one route deliberately slowed by 30 % fails, naming that route and column, and
# nothing else; a fall within the tolerance, a gain, a run of one row (BENCH_ONLY) and a
# new row pass; a file that is not ratios is refused with exit 2.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;

my $root = "$FindBin::Bin/..";
my $check = "$root/scripts/bench-check";
my $baseline = "$root/bench/baseline.tsv";
my $dir = tempdir(CLEANUP => 1);

open my $fh, '<', $baseline or die "$baseline: $!";
my @rows = map { chomp; [split /\t/] } grep { !/^\s*(#|$)/ } <$fh>;
close $fh;
cmp_ok scalar(@rows), '>=', 10, 'the baseline holds the rows of a whole run';
my ($victim) = grep { $_->[2] ne '-' } @rows;
ok $victim, 'a row with a /pgbench ratio to slow down';

sub run_check {
    my ($rows, @opts) = @_;
    my $file = "$dir/run-" . rand() . '.tsv';
    open my $out, '>', $file or die $!;
    print $out join("\t", @$_), "\n" for @$rows;
    close $out;
    my $text = `'$check' --baseline '$baseline' @opts '$file' 2>&1`;
    return ($? >> 8, $text);
}
sub with { my ($route, $col, $f) = @_;
           [map { my @r = @$_; $r[$col] = sprintf '%.3f', $r[$col] * $f if $r[0] eq $route; \@r } @rows] }

my ($rc, $out) = run_check(\@rows);
is $rc, 0, 'the baseline against itself: exit 0' or diag $out;
like $out, qr/0 fell by more than 15%/, '... nothing fell';

($rc, $out) = run_check(with($victim->[0], 2, 0.7));
is $rc, 1, "'$victim->[0]' slowed by 30 %: exit 1";
like $out, qr/^FELL: \Q$victim->[0]\E \/pgbench \Q$victim->[2]\E -> \S+ \(-30%\)$/m, '... naming the route, the column and both ratios'
    or diag $out;
is scalar(() = $out =~ /^FELL:/mg), 1, '... and nothing else';

($rc, $out) = run_check(with($victim->[0], 2, 0.9));
is $rc, 0, 'a fall of 10 % (within the tolerance): exit 0' or diag $out;
($rc, $out) = run_check(with($victim->[0], 2, 0.9), '--tolerance', '0.05');
is $rc, 1, '... but not within --tolerance 0.05';
($rc, $out) = run_check(with($victim->[0], 2, 1.5));
is $rc, 0, 'a gain: exit 0';

($rc, $out) = run_check([$rows[0], ['GET /v1/new-route', '0.500', '-']]);
is $rc, 0, 'a run of one row and a new one: exit 0';
like $out, qr/^not measured: /m, '... the rows it did not run are listed';
like $out, qr{^new \(no baseline\): GET /v1/new-route$}m, '... the new row is listed';

($rc, $out) = run_check([['GET /v1/health', 'fast', '1.0']]);
is $rc, 2, 'a file that is not ratios: exit 2';

done_testing();
