
/*
 * Unit tests for cms_text.c: slugs, slug validation, word counts.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_text.h"


/*
 * Slugifies s from an exactly-sized heap copy into a buffer of out_size
 * bytes followed by a guard, so a read or write past either end shows.
 */

static const char *
slug_n(const char *s, size_t out_size)
{
    size_t       len, n;
    char        *in;
    static char  out[512];

    len = strlen(s);
    in = malloc(len ? len : 1);
    assert_non_null(in);
    memcpy(in, s, len);

    memset(out, '#', sizeof(out));
    n = cms_slugify(in, len, out, out_size);
    free(in);

    assert_true(n <= out_size);
    assert_true(n <= CMS_SLUG_MAX);
    assert_int_equal(out[out_size], '#');

    if (n > 0) {
        assert_true(cms_slug_valid(out, n));
    }

    out[n] = '\0';

    return out;
}


static const char *
slug(const char *s)
{
    return slug_n(s, 256);
}


static void
test_slug_ascii(void **state)
{
    (void) state;

    assert_string_equal(slug("Hello, World!"), "hello-world");
    assert_string_equal(slug("  --Leading and trailing--  "),
                        "leading-and-trailing");
    assert_string_equal(slug("Multiple   spaces\tand\n\nlines"),
                        "multiple-spaces-and-lines");
    assert_string_equal(slug("C++ & C# in 2024"), "c-c-in-2024");
    assert_string_equal(slug("already-a-slug"), "already-a-slug");
    assert_string_equal(slug("UPPER_case_Mixed"), "upper-case-mixed");
    assert_string_equal(slug("don't stop"), "dont-stop");
    assert_string_equal(slug("a/b\\c.d"), "a-b-c-d");
    assert_string_equal(slug("<b>Bold</b> title"), "b-bold-b-title");
}


static void
test_slug_latin(void **state)
{
    (void) state;

    assert_string_equal(slug("Caf\xc3\xa9 cr\xc3\xa8me "
                             "br\xc3\xbbl\xc3\xa9" "e"),
                        "cafe-creme-brulee");
    assert_string_equal(slug("Stra\xc3\x9f" "e"), "strasse");
    assert_string_equal(slug("\xc3\x86sir \xc3\xb8l \xc3\xa5r"),
                        "aesir-ol-ar");
    assert_string_equal(slug("Espa\xc3\xb1" "a, Fran\xc3\xa7" "ais"),
                        "espana-francais");
    assert_string_equal(slug("\xc5\x81\xc3\xb3" "d\xc5\xba"), "lodz");
    assert_string_equal(slug("\xc5\x92uvre \xc3\x9f\xc3\x9f"),
                        "oeuvre-ssss");
    assert_string_equal(slug("\xc3\x84rger \xc3\x96l \xc3\x9c" "ber"),
                        "arger-ol-uber");
    assert_string_equal(slug("Bra\xc8\x99ov \xc8\x9b" "ara"),
                        "brasov-tara");                 /* s, t comma */
    assert_string_equal(slug("\xc3\x9eor \xc3\xb0" "a"), "thor-da");
    assert_string_equal(slug("\xc4\x8c" "esk\xc3\xbd Krumlov"),
                        "cesky-krumlov");
    assert_string_equal(slug("It\xe2\x80\x99s here"), "its-here");

    /* signs and other scripts separate */
    assert_string_equal(slug("3\xc3\x97" "4"), "3-4");
    assert_string_equal(slug("\xe6\x97\xa5\xe6\x9c\xac title"), "title");
    assert_string_equal(slug("na\xc3\xafve\xe2\x80\x94test"), "naive-test");
    assert_string_equal(slug("\xce\xb1\xce\xb2\xce\xb3"), "");
}


static void
test_slug_invalid_utf8(void **state)
{
    (void) state;

    assert_string_equal(slug("a\xff" "b"), "a-b");
    assert_string_equal(slug("a\xc3"), "a");                /* cut */
    assert_string_equal(slug("a\xc0\xafz"), "a-z");         /* overlong */
    assert_string_equal(slug("a\xed\xa0\x80z"), "a-z");     /* surrogate */
    assert_string_equal(slug("\x80\x80\x80"), "");
}


static void
test_slug_empty(void **state)
{
    char  out[8];

    (void) state;

    assert_string_equal(slug(""), "");
    assert_string_equal(slug("!!! ??? ---"), "");
    assert_int_equal(cms_slugify("abc", 3, out, 0), 0);
    assert_int_equal(cms_slugify(NULL, 0, out, sizeof(out)), 0);
}


