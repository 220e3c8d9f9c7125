
/*
 * JSON Web Tokens (RFC 7519), HS256 only, for studio sessions and UI
 * tokens.
 *
 * The header is fixed: a token is accepted only when its first segment is
 * exactly CMS_JWT_HEADER, base64url of {"alg":"HS256","typ":"JWT"}.  So
 * "alg": "none", RS256 (the HMAC-with-the-public-key confusion), HS512, a
 * "kid" or any extra field are refused without ever reading the header as
 * JSON.
 *
 * cms_jwt_sign() writes header.payload.signature (base64url, no padding)
 * for the payload JSON text the caller built (not empty); it does not look
 * at it.
 *
 * cms_jwt_verify() checks, in this order:
 *   1. at most CMS_JWT_MAX_LEN characters, exactly two dots, three
 *      non-empty segments, each strict base64url (cms_base64url.h: no '=',
 *      no white space, no stray bits)                -> CMS_JWT_MALFORMED
 *   2. the header segment is CMS_JWT_HEADER           -> CMS_JWT_BAD_ALG
 *   3. the signature is the 32-byte HMAC-SHA256 of "header.payload",
 *      compared in constant time                      -> CMS_JWT_BAD_SIGNATURE
 *   4. the payload decodes into the caller's buffer   -> CMS_JWT_MALFORMED
 *      when payload_size is too small (size it with
 *      CMS_JWT_MAX_PAYLOAD to rule that out)
 * and returns CMS_JWT_OK with the payload JSON bytes (no NUL) in payload.
 * The payload is decoded only after the signature has been verified.
 * Expiry and every other claim are the caller's: it parses the payload.
 *
 * Contract: the caller owns every buffer; nothing is allocated and no NUL
 * is written.  key is the 32-byte sub-key from cms_kdf_derive().  Because
 * base64url decoding is strict, a token accepted under a key is exactly
 * what cms_jwt_sign() produces for its payload under that key.
 */


#ifndef _CMS_JWT_H_INCLUDED_
#define _CMS_JWT_H_INCLUDED_


#include <stddef.h>


#define CMS_JWT_KEY_LEN        32

/* base64url of {"alg":"HS256","typ":"JWT"} */
#define CMS_JWT_HEADER         "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
#define CMS_JWT_HEADER_LEN     (sizeof(CMS_JWT_HEADER) - 1)

/* base64url of the 32-byte HMAC-SHA256 */
#define CMS_JWT_SIG_LEN        43

/* longest token either function handles, and the longest payload in it */
#define CMS_JWT_MAX_LEN        4096
/* 4096 - 36 - 2 dots - 43 = 4015 payload characters decode to 3011 bytes */
#define CMS_JWT_MAX_PAYLOAD    3011

#define CMS_JWT_OK              0
#define CMS_JWT_MALFORMED      -1
#define CMS_JWT_BAD_ALG        -2
#define CMS_JWT_BAD_SIGNATURE  -3


size_t cms_jwt_sign(const unsigned char key[CMS_JWT_KEY_LEN],
    const char *payload_json, size_t len, char *out, size_t out_size);
int cms_jwt_verify(const unsigned char key[CMS_JWT_KEY_LEN],
    const char *token, size_t len, unsigned char *payload,
    size_t payload_size, size_t *payload_len);


#endif /* _CMS_JWT_H_INCLUDED_ */
