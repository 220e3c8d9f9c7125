
/*
 * Unit tests for cms_xml.c: the five special characters and CR become
 * references, "]]>" cannot end anything, characters XML 1.0 forbids and
 * bytes that are not UTF-8 become U+FFFD, the rest is copied, and the
 * output never passes cms_xml_escaped_max().
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_xml.h"


#define FFFD  "\xef\xbf\xbd"


static void
check(const char *in, size_t len, const char *want)
{
    char    out[256];
    size_t  n;

    assert_true(cms_xml_escaped_max(len) <= sizeof(out));
    memset(out, '#', sizeof(out));

    n = cms_xml_escape(in, len, out);

    assert_true(n <= cms_xml_escaped_max(len));
    assert_int_equal(n, strlen(want));
    assert_memory_equal(out, want, n);
    assert_int_equal(out[n], '#');
}


static void
test_specials(void **state)
{
    (void) state;

    check("", 0, "");
    check("plain text", 10, "plain text");
    check("a & b < c > d \" e ' f", 21,
          "a &amp; b &lt; c &gt; d &quot; e &apos; f");
    check("x]]>y", 5, "x]]&gt;y");
    check("<![CDATA[", 9, "&lt;![CDATA[");
    check("&amp;", 5, "&amp;amp;");
    check("a\r\nb\tc", 6, "a&#13;\nb\tc");
}


static void
test_unicode(void **state)
{
    (void) state;

    /* well-formed characters are copied as they are */
    check("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x99", 17,
          "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x99");

    /* what XML 1.0 forbids */
    check("a\x01" "b\x1f" "c", 5, "a" FFFD "b" FFFD "c");
    check("\0", 1, FFFD);
    check("\xef\xbf\xbe\xef\xbf\xbf", 6, FFFD FFFD);

    /* not UTF-8: one U+FFFD per byte */
    check("\xff", 1, FFFD);
    check("\xc0\xaf", 2, FFFD FFFD);
    check("\xed\xa0\x80", 3, FFFD FFFD FFFD);
    check("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);
    check("ok\xe6\x97", 4, "ok" FFFD FFFD);
    check("\xc3<", 2, FFFD "&lt;");
}


static void
test_worst_case(void **state)
{
    char    out[6 * 40];
    size_t  n;

    (void) state;

    n = cms_xml_escape("\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\""
                       "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"", 40, out);
    assert_int_equal(n, cms_xml_escaped_max(40));
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_specials),
        cmocka_unit_test(test_unicode),
        cmocka_unit_test(test_worst_case),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
