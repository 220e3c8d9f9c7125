
/*
 * Unit tests for cms_sigv4.c.  Every expected canonical request, string to
 * sign and signature below is a published one, copied, never computed
 * here:
 *
 *   - AWS's SigV4 test suite (aws-sig-v4-test-suite: AKIDEXAMPLE, us-east-1,
 *     service "service", 2015-08-30T12:36:00Z) as github.com/awslabs/
 *     aws-c-auth keeps it, tests/aws-signing-test-suite/v4/<case>/
 *     {header,query}-{canonical-request,string-to-sign,signature}.txt and
 *     *-signed-request.txt (the headers signed, the query of the URL).
 *     Every case signed in an Authorization header but two:
 *     get-header-value-multiline (a folded value is refused here, see
 *     test_refused) and post-sts-header-after (its token is added after
 *     signing: it signs as post-vanilla).  Eight cases presigned.
 *   - The S3 API Reference: "Signature Calculations for the Authorization
 *     Header: Transferring Payload in a Single Chunk" (GET Object with
 *     Range, PUT Object, GET Bucket Lifecycle, GET Bucket (List Objects))
 *     and "Authenticating Requests: Using Query Parameters" (the presigned
 *     GET of test.txt, signature aeeed9bb...), AKIAIOSFODNN7EXAMPLE,
 *     2013-05-24T00:00:00Z.
 *   - The IAM User Guide's signing key (20150830/us-east-1/iam).
 *
 * Then the rules no vector pins down (encoding, sorting, the cache, the
 * sizes) and each refusal.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_sigv4.h"


#define S(s)  s, sizeof(s) - 1

#define EMPTY      CMS_SIGV4_EMPTY_HASH

/* the suite's recurring lines */
#define H_HOST     "Host:example.amazonaws.com\n"
#define H_DATE     "X-Amz-Date:20150830T123600Z\n"
#define C_HOST     "host:example.amazonaws.com\n"
#define C_DATE     "x-amz-date:20150830T123600Z\n"
#define C_SIGNED   "host;x-amz-date\n"
#define STS_HEAD                                                              \
    "AWS4-HMAC-SHA256\n20150830T123600Z\n"                                    \
    "20150830/us-east-1/service/aws4_request\n"
#define Q_XAMZ                                                                \
    "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F2015083" \
    "0%2Fus-east-1%2Fservice%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Am" \
    "z-Expires=3600&"

/* the S3 examples' */
#define S3_HOST    "Host:examplebucket.s3.amazonaws.com\n"
#define S3_C_HOST  "host:examplebucket.s3.amazonaws.com\n"
#define S3_C_DATE  "x-amz-date:20130524T000000Z\n"
#define S3_STS_HEAD                                                           \
    "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"

/* the headers of the two bucket GETs, as sent and as signed */
#define S3_BUCKET_HEADERS                                                     \
    S3_HOST "x-amz-date: 20130524T000000Z\n" "x-amz-content-sha256:" EMPTY "\n"
#define S3_BUCKET_SIGNED                                                      \
    S3_C_HOST "x-amz-content-sha256:" EMPTY "\n" S3_C_DATE "\n"                \
    "host;x-amz-content-sha256;x-amz-date\n" EMPTY

#define HEADERS_MAX  (CMS_SIGV4_HEADERS_MAX + 2)


typedef struct {
    const char                 *name;
    const cms_sigv4_scope_t    *scope;      /* NULL: the suite's */
    const char                 *method;
    const char                 *path;
    const char                 *query;      /* NULL: none */
    const char                 *headers;    /* "Name:value\n" lines */
    unsigned                    flags;
    unsigned                    expires;    /* > 0: presigned */
    const char                 *payload;    /* NULL: the empty body's */
    const char                 *creq;
    const char                 *sts;
    const char                 *sig;
} vector_t;


