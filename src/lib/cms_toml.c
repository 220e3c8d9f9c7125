
/*
 * Strict TOML subset parser; see cms_toml.h.  This file holds the entry
 * point, the arena and the structure (tables, keys, arrays); the scalar
 * values are in cms_toml_scalar.c, the input check and the errors in
 * cms_toml_error.c.
 *
 * The arena is split in two: nodes grow up from its (aligned) start, key
 * and string text grows down from its end, so text needs no alignment.
 * Each table remembers how it came to exist (kind), which is what TOML's
 * rules on redefinition depend on.
 */


#include <stdint.h>
#include <string.h>

#include "cms_toml.h"
#include "cms_toml_int.h"


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
    char                c;
    cms_toml_node_t     n;
} cms_toml_align_t;

#define CMS_TOML_ALIGN  offsetof(cms_toml_align_t, n)


static const char  cms_toml_unterminated_inline[] =
    "unterminated inline table (inline tables are on one line)";


/* errors */
static int cms_toml_fail_key(cms_toml_ctx_t *ctx, const cms_toml_key_t *key,
    const char *msg);

/* arena */
static int cms_toml_arena_init(cms_toml_ctx_t *ctx, void *arena,
    size_t arena_size);
static cms_toml_node_t *cms_toml_node_alloc(cms_toml_ctx_t *ctx,
    const char *at);
static cms_toml_node_t *cms_toml_child_add(cms_toml_ctx_t *ctx,
    cms_toml_node_t *parent, const cms_toml_key_t *key);
static cms_toml_node_t *cms_toml_table_add(cms_toml_ctx_t *ctx,
    cms_toml_node_t *parent, const cms_toml_key_t *key, unsigned kind,
    unsigned level);

/* structure */
static int cms_toml_parse_root(cms_toml_ctx_t *ctx, cms_toml_node_t **root);
static int cms_toml_parse_document(cms_toml_ctx_t *ctx,
    cms_toml_node_t *root);
static int cms_toml_parse_header(cms_toml_ctx_t *ctx, cms_toml_node_t *root,
    cms_toml_node_t **table, unsigned *level);
static cms_toml_node_t *cms_toml_header_table(cms_toml_ctx_t *ctx,
    cms_toml_node_t *root, const cms_toml_key_t *keys, size_t n);
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
static int cms_toml_inline_next(cms_toml_ctx_t *ctx, const char *open);


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
    cms_toml_ctx_t    ctx;
    cms_toml_error_t  dummy;

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

    if (cms_toml_arena_init(&ctx, arena, arena_size) != 0
        || cms_toml_check_text(&ctx) != 0)
    {
        return -1;
    }

    return cms_toml_parse_root(&ctx, root);
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


/* as cms_toml_fail(), naming key in the message */

static int
cms_toml_fail_key(cms_toml_ctx_t *ctx, const cms_toml_key_t *key,
    const char *msg)
{
    cms_toml_error_key(ctx->err, key->data, key->len);

    return cms_toml_fail(ctx, key->at, msg);
}


/* nodes from the aligned start of the arena, text from its end */

