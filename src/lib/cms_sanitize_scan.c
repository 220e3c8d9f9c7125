
/*
 * The sanitizer's pre-parse scan and the renaming of svg and math tags;
 * see cms_sanitize_scan() in cms_sanitize.h.
 */


#include <stdlib.h>
#include <string.h>

#include "cms_sanitize.h"
#include "cms_sanitize_int.h"


typedef struct {
    const unsigned char       *name;
    size_t                     len;
} cms_sanitize_name_t;


typedef struct {
    const unsigned char       *p;
    const unsigned char       *end;
    const unsigned char       *base;
    unsigned char             *patch;      /* copy to rename svg, math in */
    unsigned                   foreign;    /* svg and math tags seen */
    unsigned                   depth;
    unsigned                   max_depth;
    unsigned                   select;     /* select entries */
    cms_sanitize_name_t        stack[CMS_SANITIZE_MAX_DEPTH];
} cms_sanitize_scan_t;


static int cms_sanitize_scan_run(cms_sanitize_scan_t *s, const char *html,
    size_t len, unsigned max_depth, unsigned char *patch);
static int cms_sanitize_scan_markup(cms_sanitize_scan_t *s,
    const unsigned char *lt);
static int cms_sanitize_scan_tag(cms_sanitize_scan_t *s, int end_tag);
static int cms_sanitize_scan_attrs(cms_sanitize_scan_t *s, int *closed);
static const unsigned char *cms_sanitize_scan_attr(const unsigned char *p,
    const unsigned char *end);
static int cms_sanitize_scan_foreign(cms_sanitize_scan_t *s,
    const unsigned char *name, size_t len, int end_tag, int closed);
static int cms_sanitize_scan_open(cms_sanitize_scan_t *s,
    const unsigned char *name, size_t len);
static void cms_sanitize_scan_siblings(cms_sanitize_scan_t *s,
    const unsigned char *name, size_t len);
static void cms_sanitize_scan_close(cms_sanitize_scan_t *s,
    const unsigned char *name, size_t len);
static void cms_sanitize_scan_raw(cms_sanitize_scan_t *s,
    const unsigned char *name, size_t len);
static void cms_sanitize_scan_comment(cms_sanitize_scan_t *s);
static void cms_sanitize_scan_skip_gt(cms_sanitize_scan_t *s);
static int cms_sanitize_name_in(const unsigned char *name, size_t len,
    const char *const *list);
static int cms_sanitize_name_eq(const unsigned char *a, size_t alen,
    const unsigned char *b, size_t blen);


/* void elements of HTML: no end tag, never nest */
static const char *const  cms_sanitize_void_names[] = {
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame",
    "hr", "image", "img", "input", "keygen", "link", "meta", "param",
    "source", "track", "wbr", NULL
};

/* a start tag of these closes an element of the same name at the top */
static const char *const  cms_sanitize_sibling_names[] = {
    "p", "li", "option", "a", NULL
};

/* ... or of the same group */
static const char *const  cms_sanitize_cell_names[] = { "td", "th", NULL };
static const char *const  cms_sanitize_dd_names[] = { "dd", "dt", NULL };
static const char *const  cms_sanitize_tr_names[] = { "tr", NULL };

/* their content is text up to the matching end tag */
static const char *const  cms_sanitize_raw_names[] = {
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed",
    "noframes", "plaintext", NULL
};

/* raw text even inside select, whose mode ignores the other ones */
static const char *const  cms_sanitize_raw_select_names[] = {
    "script", "textarea", NULL
};

static const char *const  cms_sanitize_select_names[] = {
    "select", NULL
};


int
cms_sanitize_scan(const char *html, size_t len, unsigned max_depth)
{
    cms_sanitize_scan_t  s;

    return cms_sanitize_scan_run(&s, html, len, max_depth, NULL);
}


/*
 * Runs the pre-scan; when the input has svg or math tags, also makes the
 * copy Gumbo parses instead, with those tags renamed (see
 * cms_sanitize_scan_foreign()).
 *
 * On CMS_SANITIZE_OK, *copy is that malloc()ed copy of len bytes, owned by
 * the caller (free() it), or NULL when the input needs none.  Returns
 * CMS_SANITIZE_OK, CMS_SANITIZE_TOO_DEEP, CMS_SANITIZE_TOO_LARGE (as
 * cms_sanitize_scan()) or CMS_SANITIZE_ERROR (no memory for the copy);
 * *copy is NULL on every error.
 */

