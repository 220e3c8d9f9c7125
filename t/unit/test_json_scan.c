
/*
 * Unit tests for cms_json_scan.c.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_json_scan.h"


/*
 * Scans s from an exactly-sized heap copy, so valgrind or ASAN catch any
 * read past the end (a string literal would hide it behind its NUL).
 */

static int
depth_ok(const char *s, unsigned max)
{
    int             rc;
    size_t          len;
    unsigned char  *p;

    len = strlen(s);
    p = malloc(len ? len : 1);
    assert_non_null(p);
    memcpy(p, s, len);

    rc = cms_json_depth_ok(p, len, max);

    free(p);

    return rc;
}


/* the smallest max_depth that s passes */

static unsigned
depth_of(const char *s)
{
    unsigned  d;

    for (d = 0; d < 1000; d++) {
        if (depth_ok(s, d)) {
            return d;
        }
    }

    fail_msg("no depth found for %s", s);

    return 0;
}


static void
test_scalars(void **state)
{
    (void) state;

    assert_int_equal(depth_of(""), 0);
    assert_int_equal(depth_of("1"), 0);
    assert_int_equal(depth_of("null"), 0);
    assert_int_equal(depth_of("\"abc\""), 0);
    assert_int_equal(cms_json_depth_ok(NULL, 0, 0), 1);
}


static void
test_nesting(void **state)
{
    (void) state;

    assert_int_equal(depth_of("[]"), 1);
    assert_int_equal(depth_of("{}"), 1);
    assert_int_equal(depth_of("{\"a\":[1]}"), 2);
    assert_int_equal(depth_of("[[1],[2,[3]],{\"b\":{}}]"), 3);
    assert_int_equal(depth_of("[{\"a\":{\"b\":[[]]}}]"), 5);

    /* siblings do not add up */
    assert_int_equal(depth_of("[[]][[]][[]]"), 2);
    assert_int_equal(depth_of("[[],[],[]]"), 2);

    assert_int_equal(depth_ok("[[]]", 2), 1);
    assert_int_equal(depth_ok("[[]]", 1), 0);
    assert_int_equal(depth_ok("[[]]", 0), 0);
}


static void
test_strings(void **state)
{
    (void) state;

    /* brackets inside strings do not count */
    assert_int_equal(depth_of("[\"[[[[{{{{\"]"), 1);
    assert_int_equal(depth_of("{\"[[[\":\"]]]]]]\",\"x\":[[1]]}"), 3);

    /* escaped quote keeps the string open */
    assert_int_equal(depth_of("[\"\\\"[[[\"]"), 1);
    assert_int_equal(depth_of("[\"a\\\"b\\\"[[\",[]]"), 2);

    /* escaped backslash closes the string at the next quote */
    assert_int_equal(depth_of("[\"\\\\\",[[]]]"), 3);
    assert_int_equal(depth_of("[\"\\\\\\\"[\",[]]"), 2);

    /* \u escapes are just bytes */
    assert_int_equal(depth_of("[\"\\u005b\\u0022\",[]]"), 2);
}


static void
test_malformed(void **state)
{
    (void) state;

    /* unterminated strings are accepted; the parser refuses them */
    assert_int_equal(depth_of("[\"abc"), 1);
    assert_int_equal(depth_of("[\"abc\\"), 1);
    assert_int_equal(depth_of("\"\\"), 0);
    assert_int_equal(depth_of("\""), 0);
    assert_int_equal(depth_of("[[\"[[[[[[["), 2);

    /* stray closers do not go below zero or hide later depth */
    assert_int_equal(depth_of("]]]]}}}}[[["), 3);
    assert_int_equal(depth_of("[}]]{{"), 2);

    /* NUL and high bytes are ordinary */
    assert_int_equal(cms_json_depth_ok((const unsigned char *) "[\0[\xff]",
                                       5, 1),
                     0);
}


static void
test_deep(void **state)
{
    size_t          i, n;
    unsigned char  *p;

    (void) state;

    n = 1000000;
    p = malloc(2 * n);
    assert_non_null(p);

    for (i = 0; i < n; i++) {
        p[i] = (i % 2) ? '{' : '[';
        p[2 * n - 1 - i] = (i % 2) ? '}' : ']';
    }

    assert_int_equal(cms_json_depth_ok(p, 2 * n, 64), 0);
    assert_int_equal(cms_json_depth_ok(p, 2 * n, (unsigned) n - 1), 0);
    assert_int_equal(cms_json_depth_ok(p, 2 * n, (unsigned) n), 1);

    /* 64 deep passes 64 and fails 63 */
    assert_int_equal(cms_json_depth_ok(p + n - 64, 128, 64), 1);
    assert_int_equal(cms_json_depth_ok(p + n - 64, 128, 63), 0);

    free(p);
}


static void
check_compact(const char *in, const char *want)
{
    size_t         n;
    unsigned char  out[256];

    n = cms_json_compact((const unsigned char *) in, strlen(in), out);

    assert_int_equal(n, strlen(want));
    assert_memory_equal(out, want, n);

    /* loose exactly when compacting changes something */
    assert_int_equal(cms_json_loose((const unsigned char *) in, strlen(in)),
                     n != strlen(in));
    assert_int_equal(cms_json_loose(out, n), 0);
}


static void
test_compact(void **state)
{
    (void) state;

    check_compact("", "");
    check_compact("{\"a\" : 1, \"b\" : [1, 2]}", "{\"a\":1,\"b\":[1,2]}");
    check_compact(" \t\r\n{ } ", "{}");
    /* strings keep their spaces, escaped quotes do not end them */
    check_compact("{\"a b\" : \" x \\\" y \"}", "{\"a b\":\" x \\\" y \"}");
    check_compact("[\"\\\\\" , 1]", "[\"\\\\\",1]");
    /* already compact: unchanged */
    check_compact("{\"a\":[true,null,\"\"]}", "{\"a\":[true,null,\"\"]}");
    /* an unterminated string is copied to the end */
    check_compact("[ \"ab c", "[\"ab c");
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_deep),
        cmocka_unit_test(test_compact),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
