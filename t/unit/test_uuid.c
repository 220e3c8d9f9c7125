
/*
 * Unit tests for cms_uuid.c.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_uuid.h"


/* RFC 9562 appendix A.6: the example UUIDv7 and its fields */

static const char     rfc_uuid[] = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
static const uint8_t  rfc_rand[CMS_UUID7_RAND_LEN] = {
    0x0c, 0xc3, 0x18, 0xc4, 0xdc, 0x0c, 0x0c, 0x07, 0x39, 0x8f
};
static const uint64_t  rfc_ms = 0x017f22e279b0;


static void
test_uuid7_rfc_vector(void **state)
{
    char  out[CMS_UUID_LEN + 1];

    (void) state;

    out[CMS_UUID_LEN] = '#';
    cms_uuid7_format(rfc_ms, rfc_rand, out);

    assert_memory_equal(out, rfc_uuid, CMS_UUID_LEN);
    assert_int_equal(out[CMS_UUID_LEN], '#');
}


static void
test_uuid7_bits(void **state)
{
    char           out[CMS_UUID_LEN];
    unsigned char  b[CMS_UUID_BYTES], ones[CMS_UUID7_RAND_LEN];
    unsigned char  zeros[CMS_UUID7_RAND_LEN];

    (void) state;

    memset(ones, 0xff, sizeof(ones));
    memset(zeros, 0, sizeof(zeros));

    /* random bits never touch the version or variant */

    cms_uuid7_format(0, ones, out);
    assert_memory_equal(out, "00000000-0000-7fff-bfff-ffffffffffff",
                        CMS_UUID_LEN);

    cms_uuid7_format(0, zeros, out);
    assert_memory_equal(out, "00000000-0000-7000-8000-000000000000",
                        CMS_UUID_LEN);

    /* only the low 48 bits of the timestamp are used */

    cms_uuid7_format(((uint64_t) 1 << 48) | 0x0123456789ab, zeros, out);
    assert_memory_equal(out, "01234567-89ab-7000-8000-000000000000",
                        CMS_UUID_LEN);

    cms_uuid7_format(UINT64_MAX, rfc_rand, out);
    assert_int_equal(cms_uuid_parse(out, CMS_UUID_LEN, b), 0);
    assert_int_equal(b[6] >> 4, 7);
    assert_int_equal(b[8] >> 6, 2);
}


static void
test_uuid7_order(void **state)
{
    char           a[CMS_UUID_LEN], b[CMS_UUID_LEN];
    unsigned char  ones[CMS_UUID7_RAND_LEN], zeros[CMS_UUID7_RAND_LEN];

    (void) state;

    memset(ones, 0xff, sizeof(ones));
    memset(zeros, 0, sizeof(zeros));

    /* a later millisecond sorts after, whatever the random bits */

    cms_uuid7_format(1700000000000, ones, a);
    cms_uuid7_format(1700000000001, zeros, b);

    assert_true(memcmp(a, b, CMS_UUID_LEN) < 0);
}


static void
test_parse(void **state)
{
    char           out[CMS_UUID_LEN];
    unsigned char  b[CMS_UUID_BYTES];

    static const uint8_t  want[CMS_UUID_BYTES] = {
        0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0, 0x7c, 0xc3,
        0x98, 0xc4, 0xdc, 0x0c, 0x0c, 0x07, 0x39, 0x8f
    };

    (void) state;

    assert_int_equal(cms_uuid_parse(rfc_uuid, CMS_UUID_LEN, b), 0);
    assert_memory_equal(b, want, CMS_UUID_BYTES);

    assert_int_equal(cms_uuid_parse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F",
                                    CMS_UUID_LEN, b),
                     0);
    assert_memory_equal(b, want, CMS_UUID_BYTES);

    assert_int_equal(cms_uuid_parse("017f22E2-79b0-7Cc3-98C4-dc0c0C07398f",
                                    CMS_UUID_LEN, b),
                     0);
    assert_memory_equal(b, want, CMS_UUID_BYTES);

    cms_uuid_format(b, out);
    assert_memory_equal(out, rfc_uuid, CMS_UUID_LEN);

    /* any version, nil and max included */
    assert_true(cms_uuid_valid("00000000-0000-0000-0000-000000000000", 36));
    assert_true(cms_uuid_valid("ffffffff-ffff-ffff-ffff-ffffffffffff", 36));
    assert_true(cms_uuid_valid("6ba7b810-9dad-11d1-80b4-00c04fd430c8", 36));
}


static void
test_parse_bad(void **state)
{
    size_t          i;
    unsigned char   b[CMS_UUID_BYTES];

    static const char  *bad[] = {
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f0",
        "017f22e279b07cc398c4dc0c0c07398f",
        "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}",
        "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        " 17f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398 ",
        "017f22e2_79b0-7cc3-98c4-dc0c0c07398f",
        "017f22e2-79b0-7cc3-98c4_dc0c0c07398f",
        "017f22e-279b0-7cc3-98c4-dc0c0c07398f",
        "017f22e2-79b-07cc3-98c4-dc0c0c07398f",
        "017f22e2-79b0-7cc-398c4-dc0c0c07398f",
        "017f22e2-79b0-7cc3-98c-4dc0c0c07398f",
        "017f22e2-79b0-7cc3-98c4-dc0c0c0739-f",
        "-17f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "017g22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398g",
        "017f22e2-+9b0-7cc3-98c4-dc0c0c07398f",
        "0x7f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "",
    };

    (void) state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(cms_uuid_parse(bad[i], strlen(bad[i]), b), -1);
        assert_false(cms_uuid_valid(bad[i], strlen(bad[i])));
    }

    /* a NUL in the middle is just a bad character */
    assert_false(cms_uuid_valid("017f22e2-79b0-7cc3-98c4-dc0c0c07\0" "98f",
                                CMS_UUID_LEN));

    /* a valid UUID followed by more bytes is refused by length */
    assert_false(cms_uuid_valid(rfc_uuid, sizeof(rfc_uuid)));
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_uuid7_rfc_vector),
        cmocka_unit_test(test_uuid7_bits),
        cmocka_unit_test(test_uuid7_order),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_bad),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