static const cms_sigv4_scope_t  suite = {
    .key_id = S("AKIDEXAMPLE"),
    .secret = S("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
    .region = S("us-east-1"),
    .service = S("service"),
    .time = INT64_C(1440938160)                 /* 2015-08-30T12:36:00Z */
};


static const cms_sigv4_scope_t  s3 = {
    .key_id = S("AKIAIOSFODNN7EXAMPLE"),
    .secret = S("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    .region = S("us-east-1"),
    .service = S("s3"),
    .time = INT64_C(1369353600)                 /* 2013-05-24T00:00:00Z */
};


/* signed in an Authorization header */
static const vector_t  suite_header[] = {
    { .name = "get-header-key-duplicate", .method = "GET", .path = "/",
      .headers = H_HOST "My-Header1:value2\n" "My-Header1:value2\n"
        "My-Header1:value1\n" H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST "my-header1:value2,value2,value1\n"
        C_DATE "\n" "host;my-header1;x-amz-date\n" EMPTY,
      .sts = STS_HEAD
        "dc7f04a3abfde8d472b0ab1a418b741b7c67174dad1551b4117b15527fbe966c",
      .sig = "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"
    },
    { .name = "get-header-value-order", .method = "GET", .path = "/",
      .headers = H_HOST "My-Header1:value4\n" "My-Header1:value1\n"
        "My-Header1:value3\n" "My-Header1:value2\n" H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST
        "my-header1:value4,value1,value3,value2\n" C_DATE "\n"
        "host;my-header1;x-amz-date\n" EMPTY,
      .sts = STS_HEAD
        "31ce73cd3f3d9f66977ad3dd957dc47af14df92fcd8509f59b349e9137c58b86",
      .sig = "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01"
    },
    { .name = "get-header-value-trim", .method = "GET", .path = "/",
      .headers = H_HOST "My-Header1: value1\n" "My-Header2: \"a   b   c\"\n"
        H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST "my-header1:value1\n"
        "my-header2:\"a b c\"\n" C_DATE "\n"
        "host;my-header1;my-header2;x-amz-date\n" EMPTY,
      .sts = STS_HEAD
        "a726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7",
      .sig = "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"
    },
    { .name = "get-relative-normalized", .method = "GET",
      .path = "/example/..",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
      .sig = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    },
    { .name = "get-relative-relative-normalized", .method = "GET",
      .path = "/example1/example2/../..",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
      .sig = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    },
    { .name = "get-relative-relative-unnormalized", .method = "GET",
      .path = "/example1/example2/../..",
      .headers = H_HOST H_DATE,
      .flags = CMS_SIGV4_NO_NORMALIZE,
      .creq = "GET\n" "/example1/example2/../..\n" "\n" C_HOST C_DATE "\n"
        C_SIGNED EMPTY,
      .sts = STS_HEAD
        "76115030c0f3ff06c20fdff5ceb6d5e0b835a1743e00b94fea7c7f381269437b",
      .sig = "dc33e0856fd4baca4d7aa2146c38958283844764f38c74252a333df5e613003b"
    },
    { .name = "get-relative-unnormalized", .method = "GET",
      .path = "/example/..",
      .headers = H_HOST H_DATE,
      .flags = CMS_SIGV4_NO_NORMALIZE,
      .creq = "GET\n" "/example/..\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "0511f456aa502b456d135fcb9d749374a55228f9dbeedda1eacf659e05b0615b",
      .sig = "eca7ead57bb5aa5c8e28007acd4ff04e1ff9a0ff3b237ec1554a184887ff9282"
    },
    { .name = "get-slash-dot-slash-normalized", .method = "GET", .path = "/./",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
      .sig = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    },
    { .name = "get-slash-dot-slash-unnormalized", .method = "GET",
      .path = "/./",
      .headers = H_HOST H_DATE,
      .flags = CMS_SIGV4_NO_NORMALIZE,
      .creq = "GET\n" "/./\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "d67825e2268bd77a97c7688b8d72c31a3c1855b309808505ba0a9747d2465aa7",
      .sig = "68714168e6557f8f2de0ef956fc24dc2593a4bd2961f8df51898d8a134695145"
    },
    { .name = "get-slash-normalized", .method = "GET", .path = "//",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
      .sig = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    },
    { .name = "get-slash-pointless-dot-normalized", .method = "GET",
      .path = "/./example",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/example\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "214d50c111a8edc4819da6a636336472c916b5240f51e9a51b5c3305180cf702",
      .sig = "ef75d96142cf21edca26f06005da7988e4f8dc83a165a80865db7089db637ec5"
    },
    { .name = "get-slash-pointless-dot-unnormalized", .method = "GET",
      .path = "/./example",
      .headers = H_HOST H_DATE,
      .flags = CMS_SIGV4_NO_NORMALIZE,
      .creq = "GET\n" "/./example\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "73895e0e829507e28e39fd24669aedc2434a8e179e547e3c075b42921f952cdb",
      .sig = "beb03f223f7deae4146464f06e29eebbee9c8afbe15c290cf07aa8b119e14cff"
    },
    { .name = "get-slash-unnormalized", .method = "GET", .path = "//",
      .headers = H_HOST H_DATE,
      .flags = CMS_SIGV4_NO_NORMALIZE,
      .creq = "GET\n" "//\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "80cb39203d058af815de2b79250ff56e1b73eb9b4718c86556cdc6f150c5d209",
      .sig = "c88bcd3d312d75078c0cd961d6deae3f4c754924b01669efcfcb439fd5e5b76e"
    },
    { .name = "get-slashes-normalized", .method = "GET", .path = "//example//",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/example/\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "cb96b4ac96d501f7c5c15bc6d67b3035061cfced4af6585ad927f7e6c985c015",
      .sig = "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84"
    },
    { .name = "get-slashes-unnormalized", .method = "GET",
      .path = "//example//",
      .headers = H_HOST H_DATE,
      .flags = CMS_SIGV4_NO_NORMALIZE,
      .creq = "GET\n" "//example//\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "528ec3105ee1f34ab014bb0a1a45da0ed2742a4fea3555149e5b4d5d201eb240",
      .sig = "87cca117541a147f6df867677d98a7d80dff226d2bfca9e4ffa899665623c7e5"
    },
    { .name = "get-space-normalized", .method = "GET",
      .path = "/example space/",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/example%20space/\n" "\n" C_HOST C_DATE "\n" C_SIGNED
        EMPTY,
      .sts = STS_HEAD
        "63ee75631ed7234ae61b5f736dfc7754cdccfedbff4b5128a915706ee9390d86",
      .sig = "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"
    },
    { .name = "get-space-unnormalized", .method = "GET",
      .path = "/example space/",
      .headers = H_HOST H_DATE,
      .flags = CMS_SIGV4_NO_NORMALIZE,
      .creq = "GET\n" "/example%20space/\n" "\n" C_HOST C_DATE "\n" C_SIGNED
        EMPTY,
      .sts = STS_HEAD
        "63ee75631ed7234ae61b5f736dfc7754cdccfedbff4b5128a915706ee9390d86",
      .sig = "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"
    },
    { .name = "get-unreserved", .method = "GET",
      .path =
        "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
      .headers = H_HOST H_DATE,
      .creq = "GET\n"
        "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        "\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "6a968768eefaa713e2a6b16b589a8ea192661f098f37349f4e2c0082757446f9",
      .sig = "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"
    },
    { .name = "get-utf8", .method = "GET", .path = "/\xe1\x88\xb4",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/%E1%88%B4\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "2a0a97d02205e45ce2e994789806b19270cfbbb0921b278ccf58f5249ac42102",
      .sig = "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"
    },
    { .name = "get-vanilla", .method = "GET", .path = "/",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
      .sig = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    },
    { .name = "get-vanilla-empty-query-key", .method = "GET", .path = "/",
      .query = "Param1=value1",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "Param1=value1\n" C_HOST C_DATE "\n" C_SIGNED
        EMPTY,
      .sts = STS_HEAD
        "1e24db194ed7d0eec2de28d7369675a243488e08526e8c1c73571282f7c517ab",
      .sig = "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb"
    },
    { .name = "get-vanilla-query", .method = "GET", .path = "/",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
      .sig = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    },
    { .name = "get-vanilla-query-order-encoded", .method = "GET", .path = "/",
      .query = "Param-3=Value3&Param=Value2&%E1%88%B4=Value1",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "%E1%88%B4=Value1&Param=Value2&Param-3=Value3\n"
        C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "868294f5c38bd141c4972a373a76654f1418a8e4fc18b2e7903ae45e8ae0ec71",
      .sig = "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac"
    },
    { .name = "get-vanilla-query-order-key-case", .method = "GET", .path = "/",
      .query = "Param2=value2&Param1=value1",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "Param1=value1&Param2=value2\n" C_HOST C_DATE "\n"
        C_SIGNED EMPTY,
      .sts = STS_HEAD
        "816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0",
      .sig = "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
    },
    { .name = "get-vanilla-query-unreserved", .method = "GET", .path = "/",
      .query =
        "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz="
        "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n"
        "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz="
        "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "c30d4703d9f799439be92736156d47ccfb2d879ddf56f5befa6d1d6aab979177",
      .sig = "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"
    },
    { .name = "get-vanilla-utf8-query", .method = "GET", .path = "/",
      .query = "\xe1\x88\xb4=bar",
      .headers = H_HOST H_DATE,
      .creq = "GET\n" "/\n" "%E1%88%B4=bar\n" C_HOST C_DATE "\n" C_SIGNED
        EMPTY,
      .sts = STS_HEAD
        "eb30c5bed55734080471a834cc727ae56beb50e5f39d1bff6d0d38cb192a7073",
      .sig = "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"
    },
    { .name = "get-vanilla-with-session-token", .method = "GET", .path = "/",
      .headers = H_HOST
        "X-Amz-Security-Token:6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00f"
        "a31553b73ebf194267\n" H_DATE,
      .creq = "GET\n" "/\n" "\n" C_HOST C_DATE
        "x-amz-security-token:6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00f"
        "a31553b73ebf194267\n" "\n" "host;x-amz-date;x-amz-security-token\n"
        EMPTY,
      .sts = STS_HEAD
        "067b36aa60031588cea4a4cde1f21215227a047690c72247f1d70b32fbbfad2b",
      .sig = "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"
    },
    { .name = "post-header-key-case", .method = "POST", .path = "/",
      .headers = H_HOST H_DATE,
      .creq = "POST\n" "/\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87",
      .sig = "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
    },
    { .name = "post-header-key-sort", .method = "POST", .path = "/",
      .headers = H_HOST "My-Header1:value1\n" H_DATE,
      .creq = "POST\n" "/\n" "\n" C_HOST "my-header1:value1\n" C_DATE "\n"
        "host;my-header1;x-amz-date\n" EMPTY,
      .sts = STS_HEAD
        "9368318c2967cf6de74404b30c65a91e8f6253e0a8659d6d5319f1a812f87d65",
      .sig = "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"
    },
    { .name = "post-header-value-case", .method = "POST", .path = "/",
      .headers = H_HOST "My-Header1:VALUE1\n" H_DATE,
      .creq = "POST\n" "/\n" "\n" C_HOST "my-header1:VALUE1\n" C_DATE "\n"
        "host;my-header1;x-amz-date\n" EMPTY,
      .sts = STS_HEAD
        "d51ced243e649e3de6ef63afbbdcbca03131a21a7103a1583706a64618606a93",
      .sig = "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"
    },
    { .name = "post-sts-header-before", .method = "POST", .path = "/",
      .headers = H_HOST
        "X-Amz-Security-Token:AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM2"
        "2wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwth"
        "Ax7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQ"
        "DYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7"
        "ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSI"
        "lTJabIQwj2ICCR/oLxBA==\n" H_DATE,
      .creq = "POST\n" "/\n" "\n" C_HOST C_DATE
        "x-amz-security-token:AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM2"
        "2wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwth"
        "Ax7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQ"
        "DYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7"
        "ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSI"
        "lTJabIQwj2ICCR/oLxBA==\n" "\n"
        "host;x-amz-date;x-amz-security-token\n" EMPTY,
      .sts = STS_HEAD
        "c237e1b440d4c63c32ca95b5b99481081cb7b13c7e40434868e71567c1a882f6",
      .sig = "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"
    },
    { .name = "post-vanilla", .method = "POST", .path = "/",
      .headers = H_HOST H_DATE,
      .creq = "POST\n" "/\n" "\n" C_HOST C_DATE "\n" C_SIGNED EMPTY,
      .sts = STS_HEAD
        "553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87",
      .sig = "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
    },
    { .name = "post-vanilla-empty-query-value", .method = "POST", .path = "/",
      .query = "Param1=value1",
      .headers = H_HOST H_DATE,
      .creq = "POST\n" "/\n" "Param1=value1\n" C_HOST C_DATE "\n" C_SIGNED
        EMPTY,
      .sts = STS_HEAD
        "9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd",
      .sig = "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"
    },
    { .name = "post-vanilla-query", .method = "POST", .path = "/",
      .query = "Param1=value1",
      .headers = H_HOST H_DATE,
      .creq = "POST\n" "/\n" "Param1=value1\n" C_HOST C_DATE "\n" C_SIGNED
        EMPTY,
      .sts = STS_HEAD
        "9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd",
      .sig = "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"
    },
    { .name = "post-x-www-form-urlencoded", .method = "POST", .path = "/",
      .headers = "Content-Type:application/x-www-form-urlencoded\n" H_HOST
        "Content-Length:13\n" H_DATE
        "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329"
        "106275f4c7b24d0b6e\n",
      .payload =
        "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
      .creq = "POST\n" "/\n" "\n" "content-length:13\n"
        "content-type:application/x-www-form-urlencoded\n" C_HOST
        "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329"
        "106275f4c7b24d0b6e\n" C_DATE "\n"
        "content-length;content-type;host;x-amz-content-sha256;x-amz-date\n"
        "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
      .sts = STS_HEAD
        "b1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb",
      .sig = "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b"
    },
    { .name = "post-x-www-form-urlencoded-parameters", .method = "POST",
      .path = "/",
      .headers =
        "Content-Type:application/x-www-form-urlencoded; charset=utf-8\n"
        H_HOST "Content-Length:13\n" H_DATE
        "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329"
        "106275f4c7b24d0b6e\n",
      .payload =
        "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
      .creq = "POST\n" "/\n" "\n" "content-length:13\n"
        "content-type:application/x-www-form-urlencoded; charset=utf-8\n"
        C_HOST
        "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329"
        "106275f4c7b24d0b6e\n" C_DATE "\n"
        "content-length;content-type;host;x-amz-content-sha256;x-amz-date\n"
        "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
      .sts = STS_HEAD
        "a89f1a5b53e37702ee6363ce1da3ce8f54386f3c8f352ae652153c2982a0bc4d",
      .sig = "328d1b9eaadca9f5818ef05e8392801e091653bafec24fcab71e7344e7f51422"
    },
};


/* presigned: the query holds what the URL carries besides X-Amz-* */
static const vector_t  suite_query[] = {
    { .name = "get-vanilla", .method = "GET", .path = "/",
      .headers = H_HOST,
      .expires = 3600,
      .creq = "GET\n" "/\n" Q_XAMZ "X-Amz-SignedHeaders=host\n" C_HOST "\n"
        "host\n" EMPTY,
      .sts = STS_HEAD
        "bb7705b4aa3cb8e8f5e1e0b3d4c0b64030797a313c8ceee43e33117cc43eadc5",
      .sig = "e93c787ed7f371d5c6b165c1b38ede9550f4dce4144713e844b25b7192d3865d"
    },
    { .name = "get-vanilla-query-order-encoded", .method = "GET", .path = "/",
      .query = "Param-3=Value3&Param=Value2&%E1%88%B4=Value1",
      .headers = H_HOST,
      .expires = 3600,
      .creq = "GET\n" "/\n" "%E1%88%B4=Value1&Param=Value2&Param-3=Value3&"
        Q_XAMZ "X-Amz-SignedHeaders=host\n" C_HOST "\n" "host\n" EMPTY,
      .sts = STS_HEAD
        "9808d6cdc8245c74e705c68350fc6a62b91778cdd613890e5d177998c02c6f53",
      .sig = "c5f1848ceec943ac2ca68ee720460c23aaae30a2300586597ada94c4a65e4787"
    },
    { .name = "get-utf8", .method = "GET", .path = "/\xe1\x88\xb4",
      .headers = H_HOST,
      .expires = 3600,
      .creq = "GET\n" "/%E1%88%B4\n" Q_XAMZ "X-Amz-SignedHeaders=host\n"
        C_HOST "\n" "host\n" EMPTY,
      .sts = STS_HEAD
        "d8f78e05d0d9bb1c16ae1e60ed405de76cfb8fdcd3e414ffe65fad563b996d66",
      .sig = "10eae3f14a260bd3911cc6d008d3c576d143b05b62f09782a7a4b37f52178e44"
    },
    { .name = "get-space-unnormalized", .method = "GET",
      .path = "/example space/",
      .headers = H_HOST,
      .flags = CMS_SIGV4_NO_NORMALIZE,
      .expires = 3600,
      .creq = "GET\n" "/example%20space/\n" Q_XAMZ
        "X-Amz-SignedHeaders=host\n" C_HOST "\n" "host\n" EMPTY,
      .sts = STS_HEAD
        "cc3dd817bd405e51225826ec4934a96d065d6af5b6b0163c7a5abbd26a84519e",
      .sig = "7a1f416954786484c9824d93c1f26ef64acb9b1b6c9154d08c9f07d0e394abf6"
    },
    { .name = "get-header-value-trim", .method = "GET", .path = "/",
      .headers = H_HOST "My-Header1: value1\n" "My-Header2: \"a   b   c\"\n",
      .expires = 3600,
      .creq = "GET\n" "/\n" Q_XAMZ
        "X-Amz-SignedHeaders=host%3Bmy-header1%3Bmy-header2\n" C_HOST
        "my-header1:value1\n" "my-header2:\"a b c\"\n" "\n"
        "host;my-header1;my-header2\n" EMPTY,
      .sts = STS_HEAD
        "84c9e353b6161b689210977f93b93e6a7182f9ecb2ceae8af8c3d86b080a88ae",
      .sig = "e7bb0fd515e125e1aec2ecc4c0c17484fb06f6846b927c35e46005dd3df3acd4"
    },
    { .name = "get-vanilla-with-session-token", .method = "GET", .path = "/",
      .query =
        "X-Amz-Security-Token=6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00f"
        "a31553b73ebf194267",
      .headers = H_HOST,
      .expires = 3600,
      .creq = "GET\n" "/\n" Q_XAMZ
        "X-Amz-Security-Token=6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00f"
        "a31553b73ebf194267&X-Amz-SignedHeaders=host\n" C_HOST "\n" "host\n"
        EMPTY,
      .sts = STS_HEAD
        "cb30434103085aa9e73780fc60dc9a9df818fd2a7b1de12a9f6f4d791f898761",
      .sig = "7ff2b50b376cb4d151970630573d6291dc128cc5c2a12ffb237f73cc53f67b6c"
    },
    { .name = "post-sts-header-before", .method = "POST", .path = "/",
      .query =
        "X-Amz-Security-Token=AQoDYXdzEPT%2F%2F%2F%2F%2F%2F%2F%2F%2F%2FwEXAM"
        "PLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPf"
        "IeoIYRqTflfKD8YUuwthAx7mSEI%2FqkPpKPi%2FkMcGdQrmGdeehM4IC1NtBmUpp2w"
        "UE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNV"
        "XAkiY9q6d%2Bxo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz%2BscqKmlzm8FDrypNC9"
        "Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR%2FoLxBA%3D%3D",
      .headers = H_HOST,
      .expires = 3600,
      .creq = "POST\n" "/\n" Q_XAMZ
        "X-Amz-Security-Token=AQoDYXdzEPT%2F%2F%2F%2F%2F%2F%2F%2F%2F%2FwEXAM"
        "PLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPf"
        "IeoIYRqTflfKD8YUuwthAx7mSEI%2FqkPpKPi%2FkMcGdQrmGdeehM4IC1NtBmUpp2w"
        "UE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNV"
        "XAkiY9q6d%2Bxo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz%2BscqKmlzm8FDrypNC9"
        "Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR%2FoLxBA%3D%3D&X-Amz-Sign"
        "edHeaders=host\n" C_HOST "\n" "host\n" EMPTY,
      .sts = STS_HEAD
        "37f7ba7a2ec89e8b29a0d637bcc70d8e8d0fdba854ddfc5bc06a12398cfe8605",
      .sig = "46c2e3c63c1dbe7d39f8ada16fe7f001c1f56c5791441565323677f96308871c"
    },
    { .name = "post-x-www-form-urlencoded", .method = "POST", .path = "/",
      .headers = "Content-Type:application/x-www-form-urlencoded\n" H_HOST
        "Content-Length:13\n",
      .expires = 3600,
      .payload =
        "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
      .creq = "POST\n" "/\n" Q_XAMZ
        "X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost\n"
        "content-length:13\n"
        "content-type:application/x-www-form-urlencoded\n" C_HOST "\n"
        "content-length;content-type;host\n"
        "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
      .sts = STS_HEAD
        "ee5059a7c437165a28d0e775e6498be428761255d657d8c04cb1baa41de6514c",
      .sig = "89a40deed0f26f9461242825a082d2222717248abc7ab41f552ad84a94ad46e9"
    },
};


/* the S3 API Reference's examples */
static const vector_t  s3_examples[] = {
    {
      .name = "GET Object",
      .scope = &s3,
      .flags = CMS_SIGV4_S3,
      .method = "GET",
      .path = "/test.txt",
      .headers = S3_HOST "Range: bytes=0-9\n"
        "x-amz-content-sha256:" EMPTY "\n"
        "x-amz-date: 20130524T000000Z\n",
      .creq = "GET\n" "/test.txt\n" "\n" S3_C_HOST "range:bytes=0-9\n"
        "x-amz-content-sha256:" EMPTY "\n" S3_C_DATE "\n"
        "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY,
      .sts = S3_STS_HEAD
        "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
      .sig = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    },
    {
      .name = "PUT Object",
      .scope = &s3,
      .flags = CMS_SIGV4_S3,
      .method = "PUT",
      .path = "/test$file.text",
      .headers = S3_HOST "Date: Fri, 24 May 2013 00:00:00 GMT\n"
        "x-amz-date: 20130524T000000Z\n"
        "x-amz-storage-class: REDUCED_REDUNDANCY\n"
        "x-amz-content-sha256: "
        "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n",
      .payload =
        "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
      .creq = "PUT\n" "/test%24file.text\n" "\n"
        "date:Fri, 24 May 2013 00:00:00 GMT\n" S3_C_HOST
        "x-amz-content-sha256:"
        "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n"
        S3_C_DATE "x-amz-storage-class:REDUCED_REDUNDANCY\n" "\n"
        "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
        "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
      .sts = S3_STS_HEAD
        "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
      .sig = "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
    },
    {
      .name = "GET Bucket Lifecycle",
      .scope = &s3,
      .flags = CMS_SIGV4_S3,
      .method = "GET",
      .path = "/",
      .query = "lifecycle",
      .headers = S3_BUCKET_HEADERS,
      .creq = "GET\n" "/\n" "lifecycle=\n" S3_BUCKET_SIGNED,
      .sts = S3_STS_HEAD
        "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca",
      .sig = "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"
    },
    {
      .name = "GET Bucket (List Objects)",
      .scope = &s3,
      .flags = CMS_SIGV4_S3,
      .method = "GET",
      .path = "/",
      .query = "max-keys=2&prefix=J",
      .headers = S3_BUCKET_HEADERS,
      .creq = "GET\n" "/\n" "max-keys=2&prefix=J\n" S3_BUCKET_SIGNED,
      .sts = S3_STS_HEAD
        "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7",
      .sig = "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"
    },
    {
      .name = "presigned GET Object",
      .scope = &s3,
      .flags = CMS_SIGV4_S3,
      .method = "GET",
      .path = "/test.txt",
      .headers = S3_HOST,
      .expires = 86400,
      .payload = CMS_SIGV4_UNSIGNED,
      .creq = "GET\n" "/test.txt\n"
        "X-Amz-Algorithm=AWS4-HMAC-SHA256"
        "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3"
        "%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400"
        "&X-Amz-SignedHeaders=host\n" S3_C_HOST "\n" "host\n"
        "UNSIGNED-PAYLOAD",
      .sts = S3_STS_HEAD
        "3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04",
      .sig = "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
    }
};


/* the URL of the presigned example, as the S3 API Reference prints it */
static const char  s3_presigned_url[] =
    "https://examplebucket.s3.amazonaws.com/test.txt"
    "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3"
    "%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400"
    "&X-Amz-SignedHeaders=host"
    "&X-Amz-Signature="
    "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";


/* "Name:value\n" lines into hs (names and values point into text) */
static size_t
split_headers(const char *text, cms_sigv4_header_t *hs, size_t max)
{
    size_t       n;
    const char  *colon, *end;

    for (n = 0; *text != '\0'; text = end + 1, n++) {
        end = strchr(text, '\n');
        colon = memchr(text, ':', (size_t) (end - text));
        assert_non_null(end);
        assert_non_null(colon);
        assert_true(n < max);

        hs[n].name = text;
        hs[n].name_len = (size_t) (colon - text);
        hs[n].value = colon + 1;
        hs[n].value_len = (size_t) (end - colon - 1);
    }

    return n;
}


/* v as a request; its headers go into hs */
static cms_sigv4_request_t
request_of(const vector_t *v, cms_sigv4_header_t *hs)
{
    const char           *hash;
    cms_sigv4_request_t   r;

    hash = (v->payload != NULL) ? v->payload : EMPTY;

    memset(&r, 0, sizeof(r));
    r.method = v->method;
    r.method_len = strlen(v->method);
    r.path = v->path;
    r.path_len = strlen(v->path);
    r.query = v->query;
    r.query_len = (v->query != NULL) ? strlen(v->query) : 0;
    r.headers = hs;
    r.nheaders = split_headers(v->headers, hs, HEADERS_MAX);
    r.payload_hash = hash;
    r.payload_hash_len = strlen(hash);
    r.flags = v->flags;
    r.expires = v->expires;

    return r;
}


/*
 * The text "what" of r as s signs it, malloc'ed at exactly the size
 * cms_sigv4_size() gave (so ASAN sees a byte more written); that size is
 * the text's length and its NUL, and a byte less is refused.
 */
static char *
text_of(const cms_sigv4_request_t *r, const cms_sigv4_scope_t *s, int what)
{
    char    *out;
    size_t   size;

    assert_int_equal(cms_sigv4_size(r, s, what, &size), CMS_SIGV4_OK);
    out = malloc(size);
    assert_non_null(out);

    assert_int_equal(cms_sigv4_text(r, s, what, out, size - 1),
                     CMS_SIGV4_E_SPACE);
    assert_int_equal(cms_sigv4_text(r, s, what, out, size), CMS_SIGV4_OK);
    assert_int_equal(strlen(out), size - 1);

    return out;
}


/* line k (from 0; from the end when k < 0) of text, its length in *len */
static const char *
line_of(const char *text, int k, int *len)
{
    int          n;
    const char  *p, *nl;

    for (n = 1, p = text; *p != '\0'; p++) {
        n += (*p == '\n');
    }

    for (k = (k < 0) ? n + k : k, p = text; k > 0; k--) {
        p = strchr(p, '\n') + 1;
    }

    nl = strchr(p, '\n');
    *len = (nl != NULL) ? (int) (nl - p) : (int) strlen(p);

    return p;
}


/*
 * Signs v three ways and compares: the canonical request and the string
 * to sign as published, then the Authorization value or the presigned
 * query built from the published parts (the scope, the signed names or
 * the canonical query) and signature.
 */
static void
check_vector(const vector_t *v)
{
    int                       what, n1, n2;
    char                     *creq, *sts, *out, want[2048];
    const char               *p1, *p2;
    cms_sigv4_header_t        hs[HEADERS_MAX];
    cms_sigv4_request_t       r;
    const cms_sigv4_scope_t  *s;

    print_message("  %s\n", v->name);

    s = (v->scope != NULL) ? v->scope : &suite;
    r = request_of(v, hs);
    what = v->expires ? CMS_SIGV4_PRESIGNED_QUERY : CMS_SIGV4_AUTHORIZATION;

    creq = text_of(&r, s, CMS_SIGV4_CANONICAL_REQUEST);
    sts = text_of(&r, s, CMS_SIGV4_STRING_TO_SIGN);
    out = text_of(&r, s, what);

    assert_string_equal(creq, v->creq);
    assert_string_equal(sts, v->sts);

    if (v->expires == 0) {
        p1 = line_of(v->sts, 2, &n1);
        p2 = line_of(v->creq, -2, &n2);
        snprintf(want, sizeof(want), "AWS4-HMAC-SHA256 Credential=%.*s/%.*s, "
                 "SignedHeaders=%.*s, Signature=%s", (int) s->key_id_len,
                 s->key_id, n1, p1, n2, p2, v->sig);

    } else {
        p1 = line_of(v->creq, 2, &n1);
        snprintf(want, sizeof(want), "%.*s&X-Amz-Signature=%s", n1, p1,
                 v->sig);
    }

    assert_string_equal(out, want);

    free(creq);
    free(sts);
    free(out);
}


static void
check_all(const vector_t *v, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        check_vector(&v[i]);
    }
}


static void
test_suite_header(void **state)
{
    (void) state;

    check_all(suite_header, sizeof(suite_header) / sizeof(suite_header[0]));
}


static void
test_suite_query(void **state)
{
    (void) state;

    check_all(suite_query, sizeof(suite_query) / sizeof(suite_query[0]));
}


static void
test_s3_examples(void **state)
{
    char                 *query, url[1024];
    cms_sigv4_header_t    hs[HEADERS_MAX];
    cms_sigv4_request_t   r;

    (void) state;

    check_all(s3_examples, sizeof(s3_examples) / sizeof(s3_examples[0]));

    /* the presigned URL whole: host, path, "?", the query */
    r = request_of(&s3_examples[4], hs);
    query = text_of(&r, &s3, CMS_SIGV4_PRESIGNED_QUERY);
    snprintf(url, sizeof(url), "https://examplebucket.s3.amazonaws.com%s?%s",
             r.path, query);
    assert_string_equal(url, s3_presigned_url);
    free(query);

    /* S3 decodes the path before encoding it: "$" or "%24", one request */
    r = request_of(&s3_examples[1], hs);
    r.path = "/test%24file.text";
    r.path_len = strlen(r.path);
    query = text_of(&r, &s3, CMS_SIGV4_CANONICAL_REQUEST);
    assert_string_equal(query, s3_examples[1].creq);
    free(query);
}


static void
test_amz_date(void **state)
{
    char  out[CMS_SIGV4_DATE_LEN + 1];

    (void) state;

    assert_int_equal(cms_sigv4_amz_date(INT64_C(1440938160), out), 0);
    assert_string_equal(out, "20150830T123600Z");
    assert_int_equal(cms_sigv4_amz_date(INT64_C(1369353600), out), 0);
    assert_string_equal(out, "20130524T000000Z");
    assert_int_equal(cms_sigv4_amz_date(0, out), 0);
    assert_string_equal(out, "19700101T000000Z");
    assert_int_equal(cms_sigv4_amz_date(INT64_C(951782400), out), 0);
    assert_string_equal(out, "20000229T000000Z");
    assert_int_equal(cms_sigv4_amz_date(INT64_C(4102444799), out), 0);
    assert_string_equal(out, "20991231T235959Z");
    assert_int_equal(cms_sigv4_amz_date(INT64_C(253402300799), out), 0);
    assert_string_equal(out, "99991231T235959Z");

    assert_int_equal(cms_sigv4_amz_date(-1, out), CMS_SIGV4_E_TIME);
    assert_int_equal(cms_sigv4_amz_date(INT64_C(253402300800), out),
                     CMS_SIGV4_E_TIME);
}


static void
test_payload_hash(void **state)
{
    char  hex[CMS_SIGV4_HEX_LEN + 1];

    (void) state;

    assert_int_equal(cms_sigv4_payload_hash(NULL, 0, hex), CMS_SIGV4_OK);
    assert_string_equal(hex, EMPTY);

    /* the suite's post-x-www-form-urlencoded body, the S3 PUT's */
    assert_int_equal(cms_sigv4_payload_hash(S("Param1=value1"), hex), 0);
    assert_string_equal(hex, "9095672bbd1f56dfc5b65f3e153adc87"
                             "31a4a654192329106275f4c7b24d0b6e");
    assert_int_equal(cms_sigv4_payload_hash(S("Welcome to Amazon S3."), hex),
                     0);
    assert_string_equal(hex, "44ce7dd67c959e0d3524ffac1771dfbb"
                             "a87d2b6b4b4e99e42034a8b803f8b072");
}


/* the IAM User Guide's example key; then the cache, day by day */
static void
test_signing_key(void **state)
{
    unsigned char      key[CMS_SIGV4_KEY_LEN], first[CMS_SIGV4_KEY_LEN];
    vector_t           v;
    cms_sigv4_cache_t  cache;
    cms_sigv4_scope_t  s;

    static const unsigned char  iam[CMS_SIGV4_KEY_LEN] = {
        0xc4, 0xaf, 0xb1, 0xcc, 0x57, 0x71, 0xd8, 0x71,
        0x76, 0x3a, 0x39, 0x3e, 0x44, 0xb7, 0x03, 0x57,
        0x1b, 0x55, 0xcc, 0x28, 0x42, 0x4d, 0x1a, 0x5e,
        0x86, 0xda, 0x6e, 0xd3, 0xc1, 0x54, 0xa4, 0xb9
    };

    (void) state;

    s = suite;
    s.service = "iam";
    s.service_len = 3;

    assert_int_equal(cms_sigv4_signing_key(&s, key), CMS_SIGV4_OK);
    assert_memory_equal(key, iam, sizeof(key));

    /* kept, then served from the cache: a marked key comes back */
    memset(&cache, 0, sizeof(cache));
    s.cache = &cache;
    assert_int_equal(cms_sigv4_signing_key(&s, key), CMS_SIGV4_OK);
    assert_memory_equal(key, iam, sizeof(key));
    assert_int_equal(cache.scope_len, strlen("20150830/us-east-1/iam"));
    assert_memory_equal(cache.scope, "20150830/us-east-1/iam", 22);

    memset(cache.key, 0xaa, sizeof(cache.key));
    s.time += 3599;
    assert_int_equal(cms_sigv4_signing_key(&s, key), CMS_SIGV4_OK);
    assert_memory_equal(key, cache.key, sizeof(key));
    assert_int_equal(key[0], 0xaa);

    /* another secret, the same day: derived again, never the cached one */
    s.secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEZ";
    assert_int_equal(cms_sigv4_signing_key(&s, first), CMS_SIGV4_OK);
    assert_memory_not_equal(first, key, sizeof(key));
    assert_memory_not_equal(first, iam, sizeof(key));
    assert_memory_equal(cache.key, first, sizeof(first));

    /* the next day: derived again, and that day's scope kept */
    s.time += 86400;
    assert_int_equal(cms_sigv4_signing_key(&s, key), CMS_SIGV4_OK);
    assert_memory_not_equal(first, key, sizeof(key));
    assert_memory_equal(cache.scope, "20150831/us-east-1/iam", 22);

    /* a vector signed with a cache: once to fill it, once from it */
    s = suite;
    s.cache = &cache;
    v = suite_header[0];
    v.scope = &s;
    check_vector(&v);
    assert_int_equal(cache.scope_len, strlen("20150830/us-east-1/service"));
    check_vector(&v);
}


/* the path and query lines of the canonical request of GET path?query */
static void
check_lines(unsigned flags, const char *path, const char *query,
    const char *want)
{
    char                 *creq;
    const char           *p, *end;
    cms_sigv4_header_t    hs[1];
    cms_sigv4_request_t   r;
    vector_t              v;

    memset(&v, 0, sizeof(v));
    v.method = "GET";
    v.path = path;
    v.query = query;
    v.headers = H_HOST;
    v.flags = flags;

    r = request_of(&v, hs);
    creq = text_of(&r, &suite, CMS_SIGV4_CANONICAL_REQUEST);

    /* lines 1 and 2: from the first "\n" to the third */
    p = strchr(creq, '\n') + 1;
    end = strchr(strchr(p, '\n') + 1, '\n');

    print_message("  %s ? %s\n", path, (query != NULL) ? query : "");
    assert_int_equal(end - p, strlen(want));
    assert_memory_equal(p, want, strlen(want));

    free(creq);
}


static void
test_query_rules(void **state)
{
    (void) state;

    /* "%XX" decoded (any case), "+" a space, then encoded again */
    check_lines(0, "/", "a=x+y&b=%2b&c=%7e%41&d=b=c&e=%2F",
                "/\na=x%20y&b=%2B&c=~A&d=b%3Dc&e=%2F");

    /* empty pairs skipped; a name alone has an empty value */
    check_lines(0, "/", "&&b&a=&", "/\na=&b=");

    /* by name, then value; the encoded forms are compared */
    check_lines(0, "/", "b=2&a=1&a=0&a=", "/\na=&a=0&a=1&b=2");
    check_lines(0, "/", "~=1&%80=2&-=3", "/\n%80=2&-=3&~=1");
    check_lines(0, "/", "a%20b=1&a=2&A=3", "/\nA=3&a=2&a%20b=1");
    check_lines(0, "/", "\xe1\x88\xb4=2&%E1%88%B4=1",
                "/\n%E1%88%B4=1&%E1%88%B4=2");
    check_lines(0, "/", "", "/\n");
    check_lines(0, "/", NULL, "/\n");
}


static void
test_path_rules(void **state)
{
    (void) state;

    /* other services: normalized, and encoded as given ("%" too) */
    check_lines(0, "/a%20b", NULL, "/a%2520b\n");
    check_lines(0, "/a/./b/../c//d/", NULL, "/a/c/d/\n");
    check_lines(0, "/a/b/..", NULL, "/a\n");
    check_lines(0, "/../..", NULL, "/\n");
    check_lines(0, "", NULL, "/\n");
    check_lines(0, "/a+b/~$", NULL, "/a%2Bb/~%24\n");
    check_lines(CMS_SIGV4_NO_NORMALIZE, "//a/../", NULL, "//a/../\n");
    check_lines(CMS_SIGV4_NO_NORMALIZE, "", NULL, "/\n");

    /* S3: as given, "%XX" decoded (any case) and encoded again */
    check_lines(CMS_SIGV4_S3, "/a%20b", NULL, "/a%20b\n");
    check_lines(CMS_SIGV4_S3, "/a b", NULL, "/a%20b\n");
    check_lines(CMS_SIGV4_S3, "/%7e%41%2f", NULL, "/~A/\n");
    check_lines(CMS_SIGV4_S3, "/a/./b//+", NULL, "/a/./b//%2B\n");
    check_lines(CMS_SIGV4_S3, "/\xe1\x88\xb4", NULL, "/%E1%88%B4\n");
    check_lines(CMS_SIGV4_S3, "", NULL, "/\n");
}


static void
test_header_rules(void **state)
{
    char                 *creq;
    cms_sigv4_header_t    hs[HEADERS_MAX];
    cms_sigv4_request_t   r;
    vector_t              v;

    (void) state;

    memset(&v, 0, sizeof(v));
    v.method = "GET";
    v.path = "/";
    v.headers = "b: \t x  \t y \t\n" "X-A:1\n" "E:\n" "Host:h\n" "x-a: 2\n"
                "S:   \n" "A:\xc3\xa9\n";

    r = request_of(&v, hs);
    creq = text_of(&r, &suite, CMS_SIGV4_CANONICAL_REQUEST);
    assert_string_equal(creq, "GET\n/\n\n" "a:\xc3\xa9\n" "b:x y\n" "e:\n"
                        "host:h\n" "s:\n" "x-a:1,2\n" "\n"
                        "a;b;e;host;s;x-a\n" EMPTY);
    free(creq);

    /* no header at all signs nothing */
    r.nheaders = 0;
    creq = text_of(&r, &suite, CMS_SIGV4_CANONICAL_REQUEST);
    assert_string_equal(creq, "GET\n/\n\n\n\n" EMPTY);
    free(creq);
}


typedef struct {
    const char                 *name;
    const char                 *method;     /* NULL: "GET" */
    const char                 *path;       /* NULL: "/" */
    const char                 *query;
    const cms_sigv4_header_t   *header;     /* one more header */
    const char                 *payload;    /* NULL: the empty body's */
    unsigned                    flags;
    unsigned                    expires;
    int                         text;
    int                         rc;
} refusal_t;


#define H(n, v)  &(const cms_sigv4_header_t) { S(n), S(v) }

static const refusal_t  refusals[] = {
    { .name = "empty method", .method = "", .rc = CMS_SIGV4_E_METHOD },
    { .name = "method with a space", .method = "GE T",
      .rc = CMS_SIGV4_E_METHOD },
    { .name = "long method", .method = "GETGETGETGETGETGETGETGETGETGETGET",
      .rc = CMS_SIGV4_E_TOO_LONG },
    { .name = "relative path", .path = "a/b", .rc = CMS_SIGV4_E_PATH },
    { .name = "newline in a path", .path = "/a\nb", .rc = CMS_SIGV4_E_PATH },
    { .name = "DEL in a path", .path = "/a\x7f", .rc = CMS_SIGV4_E_PATH },
    { .name = "bad escape, S3 path", .path = "/a%zz", .flags = CMS_SIGV4_S3,
      .rc = CMS_SIGV4_E_PATH },
    { .name = "cut escape, S3 path", .path = "/a%2", .flags = CMS_SIGV4_S3,
      .rc = CMS_SIGV4_E_PATH },
    { .name = "bad escape, query", .query = "a=%g0", .rc = CMS_SIGV4_E_QUERY },
    { .name = "cut escape, query", .query = "a=%", .rc = CMS_SIGV4_E_QUERY },
    { .name = "empty header name", .header = H("", "x"),
      .rc = CMS_SIGV4_E_HEADER },
    { .name = "space in a header name", .header = H("My Header", "x"),
      .rc = CMS_SIGV4_E_HEADER },
    { .name = "colon in a header name", .header = H("a:b", "x"),
      .rc = CMS_SIGV4_E_HEADER },
    { .name = "control byte in a header name", .header = H("a\x01", "x"),
      .rc = CMS_SIGV4_E_HEADER },
    { .name = "CR LF in a value", .header = H("a", "x\r\nInjected: 1"),
      .rc = CMS_SIGV4_E_HEADER },
    { .name = "folded value (get-header-value-multiline)",
      .header = H("My-Header1", "value1\n  value2\n     value3"),
      .rc = CMS_SIGV4_E_HEADER },
    { .name = "NUL in a value", .header = H("a", "x\0y"),
      .rc = CMS_SIGV4_E_HEADER },
    { .name = "long header name", .rc = CMS_SIGV4_E_TOO_LONG,
      .header = H("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
                  "abcdefghijklm", "x") },
    { .name = "upper case payload hash", .rc = CMS_SIGV4_E_PAYLOAD,
      .payload = "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B"
                 "7852B855" },
    { .name = "short payload hash", .payload = "e3b0c44298fc1c149afbf4c8",
      .rc = CMS_SIGV4_E_PAYLOAD },
    { .name = "expiry on a header signature", .expires = 60,
      .text = CMS_SIGV4_AUTHORIZATION, .rc = CMS_SIGV4_E_EXPIRES },
    { .name = "presigned without an expiry",
      .text = CMS_SIGV4_PRESIGNED_QUERY, .rc = CMS_SIGV4_E_EXPIRES },
    { .name = "expiry past 7 days", .expires = CMS_SIGV4_EXPIRES_MAX + 1,
      .text = CMS_SIGV4_PRESIGNED_QUERY, .rc = CMS_SIGV4_E_EXPIRES },
    { .name = "a second X-Amz-Signature", .expires = 60,
      .query = "X-Amz-Signature=00", .text = CMS_SIGV4_PRESIGNED_QUERY,
      .rc = CMS_SIGV4_E_QUERY },
    { .name = "a second X-Amz-Date, encoded", .expires = 60,
      .query = "a=1&X-Amz-%44ate=1", .text = CMS_SIGV4_PRESIGNED_QUERY,
      .rc = CMS_SIGV4_E_QUERY },
    { .name = "no such text", .text = 4, .rc = CMS_SIGV4_E_TEXT },
    { .name = "no such text either", .text = -1, .rc = CMS_SIGV4_E_TEXT }
};


/* r's size and text both answer rc; rc is a known code with words */
static void
check_refused(const cms_sigv4_request_t *r, const cms_sigv4_scope_t *s,
    int text, int rc)
{
    char    out[256];
    size_t  size;

    size = 12345;
    assert_int_equal(cms_sigv4_size(r, s, text, &size), rc);
    assert_int_equal(size, 12345);
    assert_int_equal(cms_sigv4_text(r, s, text, out, sizeof(out)), rc);
    assert_string_not_equal(cms_sigv4_error(rc), "an unknown error");
}


static void
test_refused(void **state)
{
    size_t                i;
    cms_sigv4_header_t    hs[HEADERS_MAX];
    cms_sigv4_request_t   r;
    const refusal_t      *f;
    vector_t              v;

    (void) state;

    for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
        f = &refusals[i];
        print_message("  %s\n", f->name);

        memset(&v, 0, sizeof(v));
        v.method = (f->method != NULL) ? f->method : "GET";
        v.path = (f->path != NULL) ? f->path : "/";
        v.query = f->query;
        v.headers = H_HOST;
        v.payload = f->payload;
        v.flags = f->flags;
        v.expires = f->expires;

        r = request_of(&v, hs);

        if (f->header != NULL) {
            hs[r.nheaders++] = *f->header;
        }

        check_refused(&r, &suite, f->text, f->rc);
    }
}


