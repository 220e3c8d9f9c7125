
/*
 * Unit tests for cms_slug.c: slugs that keep every script's letters
 * (lowercased, NFC), Latin still as ASCII, cuts never inside a
 * character, and the validator agreeing with the slugifier.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_slug.h"


/*
 * Slugifies s from an exactly-sized heap copy into out_size bytes
 * followed by a guard; a result that is not empty must be valid.
 */
static const char *
slug_n(const char *s, size_t len, size_t out_size)
{
    size_t       n;
    char        *in;
    static char  out[512];

    in = malloc(len ? len : 1);
    assert_non_null(in);
    memcpy(in, s, len);

    memset(out, '#', sizeof(out));
    n = cms_slugify_text(in, len, out, out_size);
    free(in);

    assert_true(n <= out_size);
    assert_true(n <= CMS_SLUG_MAX);
    assert_int_equal(out[out_size], '#');

    if (n > 0) {
        assert_true(cms_slug_text_valid(out, n));
    }

    out[n] = '\0';

    return out;
}


static const char *
slug(const char *s)
{
    return slug_n(s, strlen(s), 256);
}


static void
test_slug_latin_as_before(void **state)
{
    (void) state;

    assert_string_equal(slug("Hello, World!"), "hello-world");
    assert_string_equal(slug("Caf\xc3\xa9 cr\xc3\xa8me"), "cafe-creme");
    assert_string_equal(slug("Die Stra\xc3\x9f" "e"), "die-strasse");
    assert_string_equal(slug("don't stop"), "dont-stop");
    assert_string_equal(slug("It\xe2\x80\x99s"), "its");
    assert_string_equal(slug("\xc3\x98resund \xc3\x86" "ble"),
                        "oresund-aeble");

    /* beyond Latin-1 and Extended-A: the letter under the marks */
    assert_string_equal(slug("\xc7\x8e"), "a");            /* U+01CE */
    assert_string_equal(slug("Vi\xe1\xbb\x87t Nam"), "viet-nam");
    /* decomposed input composes first: e + U+0301 is e-acute, so "e" */
    assert_string_equal(slug("Cafe\xcc\x81"), "cafe");
    /* capital sharp s lowercases to sharp s: "ss" */
    assert_string_equal(slug("\xe1\xba\x9e"), "ss");
}


static void
test_slug_other_scripts(void **state)
{
    (void) state;

    /* Cyrillic, lowercased */
    assert_string_equal(slug("\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1"
                             "\x82, \xd0\xbc\xd0\xb8\xd1\x80!"),
                        "\xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82-"
                        "\xd0\xbc\xd0\xb8\xd1\x80");
    /* Greek with tonos: kept, lowercased (not stripped to ASCII) */
    assert_string_equal(slug("\xce\x86\xce\xb8\xce\xae\xce\xbd\xce\xb1"),
                        "\xce\xac\xce\xb8\xce\xae\xce\xbd\xce\xb1");
    assert_string_equal(slug("\xce\xb1\xce\xb2\xce\xb3"),
                        "\xce\xb1\xce\xb2\xce\xb3");
    /* Japanese: letters kept, the ideographic full stop separates */
    assert_string_equal(slug("\xe6\x97\xa5\xe6\x9c\xac\xe3\x80\x82"
                             "Title"),
                        "\xe6\x97\xa5\xe6\x9c\xac-title");
    /* Arabic-Indic digits are digits */
    assert_string_equal(slug("\xd9\xa3"), "\xd9\xa3");
    /* mixed words */
    assert_string_equal(slug("iPhone 15 \xd0\x9e\xd0\xb1\xd0\xb7\xd0\xbe"
                             "\xd1\x80"),
                        "iphone-15-\xd0\xbe\xd0\xb1\xd0\xb7\xd0\xbe\xd1"
                        "\x80");
}


static void
test_slug_nfc(void **state)
{
    (void) state;

    /* Cyrillic short i decomposed (U+0438 U+0306) gives U+0439 */
    assert_string_equal(slug("\xd0\xb8\xcc\x86"), "\xd0\xb9");
    /* Hangul jamo compose into the syllable */
    assert_string_equal(slug("\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab"),
                        "\xed\x95\x9c");
    /* a mark with no letter before it is dropped */
    assert_string_equal(slug("\xcc\x81" "abc"), "abc");
    assert_string_equal(slug("- \xcc\x81 -"), "");
    /* a mark after a kept letter that does not compose stays with it */
    assert_string_equal(slug("\xd0\xb6\xcc\x81"), "\xd0\xb6\xcc\x81");
}


static void
test_slug_empty_and_invalid(void **state)
{
    char  out[8];

    (void) state;

    assert_string_equal(slug(""), "");
    assert_string_equal(slug("!!! ??? \xe2\x80\x94"), "");
    assert_string_equal(slug("a\xff" "b"), "a-b");
    assert_string_equal(slug("\xd0\xb1\xc3"), "\xd0\xb1");
    assert_string_equal(slug_n("a\0b", 3, 256), "a-b");
    assert_int_equal(cms_slugify_text("abc", 3, out, 0), 0);
    assert_int_equal(cms_slugify_text(NULL, 0, out, sizeof(out)), 0);
}