int
cms_sanitize_scan_copy(const char *html, size_t len, char **copy)
{
    int                  rc;
    cms_sanitize_scan_t  s;

    *copy = NULL;

    rc = cms_sanitize_scan_run(&s, html, len, CMS_SANITIZE_MAX_DEPTH, NULL);
    if (rc != CMS_SANITIZE_OK || s.foreign == 0) {
        return rc;
    }

    *copy = malloc(len);
    if (*copy == NULL) {
        return CMS_SANITIZE_ERROR;
    }

    memcpy(*copy, html, len);

    /* same input, same answer; this time writing the renamed tags */
    (void) cms_sanitize_scan_run(&s, html, len, CMS_SANITIZE_MAX_DEPTH,
                                 (unsigned char *) *copy);

    return CMS_SANITIZE_OK;
}


/*
 * The scan; with patch (a copy of html) it also renames svg and math tags
 * in the copy, and s->foreign counts them either way.
 */

static int
cms_sanitize_scan_run(cms_sanitize_scan_t *s, const char *html, size_t len,
    unsigned max_depth, unsigned char *patch)
{
    int                   rc;
    const unsigned char  *lt;

    s->p = (const unsigned char *) html;
    s->end = s->p + len;
    s->base = s->p;
    s->patch = patch;
    s->foreign = 0;
    s->depth = 0;
    s->select = 0;
    s->max_depth = max_depth < CMS_SANITIZE_MAX_DEPTH
                   ? max_depth : CMS_SANITIZE_MAX_DEPTH;

    while (s->p < s->end) {

        lt = memchr(s->p, '<', (size_t) (s->end - s->p));
        if (lt == NULL || lt + 1 == s->end) {
            break;
        }

        rc = cms_sanitize_scan_markup(s, lt);
        if (rc != CMS_SANITIZE_OK) {
            return rc;
        }
    }

    return CMS_SANITIZE_OK;
}


/* what follows the "<" at lt, which is not the last byte: tag or not */

static int
cms_sanitize_scan_markup(cms_sanitize_scan_t *s, const unsigned char *lt)
{
    unsigned char  c;

    s->p = lt + 2;
    c = lt[1];

    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
        s->p = lt + 1;
        return cms_sanitize_scan_tag(s, 0);
    }

    if (c == '/') {
        c = s->p < s->end ? *s->p : 0;

        if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
            return cms_sanitize_scan_tag(s, 1);
        }

        if (c != '>') {
            cms_sanitize_scan_skip_gt(s);         /* bogus comment */
        }

    } else if (c == '!') {
        cms_sanitize_scan_comment(s);

    } else if (c == '?') {
        cms_sanitize_scan_skip_gt(s);

    } else {
        s->p = lt + 1;                              /* a "<" in text */
    }

    return CMS_SANITIZE_OK;
}


/*
 * A start or end tag whose name begins at s->p.  A tag cut off by the end
 * of input is no tag (the tokenizer drops it).
 */

static int
cms_sanitize_scan_tag(cms_sanitize_scan_t *s, int end_tag)
{
    int                   rc, closed;
    size_t                len;
    const unsigned char  *name;

    name = s->p;

    while (s->p < s->end && !cms_sanitize_space(*s->p) && *s->p != '/'
           && *s->p != '>')
    {
        s->p++;
    }

    len = (size_t) (s->p - name);

    rc = cms_sanitize_scan_attrs(s, &closed);
    if (rc != 1) {
        return rc;
    }

    if (cms_sanitize_scan_foreign(s, name, len, end_tag, closed)) {
        return CMS_SANITIZE_OK;
    }

    if (end_tag) {
        cms_sanitize_scan_close(s, name, len);
        return CMS_SANITIZE_OK;
    }

    return cms_sanitize_scan_open(s, name, len);
}


/*
 * Gumbo 0.10.1 fails assertions (abort()) on some SVG and MathML content
 * in a fragment (svg or math holding select, table, head...), so
 * cms_sanitize() parses no foreign content at all: it renames these tags
 * in a copy of the input, to ordinary HTML elements of the same length
 * that the walk then drops with their content (cms_sanitize_renamed()):
 * <svg> </svg> to <bdi> </bdi>, <math> </math> to <samp> </samp>, and
 * self-closed <svg/> <math/> to the void <wbr/> <area/>.  The scan always
 * estimates for that renamed input.  Returns 1 for a self-closed one,
 * which does not nest.
 */

