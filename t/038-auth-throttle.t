# Login and signup throttles (issue 11): GCRA buckets in Redis per client address and per
# email, with the shipped limits (login: 20 per minute per address, 50 per hour per
# email; signup: 5 per hour per email, 10 per hour per address). The client address is
# what nginx's realip module gives (X-Forwarded-For from 127.0.0.1 is trusted here, as
# behind a CDN). Attacks: 30 wrong logins on one email -> 429 with Retry-After, and no
# argon2 work for the refused ones; the right password from another address still works;
# a flood from one address is cut at 20; a signup flood from one address -> 429; with
# Redis down, each worker still throttles on its own.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(diag_resp check_err);
use JSON::PP ();

my $RUN = $$ % 200 + 20;    # addresses of this run: Redis outlives a file
sub addr { "10.$_[0].$RUN.$_[1]" }
sub email { sprintf '%s-%d@example.com', $_[0], $$ }

# One request from a client address, or its spec for parallel_requests.
sub spec {
    my ($ip, $path, $body) = @_;
    return { method => 'POST', path => $path, timeout => 120, body => JSON::PP->new->encode($body),
             headers => ['Content-Type' => 'application/json', 'X-Forwarded-For' => $ip] };
}
sub from { my $s = spec(@_); http($s->{method}, $s->{path}, $s->{headers}, $s->{body}) }

sub lane { (http(GET => '/v1/_test/pool')->{json} || {})->{password} || {} }

sub check_429 {
    my ($r, $max, $what) = @_;
    check_err($r, 429, 'rate_limited', $what);
    my $ra = $r->{headers}{'retry-after'} // '';
    ok $ra =~ /^\d+$/ && $ra >= 1 && $ra <= $max, "$what: Retry-After $ra in 1 .. $max"
        or diag diag_resp($r);
}

start_nginx(throttle => '', workers => 1,
            config => "set_real_ip_from 127.0.0.1;\nreal_ip_header X-Forwarded-For;");

# --- the victims -----------------------------------------------------------------------

my %pw = (a => 'the password of A', b => 'the password of B');
for my $u (qw(a b)) {
    my $r = from(addr(1, ord $u), '/v1/auth/signup', { email => email($u), password => $pw{$u} });
    is $r->{status}, 201, "signup $u" or diag diag_resp($r);
}

# --- 30 wrong logins on one email ------------------------------------------------------

# At once, so that the throttle decides all 30 within a second or two (one token comes
# back every 3 s; 30 logins one after the other, each with its hash, would take longer).
# The address's bucket (20) cuts them; one second later, while the hashes still run, the
# right password from another address: the account's own budget (50) is not spent, so
# its owner gets in.  (Up to 2 tokens may come back while a loaded machine takes the 30.)
my $started = lane()->{started};
my @r = parallel_requests(
    (map { spec(addr(2, 1), '/v1/auth/login', { email => email('a'), password => "guess $_" }) } 1 .. 30),
    { %{ spec(addr(2, 2), '/v1/auth/login', { email => email('a'), password => $pw{a} }) }, delay => 1 });
my $ra = pop @r;
my @st = map { $_->{status} } @r;
my $n = grep { $_ == 401 } @st;
ok $n >= 20 && $n <= 22, "30 wrong logins from one address: the burst of 20 checked (401: $n)" or diag "@st";
is scalar(grep { $_ == 429 } @st), 30 - $n, 'and the rest refused (429)' or diag "@st";
my @thr = grep { $_->{status} == 429 } @r;
check_429($thr[0], 3, 'a throttled wrong login');
ok !exists $thr[0]{headers}{'set-cookie'}, 'a throttled login sets no cookie';
is lane()->{started} - $started, $n + 1, 'argon2 ran for the logins let through only, never for a 429';
is $ra->{status}, 200, 'the right password from another address: 200, the owner is not locked out'
    or diag diag_resp($ra);

