
/*
 * libFuzzer target for cms_toml_parse() and cms_manifest_parse(): the
 * input is the TOML text, parsed three ways.
 *
 *   1. as raw TOML into an exactly-sized arena of cms_toml_arena_size():
 *      a failure has a message and is never "arena too small"; a success
 *      is a well-formed tree (counts, limits, no duplicate keys, keys and
 *      strings NUL-terminated valid UTF-8 without a NUL, finite floats,
 *      every node inside the arena);
 *   2. again into a smaller arena: the same outcome, or "arena too small";
 *   3. as a manifest: a failure has a printable ASCII message that fits
 *      CMS_MANIFEST_ERR_SIZE, a success obeys the manifest's limits and
 *      types, and only valid TOML succeeds.
 */


#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_toml.h"
#include "cms_manifest.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static size_t          nodes;
static char           *lo, *hi;     /* the arena of the tree being checked */
static cms_manifest_t  m;


static int
utf8_valid(const unsigned char *p, size_t len)
{
    size_t    i, n, k;
    uint32_t  c;

    for (i = 0; i < len; i += n) {
        if (p[i] < 0x80) {
            n = 1;
            continue;
        }

        if (p[i] >= 0xc2 && p[i] <= 0xdf) {
            n = 2; c = p[i] & 0x1f;

        } else if (p[i] >= 0xe0 && p[i] <= 0xef) {
            n = 3; c = p[i] & 0x0f;

        } else if (p[i] >= 0xf0 && p[i] <= 0xf4) {
            n = 4; c = p[i] & 0x07;

        } else {
            return 0;
        }

        if (len - i < n) {
            return 0;
        }

        for (k = 1; k < n; k++) {
            if ((p[i + k] & 0xc0) != 0x80) {
                return 0;
            }

            c = (c << 6) | (p[i + k] & 0x3f);
        }

        if ((n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff)))
            || (n == 4 && (c < 0x10000 || c > 0x10ffff)))
        {
            return 0;
        }
    }

    return 1;
}


static void
check_text(const char *s, size_t len)
{
    if (s == NULL || (char *) s < lo || (char *) s + len >= hi
        || s[len] != '\0' || memchr(s, '\0', len) != NULL
        || !utf8_valid((const unsigned char *) s, len))
    {
        abort();
    }
}


/* n is level containers below the root */

static void
check_node(const cms_toml_node_t *n, unsigned level)
{
    size_t                  count;
    const cms_toml_node_t  *c, *d;

    if ((char *) n < lo || (char *) (n + 1) > hi || ++nodes > 1025) {
        abort();
    }

    switch (n->type) {

    case CMS_TOML_STRING:
        check_text(n->str, n->str_len);
        return;

    case CMS_TOML_FLOAT:
        if (!(n->number == n->number) || n->number > DBL_MAX
            || n->number < -DBL_MAX)
        {
            abort();
        }

        return;

    case CMS_TOML_INTEGER:
    case CMS_TOML_BOOLEAN:
        if (n->child != NULL || n->count != 0) {
            abort();
        }

        return;

    case CMS_TOML_TABLE:
    case CMS_TOML_ARRAY:
        break;

    default:
        abort();
    }

    if (level > CMS_TOML_MAX_DEPTH) {
        abort();
    }

    count = 0;

    for (c = n->child; c != NULL; c = c->next) {
        count++;

        if (n->type == CMS_TOML_ARRAY) {
            if (c->key != NULL) {
                abort();
            }

        } else {
            check_text(c->key, c->key_len);

            for (d = n->child; d != c; d = d->next) {
                if (d->key_len == c->key_len
                    && memcmp(d->key, c->key, c->key_len) == 0)
                {
                    abort();
                }
            }

            if (cms_toml_get_n(n, c->key, c->key_len) != c) {
                abort();
            }
        }

        check_node(c, level + 1);
    }

    if (count != n->count) {
        abort();
    }
}


