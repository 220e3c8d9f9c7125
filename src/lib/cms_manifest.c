
/*
 * Extension manifest validation over the TOML tree; see cms_manifest.h.
 */


#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cms_manifest.h"
#include "cms_text.h"


/* where messages go */
typedef struct {
    char        *err;
    size_t       size;
} cms_manifest_ctx_t;


/* which bytes a string may hold: one bit per class */
#define CMS_MANIFEST_LOWER   0x01       /* a-z */
#define CMS_MANIFEST_UPPER   0x02       /* A-Z */
#define CMS_MANIFEST_DIGIT   0x04       /* 0-9 */
#define CMS_MANIFEST_DASH    0x08       /* - */
#define CMS_MANIFEST_UNDER   0x10       /* _ */
#define CMS_MANIFEST_DOT     0x20       /* . */
#define CMS_MANIFEST_PLUS    0x40       /* + */
#define CMS_MANIFEST_COLON   0x80       /* : */


typedef struct {
    const char  *key;
    unsigned     classes;
    size_t       max;
    const char  *pattern;       /* for the message */
    size_t       offset;        /* of the cms_manifest_str_t in the manifest */
} cms_manifest_string_t;


static int cms_manifest_fail(cms_manifest_ctx_t *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void cms_manifest_show_key(const cms_toml_node_t *n, char *buf,
    size_t size);
static int cms_manifest_only(cms_manifest_ctx_t *ctx,
    const cms_toml_node_t *table, const char *path, const char **keys);
static int cms_manifest_strings(cms_manifest_ctx_t *ctx,
    const cms_toml_node_t *ext, cms_manifest_t *m);
static int cms_manifest_match(const cms_toml_node_t *v,
    const cms_manifest_string_t *spec);
static int cms_manifest_privileges(cms_manifest_ctx_t *ctx,
    const cms_toml_node_t *ext, cms_manifest_t *m);
static int cms_manifest_privilege(cms_manifest_ctx_t *ctx,
    const cms_toml_node_t *v, size_t i, cms_manifest_t *m);
static int cms_manifest_config(cms_manifest_ctx_t *ctx,
    const cms_toml_node_t *ext, cms_manifest_t *m);
static int cms_manifest_field_parse(cms_manifest_ctx_t *ctx,
    const cms_toml_node_t *t, cms_manifest_field_t *f);
static int cms_manifest_field_default(cms_manifest_ctx_t *ctx,
    const cms_toml_node_t *t, cms_manifest_field_t *f);
static int cms_manifest_name_valid(const char *s, size_t len);


static const char  *cms_manifest_root_keys[] = { "extension", NULL };

static const char  *cms_manifest_extension_keys[] = {
    "name", "version", "category", "required_privilege", "privileges",
    "config", NULL
};

static const char  *cms_manifest_field_keys[] = {
    "type", "required", "default", NULL
};

/* indexed by cms_manifest_type_e - 1 */
static const char  *cms_manifest_types[] = {
    "string", "secret", "number", "boolean"
};

static const char  *cms_manifest_known_privileges[] = {
    "ext:billing:read", "ext:billing:write", "ext:control:write", NULL
};


#define cms_manifest_string(key, classes, max, pattern)                      \
    { #key, classes, max, pattern, offsetof(cms_manifest_t, key) }

static const cms_manifest_string_t  cms_manifest_string_keys[] = {

    /* the name pattern itself is cms_slug_valid()'s */
    cms_manifest_string(name, 0, CMS_MANIFEST_NAME_MAX,
                        "^[a-z0-9]+(-[a-z0-9]+)*$ (at most 64 characters)"),

    cms_manifest_string(version, CMS_MANIFEST_LOWER | CMS_MANIFEST_UPPER
                        | CMS_MANIFEST_DIGIT | CMS_MANIFEST_DOT
                        | CMS_MANIFEST_PLUS | CMS_MANIFEST_DASH,
                        CMS_MANIFEST_NAME_MAX, "[0-9A-Za-z.+-]{1,64}"),

    cms_manifest_string(category, CMS_MANIFEST_LOWER | CMS_MANIFEST_DIGIT
                        | CMS_MANIFEST_UNDER | CMS_MANIFEST_DASH,
                        CMS_MANIFEST_CATEGORY_MAX, "[a-z0-9_-]{1,32}"),

    cms_manifest_string(required_privilege, CMS_MANIFEST_LOWER
                        | CMS_MANIFEST_DIGIT | CMS_MANIFEST_UNDER
                        | CMS_MANIFEST_COLON | CMS_MANIFEST_DOT
                        | CMS_MANIFEST_DASH,
                        CMS_MANIFEST_NAME_MAX, "[a-z0-9_:.-]{1,64}")
};

#define CMS_MANIFEST_NSTRINGS                                                 \
    (sizeof(cms_manifest_string_keys) / sizeof(cms_manifest_string_t))


size_t
cms_manifest_arena_size(size_t len)
{
    return cms_toml_arena_size(len);
}


int
cms_manifest_parse(const char *text, size_t len, void *arena, size_t size,
    cms_manifest_t *m, char *err, size_t err_size)
{
    cms_toml_node_t     *root, *ext;
    cms_toml_error_t     terr;
    cms_manifest_ctx_t   ctx;

    ctx.err = err;
    ctx.size = (err != NULL) ? err_size : 0;

    memset(m, 0, sizeof(cms_manifest_t));

    if (cms_toml_parse(text, len, arena, size, &root, &terr) != 0) {
        if (ctx.size > 0) {
            cms_toml_error_format(&terr, err, ctx.size);
        }

        return -1;
    }

    if (cms_manifest_only(&ctx, root, NULL, cms_manifest_root_keys) != 0) {
        return -1;
    }

    ext = cms_toml_get(root, "extension");

    if (ext == NULL) {
        return cms_manifest_fail(&ctx, "extension: required");
    }

    if (ext->type != CMS_TOML_TABLE) {
        return cms_manifest_fail(&ctx, "extension: must be a table");
    }

    if (cms_manifest_only(&ctx, ext, "extension",
                          cms_manifest_extension_keys)
        != 0)
    {
        return -1;
    }

    if (cms_manifest_strings(&ctx, ext, m) != 0
        || cms_manifest_privileges(&ctx, ext, m) != 0
        || cms_manifest_config(&ctx, ext, m) != 0)
    {
        return -1;
    }

    return 0;
}


const cms_manifest_field_t *
cms_manifest_field(const cms_manifest_t *m, const char *name, size_t len)
{
    size_t  i;

    for (i = 0; i < m->nfields; i++) {
        if (m->fields[i].name.len == len
            && memcmp(m->fields[i].name.data, name, len) == 0)
        {
            return &m->fields[i];
        }
    }

    return NULL;
}


const char *
cms_manifest_type_name(cms_manifest_type_e type)
{
    if (type < CMS_MANIFEST_STRING || type > CMS_MANIFEST_BOOLEAN) {
        return "?";
    }

    return cms_manifest_types[type - 1];
}


/* writes the message (cut to fit) and returns -1 */

static int
cms_manifest_fail(cms_manifest_ctx_t *ctx, const char *fmt, ...)
{
    va_list  args;

    if (ctx->size > 0) {
        va_start(args, fmt);
        vsnprintf(ctx->err, ctx->size, fmt, args);
        va_end(args);
    }

    return -1;
}


/*
 * A key as the message shows it: as is when it is a non-empty bare TOML
 * key of at most 64 bytes, else quoted, with '"', '\\' and non-printable
 * bytes as \xNN, cut with "..." after 64 bytes of output.  buf has room
 * for the quotes, 64 bytes, "..." and the NUL (70 bytes).
 */

static void
cms_manifest_show_key(const cms_toml_node_t *n, char *buf, size_t size)
{
    size_t         i, o, need;
    unsigned char  c;

    for (i = 0; i < n->key_len; i++) {
        c = (unsigned char) n->key[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '_' || c == '-'))
        {
            break;
        }
    }

    if (n->key_len > 0 && i == n->key_len && n->key_len <= 64
        && n->key_len < size)
    {
        memcpy(buf, n->key, n->key_len + 1);
        return;
    }

    o = 0;
    buf[o++] = '"';

    for (i = 0; i < n->key_len; i++) {
        c = (unsigned char) n->key[i];
        need = (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? 1 : 4;

        if (o - 1 + need > 64) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }

        if (need == 1) {
            buf[o++] = (char) c;

        } else {
            snprintf(buf + o, 5, "\\x%02x", c);
            o += 4;
        }
    }

    buf[o++] = '"';
    buf[o] = '\0';
}


/* every key of table is one of keys; path names the table in messages */

static int
cms_manifest_only(cms_manifest_ctx_t *ctx, const cms_toml_node_t *table,
    const char *path, const char **keys)
{
    char                    shown[80];
    const char            **k;
    const cms_toml_node_t  *n;

    for (n = table->child; n != NULL; n = n->next) {

        for (k = keys; *k != NULL; k++) {
            if (n->key_len == strlen(*k) && memcmp(n->key, *k, n->key_len) == 0)
            {
                break;
            }
        }

        if (*k == NULL) {
            cms_manifest_show_key(n, shown, sizeof(shown));
            return cms_manifest_fail(ctx, "unknown key %s%s%s",
                                     path ? path : "", path ? "." : "",
                                     shown);
        }
    }

    return 0;
}


/* name, version, category and required_privilege */

static int
cms_manifest_strings(cms_manifest_ctx_t *ctx, const cms_toml_node_t *ext,
    cms_manifest_t *m)
{
    size_t                        i;
    cms_manifest_str_t           *s;
    const cms_toml_node_t        *v;
    const cms_manifest_string_t  *spec;

    for (i = 0; i < CMS_MANIFEST_NSTRINGS; i++) {
        spec = &cms_manifest_string_keys[i];
        v = cms_toml_get(ext, spec->key);

        if (v == NULL) {
            return cms_manifest_fail(ctx, "extension.%s: required",
                                     spec->key);
        }

        if (v->type != CMS_TOML_STRING) {
            return cms_manifest_fail(ctx, "extension.%s: must be a string",
                                     spec->key);
        }

        if (!cms_manifest_match(v, spec)) {
            return cms_manifest_fail(ctx, "extension.%s: must match %s",
                                     spec->key, spec->pattern);
        }

        s = (cms_manifest_str_t *) (void *) ((char *) m + spec->offset);
        s->data = v->str;
        s->len = v->str_len;
    }

    return 0;
}


/* 1 when v's string has 1 to spec->max bytes, all of spec->classes */

static int
cms_manifest_match(const cms_toml_node_t *v,
    const cms_manifest_string_t *spec)
{
    size_t         i;
    unsigned       cls;
    unsigned char  c;

    if (v->str_len == 0 || v->str_len > spec->max) {
        return 0;
    }

    if (spec->classes == 0) {
        return cms_slug_valid(v->str, v->str_len);
    }

    for (i = 0; i < v->str_len; i++) {
        c = (unsigned char) v->str[i];

        cls = (c >= 'a' && c <= 'z') ? CMS_MANIFEST_LOWER
              : (c >= 'A' && c <= 'Z') ? CMS_MANIFEST_UPPER
              : (c >= '0' && c <= '9') ? CMS_MANIFEST_DIGIT
              : (c == '-') ? CMS_MANIFEST_DASH
              : (c == '_') ? CMS_MANIFEST_UNDER
              : (c == '.') ? CMS_MANIFEST_DOT
              : (c == '+') ? CMS_MANIFEST_PLUS
              : (c == ':') ? CMS_MANIFEST_COLON : 0;

        if ((cls & spec->classes) == 0) {
            return 0;
        }
    }

    return 1;
}


static int
cms_manifest_privileges(cms_manifest_ctx_t *ctx, const cms_toml_node_t *ext,
    cms_manifest_t *m)
{
    size_t                  i;
    const cms_toml_node_t  *a, *v;

    a = cms_toml_get(ext, "privileges");

    if (a == NULL) {
        return cms_manifest_fail(ctx, "extension.privileges: required");
    }

    if (a->type != CMS_TOML_ARRAY) {
        return cms_manifest_fail(ctx, "extension.privileges: must be an "
                                 "array of strings");
    }

    if (a->count > CMS_MANIFEST_MAX_PRIVILEGES) {
        return cms_manifest_fail(ctx, "extension.privileges: at most %d",
                                 CMS_MANIFEST_MAX_PRIVILEGES);
    }

    for (v = a->child, i = 0; v != NULL; v = v->next, i++) {
        if (cms_manifest_privilege(ctx, v, i, m) != 0) {
            return -1;
        }
    }

    return 0;
}


/* extension.privileges[i], v: a known privilege not listed before it */

static int
cms_manifest_privilege(cms_manifest_ctx_t *ctx, const cms_toml_node_t *v,
    size_t i, cms_manifest_t *m)
{
    size_t        j;
    const char  **k;

    if (v->type != CMS_TOML_STRING) {
        return cms_manifest_fail(ctx, "extension.privileges[%u]: must "
                                 "be a string", (unsigned) i);
    }

    for (k = cms_manifest_known_privileges; *k != NULL; k++) {
        if (strcmp(v->str, *k) == 0) {
            break;
        }
    }

    if (*k == NULL) {
        return cms_manifest_fail(ctx, "extension.privileges[%u]: must "
                                 "be one of ext:billing:read, "
                                 "ext:billing:write, ext:control:write",
                                 (unsigned) i);
    }

    for (j = 0; j < i; j++) {
        if (strcmp(m->privileges[j].data, v->str) == 0) {
            return cms_manifest_fail(ctx, "extension.privileges[%u]: "
                                     "duplicate of [%u]", (unsigned) i,
                                     (unsigned) j);
        }
    }

    m->privileges[i].data = v->str;
    m->privileges[i].len = v->str_len;
    m->nprivileges = i + 1;

    return 0;
}


/* [extension.config]: optional, one table per field */

static int
cms_manifest_config(cms_manifest_ctx_t *ctx, const cms_toml_node_t *ext,
    cms_manifest_t *m)
{
    char                    shown[80];
    size_t                  i;
    const cms_toml_node_t  *c, *t;

    c = cms_toml_get(ext, "config");

    if (c == NULL) {
        return 0;
    }

    if (c->type != CMS_TOML_TABLE) {
        return cms_manifest_fail(ctx, "extension.config: must be a table");
    }

    if (c->count > CMS_MANIFEST_MAX_FIELDS) {
        return cms_manifest_fail(ctx, "extension.config: at most %d fields",
                                 CMS_MANIFEST_MAX_FIELDS);
    }

    for (t = c->child, i = 0; t != NULL; t = t->next, i++) {

        if (!cms_manifest_name_valid(t->key, t->key_len)) {
            cms_manifest_show_key(t, shown, sizeof(shown));
            return cms_manifest_fail(ctx, "extension.config.%s: field names "
                                     "must match [a-z0-9_]{1,64}", shown);
        }

        if (cms_manifest_field_parse(ctx, t, &m->fields[i]) != 0) {
            return -1;
        }

        m->nfields = i + 1;
    }

    return 0;
}


/* one field table t, whose name is already valid */

static int
cms_manifest_field_parse(cms_manifest_ctx_t *ctx, const cms_toml_node_t *t,
    cms_manifest_field_t *f)
{
    char                    path[96];
    size_t                  i;
    const cms_toml_node_t  *v;

    snprintf(path, sizeof(path), "extension.config.%s", t->key);

    if (t->type != CMS_TOML_TABLE) {
        return cms_manifest_fail(ctx, "%s: must be a table", path);
    }

    if (cms_manifest_only(ctx, t, path, cms_manifest_field_keys) != 0) {
        return -1;
    }

    f->name.data = t->key;
    f->name.len = t->key_len;

    v = cms_toml_get(t, "type");

    if (v == NULL) {
        return cms_manifest_fail(ctx, "%s.type: required", path);
    }

    for (i = 0; v->type == CMS_TOML_STRING && i < 4; i++) {
        if (strcmp(v->str, cms_manifest_types[i]) == 0) {
            f->type = (cms_manifest_type_e) (i + 1);
            break;
        }
    }

    if (f->type == 0) {
        return cms_manifest_fail(ctx, "%s.type: must be one of string, "
                                 "secret, number, boolean", path);
    }

    v = cms_toml_get(t, "required");

    if (v != NULL) {
        if (v->type != CMS_TOML_BOOLEAN) {
            return cms_manifest_fail(ctx, "%s.required: must be true or "
                                     "false", path);
        }

        f->required = v->boolean;
    }

    return cms_manifest_field_default(ctx, t, f);
}


static int
cms_manifest_field_default(cms_manifest_ctx_t *ctx, const cms_toml_node_t *t,
    cms_manifest_field_t *f)
{
    int                     ok;
    const cms_toml_node_t  *v;

    v = cms_toml_get(t, "default");

    if (v == NULL) {
        return 0;
    }

    switch (f->type) {

    case CMS_MANIFEST_SECRET:
        return cms_manifest_fail(ctx, "extension.config.%s.default: not "
                                 "allowed for a secret field", t->key);

    case CMS_MANIFEST_STRING:
        ok = (v->type == CMS_TOML_STRING);
        break;

    case CMS_MANIFEST_NUMBER:
        ok = (v->type == CMS_TOML_INTEGER || v->type == CMS_TOML_FLOAT);
        break;

    default: /* CMS_MANIFEST_BOOLEAN */
        ok = (v->type == CMS_TOML_BOOLEAN);
        break;
    }

    if (!ok) {
        return cms_manifest_fail(ctx, "extension.config.%s.default: must be "
                                 "a %s (the field's type)", t->key,
                                 cms_manifest_type_name(f->type));
    }

    f->has_default = 1;
    f->def = v;

    return 0;
}


/* [a-z0-9_]{1,64} */

static int
cms_manifest_name_valid(const char *s, size_t len)
{
    size_t  i;

    if (len == 0 || len > CMS_MANIFEST_NAME_MAX) {
        return 0;
    }

    for (i = 0; i < len; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')
              || s[i] == '_'))
        {
            return 0;
        }
    }

    return 1;
}
