
/*
 * Strict TOML subset parser; see cms_toml.h.
 *
 * The arena is split in two: nodes grow up from its (aligned) start, key
 * and string text grows down from its end, so text needs no alignment.
 * Each table remembers how it came to exist (kind), which is what TOML's
 * rules on redefinition depend on.
 */


#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cms_toml.h"


/* table kinds (cms_toml_node_t.kind) */
#define CMS_TOML_IMPLICIT  1    /* created as a prefix of a [header] */
#define CMS_TOML_HEADER    2    /* defined by its own [header], or the root */
#define CMS_TOML_DOTTED    3    /* created by a dotted key */
#define CMS_TOML_INLINE    4    /* inline table or array: closed */


typedef struct {
    const char  *data;
    size_t       len;
    const char  *at;        /* where the key starts in the text */
    int          copied;    /* data already lives in the arena */
} cms_toml_key_t;


typedef struct {
    const char        *start;
    const char        *p;
    const char        *end;
    char              *front;
    char              *back;
    size_t             nodes;
    cms_toml_error_t  *err;
} cms_toml_ctx_t;


typedef struct {
    char                c;
    cms_toml_node_t     n;
} cms_toml_align_t;

#define CMS_TOML_ALIGN  offsetof(cms_toml_align_t, n)


/* input checks and errors */
static int cms_toml_check_text(cms_toml_ctx_t *ctx);
static size_t cms_toml_utf8_len(const unsigned char *p,
    const unsigned char *end);
static int cms_toml_fail(cms_toml_ctx_t *ctx, const char *at,
    const char *msg);
static int cms_toml_fail_key(cms_toml_ctx_t *ctx, const cms_toml_key_t *key,
    const char *msg);
static void cms_toml_error_key(cms_toml_error_t *err, const char *s,
    size_t len);

/* arena */
static cms_toml_node_t *cms_toml_node_alloc(cms_toml_ctx_t *ctx,
    const char *at);
static char *cms_toml_text_alloc(cms_toml_ctx_t *ctx, size_t n,
    const char *at);
static cms_toml_node_t *cms_toml_child_add(cms_toml_ctx_t *ctx,
    cms_toml_node_t *parent, const cms_toml_key_t *key);
static cms_toml_node_t *cms_toml_table_add(cms_toml_ctx_t *ctx,
    cms_toml_node_t *parent, const cms_toml_key_t *key, unsigned kind,
    unsigned level);

/* structure */
static int cms_toml_parse_document(cms_toml_ctx_t *ctx,
    cms_toml_node_t *root);
static int cms_toml_parse_header(cms_toml_ctx_t *ctx, cms_toml_node_t *root,
    cms_toml_node_t **table, unsigned *level);
static int cms_toml_parse_keyval(cms_toml_ctx_t *ctx, cms_toml_node_t *table,
    unsigned level);
static cms_toml_node_t *cms_toml_descend_dotted(cms_toml_ctx_t *ctx,
    cms_toml_node_t *table, const cms_toml_key_t *key, unsigned level);
static int cms_toml_parse_key(cms_toml_ctx_t *ctx, cms_toml_key_t *keys,
    size_t *n);
static int cms_toml_parse_simple_key(cms_toml_ctx_t *ctx,
    cms_toml_key_t *key);
static int cms_toml_end_line(cms_toml_ctx_t *ctx, const char *msg);
static void cms_toml_skip_ws(cms_toml_ctx_t *ctx);
static void cms_toml_skip_blank(cms_toml_ctx_t *ctx);

/* values */
static int cms_toml_parse_value(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    unsigned level);
static int cms_toml_parse_array(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    unsigned level);
static int cms_toml_parse_inline(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    unsigned level);
static int cms_toml_parse_word(cms_toml_ctx_t *ctx, cms_toml_node_t *v);
static int cms_toml_parse_string(cms_toml_ctx_t *ctx, const char **s,
    size_t *len, int copy);
static int cms_toml_unescape(cms_toml_ctx_t *ctx, const char *p,
    const char *end, char *out, size_t *len);
static int cms_toml_escape(char c);
static int cms_toml_unescape_unicode(cms_toml_ctx_t *ctx, const char **pp,
    const char *end, char **op);
static int cms_toml_parse_number(cms_toml_ctx_t *ctx, cms_toml_node_t *v);
static const char *cms_toml_number_unsupported(const char *s,
    const char *e);
static int cms_toml_number_digits(const char **p, const char *e, char *buf,
    size_t *n);