/* the limits: one past each is refused, each itself is taken */
static void
test_limits(void **state)
{
    char                 *big, *out;
    size_t                i;
    cms_sigv4_header_t    hs[HEADERS_MAX];
    cms_sigv4_request_t   r;
    vector_t              v;

    (void) state;

    big = malloc(CMS_SIGV4_QUERY_MAX + 2);
    assert_non_null(big);

    memset(&v, 0, sizeof(v));
    v.method = "GET";
    v.path = "/";
    v.headers = H_HOST;
    r = request_of(&v, hs);

    /* CMS_SIGV4_HEADERS_MAX headers, then one more */
    for (i = 1; i < CMS_SIGV4_HEADERS_MAX + 1; i++) {
        hs[i] = hs[0];
    }

    r.nheaders = CMS_SIGV4_HEADERS_MAX;
    out = text_of(&r, &suite, CMS_SIGV4_AUTHORIZATION);
    free(out);
    r.nheaders++;
    check_refused(&r, &suite, CMS_SIGV4_AUTHORIZATION, CMS_SIGV4_E_TOO_MANY);
    r.nheaders = 1;

    /* a value of CMS_SIGV4_VALUE_MAX bytes, then one more */
    memset(big, 'v', CMS_SIGV4_VALUE_MAX + 1);
    hs[1] = (cms_sigv4_header_t) { S("x-v"), big, CMS_SIGV4_VALUE_MAX };
    r.nheaders = 2;
    out = text_of(&r, &suite, CMS_SIGV4_AUTHORIZATION);
    free(out);
    hs[1].value_len++;
    check_refused(&r, &suite, CMS_SIGV4_AUTHORIZATION, CMS_SIGV4_E_TOO_LONG);
    r.nheaders = 1;

    /* CMS_SIGV4_PARAMS_MAX parameters, then one more */
    for (i = 0; i <= CMS_SIGV4_PARAMS_MAX; i++) {
        memcpy(big + 2 * i, "a&", 2);
    }

    r.query = big;
    r.query_len = 2 * CMS_SIGV4_PARAMS_MAX;
    out = text_of(&r, &suite, CMS_SIGV4_CANONICAL_REQUEST);
    free(out);
    r.query_len += 2;
    check_refused(&r, &suite, CMS_SIGV4_AUTHORIZATION, CMS_SIGV4_E_TOO_MANY);

    /* a query of CMS_SIGV4_QUERY_MAX bytes, then one more */
    memset(big, 'q', CMS_SIGV4_QUERY_MAX + 1);
    r.query_len = CMS_SIGV4_QUERY_MAX;
    out = text_of(&r, &suite, CMS_SIGV4_CANONICAL_REQUEST);
    free(out);
    r.query_len++;
    check_refused(&r, &suite, CMS_SIGV4_CANONICAL_REQUEST,
                  CMS_SIGV4_E_TOO_LONG);
    r.query_len = 0;

    /* a path of CMS_SIGV4_PATH_MAX bytes, then one more */
    memset(big, '/', CMS_SIGV4_PATH_MAX + 1);
    r.path = big;
    r.path_len = CMS_SIGV4_PATH_MAX;
    out = text_of(&r, &suite, CMS_SIGV4_CANONICAL_REQUEST);
    assert_memory_equal(out, "GET\n/\n", 6);
    free(out);
    r.path_len++;
    check_refused(&r, &suite, CMS_SIGV4_CANONICAL_REQUEST,
                  CMS_SIGV4_E_TOO_LONG);

    free(big);
}


