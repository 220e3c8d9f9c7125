
/*
 * Unit tests for cms_mime.c: media type syntax, the script-executable
 * types (every family the media registration refuses), and agreement
 * with the asset's type.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_mime.h"


/* checks from an exactly-sized heap copy, so a read past the end shows */
static int
check(const char *asset, const char *s)
{
    int     rc;
    char   *p;
    size_t  len;

    len = strlen(s);
    p = malloc(len ? len : 1);
    assert_non_null(p);
    memcpy(p, s, len);

    rc = cms_mime_check(asset, p, len);
    free(p);

    return rc;
}


static void
test_mime_syntax(void **state)
{
    size_t  i;
    char    big[CMS_MIME_MAX + 2];

    static const char *const  good[] = {
        "image/png", "IMAGE/PNG", "application/vnd.ms-excel",
        "application/octet-stream", "audio/mp4; codecs=mp4a.40.2",
        "image/png;charset=binary", "video/mp4 ; a=b ;c=d",
        "application/x.foo+zip", NULL
    };

    static const char *const  bad[] = {
        "", "image", "image/", "/png", "image/png/x", "image /png",
        "image/ png", "image/png;", "image/png; a", "image/png; a=",
        "image/png; =b", "image/png; a=\"b\"", "-image/png",
        "image/-png", "ima ge/png", "image/p\xc3\xa9ng", "image/*",
        "*/*", "image/png\n", "image/png x", NULL
    };

    (void) state;

    for (i = 0; good[i]; i++) {
        assert_true(cms_mime_valid(good[i], strlen(good[i])));
        assert_int_equal(check("file", good[i]), CMS_MIME_OK);
    }

    for (i = 0; bad[i]; i++) {
        assert_false(cms_mime_valid(bad[i], strlen(bad[i])));
        assert_int_equal(check("file", bad[i]), CMS_MIME_INVALID);
    }

    assert_false(cms_mime_valid("image/png\0x", 11));
    assert_false(cms_mime_valid(NULL, 0));

    /* a 127-character subtype is a name, 128 is not */
    memcpy(big, "a/", 2);
    memset(big + 2, 'b', 128);
    assert_true(cms_mime_valid(big, 2 + 127));
    assert_false(cms_mime_valid(big, 2 + 128));

    /* CMS_MIME_MAX bytes with parameters, one more refused */
    memset(big, 'x', sizeof(big));
    memcpy(big, "a/b; c=", 7);
    assert_true(cms_mime_valid(big, CMS_MIME_MAX));
    assert_false(cms_mime_valid(big, CMS_MIME_MAX + 1));
}


static void
test_mime_executable(void **state)
{
    size_t  i;

    static const char *const  exec[] = {
        /* HTML, XHTML */
        "text/html", "TEXT/HTML; charset=utf-8", "application/xhtml+xml",
        "text/x-server-parsed-html",
        /* XML, SVG */
        "text/xml", "application/xml", "image/svg+xml", "image/SVG+XML",
        "image/svg", "application/rss+xml", "application/xml-dtd",
        "text/xsl", "application/xslt+xml",
        /* JavaScript and anything "script" */
        "text/javascript", "application/javascript",
        "application/x-javascript", "application/ecmascript",
        "text/jscript", "text/vbscript", "application/x-shellscript",
        "application/postscript", "script/anything", "x-script/foo",
        /* server handlers, PHP, Flash, HTML applications */
        "application/x-httpd-php", "application/x-httpd-cgi",
        "text/x-php", "application/php", "application/x-shockwave-flash",
        "application/hta", NULL
    };

    static const char *const  safe[] = {
        "image/png", "image/jpeg", "image/webp", "video/mp4", "audio/mpeg",
        "application/pdf", "text/plain", "text/csv", "application/json",
        "application/zip", "application/vnd.openxmlformats-officedocument"
        ".wordprocessingml.document", "application/octet-stream",
        "text/markdown", "application/x-httpd", NULL
    };

    (void) state;

    for (i = 0; exec[i]; i++) {
        assert_true(cms_mime_executable(exec[i], strlen(exec[i])));
        assert_int_equal(check("file", exec[i]), CMS_MIME_EXECUTABLE);
        assert_int_equal(check("image", exec[i]), CMS_MIME_EXECUTABLE);
    }

    for (i = 0; safe[i]; i++) {
        assert_false(cms_mime_executable(safe[i], strlen(safe[i])));
        assert_int_equal(check("file", safe[i]), CMS_MIME_OK);
    }

    /* parameters do not count, malformed is not executable but invalid */
    assert_false(cms_mime_executable("text/plain; x=html", 18));
    assert_false(cms_mime_executable("text/html x", 11));
}


