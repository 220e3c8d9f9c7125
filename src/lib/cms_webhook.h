
/*
 * Webhook signatures: the two a delivery carries (README, "Verifying
 * webhooks"), from the endpoint's secret "whsec_" + base64 (Standard
 * Webhooks' serialization; the module makes 32 random bytes).
 *
 *   x-service-signature   the spec's: lowercase hex HMAC-SHA256 of the
 *                         raw body, keyed with the secret string exactly
 *                         as the API answered it ("whsec_..." included)
 *   webhook-signature     Standard Webhooks' v1: "v1," + base64 (with
 *                         padding) of HMAC-SHA256 keyed with the secret's
 *                         bytes (the base64 after "whsec_" decoded) over
 *                         "<webhook-id>.<webhook-timestamp>.<body>"
 *
 * Contract: pure functions over the caller's buffers; nothing is
 * allocated (OpenSSL's MAC context lives inside a call), no NUL written.
 * Each returns 0, or -1 for input it refuses or an OpenSSL failure; out
 * is then unspecified and must not be sent.
 */


#ifndef _CMS_WEBHOOK_H_INCLUDED_
#define _CMS_WEBHOOK_H_INCLUDED_


#include <stddef.h>


#define CMS_WEBHOOK_PREFIX     "whsec_"
#define CMS_WEBHOOK_KEY_MIN    24       /* bytes (Standard Webhooks) */
#define CMS_WEBHOOK_KEY_MAX    64
#define CMS_WEBHOOK_HEX_LEN    64       /* x-service-signature */
#define CMS_WEBHOOK_V1_LEN     47       /* "v1," + 44 base64 characters */


/*
 * The signing key of secret s[0 .. len): "whsec_" then standard base64
 * (A-Z a-z 0-9 + /, "=" padding optional, no whitespace) of 24 to 64
 * bytes, written into key (CMS_WEBHOOK_KEY_MAX bytes) with *key_len set.
 */
int cms_webhook_key(const char *s, size_t len, unsigned char *key,
    size_t *key_len);

/*
 * x-service-signature: HMAC-SHA256(key = secret[0 .. secret_len) as
 * text, message = body[0 .. n)) as CMS_WEBHOOK_HEX_LEN lowercase hex
 * characters into hex.
 */
int cms_webhook_sign_hex(const char *secret, size_t secret_len,
    const unsigned char *body, size_t n, char *hex);

/*
 * webhook-signature's v1 entry: "v1," + base64(HMAC-SHA256(key[0 ..
 * key_len), id + "." + ts + "." + body)), CMS_WEBHOOK_V1_LEN characters
 * into out.  id and ts must be non-empty and hold no "." (the message
 * must split one way only); ts is the decimal Unix time, as the
 * webhook-timestamp header sends it.
 */
int cms_webhook_sign_v1(const unsigned char *key, size_t key_len,
    const char *id, size_t id_len, const char *ts, size_t ts_len,
    const unsigned char *body, size_t n, char *out);


#endif /* _CMS_WEBHOOK_H_INCLUDED_ */
