
/*
 * Unit tests for cms_jwt.c.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cms_jwt.h"
#include "cms_kdf.h"
#include "cms_base64url.h"


/*
 * Computed with the shell, independently of this code (key bytes 0..31):
 *   printf %s "$H.$B" | openssl dgst -sha256 -mac HMAC \
 *       -macopt hexkey:000102...1f -binary | basenc --base64url
 */

static const char  vec_payload[] =
    "{\"sub\":\"00000000-0000-0000-0000-000000000001\","
    "\"sid\":\"0123456789abcdef0123456789abcdef\","
    "\"iat\":1700000000,\"exp\":1700086400}";

static const char  vec_token[] =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIwMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDEiLCJzaWQiOiIw"
    "MTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc4OWFiY2RlZiIsImlhdCI6MTcwMDAwMDAwMCwiZXhw"
    "IjoxNzAwMDg2NDAwfQ."
    "1UFLOphnmO2pu00IaQL492Df3P35ISgAb0agHG7R74k";

/* base64url of other headers */
#define HDR_NONE     "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"
#define HDR_RS256    "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9"
#define HDR_HS512    "eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9"
#define HDR_SWAPPED  "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9"
#define HDR_NO_TYP   "eyJhbGciOiJIUzI1NiJ9"


static unsigned char  key[CMS_JWT_KEY_LEN];


static int
setup(void **state)
{
    int  i;

    (void) state;

    for (i = 0; i < CMS_JWT_KEY_LEN; i++) {
        key[i] = (unsigned char) i;
    }

    return 0;
}


static int
verify(const char *token, size_t len)
{
    size_t         n;
    unsigned char  payload[CMS_JWT_MAX_PAYLOAD];

    return cms_jwt_verify(key, token, len, payload, sizeof(payload), &n);
}


static int
verify_str(const char *token)
{
    return verify(token, strlen(token));
}


/* token for header_b64 "." payload_b64, signed with key like a real one */

static size_t
forge(const char *header_b64, const char *payload, char *out)
{
    size_t         n;
    unsigned char  mac[CMS_KDF_LEN];

    n = (size_t) sprintf(out, "%s.", header_b64);
    n += cms_base64url_encode((const unsigned char *) payload,
                              strlen(payload), out + n);

    assert_int_equal(cms_hmac_sha256(key, sizeof(key),
                                     (unsigned char *) out, n, mac), 0);

    out[n++] = '.';
    n += cms_base64url_encode(mac, sizeof(mac), out + n);
    out[n] = '\0';

    return n;
}


static void
test_known_vector(void **state)
{
    char           out[512];
    size_t         n, plen;
    unsigned char  payload[512];

    (void) state;

    memset(out, '#', sizeof(out));

    n = cms_jwt_sign(key, vec_payload, sizeof(vec_payload) - 1, out,
                     sizeof(out));

    assert_int_equal(n, sizeof(vec_token) - 1);
    assert_memory_equal(out, vec_token, n);
    assert_int_equal(out[n], '#');

    plen = 12345;
    assert_int_equal(cms_jwt_verify(key, vec_token, sizeof(vec_token) - 1,
                                    payload, sizeof(payload), &plen),
                     CMS_JWT_OK);
    assert_int_equal(plen, sizeof(vec_payload) - 1);
    assert_memory_equal(payload, vec_payload, plen);
}


static void
test_round_trip(void **state)
{
    char           json[200], tok[512];
    size_t         len, n, plen;
    unsigned char  payload[200];

    (void) state;

    /* every payload length modulo 3, so every base64url tail */

    for (len = 1; len < sizeof(json); len++) {
        memset(json, 'a' + (int) (len % 26), len);
        json[0] = '{';

        n = cms_jwt_sign(key, json, len, tok, sizeof(tok));
        assert_true(n > 0);

        assert_int_equal(cms_jwt_verify(key, tok, n, payload,
                                        sizeof(payload), &plen),
                         CMS_JWT_OK);
        assert_int_equal(plen, len);
        assert_memory_equal(payload, json, len);

        /* the payload buffer must hold the payload */

        assert_int_equal(cms_jwt_verify(key, tok, n, payload, len - 1,
                                        &plen),
                         CMS_JWT_MALFORMED);
    }
}