static int cms_toml_number_convert(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    const char *at, char *buf, size_t n, int is_float);


#define cms_toml_is_digit(c)  ((c) >= '0' && (c) <= '9')

#define cms_toml_is_bare(c)                                                   \
    (((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z')                \
     || cms_toml_is_digit(c) || (c) == '_' || (c) == '-')

#define cms_toml_is_eol(c)  ((c) == '\n' || (c) == '\r')


size_t
cms_toml_arena_size(size_t len)
{
    size_t  nodes;

    if (len > CMS_TOML_MAX_INPUT) {
        len = CMS_TOML_MAX_INPUT;
    }

    nodes = (len < CMS_TOML_MAX_VALUES ? len : CMS_TOML_MAX_VALUES) + 1;

    return nodes * sizeof(cms_toml_node_t) + len + nodes + CMS_TOML_ALIGN;
}


int
cms_toml_parse(const char *text, size_t len, void *arena, size_t arena_size,
    cms_toml_node_t **root, cms_toml_error_t *err)
{
    size_t             skip;
    cms_toml_ctx_t     ctx;
    cms_toml_node_t   *r;
    cms_toml_error_t   dummy;

    if (err == NULL) {
        err = &dummy;
    }

    memset(err, 0, sizeof(cms_toml_error_t));
    *root = NULL;

    if (len > CMS_TOML_MAX_INPUT) {
        err->msg = "input too large (over 65536 bytes)";
        return -1;
    }

    if (text == NULL) {
        text = "";
        len = 0;
    }

    ctx.start = text;
    ctx.p = text;
    ctx.end = text + len;
    ctx.nodes = 0;
    ctx.err = err;

    skip = 0;

    if (arena != NULL) {
        skip = (CMS_TOML_ALIGN - (uintptr_t) arena % CMS_TOML_ALIGN)
               % CMS_TOML_ALIGN;
    }

    if (arena == NULL || arena_size < skip) {
        return cms_toml_fail(&ctx, text, "arena too small");
    }

    ctx.front = (char *) arena + skip;
    ctx.back = (char *) arena + arena_size;

    if (cms_toml_check_text(&ctx) != 0) {
        return -1;
    }

    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        ctx.p += 3;
    }

    r = cms_toml_node_alloc(&ctx, ctx.p);
    if (r == NULL) {
        return -1;
    }

    r->type = CMS_TOML_TABLE;
    r->kind = CMS_TOML_HEADER;

    if (cms_toml_parse_document(&ctx, r) != 0) {
        return -1;
    }

    *root = r;

    return 0;
}


/*
 * Refuses invalid UTF-8 and every control character TOML never allows
 * unescaped (all but tab, LF, and CR before LF) before parsing starts, so
 * the grammar below can treat every other byte as text.
 */

static int
cms_toml_check_text(cms_toml_ctx_t *ctx)
{
    size_t                n;
    const unsigned char  *p, *end;

    p = (const unsigned char *) ctx->start;
    end = (const unsigned char *) ctx->end;

    while (p < end) {

        if (*p >= 0x80) {
            n = cms_toml_utf8_len(p, end);
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


/* length of the valid UTF-8 sequence at p (lead byte >= 0x80), else 0 */

static size_t
cms_toml_utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t    n, i;
    uint32_t  c, min;

    if (*p >= 0xc2 && *p <= 0xdf) {
        n = 2;
        min = 0x80;

    } else if (*p >= 0xe0 && *p <= 0xef) {
        n = 3;
        min = 0x800;

    } else if (*p >= 0xf0 && *p <= 0xf4) {
        n = 4;
        min = 0x10000;

    } else {
        return 0;
    }

    if ((size_t) (end - p) < n) {
        return 0;
    }

    c = *p & (0x7f >> n);      /* the payload bits of the lead byte */

    for (i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return 0;
        }

        c = (c << 6) | (p[i] & 0x3f);
    }

    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
        return 0;
    }

    return n;
}


/* records the first failure at "at" and returns -1 */

static int
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


static int
cms_toml_fail_key(cms_toml_ctx_t *ctx, const cms_toml_key_t *key,
    const char *msg)
{
    cms_toml_error_key(ctx->err, key->data, key->len);

    return cms_toml_fail(ctx, key->at, msg);
}


/*
 * Keeps a printable copy of a key for the message: printable ASCII stays,
 * '"', '\\' and every other byte become \xNN, and a key too long for
 * err->key is cut and ends in "...".
 */

static void
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


cms_toml_node_t *
cms_toml_get(const cms_toml_node_t *table, const char *key)
{
    return cms_toml_get_n(table, key, strlen(key));
}


cms_toml_node_t *
cms_toml_get_n(const cms_toml_node_t *table, const char *key, size_t len)
{
    cms_toml_node_t  *n;

    if (table == NULL || table->type != CMS_TOML_TABLE) {
        return NULL;
    }

    for (n = table->child; n != NULL; n = n->next) {
        if (n->key_len == len && memcmp(n->key, key, len) == 0) {
            return n;
        }
    }

    return NULL;
}


const char *
cms_toml_type_name(cms_toml_type_e type)
{
    static const char  *names[] = {
        "table", "array", "string", "integer", "float", "boolean"
    };

    if (type < CMS_TOML_TABLE || type > CMS_TOML_BOOLEAN) {
        return "?";
    }

    return names[type - CMS_TOML_TABLE];
}


/* a zeroed node from the front of the arena, counted against the limit */

static cms_toml_node_t *
cms_toml_node_alloc(cms_toml_ctx_t *ctx, const char *at)
{
    cms_toml_node_t  *n;

    if (ctx->nodes > CMS_TOML_MAX_VALUES) {
        cms_toml_fail(ctx, at, "too many values (over 1024)");
        return NULL;
    }

    if ((size_t) (ctx->back - ctx->front) < sizeof(cms_toml_node_t)) {
        cms_toml_fail(ctx, at, "arena too small");
        return NULL;
    }

    n = (cms_toml_node_t *) (void *) ctx->front;
    ctx->front += sizeof(cms_toml_node_t);
    ctx->nodes++;

    memset(n, 0, sizeof(cms_toml_node_t));

    return n;
}


/* n bytes of text from the back of the arena */

static char *
cms_toml_text_alloc(cms_toml_ctx_t *ctx, size_t n, const char *at)
{
    if ((size_t) (ctx->back - ctx->front) < n) {
        cms_toml_fail(ctx, at, "arena too small");
        return NULL;
    }

    ctx->back -= n;

    return ctx->back;
}


/* a new node named key, appended to parent; its key is copied if needed */

static cms_toml_node_t *
cms_toml_child_add(cms_toml_ctx_t *ctx, cms_toml_node_t *parent,
    const cms_toml_key_t *key)
{
    char             *s;
    cms_toml_node_t  *n;

    n = cms_toml_node_alloc(ctx, key ? key->at : ctx->p);
    if (n == NULL) {
        return NULL;
    }

    if (key != NULL) {
        if (key->copied) {
            n->key = key->data;

        } else {
            s = cms_toml_text_alloc(ctx, key->len + 1, key->at);
            if (s == NULL) {
                return NULL;
            }

            memcpy(s, key->data, key->len);
            s[key->len] = '\0';
            n->key = s;
        }

        n->key_len = key->len;
    }

    if (parent->last == NULL) {
        parent->child = n;

    } else {
        parent->last->next = n;
    }

    parent->last = n;
    parent->count++;

    return n;
}


static cms_toml_node_t *
cms_toml_table_add(cms_toml_ctx_t *ctx, cms_toml_node_t *parent,
    const cms_toml_key_t *key, unsigned kind, unsigned level)
{
    cms_toml_node_t  *t;

    if (level > CMS_TOML_MAX_DEPTH) {
        cms_toml_fail(ctx, key->at, "nesting too deep (over 16 levels)");
        return NULL;
    }

    t = cms_toml_child_add(ctx, parent, key);
    if (t == NULL) {
        return NULL;
    }

    t->type = CMS_TOML_TABLE;
    t->kind = kind;

    return t;
}


/* lines: blank, comment, [header] or key = value, each up to a newline */

static int
cms_toml_parse_document(cms_toml_ctx_t *ctx, cms_toml_node_t *root)
{
    unsigned          level;
    cms_toml_node_t  *table;

    table = root;
    level = 0;

    for ( ;; ) {
        cms_toml_skip_ws(ctx);

        if (ctx->p == ctx->end) {
            return 0;
        }

        if (*ctx->p == '[') {
            if (cms_toml_parse_header(ctx, root, &table, &level) != 0) {
                return -1;
            }

            if (cms_toml_end_line(ctx, "expected a newline after the "
                                       "table header") != 0)
            {
                return -1;
            }

            continue;
        }

        if (*ctx->p != '#' && !cms_toml_is_eol(*ctx->p)) {
            if (cms_toml_parse_keyval(ctx, table, level) != 0) {
                return -1;
            }
        }

        if (cms_toml_end_line(ctx, "expected a newline after the value")
            != 0)
        {
            return -1;
        }
    }
}


/*
 * "[a.b.c]": a and b are entered or created (implicitly), c is created, or
 * defined if it was only implicit so far; anything else is a redefinition.
 */

static int
cms_toml_parse_header(cms_toml_ctx_t *ctx, cms_toml_node_t *root,
    cms_toml_node_t **table, unsigned *level)
{
    size_t            n, i;
    cms_toml_key_t    keys[CMS_TOML_MAX_DEPTH + 1];
    cms_toml_node_t  *t, *c;

    ctx->p++;

    if (ctx->p < ctx->end && *ctx->p == '[') {
        return cms_toml_fail(ctx, ctx->p - 1,
                             "unsupported: arrays of tables ([[...]])");
    }

    cms_toml_skip_ws(ctx);

    if (cms_toml_parse_key(ctx, keys, &n) != 0) {
        return -1;
    }

    if (ctx->p == ctx->end || *ctx->p != ']') {
        return cms_toml_fail(ctx, ctx->p, "expected ']' after the table name");
    }

    ctx->p++;
    t = root;

    for (i = 0; i < n; i++) {
        c = cms_toml_get_n(t, keys[i].data, keys[i].len);

        if (c == NULL) {
            c = cms_toml_table_add(ctx, t, &keys[i], i + 1 < n
                                   ? CMS_TOML_IMPLICIT : CMS_TOML_HEADER,
                                   (unsigned) i + 1);
            if (c == NULL) {
                return -1;
            }

        } else if (c->type != CMS_TOML_TABLE) {
            return cms_toml_fail_key(ctx, &keys[i],
                                     "key %k is a value, not a table");

        } else if (c->kind == CMS_TOML_INLINE) {
            return cms_toml_fail_key(ctx, &keys[i],
                                     "inline table %k cannot be extended");

        } else if (i + 1 == n) {
            if (c->kind != CMS_TOML_IMPLICIT) {
                return cms_toml_fail_key(ctx, &keys[i],
                                         "redefinition of table %k");
            }

            c->kind = CMS_TOML_HEADER;
        }

        t = c;
    }

    *table = t;
    *level = (unsigned) n;

    return 0;
}


/* "a.b.c = value" into table, which is level levels below the root */

static int
cms_toml_parse_keyval(cms_toml_ctx_t *ctx, cms_toml_node_t *table,
    unsigned level)
{
    size_t            n, i;
    cms_toml_key_t    keys[CMS_TOML_MAX_DEPTH + 1];
    cms_toml_node_t  *t, *v;

    if (cms_toml_parse_key(ctx, keys, &n) != 0) {
        return -1;
    }

    if (ctx->p == ctx->end || *ctx->p != '=') {
        return cms_toml_fail(ctx, ctx->p, "expected '=' after the key");
    }

    ctx->p++;
    cms_toml_skip_ws(ctx);

    t = table;

    for (i = 0; i + 1 < n; i++) {
        t = cms_toml_descend_dotted(ctx, t, &keys[i], level + (unsigned) i + 1);
        if (t == NULL) {
            return -1;
        }
    }

    if (cms_toml_get_n(t, keys[n - 1].data, keys[n - 1].len) != NULL) {
        return cms_toml_fail_key(ctx, &keys[n - 1], "duplicate key %k");
    }

    v = cms_toml_child_add(ctx, t, &keys[n - 1]);
    if (v == NULL) {
        return -1;
    }

    return cms_toml_parse_value(ctx, v, level + (unsigned) n);
}


/* a dotted-key prefix: only tables created by dotted keys may be entered */

static cms_toml_node_t *
cms_toml_descend_dotted(cms_toml_ctx_t *ctx, cms_toml_node_t *table,
    const cms_toml_key_t *key, unsigned level)
{
    cms_toml_node_t  *c;

    c = cms_toml_get_n(table, key->data, key->len);

    if (c == NULL) {
        return cms_toml_table_add(ctx, table, key, CMS_TOML_DOTTED, level);
    }

    if (c->type != CMS_TOML_TABLE) {
        cms_toml_fail_key(ctx, key, "key %k is a value, not a table");
        return NULL;
    }

    if (c->kind == CMS_TOML_INLINE) {
        cms_toml_fail_key(ctx, key, "inline table %k cannot be extended");
        return NULL;
    }

    if (c->kind != CMS_TOML_DOTTED) {
        cms_toml_fail_key(ctx, key, "table %k comes from a [header], "
                                    "dotted keys cannot extend it");
        return NULL;
    }

    return c;
}


/* one or more simple keys joined by '.', with whitespace around the dots */

static int
cms_toml_parse_key(cms_toml_ctx_t *ctx, cms_toml_key_t *keys, size_t *n)
{
    size_t  i;

    for (i = 0; /* void */; i++) {

        if (i > CMS_TOML_MAX_DEPTH) {
            return cms_toml_fail(ctx, ctx->p,
                                 "nesting too deep (over 16 levels)");
        }

        if (cms_toml_parse_simple_key(ctx, &keys[i]) != 0) {
            return -1;
        }

        cms_toml_skip_ws(ctx);

        if (ctx->p == ctx->end || *ctx->p != '.') {
            break;
        }

        ctx->p++;
        cms_toml_skip_ws(ctx);
    }

    *n = i + 1;

    return 0;
}


static int
cms_toml_parse_simple_key(cms_toml_ctx_t *ctx, cms_toml_key_t *key)
{
    const char  *p;

    key->at = ctx->p;
    key->copied = 0;

    if (ctx->p < ctx->end && (*ctx->p == '"' || *ctx->p == '\'')) {
        key->copied = (*ctx->p == '"');
        return cms_toml_parse_string(ctx, &key->data, &key->len, 0);
    }

    for (p = ctx->p; p < ctx->end && cms_toml_is_bare(*p); p++) {
        /* void */
    }

    if (p == ctx->p) {
        return cms_toml_fail(ctx, ctx->p, "expected a key");
    }

    key->data = ctx->p;
    key->len = p - ctx->p;
    ctx->p = p;

    return 0;
}


/* optional whitespace and comment, then a newline or the end of the text */

static int
cms_toml_end_line(cms_toml_ctx_t *ctx, const char *msg)
{
    cms_toml_skip_ws(ctx);

    if (ctx->p < ctx->end && *ctx->p == '#') {
        while (ctx->p < ctx->end && *ctx->p != '\n') {
            ctx->p++;
        }
    }

    if (ctx->p == ctx->end) {
        return 0;
    }

    if (*ctx->p == '\r') {
        ctx->p++;               /* always before '\n': see check_text() */
    }

    if (*ctx->p != '\n') {
        return cms_toml_fail(ctx, ctx->p, msg);
    }

    ctx->p++;

    return 0;
}


static void
cms_toml_skip_ws(cms_toml_ctx_t *ctx)
{
    while (ctx->p < ctx->end && (*ctx->p == ' ' || *ctx->p == '\t')) {
        ctx->p++;
    }
}


/* whitespace, newlines and comments, as allowed inside arrays */

static void
cms_toml_skip_blank(cms_toml_ctx_t *ctx)
{
    for ( ;; ) {
        cms_toml_skip_ws(ctx);

        if (ctx->p == ctx->end) {
            return;
        }

        if (*ctx->p == '#') {
            while (ctx->p < ctx->end && *ctx->p != '\n') {
                ctx->p++;
            }

        } else if (cms_toml_is_eol(*ctx->p)) {
            ctx->p++;

        } else {
            return;
        }
    }
}


/* the value at ctx->p into v, which is level levels below the root */

static int
cms_toml_parse_value(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    unsigned level)
{
    char  c;

    if (ctx->p == ctx->end || cms_toml_is_eol(*ctx->p) || *ctx->p == '#') {
        return cms_toml_fail(ctx, ctx->p, "expected a value");
    }

    c = *ctx->p;

    if (c == '"' || c == '\'') {
        if (ctx->end - ctx->p >= 3 && ctx->p[1] == c && ctx->p[2] == c) {
            return cms_toml_fail(ctx, ctx->p,
                                 "unsupported: multi-line strings");
        }

        v->type = CMS_TOML_STRING;
        return cms_toml_parse_string(ctx, &v->str, &v->str_len, 1);
    }

    if (c == '[' || c == '{') {
        if (level > CMS_TOML_MAX_DEPTH) {
            return cms_toml_fail(ctx, ctx->p,
                                 "nesting too deep (over 16 levels)");
        }

        return (c == '[') ? cms_toml_parse_array(ctx, v, level)
                          : cms_toml_parse_inline(ctx, v, level);
    }

    if (cms_toml_is_digit(c) || c == '+' || c == '-') {
        return cms_toml_parse_number(ctx, v);
    }

    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        return cms_toml_parse_word(ctx, v);
    }

    return cms_toml_fail(ctx, ctx->p, "expected a value");
}


static int
cms_toml_parse_array(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    unsigned level)
{
    const char       *open;
    cms_toml_node_t  *e;

    v->type = CMS_TOML_ARRAY;
    v->kind = CMS_TOML_INLINE;
    open = ctx->p++;

    for ( ;; ) {
        cms_toml_skip_blank(ctx);

        if (ctx->p == ctx->end) {
            return cms_toml_fail(ctx, open, "unterminated array");
        }

        if (*ctx->p == ']') {
            ctx->p++;
            return 0;
        }

        e = cms_toml_child_add(ctx, v, NULL);
        if (e == NULL) {
            return -1;
        }

        if (cms_toml_parse_value(ctx, e, level + 1) != 0) {
            return -1;
        }

        cms_toml_skip_blank(ctx);

        if (ctx->p == ctx->end) {
            return cms_toml_fail(ctx, open, "unterminated array");
        }

        if (*ctx->p == ',') {
            ctx->p++;
            continue;
        }

        if (*ctx->p != ']') {
            return cms_toml_fail(ctx, ctx->p, "expected ',' or ']' in array");
        }
    }
}


/* "{ k = v, ... }" on one line, no trailing comma (TOML 1.0) */

static int
cms_toml_parse_inline(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    unsigned level)
{
    const char  *open;

    v->type = CMS_TOML_TABLE;
    v->kind = CMS_TOML_INLINE;
    open = ctx->p++;

    cms_toml_skip_ws(ctx);

    if (ctx->p < ctx->end && *ctx->p == '}') {
        ctx->p++;
        return 0;
    }

    for ( ;; ) {
        cms_toml_skip_ws(ctx);

        if (ctx->p == ctx->end || cms_toml_is_eol(*ctx->p)) {
            return cms_toml_fail(ctx, open, "unterminated inline table "
                                 "(inline tables are on one line)");
        }

        if (*ctx->p == '}') {
            return cms_toml_fail(ctx, ctx->p,
                                 "trailing comma in inline table");
        }

        if (cms_toml_parse_keyval(ctx, v, level) != 0) {
            return -1;
        }

        cms_toml_skip_ws(ctx);

        if (ctx->p < ctx->end && *ctx->p == ',') {
            ctx->p++;
            continue;
        }

        if (ctx->p < ctx->end && *ctx->p == '}') {
            ctx->p++;
            return 0;
        }

        if (ctx->p == ctx->end || cms_toml_is_eol(*ctx->p)) {
            return cms_toml_fail(ctx, open, "unterminated inline table "
                                 "(inline tables are on one line)");
        }

        return cms_toml_fail(ctx, ctx->p,
                             "expected ',' or '}' in inline table");
    }
}


/* true, false, or a word TOML does not have */

static int
cms_toml_parse_word(cms_toml_ctx_t *ctx, cms_toml_node_t *v)
{
    size_t       n;
    const char  *p;

    for (p = ctx->p; p < ctx->end && cms_toml_is_bare(*p); p++) {
        /* void */
    }

    n = p - ctx->p;

    if ((n == 4 && memcmp(ctx->p, "true", 4) == 0)
        || (n == 5 && memcmp(ctx->p, "false", 5) == 0))
    {
        v->type = CMS_TOML_BOOLEAN;
        v->boolean = (n == 4);
        ctx->p = p;
        return 0;
    }

    if (n == 3
        && (memcmp(ctx->p, "inf", 3) == 0 || memcmp(ctx->p, "nan", 3) == 0))
    {
        return cms_toml_fail(ctx, ctx->p, "unsupported: inf and nan");
    }

    return cms_toml_fail(ctx, ctx->p,
                         "invalid value (strings must be quoted)");
}


/*
 * A basic ("...") or literal ('...') string at ctx->p, on one line.  Its
 * body goes into the arena, unescaped (never longer than the body) with a
 * NUL, except a literal key (copy 0): that is copied only if it names a
 * new node.
 */

static int
cms_toml_parse_string(cms_toml_ctx_t *ctx, const char **s, size_t *len,
    int copy)
{
    char         q, *out;
    const char  *open, *p;

    open = ctx->p;
    q = *open;

    for (p = open + 1; p < ctx->end && *p != q && !cms_toml_is_eol(*p); p++)
    {
        if (q == '"' && *p == '\\' && p + 1 < ctx->end
            && !cms_toml_is_eol(p[1]))
        {
            p++;
        }
    }

    if (p == ctx->end || *p != q) {
        return cms_toml_fail(ctx, open, "unterminated string");
    }

    ctx->p = p + 1;
    *len = p - open - 1;

    if (q == '\'' && !copy) {
        *s = open + 1;
        return 0;
    }

    out = cms_toml_text_alloc(ctx, *len + 1, open);
    if (out == NULL) {
        return -1;
    }

    if (q == '"') {
        if (cms_toml_unescape(ctx, open + 1, p, out, len) != 0) {
            return -1;
        }

    } else {
        memcpy(out, open + 1, *len);
    }

    out[*len] = '\0';
    *s = out;

    return 0;
}


/* the body of a basic string, p[0 .. end), decoded into out */

static int
cms_toml_unescape(cms_toml_ctx_t *ctx, const char *p, const char *end,
    char *out, size_t *len)
{
    int    c;
    char  *o;

    o = out;

    while (p < end) {

        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }

        c = cms_toml_escape(p[1]);

        if (c != -1) {
            *o++ = (char) c;
            p += 2;
            continue;
        }

        if (p[1] != 'u' && p[1] != 'U') {
            return cms_toml_fail(ctx, p, "invalid escape sequence");
        }

        if (cms_toml_unescape_unicode(ctx, &p, end, &o) != 0) {
            return -1;
        }
    }

    *len = o - out;

    return 0;
}


