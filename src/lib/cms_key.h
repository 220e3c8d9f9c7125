
/*
 * API key format: <prefix><body><checksum>, after GitHub's token format.
 *
 *   prefix    one of svc_live_ pk_live_ sk_admin_ sk_live_ sk_sandbox_
 *   body      the 32-byte secret as a big-endian number in base62, exactly
 *             43 characters, left-padded with '0'
 *   checksum  CRC-32 (IEEE, as zlib) of prefix + body in base62, exactly
 *             6 characters, left-padded with '0'
 *
 * The checksum lets a scanner recognise a leaked key and lets _auth.c refuse
 * a mistyped or forged-looking key before any database query; it is not a
 * MAC.  Covering the prefix means a key cannot be moved to another kind
 * (pk_live_ and sk_live_ have the same length).  Every key string has one
 * canonical form: cms_key_parse() accepts exactly what cms_key_format()
 * produces.
 *
 * Contract: the caller owns every buffer; nothing is allocated and no NUL
 * is written.  cms_key_t only points into the caller's key string, so it is
 * valid while that string is.  Functions returning size_t return the number
 * of characters written, or 0 when out_size is too small or an argument is
 * invalid.  The caller wipes secret bytes and key strings when done.
 */


#ifndef _CMS_KEY_H_INCLUDED_
#define _CMS_KEY_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


#define CMS_KEY_SECRET_LEN     32
#define CMS_KEY_BODY_LEN       43
#define CMS_KEY_CHECKSUM_LEN   6
#define CMS_KEY_VISIBLE_BODY   6

/* longest prefix (sk_sandbox_) + body + checksum */
#define CMS_KEY_MAX_LEN        (11 + CMS_KEY_BODY_LEN + CMS_KEY_CHECKSUM_LEN)

/* longest prefix + the visible part of the body */
#define CMS_KEY_VISIBLE_MAX    (11 + CMS_KEY_VISIBLE_BODY)

#define CMS_KEY_OK             0
#define CMS_KEY_MALFORMED     -1
#define CMS_KEY_BAD_CHECKSUM  -2


typedef enum {
    CMS_KEY_KIND_SVC_LIVE = 0,
    CMS_KEY_KIND_PK_LIVE,
    CMS_KEY_KIND_SK_ADMIN,
    CMS_KEY_KIND_SK_LIVE,
    CMS_KEY_KIND_SK_SANDBOX
} cms_key_kind_e;


typedef struct {
    cms_key_kind_e   kind;
    const char      *prefix;
    size_t           prefix_len;
    const char      *body;
    size_t           body_len;
    const char      *checksum;
} cms_key_t;


const char *cms_key_kind_prefix(cms_key_kind_e kind);
size_t cms_key_format(const char *prefix,
    const unsigned char secret[CMS_KEY_SECRET_LEN], char *out,
    size_t out_size);
int cms_key_parse(const char *key, size_t len, cms_key_t *k);
size_t cms_key_visible_prefix(const cms_key_t *k, char *out,
    size_t out_size);
uint32_t cms_crc32(const unsigned char *p, size_t n);


#endif /* _CMS_KEY_H_INCLUDED_ */
