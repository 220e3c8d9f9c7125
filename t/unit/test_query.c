
/*
 * cms_query: finding, counting and percent-decoding query parameters.
 */


#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "cms_query.h"


/* the count of "name" in "args", its first raw value in out (terminated) */
static size_t
find(const char *args, const char *name, char *out, size_t size)
{
    size_t       n, vlen;
    const char  *val;

    val = "untouched";
    vlen = strlen(val);

    n = cms_query_find(args, strlen(args), name, strlen(name), &val, &vlen);

    assert_true(vlen < size);
    memcpy(out, val, vlen);
    out[vlen] = '\0';

    return n;
}


static void
test_find(void **state)
{
    char  v[64];

    (void) state;

    assert_int_equal(find("a=1&b=2", "b", v, sizeof(v)), 1);
    assert_string_equal(v, "2");
    assert_int_equal(find("a=1&b=2", "a", v, sizeof(v)), 1);
    assert_string_equal(v, "1");
    assert_int_equal(find("limit=5&limit=7", "limit", v, sizeof(v)), 2);
    assert_string_equal(v, "5");
    assert_int_equal(find("flag&x=1", "flag", v, sizeof(v)), 1);
    assert_string_equal(v, "");
    assert_int_equal(find("x=&y=1", "x", v, sizeof(v)), 1);
    assert_string_equal(v, "");
    assert_int_equal(find("x=a=b", "x", v, sizeof(v)), 1);
    assert_string_equal(v, "a=b");

    /* exact names: no prefix, no suffix, no case folding */
    assert_int_equal(find("limits=5&xlimit=6&LIMIT=7", "limit", v, sizeof(v)),
                     0);
    assert_string_equal(v, "untouched");
    assert_int_equal(find("", "a", v, sizeof(v)), 0);
    assert_int_equal(find("&&&", "a", v, sizeof(v)), 0);
    assert_int_equal(find("&a=1&", "a", v, sizeof(v)), 1);
    assert_string_equal(v, "1");
    assert_int_equal(find("=1", "", v, sizeof(v)), 1);
}


static size_t
decode(const char *in, char *out)
{
    return cms_query_decode(in, strlen(in), out);
}


static void
test_decode(void **state)
{
    char    out[64];
    size_t  n;

    (void) state;

    n = decode("caf%C3%a9+au%20lait", out);
    assert_int_equal(n, 13);
    assert_memory_equal(out, "caf\xc3\xa9 au lait", 13);

    n = decode("a%00b", out);
    assert_int_equal(n, 3);
    assert_memory_equal(out, "a\0b", 3);

    assert_int_equal(decode("", out), 0);
    assert_int_equal(decode("%ff", out), 1);
    assert_int_equal((unsigned char) out[0], 0xff);

    assert_int_equal(decode("%", out), CMS_QUERY_BAD_ESCAPE);
    assert_int_equal(decode("%4", out), CMS_QUERY_BAD_ESCAPE);
    assert_int_equal(decode("ab%4", out), CMS_QUERY_BAD_ESCAPE);
    assert_int_equal(decode("%zz", out), CMS_QUERY_BAD_ESCAPE);
    assert_int_equal(decode("%g0", out), CMS_QUERY_BAD_ESCAPE);
    assert_int_equal(decode("%%41", out), CMS_QUERY_BAD_ESCAPE);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_decode),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
