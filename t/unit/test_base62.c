
/*
 * Unit tests for cms_base62.c.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_base62.h"


static void
test_encode_small(void **state)
{
    char                  out[8];
    static const uint8_t  n0[] = { 0, 0 }, n61[] = { 0, 61 };
    static const uint8_t  n62[] = { 0, 62 }, n3843[] = { 0x0f, 0x03 };

    (void) state;

    assert_int_equal(cms_base62_encode(n0, 2, out, 4), 0);
    assert_memory_equal(out, "0000", 4);

    assert_int_equal(cms_base62_encode(n61, 2, out, 4), 0);
    assert_memory_equal(out, "000z", 4);

    assert_int_equal(cms_base62_encode(n62, 2, out, 4), 0);
    assert_memory_equal(out, "0010", 4);

    /* 3843 = 62 * 62 - 1, the largest two-digit value */
    assert_int_equal(cms_base62_encode(n3843, 2, out, 2), 0);
    assert_memory_equal(out, "zz", 2);

    /* does not fit */
    assert_int_equal(cms_base62_encode(n62, 2, out, 1), -1);
    assert_int_equal(cms_base62_encode(n3843, 2, out, 1), -1);

    /* zero width holds only zero */
    assert_int_equal(cms_base62_encode(n0, 2, out, 0), 0);
    assert_int_equal(cms_base62_encode(n61, 2, out, 0), -1);
}


static void
test_encode_max(void **state)
{
    char           out[43];
    unsigned char  in[CMS_BASE62_MAX_BYTES + 1];

    (void) state;

    memset(in, 0xff, sizeof(in));

    /* 2^256 - 1, cross-checked with Python */
    assert_int_equal(cms_base62_encode(in, 32, out, 43), 0);
    assert_memory_equal(out, "yhjskwdA6OZ1AL1YmHWZWm8LLG7HjnuCA2j5rOw8Xp1",
                        43);

    /* 2^32 - 1 */
    assert_int_equal(cms_base62_encode(in, 4, out, 6), 0);
    assert_memory_equal(out, "4gfFC3", 6);

    assert_int_equal(cms_base62_encode(in, 4, out, 5), -1);
    assert_int_equal(cms_base62_encode(in, CMS_BASE62_MAX_BYTES + 1, out, 0),
                     -1);
}


static void
test_decode(void **state)
{
    unsigned char         out[32];
    static const uint8_t  max32[4] = { 0xff, 0xff, 0xff, 0xff };

    (void) state;

    assert_int_equal(cms_base62_decode("4gfFC3", 6, out, 4), 0);
    assert_memory_equal(out, max32, 4);

    assert_int_equal(cms_base62_decode("0010", 4, out, 2), 0);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 62);

    assert_int_equal(cms_base62_decode("", 0, out, 2), 0);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 0);

    /* 2^32 does not fit in 4 bytes */
    assert_int_equal(cms_base62_decode("4gfFC4", 6, out, 4), -1);
    assert_int_equal(cms_base62_decode("zzzzzz", 6, out, 4), -1);
    assert_int_equal(cms_base62_check("4gfFC3", 6, 4), 0);
    assert_int_equal(cms_base62_check("4gfFC4", 6, 4), -1);

    /* leading zeros are fine, however many */
    assert_int_equal(cms_base62_decode("000000000000001", 15, out, 1), 0);
    assert_int_equal(out[0], 1);

    assert_int_equal(cms_base62_decode("yhjskwdA6OZ1AL1YmHWZWm8LLG7HjnuCA2j5"
                                       "rOw8Xp2", 43, out, 32),
                     -1);
    assert_int_equal(cms_base62_check("yhjskwdA6OZ1AL1YmHWZWm8LLG7HjnuCA2j5"
                                      "rOw8Xp1", 43, 32),
                     0);

    assert_int_equal(cms_base62_check("1", 1, CMS_BASE62_MAX_BYTES + 1), -1);
}


static void
test_decode_bad_chars(void **state)
{
    int            c;
    char           s[2];
    unsigned char  out[2];

    (void) state;

    s[0] = '1';

    for (c = 0; c < 256; c++) {
        s[1] = (char) c;

        if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')
            || (c >= 'a' && c <= 'z'))
        {
            assert_int_equal(cms_base62_decode(s, 2, out, 2), 0);

        } else {
            assert_int_equal(cms_base62_decode(s, 2, out, 2), -1);
            assert_int_equal(cms_base62_check(s, 2, 2), -1);
        }
    }
}


static void
test_round_trip(void **state)
{
    int            i, j;
    char           s[43];
    unsigned char  in[32], out[32];

    (void) state;

    for (i = 0; i < 200; i++) {

        for (j = 0; j < 32; j++) {
            in[j] = (unsigned char) (i * 131 + j * 29 + (i ^ j));
        }

        assert_int_equal(cms_base62_encode(in, 32, s, 43), 0);
        assert_int_equal(cms_base62_decode(s, 43, out, 32), 0);
        assert_memory_equal(in, out, 32);
    }
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_encode_small),
        cmocka_unit_test(test_encode_max),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_decode_bad_chars),
        cmocka_unit_test(test_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
