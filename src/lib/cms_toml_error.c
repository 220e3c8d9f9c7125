
/*
 * The TOML parser's input check and its errors: the text is checked
 * (UTF-8, control characters) before parsing starts, and a failure is
 * recorded as a line and column, formatted on demand; see cms_toml.h.
 */


#include <stdio.h>
#include <string.h>

#include "cms_toml.h"
#include "cms_toml_int.h"
#include "cms_validate.h"


/*
 * Refuses invalid UTF-8 and every control character TOML never allows
 * unescaped (all but tab, LF, and CR before LF) before parsing starts, so
 * the grammar can treat every other byte as text.  Returns 0, or -1 with
 * ctx->err filled.
 */

int
cms_toml_check_text(cms_toml_ctx_t *ctx)
{
    size_t                n;
    const unsigned char  *p, *end;

    p = (const unsigned char *) ctx->start;
    end = (const unsigned char *) ctx->end;

    while (p < end) {

        if (*p >= 0x80) {
            n = cms_utf8_len(p, (size_t) (end - p));
            if (n == 0) {
                return cms_toml_fail(ctx, (const char *) p, "invalid UTF-8");
            }

            p += n;
            continue;
        }

        if (*p == '\0') {
            return cms_toml_fail(ctx, (const char *) p, "NUL byte");
        }

        if (*p == '\r' && (p + 1 == end || p[1] != '\n')) {
            return cms_toml_fail(ctx, (const char *) p,
                                 "carriage return without line feed");
        }

        if ((*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
            || *p == 0x7f)
        {
            return cms_toml_fail(ctx, (const char *) p, "control character");
        }

        p++;
    }

    return 0;
}


/*
 * Records the failure msg (static text) at "at", a position in the text,
 * as a line and column in ctx->err.  Returns -1, so that a caller can
 * "return cms_toml_fail(...)".
 */

int
cms_toml_fail(cms_toml_ctx_t *ctx, const char *at, const char *msg)
{
    const char        *p;
    cms_toml_error_t  *err;

    err = ctx->err;
    err->msg = msg;
    err->line = 1;
    err->column = 1;

    for (p = ctx->start; p < at && p < ctx->end; p++) {

        if (*p == '\n') {
            err->line++;
            err->column = 1;

        } else if (((unsigned char) *p & 0xc0) != 0x80) {
            err->column++;
        }
    }

    return -1;
}


/*
 * Keeps a printable copy of the key s[0 .. len) in err->key for the
 * message: printable ASCII stays, '"', '\\' and every other byte become
 * \xNN, and a key too long for err->key is cut and ends in "...".
 */

void
cms_toml_error_key(cms_toml_error_t *err, const char *s, size_t len)
{
    size_t         i, n, need;
    unsigned char  c;

    n = 0;

    for (i = 0; i < len; i++) {
        c = (unsigned char) s[i];
        need = (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? 1 : 4;

        /* room for "..." unless this is the last byte */
        if (n + need + (i + 1 < len ? 3 : 0) > CMS_TOML_ERR_KEY_MAX) {
            memcpy(err->key + n, "...", 3);
            n += 3;
            break;
        }

        if (need == 1) {
            err->key[n++] = (char) c;

        } else {
            snprintf(err->key + n, 5, "\\x%02x", c);
            n += 4;
        }
    }

    err->key[n] = '\0';
}


size_t
cms_toml_error_format(const cms_toml_error_t *err, char *buf, size_t size)
{
    int          rc;
    size_t       n;
    const char  *m, *k;

    if (size == 0) {
        return 0;
    }

    n = 0;
    m = (err->msg != NULL) ? err->msg : "no error";

    if (err->line != 0) {
        rc = snprintf(buf, size, "line %u, column %u: ", err->line,
                      err->column);
        n = (rc < 0) ? 0 : (size_t) rc;

        if (n >= size) {
            return size - 1;
        }
    }

    k = strstr(m, "%k");

    if (k != NULL) {
        rc = snprintf(buf + n, size - n, "%.*s\"%s\"%s", (int) (k - m), m,
                      err->key, k + 2);

    } else if (err->key[0] != '\0') {
        rc = snprintf(buf + n, size - n, "%s \"%s\"", m, err->key);

    } else {
        rc = snprintf(buf + n, size - n, "%s", m);
    }

    n += (rc < 0) ? 0 : (size_t) rc;

    return (n < size) ? n : size - 1;
}
