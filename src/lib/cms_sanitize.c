
/*
 * HTML sanitizer on libgumbo; see cms_sanitize.h for the policy.
 *
 * Three stages: a linear pre-scan bounds the parser's cost, Gumbo parses
 * with a budgeted allocator, and an iterative walk writes the allow-listed
 * part of the tree.
 */


#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <gumbo.h>

#include "cms_sanitize.h"


/* tree levels the walk follows; deeper trees are refused as too deep */
#define CMS_SANITIZE_WALK_MAX  (4 * CMS_SANITIZE_MAX_DEPTH)


/* tag flags (cms_sanitize_tag_flags) */
#define CMS_SAN_KEEP      0x001   /* written out */
#define CMS_SAN_DROP      0x002   /* dropped with its content */
#define CMS_SAN_VOID      0x004   /* no content, no end tag */
#define CMS_SAN_CLOSES_P  0x008   /* its start tag closes a p in scope */
#define CMS_SAN_LI_STOP   0x010   /* special: an li start tag stops here */
#define CMS_SAN_HEADING   0x020
#define CMS_SAN_SCOPE     0x040   /* bounds "has a p in button scope" */
#define CMS_SAN_MARKER    0x080   /* formatting marker: a may nest again */
#define CMS_SAN_TABLE     0x100   /* only table parts and spaces inside */


typedef union cms_sanitize_block_u  cms_sanitize_block_t;

/* header of every block handed to Gumbo; the union keeps malloc alignment */
union cms_sanitize_block_u {
    struct {
        cms_sanitize_block_t  *prev;
        cms_sanitize_block_t  *next;
        size_t                 size;
    } h;
    long double                align_ld;
    long long                  align_ll;
    void                      *align_p;
};


typedef struct {
    jmp_buf                    jmp;
    cms_sanitize_block_t       list;       /* sentinel of the block list */
    size_t                     used;
    int                        rc;
} cms_sanitize_heap_t;


typedef struct {
    const unsigned char       *name;
    size_t                     len;
} cms_sanitize_name_t;


typedef struct {
    const unsigned char       *p;
    const unsigned char       *end;
    unsigned                   depth;
    unsigned                   max_depth;
    unsigned                   foreign;    /* svg and math entries */
    unsigned                   select;     /* select entries */
    cms_sanitize_name_t        stack[CMS_SANITIZE_MAX_DEPTH];
} cms_sanitize_scan_t;


typedef struct {
    GumboNode                 *node;
    unsigned                   next;       /* next child to visit */
    int                        tag;        /* GumboTag written, or -1 */
} cms_sanitize_frame_t;


typedef struct {
    char                      *pos;
    char                      *end;
    int                        rc;
    unsigned                   depth;      /* frames with a written tag */
    unsigned                   nframes;
    cms_sanitize_frame_t       frames[CMS_SANITIZE_WALK_MAX];
} cms_sanitize_walk_t;


/* pre-scan */
static int cms_sanitize_scan_tag(cms_sanitize_scan_t *s, int end_tag);
static int cms_sanitize_scan_attrs(cms_sanitize_scan_t *s);
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
static int cms_sanitize_space(unsigned char c);

/* parsing */
static GumboOutput *cms_sanitize_parse(cms_sanitize_heap_t *heap,
    const GumboOptions *options, const char *html, size_t len);
static void *cms_sanitize_alloc(void *userdata, size_t size);
static void cms_sanitize_dealloc(void *userdata, void *p);
static void cms_sanitize_heap_free(cms_sanitize_heap_t *heap);

/* walk */
static void cms_sanitize_walk(cms_sanitize_walk_t *w, GumboNode *root);
static void cms_sanitize_push(cms_sanitize_walk_t *w, GumboNode *node,
    int tag);
static void cms_sanitize_element(cms_sanitize_walk_t *w, GumboNode *node);
static void cms_sanitize_text(cms_sanitize_walk_t *w, const char *text);
static unsigned cms_sanitize_tag_flags(GumboTag tag);
static int cms_sanitize_fits(cms_sanitize_walk_t *w, GumboTag tag,
    unsigned flags);
static int cms_sanitize_top(cms_sanitize_walk_t *w);
static int cms_sanitize_open_in(cms_sanitize_walk_t *w, GumboTag tag,
    unsigned stop);

/* writing */
static int cms_sanitize_start_tag(cms_sanitize_walk_t *w, GumboTag tag,
    const GumboVector *attrs);