static void
test_slug_length(void **state)
{
    size_t  i;
    char    in[600];
    char    expect[256];

    (void) state;

    /* 40 words of 9 letters: "abcdefghi-abcdefghi-..." (399 bytes) */
    for (i = 0; i < 40; i++) {
        memcpy(in + i * 10, "abcdefghi ", 10);
    }

    in[399] = '\0';

    /* 20 words take 199 bytes; the 21st does not fit, so cut there */
    memset(expect, 0, sizeof(expect));
    for (i = 0; i < 20; i++) {
        memcpy(expect + i * 10, "abcdefghi-", 10);
    }

    expect[199] = '\0';
    assert_string_equal(slug(in), expect);
    assert_int_equal(strlen(slug(in)), 199);

    /* one word longer than the limit: hard cut at 200 */
    memset(in, 'x', 300);
    in[300] = '\0';
    assert_int_equal(strlen(slug(in)), CMS_SLUG_MAX);

    /* a word ending exactly at the limit is kept whole */
    memset(in, 'y', 200);
    memcpy(in + 200, " tail", 6);
    assert_int_equal(strlen(slug(in)), 200);

    /* a small output buffer follows the same rule */
    assert_string_equal(slug_n("hello big world", 11), "hello-big");
    assert_string_equal(slug_n("hello big world", 9), "hello-big");
    assert_string_equal(slug_n("hello big world", 8), "hello");
    assert_string_equal(slug_n("hello", 3), "hel");
    assert_string_equal(slug_n("Stra\xc3\x9f" "e", 5), "stras");
}


static void
test_slug_valid(void **state)
{
    char  big[202];

    (void) state;

    assert_true(cms_slug_valid("a", 1));
    assert_true(cms_slug_valid("hello-world-2", 13));
    assert_true(cms_slug_valid("0", 1));

    assert_false(cms_slug_valid("", 0));
    assert_false(cms_slug_valid("-a", 2));
    assert_false(cms_slug_valid("a-", 2));
    assert_false(cms_slug_valid("a--b", 4));
    assert_false(cms_slug_valid("A", 1));
    assert_false(cms_slug_valid("a b", 3));
    assert_false(cms_slug_valid("a_b", 3));
    assert_false(cms_slug_valid("caf\xc3\xa9", 5));
    assert_false(cms_slug_valid("a\0b", 3));
    assert_false(cms_slug_valid("-", 1));

    memset(big, 'a', sizeof(big));
    assert_true(cms_slug_valid(big, 200));
    assert_false(cms_slug_valid(big, 201));
}


static size_t
words(const char *s)
{
    return cms_html_word_count(s, strlen(s));
}


static void
test_word_count(void **state)
{
    (void) state;

    assert_int_equal(words(""), 0);
    assert_int_equal(words("   \n\t "), 0);
    assert_int_equal(words("one"), 1);
    assert_int_equal(words("  one two\tthree\nfour  "), 4);
    assert_int_equal(words("<p>one two</p><p>three</p>"), 3);
    assert_int_equal(words("<p></p><br><hr>"), 0);

    /* tags separate words, entities are text */
    assert_int_equal(words("<p>one</p>two"), 2);
    assert_int_equal(words("hel<b>lo</b>"), 2);
    assert_int_equal(words("<p>fish &amp; chips</p>"), 3);
    assert_int_equal(words("a &lt; b"), 3);

    /* attributes are not words */
    assert_int_equal(words("<a href=\"https://example.com/a b c\" "
                           "title=\"x y z\">link text</a>"), 2);
    assert_int_equal(words("<img src=\"https://e.com/x.png\" alt=\"a b\">"),
                     0);

    /* U+00A0 separates, a lone "<" is text, comments are tags */
    assert_int_equal(words("10\xc2\xa0km"), 2);
    assert_int_equal(words("a < b"), 3);
    assert_int_equal(words("x<!-- y z -->w"), 2);

    /* an unterminated tag runs to the end */
    assert_int_equal(words("one <b two three"), 1);

    /* non-ASCII words */
    assert_int_equal(words("<p>caf\xc3\xa9 na\xc3\xafve</p>"), 2);
}


static void
test_read_minutes(void **state)
{
    (void) state;

    assert_int_equal(cms_read_minutes(0), 1);
    assert_int_equal(cms_read_minutes(1), 1);
    assert_int_equal(cms_read_minutes(200), 1);
    assert_int_equal(cms_read_minutes(201), 2);
    assert_int_equal(cms_read_minutes(1000), 5);
    assert_int_equal(cms_read_minutes(1001), 6);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_slug_ascii),
        cmocka_unit_test(test_slug_latin),
        cmocka_unit_test(test_slug_invalid_utf8),
        cmocka_unit_test(test_slug_empty),
        cmocka_unit_test(test_slug_length),
        cmocka_unit_test(test_slug_valid),
        cmocka_unit_test(test_word_count),
        cmocka_unit_test(test_read_minutes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
