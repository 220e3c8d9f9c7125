
/*
 * cms-admin: the cms_secret key file, read exactly as nginx reads it
 * (ngx_http_cms_crypto.c), so that both derive the same sub-keys.
 */


#include "cms_admin.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>


static size_t cms_admin_secret_trim(const unsigned char *s, size_t n);


/*
 * Reads the key file at path into ctx->secret: its bytes without trailing
 * '\n', '\r', ' ' and '\t', which must leave CMS_ADMIN_SECRET_MIN to
 * CMS_ADMIN_SECRET_MAX - 1 bytes.  Returns 0, or -1 (printed).
 */

int
cms_admin_secret_load(cms_admin_ctx_t *ctx, const char *path)
{
    int      c;
    FILE    *f;
    size_t   n;

    if (path == NULL || path[0] == '\0') {
        return cms_admin_error("no secret: give --secret FILE or set "
                               "CMS_SECRET_FILE");
    }

    f = fopen(path, "rb");

    if (f == NULL) {
        return cms_admin_error("cannot open secret file \"%s\": %s", path,
                               strerror(errno));
    }

    n = fread(ctx->secret, 1, CMS_ADMIN_SECRET_MAX, f);
    c = ferror(f);
    fclose(f);

    if (c) {
        return cms_admin_error("cannot read secret file \"%s\"", path);
    }

    /* a full buffer means a longer file: refused before stripping, so a
     * long file cannot pass as its first 4095 bytes */

    if (n == CMS_ADMIN_SECRET_MAX) {
        return cms_admin_error("secret file \"%s\" is longer than %d bytes",
                               path, CMS_ADMIN_SECRET_MAX - 1);
    }

    n = cms_admin_secret_trim(ctx->secret, n);

    if (n < CMS_ADMIN_SECRET_MIN) {
        return cms_admin_error("secret file \"%s\" must hold between %d and "
                               "%d bytes of secret", path,
                               CMS_ADMIN_SECRET_MIN,
                               CMS_ADMIN_SECRET_MAX - 1);
    }

    ctx->secret_len = n;

    return 0;
}


/* the length of s[0 .. n) without trailing '\n', '\r', ' ' and '\t' */

static size_t
cms_admin_secret_trim(const unsigned char *s, size_t n)
{
    while (n > 0
           && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '
               || s[n - 1] == '\t'))
    {
        n--;
    }

    return n;
}


/*
 * The sub-key for label (a CMS_KDF_* string) into out, which the caller
 * wipes.  Returns 0, or -1 (printed).
 */

int
cms_admin_secret_derive(cms_admin_ctx_t *ctx, const char *label,
    unsigned char out[CMS_KDF_LEN])
{
    if (ctx->secret_len == 0) {
        return cms_admin_error("no secret loaded");
    }

    if (cms_kdf_derive(ctx->secret, ctx->secret_len, label, out) != 0) {
        return cms_admin_error("cannot derive a key: HMAC() failed");
    }

    return 0;
}
