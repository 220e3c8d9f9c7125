
/*
 * UUIDs: RFC 9562 version 7 generation from caller-supplied time and
 * randomness, canonical formatting, strict parsing.
 *
 * Contract: the caller owns every buffer; nothing is allocated and no NUL
 * is written.  Text output is always exactly CMS_UUID_LEN (36) lowercase
 * characters in the 8-4-4-4-12 form.  The caller supplies the clock and the
 * random bytes (RAND_bytes() in _crypto.c), so this file needs no library.
 *
 * cms_uuid_parse() accepts only the canonical 8-4-4-4-12 hex form, either
 * case, with no braces, "urn:uuid:" or whitespace, and any version or
 * variant (the nil UUID included).  It returns 0, or -1 with out partly
 * written.  cms_uuid_valid() returns 1 or 0 for the same test.
 */


#ifndef _CMS_UUID_H_INCLUDED_
#define _CMS_UUID_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


#define CMS_UUID_LEN        36
#define CMS_UUID_BYTES      16
#define CMS_UUID7_RAND_LEN  10


void cms_uuid7_format(uint64_t unix_ms,
    const unsigned char rand[CMS_UUID7_RAND_LEN], char out[CMS_UUID_LEN]);
void cms_uuid_format(const unsigned char in[CMS_UUID_BYTES],
    char out[CMS_UUID_LEN]);
int cms_uuid_parse(const char *s, size_t len,
    unsigned char out[CMS_UUID_BYTES]);
int cms_uuid_valid(const char *s, size_t len);


#endif /* _CMS_UUID_H_INCLUDED_ */
