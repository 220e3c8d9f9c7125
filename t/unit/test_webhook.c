
/*
 * Unit tests for cms_webhook.c: Standard Webhooks' own signing vector
 * (libraries/go/webhook_test.go, TestWebhookSign, in
 * github.com/standard-webhooks/standard-webhooks), the README's vectors
 * ("Verifying webhooks"; computed independently with Python's hmac), and
 * the secrets and ids refused.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_webhook.h"


#define S(s)  s, sizeof(s) - 1


/* Standard Webhooks' vector: a 24-byte secret */
#define SW_SECRET  "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define SW_ID      "msg_p5jXN8AQM9LWM0D4loKWxJek"
#define SW_TS      "1614265330"
#define SW_BODY    "{\"test\": 2432232314}"

/* the README's vector: the 32 bytes 0x00 .. 0x1f, a payload of ours */
#define RM_SECRET  "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
#define RM_ID      "0190a4d6-2f5e-7c3a-9b1d-4e5f60718293"
#define RM_TS      "1777626000"
#define RM_BODY                                                              \
    "{\"id\":\"0190a4d6-2f5e-7c3a-9b1d-4e5f60718293\","                      \
    "\"type\":\"article.published\",\"created_at\":\"2026-05-01T09:00:00Z\"," \
    "\"workspace_id\":\"5d2c1e7a-93f4-4b8e-a1c2-7e6f5d4c3b2a\","             \
    "\"data\":{\"id\":\"9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d\","             \
    "\"title\":\"Hello\"}}"


static void
sign_both(const char *secret, size_t slen, const char *id, const char *ts,
    const char *body, char *hex, char *v1)
{
    size_t         klen;
    unsigned char  key[CMS_WEBHOOK_KEY_MAX];

    assert_int_equal(cms_webhook_key(secret, slen, key, &klen), 0);
    assert_int_equal(cms_webhook_sign_hex(secret, slen,
                                          (const unsigned char *) body,
                                          strlen(body), hex), 0);
    assert_int_equal(cms_webhook_sign_v1(key, klen, id, strlen(id), ts,
                                         strlen(ts),
                                         (const unsigned char *) body,
                                         strlen(body), v1), 0);
}


static void
test_standard_webhooks_vector(void **state)
{
    char  hex[CMS_WEBHOOK_HEX_LEN], v1[CMS_WEBHOOK_V1_LEN + 1];

    (void) state;

    memset(v1, '#', sizeof(v1));
    sign_both(S(SW_SECRET), SW_ID, SW_TS, SW_BODY, hex, v1);

    assert_memory_equal(v1, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
                        CMS_WEBHOOK_V1_LEN);
    assert_int_equal(v1[CMS_WEBHOOK_V1_LEN], '#');      /* no NUL written */
    assert_memory_equal(hex, "80ec8a89ce3cd22133a1066caecb4d04"
                             "fea7467657c8514d717ec42c38a5c94c",
                        CMS_WEBHOOK_HEX_LEN);
}


static void
test_readme_vector(void **state)
{
    char  hex[CMS_WEBHOOK_HEX_LEN], v1[CMS_WEBHOOK_V1_LEN];

    (void) state;

    sign_both(S(RM_SECRET), RM_ID, RM_TS, RM_BODY, hex, v1);

    assert_memory_equal(v1, "v1,iXfcvJwKU3UpLDBGDTvc2KRNQJV9fPhA+v6nqqsS+vc=",
                        CMS_WEBHOOK_V1_LEN);
    assert_memory_equal(hex, "8839290932e404a106d40330b4789050"
                             "957a619560d1529d396370dcb93ba0fc",
                        CMS_WEBHOOK_HEX_LEN);

    /* an empty body is signed too */
    assert_int_equal(cms_webhook_sign_hex(S(RM_SECRET),
                                          (const unsigned char *) "", 0, hex),
                     0);
    assert_memory_equal(hex, "3869a63cbe73c747431cf9ff4d38cbaa"
                             "6ad6adb0541c4753e1c90f7b6920620f",
                        CMS_WEBHOOK_HEX_LEN);
}


static void
test_key(void **state)
{
    size_t         klen, i;
    unsigned char  key[CMS_WEBHOOK_KEY_MAX];

    (void) state;

    assert_int_equal(cms_webhook_key(S(RM_SECRET), key, &klen), 0);
    assert_int_equal(klen, 32);

    for (i = 0; i < 32; i++) {
        assert_int_equal(key[i], i);
    }

    /* padding is optional */
    assert_int_equal(cms_webhook_key(S("whsec_AAECAwQFBgcICQoLDA0ODxAREhMU"
                                       "FRYXGBkaGxwdHh8"), key, &klen), 0);
    assert_int_equal(klen, 32);

    /* 64 bytes, the most */
    assert_int_equal(cms_webhook_key(S("whsec_"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        "AAAAAAAAAAAAAAAAAA=="), key, &klen), 0);
    assert_int_equal(klen, 64);
}


