/* cmocka tests for cms_validate: email addresses. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cms_validate.h"


static int
valid(const char *s)
{
    return cms_email_valid(s, strlen(s));
}


static void
test_email_good(void **state)
{
    (void) state;

    assert_true(valid("a@b.co"));
    assert_true(valid("first.last+tag@example.com"));
    assert_true(valid("x@sub-domain.example.org"));
    assert_true(valid("UPPER@Example.COM"));
}


static void
test_email_bad(void **state)
{
    char  long_local[80];

    (void) state;

    assert_false(valid(""));
    assert_false(valid("a@b"));
    assert_false(valid("@b.co"));
    assert_false(valid("a@"));
    assert_false(valid("a@@b.co"));
    assert_false(valid("a@b@c.co"));
    assert_false(valid("a b@c.co"));
    assert_false(valid("a@b..co"));
    assert_false(valid("a@.b.co"));
    assert_false(valid("a@b.co."));
    assert_false(valid("a@-b.co"));
    assert_false(valid("a@b-.co"));
    assert_false(valid(".a@b.co"));
    assert_false(valid("a.@b.co"));
    assert_false(valid("a..b@c.co"));
    assert_false(valid("<a>@b.co"));
    assert_false(valid("a@b_c.co"));
    assert_false(valid("a\n@b.co"));
    assert_false(cms_email_valid("a\0b@c.co", 8));

    memset(long_local, 'a', 65);
    memcpy(long_local + 65, "@b.co", 6);
    assert_false(valid(long_local));
}


static void
test_color(void **state)
{
    (void) state;

    assert_true(cms_color_valid("#8b5cf6", 7));
    assert_true(cms_color_valid("#FFF", 4));
    assert_false(cms_color_valid("8b5cf6", 6));
    assert_false(cms_color_valid("#8b5cf", 6));
    assert_false(cms_color_valid("#8b5cg6", 7));
    assert_false(cms_color_valid("#8b\0cf6", 7));
}


static void
test_locale(void **state)
{
    (void) state;

    assert_true(cms_locale_valid("en", 2));
    assert_true(cms_locale_valid("pt-BR", 5));
    assert_true(cms_locale_valid("zh-Hant-TW", 10));
    assert_true(cms_locale_valid("es-419", 6));
    assert_false(cms_locale_valid("e", 1));
    assert_false(cms_locale_valid("en-", 3));
    assert_false(cms_locale_valid("-en", 3));
    assert_false(cms_locale_valid("en--US", 6));
    assert_false(cms_locale_valid("1en", 3));
    assert_false(cms_locale_valid("en_US", 5));
    assert_false(cms_locale_valid("en-abcdefghi", 12));
}


static int
rfc(const char *s)
{
    return cms_rfc3339_valid(s, strlen(s));
}


static void
test_rfc3339(void **state)
{
    (void) state;

    assert_true(rfc("2024-01-02T03:04:05Z"));
    assert_true(rfc("2024-01-02T03:04:05.123Z"));
    assert_true(rfc("2024-01-02T03:04:05.123456789+05:30"));
    assert_true(rfc("2024-02-29t23:59:60-00:00"));
    assert_true(rfc("2024-01-02T03:04:05z"));
    assert_false(rfc("2023-02-29T00:00:00Z"));
    assert_false(rfc("2024-01-02"));
    assert_false(rfc("2024-01-02T03:04:05"));
    assert_false(rfc("2024-01-02 03:04:05Z"));
    assert_false(rfc("2024-13-02T03:04:05Z"));
    assert_false(rfc("2024-01-32T03:04:05Z"));
    assert_false(rfc("2024-01-02T24:04:05Z"));
    assert_false(rfc("2024-01-02T03:04:05.Z"));
    assert_false(rfc("2024-01-02T03:04:05+0530"));
    assert_false(rfc("2024-01-02T03:04:05+05:30x"));
    assert_false(rfc("yesterday"));
    assert_false(rfc("infinity"));
    assert_false(rfc(""));
}


static void
test_one_of(void **state)
{
    static const char *const  words[] = { "draft", "published", NULL };
    char                      buf[16];

    (void) state;

    assert_true(cms_str_one_of("draft", 5, words));
    assert_true(cms_str_one_of("published!", 9, words));
    assert_false(cms_str_one_of("draf", 4, words));
    assert_false(cms_str_one_of("drafts", 6, words));
    assert_false(cms_str_one_of("", 0, words));
    assert_false(cms_str_one_of("draft\0x", 7, words));

    /* an unterminated value at the end of a buffer is read to len only */
    memcpy(buf + sizeof(buf) - 5, "draft", 5);
    assert_true(cms_str_one_of(buf + sizeof(buf) - 5, 5, words));
}


static void
test_cstr(void **state)
{
    char  dst[6];

    (void) state;

    memset(dst, 'x', sizeof(dst));
    assert_int_equal(cms_cstr(dst, sizeof(dst), "hello", 5), 0);
    assert_string_equal(dst, "hello");

    /* the terminator needs a byte of its own: 6 bytes do not fit */
    memset(dst, 'x', sizeof(dst));
    assert_int_equal(cms_cstr(dst, sizeof(dst), "hello!", 6), -1);
    assert_int_equal(dst[0], 'x');

    assert_int_equal(cms_cstr(dst, sizeof(dst), "a\0b", 3), -1);
    assert_int_equal(cms_cstr(dst, 1, "", 0), 0);
    assert_int_equal(dst[0], '\0');
    assert_int_equal(cms_cstr(dst, 0, "", 0), -1);
}


static void
test_utf8(void **state)
{
    (void) state;

#define U(s)  cms_utf8_valid(s, sizeof(s) - 1)
    assert_true(U(""));
    assert_true(U("plain ascii"));
    assert_true(U("caf\xc3\xa9"));
    assert_true(U("\xe2\x82\xac"));
    assert_true(U("\xf0\x9f\x98\x80"));
    assert_true(U("\xf4\x8f\xbf\xbf"));
    assert_false(U("\xff"));
    assert_false(U("\x80"));
    assert_false(U("\xc3"));
    assert_false(U("\xc0\xaf"));
    assert_false(U("\xe0\x80\xaf"));
    assert_false(U("\xed\xa0\x80"));
    assert_false(U("\xf4\x90\x80\x80"));
    assert_false(U("\xf8\x88\x80\x80\x80"));
    assert_false(U("a\0b"));
    assert_false(U("\xe2\x82"));
#undef U
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_email_good),
        cmocka_unit_test(test_email_bad),
        cmocka_unit_test(test_color),
        cmocka_unit_test(test_locale),
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_one_of),
        cmocka_unit_test(test_cstr),
        cmocka_unit_test(test_utf8),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