static void
test_sizes(void **state)
{
    char           json[CMS_JWT_MAX_PAYLOAD + 1];
    char           tok[CMS_JWT_MAX_LEN + 8];
    size_t         n, plen;
    unsigned char  payload[CMS_JWT_MAX_PAYLOAD];

    (void) state;

    assert_int_equal(CMS_JWT_MAX_PAYLOAD,
                     cms_base64url_decoded_max(CMS_JWT_MAX_LEN
                                               - CMS_JWT_HEADER_LEN - 2
                                               - CMS_JWT_SIG_LEN));

    memset(json, '7', sizeof(json));

    /* the longest payload makes a token of exactly CMS_JWT_MAX_LEN */

    n = cms_jwt_sign(key, json, CMS_JWT_MAX_PAYLOAD, tok, sizeof(tok));
    assert_int_equal(n, CMS_JWT_MAX_LEN);
    assert_int_equal(cms_jwt_verify(key, tok, n, payload, sizeof(payload),
                                    &plen),
                     CMS_JWT_OK);
    assert_int_equal(plen, CMS_JWT_MAX_PAYLOAD);

    /* one byte more is refused; so is a token one character longer */

    assert_int_equal(cms_jwt_sign(key, json, CMS_JWT_MAX_PAYLOAD + 1, tok,
                                  sizeof(tok)), 0);

    tok[n] = 'A';
    assert_int_equal(verify(tok, n + 1), CMS_JWT_MALFORMED);

    /* an empty payload would make a token verify refuses */

    assert_int_equal(cms_jwt_sign(key, "", 0, tok, sizeof(tok)), 0);
    assert_int_equal(verify(NULL, 0), CMS_JWT_MALFORMED);

    /* out too small by one */

    n = cms_jwt_sign(key, "{}", 2, tok, sizeof(tok));
    assert_int_equal(n, CMS_JWT_HEADER_LEN + 1 + 3 + 1 + CMS_JWT_SIG_LEN);
    assert_int_equal(cms_jwt_sign(key, "{}", 2, tok, n - 1), 0);
    assert_int_equal(cms_jwt_sign(key, "{}", 2, tok, n), n);
}


static void
test_tampered(void **state)
{
    char    tok[sizeof(vec_token)];
    size_t  i, n, hdr, sig;

    (void) state;

    n = sizeof(vec_token) - 1;
    hdr = CMS_JWT_HEADER_LEN;
    sig = n - CMS_JWT_SIG_LEN;

    /* flipping any one character is refused, with the matching code */

    for (i = 0; i < n; i++) {
        memcpy(tok, vec_token, sizeof(tok));

        if (tok[i] == '.') {
            continue;
        }

        tok[i] = (tok[i] == 'A') ? 'B' : 'A';

        if (i < hdr) {
            assert_int_equal(verify(tok, n), CMS_JWT_BAD_ALG);

        } else if (i < sig) {
            assert_int_equal(verify(tok, n), CMS_JWT_BAD_SIGNATURE);

        } else if (i < n - 1) {
            assert_int_equal(verify(tok, n), CMS_JWT_BAD_SIGNATURE);

        } else {
            /* the last character of 43 carries 2 unused bits: 'A' and 'B'
             * differ there, so either the bits or the MAC is wrong */
            assert_true(verify(tok, n) == CMS_JWT_MALFORMED
                        || verify(tok, n) == CMS_JWT_BAD_SIGNATURE);
        }
    }

    /* a valid token under another key */

    key[0] ^= 1;
    assert_int_equal(verify_str(vec_token), CMS_JWT_BAD_SIGNATURE);
    key[0] ^= 1;
    assert_int_equal(verify_str(vec_token), CMS_JWT_OK);

    /* the signature of another payload */

    memcpy(tok, vec_token, sizeof(tok));
    assert_true(cms_jwt_sign(key, "{\"sub\":1}", 9, tok, sizeof(tok)) > 0);
    memcpy(tok + CMS_JWT_HEADER_LEN + 1 + 12 + 1, vec_token + sig,
           CMS_JWT_SIG_LEN);
    assert_int_equal(verify(tok, CMS_JWT_HEADER_LEN + 1 + 12 + 1
                                 + CMS_JWT_SIG_LEN),
                     CMS_JWT_BAD_SIGNATURE);
}


static void
test_bad_alg(void **state)
{
    char  tok[512];

    (void) state;

    /* alg none: empty signature (the classic), then with a signature */

    sprintf(tok, "%s.eyJzdWIiOiIxIn0.", HDR_NONE);
    assert_int_equal(verify_str(tok), CMS_JWT_MALFORMED);

    forge(HDR_NONE, "{\"sub\":\"1\"}", tok);
    assert_int_equal(verify_str(tok), CMS_JWT_BAD_ALG);

    /* RS256 header HMAC-signed with our key (the key confusion attack) */

    forge(HDR_RS256, "{\"sub\":\"1\"}", tok);
    assert_int_equal(verify_str(tok), CMS_JWT_BAD_ALG);

    forge(HDR_HS512, "{\"sub\":\"1\"}", tok);
    assert_int_equal(verify_str(tok), CMS_JWT_BAD_ALG);

    /* same meaning, other bytes: still refused, the header is fixed */

    forge(HDR_SWAPPED, "{\"sub\":\"1\"}", tok);
    assert_int_equal(verify_str(tok), CMS_JWT_BAD_ALG);

    forge(HDR_NO_TYP, "{\"sub\":\"1\"}", tok);
    assert_int_equal(verify_str(tok), CMS_JWT_BAD_ALG);

    /* and the same forge with the right header is accepted */

    forge(CMS_JWT_HEADER, "{\"sub\":\"1\"}", tok);
    assert_int_equal(verify_str(tok), CMS_JWT_OK);
}


