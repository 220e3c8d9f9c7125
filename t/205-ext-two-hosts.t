# Two nginx hosts (two prefixes, two ports) on the same PostgreSQL and Redis: the rate limit
# is one bucket per key across them (120 in a burst in total), and the idempotency
# guarantees hold across them: concurrent identical POSTs split over both hosts make one
# payment, every answer the original or in_progress; a different body on the other host is
# a conflict; a request in flight on one host is in_progress on the other; a retry on the
# other host after the Redis record is lost, or after the first host's worker was killed
# between the commit and the Redis write, gets the original answer; both hosts relay the
# outbox and every event reaches its stream once.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(:ext);
use Time::HiRes qw(time sleep);
use Cms::Hosts qw(:all);

# --- the second host ---------------------------------------------------------------------
# The harness runs one nginx per file; the second one (Cms::Hosts) has its own prefix,
# port, pid and logs, from the same rendered config (same database, Redis and secret).
sub post_at {
    my ($p, $path, $key, $body, @extra) = @_;
    my %e = @extra;
    push @extra, 'Idempotency-Key' => idem() unless exists $e{'Idempotency-Key'};
    return at($p, POST => $path, $key, $body, @extra);
}

sub payments { one("SELECT count(*) FROM payments WHERE invoice_id = '$_[0]'") }
sub events { one("SELECT count(*) FROM ext_events WHERE data->'invoice'->>'id' = '$_[0]'") }
sub replayed { ($_[0]{headers}{'idempotent-replayed'} // '') eq 'true' }
sub limited { $_[0]{status} == 429 && ((($_[0]{json} || {})->{error} || {})->{type} // '') eq 'rate_limited' }
sub in_progress { $_[0]{status} == 409 && ((($_[0]{json} || {})->{error} || {})->{type} // '') eq 'idempotency_in_progress' }

# a claim outlives any pause of a busy machine (the crash case ends its claim itself)
set_conf_defaults(workers => 2, http_config => "cms_idempotency_lock 60s;\ncms_events_interval 200ms;");
start_nginx();
start_host_b();
my $A = port();
my $B = host_b_port();

my $fa = facility();
my $ea = extension($fa);
my $fresh = sub { ext_key(fac => $fa, ext => $ea) };
my $inv = invoice($fa, 1, 100);

{
    my $K = $fresh->();
    is at($A, GET => invoice_path($inv), $K)->{status}, 200, 'host A answers';
    is at($B, GET => invoice_path($inv), $K)->{status}, 200, 'host B answers';
    my @w = workers_b();
    is scalar(@w), 2, 'host B has two workers';
    # warm both hosts' pools
    on_hosts(map { [$_ % 2 ? $A : $B, req_spec(GET => invoice_path($inv), $K)] } 1 .. 24);
}

# --- one rate limit across hosts ----------------------------------------------------------
{
    # on the test clock (X-Cms-Test-Clock, FAULTS builds), an hour ahead of the real one:
    # a burst that takes longer than a token's 500 ms on a busy machine refills nothing
    my $K = $fresh->();
    my $clock = int(time() * 1000) + 3_600_000;
    my @tc = (undef, 'X-Cms-Test-Clock' => $clock);
    my @r = on_hosts(map { [$_ % 2 ? $A : $B, req_spec(GET => invoice_path($inv), $K, @tc)] } 1 .. 130);
    my $ok_a = grep { $r[$_]{status} == 200 && $_ % 2 == 0 } 0 .. $#r;   # index 0 is request 1: host A
    my $ok = grep { $_->{status} == 200 } @r;
    is $ok, 120, "a burst of 130 split over two hosts: 120 accepted in total ($ok_a on A, " . ($ok - $ok_a) . ' on B)';
    is scalar(grep { limited($_) } @r), 10, 'and 10 refused';
    ok limited(at($A, GET => invoice_path($inv), $K, @tc)), 'then host A refuses';
    my $b = at($B, GET => invoice_path($inv), $K, @tc);
    ok limited($b), 'and host B refuses';
    like $b->{headers}{'retry-after'} // '', qr/^[1-9]\d*$/, 'with Retry-After';
    my $later = $clock + 1000 * ($b->{headers}{'retry-after'} || 1);
    is at($A, GET => invoice_path($inv), $K, undef, 'X-Cms-Test-Clock' => $later)->{status}, 200,
        'after Retry-After host A takes one';
}

# --- idempotency across hosts ------------------------------------------------------------
my $K = $fresh->();
{
    my $i = invoice($fa, 1, 800);
    my $k = idem();
    my $b = '{"reference":"two-hosts","amount":800,"method":"cash"}';
    my $spec = req_spec(POST => record_path($i), $K, $b, 'Idempotency-Key' => $k);
    my @r = on_hosts(map { [$_ % 2 ? $A : $B, $spec] } 1 .. 30);
    my @ok = grep { $_->{status} == 200 } @r;
    my @busy = grep { in_progress($_) } @r;
    my @orig = grep { !replayed($_) } @ok;
    is scalar(@ok) + scalar(@busy), 30, '30 identical POSTs over two hosts: each a 200 or in_progress'
        or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 200 && !in_progress($_) } @r;
    is scalar(@orig), 1, 'one original answer';
    my $o = $orig[0] || $ok[0] || {body => ''};
    is_deeply $o->{json}, {id => $i, status => 'paid', reference => 'two-hosts'}, 'the original answer';
    is scalar(grep { $_->{body} ne $o->{body} } @ok), 0, 'every 200 byte-identical';
    diag sprintf 'over two hosts: %d original, %d replayed, %d in progress',
        scalar(@orig), scalar(@ok) - scalar(@orig), scalar(@busy);
    is payments($i), 1, 'one payment row';
    is events($i), 1, 'one event';
    for my $h ([A => $A], [B => $B]) {
        my $x = at($h->[1], POST => record_path($i), $K, $b, 'Idempotency-Key' => $k);
        ok $x->{status} == 200 && $x->{body} eq $o->{body} && replayed($x), "replayed on host $h->[0]"
            or diag diag_resp($x);
    }
    check_ext_err(at($B, POST => record_path($i), $K, '{"reference":"other","amount":800}', 'Idempotency-Key' => $k),
              409, 'idempotency_conflict', 'Idempotency-Key', 'another body on host B');
}

# In flight on host A -> in progress on host B (the invoice row is locked meanwhile).
{
    my $i = invoice($fa, 1, 40);
    my $k = idem();
    my $b = '{"reference":"slow","amount":40}';
    my $hold = lock_invoice_row($i);
    ok invoice_row_locked($i), 'the invoice row is locked';
    my $ca = start_at($A, POST => record_path($i), $K, $b, 'Idempotency-Key' => $k);
    ok waiting_on_lock(), 'host A\'s request (its key claimed) waits on the row';
    my @r = (undef, at($B, POST => record_path($i), $K, $b, 'Idempotency-Key' => $k));
    ok release_hold($hold), 'the row released';
    $r[0] = finish_at($ca);
    is $r[0]{status}, 200, 'host A: 200 after the lock' or diag diag_resp($r[0]);
    ok in_progress($r[1]), 'host B while A holds the key: 409 idempotency_in_progress' or diag diag_resp($r[1]);
    is $r[1]{headers}{'retry-after'}, '1', 'Retry-After: 1';
    is payments($i), 1, 'one payment';
}

# The Redis record lost: the other host answers from the database.
{
    my $i = invoice($fa, 1, 55);
    my $k = idem();
    my $b = '{"reference":"lost","amount":55}';
    my $a = post_at($A, record_path($i), $K, $b, 'Idempotency-Key' => $k);
    is $a->{status}, 200, 'record on host A' or diag diag_resp($a);
    forget_redis($K);
    my $x = post_at($B, record_path($i), $K, $b, 'Idempotency-Key' => $k);
    ok $x->{status} == 200 && $x->{body} eq $a->{body} && replayed($x),
       'Redis record lost: host B gives the original answer, replayed' or diag diag_resp($x);
    is payments($i), 1, 'one payment';
}

# kill -9 on host A between the commit and the Redis write; the retry goes to host B.
SKIP: {
    skip 'the fault point needs the FAULTS build (TEST_CMS_FAULTS=1)', 1 unless $ENV{TEST_CMS_FAULTS};
    allow_error_log(qr/exited on signal 9/);
    my $i = invoice($fa, 1, 66);
    my $k = idem();
    my $b = '{"reference":"crash-a","amount":66}';
    my $x = post_at($A, record_path($i), $K, $b, 'Idempotency-Key' => $k, 'X-Cms-Fault' => 'after-commit');
    is $x->{status}, 0, 'host A: the worker died, no answer' or diag diag_resp($x);
    is payments($i), 1, 'the payment was committed';
    ok in_progress(post_at($B, record_path($i), $K, $b, 'Idempotency-Key' => $k)),
       'host B within the lock: in progress';
    # the claim's lease runs out (60 s here): ended in Redis, as its expiry would
    my $claims = idem_records($K, 'P');
    is scalar(keys %$claims), 1, 'host A\'s claim is still held' or diag explain $claims;
    redis_cli('DEL', keys %$claims) if %$claims;
    my $y = post_at($B, record_path($i), $K, $b, 'Idempotency-Key' => $k);
    is $y->{status}, 200, 'host B after the lock: 200' or diag diag_resp($y);
    ok replayed($y), 'replayed';
    is_deeply $y->{json}, {id => $i, status => 'paid', reference => 'crash-a'}, 'the original answer';
    is payments($i), 1, 'no second payment';
    is events($i), 1, 'one event';
}

# --- both hosts relay the outbox ---------------------------------------------------------
{
    my $KE = $fresh->();
    my @inv = map { invoice($fa, 1, 5) } 1 .. 12;
    my @r = on_hosts(map { [$_ % 2 ? $A : $B, req_spec(POST => record_path($inv[$_]), $KE,
                                                       '{"reference":"relay","amount":5}',
                                                       'Idempotency-Key' => idem())] } 0 .. $#inv);
    is scalar(grep { $_->{status} == 200 } @r), 12, '12 payments over both hosts';
    ok wait_until(6, sub { one("SELECT count(*) FROM ext_events WHERE relayed_at IS NULL") == 0 }),
       'every event relayed';
    my %n;
    for my $line (split /\n/, redis_cli('XRANGE', "cms:events:{$fa}:live", '-', '+')) {
        $n{$line}++ if $line =~ /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    }
    my @ids = map { $_->[0] } @{psql("SELECT id FROM ext_events WHERE facility_id = '$fa' AND livemode")};
    is scalar(grep { $n{$_} } @ids), scalar(@ids), 'every event of the facility is in its stream (' . scalar(@ids) . ')';
    is scalar(grep { ($n{$_} // 0) > 1 } @ids), 0, 'none twice';
}

# --- host B's own log --------------------------------------------------------------------
stop_host_b();
{
    my @bad = host_b_errors();
    ok !@bad, 'host B: error.log has no [alert], [crit] or [emerg]' or diag join '', @bad;
}

done_testing();