/* the byte a one-letter escape such as \n stands for, or -1 */

static int
cms_toml_escape(char c)
{
    const char         *p;
    static const char   from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";

    p = (c != '\0') ? strchr(from, c) : NULL;

    return (p != NULL) ? to[p - from] : -1;
}


/* \uXXXX or \UXXXXXXXX at *p, a Unicode scalar value, written as UTF-8 */

static int
cms_toml_unescape_unicode(cms_toml_ctx_t *ctx, const char **pp,
    const char *end, char **op)
{
    int          i, n, ndigits;
    char        *o, c;
    uint32_t     u, d;
    const char  *p;

    p = *pp;
    o = *op;
    ndigits = (p[1] == 'u') ? 4 : 8;

    if (end - p < 2 + ndigits) {
        return cms_toml_fail(ctx, p, "invalid unicode escape");
    }

    u = 0;

    for (i = 0; i < ndigits; i++) {
        c = p[2 + i];

        if (cms_toml_is_digit(c)) {
            d = c - '0';

        } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
            d = (c | 0x20) - 'a' + 10;

        } else {
            return cms_toml_fail(ctx, p, "invalid unicode escape");
        }

        u = (u << 4) | d;
    }

    if (u == 0) {
        return cms_toml_fail(ctx, p, "\\u0000 (NUL) is not allowed");
    }

    if (u > 0x10ffff || (u >= 0xd800 && u <= 0xdfff)) {
        return cms_toml_fail(ctx, p, "invalid unicode escape");
    }

    n = (u < 0x80) ? 1 : (u < 0x800) ? 2 : (u < 0x10000) ? 3 : 4;

    for (i = n - 1; i > 0; i--) {
        o[i] = (char) (0x80 | (u & 0x3f));
        u >>= 6;
    }

    /* lead byte: the value itself, or 110xxxxx, 1110xxxx, 11110xxx */
    o[0] = (char) ((n == 1) ? u : (((0xff00 >> n) & 0xff) | u));
    *op = o + n;
    *pp = p + 2 + ndigits;

    return 0;
}