static void
test_malformed(void **state)
{
    char    tok[sizeof(vec_token) + 8];
    size_t  n, sig;

    static const char  *tails[] = { "=", "==", ".", ".AAAA", "\n", " " };

    static const char  *bad[] = {
        "", ".", "..", "...", "a", "a.b", "a.b.", ".b.c", "a..c",
        "a.b.c.d", "a.b.c.", "AAAA.AAAA.AAAA.AAAA",
        CMS_JWT_HEADER, CMS_JWT_HEADER ".", CMS_JWT_HEADER "..",
        CMS_JWT_HEADER ".e30", CMS_JWT_HEADER ".e30.",
        CMS_JWT_HEADER ".e30=.AAAA", CMS_JWT_HEADER ".e3 0.AAAA",
        CMS_JWT_HEADER ".e30.AAAA=", CMS_JWT_HEADER ".e+0.AAAA",
        CMS_JWT_HEADER ".e/0.AAAA", CMS_JWT_HEADER ".e30AA.AAAA",
        CMS_JWT_HEADER ".e31.AAAA",     /* stray bits: e30 is "{}" */
        CMS_JWT_HEADER "=.e30.AAAA", " " CMS_JWT_HEADER ".e30.AAAA",
    };

    (void) state;

    for (n = 0; n < sizeof(bad) / sizeof(bad[0]); n++) {
        assert_int_equal(verify_str(bad[n]), CMS_JWT_MALFORMED);
    }

    n = sizeof(vec_token) - 1;
    sig = n - CMS_JWT_SIG_LEN;

    /* truncated signature, then truncated at each dot */

    assert_true(verify(vec_token, n - 1) != CMS_JWT_OK);
    assert_int_equal(verify(vec_token, n - 2), CMS_JWT_MALFORMED);
    assert_int_equal(verify(vec_token, sig), CMS_JWT_MALFORMED);
    assert_int_equal(verify(vec_token, sig - 1), CMS_JWT_MALFORMED);
    assert_int_equal(verify(vec_token, CMS_JWT_HEADER_LEN + 1),
                     CMS_JWT_MALFORMED);

    /* padding, a trailing dot, a fourth segment, a newline, a NUL */

    for (n = 0; n < sizeof(tails) / sizeof(tails[0]); n++) {
        strcpy(tok, vec_token);
        strcat(tok, tails[n]);
        assert_int_equal(verify_str(tok), CMS_JWT_MALFORMED);
    }

    memcpy(tok, vec_token, sizeof(vec_token));
    tok[sizeof(vec_token) - 1] = '\0';
    assert_int_equal(verify(tok, sizeof(vec_token)), CMS_JWT_MALFORMED);

    /* an extra dot inside the payload */

    memcpy(tok, vec_token, CMS_JWT_HEADER_LEN + 5);
    tok[CMS_JWT_HEADER_LEN + 5] = '.';
    strcpy(tok + CMS_JWT_HEADER_LEN + 6, vec_token + CMS_JWT_HEADER_LEN + 5);
    assert_int_equal(verify_str(tok), CMS_JWT_MALFORMED);
}


static void
test_signature_form(void **state)
{
    char    tok[sizeof(vec_token) + 8];
    size_t  n;

    (void) state;

    n = sizeof(vec_token) - 1;

    /* a well-formed signature of the wrong length is a bad signature */

    memcpy(tok, vec_token, n);
    memcpy(tok + n, "AAAA", 4);
    assert_int_equal(verify(tok, n + 4), CMS_JWT_BAD_SIGNATURE);

    assert_int_equal(verify(vec_token, n - 3), CMS_JWT_BAD_SIGNATURE);

    /* the same 32 bytes spelled with non-zero unused bits: 'k' -> 'l' */

    memcpy(tok, vec_token, n);
    assert_int_equal(tok[n - 1], 'k');
    tok[n - 1] = 'l';
    assert_int_equal(verify(tok, n), CMS_JWT_MALFORMED);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_known_vector),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_tampered),
        cmocka_unit_test(test_bad_alg),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_signature_form),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
