
/*
 * Single-use account tokens (invitations, password resets, email
 * verifications): signed, expiring, and stored only as a keyed hash.
 *
 *   <kind>_<base64url(expires || random || mac)>
 *
 *   kind     2 to 8 lowercase letters naming the purpose ("inv", "pwr",
 *            "vfy"); a token of one kind never passes as another
 *   expires  8 bytes, big-endian Unix seconds
 *   random   16 bytes from the caller's CSPRNG
 *   mac      the first 16 bytes of HMAC-SHA256(key, "cms token mac:"
 *            kind "_" expires random)
 *
 * The body is 40 bytes, 54 base64url characters without padding.  A
 * forged, altered or expired token is refused by cms_token_check() before
 * any database query; the database keeps only cms_token_hash() (another
 * HMAC under the same key, domain-separated), so a dump of it can neither
 * be used nor test guesses.  Single use and revocation are the database's
 * (the row records when the token was used).
 *
 * The key is a sub-key of cms_secret, cms_kdf_derive(master,
 * CMS_TOKEN_KDF_LABEL), so the module and cms-admin derive the same one.
 *
 * Contract: the caller owns every buffer; nothing is allocated and no NUL
 * is written.  The MAC is compared in constant time.
 */


#ifndef _CMS_TOKEN_H_INCLUDED_
#define _CMS_TOKEN_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


#define CMS_TOKEN_KDF_LABEL    "cms account token v1"

#define CMS_TOKEN_KEY_LEN      32
#define CMS_TOKEN_RANDOM_LEN   16
#define CMS_TOKEN_MAC_LEN      16
#define CMS_TOKEN_RAW_LEN      (8 + CMS_TOKEN_RANDOM_LEN + CMS_TOKEN_MAC_LEN)
#define CMS_TOKEN_BODY_LEN     54
#define CMS_TOKEN_KIND_MIN     2
#define CMS_TOKEN_KIND_MAX     8
#define CMS_TOKEN_MAX_LEN      (CMS_TOKEN_KIND_MAX + 1 + CMS_TOKEN_BODY_LEN)
#define CMS_TOKEN_HASH_LEN     32

#define CMS_TOKEN_OK           0
#define CMS_TOKEN_MALFORMED   -1     /* not of the form, or another kind */
#define CMS_TOKEN_FORGED      -2     /* the MAC does not verify */
#define CMS_TOKEN_EXPIRED     -3     /* genuine, past its expiry */
#define CMS_TOKEN_FAILED      -4     /* OpenSSL failed */


/*
 * Writes a token of "kind" expiring at "expires" (Unix seconds) to "out".
 * Returns its length, or 0 when "kind" is not 2 to 8 lowercase letters,
 * out_size is under CMS_TOKEN_MAX_LEN or OpenSSL fails.
 */
size_t cms_token_make(const unsigned char key[CMS_TOKEN_KEY_LEN],
    const char *kind, int64_t expires,
    const unsigned char random[CMS_TOKEN_RANDOM_LEN], char *out,
    size_t out_size);

/*
 * Checks "token" (len bytes, not NUL-terminated) as a token of "kind"
 * under "key" at time "now": CMS_TOKEN_OK (its expiry in *expires when
 * expires is not NULL), _MALFORMED, _FORGED, _EXPIRED (expires <= now) or
 * _FAILED.  The form is checked first, then the MAC, then the time: only a
 * genuine token is ever called expired.
 */
int cms_token_check(const unsigned char key[CMS_TOKEN_KEY_LEN],
    const char *kind, const char *token, size_t len, int64_t now,
    int64_t *expires);

/*
 * What the database stores for "token": HMAC-SHA256(key, "cms token id:"
 * token), 32 bytes into "out".  0, or -1 when OpenSSL fails.
 */
int cms_token_hash(const unsigned char key[CMS_TOKEN_KEY_LEN],
    const char *token, size_t len, unsigned char out[CMS_TOKEN_HASH_LEN]);

/*
 * The random part of a token that must be made again later from what the
 * database holds (a password-reset or verification link, minted when the
 * message is sent, so that no usable token is ever stored): the first
 * CMS_TOKEN_RANDOM_LEN bytes of HMAC-SHA256(key, "cms token random:" id),
 * where "id" (id_len bytes, at most CMS_TOKEN_ID_MAX) is the request row's
 * id.  0, or -1 when id is too long or OpenSSL fails.
 */
#define CMS_TOKEN_ID_MAX       64

int cms_token_random_for(const unsigned char key[CMS_TOKEN_KEY_LEN],
    const char *id, size_t id_len,
    unsigned char random[CMS_TOKEN_RANDOM_LEN]);


#endif /* _CMS_TOKEN_H_INCLUDED_ */