/*
 * An integer or a float.  The token is every character a number, a date
 * or a hex literal could contain, so "1979-05-27" or "0x1f" is named as
 * unsupported instead of being misread as "1979" then garbage.
 */

static int
cms_toml_parse_number(cms_toml_ctx_t *ctx, cms_toml_node_t *v)
{
    int          is_float;
    char         buf[CMS_TOML_MAX_NUMBER + 1];
    size_t       n, i;
    const char  *s, *e, *p, *msg;

    s = ctx->p;

    for (e = s; e < ctx->end; e++) {
        if (!cms_toml_is_bare(*e) && *e != '.' && *e != '+' && *e != ':') {
            break;
        }
    }

    msg = cms_toml_number_unsupported(s, e);
    if (msg != NULL) {
        return cms_toml_fail(ctx, s, msg);
    }

    if (e - s > CMS_TOML_MAX_NUMBER) {
        return cms_toml_fail(ctx, s, "number too long");
    }

    p = s;
    n = 0;
    is_float = 0;

    if (*p == '+' || *p == '-') {
        buf[n++] = *p++;
    }

    i = n;

    if (cms_toml_number_digits(&p, e, buf, &n) != 0) {
        goto invalid;
    }

    if (buf[i] == '0' && n - i > 1) {
        return cms_toml_fail(ctx, s, "leading zeros are not allowed");
    }

    if (p < e && *p == '.') {
        is_float = 1;
        buf[n++] = *p++;

        if (cms_toml_number_digits(&p, e, buf, &n) != 0) {
            goto invalid;
        }
    }

    if (p < e && (*p == 'e' || *p == 'E')) {
        is_float = 1;
        buf[n++] = *p++;

        if (p < e && (*p == '+' || *p == '-')) {
            buf[n++] = *p++;
        }

        if (cms_toml_number_digits(&p, e, buf, &n) != 0) {
            goto invalid;
        }
    }

    if (p != e) {
        goto invalid;
    }

    ctx->p = e;

    return cms_toml_number_convert(ctx, v, s, buf, n, is_float);

invalid:

    return cms_toml_fail(ctx, s, "invalid number");
}