static int
cms_sanitize_scan_foreign(cms_sanitize_scan_t *s, const unsigned char *name,
    size_t len, int end_tag, int closed)
{
    int            math;
    const char    *to;
    unsigned char *at;

    if (cms_sanitize_name_eq(name, len, (const unsigned char *) "svg", 3)) {
        math = 0;

    } else if (cms_sanitize_name_eq(name, len,
                                    (const unsigned char *) "math", 4))
    {
        math = 1;

    } else {
        return 0;
    }

    s->foreign++;
    closed = closed && !end_tag;

    if (s->patch != NULL) {
        to = math ? (closed ? "area" : "samp") : (closed ? "wbr" : "bdi");
        at = s->patch + (name - s->base);
        memcpy(at, to, len);
    }

    return closed;
}


/*
 * Attributes up to and including the ">" closing the tag, following the
 * tokenizer's attribute states (so a ">" or "</b>" in a quoted value is
 * not markup).  Returns 1 after the ">" (*closed is 1 for "/>"),
 * CMS_SANITIZE_OK at the end of input, CMS_SANITIZE_TOO_LARGE over
 * CMS_SANITIZE_MAX_ATTRS.
 */

static int
cms_sanitize_scan_attrs(cms_sanitize_scan_t *s, int *closed)
{
    unsigned              n;
    const unsigned char  *p, *end;

    p = s->p;
    end = s->end;
    n = 0;

    for ( ;; ) {

        *closed = 0;

        while (p < end && (cms_sanitize_space(*p) || *p == '/')) {
            *closed = (*p == '/');
            p++;
        }

        if (p == end) {
            s->p = end;
            return CMS_SANITIZE_OK;
        }

        if (*p == '>') {
            s->p = p + 1;
            return 1;
        }

        if (++n > CMS_SANITIZE_MAX_ATTRS) {
            return CMS_SANITIZE_TOO_LARGE;
        }

        p = cms_sanitize_scan_attr(p, end);
    }
}


/*
 * One attribute at p (not a space, '/' or '>'): its name, then an
 * optional "=" and value, unquoted or quoted; returns where it ends.
 */

static const unsigned char *
cms_sanitize_scan_attr(const unsigned char *p, const unsigned char *end)
{
    const unsigned char  *q;

    /* the first character may be "=": it belongs to the name */
    p++;

    while (p < end && !cms_sanitize_space(*p) && *p != '/' && *p != '>'
           && *p != '=')
    {
        p++;
    }

    while (p < end && cms_sanitize_space(*p)) {
        p++;
    }

    if (p == end || *p != '=') {
        return p;
    }

    p++;

    while (p < end && cms_sanitize_space(*p)) {
        p++;
    }

    if (p < end && (*p == '"' || *p == '\'')) {
        q = memchr(p + 1, *p, (size_t) (end - p - 1));
        return q ? q + 1 : end;
    }

    while (p < end && !cms_sanitize_space(*p) && *p != '>') {
        p++;
    }

    return p;
}


static int
cms_sanitize_scan_open(cms_sanitize_scan_t *s, const unsigned char *name,
    size_t len)
{
    if (cms_sanitize_name_in(name, len, cms_sanitize_void_names)) {
        return CMS_SANITIZE_OK;
    }

    cms_sanitize_scan_siblings(s, name, len);

    if (s->depth >= s->max_depth) {
        return CMS_SANITIZE_TOO_DEEP;
    }

    s->stack[s->depth].name = name;
    s->stack[s->depth].len = len;
    s->depth++;

    s->select += cms_sanitize_name_in(name, len, cms_sanitize_select_names);

    if (cms_sanitize_name_in(name, len, s->select
                             ? cms_sanitize_raw_select_names
                             : cms_sanitize_raw_names))
    {
        cms_sanitize_scan_raw(s, name, len);
    }

    return CMS_SANITIZE_OK;
}


/*
 * Start tags that close an open sibling when it is the current node, as
 * the parser does: a p another p, an li another li, an a another a, td or
 * th an open cell, dd or dt an open dd or dt, tr an open row (with its
 * cell).  None of these names is select, so its counter stays.
 */

static void
cms_sanitize_scan_siblings(cms_sanitize_scan_t *s, const unsigned char *name,
    size_t len)
{
    const char *const    *same;
    cms_sanitize_name_t  *top;

    if (s->depth == 0) {
        return;
    }

    top = &s->stack[s->depth - 1];

    if (cms_sanitize_name_in(name, len, cms_sanitize_cell_names)) {
        same = cms_sanitize_cell_names;

    } else if (cms_sanitize_name_in(name, len, cms_sanitize_dd_names)) {
        same = cms_sanitize_dd_names;

    } else if (cms_sanitize_name_eq(name, len, (const unsigned char *) "tr",
                                    2))
    {
        if (s->depth >= 2
            && cms_sanitize_name_in(top->name, top->len,
                                    cms_sanitize_cell_names)
            && cms_sanitize_name_eq(top[-1].name, top[-1].len,
                                    (const unsigned char *) "tr", 2))
        {
            s->depth -= 2;
            return;
        }

        same = cms_sanitize_tr_names;

    } else if (cms_sanitize_name_in(name, len, cms_sanitize_sibling_names)) {
        if (cms_sanitize_name_eq(top->name, top->len, name, len)) {
            s->depth--;
        }

        return;

    } else {
        return;
    }

    if (cms_sanitize_name_in(top->name, top->len, same)) {
        s->depth--;
    }
}


