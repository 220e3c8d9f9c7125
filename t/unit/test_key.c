
/*
 * Unit tests for cms_key.c.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_key.h"


/* expected keys computed independently with Python (zlib.crc32) */

static const char  key_zero[] =
    "svc_live_0000000000000000000000000000000000000000000297tdY";
static const char  key_seq[] =
    "sk_sandbox_003aUlTJC7tjlCTQj2uNU3MFagCXG9LRKRcwGkBIDlf2VwxKv";
static const char  key_ones[] =
    "pk_live_yhjskwdA6OZ1AL1YmHWZWm8LLG7HjnuCA2j5rOw8Xp12HLJpp";

static const char  *prefixes[] = {
    "svc_live_", "pk_live_", "sk_admin_", "sk_live_", "sk_sandbox_"
};

#define NPREFIXES  (sizeof(prefixes) / sizeof(prefixes[0]))


static void
fill_secret(unsigned char *s, unsigned seed)
{
    int  i;

    for (i = 0; i < CMS_KEY_SECRET_LEN; i++) {
        s[i] = (unsigned char) (seed * 197 + (unsigned) i * 53 + (seed >> 3));
    }
}


static void
test_crc32(void **state)
{
    static const char  fox[] = "The quick brown fox jumps over the lazy dog";

    (void) state;

    assert_int_equal(cms_crc32((const unsigned char *) "123456789", 9),
                     0xcbf43926);
    assert_int_equal(cms_crc32((const unsigned char *) "", 0), 0);
    assert_int_equal(cms_crc32((const unsigned char *) "a", 1), 0xe8b7be43);
    assert_int_equal(cms_crc32((const unsigned char *) fox, sizeof(fox) - 1),
                     0x414fa339);
}


static void
test_known_keys(void **state)
{
    char           out[CMS_KEY_MAX_LEN];
    size_t         n;
    unsigned char  secret[CMS_KEY_SECRET_LEN];

    (void) state;

    memset(secret, 0, sizeof(secret));
    n = cms_key_format("svc_live_", secret, out, sizeof(out));
    assert_int_equal(n, sizeof(key_zero) - 1);
    assert_memory_equal(out, key_zero, n);

    for (n = 0; n < sizeof(secret); n++) {
        secret[n] = (unsigned char) n;
    }

    n = cms_key_format("sk_sandbox_", secret, out, sizeof(out));
    assert_int_equal(n, sizeof(key_seq) - 1);
    assert_int_equal(n, CMS_KEY_MAX_LEN);
    assert_memory_equal(out, key_seq, n);

    memset(secret, 0xff, sizeof(secret));
    n = cms_key_format("pk_live_", secret, out, sizeof(out));
    assert_int_equal(n, sizeof(key_ones) - 1);
    assert_memory_equal(out, key_ones, n);
}


static void
test_round_trip(void **state)
{
    char           out[CMS_KEY_MAX_LEN + 1];
    size_t         i, n;
    unsigned       seed;
    cms_key_t      k;
    unsigned char  secret[CMS_KEY_SECRET_LEN];

    (void) state;

    for (seed = 0; seed < 50; seed++) {
        fill_secret(secret, seed);

        for (i = 0; i < NPREFIXES; i++) {
            memset(out, '#', sizeof(out));

            n = cms_key_format(prefixes[i], secret, out, sizeof(out));
            assert_int_equal(n, strlen(prefixes[i]) + 49);
            assert_int_equal(out[n], '#');

            assert_int_equal(cms_key_parse(out, n, &k), CMS_KEY_OK);
            assert_int_equal(k.kind, i);
            assert_ptr_equal(k.prefix, out);
            assert_int_equal(k.prefix_len, strlen(prefixes[i]));
            assert_ptr_equal(k.body, out + k.prefix_len);
            assert_int_equal(k.body_len, CMS_KEY_BODY_LEN);
            assert_ptr_equal(k.checksum, out + n - CMS_KEY_CHECKSUM_LEN);
            assert_string_equal(cms_key_kind_prefix(k.kind), prefixes[i]);
        }
    }

    assert_null(cms_key_kind_prefix((cms_key_kind_e) NPREFIXES));
}


static void
test_format_errors(void **state)
{
    char           out[CMS_KEY_MAX_LEN];
    unsigned char  secret[CMS_KEY_SECRET_LEN];

    (void) state;

    fill_secret(secret, 7);

    /* too small by one, then exact */
    assert_int_equal(cms_key_format("svc_live_", secret, out, 57), 0);
    assert_int_equal(cms_key_format("svc_live_", secret, out, 58), 58);
    assert_int_equal(cms_key_format("svc_live_", secret, NULL, 0), 0);

    /* only the listed prefixes, exactly */
    assert_int_equal(cms_key_format("svc_live", secret, out, 60), 0);
    assert_int_equal(cms_key_format("svc_live_x", secret, out, 60), 0);
    assert_int_equal(cms_key_format("SVC_LIVE_", secret, out, 60), 0);
    assert_int_equal(cms_key_format("", secret, out, 60), 0);
    assert_int_equal(cms_key_format("ghp_", secret, out, 60), 0);
}


/* every single-byte change, to any value, is refused */

