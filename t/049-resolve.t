# Host names through nginx's own resolver (src/ngx_http_cms_resolve.c), never
# getaddrinfo(), and the outbound address rule, through the test route
# GET /v1/_test/resolve?host= against a DNS server of this file's own on loopback
# (Cms::Dns): A and AAAA answers, a name with a public and a private address, NXDOMAIN,
# IP literals answered without the resolver, a changed record seen once its TTL passed,
# answers the resolver caches within "valid=", a request gone while its name is being
# resolved (no late callback, the worker stays up), no resolver configured (503 and one
# clear log line), a resolver that never answers (an error within resolver_timeout), and
# cms_outbound_loopback allowing loopback and nothing else.
use strict;
use warnings;
use Cms::Test;
use Cms::Dns;
use Time::HiRes ();
use IO::Socket::INET ();

my $dns = Cms::Dns->start(records => {
    'pub.test'     => ['93.184.216.34'],
    'mixed.test'   => ['93.184.216.34', '10.1.2.3'],
    'v6.test'      => ['2606:2800:220:1::1'],
    'dual.test'    => ['93.184.216.34', '2606:2800:220:1::1'],
    'v6local.test' => ['fe80::1', '::ffff:127.0.0.1'],
    'loop.test'    => ['127.0.0.1'],
    'meta.test'    => ['169.254.169.254'],
    'flip.test'    => ['93.184.216.34'],
    'cached.test'  => ['93.184.216.34'],
    'empty.test'   => [],
});
my $RESOLVER = "resolver 127.0.0.1:" . $dns->port . " valid=1s; resolver_timeout 3s;";

sub resolve {
    my ($host) = @_;
    my $r = http(GET => "/v1/_test/resolve?host=$host");
    return $r;
}

# "address:allowed" of every answer, sorted
sub answers {
    my ($r) = @_;
    return join ' ', sort map { "$_->{address}:" . ($_->{allowed} ? 1 : 0) }
        @{ $r->{json}{addresses} // [] };
}

start_nginx(http_config => $RESOLVER);

my %want = (
    'pub.test'     => '93.184.216.34:1',
    'mixed.test'   => '10.1.2.3:0 93.184.216.34:1',
    'v6.test'      => '2606:2800:220:1::1:1',
    'dual.test'    => '2606:2800:220:1::1:1 93.184.216.34:1',
    'v6local.test' => '::ffff:127.0.0.1:0 fe80::1:0',
    'loop.test'    => '127.0.0.1:0',
    'meta.test'    => '169.254.169.254:0',
);
for my $name (sort keys %want) {
    my $r = resolve($name);
    is $r->{status}, 200, "$name: 200";
    is $r->{json}{result}, 'ok', "$name: resolved";
    is answers($r), $want{$name}, "$name: every A and AAAA answer, each judged";
    ok $dns->queries($name) >= 1, "$name: the resolver asked the test DNS server";
}

for my $name (qw(unknown.test empty.test)) {
    my $r = resolve($name);
    is $r->{status}, 200, "$name: 200";
    is $r->{json}{result}, 'nxdomain', "$name: no address";
    is_deeply $r->{json}{addresses}, [], "$name: no answers";
}

# IP literals: no question to the server
my $before = $dns->queries('10.0.0.1') + $dns->queries('8.8.8.8');
for my $case (['8.8.8.8', '8.8.8.8:1'], ['10.0.0.1', '10.0.0.1:0'],
              ['::1', '::1:0'], ['2606:2800:220:1::1', '2606:2800:220:1::1:1'],
              ['127.0.0.1', '127.0.0.1:0'])
{
    my $r = resolve($case->[0]);
    is $r->{json}{result}, 'ok', "literal $case->[0]: ok";
    is answers($r), $case->[1], "literal $case->[0]: judged";
}
is $dns->queries('10.0.0.1') + $dns->queries('8.8.8.8'), $before,
    'literals are answered without the resolver';

# a changed record is seen once the answer's TTL (1 s, valid=1s) has passed
is answers(resolve('flip.test')), '93.184.216.34:1', 'flip.test: public at first';
$dns->set('flip.test' => ['127.0.0.1']);
ok wait_until(10, sub { answers(resolve('flip.test')) eq '127.0.0.1:0' }),
    'flip.test: its new loopback address is seen (and refused) once the TTL passed';

# within valid=, nginx answers from its cache: two requests, one question
is answers(resolve('cached.test')), '93.184.216.34:1', 'cached.test: resolved';
my $asked = $dns->queries('cached.test');
is answers(resolve('cached.test')), '93.184.216.34:1', 'cached.test: again';
ok $dns->queries('cached.test') <= $asked + 1, 'a cached answer asks the server at most once more';

# bad input to the test route
is resolve('')->{status}, 400, 'no host: 400';

# --- a request gone while its name is being resolved -----------------------------------
# a server that never answers (a UDP socket nobody reads), so the question stays pending
# until resolver_timeout; the clients leave after 300 ms
my $mute = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'udp')
    or die "mute: $!";
my $MUTE = "resolver 127.0.0.1:" . $mute->sockport . " valid=1s; resolver_timeout 2s;";
start_nginx(http_config => $MUTE);
my $mark = error_log_size();
my @gone = abort_requests(5, { method => 'GET', path => '/v1/_test/resolve?host=slow.test' }, 300);
my $t0 = Time::HiRes::time();
my $r = resolve('slow2.test');
my $took = Time::HiRes::time() - $t0;
is $r->{status}, 200, 'a resolver that never answers: 200';
is $r->{json}{result}, 'error', 'a resolver that never answers: an error';
# not before resolver_timeout (2 s); the upper bound only says it did not hang (nginx's
# default resolver_timeout is 30 s, the client's timeout 30 s)
ok $took >= 1.5 && $took < 17, sprintf 'after resolver_timeout (took %.1f s)', $took;
is http(GET => '/v1/health')->{status}, 200, 'and answers';
ok !(grep { /\[alert\]|\[emerg\]|exited on signal/ } error_log_lines($mark)),
    'no worker exit and no alert (no late callback into a freed request)';
allow_error_log(qr/resolving "slow2?\.test" failed/, qr/timed out/);

# --- no resolver -----------------------------------------------------------------------
start_nginx();
my $elog = error_log_size();
$r = resolve('pub.test');
is $r->{status}, 503, 'no resolver: 503';
is $r->{json}{code}, 'service_unavailable', 'no resolver: service_unavailable';
ok((grep { /cannot resolve "pub\.test": no "resolver" in the http\{\} block/ }
    error_log_lines($elog)), 'no resolver: one clear log line naming the directive');
is answers(resolve('93.184.216.34')), '93.184.216.34:1',
    'no resolver: a literal is still answered';
allow_error_log(qr/no "resolver" in the http\{\} block/);

# --- cms_outbound_loopback on: loopback allowed, nothing else ----------------------------
start_nginx(http_config => "$RESOLVER cms_outbound_loopback on;");
is answers(resolve('loop.test')), '127.0.0.1:1', 'loopback on: 127.0.0.1 allowed';
is answers(resolve('::1')), '::1:1', 'loopback on: ::1 allowed';
is answers(resolve('v6local.test')), '::ffff:127.0.0.1:1 fe80::1:0',
    'loopback on: mapped loopback allowed, link-local still refused';
is answers(resolve('mixed.test')), '10.1.2.3:0 93.184.216.34:1',
    'loopback on: a private address still refused';

done_testing();