static void
check_error(int rc, cms_toml_node_t *root, const cms_toml_error_t *err)
{
    char  buf[256];

    if (rc != -1 || root != NULL || err->msg == NULL) {
        abort();
    }

    if (cms_toml_error_format(err, buf, sizeof(buf)) == 0 || buf[0] == '\0') {
        abort();
    }
}


static void
check_manifest(const cms_manifest_t *m)
{
    size_t                       i;
    const cms_manifest_field_t  *f;

    if (m->name.len == 0 || m->name.len > CMS_MANIFEST_NAME_MAX
        || m->version.len == 0 || m->category.len == 0
        || m->required_privilege.len == 0
        || m->nprivileges > CMS_MANIFEST_MAX_PRIVILEGES
        || m->nfields > CMS_MANIFEST_MAX_FIELDS)
    {
        abort();
    }

    for (i = 0; i < m->nfields; i++) {
        f = &m->fields[i];

        if (f->name.len == 0 || f->name.len > CMS_MANIFEST_NAME_MAX
            || f->type < CMS_MANIFEST_STRING || f->type > CMS_MANIFEST_BOOLEAN
            || (f->has_default != 0) != (f->def != NULL)
            || (f->type == CMS_MANIFEST_SECRET && f->has_default)
            || cms_manifest_field(m, f->name.data, f->name.len) != f)
        {
            abort();
        }

        if (f->def != NULL
            && ((f->type == CMS_MANIFEST_STRING
                 && f->def->type != CMS_TOML_STRING)
                || (f->type == CMS_MANIFEST_NUMBER
                    && f->def->type != CMS_TOML_INTEGER
                    && f->def->type != CMS_TOML_FLOAT)
                || (f->type == CMS_MANIFEST_BOOLEAN
                    && f->def->type != CMS_TOML_BOOLEAN)))
        {
            abort();
        }
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int                rc, rc2, i;
    char              *arena, *small, err[CMS_MANIFEST_ERR_SIZE];
    size_t             need, less;
    const char        *text;
    cms_toml_node_t   *root, *root2;
    cms_toml_error_t   terr, terr2;

    text = (const char *) data;
    need = cms_toml_arena_size(size);

    arena = malloc(need);
    if (arena == NULL) {
        return 0;
    }

    /* 1. the documented arena always suffices */

    rc = cms_toml_parse(text, size, arena, need, &root, &terr);

    if (rc == 0) {
        if (root == NULL || root->type != CMS_TOML_TABLE) {
            abort();
        }

        nodes = 0;
        lo = arena;
        hi = arena + need;
        check_node(root, 0);

    } else {
        check_error(rc, root, &terr);

        if (strcmp(terr.msg, "arena too small") == 0) {
            abort();
        }
    }

    /* 2. a smaller arena: the same answer, or out of arena */

    less = (size > 0) ? (need * data[size / 2]) / 256 : need / 2;
    small = malloc(less ? less : 1);

    if (small != NULL) {
        rc2 = cms_toml_parse(text, size, small, less, &root2, &terr2);

        if (rc2 == 0) {
            if (rc != 0 || root2->count != root->count) {
                abort();
            }

        } else {
            check_error(rc2, root2, &terr2);

            if (strcmp(terr2.msg, "arena too small") != 0
                && (rc == 0 || terr2.msg != terr.msg
                    || terr2.line != terr.line))
            {
                abort();
            }
        }

        free(small);
    }

    /* 3. as a manifest */

    memset(err, 0x55, sizeof(err));
    rc2 = cms_manifest_parse(text, size, arena, need, &m, err, sizeof(err));

    if (rc2 == 0) {
        if (rc != 0) {
            abort();
        }

        check_manifest(&m);

    } else {
        /* CMS_MANIFEST_ERR_SIZE holds every message whole */
        if (rc2 != -1 || err[0] == '\0'
            || memchr(err, '\0', sizeof(err) - 1) == NULL)
        {
            abort();
        }

        /* printable ASCII only: keys are escaped, values never shown */
        for (i = 0; err[i] != '\0'; i++) {
            if ((unsigned char) err[i] < 0x20
                || (unsigned char) err[i] >= 0x7f)
            {
                abort();
            }
        }
    }

    free(arena);

    return 0;
}