typedef struct {
    const char                 *name;
    const char                 *key_id;
    const char                 *secret;
    const char                 *region;
    const char                 *service;
    int64_t                     time;
    int                         rc;
} scope_refusal_t;


static const scope_refusal_t  scope_refusals[] = {
    { .name = "empty key id", .key_id = "", .rc = CMS_SIGV4_E_SCOPE },
    { .name = "\"/\" in a key id", .key_id = "AKID/X",
      .rc = CMS_SIGV4_E_SCOPE },
    { .name = "\",\" in a key id", .key_id = "AKID,X",
      .rc = CMS_SIGV4_E_SCOPE },
    { .name = "empty secret", .secret = "", .rc = CMS_SIGV4_E_SCOPE },
    { .name = "long secret", .rc = CMS_SIGV4_E_TOO_LONG,
      .secret = "0123456789012345678901234567890123456789012345678901234567890"
                "1234567890123456789012345678901234567890123456789012345678"
                "901234567890" },
    { .name = "empty region", .region = "", .rc = CMS_SIGV4_E_SCOPE },
    { .name = "\"/\" in a region", .region = "us/east",
      .rc = CMS_SIGV4_E_SCOPE },
    { .name = "long region", .region = "us-east-1-us-east-1-us-east-1-us-e",
      .rc = CMS_SIGV4_E_TOO_LONG },
    { .name = "space in a service", .service = "s 3",
      .rc = CMS_SIGV4_E_SCOPE },
    { .name = "before 1970", .time = -1, .rc = CMS_SIGV4_E_TIME },
    { .name = "after 9999", .time = INT64_C(253402300800),
      .rc = CMS_SIGV4_E_TIME }
};


