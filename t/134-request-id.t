# X-Request-Id (issue 33, docs/operations.md "Request ids"): a client's or a proxy's id is
# kept and echoed when it is a plain token (8 to 64 bytes of letters, digits, - _ . :), on
# answers of every kind (a 200, an error in the JSON shape, a stored file's 404); anything
# else (spaces, markup, too short, too long) is replaced by one of the module's (32 hex
# digits), never echoed; without one, the module makes one, different each time.
use strict;
use warnings;
use Cms::Test;

start_nginx();

sub id_of { ($_[0]{headers} // {})->{'x-request-id'} // '' }

for my $id ('0b3e4c1a-9f2d-4e5b-8a7c-112233445566', '01HZY8J3W5K2M7N9P4Q6R8S0T2', 'trace.1:span_2-AB',
            'a' x 64) {
    my $r = http(GET => '/v1/health/live', ['X-Request-Id' => $id]);
    is id_of($r), $id, "'$id' kept on a 200";
    $r = http(GET => '/v1/api/articles', ['X-Request-Id' => $id]);
    is $r->{status}, 401, '... a refused request: 401';
    is id_of($r), $id, '... kept on the error too';
}
my $r = http(GET => '/v1/files/no/such.png', ['X-Request-Id' => 'files-id-12345678']);
is id_of($r), 'files-id-12345678', 'kept on a stored file\'s 404';

for my $bad ('has spaces in it', '<script>alert(1)</script>', 'short', 'a' x 65, 'semi;colon12', "caf\x{e9}-12345678") {
    my $r = http(GET => '/v1/health/live', ['X-Request-Id' => $bad]);
    my $got = id_of($r);
    like $got, qr/^[0-9a-f]{32}$/, 'a hostile id (' . substr($bad, 0, 20) . ') is replaced by one of the module\'s';
    isnt $got, $bad, '... never echoed';
}

my %seen = map { id_of(http(GET => '/v1/health/live')) => 1 } 1 .. 5;
is scalar(grep { /^[0-9a-f]{32}$/ } keys %seen), 5, 'without one: five requests, five ids of the module\'s';

done_testing();
