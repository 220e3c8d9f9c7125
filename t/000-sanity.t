# The module loads, answers health from PostgreSQL and Redis, and its error shapes hold:
# request ids, 404, 405 with Allow, the extension error shape, test routes off by default.
use strict;
use warnings;
use Cms::Test;

run_tests();

# Request ids: 32 lowercase hex characters, different on every response.
my %seen;
for (1 .. 20) {
    my $r = http(GET => '/v1/health');
    my $id = $r->{headers}{'x-request-id'} // '';
    $seen{$id}++ if $id =~ /^[0-9a-f]{32}$/;
}
is scalar(keys %seen), 20, '20 responses carry 20 distinct well-formed X-Request-Id values';

done_testing();

__DATA__

=== TEST 1: health answers ok for both services
--- request
GET /v1/health
--- error_code: 200
--- response_headers_like
Content-Type: ^application/json
X-Request-Id: ^[0-9a-f]{32}$
--- response_json
{"postgres": "ok", "redis": "ok"}
--- no_error_log
[error]

=== TEST 2: unknown path under /v1/ is a JSON 404
--- request
GET /v1/no/such/thing
--- error_code: 404
--- response_headers_like
Content-Type: ^application/json
X-Request-Id: ^[0-9a-f]{32}$
--- response_json_subset
{"code": "not_found"}
--- response_body_like: "error"\s*:\s*"[^"]+

=== TEST 3: known path, wrong method: 405 with Allow
--- request
POST /v1/health
{}
--- more_headers
Content-Type: application/json
--- error_code: 405
--- response_headers_like
Allow: \bGET\b
Content-Type: ^application/json
X-Request-Id: ^[0-9a-f]{32}$
--- response_json_subset
{"code": "method_not_allowed"}

=== TEST 4: DELETE on health is a 405 too
--- request
DELETE /v1/health
--- error_code: 405
--- response_headers_like
Allow: \bGET\b
--- response_json_subset
{"code": "method_not_allowed"}

=== TEST 5: extension routes answer the extension error shape
--- request
GET /v1/ext/nope
--- error_code: 404
--- response_headers_like
Content-Type: ^application/json
X-Request-Id: ^[0-9a-f]{32}$
--- response_json_subset
{"error": {"type": "not_found", "param": null}}
--- response_body_like: "message"\s*:\s*"[^"]+

=== TEST 6: test routes are on in this file's default config
--- request
GET /v1/_test/pool
--- error_code: 200
--- response_json_subset
{"pg": {"max": 4}, "redis": {"max": 4}}

=== TEST 7: test routes are off unless cms_test_routes on
--- test_routes: omit
--- request
GET /v1/_test/pool
--- error_code: 404
--- response_json_subset
{"code": "not_found"}

=== TEST 8: cms_test_routes off hides the sleep route as well
--- test_routes: off
--- request
GET /v1/_test/sleep?seconds=0
--- error_code: 404
--- response_json_subset
{"code": "not_found"}

=== TEST 9: locations without cms are left alone
--- config
location /plain/ { return 200 "plain\n"; }
--- request
GET /plain/x
--- error_code: 200
--- response_body
plain