static const char *cms_sanitize_attr(GumboTag tag, const GumboAttribute *a);
static const char *cms_sanitize_inert(const char *v);
static int cms_sanitize_url_ok(const char *v, int image);
static int cms_sanitize_url_scheme(const char *v, int image);
static int cms_sanitize_has_scheme(const char *v, const char *scheme);
static size_t cms_sanitize_url_skip(const unsigned char *p);
static int cms_sanitize_digits(const char *v, size_t max, int sign);
static int cms_sanitize_language(const char *v);
static void cms_sanitize_put(cms_sanitize_walk_t *w, const char *s,
    size_t n);
static void cms_sanitize_put_escaped(cms_sanitize_walk_t *w, const char *s,
    int attr);
static const char *cms_sanitize_replacement(const unsigned char *p, int attr,
    size_t *n);


/* U+FFFD REPLACEMENT CHARACTER */
static const char  cms_sanitize_fffd[] = "\xef\xbf\xbd";

/* void elements of HTML: no end tag, never nest (outside SVG and MathML) */
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

static const char *const  cms_sanitize_foreign_names[] = {
    "svg", "math", NULL
};

static const char *const  cms_sanitize_select_names[] = {
    "select", NULL
};


size_t
cms_sanitize_out_max(size_t len)
{
    if (len > CMS_SANITIZE_MAX_INPUT) {
        return 0;
    }

    return CMS_SANITIZE_OUT_FACTOR * len + 64;
}


int
cms_sanitize(const char *html, size_t len, char *out, size_t out_size,
    size_t *out_len)
{
    int                   rc;
    size_t                limit;
    GumboOutput          *output;
    GumboOptions          options;
    cms_sanitize_heap_t   heap;
    cms_sanitize_walk_t   w;

    *out_len = 0;

    if (len > CMS_SANITIZE_MAX_INPUT) {
        return CMS_SANITIZE_TOO_LARGE;
    }

    if (len == 0) {
        return CMS_SANITIZE_OK;
    }

    rc = cms_sanitize_scan(html, len, CMS_SANITIZE_MAX_DEPTH);
    if (rc != CMS_SANITIZE_OK) {
        return rc;
    }

    heap.list.h.prev = &heap.list;
    heap.list.h.next = &heap.list;
    heap.used = 0;
    heap.rc = CMS_SANITIZE_OK;

    options = kGumboDefaultOptions;
    options.allocator = cms_sanitize_alloc;
    options.deallocator = cms_sanitize_dealloc;
    options.userdata = &heap;
    options.max_errors = 0;
    options.fragment_context = GUMBO_TAG_BODY;
    options.fragment_namespace = GUMBO_NAMESPACE_HTML;

    output = cms_sanitize_parse(&heap, &options, html, len);

    if (output == NULL) {
        cms_sanitize_heap_free(&heap);
        return heap.rc != CMS_SANITIZE_OK ? heap.rc : CMS_SANITIZE_ERROR;
    }

    limit = cms_sanitize_out_max(len);
    if (limit > out_size) {
        limit = out_size;
    }

    w.pos = out;
    w.end = out + limit;
    w.rc = CMS_SANITIZE_OK;
    w.depth = 0;
    w.nframes = 0;

    cms_sanitize_walk(&w, output->root);

    gumbo_destroy_output(&options, output);
    cms_sanitize_heap_free(&heap);

    if (w.rc == CMS_SANITIZE_OK) {
        *out_len = (size_t) (w.pos - out);
    }

    return w.rc;
}


/* --- pre-scan ----------------------------------------------------------- */


int
cms_sanitize_scan(const char *html, size_t len, unsigned max_depth)
{
    int                   rc;
    unsigned char         c;
    const unsigned char  *lt;
    cms_sanitize_scan_t   s;

    s.p = (const unsigned char *) html;
    s.end = s.p + len;
    s.depth = 0;
    s.foreign = 0;
    s.select = 0;
    s.max_depth = max_depth < CMS_SANITIZE_MAX_DEPTH
                  ? max_depth : CMS_SANITIZE_MAX_DEPTH;

    while (s.p < s.end) {

        lt = memchr(s.p, '<', (size_t) (s.end - s.p));
        if (lt == NULL || lt + 1 == s.end) {
            break;
        }

        s.p = lt + 2;
        c = lt[1];
        rc = CMS_SANITIZE_OK;

        if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
            s.p = lt + 1;
            rc = cms_sanitize_scan_tag(&s, 0);

        } else if (c == '/') {
            c = s.p < s.end ? *s.p : 0;

            if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
                rc = cms_sanitize_scan_tag(&s, 1);

            } else if (c != '>') {
                cms_sanitize_scan_skip_gt(&s);     /* bogus comment */
            }

        } else if (c == '!') {
            cms_sanitize_scan_comment(&s);

        } else if (c == '?') {
            cms_sanitize_scan_skip_gt(&s);

        } else {
            s.p = lt + 1;                          /* a "<" in text */
        }

        if (rc != CMS_SANITIZE_OK) {
            return rc;
        }
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
    int                   rc;
    size_t                len;
    const unsigned char  *name;

    name = s->p;

    while (s->p < s->end && !cms_sanitize_space(*s->p) && *s->p != '/'
           && *s->p != '>')
    {
        s->p++;
    }

    len = (size_t) (s->p - name);

    rc = cms_sanitize_scan_attrs(s);
    if (rc != 1) {
        return rc;
    }

    if (end_tag) {
        cms_sanitize_scan_close(s, name, len);
        return CMS_SANITIZE_OK;
    }

    return cms_sanitize_scan_open(s, name, len);
}