static void
test_mime_agreement(void **state)
{
    (void) state;

    assert_int_equal(check("image", "image/png"), CMS_MIME_OK);
    assert_int_equal(check("image", "Image/JPEG"), CMS_MIME_OK);
    assert_int_equal(check("image", "video/mp4"), CMS_MIME_MISMATCH);
    assert_int_equal(check("image", "application/pdf"), CMS_MIME_MISMATCH);
    assert_int_equal(check("image", "images/png"), CMS_MIME_MISMATCH);
    assert_int_equal(check("video", "video/webm"), CMS_MIME_OK);
    assert_int_equal(check("video", "audio/mpeg"), CMS_MIME_MISMATCH);
    assert_int_equal(check("audio", "audio/ogg; codecs=opus"), CMS_MIME_OK);
    assert_int_equal(check("audio", "application/ogg"), CMS_MIME_MISMATCH);
    assert_int_equal(check("file", "image/png"), CMS_MIME_OK);
    assert_int_equal(check("file", "application/pdf"), CMS_MIME_OK);
    assert_int_equal(check("document", "application/pdf"),
                     CMS_MIME_MISMATCH);
    assert_int_equal(check(NULL, "image/png"), CMS_MIME_MISMATCH);

    /* an image of an executable type is executable, not a mismatch */
    assert_int_equal(check("image", "image/svg+xml"), CMS_MIME_EXECUTABLE);
}


static void
test_mime_storage(void **state)
{
    (void) state;

    assert_string_equal(cms_mime_ext("image/png", 9), "png");
    assert_string_equal(cms_mime_ext("IMAGE/JPEG", 10), "jpg");
    assert_string_equal(cms_mime_ext("text/plain; charset=latin1", 26),
                        "txt");
    assert_string_equal(cms_mime_ext("image/svg+xml", 13), "svg");
    assert_string_equal(cms_mime_ext("image/pngx", 10), "bin");
    assert_string_equal(cms_mime_ext("image/pn", 8), "bin");
    assert_string_equal(cms_mime_ext("not a type", 10), "bin");
    assert_string_equal(cms_mime_ext(NULL, 0), "bin");

    assert_string_equal(cms_mime_ext_type("png", 3), "image/png");
    assert_string_equal(cms_mime_ext_type("JPEG", 4), "image/jpeg");
    assert_string_equal(cms_mime_ext_type("txt", 3),
                        "text/plain; charset=utf-8");
    assert_string_equal(cms_mime_ext_type("exe", 3),
                        "application/octet-stream");
    assert_string_equal(cms_mime_ext_type("pn", 2),
                        "application/octet-stream");
    assert_string_equal(cms_mime_ext_type("", 0),
                        "application/octet-stream");

    assert_true(cms_mime_ext_inline("png", 3));
    assert_true(cms_mime_ext_inline("mp4", 3));
    assert_true(cms_mime_ext_inline("mp3", 3));
    assert_true(cms_mime_ext_inline("txt", 3));
    assert_false(cms_mime_ext_inline("svg", 3));
    assert_false(cms_mime_ext_inline("html", 4));
    assert_false(cms_mime_ext_inline("xml", 3));
    assert_false(cms_mime_ext_inline("pdf", 3));
    assert_false(cms_mime_ext_inline("bin", 3));
    assert_false(cms_mime_ext_inline("exe", 3));
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_mime_syntax),
        cmocka_unit_test(test_mime_executable),
        cmocka_unit_test(test_mime_agreement),
        cmocka_unit_test(test_mime_storage),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