static void
test_scope_refused(void **state)
{
    size_t                  i;
    unsigned char           key[CMS_SIGV4_KEY_LEN];
    cms_sigv4_header_t      hs[HEADERS_MAX];
    cms_sigv4_request_t     r;
    cms_sigv4_scope_t       s;
    const scope_refusal_t  *f;

    (void) state;

    r = request_of(&suite_header[0], hs);

    for (i = 0; i < sizeof(scope_refusals) / sizeof(scope_refusals[0]); i++) {
        f = &scope_refusals[i];
        print_message("  %s\n", f->name);

        s = suite;

        if (f->key_id != NULL) {
            s.key_id = f->key_id;
            s.key_id_len = strlen(f->key_id);
        }

        if (f->secret != NULL) {
            s.secret = f->secret;
            s.secret_len = strlen(f->secret);
        }

        if (f->region != NULL) {
            s.region = f->region;
            s.region_len = strlen(f->region);
        }

        if (f->service != NULL) {
            s.service = f->service;
            s.service_len = strlen(f->service);
        }

        s.time = (f->time != 0) ? f->time : s.time;

        check_refused(&r, &s, CMS_SIGV4_STRING_TO_SIGN, f->rc);
        assert_int_equal(cms_sigv4_signing_key(&s, key), f->rc);
    }
}


static void
test_errors(void **state)
{
    int                   rc;
    cms_sigv4_header_t    hs[HEADERS_MAX];
    cms_sigv4_request_t   r;

    (void) state;

    for (rc = CMS_SIGV4_OK; rc >= CMS_SIGV4_E_TEXT; rc--) {
        assert_string_not_equal(cms_sigv4_error(rc), "an unknown error");
    }

    assert_string_equal(cms_sigv4_error(1), "an unknown error");
    assert_string_equal(cms_sigv4_error(CMS_SIGV4_E_TEXT - 1),
                        "an unknown error");

    /* a NULL buffer would only count */
    r = request_of(&suite_header[0], hs);
    assert_int_equal(cms_sigv4_text(&r, &suite, 0, NULL, 100),
                     CMS_SIGV4_E_SPACE);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_suite_header),
        cmocka_unit_test(test_suite_query),
        cmocka_unit_test(test_s3_examples),
        cmocka_unit_test(test_amz_date),
        cmocka_unit_test(test_payload_hash),
        cmocka_unit_test(test_signing_key),
        cmocka_unit_test(test_query_rules),
        cmocka_unit_test(test_path_rules),
        cmocka_unit_test(test_header_rules),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_scope_refused),
        cmocka_unit_test(test_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