static void
test_mutations(void **state)
{
    int            c, rc;
    char           key[CMS_KEY_MAX_LEN], orig;
    size_t         i, p, n;
    cms_key_t      k;
    unsigned char  secret[CMS_KEY_SECRET_LEN];

    (void) state;

    for (p = 0; p < NPREFIXES; p++) {
        fill_secret(secret, (unsigned) p + 100);
        n = cms_key_format(prefixes[p], secret, key, sizeof(key));
        assert_int_not_equal(n, 0);

        for (i = 0; i < n; i++) {
            orig = key[i];

            for (c = 0; c < 256; c++) {
                if ((char) c == orig) {
                    continue;
                }

                key[i] = (char) c;
                rc = cms_key_parse(key, n, &k);
                assert_true(rc == CMS_KEY_MALFORMED
                            || rc == CMS_KEY_BAD_CHECKSUM);
            }

            key[i] = orig;
        }

        assert_int_equal(cms_key_parse(key, n, &k), CMS_KEY_OK);
    }
}


static void
test_truncation(void **state)
{
    char       key[CMS_KEY_MAX_LEN + 1];
    size_t     n;
    cms_key_t  k;

    (void) state;

    for (n = 0; n < sizeof(key_seq) - 1; n++) {
        assert_int_equal(cms_key_parse(key_seq, n, &k), CMS_KEY_MALFORMED);
    }

    /* one extra character, valid or not */
    memcpy(key, key_seq, sizeof(key_seq) - 1);
    key[CMS_KEY_MAX_LEN] = 'a';
    assert_int_equal(cms_key_parse(key, CMS_KEY_MAX_LEN + 1, &k),
                     CMS_KEY_MALFORMED);

    /* a body character dropped and one appended: right length, shifted */
    memcpy(key, key_seq, 11);
    memcpy(key + 11, key_seq + 12, CMS_KEY_MAX_LEN - 12);
    key[CMS_KEY_MAX_LEN - 1] = 'v';
    assert_int_not_equal(cms_key_parse(key, CMS_KEY_MAX_LEN, &k),
                         CMS_KEY_OK);
}


static void
test_wrong_prefix(void **state)
{
    char       key[CMS_KEY_MAX_LEN + 8];
    cms_key_t  k;

    (void) state;

    /* same length, other kind: the checksum covers the prefix */
    memcpy(key, key_ones, sizeof(key_ones));
    key[0] = 's';
    assert_int_equal(cms_key_parse(key, sizeof(key_ones) - 1, &k),
                     CMS_KEY_BAD_CHECKSUM);

    /* unknown prefixes */
    memcpy(key, "xk_live_", 8);
    assert_int_equal(cms_key_parse(key, sizeof(key_ones) - 1, &k),
                     CMS_KEY_MALFORMED);

    memcpy(key, "PK_LIVE_", 8);
    assert_int_equal(cms_key_parse(key, sizeof(key_ones) - 1, &k),
                     CMS_KEY_MALFORMED);

    /* a known prefix with another kind's length */
    memcpy(key, "sk_live_", 8);
    memcpy(key + 8, key_zero + 9, sizeof(key_zero) - 9);
    assert_int_equal(cms_key_parse(key, sizeof(key_zero) - 2, &k),
                     CMS_KEY_BAD_CHECKSUM);
    memcpy(key, "svc_live", 8);
    assert_int_equal(cms_key_parse(key, sizeof(key_zero) - 2, &k),
                     CMS_KEY_MALFORMED);
}


static void
test_out_of_range(void **state)
{
    char       key[CMS_KEY_MAX_LEN];
    cms_key_t  k;

    /*
     * Body 2^256 (one above the largest secret) and a checksum above 2^32
     * can carry no valid key, whatever the CRC says.
     */

    static const char  body_over[] =
        "svc_live_yhjskwdA6OZ1AL1YmHWZWm8LLG7HjnuCA2j5rOw8Xp2000000";
    static const char  sum_over[] =
        "svc_live_0000000000000000000000000000000000000000000zzzzzz";

    (void) state;

    assert_int_equal(cms_key_parse(body_over, sizeof(body_over) - 1, &k),
                     CMS_KEY_MALFORMED);
    assert_int_equal(cms_key_parse(sum_over, sizeof(sum_over) - 1, &k),
                     CMS_KEY_MALFORMED);

    /* the largest checksum value is in range, just wrong here */
    memcpy(key, key_zero, sizeof(key_zero) - 1);
    memcpy(key + sizeof(key_zero) - 7, "4gfFC3", 6);
    assert_int_equal(cms_key_parse(key, sizeof(key_zero) - 1, &k),
                     CMS_KEY_BAD_CHECKSUM);
}


static void
test_visible_prefix(void **state)
{
    char       out[CMS_KEY_VISIBLE_MAX];
    cms_key_t  k;

    (void) state;

    assert_int_equal(cms_key_parse(key_ones, sizeof(key_ones) - 1, &k),
                     CMS_KEY_OK);
    assert_int_equal(cms_key_visible_prefix(&k, out, sizeof(out)), 14);
    assert_memory_equal(out, "pk_live_yhjskw", 14);
    assert_int_equal(cms_key_visible_prefix(&k, out, 13), 0);
    assert_int_equal(cms_key_visible_prefix(&k, out, 14), 14);

    assert_int_equal(cms_key_parse(key_seq, sizeof(key_seq) - 1, &k),
                     CMS_KEY_OK);
    assert_int_equal(cms_key_visible_prefix(&k, out, sizeof(out)),
                     CMS_KEY_VISIBLE_MAX);
    assert_memory_equal(out, "sk_sandbox_003aUl", CMS_KEY_VISIBLE_MAX);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_known_keys),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_format_errors),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_wrong_prefix),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_visible_prefix),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
