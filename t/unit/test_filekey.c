
/*
 * Unit tests for cms_filekey.c: the storage keys GET /v1/files/{key}
 * takes (the allow-list), every escape shape refused, and where the
 * file name and extension are.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_filekey.h"


/* parses from an exactly-sized heap copy, so a read past the end shows */
static int
parse(const char *s, size_t len, cms_filekey_t *k)
{
    int    rc;
    char  *p;

    p = malloc(len ? len : 1);
    assert_non_null(p);
    memcpy(p, s, len);

    rc = cms_filekey_parse(p, len, k);
    free(p);

    return rc;
}


static void
test_filekey_good(void **state)
{
    size_t         i;
    cms_filekey_t  k;

    static const char *const  good[] = {
        "a", "a.png", "A-Z_0.9", "ws/asset.png",
        "3f1c9a1e-2d4b-4c1a-9b1e-5a8f0c2d7e61/"
        "0b6f3c2a-1d2e-4f5a-8b9c-0d1e2f3a4b5c.webp",
        "users/42/avatar.jpg", "a/b/c/d/e/f.tar.gz", "a..b", "a.", "x/y.",
        NULL
    };

    (void) state;

    for (i = 0; good[i]; i++) {
        assert_true(parse(good[i], strlen(good[i]), &k));
    }
}


static void
test_filekey_bad(void **state)
{
    size_t         i;
    cms_filekey_t  k;

    static const char *const  bad[] = {
        "", "/", "/a", "a/", "a//b", "//a", ".", "..", "../a", "a/..",
        "a/../b", "a/./b", "./a", ".hidden", "a/.htaccess", "..%2fa",
        "%2e%2e/a", "%252e%252e/a", "a\\b", "..\\a", "C:\\a", "a b",
        "a\tb", "a\nb", "a\rb", "a\x7f", "a\x01", "\xc0\xae\xc0\xae/a",
        "\xc0\xaf", "\xe0\x80\xae", "caf\xc3\xa9.png", "a?b", "a#b",
        "a;b", "a:b", "a*b", "~/a", "a\"b", "a'b", "a<b>", "a|b", "a+b",
        "a&b", "a=b", "a@b", "a,b", "a$b", "a!b", "a(b)", "a[b]", "a{b}",
        NULL
    };

    (void) state;

    for (i = 0; bad[i]; i++) {
        assert_false(parse(bad[i], strlen(bad[i]), &k));
    }

    /* NUL inside or at the end */
    assert_false(parse("a\0b", 3, &k));
    assert_false(parse("a.png\0", 6, &k));
    assert_false(parse("\0", 1, &k));
    assert_false(cms_filekey_parse(NULL, 0, &k));
    assert_false(cms_filekey_parse(NULL, 3, &k));
}


static void
test_filekey_length(void **state)
{
    char           big[CMS_FILEKEY_MAX + 1];
    cms_filekey_t  k;

    (void) state;

    memset(big, 'a', sizeof(big));
    assert_true(parse(big, CMS_FILEKEY_MAX, &k));
    assert_false(parse(big, CMS_FILEKEY_MAX + 1, &k));
}


/* the key parses, its parts where given */
static void
parts(const char *key, size_t name, size_t ext, size_t ext_len)
{
    cms_filekey_t  k;

    assert_true(parse(key, strlen(key), &k));
    assert_int_equal(k.name, name);
    assert_int_equal(k.ext, ext);
    assert_int_equal(k.ext_len, ext_len);
}


static void
test_filekey_parts(void **state)
{
    cms_filekey_t  k;

    (void) state;

    parts("ws/asset.png", 3, 9, 3);
    parts("a.b/c", 4, 5, 0);
    parts("x.tar.gz", 0, 6, 2);
    parts("noext", 0, 5, 0);
    parts("a/b.", 2, 4, 0);

    /* a refused key leaves k alone */
    k.name = 77;
    assert_false(parse("../x", 4, &k));
    assert_int_equal(k.name, 77);
}


static void
test_filekey_ours(void **state)
{
    size_t       i;
    const char  *ours[] = {
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.png",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.mp4",
        "users/0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "00112233445566778899aabbccddeeff.webp",
    };
    const char  *others[] = {
        "",
        "ws/asset.png",
        "users/x/y.png",
        /* uppercase, a missing or long extension, a dash misplaced */
        "0B3E4C1A-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.png",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.abcdefghijk",
        "0b3e4c1a9-f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.png",
        /* a deeper path, the avatar's name too short or not hex */
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/x/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.png",
        "users/0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "00112233445566778899aabbccddee.webp",
        "users/0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "00112233445566778899aabbccddeegg.webp",
        "users/0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "00112233445566778899aabbccddeeff.We",
    };

    (void) state;

    for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
        assert_true(cms_filekey_ours(ours[i], strlen(ours[i])));
        /* every shorter prefix is refused */
        assert_false(cms_filekey_ours(ours[i], 40));
    }

    for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        assert_false(cms_filekey_ours(others[i], strlen(others[i])));
    }

    assert_false(cms_filekey_ours(NULL, 0));
}


static void
test_filekey_variant(void **state)
{
    size_t       i;
    const char  *good[] = {
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w640.webp",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w1.jpg",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w99999.abcdefghij",
    };
    const char  *bad[] = {
        "",
        /* the upload itself, not its variant */
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.png",
        /* a leading zero, no digits, six digits, no extension, a long one */
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w0640.webp",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w.webp",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w100000.webp",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w640",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w640.",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w640.abcdefghijk",
        /* uppercase, another name, a deeper path */
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w640.WEBP",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/x640.webp",
        "0b3e4c1a-9f2d-4e5b-8a7c-112233445566/"
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/w640/w640.webp",
        "users/0b3e4c1a-9f2d-4e5b-8a7c-112233445566/w640.webp",
    };

    (void) state;

    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_true(cms_filekey_variant(good[i], strlen(good[i])));
        assert_true(cms_filekey_ours(good[i], strlen(good[i])));
        assert_false(cms_filekey_upload(good[i], strlen(good[i])));
        /* cut before its extension's dot, or at the width */
        assert_false(cms_filekey_variant(good[i],
                                         strrchr(good[i], '.') - good[i]));
        assert_false(cms_filekey_variant(good[i], 75));
    }

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_false(cms_filekey_variant(bad[i], strlen(bad[i])));
    }

    assert_true(cms_filekey_upload(bad[1], strlen(bad[1])));
    assert_false(cms_filekey_variant(NULL, 0));
    assert_false(cms_filekey_upload(NULL, 0));
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filekey_good),
        cmocka_unit_test(test_filekey_bad),
        cmocka_unit_test(test_filekey_length),
        cmocka_unit_test(test_filekey_parts),
        cmocka_unit_test(test_filekey_ours),
        cmocka_unit_test(test_filekey_variant),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