static void
test_slug_cut(void **state)
{
    size_t  i;
    char    in[700];

    (void) state;

    /* 100 two-byte letters fit exactly (200 bytes) */
    for (i = 0; i < 100; i++) {
        memcpy(in + 2 * i, "\xd0\xb1", 2);
    }

    assert_int_equal(strlen(slug_n(in, 200, 256)), 200);

    /* 101: the first word alone is too long, cut before the character
       that does not fit, never inside it */
    memcpy(in + 200, "\xd0\xb1", 2);
    assert_int_equal(strlen(slug_n(in, 202, 256)), 200);
    assert_int_equal(strlen(slug_n(in, 202, 7)), 6);

    /* three-byte letters in a 200-byte limit: 66 of them */
    for (i = 0; i < 80; i++) {
        memcpy(in + 3 * i, "\xe6\x97\xa5", 3);
    }

    assert_int_equal(strlen(slug_n(in, 240, 256)), 198);

    /* words: cut at the last dash that fits */
    assert_string_equal(slug_n("\xd0\xb1\xd0\xb1 \xd0\xb2\xd0\xb2", 9, 7),
                        "\xd0\xb1\xd0\xb1");

    /* a letter whose mark does not fit goes with it */
    assert_string_equal(slug_n("\xd0\xb6\xd0\xb6\xcc\x81", 6, 5),
                        "\xd0\xb6");
}


static void
test_slug_scan_limit(void **state)
{
    char  *in;

    (void) state;

    in = malloc(CMS_SLUG_TEXT_SCAN + 10);
    assert_non_null(in);

    /* separators to the limit, then a word: nothing read */
    memset(in, ' ', CMS_SLUG_TEXT_SCAN - 1);
    memcpy(in + CMS_SLUG_TEXT_SCAN - 1, "\xd0\xb1word", 6);
    assert_string_equal(slug_n(in, CMS_SLUG_TEXT_SCAN + 5, 256), "");

    /* one byte earlier: the two-byte letter fits the limit */
    memcpy(in + CMS_SLUG_TEXT_SCAN - 2, "\xd0\xb1word", 6);
    assert_string_equal(slug_n(in, CMS_SLUG_TEXT_SCAN + 4, 256),
                        "\xd0\xb1");

    free(in);
}


static void
test_slug_text_valid(void **state)
{
    char  big[CMS_SLUG_MAX + 2];

    (void) state;

    assert_true(cms_slug_text_valid("hello-world-2", 13));
    assert_true(cms_slug_text_valid("\xd0\xbc\xd0\xb8\xd1\x80", 6));
    assert_true(cms_slug_text_valid("\xe6\x97\xa5-a", 5));
    assert_true(cms_slug_text_valid("\xd0\xb6\xcc\x81", 4));

    assert_false(cms_slug_text_valid("", 0));
    assert_false(cms_slug_text_valid("-a", 2));
    assert_false(cms_slug_text_valid("a-", 2));
    assert_false(cms_slug_text_valid("a--b", 4));
    assert_false(cms_slug_text_valid("A", 1));
    assert_false(cms_slug_text_valid("a b", 3));
    assert_false(cms_slug_text_valid("a_b", 3));
    assert_false(cms_slug_text_valid("a\0b", 3));
    /* Latin the slugifier turns into ASCII */
    assert_false(cms_slug_text_valid("caf\xc3\xa9", 5));
    assert_false(cms_slug_text_valid("\xc7\x8e", 2));
    /* uppercase of another script */
    assert_false(cms_slug_text_valid("\xd0\x9c", 2));
    /* not NFC: decomposed short i */
    assert_false(cms_slug_text_valid("\xd0\xb8\xcc\x86", 4));
    /* a mark on nothing kept */
    assert_false(cms_slug_text_valid("\xcc\x81", 2));
    assert_false(cms_slug_text_valid("a\xcc\x81", 3));
    /* invalid UTF-8, symbols, punctuation */
    assert_false(cms_slug_text_valid("\xd0", 1));
    assert_false(cms_slug_text_valid("\xe2\x80\x94", 3));
    assert_false(cms_slug_text_valid("\xe3\x80\x82", 3));

    memset(big, 'a', sizeof(big));
    assert_true(cms_slug_text_valid(big, CMS_SLUG_MAX));
    assert_false(cms_slug_text_valid(big, CMS_SLUG_MAX + 1));
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_slug_latin_as_before),
        cmocka_unit_test(test_slug_other_scripts),
        cmocka_unit_test(test_slug_nfc),
        cmocka_unit_test(test_slug_empty_and_invalid),
        cmocka_unit_test(test_slug_cut),
        cmocka_unit_test(test_slug_scan_limit),
        cmocka_unit_test(test_slug_text_valid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
