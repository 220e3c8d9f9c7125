
/*
 * Unit tests for cms_password.c.  Each full-cost hash takes 64 MiB and
 * some 100 ms (seconds under valgrind), so the tests make few of them.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_password.h"


/* phc-winner-argon2 src/test.c: "password", salt "somesalt" */

static const char  ref_m64k[] =
    "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$"
    "CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc";

static const char  ref_m256[] =
    "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$"
    "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4";

static const unsigned char  salt[CMS_PASSWORD_SALT_LEN] = {
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
    0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff
};


#define PW  "correct horse battery"


static void
test_hash_and_verify(void **state)
{
    char  enc[CMS_PASSWORD_ENCODED_LEN], again[CMS_PASSWORD_ENCODED_LEN];

    (void) state;

    assert_int_equal(cms_password_hash(PW, sizeof(PW) - 1, salt, enc,
                                       sizeof(enc)), 0);

    /* the fixed parameters, the salt in unpadded base64, a 32-byte hash */

    assert_non_null(strstr(enc, "$ABEiM0RVZneImaq7zN3u/w$"));
    assert_memory_equal(enc, "$argon2id$v=19$m=65536,t=3,p=1$", 31);
    assert_int_equal(strlen(enc), 97);

    assert_int_equal(cms_password_verify(enc, PW, sizeof(PW) - 1), 1);
    assert_int_equal(cms_password_verify(enc, PW, sizeof(PW) - 2), 0);
    assert_int_equal(cms_password_verify(enc, "Correct horse battery",
                                         sizeof(PW) - 1), 0);

    /* same password and salt, same string */

    assert_int_equal(cms_password_hash(PW, sizeof(PW) - 1, salt, again,
                                       sizeof(again)), 0);
    assert_string_equal(enc, again);
}


static void
test_reference(void **state)
{
    (void) state;

    /* other costs than ours still verify: they come from the string */

    assert_int_equal(cms_password_verify(ref_m64k, "password", 8), 1);
    assert_int_equal(cms_password_verify(ref_m64k, "sassword", 8), 0);
    assert_int_equal(cms_password_verify(ref_m256, "password", 8), 1);
    assert_int_equal(cms_password_verify(ref_m256, "password!", 9), 0);
}


static void
test_refused_encoded(void **state)
{
    size_t  i;

    static const char  *bad[] = {
        "",
        "$argon2i$v=19$m=256,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2d$v=19$m=256,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=16$m=256,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$m=256,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",

        /* costs over the bounds are refused before any allocation */
        "$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=19$m=262145,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=19$m=256,t=17,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=19$m=256,t=2,p=9$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=19$m=256,t=0,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=19$m=256,t=2,p=0$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=19$m=00000000256,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=19$m=,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=19$t=2,m=256,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        "$argon2id$v=19$m=256,t=2,p=1",
        "$argon2id$v=19$m=256,t=2,p=1$",

        /* right form, damaged salt or hash: libargon2 refuses */
        "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$",
        "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/",
        "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4=",
        "$argon2id$v=19$m=256,t=2,p=1$$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
        " $argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$"
            "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4",
    };

    (void) state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(cms_password_verify(bad[i], "password", 8), 0);
    }

    assert_int_equal(cms_password_verify(NULL, "password", 8), 0);
}


static void
test_lengths(void **state)
{
    char  enc[CMS_PASSWORD_ENCODED_LEN];
    char  long_pw[CMS_PASSWORD_MAX_LEN + 1];

    (void) state;

    assert_int_equal(CMS_PASSWORD_MIN_LEN, 10);
    assert_int_equal(CMS_PASSWORD_MAX_LEN, 1024);

    memset(long_pw, 'x', sizeof(long_pw));

    /* over the cap: refused at once, no hashing */

    assert_int_equal(cms_password_hash(long_pw, sizeof(long_pw), salt, enc,
                                       sizeof(enc)), -1);
    assert_int_equal(cms_password_verify(ref_m256, long_pw,
                                         sizeof(long_pw)), 0);

    /* out too small (97 characters and the NUL need 98) */

    assert_int_equal(cms_password_hash(PW, sizeof(PW) - 1, salt, enc, 97),
                     -1);
    assert_int_equal(enc[0], '\0');
    assert_int_equal(cms_password_hash(PW, sizeof(PW) - 1, salt, enc, 0),
                     -1);
}


static void
test_max_length(void **state)
{
    char  enc[CMS_PASSWORD_ENCODED_LEN];
    char  long_pw[CMS_PASSWORD_MAX_LEN];

    (void) state;

    memset(long_pw, 'y', sizeof(long_pw));

    assert_int_equal(cms_password_hash(long_pw, sizeof(long_pw), salt, enc,
                                       sizeof(enc)), 0);
    assert_int_equal(cms_password_verify(enc, long_pw, sizeof(long_pw)), 1);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_hash_and_verify),
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_refused_encoded),
        cmocka_unit_test(test_lengths),
        cmocka_unit_test(test_max_length),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
