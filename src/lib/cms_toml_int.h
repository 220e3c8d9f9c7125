
/*
 * Private to the TOML parser (cms_toml.c: the structure and the arena,
 * cms_toml_scalar.c: strings, numbers and booleans, cms_toml_error.c: the
 * input check and the errors): the parse state and what the files share.
 */


#ifndef _CMS_TOML_INT_H_INCLUDED_
#define _CMS_TOML_INT_H_INCLUDED_


#include <stddef.h>

#include "cms_toml.h"


typedef struct {
    const char        *start;
    const char        *p;
    const char        *end;
    char              *front;      /* nodes grow up from here */
    char              *back;       /* text grows down from here */
    size_t             nodes;
    cms_toml_error_t  *err;
} cms_toml_ctx_t;


#define cms_toml_is_digit(c)  ((c) >= '0' && (c) <= '9')

#define cms_toml_is_bare(c)                                                   \
    (((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z')                \
     || cms_toml_is_digit(c) || (c) == '_' || (c) == '-')

#define cms_toml_is_eol(c)  ((c) == '\n' || (c) == '\r')


/* cms_toml.c */
char *cms_toml_text_alloc(cms_toml_ctx_t *ctx, size_t n, const char *at);

/* cms_toml_scalar.c */
int cms_toml_parse_string(cms_toml_ctx_t *ctx, const char **s, size_t *len,
    int copy);
int cms_toml_parse_number(cms_toml_ctx_t *ctx, cms_toml_node_t *v);
int cms_toml_parse_word(cms_toml_ctx_t *ctx, cms_toml_node_t *v);

/* cms_toml_error.c */
int cms_toml_check_text(cms_toml_ctx_t *ctx);
int cms_toml_fail(cms_toml_ctx_t *ctx, const char *at, const char *msg);
void cms_toml_error_key(cms_toml_error_t *err, const char *s, size_t len);


#endif /* _CMS_TOML_INT_H_INCLUDED_ */
