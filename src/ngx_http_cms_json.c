
/*
 * JSON serialisation into request-pool memory and string escaping.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_crypto.h"
#include "cms_json_scan.h"
#include "cms_fields.h"
#include "cms_text.h"
#include "cms_slug.h"


typedef struct {
    ngx_pool_t                 *pool;
    u_char                     *data;
    size_t                      len;
    size_t                      size;
} ngx_http_cms_json_buf_t;


static ngx_int_t ngx_http_cms_json_fields_read(ngx_http_request_t *r,
    json_t *body, const cms_fields_t *t, int mode,
    cms_fields_param_t *params, ngx_uint_t nparams);
static ngx_int_t ngx_http_cms_json_refused(ngx_http_request_t *r,
    cms_fields_error_t *err);
static int ngx_http_cms_json_append(const char *p, size_t n, void *data);
static void ngx_http_cms_json_cleanup(void *data);
static size_t ngx_http_cms_json_value_len(ngx_uint_t kind, u_char *v,
    size_t len);
static u_char *ngx_http_cms_json_value(u_char *p, ngx_uint_t kind, u_char *v,
    size_t len);
static ngx_int_t ngx_http_cms_json_time_frac(u_char *v, size_t len);
static u_char *ngx_http_cms_json_escape_inner(u_char *buf, const u_char *s,
    size_t len);
static size_t ngx_http_cms_json_srcset(u_char *p, u_char *v, size_t len);
static size_t ngx_http_cms_json_put(u_char *p, const u_char *s, size_t len);
static size_t ngx_http_cms_json_run(u_char *p, const u_char *s, size_t len);
static size_t ngx_http_cms_json_lit(u_char *p, const char *s, size_t len);
static size_t ngx_http_cms_json_time(u_char *p, u_char *v, size_t len);
static size_t ngx_http_cms_json_text_array(u_char *p, u_char *v, size_t len);
static size_t ngx_http_cms_json_array_scan(u_char *p, u_char *v, size_t len);
static u_char *ngx_http_cms_json_publishable(u_char *p, u_char *seed,
    size_t len);


/*
 * The bytes a JSON string escapes, and how many bytes more each takes:
 * 1 for the two-character escapes, 5 for the other controls (\u00XX);
 * 0 for every byte written as it is (UTF-8 bytes included).
 */
static const u_char  ngx_http_cms_json_extra[256] = {
    5, 5, 5, 5, 5, 5, 5, 5, 1, 1, 1, 5, 1, 1, 5, 5,     /* \b \t \n \f \r */
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,     /* '"' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0      /* '\\' */
};


ngx_int_t
ngx_http_cms_json_dump(ngx_http_request_t *r, json_t *json, ngx_str_t *out)
{
    ngx_http_cms_json_buf_t  b;

    b.pool = r->pool;
    b.len = 0;
    b.size = 512;
    b.data = ngx_pnalloc(r->pool, b.size);

    if (b.data == NULL) {
        return NGX_ERROR;
    }

    if (json_dump_callback(json, ngx_http_cms_json_append, &b,
                           JSON_COMPACT | JSON_PRESERVE_ORDER
                           | JSON_ENCODE_ANY)
        != 0)
    {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: json_dump_callback() failed");
        return NGX_ERROR;
    }

    out->data = b.data;
    out->len = b.len;

    return NGX_OK;
}


static int
ngx_http_cms_json_append(const char *p, size_t n, void *data)
{
    ngx_http_cms_json_buf_t *b = data;

    u_char  *nd;
    size_t   size;

    if (b->len + n > b->size) {
        size = ngx_max(b->size * 2, b->len + n);
        nd = ngx_pnalloc(b->pool, size);

        if (nd == NULL) {
            return -1;
        }

        ngx_memcpy(nd, b->data, b->len);

        /* the old buffer stays in the pool until the request ends */
        b->data = nd;
        b->size = size;
    }

    ngx_memcpy(b->data + b->len, p, n);
    b->len += n;

    return 0;
}


ngx_int_t
ngx_http_cms_json_pool(ngx_http_request_t *r, json_t *json)
{
    ngx_pool_cleanup_t  *cln;

    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (cln == NULL) {
        json_decref(json);
        return NGX_ERROR;
    }

    cln->handler = ngx_http_cms_json_cleanup;
    cln->data = json;

    return NGX_OK;
}


static void
ngx_http_cms_json_cleanup(void *data)
{
    json_decref(data);
}


