
/*
 * Unit tests for cms_token.c: a known token and its stored hash computed
 * with Python's hmac and base64 modules; every single-character change,
 * another kind, another key, a truncated or extended token and a past
 * expiry are refused, each with its own code.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_token.h"
#include "cms_hex.h"


/*
 * python3: key = bytes(range(32)); rnd = b"\xa5" * 16; exp = 2000000000
 *   payload = struct.pack(">Q", exp) + rnd
 *   mac = hmac.new(key, b"cms token mac:inv_" + payload, sha256)[:16]
 *   "inv_" + urlsafe_b64encode(payload + mac) without "="
 *   hmac.new(key, b"cms token id:" + token, sha256).hexdigest()
 */
static const char  known_token[] =
    "inv_AAAAAHc1lAClpaWlpaWlpaWlpaWlpaWlOF1RbNXdOO-6MK893c97FQ";
static const char  known_hash[] =
    "7ed899c35562f0ff5819d7b32771d061e57d9ef0fdaf1dd2c76aed17d05b53b8";


static void
fill(unsigned char *key, unsigned char *rnd)
{
    int  i;

    for (i = 0; i < CMS_TOKEN_KEY_LEN; i++) {
        key[i] = (unsigned char) i;
    }

    memset(rnd, 0xa5, CMS_TOKEN_RANDOM_LEN);
}


static void
test_known(void **state)
{
    size_t         n;
    int64_t        e;
    unsigned char  key[CMS_TOKEN_KEY_LEN], rnd[CMS_TOKEN_RANDOM_LEN];
    unsigned char  h[CMS_TOKEN_HASH_LEN], want[CMS_TOKEN_HASH_LEN];
    char           out[CMS_TOKEN_MAX_LEN];

    (void) state;

    fill(key, rnd);

    n = cms_token_make(key, "inv", 2000000000, rnd, out, sizeof(out));
    assert_int_equal(n, sizeof(known_token) - 1);
    assert_memory_equal(out, known_token, n);

    e = 0;
    assert_int_equal(cms_token_check(key, "inv", known_token, n, 1999999999,
                                     &e), CMS_TOKEN_OK);
    assert_int_equal(e, 2000000000);

    assert_int_equal(cms_token_hash(key, known_token, n, h), 0);
    assert_int_equal(cms_hex_decode(known_hash, 64, want), 0);
    assert_memory_equal(h, want, sizeof(h));
}


static void
test_refused(void **state)
{
    size_t         n, i;
    unsigned char  key[CMS_TOKEN_KEY_LEN], rnd[CMS_TOKEN_RANDOM_LEN];
    char           t[CMS_TOKEN_MAX_LEN + 2];
    int            rc;

    (void) state;

    fill(key, rnd);
    n = sizeof(known_token) - 1;

    /* expired: genuine, at and after its time */
    assert_int_equal(cms_token_check(key, "inv", known_token, n, 2000000000,
                                     NULL), CMS_TOKEN_EXPIRED);

    /* another kind: the prefix, and the MAC covering it */
    assert_int_equal(cms_token_check(key, "pwr", known_token, n, 0, NULL),
                     CMS_TOKEN_MALFORMED);
    memcpy(t, known_token, n);
    memcpy(t, "pwr", 3);
    assert_int_equal(cms_token_check(key, "pwr", t, n, 0, NULL),
                     CMS_TOKEN_FORGED);

    /* another key */
    key[0] ^= 1;
    assert_int_equal(cms_token_check(key, "inv", known_token, n, 0, NULL),
                     CMS_TOKEN_FORGED);
    key[0] ^= 1;

    /* lengths */
    assert_int_equal(cms_token_check(key, "inv", known_token, n - 1, 0, NULL),
                     CMS_TOKEN_MALFORMED);
    memcpy(t, known_token, n);
    t[n] = 'A';
    assert_int_equal(cms_token_check(key, "inv", t, n + 1, 0, NULL),
                     CMS_TOKEN_MALFORMED);
    assert_int_equal(cms_token_check(key, "inv", NULL, 0, 0, NULL),
                     CMS_TOKEN_MALFORMED);

    /* every character of the body changed: never accepted */
    for (i = 4; i < n; i++) {
        memcpy(t, known_token, n);
        t[i] = (t[i] == 'B') ? 'C' : 'B';

        rc = cms_token_check(key, "inv", t, n, 0, NULL);
        assert_true(rc == CMS_TOKEN_FORGED || rc == CMS_TOKEN_MALFORMED);
    }

    /* a character outside base64url */
    memcpy(t, known_token, n);
    t[10] = '+';
    assert_int_equal(cms_token_check(key, "inv", t, n, 0, NULL),
                     CMS_TOKEN_MALFORMED);
}


static void
test_kinds(void **state)
{
    unsigned char  key[CMS_TOKEN_KEY_LEN], rnd[CMS_TOKEN_RANDOM_LEN];
    char           out[CMS_TOKEN_MAX_LEN];

    (void) state;

    fill(key, rnd);

    assert_int_equal(cms_token_make(key, "i", 1, rnd, out, sizeof(out)), 0);
    assert_int_equal(cms_token_make(key, "toolongkind", 1, rnd, out,
                                    sizeof(out)), 0);
    assert_int_equal(cms_token_make(key, "Inv", 1, rnd, out, sizeof(out)), 0);
    assert_int_equal(cms_token_make(key, NULL, 1, rnd, out, sizeof(out)), 0);
    assert_int_equal(cms_token_make(key, "inv", 1, rnd, out,
                                    sizeof(out) - 1), 0);
    assert_int_equal(cms_token_make(key, "longkind", 1, rnd, out,
                                    sizeof(out)), CMS_TOKEN_MAX_LEN);
}


/*
 * The random part made again from a request row's id:
 *   hmac.new(bytes(range(32)), b"cms token random:" + id, sha256)[:16]
 * the same for the same id, another for another id, refused when too long.
 */
static void
test_random_for(void **state)
{
    char           hex[2 * CMS_TOKEN_RANDOM_LEN + 1], id[CMS_TOKEN_ID_MAX + 1];
    unsigned char  key[CMS_TOKEN_KEY_LEN], rnd[CMS_TOKEN_RANDOM_LEN];
    unsigned char  again[CMS_TOKEN_RANDOM_LEN];
    static const char  row[] = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

    (void) state;

    fill(key, rnd);

    assert_int_equal(cms_token_random_for(key, row, sizeof(row) - 1, rnd), 0);
    cms_hex_encode(rnd, CMS_TOKEN_RANDOM_LEN, hex);
    hex[2 * CMS_TOKEN_RANDOM_LEN] = '\0';
    assert_string_equal(hex, "3e413b6570fca0f26c2f2bdc21b5e2ea");

    assert_int_equal(cms_token_random_for(key, row, sizeof(row) - 1, again),
                     0);
    assert_memory_equal(rnd, again, CMS_TOKEN_RANDOM_LEN);

    assert_int_equal(cms_token_random_for(key, row, sizeof(row) - 2, again),
                     0);
    assert_memory_not_equal(rnd, again, CMS_TOKEN_RANDOM_LEN);

    memset(id, 'a', sizeof(id));
    assert_int_equal(cms_token_random_for(key, id, CMS_TOKEN_ID_MAX, again),
                     0);
    assert_int_equal(cms_token_random_for(key, id, CMS_TOKEN_ID_MAX + 1,
                                          again), -1);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_known),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_random_for),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