/* the "unsupported: ..." message for a number-like token s[0 .. e), or NULL */

static const char *
cms_toml_number_unsupported(const char *s, const char *e)
{
    const char  *q;

    q = (*s == '+' || *s == '-') ? s + 1 : s;

    if (e - q >= 3 && (memcmp(q, "inf", 3) == 0 || memcmp(q, "nan", 3) == 0))
    {
        return "unsupported: inf and nan";
    }

    if (e - q >= 2 && q[0] == '0'
        && (q[1] == 'x' || q[1] == 'o' || q[1] == 'b'))
    {
        return "unsupported: hexadecimal, octal and binary integers";
    }

    if ((e - q >= 5 && cms_toml_is_digit(q[0]) && cms_toml_is_digit(q[1])
         && cms_toml_is_digit(q[2]) && cms_toml_is_digit(q[3]) && q[4] == '-')
        || (e - q >= 3 && cms_toml_is_digit(q[0]) && cms_toml_is_digit(q[1])
            && q[2] == ':'))
    {
        return "unsupported: dates and times";
    }

    return NULL;
}


/*
 * One or more digits with single underscores between them, copied into
 * buf without the underscores.  The caller bounds the token length, so
 * buf cannot overflow.
 */

static int
cms_toml_number_digits(const char **p, const char *e, char *buf, size_t *n)
{
    const char  *q;

    q = *p;

    if (q == e || !cms_toml_is_digit(*q)) {
        return -1;
    }

    for ( ;; ) {
        buf[(*n)++] = *q++;

        if (q < e && *q == '_') {
            q++;

            if (q == e || !cms_toml_is_digit(*q)) {
                return -1;
            }

            continue;
        }

        if (q == e || !cms_toml_is_digit(*q)) {
            break;
        }
    }

    *p = q;

    return 0;
}