size_t
ngx_http_cms_json_escaped_len(const u_char *s, size_t len)
{
    size_t  n, i;

    n = 2 + len;

    for (i = 0; i < len; i++) {
        n += ngx_http_cms_json_extra[s[i]];
    }

    return n;
}


u_char *
ngx_http_cms_json_escape(u_char *buf, const u_char *s, size_t len)
{
    *buf++ = '"';
    buf = ngx_http_cms_json_escape_inner(buf, s, len);
    *buf++ = '"';

    return buf;
}


/* s[0 .. len) escaped, without the quotes: the runs that need none copied */
static u_char *
ngx_http_cms_json_escape_inner(u_char *buf, const u_char *s, size_t len)
{
    u_char         c;
    const u_char  *run, *end;
    static u_char  hex[] = "0123456789abcdef";

    end = s + len;

    while (s < end) {
        run = s;

        while (s < end && ngx_http_cms_json_extra[*s] == 0) {
            s++;
        }

        buf = ngx_cpymem(buf, run, s - run);

        if (s == end) {
            break;
        }

        c = *s++;
        *buf++ = '\\';

        switch (c) {
        case '"':  *buf++ = '"';  break;
        case '\\': *buf++ = '\\'; break;
        case '\n': *buf++ = 'n';  break;
        case '\r': *buf++ = 'r';  break;
        case '\t': *buf++ = 't';  break;
        case '\b': *buf++ = 'b';  break;
        case '\f': *buf++ = 'f';  break;

        default:
            buf = ngx_cpymem(buf, "u00", 3);
            *buf++ = hex[c >> 4];
            *buf++ = hex[c & 0xf];
        }
    }

    return buf;
}


