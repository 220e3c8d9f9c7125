# Request bodies: content type, malformed and too-deep JSON, size limits, and the echo
# route's happy paths. Errors use the content shape {"error": "...", "code": "..."}.
use strict;
use warnings;
use Cms::Test;

# Bodies too big to write inline.
set_var(
    DEEP_32 => ('[' x 32) . (']' x 32),
    DEEP_33 => ('[' x 33) . (']' x 33),
    OBJ_DEEP_33 => ('{"a":' x 33) . '1' . ('}' x 33),
    # 1 MiB + 1 byte of JSON: over the default cms_body_max_size of 1m.
    BIG_1M => '"' . ('x' x (1024 * 1024 - 1)) . '"',
    # 1.5 MiB: under a raised cms_body_max_size of 2m.
    BIG_1_5M => '"' . ('y' x (1536 * 1024 - 2)) . '"',
    KB_2 => '"' . ('z' x 2046) . '"',
);

run_tests();
done_testing();

__DATA__

=== TEST 1: echo returns the JSON it got
--- request
POST /v1/_test/echo
{"a": [1, 2.5, {"b": null, "c": true}], "s": "caf\u00e9 \"quoted\"", "n": -7}
--- more_headers
Content-Type: application/json
--- error_code: 200
--- response_headers_like
Content-Type: ^application/json
X-Request-Id: ^[0-9a-f]{32}$
--- response_json
{"a": [1, 2.5, {"b": null, "c": true}], "s": "caf\u00e9 \"quoted\"", "n": -7}

=== TEST 2: a charset parameter on the content type is fine
--- request
POST /v1/_test/echo
{"ok": 1}
--- more_headers
Content-Type: application/json; charset=utf-8
--- error_code: 200
--- response_json
{"ok": 1}

=== TEST 3: wrong content type is 415
--- request
POST /v1/_test/echo
{"a": 1}
--- more_headers
Content-Type: text/plain
--- error_code: 415
--- response_headers_like
Content-Type: ^application/json
X-Request-Id: ^[0-9a-f]{32}$
--- response_json_subset
{"code": "unsupported_media_type"}

=== TEST 4: a body without any content type is 415
--- request
POST /v1/_test/echo
{"a": 1}
--- error_code: 415
--- response_json_subset
{"code": "unsupported_media_type"}

=== TEST 5: malformed JSON is 400
--- request
POST /v1/_test/echo
{"a": 
--- more_headers
Content-Type: application/json
--- error_code: 400
--- response_headers_like
Content-Type: ^application/json
--- response_json_subset
{"code": "invalid_request"}

=== TEST 6: trailing garbage after the JSON value is 400
--- request
POST /v1/_test/echo
{"a": 1} x
--- more_headers
Content-Type: application/json
--- error_code: 400
--- response_json_subset
{"code": "invalid_request"}

=== TEST 7: empty body on POST is 400
--- request
POST /v1/_test/echo
--- more_headers
Content-Type: application/json
--- error_code: 400
--- response_json_subset
{"code": "invalid_request"}

=== TEST 8: nesting depth 32 is accepted (the default limit)
--- request
POST /v1/_test/echo
%%DEEP_32%%
--- more_headers
Content-Type: application/json
--- error_code: 200
--- response_json
%%DEEP_32%%

=== TEST 9: arrays nested 33 deep are 400
--- request
POST /v1/_test/echo
%%DEEP_33%%
--- more_headers
Content-Type: application/json
--- error_code: 400
--- response_json_subset
{"code": "invalid_request"}

=== TEST 10: objects nested 33 deep are 400
--- request
POST /v1/_test/echo
%%OBJ_DEEP_33%%
--- more_headers
Content-Type: application/json
--- error_code: 400
--- response_json_subset
{"code": "invalid_request"}

=== TEST 11: cms_json_max_depth lowers the limit for a location
--- config
location /v1/_test/ { cms; cms_json_max_depth 2; }
--- request
POST /v1/_test/echo
[[[1]]]
--- more_headers
Content-Type: application/json
--- error_code: 400
--- response_json_subset
{"code": "invalid_request"}

=== TEST 12: body over the default 1m is 413 in our JSON shape
--- request
POST /v1/_test/echo
%%BIG_1M%%
--- more_headers
Content-Type: application/json
--- error_code: 413
--- response_headers_like
Content-Type: ^application/json
X-Request-Id: ^[0-9a-f]{32}$
--- response_json_subset
{"code": "payload_too_large"}

=== TEST 13: cms_body_max_size at location level
--- config
location /v1/_test/ { cms; cms_body_max_size 1k; }
--- request
POST /v1/_test/echo
%%KB_2%%
--- more_headers
Content-Type: application/json
--- error_code: 413
--- response_json_subset
{"code": "payload_too_large"}

=== TEST 14: a raised cms_body_max_size lets a 1.5 MiB body through
--- http_config
cms_body_max_size 2m;
--- request
POST /v1/_test/echo
%%BIG_1_5M%%
--- more_headers
Content-Type: application/json
--- error_code: 200
--- response_json
%%BIG_1_5M%%

=== TEST 15: a chunked request body is read like any other
--- raw_request eval
"POST /v1/_test/echo HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
. "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
. "5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\n\r\n"
--- error_code: 200
--- response_json
{"a": 1}

=== TEST 16: GET on echo is 405 with Allow: POST
--- request
GET /v1/_test/echo
--- error_code: 405
--- response_headers_like
Allow: \bPOST\b
--- response_json_subset
{"code": "method_not_allowed"}
