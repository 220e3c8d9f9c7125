
/*
 * Unit tests for cms_base64url.c.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_base64url.h"


typedef struct {
    const char  *plain;
    const char  *encoded;
} vector_t;


/* RFC 4648 section 10, padding removed */
static const vector_t  rfc4648[] = {
    { "", "" },
    { "f", "Zg" },
    { "fo", "Zm8" },
    { "foo", "Zm9v" },
    { "foob", "Zm9vYg" },
    { "fooba", "Zm9vYmE" },
    { "foobar", "Zm9vYmFy" },
};

#define NVECTORS  (sizeof(rfc4648) / sizeof(rfc4648[0]))


/* decodes from an exactly-sized heap copy so overreads are caught */

static int
decode(const char *s, unsigned char *out, size_t *out_len)
{
    int     rc;
    char   *p;
    size_t  n;

    n = strlen(s);
    p = malloc(n ? n : 1);
    assert_non_null(p);
    memcpy(p, s, n);

    rc = cms_base64url_decode(p, n, out, out_len);

    free(p);

    return rc;
}


static void
test_rfc4648(void **state)
{
    char           enc[16];
    size_t         i, n, len;
    unsigned char  dec[16];

    (void) state;

    for (i = 0; i < NVECTORS; i++) {
        len = strlen(rfc4648[i].plain);

        n = cms_base64url_encode((const unsigned char *) rfc4648[i].plain,
                                 len, enc);
        assert_int_equal(n, strlen(rfc4648[i].encoded));
        assert_int_equal(n, cms_base64url_encoded_len(len));
        assert_memory_equal(enc, rfc4648[i].encoded, n);

        n = 99;
        assert_int_equal(decode(rfc4648[i].encoded, dec, &n), 0);
        assert_int_equal(n, len);
        assert_int_equal(n, cms_base64url_decoded_max(
                                strlen(rfc4648[i].encoded)));
        assert_memory_equal(dec, rfc4648[i].plain, len);
    }
}


static void
test_url_alphabet(void **state)
{
    char                  enc[8];
    size_t                n;
    unsigned char         dec[8];
    static const uint8_t  in[] = { 0xfb, 0xff, 0xbf };

    (void) state;

    /* standard base64 would be "+/+/" */
    n = cms_base64url_encode(in, 3, enc);
    assert_int_equal(n, 4);
    assert_memory_equal(enc, "-_-_", 4);

    assert_int_equal(decode("-_-_", dec, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(dec, in, 3);
}


static void
test_jws_header(void **state)
{
    size_t              n;
    unsigned char       dec[64];
    static const char   hdr[] = "{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}";
    static const char   enc[] = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9";

    (void) state;

    /* RFC 7515 appendix A.1 */
    assert_int_equal(decode(enc, dec, &n), 0);
    assert_int_equal(n, sizeof(hdr) - 1);
    assert_memory_equal(dec, hdr, n);
}


static void
test_strict(void **state)
{
    size_t          i, n;
    unsigned char   dec[16];

    static const char  *bad[] = {
        "Zg==", "Zg=", "Zm8=", "Zm9v====", "=", "====",
        "Z", "Zm9vY", "Zm9vYmFyZ",
        "Zm9v\n", "Zm9v ", " Zm9v", "Zm 9v", "Zm9v\r\n",
        "Zm+v", "Zm/v", "Zm9v+w", "Zm.v", "Zm9v!", "Zm9v\x80", "Zm9v\xff",
        "Zh", "Zn", "Zm9", "Zm-", "Zm9vYh", "Zm9vYmF",
        "_x", "__9", "__-",
    };

    (void) state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        n = 12345;

        if (decode(bad[i], dec, &n) != -1) {
            fail_msg("accepted \"%s\"", bad[i]);
        }

        assert_int_equal(n, 12345);
    }

    /* a NUL is just a bad character */
    assert_int_equal(cms_base64url_decode("Zm\0v", 4, dec, &n), -1);

    /* the canonical neighbours of the non-canonical ones above */
    assert_int_equal(decode("Zg", dec, &n), 0);
    assert_int_equal(decode("Zm8", dec, &n), 0);
    assert_int_equal(decode("_w", dec, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(dec[0], 0xff);
    assert_int_equal(decode("_-8", dec, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(dec[0], 0xff);
    assert_int_equal(dec[1], 0xef);
}


static void
test_lengths(void **state)
{
    size_t  n;

    (void) state;

    assert_int_equal(cms_base64url_encoded_len(0), 0);
    assert_int_equal(cms_base64url_encoded_len(1), 2);
    assert_int_equal(cms_base64url_encoded_len(2), 3);
    assert_int_equal(cms_base64url_encoded_len(3), 4);
    assert_int_equal(cms_base64url_encoded_len(32), 43);

    assert_int_equal(cms_base64url_decoded_max(0), 0);
    assert_int_equal(cms_base64url_decoded_max(2), 1);
    assert_int_equal(cms_base64url_decoded_max(3), 2);
    assert_int_equal(cms_base64url_decoded_max(4), 3);
    assert_int_equal(cms_base64url_decoded_max(43), 32);

    for (n = 0; n < 1000; n++) {
        assert_int_equal(
            cms_base64url_decoded_max(cms_base64url_encoded_len(n)), n);
    }
}


static void
test_round_trip(void **state)
{
    char           *enc;
    size_t          i, n, len, out_len;
    unsigned char   in[300], *dec;

    (void) state;

    for (i = 0; i < sizeof(in); i++) {
        in[i] = (unsigned char) (i * 167 + 13);
    }

    for (len = 0; len <= sizeof(in); len++) {
        enc = malloc(cms_base64url_encoded_len(len) + 1);
        dec = malloc(cms_base64url_decoded_max(
                         cms_base64url_encoded_len(len)) + 1);
        assert_non_null(enc);
        assert_non_null(dec);

        n = cms_base64url_encode(in, len, enc);
        assert_int_equal(n, cms_base64url_encoded_len(len));

        assert_int_equal(cms_base64url_decode(enc, n, dec, &out_len), 0);
        assert_int_equal(out_len, len);
        assert_memory_equal(dec, in, len);

        free(enc);
        free(dec);
    }
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_rfc4648),
        cmocka_unit_test(test_url_alphabet),
        cmocka_unit_test(test_jws_header),
        cmocka_unit_test(test_strict),
        cmocka_unit_test(test_lengths),
        cmocka_unit_test(test_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