static int
cms_toml_number_convert(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    const char *at, char *buf, size_t n, int is_float)
{
    int        neg;
    char      *end;
    size_t     i;
    double     d;
    uint64_t   acc, max;

    buf[n] = '\0';

    if (is_float) {
        d = strtod(buf, &end);

        if (end != buf + n) {
            return cms_toml_fail(ctx, at, "invalid float");
        }

        if (d > DBL_MAX || d < -DBL_MAX) {
            return cms_toml_fail(ctx, at, "float out of range");
        }

        v->type = CMS_TOML_FLOAT;
        v->number = d;

        return 0;
    }

    neg = (buf[0] == '-');
    i = (buf[0] == '-' || buf[0] == '+');
    max = neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
    acc = 0;

    for ( /* void */ ; i < n; i++) {
        if (acc > (max - (uint64_t) (buf[i] - '0')) / 10) {
            return cms_toml_fail(ctx, at, "integer out of range (64 bits)");
        }

        acc = acc * 10 + (uint64_t) (buf[i] - '0');
    }

    v->type = CMS_TOML_INTEGER;

    if (neg) {
        v->integer = (acc == (uint64_t) INT64_MAX + 1)
                     ? INT64_MIN : -(int64_t) acc;

    } else {
        v->integer = (int64_t) acc;
    }

    return 0;
}
