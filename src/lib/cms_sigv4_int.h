
/*
 * Private to the SigV4 signer (cms_sigv4.c: the API, the writers and the
 * signing; cms_sigv4_check.c: reading and checking a request into a
 * context): the context and what the two files share.  Include it from
 * no other file.
 */


#ifndef _CMS_SIGV4_INT_H_INCLUDED_
#define _CMS_SIGV4_INT_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "cms_sigv4.h"


/* how a span's bytes are read before they are encoded again */
#define CMS_SIGV4_RAW        0      /* as they are */
#define CMS_SIGV4_PCT        1      /* "%XX" is one byte */
#define CMS_SIGV4_FORM       2      /* "%XX" is one byte, "+" a space */

#define CMS_SIGV4_TERMINATOR  "/aws4_request"
#define CMS_SIGV4_TERM_LEN    (sizeof(CMS_SIGV4_TERMINATOR) - 1)

/* "<key id>/<scope>/aws4_request" */
#define CMS_SIGV4_CREDENTIAL_MAX                                              \
    (CMS_SIGV4_KEY_ID_MAX + 1 + CMS_SIGV4_SCOPE_MAX + CMS_SIGV4_TERM_LEN)

/* the signed header names, each with its ";" */
#define CMS_SIGV4_SIGNED_MAX                                                  \
    (CMS_SIGV4_HEADERS_MAX * (CMS_SIGV4_NAME_MAX + 1))

/* the parameters a presigned URL gains (X-Amz-Signature comes after) */
#define CMS_SIGV4_XAMZ       5


typedef struct {
    const char                 *p;
    size_t                      len;
} cms_sigv4_str_t;


typedef struct {
    cms_sigv4_str_t             name;
    cms_sigv4_str_t             value;
    unsigned                    mode;           /* CMS_SIGV4_FORM or _RAW */
} cms_sigv4_param_t;


/* a scope checked: its time as text, "<key id>/<scope>/aws4_request" */
typedef struct {
    char                        date[CMS_SIGV4_DATE_LEN + 1];
    char                        credential[CMS_SIGV4_CREDENTIAL_MAX];
    size_t                      credential_len;
    size_t                      scope_off;      /* after "<key id>/" */
} cms_sigv4_cred_t;


typedef struct {
    const cms_sigv4_request_t  *r;
    const cms_sigv4_scope_t    *s;
    cms_sigv4_cred_t            cred;
    cms_sigv4_param_t           params[CMS_SIGV4_PARAMS_MAX
                                       + CMS_SIGV4_XAMZ];
    size_t                      nparams;
    unsigned char               order[CMS_SIGV4_HEADERS_MAX];
    char                        signed_headers[CMS_SIGV4_SIGNED_MAX];
    size_t                      signed_len;
    char                        expires[8];     /* X-Amz-Expires */
} cms_sigv4_ctx_t;


int cms_sigv4_prepare(cms_sigv4_ctx_t *c, const cms_sigv4_request_t *r,
    const cms_sigv4_scope_t *s, int what);
int cms_sigv4_scope_check(cms_sigv4_cred_t *cr, const cms_sigv4_scope_t *s);

int cms_sigv4_unreserved(unsigned b);
unsigned cms_sigv4_next(const cms_sigv4_str_t *s, size_t *i, unsigned mode);
size_t cms_sigv4_group_end(const cms_sigv4_ctx_t *c, size_t i);
void cms_sigv4_lower(char *dst, const char *src, size_t n);
void cms_sigv4_digits(char *out, int64_t v, size_t n);


#endif /* _CMS_SIGV4_INT_H_INCLUDED_ */
