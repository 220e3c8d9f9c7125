# The extension rate limit (DESIGN.md, Extensions): GCRA in Redis, burst 120, one token per
# 500 ms, per extension key, exact across workers. Every authenticated answer carries
# RateLimit-Policy and RateLimit; a burst gets exactly 120 through and the 121st is a 429
# rate_limited with Retry-After >= 1; waiting Retry-After then succeeds; 8 concurrent clients
# on 2 workers get exactly 120 + one a token's interval through; a 429 comes before the
# Idempotency-Key checks and is never kept as the key's answer; keys have their own buckets.
#
# Deterministic: the checks that count tokens give the script its clock (X-Cms-Test-Clock,
# FAULTS builds only, CMS_GCRA_LUA's ARGV[4]) instead of Redis TIME, so that how fast a busy
# machine sends a burst cannot give tokens back. One check runs on the real clock (TIME):
# a single request's bucket and its expiry.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:ext);

plan skip_all => 'the test clock needs the FAULTS build (TEST_CMS_FAULTS=1)' unless $ENV{TEST_CMS_FAULTS};

sub limited {
    my $x = shift;
    return $x->{status} == 429 && ((($x->{json} || {})->{error} || {})->{type} // '') eq 'rate_limited';
}
sub remaining { ($_[0]{headers}{ratelimit} // '') =~ /^"default";r=(\d+);t=(\d+)$/ ? ($1, $2) : () }

# the script's clock, in ms: each check moves it by hand
my $CLOCK = 1_700_000_000_000;
sub at { ('X-Cms-Test-Clock' => $_[0]) }

set_conf_defaults(workers => 2);
start_nginx();

my $fa = facility();
my $ea = extension($fa);
my $inv = invoice($fa, 1, 100);
my $fresh = sub { ext_key(fac => $fa, ext => $ea) };

# Warm both workers' pools so that the burst is not spread by connection set-up.
{
    my $w = $fresh->();
    parallel_requests(map { req_spec(GET => invoice_path($inv), $w) } 1 .. 16);
}

# --- headers -----------------------------------------------------------------------------
{
    my $K = $fresh->();
    my @seen;
    for my $n (1 .. 3) {
        my $x = req(GET => invoice_path($inv), $K, undef, at($CLOCK));
        is $x->{status}, 200, "request $n: 200";
        is $x->{headers}{'ratelimit-policy'}, '"default";q=120;w=60', "request $n: RateLimit-Policy";
        like $x->{headers}{ratelimit} // '', qr/^"default";r=\d+;t=\d+$/, "request $n: RateLimit";
        push @seen, [remaining($x)];
    }
    is $seen[0][0], 119, 'a fresh key: r=119 after the first request';
    ok $seen[1][0] == 118 && $seen[2][0] == 117, 'r counts down: 118, 117'
        or diag explain \@seen;
    ok $seen[0][1] >= 1 && $seen[0][1] <= 2, 't: seconds until the bucket is full again (1)'
        or diag explain \@seen;
    # also on errors past authentication, and on POSTs
    my $nf = req(GET => invoice_path('00000000-0000-4000-8000-000000000000'), $K, undef, at($CLOCK));
    is $nf->{status}, 404, 'an unknown invoice: 404';
    like $nf->{headers}{ratelimit} // '', qr/^"default";r=116;t=\d+$/, '404 carries RateLimit (and counts)';
    my $p = post(fail_path($inv), $K, {reason => 'x'}, at($CLOCK));
    is $p->{status}, 200, 'POST fail: 200' or diag diag_resp($p);
    like $p->{headers}{ratelimit} // '', qr/^"default";r=115;t=\d+$/, 'POST carries RateLimit';
    is $p->{headers}{'ratelimit-policy'}, '"default";q=120;w=60', 'POST carries RateLimit-Policy';
    my $bad = req(POST => fail_path($inv), $K, {reason => 'x'}, at($CLOCK));
    is $bad->{status}, 400, 'POST without Idempotency-Key: 400';
    like $bad->{headers}{ratelimit} // '', qr/^"default";r=114;t=\d+$/, 'the 400 was counted: limit before idempotency';
}

# --- a burst: exactly 120 ----------------------------------------------------------------
# All at one instant of the script's clock, however long the machine takes to send them.
my $KB = $fresh->();
$CLOCK += 10_000;
my @burst = parallel_requests(map { req_spec(GET => invoice_path($inv), $KB, undef, at($CLOCK)) } 1 .. 125);
my @ok = grep { $_->{status} == 200 } @burst;
my @no = grep { limited($_) } @burst;
is scalar(@ok), 120, 'burst of 125: exactly 120 accepted';
is scalar(@no), 5, 'and 5 refused with 429 rate_limited';
is_deeply [sort { $a <=> $b } map { (remaining($_))[0] } @ok], [0 .. 119],
    'the accepted answers count r from 119 down to 0';
my $r = req(GET => invoice_path($inv), $KB, undef, at($CLOCK));
ok limited($r), 'the next request: 429 rate_limited' or diag diag_resp($r);
check_ext_err($r, 429, 'rate_limited', undef, 'the 429 in the extension shape');
like $r->{headers}{'retry-after'} // '', qr/^[1-9]\d*$/, 'Retry-After: whole seconds >= 1';
is $r->{headers}{'ratelimit-policy'}, '"default";q=120;w=60', '429: RateLimit-Policy';
my ($rem, $reset) = remaining($r);
is $rem, 0, '429: r=0';
ok defined $reset && $reset >= 59 && $reset <= 61, "429: t is about 60 s (the bucket's depth), got " . ($reset // 'none');
for my $x (@no) {
    like $x->{headers}{'retry-after'} // '', qr/^[1-9]\d*$/, 'every refused one has Retry-After >= 1';
}

# The bucket: one Redis key per credential with a hash tag, expiring once it would be full
# (on the real clock: Redis TIME; one request leaves a bucket one token short, 500 ms).
{
    my $KR = $fresh->();
    my $x = req(GET => invoice_path($inv), $KR);
    is $x->{status}, 200, 'the real clock: 200';
    is((remaining($x))[0], 119, 'the real clock: r=119');
    my $kid = one("SELECT id FROM extension_keys WHERE key_prefix = '" . substr($KR, 0, 12) . "'");
    open my $fh, '-|', 'redis-cli', '-p', $ENV{TEST_CMS_REDIS_PORT}, 'PTTL', "cms:rl:{$kid}" or die $!;
    chomp(my $pttl = <$fh> // '');
    ok $pttl =~ /^-?\d+$/ && $pttl <= 500, "cms:rl:{<key id>} expires once full again (PTTL $pttl ms <= 500)";
}

# Other keys are not affected.
my $other = req(GET => invoice_path($inv), $fresh->(), undef, at($CLOCK));
is $other->{status}, 200, 'another key of the same extension: 200';

# A 429 comes before the Idempotency-Key is looked at, and is not kept.
my $pk = idem();
my $pb = '{"reason":"limited_retry"}';
my $p1 = post(fail_path($inv), $KB, $pb, 'Idempotency-Key' => $pk, at($CLOCK));
ok limited($p1), 'POST on an exhausted key: 429' or diag diag_resp($p1);
ok !exists $p1->{headers}{'idempotent-replayed'}, 'not a replay';
# the claim runs in the rate limit's script, after the bucket: a refused POST claims nothing
is scalar(keys %{ idem_records($KB, 'P') }) + scalar(keys %{ idem_records($KB, 'D') }), 0,
    'the 429 left no claim and no record in Redis';
my $p0 = req(POST => fail_path($inv), $KB, $pb, at($CLOCK));
ok limited($p0), 'POST without Idempotency-Key on an exhausted key: 429, not 400' or diag diag_resp($p0);

# Waiting Retry-After is enough (the clock moves by it, and not a millisecond more).
my $wait = $r->{headers}{'retry-after'} || 1;
$CLOCK += $wait * 1000;
my $p2 = post(fail_path($inv), $KB, $pb, 'Idempotency-Key' => $pk, at($CLOCK));
is $p2->{status}, 200, "after Retry-After ($wait s): the POST goes through" or diag diag_resp($p2);
ok !exists $p2->{headers}{'idempotent-replayed'}, 'and runs: the 429 was not kept';
is(($p2->{json} || {})->{last_failure}, 'limited_retry', 'its own answer');
# Waiting gave a token per 500 ms: 1 s of Retry-After was 2, the POST took one.
my $n = 0;
$n++ until $n >= 4 || limited(req(GET => invoice_path($inv), $KB, undef, at($CLOCK)));
is $n, 2 * $wait - 1, "one token per 500 ms: refused again after exactly @{[2 * $wait - 1]} more";
is req(GET => invoice_path($inv), $KB, undef, at($CLOCK + 499))->{status}, 429, '499 ms later: still none';
is req(GET => invoice_path($inv), $KB, undef, at($CLOCK + 500))->{status}, 200, '500 ms later: one more';
ok limited(req(GET => invoice_path($inv), $KB, undef, at($CLOCK + 500))), '... and only one';
$CLOCK += 500;

# --- sustained: 8 clients on 2 workers, the clock 500 ms further each round -------------
# Exact across workers: round 0 takes 8 of the 120, each later round one token more, and no
# round refills a full bucket, so R rounds accept exactly 120 + R - 1 once 8R exceeds that.
my @w = worker_pids();
is scalar(@w), 2, 'two workers';
my $KS = $fresh->();
my ($acc, $ref, @other) = (0, 0);
my $R = 30;
$CLOCK += 100_000;
for my $round (0 .. $R - 1) {
    my $spec = req_spec(GET => invoice_path($inv), $KS, undef, at($CLOCK + 500 * $round));
    for my $x (parallel_requests(map { $spec } 1 .. 8)) {
        if ($x->{status} == 200) { $acc++ } elsif (limited($x)) { $ref++ } else { push @other, $x }
    }
}
is scalar(@other), 0, 'sustained: every answer a 200 or a 429'
    or diag join "\n", map { diag_resp($_) } @other[0 .. ($#other < 5 ? $#other : 5)];
is $acc, 120 + $R - 1, "sustained, $R rounds of 8: exactly 120 + @{[$R - 1]} accepted";
is $ref, 8 * $R - (120 + $R - 1), 'and the rest refused';

# Redis lost its scripts (a restart, SCRIPT FLUSH): a POST's script (the bucket and the
# claim in one) is sent whole again, counts once, and claims its key.
{
    my $KN = $fresh->();
    like redis_cli('SCRIPT', 'FLUSH'), qr/OK/, 'SCRIPT FLUSH';
    my $k = idem();
    my $x = post(fail_path($inv), $KN, {reason => 'flushed'}, 'Idempotency-Key' => $k, at($CLOCK));
    is $x->{status}, 200, 'after SCRIPT FLUSH: the POST goes through' or diag diag_resp($x);
    is((remaining($x))[0], 119, 'counted once: r=119');
    ok wait_until(10, sub { keys %{ idem_records($KN, 'D') } == 1 }), 'its answer is kept';
    my $y = post(fail_path($inv), $KN, {reason => 'flushed'}, 'Idempotency-Key' => $k, at($CLOCK));
    is $y->{headers}{'idempotent-replayed'}, 'true', 'the repeat replays it' or diag diag_resp($y);
    is((remaining($y))[0], 118, 'and counts: r=118');
    my $g = req(GET => invoice_path($inv), $KN, undef, at($CLOCK));
    is((remaining($g))[0], 117, 'a GET after them shares the bucket: r=117');
}

done_testing();
