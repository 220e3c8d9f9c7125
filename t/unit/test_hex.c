
/*
 * Unit tests for cms_hex.c.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_hex.h"


static void
test_encode(void **state)
{
    char                  out[16];
    static const uint8_t  in[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };

    (void) state;

    memset(out, '#', sizeof(out));
    cms_hex_encode(in, sizeof(in), out);
    assert_memory_equal(out, "00017f80abff", 12);

    /* exactly 2n characters, no NUL */
    assert_int_equal(out[12], '#');

    cms_hex_encode(in, 0, out);
    assert_int_equal(out[0], '0');
}


static void
test_decode(void **state)
{
    unsigned char         out[8];
    static const uint8_t  want[] = { 0xde, 0xad, 0xbe, 0xef, 0x09 };

    (void) state;

    assert_int_equal(cms_hex_decode("deadbeef09", 10, out), 0);
    assert_memory_equal(out, want, 5);

    assert_int_equal(cms_hex_decode("DEADBEEF09", 10, out), 0);
    assert_memory_equal(out, want, 5);

    assert_int_equal(cms_hex_decode("DeAdBeEf09", 10, out), 0);
    assert_memory_equal(out, want, 5);

    assert_int_equal(cms_hex_decode("", 0, out), 0);
}


static void
test_decode_bad(void **state)
{
    unsigned char  out[8];

    (void) state;

    assert_int_equal(cms_hex_decode("abc", 3, out), -1);
    assert_int_equal(cms_hex_decode("0g", 2, out), -1);
    assert_int_equal(cms_hex_decode("g0", 2, out), -1);
    assert_int_equal(cms_hex_decode("0 ", 2, out), -1);
    assert_int_equal(cms_hex_decode("0x", 2, out), -1);
    assert_int_equal(cms_hex_decode("/0", 2, out), -1);
    assert_int_equal(cms_hex_decode(":0", 2, out), -1);
    assert_int_equal(cms_hex_decode("@0", 2, out), -1);
    assert_int_equal(cms_hex_decode("G0", 2, out), -1);
    assert_int_equal(cms_hex_decode("`0", 2, out), -1);
    assert_int_equal(cms_hex_decode("\0" "0", 2, out), -1);
    assert_int_equal(cms_hex_decode("\xff" "0", 2, out), -1);
}


static void
test_round_trip(void **state)
{
    int            i;
    char           hex[512];
    unsigned char  in[256], out[256];

    (void) state;

    for (i = 0; i < 256; i++) {
        in[i] = (unsigned char) i;
    }

    cms_hex_encode(in, sizeof(in), hex);
    assert_int_equal(cms_hex_decode(hex, sizeof(hex), out), 0);
    assert_memory_equal(in, out, sizeof(in));
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_decode_bad),
        cmocka_unit_test(test_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
