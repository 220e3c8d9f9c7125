
/*
 * base64url (RFC 4648 section 5) without padding, for JWT segments.
 *
 * Contract: the caller owns every buffer; nothing is allocated and no NUL
 * is written.
 *
 * cms_base64url_encode() writes exactly cms_base64url_encoded_len(n)
 * characters and returns that count.
 *
 * cms_base64url_decode() is strict: it refuses '=' padding, whitespace,
 * any character outside A-Z a-z 0-9 '-' '_', a length of 4k + 1, and
 * non-zero unused bits in the last character, so every byte string has
 * exactly one accepted encoding.  out must hold
 * cms_base64url_decoded_max(n) bytes.  Returns 0 and sets *out_len, or -1
 * (out partly written, *out_len untouched).
 *
 * The length helpers are exact for valid input and need n below
 * SIZE_MAX / 4 * 3 (encoded_len) so they cannot overflow.
 */


#ifndef _CMS_BASE64URL_H_INCLUDED_
#define _CMS_BASE64URL_H_INCLUDED_


#include <stddef.h>


size_t cms_base64url_encoded_len(size_t n);
size_t cms_base64url_decoded_max(size_t n);
size_t cms_base64url_encode(const unsigned char *in, size_t n, char *out);
int cms_base64url_decode(const char *in, size_t n, unsigned char *out,
    size_t *out_len);


#endif /* _CMS_BASE64URL_H_INCLUDED_ */