# Another email from another address is untouched.
my $b = from(addr(2, 3), '/v1/auth/login', { email => email('b'), password => $pw{b} });
is $b->{status}, 200, 'the right password for another email from another address: 200'
    or diag diag_resp($b);
ok $b->{json} && $b->{json}{token}, 'and a session token';

# A client that waits as long as Retry-After says gets in (the wait is what is tested):
# the throttled address itself, with the right password.  Its bucket may have refilled a
# little while the hashes above ran: wrong logins (on an email nobody has) until refused.
my $again;
for (1 .. 25) {
    $again = from(addr(2, 1), '/v1/auth/login', { email => email('nobody'), password => 'guess' });
    last if $again->{status} == 429;
}
check_429($again, 3, 'the throttled address, once its bucket is spent');
sleep($again->{headers}{'retry-after'} // 3);
my $in = from(addr(2, 1), '/v1/auth/login', { email => email('a'), password => $pw{a} });
is $in->{status}, 200, 'after waiting Retry-After, the throttled address gets in with the right password'
    or diag diag_resp($in);

# --- a flood from one address ----------------------------------------------------------

# 40 logins at once on 40 emails nobody has: the address bucket lets 20 through (plus what
# refills while they arrive), the rest is refused before any query or hash.
$started = lane()->{started};
my @flood = parallel_requests(map {
    spec(addr(3, 1), '/v1/auth/login', { email => email("flood$_"), password => 'guess' })
} 1 .. 40);
my $n401 = grep { $_->{status} == 401 } @flood;
my $n429 = grep { $_->{status} == 429 } @flood;
is $n401 + $n429, 40, 'every flood login answered 401 or 429'
    or diag join "\n", map { diag_resp($_) } grep { $_->{status} !~ /^(401|429)$/ } @flood;
cmp_ok $n401, '>=', 20, "at least the burst of 20 got through ($n401)";
cmp_ok $n429, '>=', 10, "the rest refused ($n429)";
check_429((grep { $_->{status} == 429 } @flood)[0], 3, 'a flooded address');
is lane()->{started} - $started, $n401, 'argon2 ran only for the logins let through';

# --- signup flood from one address -----------------------------------------------------

my @su = map { from(addr(4, 1), '/v1/auth/signup', { email => email("s$_"), password => 'a long enough password' }) } 1 .. 11;
is_deeply [map { $_->{status} } @su[0 .. 9]], [(201) x 10], '10 signups from one address: 201';
check_429($su[10], 360, '11th signup from the address');
is psql("SELECT count(*) FROM users WHERE email = '" . email('s11') . "'")->[0][0], 0,
    'the throttled signup created no user';
is from(addr(4, 2), '/v1/auth/signup', { email => email('s12'), password => 'a long enough password' })->{status},
    201, 'a signup from another address: 201';

# Per email: the same email again and again, from new addresses each time.
my @se = map { from(addr(5, $_), '/v1/auth/signup', { email => email('twice'), password => 'a long enough password' }) } 1 .. 6;
is_deeply [map { $_->{status} } @se[0 .. 4]], [201, (409) x 4], 'one email signed up, then 409 email_taken';
check_429($se[5], 720, '6th signup of one email from a 6th address');

# --- Redis down: each worker throttles on its own --------------------------------------

redis_stop();
my $off = error_log_size();
my @rd = parallel_requests(map { spec(addr(6, 1), '/v1/auth/login', { email => email('b'), password => "guess $_" }) } 1 .. 25);
redis_start();
my $nrd = grep { $_->{status} == 401 } @rd;
ok $nrd >= 20 && $nrd <= 22, "Redis down: the burst of 20 of 25 wrong logins checked (401: $nrd)"
    or diag join ' ', map { $_->{status} } @rd;
check_429((grep { $_->{status} == 429 } @rd)[0], 3, 'Redis down: the rest refused by the worker');
ok scalar(grep { /rate limit falls back to this worker/ } error_log_lines($off)),
    'the fallback is logged';
allow_error_log(qr/redis|Connection refused/i);

done_testing();