ngx_int_t
ngx_http_cms_json_slug(ngx_http_request_t *r, ngx_str_t *slug,
    ngx_str_t *from)
{
    u_char  *p;
    size_t   n;

    if (slug->data != NULL) {
        if (!cms_slug_valid((char *) slug->data, slug->len)) {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_SLUG,
                                     "slug");
        }

        return NGX_OK;
    }

    if (from == NULL || from->data == NULL) {
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, CMS_SLUG_MAX + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    n = cms_slugify((char *) from->data, from->len, (char *) p,
                    CMS_SLUG_MAX + 1);

    if (n == 0) {
        ngx_str_set(slug, "untitled");
        return NGX_OK;
    }

    slug->data = p;
    slug->len = n;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_json_slug_text(ngx_http_request_t *r, ngx_str_t *from,
    ngx_str_t *slug)
{
    u_char  *p;
    size_t   n;

    p = ngx_pnalloc(r->pool, NGX_HTTP_CMS_SLUG_DERIVED_MAX);
    if (p == NULL) {
        return NGX_ERROR;
    }

    n = cms_slugify_text((char *) from->data, from->len, (char *) p,
                         NGX_HTTP_CMS_SLUG_DERIVED_MAX);

    if (n == 0) {
        ngx_str_set(slug, "untitled");
        return NGX_OK;
    }

    slug->data = p;
    slug->len = n;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_json_slug_derive(ngx_http_request_t *r, json_t *patch,
    const char *from)
{
    json_t     *v;
    ngx_str_t   text, slug;

    if (json_object_get(patch, "slug") != NULL) {
        return NGX_OK;
    }

    v = json_object_get(patch, from);

    if (!json_is_string(v)) {
        return NGX_OK;
    }

    text.data = (u_char *) json_string_value(v);
    text.len = json_string_length(v);

    if (ngx_http_cms_json_slug_text(r, &text, &slug) != NGX_OK) {
        return NGX_ERROR;
    }

    v = json_stringn((char *) slug.data, slug.len);

    if (v == NULL || json_object_set_new(patch, "slug", v) != 0
        || json_object_set_new(patch, "slug_derived", json_true()) != 0)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_json_no_body(ngx_http_request_t *r, json_t *body)
{
    if (body != NULL
        && (!json_is_object(body) || json_object_size(body) != 0))
    {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     NULL, "This route takes no body");
    }

    return NGX_OK;
}


size_t
ngx_http_cms_json_row_len(PGresult *res, int row, ngx_uint_t base,
    const ngx_http_cms_col_t *cols, ngx_uint_t n)
{
    int         c;
    size_t      len;
    ngx_uint_t  i;

    /* braces, and a comma between two members */
    len = 2 + (n ? n - 1 : 0);

    for (i = 0; i < n; i++) {
        c = (int) (base + cols[i].column);

        /* "name": */
        len += ngx_strlen(cols[i].name) + 3;

        if (PQgetisnull(res, row, c)) {
            len += sizeof("null") - 1;
            continue;
        }

        len += ngx_http_cms_json_value_len(cols[i].kind,
                                           (u_char *) PQgetvalue(res, row, c),
                                           PQgetlength(res, row, c));
    }

    return len;
}


u_char *
ngx_http_cms_json_row(u_char *p, PGresult *res, int row, ngx_uint_t base,
    const ngx_http_cms_col_t *cols, ngx_uint_t n)
{
    int         c;
    ngx_uint_t  i;

    *p++ = '{';

    for (i = 0; i < n; i++) {
        c = (int) (base + cols[i].column);

        if (i) {
            *p++ = ',';
        }

        p = ngx_sprintf(p, "\"%s\":", cols[i].name);

        if (PQgetisnull(res, row, c)) {
            p = ngx_cpymem(p, "null", 4);
            continue;
        }

        p = ngx_http_cms_json_value(p, cols[i].kind,
                                    (u_char *) PQgetvalue(res, row, c),
                                    PQgetlength(res, row, c));
    }

    *p++ = '}';

    return p;
}


/* the length of one column's value v[0 .. len) as its kind writes it */
static size_t
ngx_http_cms_json_value_len(ngx_uint_t kind, u_char *v, size_t len)
{
    switch (kind) {

    case NGX_HTTP_CMS_COL_STRING:
        return ngx_http_cms_json_escaped_len(v, len);

    case NGX_HTTP_CMS_COL_BOOL:
        return sizeof("false") - 1;

    case NGX_HTTP_CMS_COL_PUBLISHABLE:
        return 2 + NGX_HTTP_CMS_PK_LEN;

    case NGX_HTTP_CMS_COL_SRCSET:
        return ngx_http_cms_json_srcset(NULL, v, len);

    case NGX_HTTP_CMS_COL_TIME:
        return ngx_http_cms_json_time(NULL, v, len);

    case NGX_HTTP_CMS_COL_TEXT_ARRAY:
        return ngx_http_cms_json_text_array(NULL, v, len);

    default: /* NUMBER, JSON */
        return len;
    }
}


/* one column's value v[0 .. len) as its kind writes it */
static u_char *
ngx_http_cms_json_value(u_char *p, ngx_uint_t kind, u_char *v, size_t len)
{
    switch (kind) {

    case NGX_HTTP_CMS_COL_STRING:
        return ngx_http_cms_json_escape(p, v, len);

    case NGX_HTTP_CMS_COL_BOOL:
        return (v[0] == 't') ? ngx_cpymem(p, "true", 4)
                             : ngx_cpymem(p, "false", 5);

    case NGX_HTTP_CMS_COL_PUBLISHABLE:
        return ngx_http_cms_json_publishable(p, v, len);

    case NGX_HTTP_CMS_COL_SRCSET:
        return p + ngx_http_cms_json_srcset(p, v, len);

    case NGX_HTTP_CMS_COL_TIME:
        return p + ngx_http_cms_json_time(p, v, len);

    case NGX_HTTP_CMS_COL_TEXT_ARRAY:
        return p + ngx_http_cms_json_text_array(p, v, len);

    case NGX_HTTP_CMS_COL_JSON:
        /* PostgreSQL's json text has spaces: answers are compact */
        return p + cms_json_compact(v, len, p);

    default: /* NUMBER */
        return ngx_cpymem(p, v, len);
    }
}


/*
 * A stored image's srcset, from "<width> <url>" (the url ends with
 * "/v1/files/<key>"): the variant of each cms_image_widths width narrower
 * than the image, "<prefix>size/w<w>/<key> <w>w", then the original,
 * "<url> <width>w", joined by ", ", as a JSON string; null where the
 * variants are not served (no cms_storage).  With p NULL, only the
 * length is counted.
 */
/* long: the row's parts found, then each candidate written */
static size_t
ngx_http_cms_json_srcset(u_char *p, u_char *v, size_t len)
{
    u_char                    *sp, *url, *key, *end, *q;
    size_t                     n, prefix;
    ngx_int_t                  width;
    ngx_uint_t                 i;
    ngx_http_cms_main_conf_t  *mcf;
    u_char                     num[NGX_INT_T_LEN + 16];

    static u_char  files[] = "/v1/files/";

    mcf = ngx_http_cycle_get_module_main_conf(ngx_cycle, ngx_http_cms_module);

    end = v + len;
    sp = ngx_strlchr(v, end, ' ');
    width = (sp != NULL) ? ngx_atoi(v, sp - v) : NGX_ERROR;
    url = (sp != NULL) ? sp + 1 : end;
    key = NULL;

    for (q = url; q + sizeof(files) - 1 <= end; q++) {
        if (ngx_strncmp(q, files, sizeof(files) - 1) == 0) {
            key = q + sizeof(files) - 1;
        }
    }

    if (width <= 0 || key == NULL || key == end || mcf == NULL
        || mcf->storage.len == 0)
    {
        return ngx_http_cms_json_put(p, (u_char *) "null", 4);
    }

    prefix = key - url;
    n = ngx_http_cms_json_put(p, (u_char *) "\"", 1);

    for (i = 0; i < mcf->image.nwidths; i++) {
        if (mcf->image.widths[i] >= (ngx_uint_t) width) {
            break;
        }

        n += ngx_http_cms_json_put(p ? p + n : NULL, url, prefix);
        q = ngx_sprintf(num, "size/w%ui/", mcf->image.widths[i]);
        n += ngx_http_cms_json_put(p ? p + n : NULL, num, q - num);
        n += ngx_http_cms_json_put(p ? p + n : NULL, key, end - key);
        q = ngx_sprintf(num, " %uiw, ", mcf->image.widths[i]);
        n += ngx_http_cms_json_put(p ? p + n : NULL, num, q - num);
    }

    n += ngx_http_cms_json_put(p ? p + n : NULL, url, end - url);
    q = ngx_sprintf(num, " %iw", width);
    n += ngx_http_cms_json_put(p ? p + n : NULL, num, q - num);
    n += ngx_http_cms_json_put(p ? p + n : NULL, (u_char *) "\"", 1);

    return n;
}


/*
 * PostgreSQL's text of a timestamptz in the module's sessions (DateStyle
 * ISO, TimeZone UTC, ngx_http_cms_pg_conf.c: "2026-11-28 23:02:50.1234+00")
 * as the API writes a time, cms_ts()'s form (sql/0002): RFC 3339 in UTC to
 * the millisecond, truncated, "2026-11-28T23:02:50.123Z".  Any other text
 * (a year past 9999, BC, infinity) is written as the string it is.  Into
 * p, or only counted (p NULL); its length.
 */
static size_t
ngx_http_cms_json_time(u_char *p, u_char *v, size_t len)
{
    ngx_int_t  i, frac;

    frac = ngx_http_cms_json_time_frac(v, len);

    if (frac == NGX_ERROR) {
        return p ? (size_t) (ngx_http_cms_json_escape(p, v, len) - p)
                 : ngx_http_cms_json_escaped_len(v, len);
    }

    if (p != NULL) {
        *p++ = '"';
        p = ngx_cpymem(p, v, 10);
        *p++ = 'T';
        p = ngx_cpymem(p, v + 11, 8);
        *p++ = '.';

        for (i = 0; i < 3; i++) {
            *p++ = (i < frac) ? v[20 + i] : '0';
        }

        *p++ = 'Z';
        *p = '"';
    }

    return sizeof("\"0000-00-00T00:00:00.000Z\"") - 1;
}


/* the digits of the fraction of ngx_http_cms_json_time()'s form, 0 to 6,
   or NGX_ERROR for text not of that form */
static ngx_int_t
ngx_http_cms_json_time_frac(u_char *v, size_t len)
{
    size_t             i;
    static const char  form[] = "0000-00-00 00:00:00";

    if (len < sizeof(form) - 1 + 3 || ngx_strncmp(v + len - 3, "+00", 3)) {
        return NGX_ERROR;
    }

    for (i = 0; i < sizeof(form) - 1; i++) {
        if (form[i] == '0' ? (v[i] < '0' || v[i] > '9') : v[i] != form[i]) {
            return NGX_ERROR;
        }
    }

    if (i == len - 3) {
        return 0;
    }

    if (v[i] != '.') {
        return NGX_ERROR;
    }

    for (i++; i < len - 3; i++) {
        if (v[i] < '0' || v[i] > '9') {
            return NGX_ERROR;
        }
    }

    i = len - 3 - (sizeof(form) - 1) - 1;

    return (i >= 1 && i <= 6) ? (ngx_int_t) i : NGX_ERROR;
}


/*
 * PostgreSQL's text of a text[] ({a,"b c","d\\"e",NULL}) as a JSON array
 * of strings, an unquoted NULL as null; a multi-dimensional array's
 * elements in order, flattened (the API's arrays are of strings).  Text
 * not of that form is written as the string it is.  Into p, or only
 * counted (p NULL); its length.  The form is checked before anything is
 * written: a writer stops at nothing it did not count.
 */
static size_t
ngx_http_cms_json_text_array(u_char *p, u_char *v, size_t len)
{
    size_t  n;

    n = ngx_http_cms_json_array_scan(NULL, v, len);

    if (n == 0) {
        return p ? (size_t) (ngx_http_cms_json_escape(p, v, len) - p)
                 : ngx_http_cms_json_escaped_len(v, len);
    }

    return p ? ngx_http_cms_json_array_scan(p, v, len) : n;
}


/*
 * ngx_http_cms_json_text_array()'s array written into p, or only counted
 * (p NULL); its length, or 0 for text not of that form (p NULL only: the
 * writer is called on checked text).
 */
/* long: one pass over braces, commas and elements, quoted or not */
static size_t
ngx_http_cms_json_array_scan(u_char *p, u_char *v, size_t len)
{
    u_char     *s, *end, *run;
    size_t      n, items;
    ngx_int_t   depth;

    if (len < 2 || v[0] != '{') {
        return 0;
    }

    end = v + len;
    depth = 0;
    items = 0;
    n = ngx_http_cms_json_lit(p, "[", 1);

    for (s = v; s < end; /* void */) {

        if (*s == '{' || *s == '}' || *s == ',') {
            depth += (*s == '{') - (*s == '}');
            s++;

            if (depth <= 0 && s != end) {
                return 0;
            }

            continue;
        }

        if (items++) {
            n += ngx_http_cms_json_lit(p ? p + n : NULL, ",", 1);
        }

        if (*s != '"') {
            for (run = s; s < end && *s != ',' && *s != '}'; s++) { /* */ }

            if (s - run == 4 && ngx_strncmp(run, "NULL", 4) == 0) {
                n += ngx_http_cms_json_lit(p ? p + n : NULL, "null", 4);
                continue;
            }

            n += ngx_http_cms_json_lit(p ? p + n : NULL, "\"", 1);
            n += ngx_http_cms_json_run(p ? p + n : NULL, run, s - run);
            n += ngx_http_cms_json_lit(p ? p + n : NULL, "\"", 1);
            continue;
        }

        n += ngx_http_cms_json_lit(p ? p + n : NULL, "\"", 1);

        /* runs between backslashes; an escaped byte begins a run */
        for (run = ++s; s < end && *s != '"'; s++) {
            if (*s == '\\') {
                n += ngx_http_cms_json_run(p ? p + n : NULL, run, s - run);
                run = ++s;

                if (s == end) {
                    return 0;
                }
            }
        }

        if (s == end) {
            return 0;
        }

        n += ngx_http_cms_json_run(p ? p + n : NULL, run, s - run);
        n += ngx_http_cms_json_lit(p ? p + n : NULL, "\"", 1);
        s++;
    }

    if (depth != 0) {
        return 0;
    }

    return n + ngx_http_cms_json_lit(p ? p + n : NULL, "]", 1);
}


/* s[0 .. len) escaped into p, or only counted (p NULL); its length */
static size_t
ngx_http_cms_json_run(u_char *p, const u_char *s, size_t len)
{
    if (p == NULL) {
        return ngx_http_cms_json_escaped_len(s, len) - 2;
    }

    return ngx_http_cms_json_escape_inner(p, s, len) - p;
}


/* s[0 .. len) copied into p as it is, or only counted (p NULL) */
static size_t
ngx_http_cms_json_lit(u_char *p, const char *s, size_t len)
{
    if (p != NULL) {
        ngx_memcpy(p, s, len);
    }

    return len;
}


/* s[0 .. len) escaped into p, or only counted (p NULL), a lone '"' as
   it is; its length */
static size_t
ngx_http_cms_json_put(u_char *p, const u_char *s, size_t len)
{
    if (len == 1 && s[0] == '"') {
        if (p != NULL) {
            *p = '"';
        }

        return 1;
    }

    if (p == NULL) {
        return ngx_http_cms_json_escaped_len(s, len) - 2;
    }

    return ngx_http_cms_json_escape_inner(p, s, len) - p;
}


/*
 * A site's publishable key as a JSON string, made from "seed"; should the
 * making fail (no memory), null padded with spaces to the same length, so
 * the row still fits what ngx_http_cms_json_row_len() measured.
 */
static u_char *
ngx_http_cms_json_publishable(u_char *p, u_char *seed, size_t len)
{
    *p = '"';

    if (ngx_http_cms_crypto_publishable(seed, len, p + 1, NULL) == NGX_OK) {
        p[1 + NGX_HTTP_CMS_PK_LEN] = '"';
        return p + 2 + NGX_HTTP_CMS_PK_LEN;
    }

    ngx_memset(p, ' ', 2 + NGX_HTTP_CMS_PK_LEN);
    ngx_memcpy(p, "null", 4);

    return p + 2 + NGX_HTTP_CMS_PK_LEN;
}


ngx_int_t
ngx_http_cms_json_read(ngx_http_request_t *r, json_t *body,
    const cms_fields_t *t, int mode, ngx_str_t *args, ngx_uint_t nargs)
{
    ngx_int_t            rc;
    ngx_uint_t           i;
    cms_fields_param_t   params[NGX_HTTP_CMS_JSON_MAX_ARGS];

    if (nargs > NGX_HTTP_CMS_JSON_MAX_ARGS) {
        return NGX_ERROR;
    }

    for (i = 0; i < nargs; i++) {
        params[i].p = (const char *) args[i].data;
        params[i].len = args[i].len;
    }

    rc = ngx_http_cms_json_fields_read(r, body, t, mode, params, nargs);
    if (rc != NGX_OK) {
        return rc;
    }

    for (i = 0; i < nargs; i++) {
        /* "set null" reaches SQL as NULL: every column read so far keeps
           its value then (coalesce) */
        args[i].data = CMS_FIELDS_IS_NULL(params[i]) ? NULL
                                                     : (u_char *) params[i].p;
        args[i].len = args[i].data ? params[i].len : 0;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_json_patch(ngx_http_request_t *r, json_t *body,
    const cms_fields_t *t, int mode, json_t **patch)
{
    json_t              *obj;
    ngx_int_t            rc;
    cms_fields_param_t   params[NGX_HTTP_CMS_JSON_MAX_ARGS];

    rc = ngx_http_cms_json_fields_read(r, body, t, mode, params,
                                       NGX_HTTP_CMS_JSON_MAX_ARGS);
    if (rc != NGX_OK) {
        return rc;
    }

    obj = json_object();
    if (obj == NULL || ngx_http_cms_json_pool(r, obj) != NGX_OK) {
        return NGX_ERROR;
    }

    if (cms_fields_object(t, params, obj) != CMS_FIELDS_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: cms_fields_object() failed");
        return NGX_ERROR;
    }

    *patch = obj;

    return NGX_OK;
}


/* cms_fields_read() with its buffer from r->pool; a refusal recorded */
static ngx_int_t
ngx_http_cms_json_fields_read(ngx_http_request_t *r, json_t *body,
    const cms_fields_t *t, int mode, cms_fields_param_t *params,
    ngx_uint_t nparams)
{
    int               rc;
    cms_fields_out_t  out;

    out.params = params;
    out.nparams = nparams;
    out.size = cms_fields_space(t);
    out.buf = ngx_pnalloc(r->pool, out.size + 1);

    if (out.buf == NULL) {
        return NGX_ERROR;
    }

    rc = cms_fields_read(t, body, mode, &out);

    if (rc == CMS_FIELDS_ERROR) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "cms: a field table is wrong: %s", out.err.message);
        return NGX_ERROR;
    }

    if (rc == CMS_FIELDS_REFUSED) {
        return ngx_http_cms_json_refused(r, &out.err);
    }

    return NGX_OK;
}


/* the reader's refusal, recorded; its message lives in "out", the error
   outlives it; a code whose text states its rule keeps that text */
static ngx_int_t
ngx_http_cms_json_refused(ngx_http_request_t *r, cms_fields_error_t *err)
{
    u_char  *msg;
    size_t   len;

    if (ngx_http_cms_error_get(err->code)->states_rule) {
        return ngx_http_cms_fail(r, err->code, err->param);
    }

    len = ngx_strlen(err->message) + 1;

    msg = ngx_pnalloc(r->pool, len);
    if (msg == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(msg, err->message, len);

    return ngx_http_cms_fail_msg(r, err->code, err->param, (char *) msg);
}