static int
cms_toml_arena_init(cms_toml_ctx_t *ctx, void *arena, size_t arena_size)
{
    size_t  skip;

    skip = 0;

    if (arena != NULL) {
        skip = (CMS_TOML_ALIGN - (uintptr_t) arena % CMS_TOML_ALIGN)
               % CMS_TOML_ALIGN;
    }

    if (arena == NULL || arena_size < skip) {
        return cms_toml_fail(ctx, ctx->start, "arena too small");
    }

    ctx->front = (char *) arena + skip;
    ctx->back = (char *) arena + arena_size;

    return 0;
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


/*
 * n bytes of text from the back of the arena, for a key or a string
 * at "at" in the text.  Returns NULL with ctx->err filled ("arena too
 * small") when the nodes and the text would meet.
 */

char *
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


/* the root table and the document into it; *root is set on success */

static int
cms_toml_parse_root(cms_toml_ctx_t *ctx, cms_toml_node_t **root)
{
    cms_toml_node_t  *r;

    if (ctx->end - ctx->start >= 3
        && memcmp(ctx->start, "\xef\xbb\xbf", 3) == 0)
    {
        ctx->p += 3;
    }

    r = cms_toml_node_alloc(ctx, ctx->p);
    if (r == NULL) {
        return -1;
    }

    r->type = CMS_TOML_TABLE;
    r->kind = CMS_TOML_HEADER;

    if (cms_toml_parse_document(ctx, r) != 0) {
        return -1;
    }

    *root = r;

    return 0;
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


/* "[a.b.c]": the table it names becomes the one keys go into */

static int
cms_toml_parse_header(cms_toml_ctx_t *ctx, cms_toml_node_t *root,
    cms_toml_node_t **table, unsigned *level)
{
    size_t            n;
    cms_toml_key_t    keys[CMS_TOML_MAX_DEPTH + 1];
    cms_toml_node_t  *t;

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

    t = cms_toml_header_table(ctx, root, keys, n);
    if (t == NULL) {
        return -1;
    }

    *table = t;
    *level = (unsigned) n;

    return 0;
}


/*
 * The table a header's n keys name: the first n - 1 are entered or
 * created (implicitly), the last is created, or defined if it was only
 * implicit so far; anything else is a redefinition.  NULL on failure.
 */

static cms_toml_node_t *
cms_toml_header_table(cms_toml_ctx_t *ctx, cms_toml_node_t *root,
    const cms_toml_key_t *keys, size_t n)
{
    size_t            i;
    const char       *msg;
    cms_toml_node_t  *t, *c;

    t = root;

    for (i = 0; i < n; i++) {
        c = cms_toml_get_n(t, keys[i].data, keys[i].len);
        msg = NULL;

        if (c == NULL) {
            c = cms_toml_table_add(ctx, t, &keys[i], i + 1 < n
                                   ? CMS_TOML_IMPLICIT : CMS_TOML_HEADER,
                                   (unsigned) i + 1);
            if (c == NULL) {
                return NULL;
            }

        } else if (c->type != CMS_TOML_TABLE) {
            msg = "key %k is a value, not a table";

        } else if (c->kind == CMS_TOML_INLINE) {
            msg = "inline table %k cannot be extended";

        } else if (i + 1 == n && c->kind != CMS_TOML_IMPLICIT) {
            msg = "redefinition of table %k";

        } else if (i + 1 == n) {
            c->kind = CMS_TOML_HEADER;
        }

        if (msg != NULL) {
            cms_toml_fail_key(ctx, &keys[i], msg);
            return NULL;
        }

        t = c;
    }

    return t;
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
    int          rc;
    const char  *open;

    v->type = CMS_TOML_TABLE;
    v->kind = CMS_TOML_INLINE;
    open = ctx->p++;

    cms_toml_skip_ws(ctx);

    if (ctx->p < ctx->end && *ctx->p == '}') {
        ctx->p++;
        return 0;
    }

    do {
        cms_toml_skip_ws(ctx);

        if (ctx->p == ctx->end || cms_toml_is_eol(*ctx->p)) {
            return cms_toml_fail(ctx, open, cms_toml_unterminated_inline);
        }

        if (*ctx->p == '}') {
            return cms_toml_fail(ctx, ctx->p,
                                 "trailing comma in inline table");
        }

        if (cms_toml_parse_keyval(ctx, v, level) != 0) {
            return -1;
        }

        rc = cms_toml_inline_next(ctx, open);

    } while (rc == 1);

    return rc;
}


/* after a key/value pair: 1 past a ',', 0 past the closing '}', else -1 */

static int
cms_toml_inline_next(cms_toml_ctx_t *ctx, const char *open)
{
    cms_toml_skip_ws(ctx);

    if (ctx->p < ctx->end && *ctx->p == ',') {
        ctx->p++;
        return 1;
    }

    if (ctx->p < ctx->end && *ctx->p == '}') {
        ctx->p++;
        return 0;
    }

    if (ctx->p == ctx->end || cms_toml_is_eol(*ctx->p)) {
        return cms_toml_fail(ctx, open, cms_toml_unterminated_inline);
    }

    return cms_toml_fail(ctx, ctx->p, "expected ',' or '}' in inline table");
}