/* an end tag pops only the entry it names, and only from the top */

static void
cms_sanitize_scan_close(cms_sanitize_scan_t *s, const unsigned char *name,
    size_t len)
{
    cms_sanitize_name_t  *top;

    if (s->depth == 0) {
        return;
    }

    top = &s->stack[s->depth - 1];

    if (!cms_sanitize_name_eq(top->name, top->len, name, len)) {
        return;
    }

    s->select -= cms_sanitize_name_in(name, len, cms_sanitize_select_names);
    s->depth--;
}


/*
 * Skips raw text to its end tag: "</" + name + space, "/" or ">".  Leaves
 * s->p on that "<", so the end tag is scanned next.  plaintext has none.
 * A script may really end later ("<!--<script>" escapes): then the text
 * in between is scanned as markup, which can only raise the estimate.
 */

static void
cms_sanitize_scan_raw(cms_sanitize_scan_t *s, const unsigned char *name,
    size_t len)
{
    const unsigned char  *p, *after;

    if (cms_sanitize_name_eq(name, len, (const unsigned char *) "plaintext",
                             9))
    {
        s->p = s->end;
        return;
    }

    for (p = s->p; p < s->end; p++) {

        p = memchr(p, '<', (size_t) (s->end - p));
        if (p == NULL) {
            break;
        }

        after = p + 2 + len;

        if (after < s->end && p[1] == '/'
            && cms_sanitize_name_eq(p + 2, len, name, len)
            && (cms_sanitize_space(*after) || *after == '/' || *after == '>'))
        {
            s->p = p;
            return;
        }
    }

    s->p = s->end;
}


/*
 * After "<!": a comment ends at the first "-->" or "--!>" ("<!-->" and
 * "<!--->" are whole comments); anything else (doctype, CDATA outside SVG)
 * is a bogus comment ending at the first ">".
 */

static void
cms_sanitize_scan_comment(cms_sanitize_scan_t *s)
{
    const unsigned char  *p, *end;

    p = s->p;
    end = s->end;

    if (end - p < 2 || p[0] != '-' || p[1] != '-') {
        cms_sanitize_scan_skip_gt(s);
        return;
    }

    p += 2;

    if (p < end && *p == '>') {
        s->p = p + 1;
        return;
    }

    if (end - p >= 2 && p[0] == '-' && p[1] == '>') {
        s->p = p + 2;
        return;
    }

    for ( /* void */ ; end - p >= 3; p++) {

        if (p[0] != '-' || p[1] != '-') {
            continue;
        }

        if (p[2] == '>') {
            s->p = p + 3;
            return;
        }

        if (end - p >= 4 && p[2] == '!' && p[3] == '>') {
            s->p = p + 4;
            return;
        }
    }

    s->p = end;
}


static void
cms_sanitize_scan_skip_gt(cms_sanitize_scan_t *s)
{
    const unsigned char  *gt;

    gt = memchr(s->p, '>', (size_t) (s->end - s->p));
    s->p = gt ? gt + 1 : s->end;
}


/* 1 when name (any ASCII case) is in the lowercase, NULL-ended list */

static int
cms_sanitize_name_in(const unsigned char *name, size_t len,
    const char *const *list)
{
    for ( /* void */ ; *list; list++) {
        if (cms_sanitize_name_eq(name, len, (const unsigned char *) *list,
                                 strlen(*list)))
        {
            return 1;
        }
    }

    return 0;
}


static int
cms_sanitize_name_eq(const unsigned char *a, size_t alen,
    const unsigned char *b, size_t blen)
{
    size_t         i;
    unsigned char  x, y;

    if (alen != blen) {
        return 0;
    }

    for (i = 0; i < alen; i++) {
        x = a[i];
        y = b[i];

        if (x >= 'A' && x <= 'Z') {
            x |= 0x20;
        }

        if (y >= 'A' && y <= 'Z') {
            y |= 0x20;
        }

        if (x != y) {
            return 0;
        }
    }

    return 1;
}


/*
 * 1 for HTML's whitespace, and "\r", which the parser turns into "\n";
 * else 0.
 */

int
cms_sanitize_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}
