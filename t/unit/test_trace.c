
/*
 * Unit tests for cms_trace.c.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_trace.h"


#define GOOD  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


static int
valid(const char *s)
{
    return cms_traceparent_valid((const unsigned char *) s, strlen(s));
}


static void
test_good(void **state)
{
    (void) state;

    assert_int_equal(strlen(GOOD), CMS_TRACEPARENT_LEN);
    assert_true(valid(GOOD));
    assert_true(valid("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"));
    assert_true(valid("00-00000000000000000000000000000001-0000000000000001-ff"));

    /* a later version: its first 55 bytes, then '-' and more */
    assert_true(valid("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    assert_true(valid("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                      "-what-comes-next"));
}


static void
test_bad(void **state)
{
    char  s[80];

    (void) state;

    assert_false(valid(""));
    assert_false(valid("00"));
    assert_false(cms_traceparent_valid((const unsigned char *) GOOD, 54));

    /* version 00 is exactly 55 bytes; a later one goes on only after '-' */
    assert_false(valid(GOOD "-"));
    assert_false(valid(GOOD "x"));
    assert_false(valid("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x"));

    /* version ff, uppercase, not hex */
    assert_false(valid("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    assert_false(valid("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"));
    assert_false(valid("0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    assert_false(valid("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0z"));

    /* all-zero ids */
    assert_false(valid("00-00000000000000000000000000000000-00f067aa0ba902b7-01"));
    assert_false(valid("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"));

    /* the separators */
    strcpy(s, GOOD);
    s[2] = '_';
    assert_false(valid(s));
    strcpy(s, GOOD);
    s[35] = '.';
    assert_false(valid(s));
    strcpy(s, GOOD);
    s[52] = ' ';
    assert_false(valid(s));
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
