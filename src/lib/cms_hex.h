
/*
 * Hexadecimal encoding and strict decoding.
 *
 * Contract: the caller owns every buffer and sizes it; nothing is
 * allocated and no NUL is written.  cms_hex_encode() writes exactly 2 * n
 * lowercase characters.  cms_hex_decode() reads exactly n characters (n
 * even, either case) into n / 2 bytes and returns 0, or -1 on an odd n or a
 * non-hex character; out is then partly written and must be discarded.
 */


#ifndef _CMS_HEX_H_INCLUDED_
#define _CMS_HEX_H_INCLUDED_


#include <stddef.h>


void cms_hex_encode(const unsigned char *in, size_t n, char *out);
int cms_hex_decode(const char *in, size_t n, unsigned char *out);


#endif /* _CMS_HEX_H_INCLUDED_ */