static void
test_key_refused(void **state)
{
    size_t         klen;
    unsigned char  key[CMS_WEBHOOK_KEY_MAX];

    static const char  *bad[] = {
        "", "whsec_", "whsec", "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "sk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS",        /* a bad length */
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2La",           /* 19 bytes */
        "whsec_MfKQ9r8GKYqrTwjU-D8ILPZIo2LaLaSw",       /* url alphabet */
        "whsec_MfKQ9r8GKYqrTwjU_D8ILPZIo2LaLaSw",
        "whsec_MfKQ9r8GKYqrTwjU D8ILPZIo2LaLaSw",       /* whitespace */
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw===",    /* three "=" */
        "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9=", /* spare bits */
        /* 65 and 66 bytes */
        "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        "AAAAAAAAAAAAAAAAAAAAAAAAA",
        "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        "AAAAAAAAAAAAAAAAAAAAAAAAAA",
        "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        NULL
    };
    const char  **b;

    (void) state;

    for (b = bad; *b; b++) {
        assert_int_equal(cms_webhook_key(*b, strlen(*b), key, &klen), -1);
    }
}


static void
test_v1_refused(void **state)
{
    size_t         klen;
    unsigned char  key[CMS_WEBHOOK_KEY_MAX];
    char           v1[CMS_WEBHOOK_V1_LEN];

    (void) state;

    assert_int_equal(cms_webhook_key(S(SW_SECRET), key, &klen), 0);

    /* an id or a time with a "." would let the message split two ways */
    assert_int_equal(cms_webhook_sign_v1(key, klen, S("msg.1"), S(SW_TS),
                                         (const unsigned char *) "{}", 2, v1),
                     -1);
    assert_int_equal(cms_webhook_sign_v1(key, klen, S(SW_ID), S("1614265330.5"),
                                         (const unsigned char *) "{}", 2, v1),
                     -1);
    assert_int_equal(cms_webhook_sign_v1(key, klen, "", 0, S(SW_TS),
                                         (const unsigned char *) "{}", 2, v1),
                     -1);
    assert_int_equal(cms_webhook_sign_v1(key, klen, S(SW_ID), "", 0,
                                         (const unsigned char *) "{}", 2, v1),
                     -1);
}


static void
test_each_part_counts(void **state)
{
    char  hex[CMS_WEBHOOK_HEX_LEN], v1[CMS_WEBHOOK_V1_LEN];
    char  hex2[CMS_WEBHOOK_HEX_LEN], v2[CMS_WEBHOOK_V1_LEN];

    (void) state;

    sign_both(S(SW_SECRET), SW_ID, SW_TS, SW_BODY, hex, v1);

    sign_both(S(SW_SECRET), SW_ID, "1614265331", SW_BODY, hex2, v2);
    assert_memory_not_equal(v1, v2, CMS_WEBHOOK_V1_LEN);
    assert_memory_equal(hex, hex2, CMS_WEBHOOK_HEX_LEN);  /* body only */

    sign_both(S(SW_SECRET), "msg_p5jXN8AQM9LWM0D4loKWxJeK", SW_TS, SW_BODY,
              hex2, v2);
    assert_memory_not_equal(v1, v2, CMS_WEBHOOK_V1_LEN);

    sign_both(S(SW_SECRET), SW_ID, SW_TS, "{\"test\": 2432232315}", hex2, v2);
    assert_memory_not_equal(v1, v2, CMS_WEBHOOK_V1_LEN);
    assert_memory_not_equal(hex, hex2, CMS_WEBHOOK_HEX_LEN);

    sign_both(S(RM_SECRET), SW_ID, SW_TS, SW_BODY, hex2, v2);
    assert_memory_not_equal(v1, v2, CMS_WEBHOOK_V1_LEN);
    assert_memory_not_equal(hex, hex2, CMS_WEBHOOK_HEX_LEN);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_standard_webhooks_vector),
        cmocka_unit_test(test_readme_vector),
        cmocka_unit_test(test_key),
        cmocka_unit_test(test_key_refused),
        cmocka_unit_test(test_v1_refused),
        cmocka_unit_test(test_each_part_counts),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
