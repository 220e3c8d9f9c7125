
/*
 * A record's id signed for a link that needs no login (the newsletter's
 * unsubscribe link): base64url, no padding, of the 16 bytes of the uuid
 * followed by the first 16 bytes of HMAC-SHA256(key, those 16 bytes): 43
 * characters.  The key is one purpose's sub-key (cms_kdf_derive()), so a
 * token made for one purpose opens nothing else; it never expires (an
 * unsubscribe link must keep working), and the id it carries is what the
 * route acts on.
 *
 * Contract: the caller owns every buffer; nothing is allocated.
 * cms_signed_id_make() writes exactly CMS_SIGNED_ID_LEN characters (no
 * NUL) and returns 0, or -1 when "id" is not a uuid's text or OpenSSL
 * fails.  cms_signed_id_open() returns 0 with the uuid's text (36
 * lowercase characters, no NUL) in "id" when "s" is exactly a token this
 * key made, else -1 ("id" is then unspecified).  The MAC is compared in
 * constant time.
 */


#ifndef _CMS_SIGNED_ID_H_INCLUDED_
#define _CMS_SIGNED_ID_H_INCLUDED_


#include <stddef.h>


#define CMS_SIGNED_ID_LEN   43
#define CMS_SIGNED_ID_KEY   32


int cms_signed_id_make(const unsigned char key[CMS_SIGNED_ID_KEY],
    const char *id, size_t id_len, char out[CMS_SIGNED_ID_LEN]);
int cms_signed_id_open(const unsigned char key[CMS_SIGNED_ID_KEY],
    const char *s, size_t len, char id[36]);


#endif /* _CMS_SIGNED_ID_H_INCLUDED_ */
