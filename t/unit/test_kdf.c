
/*
 * Unit tests for cms_kdf.c: HMAC-SHA256 against the RFC 4231 vectors, the
 * sub-key labels and the API key hash against values computed with
 * Python's hmac module; the construction against OpenSSL's HMAC().
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "cms_kdf.h"
#include "cms_hex.h"


typedef struct {
    const char  *key_hex;
    const char  *data_hex;
    const char  *mac_hex;     /* test case 5: only the first 128 bits */
} rfc4231_t;


/* RFC 4231 section 4, HMAC-SHA-256 results of test cases 1 to 7 */

static const rfc4231_t  rfc4231[] = {

    /* 1: "Hi There" */
    { "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
      "4869205468657265",
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },

    /* 2: "Jefe", "what do ya want for nothing?" */
    { "4a656665",
      "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },

    /* 3 */
    { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
      "dddddddddddddddddddddddddddddddddddd",
      "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },

    /* 4 */
    { "0102030405060708090a0b0c0d0e0f10111213141516171819",
      "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
      "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
      "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },

    /* 5: "Test With Truncation" */
    { "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c",
      "546573742057697468205472756e636174696f6e",
      "a3b6167473100ee06e0c796c2955552b" },
};


/* test cases 6 and 7: a 131-byte key of 0xaa, longer than a block */

static const char  rfc4231_6_data[] =
    "Test Using Larger Than Block-Size Key - Hash Key First";
static const char  rfc4231_6_mac[] =
    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54";

static const char  rfc4231_7_data[] =
    "This is a test using a larger than block-size key and a larger than "
    "block-size data. The key needs to be hashed before being used by the "
    "HMAC algorithm.";
static const char  rfc4231_7_mac[] =
    "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2";


static void
check_mac(const unsigned char *key, size_t key_len, const void *data,
    size_t data_len, const char *mac_hex)
{
    unsigned char  mac[CMS_KDF_LEN], want[CMS_KDF_LEN];

    assert_int_equal(cms_hex_decode(mac_hex, strlen(mac_hex), want), 0);

    memset(mac, 0x5a, sizeof(mac));
    assert_int_equal(cms_hmac_sha256(key, key_len, data, data_len, mac), 0);
    assert_memory_equal(mac, want, strlen(mac_hex) / 2);
}


static void
test_rfc4231(void **state)
{
    size_t         i, klen, dlen;
    unsigned char  key[131], data[200];

    (void) state;

    for (i = 0; i < sizeof(rfc4231) / sizeof(rfc4231[0]); i++) {
        klen = strlen(rfc4231[i].key_hex) / 2;
        dlen = strlen(rfc4231[i].data_hex) / 2;

        assert_int_equal(cms_hex_decode(rfc4231[i].key_hex, klen * 2, key),
                         0);
        assert_int_equal(cms_hex_decode(rfc4231[i].data_hex, dlen * 2, data),
                         0);

        check_mac(key, klen, data, dlen, rfc4231[i].mac_hex);
    }

    memset(key, 0xaa, sizeof(key));

    check_mac(key, sizeof(key), rfc4231_6_data, sizeof(rfc4231_6_data) - 1,
              rfc4231_6_mac);
    check_mac(key, sizeof(key), rfc4231_7_data, sizeof(rfc4231_7_data) - 1,
              rfc4231_7_mac);
}


static void
test_derive(void **state)
{
    int            i;
    size_t         j;
    unsigned char  master[36], a[CMS_KDF_LEN], b[CMS_KDF_LEN];
    unsigned char  all[4][CMS_KDF_LEN];

    static const char  *labels[4] = {
        CMS_KDF_SESSION, CMS_KDF_API_KEY, CMS_KDF_AEAD, CMS_KDF_UI_TOKEN
    };

    (void) state;

    /* python3: hmac.new(b"master" * 6, b"cms session jwt v1", sha256) */

    memcpy(master, "mastermastermastermastermastermaster", 36);

    assert_int_equal(cms_kdf_derive(master, 36, CMS_KDF_SESSION, a), 0);
    assert_int_equal(cms_hex_decode("e12bdfbe659b0ec52a931df86ad2952b"
                                    "3d0f2b82c081020f257ed943a7f0f982",
                                    64, b), 0);
    assert_memory_equal(a, b, CMS_KDF_LEN);

    /* every label gives its own key; the same label gives the same key */

    for (i = 0; i < 4; i++) {
        assert_int_equal(cms_kdf_derive(master, 36, labels[i], all[i]), 0);
        assert_int_equal(cms_kdf_derive(master, 36, labels[i], a), 0);
        assert_memory_equal(a, all[i], CMS_KDF_LEN);

        for (j = 0; j < (size_t) i; j++) {
            assert_memory_not_equal(all[i], all[j], CMS_KDF_LEN);
        }
    }

    /* one changed master byte changes the key */

    master[35] ^= 1;
    assert_int_equal(cms_kdf_derive(master, 36, CMS_KDF_SESSION, a), 0);
    assert_memory_not_equal(a, all[0], CMS_KDF_LEN);

    assert_string_equal(CMS_KDF_SESSION, "cms session jwt v1");
    assert_string_equal(CMS_KDF_API_KEY, "cms api key pepper v1");
    assert_string_equal(CMS_KDF_AEAD, "cms aead v1");
    assert_string_equal(CMS_KDF_UI_TOKEN, "cms ui token v1");
}


static void
test_key_hash(void **state)
{
    int            i;
    unsigned char  pepper[CMS_KDF_LEN], a[CMS_KDF_LEN], b[CMS_KDF_LEN];

    static const char  key[] =
        "svc_live_0000000000000000000000000000000000000000000297tdY";

    (void) state;

    for (i = 0; i < CMS_KDF_LEN; i++) {
        pepper[i] = (unsigned char) i;
    }

    /* python3: hmac.new(bytes(range(32)), key, sha256): the whole string */

    assert_int_equal(cms_key_hash(pepper, key, sizeof(key) - 1, a), 0);
    assert_int_equal(cms_hex_decode("ab215606c618d5672b2fdff83593d6dc"
                                    "4f893f7d1cf5dffbe4f1ec6bbff97dfd",
                                    64, b), 0);
    assert_memory_equal(a, b, CMS_KDF_LEN);

    /* the prefix counts: the body alone hashes differently */

    assert_int_equal(cms_key_hash(pepper, key + 9, sizeof(key) - 10, b), 0);
    assert_memory_not_equal(a, b, CMS_KDF_LEN);

    /* and so does the pepper */

    pepper[0] ^= 0x80;
    assert_int_equal(cms_key_hash(pepper, key, sizeof(key) - 1, b), 0);
    assert_memory_not_equal(a, b, CMS_KDF_LEN);
}


static void
test_empty(void **state)
{
    unsigned char  a[CMS_KDF_LEN], b[CMS_KDF_LEN];

    (void) state;

    /* python3: hmac.new(b"", b"", sha256) */

    assert_int_equal(cms_hmac_sha256(NULL, 0, NULL, 0, a), 0);
    assert_int_equal(cms_hex_decode("b613679a0814d9ec772f95d778c35fc5"
                                    "ff1697c493715653c6c712144292c5ad",
                                    64, b), 0);
    assert_memory_equal(a, b, CMS_KDF_LEN);
}


/*
 * The construction against OpenSSL's own HMAC(): every key length from
 * empty to past two blocks (the long ones hashed first), messages from
 * empty to past a block, pseudo-random bytes.
 */

static void
test_against_openssl(void **state)
{
    size_t         kl, ml;
    uint32_t       x;
    unsigned int   n;
    unsigned char  key[160], msg[150], a[CMS_KDF_LEN], b[CMS_KDF_LEN];

    (void) state;

    x = 2463534242u;

    for (kl = 0; kl < sizeof(key); kl++) {
        for (ml = 0; ml < sizeof(msg); ml += 13) {
            for (n = 0; n < sizeof(key); n++) {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5;
                key[n] = (unsigned char) x;
            }

            for (n = 0; n < sizeof(msg); n++) {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5;
                msg[n] = (unsigned char) x;
            }

            n = CMS_KDF_LEN;
            assert_non_null(HMAC(EVP_sha256(), key, (int) kl, msg, ml, b, &n));
            assert_int_equal(cms_hmac_sha256(key, kl, msg, ml, a), 0);
            assert_memory_equal(a, b, CMS_KDF_LEN);
        }
    }

    /* the fetched algorithms are the ones named */

    assert_int_equal(EVP_MD_get_size(cms_sha256()), 32);
    assert_true(EVP_MD_is_a(cms_sha256(), "SHA256"));
    assert_true(EVP_CIPHER_is_a(cms_aes_256_gcm(), "AES-256-GCM"));
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_rfc4231),
        cmocka_unit_test(test_derive),
        cmocka_unit_test(test_key_hash),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_against_openssl),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
