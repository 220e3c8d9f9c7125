
/*
 * Fixed-width base62 of a big-endian unsigned number held in a byte array.
 *
 * Alphabet 0-9 A-Z a-z, so '0' is the zero digit and, being in ASCII order,
 * equal-width encodings compare like the numbers they hold.  Used for API
 * key bodies and checksums (cms_key.h).
 *
 * Contract: the caller owns every buffer; nothing is allocated and no NUL
 * is written.  Numbers are at most CMS_BASE62_MAX_BYTES bytes.
 *
 * cms_base62_encode() writes exactly width characters, left-padded with
 * '0'.  It returns 0, or -1 when n exceeds CMS_BASE62_MAX_BYTES or the
 * value needs more than width digits (out is then garbage).
 *
 * cms_base62_decode() reads exactly n characters into exactly out_n bytes,
 * big-endian, left-padded with zero bytes.  It returns 0, or -1 on a
 * character outside the alphabet or a value that does not fit in out_n
 * bytes (out is then garbage).
 *
 * cms_base62_check() returns 0 when cms_base62_decode() would succeed, -1
 * otherwise, without handing out the number (out_n <= CMS_BASE62_MAX_BYTES).
 *
 * The numbers are often secrets: encode and check wipe their scratch
 * copies, and the caller wipes its own buffers (decode's out included, on
 * failure too).
 */


#ifndef _CMS_BASE62_H_INCLUDED_
#define _CMS_BASE62_H_INCLUDED_


#include <stddef.h>


#define CMS_BASE62_MAX_BYTES  64


int cms_base62_encode(const unsigned char *in, size_t n, char *out,
    size_t width);
int cms_base62_decode(const char *in, size_t n, unsigned char *out,
    size_t out_n);
int cms_base62_check(const char *in, size_t n, size_t out_n);


#endif /* _CMS_BASE62_H_INCLUDED_ */