/*
 * Attributes up to and including the ">" closing the tag, following the
 * tokenizer's attribute states (so a ">" or "</b>" in a quoted value is
 * not markup).  Returns 1 after the ">", CMS_SANITIZE_OK at the end of
 * input, CMS_SANITIZE_TOO_LARGE over CMS_SANITIZE_MAX_ATTRS.
 */

static int
cms_sanitize_scan_attrs(cms_sanitize_scan_t *s)
{
    unsigned              n;
    const unsigned char  *p, *end, *q;

    p = s->p;
    end = s->end;
    n = 0;

    for ( ;; ) {

        while (p < end && (cms_sanitize_space(*p) || *p == '/')) {
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
            continue;
        }

        p++;

        while (p < end && cms_sanitize_space(*p)) {
            p++;
        }

        if (p < end && (*p == '"' || *p == '\'')) {
            q = memchr(p + 1, *p, (size_t) (end - p - 1));
            p = q ? q + 1 : end;
            continue;
        }

        while (p < end && !cms_sanitize_space(*p) && *p != '>') {
            p++;
        }
    }
}


static int
cms_sanitize_scan_open(cms_sanitize_scan_t *s, const unsigned char *name,
    size_t len)
{
    if (s->foreign == 0
        && cms_sanitize_name_in(name, len, cms_sanitize_void_names))
    {
        return CMS_SANITIZE_OK;
    }

    if (s->foreign == 0) {
        cms_sanitize_scan_siblings(s, name, len);
    }

    if (s->depth >= s->max_depth) {
        return CMS_SANITIZE_TOO_DEEP;
    }

    s->stack[s->depth].name = name;
    s->stack[s->depth].len = len;
    s->depth++;

    s->foreign += cms_sanitize_name_in(name, len, cms_sanitize_foreign_names);
    s->select += cms_sanitize_name_in(name, len, cms_sanitize_select_names);

    /* in SVG and MathML "script" or "style" are ordinary elements */
    if (s->foreign == 0
        && cms_sanitize_name_in(name, len, s->select
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
 * cell).  None of these names is svg, math or select, so the counters
 * stay as they are.
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

    s->foreign -= cms_sanitize_name_in(name, len, cms_sanitize_foreign_names);
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


/* HTML's whitespace; "\r" too, which the parser turns into "\n" */

static int
cms_sanitize_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}


/* --- parsing ------------------------------------------------------------ */


/*
 * Gumbo cannot fail an allocation, so the allocator leaves the parse with
 * longjmp() when the budget is spent or malloc() fails; every block is on
 * heap->list and cms_sanitize_heap_free() releases the abandoned tree.
 * setjmp() lives here, in a function whose locals never change after it.
 */

static GumboOutput *
cms_sanitize_parse(cms_sanitize_heap_t *heap, const GumboOptions *options,
    const char *html, size_t len)
{
    if (setjmp(heap->jmp) != 0) {
        return NULL;
    }

    return gumbo_parse_with_options(options, html, len);
}


static void *
cms_sanitize_alloc(void *userdata, size_t size)
{
    size_t                 need;
    cms_sanitize_heap_t   *heap;
    cms_sanitize_block_t  *b;

    heap = userdata;
    need = sizeof(cms_sanitize_block_t) + size;

    /* used never exceeds the budget, so the subtraction cannot wrap */
    if (need < size || need > (size_t) CMS_SANITIZE_MAX_MEMORY - heap->used) {
        heap->rc = CMS_SANITIZE_TOO_LARGE;
        longjmp(heap->jmp, 1);
    }

    b = malloc(need);
    if (b == NULL) {
        heap->rc = CMS_SANITIZE_ERROR;
        longjmp(heap->jmp, 1);
    }

    b->h.size = need;
    b->h.prev = &heap->list;
    b->h.next = heap->list.h.next;
    heap->list.h.next->h.prev = b;
    heap->list.h.next = b;
    heap->used += b->h.size;

    return b + 1;
}


static void
cms_sanitize_dealloc(void *userdata, void *p)
{
    cms_sanitize_heap_t   *heap;
    cms_sanitize_block_t  *b;

    if (p == NULL) {
        return;
    }

    heap = userdata;
    b = (cms_sanitize_block_t *) p - 1;

    b->h.prev->h.next = b->h.next;
    b->h.next->h.prev = b->h.prev;
    heap->used -= b->h.size;

    free(b);
}


/* frees what Gumbo still holds: all of it after a longjmp(), else nothing */

static void
cms_sanitize_heap_free(cms_sanitize_heap_t *heap)
{
    cms_sanitize_block_t  *b, *next;

    for (b = heap->list.h.next; b != &heap->list; b = next) {
        next = b->h.next;
        free(b);
    }

    heap->list.h.prev = &heap->list;
    heap->list.h.next = &heap->list;
    heap->used = 0;
}


/* --- walk --------------------------------------------------------------- */


/*
 * Depth-first over the tree with an explicit stack of frames; a frame's
 * end tag is written when its last child is done.
 */

static void
cms_sanitize_walk(cms_sanitize_walk_t *w, GumboNode *root)
{
    const char            *name;
    GumboNode             *child;
    const GumboVector     *children;
    cms_sanitize_frame_t  *f;

    cms_sanitize_push(w, root, -1);

    while (w->nframes > 0 && w->rc == CMS_SANITIZE_OK) {

        f = &w->frames[w->nframes - 1];
        children = &f->node->v.element.children;

        if (f->next == children->length) {

            if (f->tag >= 0) {
                cms_sanitize_put(w, "</", 2);
                name = gumbo_normalized_tagname((GumboTag) f->tag);
                cms_sanitize_put(w, name, strlen(name));
                cms_sanitize_put(w, ">", 1);
                w->depth--;
            }

            w->nframes--;
            continue;
        }

        child = children->data[f->next++];

        switch (child->type) {

        case GUMBO_NODE_TEXT:
        case GUMBO_NODE_WHITESPACE:
        case GUMBO_NODE_CDATA:
            cms_sanitize_text(w, child->v.text.text);
            break;

        case GUMBO_NODE_ELEMENT:
            cms_sanitize_element(w, child);
            break;

        default:                    /* comment, template */
            break;
        }
    }
}


static void
cms_sanitize_push(cms_sanitize_walk_t *w, GumboNode *node, int tag)
{
    if (w->nframes == CMS_SANITIZE_WALK_MAX) {
        w->rc = CMS_SANITIZE_TOO_DEEP;
        return;
    }

    w->frames[w->nframes].node = node;
    w->frames[w->nframes].next = 0;
    w->frames[w->nframes].tag = tag;
    w->nframes++;
}


/*
 * An element is written when allowed and when re-parsing the output would
 * put it back in the same place; otherwise it is unwrapped (its children
 * are visited in its place) or, for dropped kinds, skipped whole.
 */

static void
cms_sanitize_element(cms_sanitize_walk_t *w, GumboNode *node)
{
    int            tag;
    unsigned       flags;
    GumboElement  *el;

    el = &node->v.element;

    if (el->tag_namespace != GUMBO_NAMESPACE_HTML) {
        return;
    }

    flags = cms_sanitize_tag_flags(el->tag);

    if (flags & CMS_SAN_DROP) {
        return;
    }

    tag = -1;

    if ((flags & CMS_SAN_KEEP) && cms_sanitize_fits(w, el->tag, flags)) {

        if (!cms_sanitize_start_tag(w, el->tag, &el->attributes)
            || (flags & CMS_SAN_VOID))
        {
            return;
        }

        if (el->tag == GUMBO_TAG_PRE) {
            /* the parser drops one newline after <pre>: give it this one */
            cms_sanitize_put(w, "\n", 1);
        }

        if (++w->depth > CMS_SANITIZE_MAX_DEPTH) {
            w->rc = CMS_SANITIZE_TOO_DEEP;
            return;
        }

        tag = (int) el->tag;
    }

    if (tag >= 0 || el->children.length > 0) {
        cms_sanitize_push(w, node, tag);
    }
}


/*
 * Directly in table, tbody, thead, tfoot or tr the parser moves any text
 * but whitespace out of the table ("foster parenting"): drop it there.
 */

static void
cms_sanitize_text(cms_sanitize_walk_t *w, const char *text)
{
    const char  *p;
    int          top;

    top = cms_sanitize_top(w);

    if (top >= 0 && (cms_sanitize_tag_flags((GumboTag) top) & CMS_SAN_TABLE)) {

        for (p = text; *p; p++) {
            if (!cms_sanitize_space((unsigned char) *p)) {
                return;
            }
        }
    }

    cms_sanitize_put_escaped(w, text, 0);
}


/* the policy table: a flat switch over the tags it names */

static unsigned
cms_sanitize_tag_flags(GumboTag tag)
{
    switch (tag) {

    case GUMBO_TAG_A:
    case GUMBO_TAG_B:
    case GUMBO_TAG_STRONG:
    case GUMBO_TAG_I:
    case GUMBO_TAG_EM:
    case GUMBO_TAG_U:
    case GUMBO_TAG_S:
    case GUMBO_TAG_SUB:
    case GUMBO_TAG_SUP:
    case GUMBO_TAG_CODE:
        return CMS_SAN_KEEP;

    case GUMBO_TAG_BR:
    case GUMBO_TAG_IMG:
        return CMS_SAN_KEEP | CMS_SAN_VOID;

    case GUMBO_TAG_HR:
        return CMS_SAN_KEEP | CMS_SAN_VOID | CMS_SAN_CLOSES_P;

    case GUMBO_TAG_P:
    case GUMBO_TAG_DIV:
        return CMS_SAN_KEEP | CMS_SAN_CLOSES_P;

    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
        return CMS_SAN_KEEP | CMS_SAN_CLOSES_P | CMS_SAN_LI_STOP
               | CMS_SAN_HEADING;

    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_LI:
        return CMS_SAN_KEEP | CMS_SAN_CLOSES_P | CMS_SAN_LI_STOP;

    case GUMBO_TAG_TABLE:
        return CMS_SAN_KEEP | CMS_SAN_CLOSES_P | CMS_SAN_LI_STOP
               | CMS_SAN_SCOPE | CMS_SAN_TABLE;

    case GUMBO_TAG_THEAD:
    case GUMBO_TAG_TBODY:
    case GUMBO_TAG_TFOOT:
    case GUMBO_TAG_TR:
        return CMS_SAN_KEEP | CMS_SAN_LI_STOP | CMS_SAN_TABLE;

    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_TD:
    case GUMBO_TAG_TH:
        return CMS_SAN_KEEP | CMS_SAN_LI_STOP | CMS_SAN_SCOPE
               | CMS_SAN_MARKER;

    /* scoping elements (applet, marquee, object) must go whole: unwrapped,
     * they would leave a p inside a p, an li inside an li */
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_EMBED:
    case GUMBO_TAG_APPLET:
    case GUMBO_TAG_MARQUEE:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_INPUT:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_OPTION:
    case GUMBO_TAG_OPTGROUP:
    case GUMBO_TAG_DATALIST:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_KEYGEN:
    case GUMBO_TAG_BASE:
    case GUMBO_TAG_LINK:
    case GUMBO_TAG_META:
    case GUMBO_TAG_TITLE:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_FRAME:
    case GUMBO_TAG_FRAMESET:
    case GUMBO_TAG_NOEMBED:
    case GUMBO_TAG_NOFRAMES:
    case GUMBO_TAG_XMP:
    case GUMBO_TAG_PLAINTEXT:
    case GUMBO_TAG_COLGROUP:
    case GUMBO_TAG_COL:
    case GUMBO_TAG_PARAM:
    case GUMBO_TAG_SOURCE:
    case GUMBO_TAG_TRACK:
    case GUMBO_TAG_MENUITEM:
        return CMS_SAN_DROP;

    default:
        return 0;
    }
}


/*
 * 1 when a start tag for tag, written now, would be re-parsed as a child
 * of the element currently open in the output: the parser's own start-tag
 * rules for the allowed elements, checked against the output stack.
 */

static int
cms_sanitize_fits(cms_sanitize_walk_t *w, GumboTag tag, unsigned flags)
{
    int  top;

    top = cms_sanitize_top(w);

    switch (tag) {

    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_THEAD:
    case GUMBO_TAG_TBODY:
    case GUMBO_TAG_TFOOT:
        return top == GUMBO_TAG_TABLE;

    case GUMBO_TAG_TR:
        return top == GUMBO_TAG_THEAD || top == GUMBO_TAG_TBODY
               || top == GUMBO_TAG_TFOOT;

    case GUMBO_TAG_TD:
    case GUMBO_TAG_TH:
        return top == GUMBO_TAG_TR;

    default:
        break;
    }

    if (top >= 0 && (cms_sanitize_tag_flags((GumboTag) top) & CMS_SAN_TABLE)) {
        return 0;
    }

    if ((flags & CMS_SAN_CLOSES_P)
        && cms_sanitize_open_in(w, GUMBO_TAG_P, CMS_SAN_SCOPE))
    {
        return 0;
    }

    if ((flags & CMS_SAN_HEADING) && top >= 0
        && (cms_sanitize_tag_flags((GumboTag) top) & CMS_SAN_HEADING))
    {
        return 0;
    }

    if (tag == GUMBO_TAG_LI
        && cms_sanitize_open_in(w, GUMBO_TAG_LI, CMS_SAN_LI_STOP))
    {
        return 0;
    }

    if (tag == GUMBO_TAG_A
        && cms_sanitize_open_in(w, GUMBO_TAG_A, CMS_SAN_MARKER))
    {
        return 0;
    }

    return 1;
}


/* the innermost element written and still open, or -1 */

static int
cms_sanitize_top(cms_sanitize_walk_t *w)
{
    unsigned  i;

    for (i = w->nframes; i > 0; i--) {
        if (w->frames[i - 1].tag >= 0) {
            return w->frames[i - 1].tag;
        }
    }

    return -1;
}


/*
 * 1 when tag is open in the output above the first open element having
 * one of the stop flags.
 */

static int
cms_sanitize_open_in(cms_sanitize_walk_t *w, GumboTag tag, unsigned stop)
{
    int       t;
    unsigned  i;

    for (i = w->nframes; i > 0; i--) {
        t = w->frames[i - 1].tag;

        if (t < 0) {
            continue;
        }

        if (t == (int) tag) {
            return 1;
        }

        if (cms_sanitize_tag_flags((GumboTag) t) & stop) {
            return 0;
        }
    }

    return 0;
}


/* --- writing ------------------------------------------------------------ */


/*
 * Writes the start tag with its allowed attributes.  Returns 0, writing
 * nothing, for an img without an acceptable src.
 */

static int
cms_sanitize_start_tag(cms_sanitize_walk_t *w, GumboTag tag,
    const GumboVector *attrs)
{
    unsigned         i;
    const char      *name, *v;
    GumboAttribute  *a;

    if (tag == GUMBO_TAG_IMG) {
        a = gumbo_get_attribute(attrs, "src");

        if (a == NULL || !cms_sanitize_url_ok(a->value, 1)) {
            return 0;
        }
    }

    name = gumbo_normalized_tagname(tag);

    cms_sanitize_put(w, "<", 1);
    cms_sanitize_put(w, name, strlen(name));

    for (i = 0; i < attrs->length; i++) {
        a = attrs->data[i];

        v = cms_sanitize_attr(tag, a);
        if (v == NULL) {
            continue;
        }

        cms_sanitize_put(w, " ", 1);
        cms_sanitize_put(w, a->name, strlen(a->name));
        cms_sanitize_put(w, "=\"", 2);
        cms_sanitize_put_escaped(w, v, 1);
        cms_sanitize_put(w, "\"", 1);
    }

    if (tag == GUMBO_TAG_A) {
        a = gumbo_get_attribute(attrs, "href");

        if (a != NULL && cms_sanitize_url_ok(a->value, 0)) {
            cms_sanitize_put(w, " rel=\"noopener noreferrer\"", 26);
        }
    }

    cms_sanitize_put(w, ">", 1);

    return 1;
}


/* the value to write for attribute a of tag, or NULL to drop it */

static const char *
cms_sanitize_attr(GumboTag tag, const GumboAttribute *a)
{
    const char  *n, *v;

    n = a->name;
    v = a->value;

    if (a->attr_namespace != GUMBO_ATTR_NAMESPACE_NONE) {
        return NULL;
    }

    switch (tag) {

    case GUMBO_TAG_A:
        if (strcmp(n, "href") == 0) {
            return cms_sanitize_url_ok(v, 0) ? v : NULL;
        }

        if (strcmp(n, "target") == 0) {
            return cms_sanitize_name_eq((const unsigned char *) v, strlen(v),
                                        (const unsigned char *) "_blank", 6)
                   ? "_blank" : NULL;
        }

        return strcmp(n, "title") == 0 ? cms_sanitize_inert(v) : NULL;

    case GUMBO_TAG_IMG:
        if (strcmp(n, "src") == 0) {
            return v;                   /* checked by the caller */
        }

        if (strcmp(n, "width") == 0 || strcmp(n, "height") == 0) {
            return cms_sanitize_digits(v, 5, 0) ? v : NULL;
        }

        return (strcmp(n, "alt") == 0 || strcmp(n, "title") == 0)
               ? cms_sanitize_inert(v) : NULL;

    case GUMBO_TAG_TD:
    case GUMBO_TAG_TH:
        if (strcmp(n, "colspan") == 0 || strcmp(n, "rowspan") == 0) {
            return cms_sanitize_digits(v, 4, 0) ? v : NULL;
        }

        return NULL;

    case GUMBO_TAG_OL:
        if (strcmp(n, "start") == 0) {
            return cms_sanitize_digits(v, 9, 1) ? v : NULL;
        }

        return NULL;

    case GUMBO_TAG_CODE:
    case GUMBO_TAG_PRE:
        if (strcmp(n, "class") == 0) {
            return cms_sanitize_language(v) ? v : NULL;
        }

        return NULL;

    default:
        return NULL;
    }
}


/*
 * A text attribute (title, alt) as it is, or NULL when it spells a script
 * URL: such a value is inert here, but client code that makes links out
 * of titles would not be, and no attribute then ever carries one.
 */

static const char *
cms_sanitize_inert(const char *v)
{
    if (cms_sanitize_has_scheme(v, "javascript:")
        || cms_sanitize_has_scheme(v, "vbscript:")
        || cms_sanitize_has_scheme(v, "data:"))
    {
        return NULL;
    }

    return v;
}


/*
 * Link (image == 0) or image source (image == 1) check on the decoded
 * value, ignoring spaces and controls anywhere (browsers drop tabs and
 * newlines inside a URL, and leading controls).  Besides the scheme rule,
 * a value naming javascript:, vbscript: or data: anywhere (as in
 * "/go?to=javascript:...") is refused, for redirectors that pass it on.
 */

static int
cms_sanitize_url_ok(const char *v, int image)
{
    return cms_sanitize_url_scheme(v, image)
           && !cms_sanitize_has_scheme(v, "javascript:")
           && !cms_sanitize_has_scheme(v, "vbscript:")
           && !cms_sanitize_has_scheme(v, "data:");
}


/*
 * The scheme is what precedes the first ":" when no "/", "?" or "#" comes
 * before it; without one the URL is relative (links only).
 */

static int
cms_sanitize_url_scheme(const char *v, int image)
{
    size_t                n, k;
    unsigned char         c;
    const unsigned char  *p;
    char                  scheme[8];

    n = 0;

    for (p = (const unsigned char *) v; *p; p++) {

        k = cms_sanitize_url_skip(p);
        if (k > 0) {
            p += k - 1;
            continue;
        }

        c = *p;

        if (c == ':') {
            break;
        }

        if (c == '/' || c == '?' || c == '#') {
            return !image;                          /* relative */
        }

        if (n < sizeof(scheme)) {
            scheme[n] = (char) ((c >= 'A' && c <= 'Z') ? (c | 0x20) : c);
        }

        n++;
    }

    if (*p == '\0') {
        return !image;                              /* relative */
    }

    if (n >= sizeof(scheme)) {
        return 0;                                   /* longer than ours */
    }

    scheme[n] = '\0';

    if (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0) {
        return 1;
    }

    return !image && strcmp(scheme, "mailto") == 0;
}


/* 1 when the lowercase scheme occurs in v, any case, ignoring the same */

static int
cms_sanitize_has_scheme(const char *v, const char *scheme)
{
    size_t                k;
    unsigned char         c;
    const char           *s;
    const unsigned char  *p, *q;

    for (q = (const unsigned char *) v; *q; q++) {

        for (s = scheme, p = q; *s && *p; p++) {

            k = cms_sanitize_url_skip(p);
            if (k > 0) {
                p += k - 1;
                continue;
            }

            c = *p;

            if (((c >= 'A' && c <= 'Z') ? (c | 0x20) : c) != *s) {
                break;
            }

            s++;
        }

        if (*s == '\0') {
            return 1;
        }
    }

    return 0;
}


/*
 * Length of a character at p a URL check ignores, else 0: space and
 * controls, and all the serializer writes as U+FFFD or a newline, and
 * U+FFFD itself, so that the check gives the same answer on the value
 * written as on the value read (which keeps the output idempotent).
 * Ignoring more can only make the check stricter: it never removes a
 * ":", "/", "?" or "#".
 */

static size_t
cms_sanitize_url_skip(const unsigned char *p)
{
    size_t       n;
    const char  *rep;

    if (*p <= 0x20 || *p == 0x7f) {
        return 1;
    }

    if (p[0] == 0xef && p[1] == 0xbf && p[2] == 0xbd) {
        return 3;
    }

    rep = cms_sanitize_replacement(p, 1, &n);

    return rep == cms_sanitize_fffd ? n : 0;
}


/* 1 for 1 to max ASCII digits, after an optional "-" when sign is set */

static int
cms_sanitize_digits(const char *v, size_t max, int sign)
{
    size_t  n;

    if (sign && *v == '-') {
        v++;
    }

    for (n = 0; v[n] >= '0' && v[n] <= '9'; n++) {
        /* void */
    }

    return n > 0 && n <= max && v[n] == '\0';
}


/* 1 for a single "language-[a-z0-9-]+" class, 64 bytes at most */

static int
cms_sanitize_language(const char *v)
{
    size_t  n;

    if (strncmp(v, "language-", 9) != 0) {
        return 0;
    }

    for (n = 9; (v[n] >= 'a' && v[n] <= 'z') || (v[n] >= '0' && v[n] <= '9')
                || v[n] == '-'; n++)
    {
        /* void */
    }

    return n > 9 && n <= 64 && v[n] == '\0';
}


/* appends n bytes, or marks the output as too large when they do not fit */

static void
cms_sanitize_put(cms_sanitize_walk_t *w, const char *s, size_t n)
{
    if (w->rc != CMS_SANITIZE_OK) {
        return;
    }

    if (n > (size_t) (w->end - w->pos)) {
        w->rc = CMS_SANITIZE_TOO_LARGE;
        return;
    }

    memcpy(w->pos, s, n);
    w->pos += n;
}


/*
 * Text or attribute value with &, <, > (and " in attributes) escaped.
 * Characters the parser would not read back as they are become what it
 * would read: "\r" a newline; controls, C1 controls and noncharacters
 * U+FFFD (they can only come from character references such as "&#1;").
 */

static void
cms_sanitize_put_escaped(cms_sanitize_walk_t *w, const char *s, int attr)
{
    size_t                n;
    const char           *rep;
    const unsigned char  *p, *run;

    p = (const unsigned char *) s;
    run = p;

    while (*p) {
        rep = cms_sanitize_replacement(p, attr, &n);

        if (rep != NULL) {
            cms_sanitize_put(w, (const char *) run, (size_t) (p - run));
            cms_sanitize_put(w, rep, strlen(rep));
            run = p + n;
        }

        p += n;
    }

    cms_sanitize_put(w, (const char *) run, (size_t) (p - run));
}


/*
 * What to write for the character at p (its length goes to *n), or NULL
 * to write it as it is.  p is NUL-terminated, so each continuation byte
 * is checked before the next one is read.
 */

static const char *
cms_sanitize_replacement(const unsigned char *p, int attr, size_t *n)
{
    size_t    i, len;
    unsigned  cp, min;

    *n = 1;

    switch (*p) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return attr ? "&quot;" : NULL;
    case '\r':
        return "\n";
    case '\t':
    case '\n':
    case '\f':
        return NULL;
    default:
        break;
    }

    if (*p < 0x80) {
        return (*p < 0x20 || *p == 0x7f) ? cms_sanitize_fffd : NULL;
    }

    if (*p >= 0xc2 && *p <= 0xdf) {
        len = 2;
        cp = *p & 0x1f;
        min = 0x80;

    } else if (*p >= 0xe0 && *p <= 0xef) {
        len = 3;
        cp = *p & 0x0f;
        min = 0x800;

    } else if (*p >= 0xf0 && *p <= 0xf4) {
        len = 4;
        cp = *p & 0x07;
        min = 0x10000;

    } else {
        return cms_sanitize_fffd;
    }

    for (i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return cms_sanitize_fffd;
        }

        cp = (cp << 6) | (p[i] & 0x3f);
    }

    *n = len;

    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)
        || cp <= 0x9f || (cp >= 0xfdd0 && cp <= 0xfdef)
        || (cp & 0xfffe) == 0xfffe)
    {
        return cms_sanitize_fffd;
    }

    return NULL;
}
