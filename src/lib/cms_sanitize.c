
/*
 * HTML sanitizer on libgumbo; see cms_sanitize.h for the policy.
 *
 * Three stages: a linear pre-scan bounds the parser's cost and renames
 * foreign content (cms_sanitize_scan.c), Gumbo parses with a budgeted
 * allocator, and an iterative walk writes the allow-listed part of the
 * tree (here; the tags, attributes and text in cms_sanitize_write.c).
 */


#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_sanitize.h"
#include "cms_sanitize_int.h"


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


/* parsing */
static int cms_sanitize_tree(cms_sanitize_walk_t *w);
static void cms_sanitize_options(GumboOptions *options,
    cms_sanitize_heap_t *heap);
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
static int cms_sanitize_renamed(cms_sanitize_walk_t *w,
    const GumboElement *el);
static void cms_sanitize_text(cms_sanitize_walk_t *w, const char *text);
static unsigned cms_sanitize_tag_flags(GumboTag tag);
static int cms_sanitize_fits(cms_sanitize_walk_t *w, GumboTag tag,
    unsigned flags);
static int cms_sanitize_table_fits(GumboTag tag, int top);
static int cms_sanitize_top(cms_sanitize_walk_t *w);
static int cms_sanitize_open_in(cms_sanitize_walk_t *w, GumboTag tag,
    unsigned stop);


/* the combinations the policy table uses */
#define CMS_SAN_EMPTY      (CMS_SAN_KEEP | CMS_SAN_VOID)
#define CMS_SAN_BLOCK      (CMS_SAN_KEEP | CMS_SAN_CLOSES_P | CMS_SAN_LI_STOP)
#define CMS_SAN_ROWS       (CMS_SAN_KEEP | CMS_SAN_LI_STOP | CMS_SAN_TABLE)
#define CMS_SAN_CELL                                                          \
    (CMS_SAN_KEEP | CMS_SAN_LI_STOP | CMS_SAN_SCOPE | CMS_SAN_MARKER)


/*
 * The policy: the allow-list (CMS_SAN_KEEP, with what the parser's rules
 * need to know about each tag) and the drop-list (CMS_SAN_DROP: gone
 * with their content); every other tag is unwrapped.  Scoping elements
 * (applet, marquee, object) must go whole: unwrapped, they would leave a
 * p inside a p, an li inside an li.
 */

static const unsigned  cms_sanitize_policy[GUMBO_TAG_LAST] = {
    [GUMBO_TAG_A] = CMS_SAN_KEEP,
    [GUMBO_TAG_B] = CMS_SAN_KEEP,
    [GUMBO_TAG_STRONG] = CMS_SAN_KEEP,
    [GUMBO_TAG_I] = CMS_SAN_KEEP,
    [GUMBO_TAG_EM] = CMS_SAN_KEEP,
    [GUMBO_TAG_U] = CMS_SAN_KEEP,
    [GUMBO_TAG_S] = CMS_SAN_KEEP,
    [GUMBO_TAG_SUB] = CMS_SAN_KEEP,
    [GUMBO_TAG_SUP] = CMS_SAN_KEEP,
    [GUMBO_TAG_CODE] = CMS_SAN_KEEP,

    [GUMBO_TAG_BR] = CMS_SAN_EMPTY,
    [GUMBO_TAG_IMG] = CMS_SAN_EMPTY,
    [GUMBO_TAG_HR] = CMS_SAN_EMPTY | CMS_SAN_CLOSES_P,

    [GUMBO_TAG_P] = CMS_SAN_KEEP | CMS_SAN_CLOSES_P,
    [GUMBO_TAG_DIV] = CMS_SAN_KEEP | CMS_SAN_CLOSES_P,

    [GUMBO_TAG_H1] = CMS_SAN_BLOCK | CMS_SAN_HEADING,
    [GUMBO_TAG_H2] = CMS_SAN_BLOCK | CMS_SAN_HEADING,
    [GUMBO_TAG_H3] = CMS_SAN_BLOCK | CMS_SAN_HEADING,
    [GUMBO_TAG_H4] = CMS_SAN_BLOCK | CMS_SAN_HEADING,
    [GUMBO_TAG_H5] = CMS_SAN_BLOCK | CMS_SAN_HEADING,
    [GUMBO_TAG_H6] = CMS_SAN_BLOCK | CMS_SAN_HEADING,

    [GUMBO_TAG_BLOCKQUOTE] = CMS_SAN_BLOCK,
    [GUMBO_TAG_FIGURE] = CMS_SAN_BLOCK,
    [GUMBO_TAG_FIGCAPTION] = CMS_SAN_BLOCK,
    [GUMBO_TAG_PRE] = CMS_SAN_BLOCK,
    [GUMBO_TAG_UL] = CMS_SAN_BLOCK,
    [GUMBO_TAG_OL] = CMS_SAN_BLOCK,
    [GUMBO_TAG_LI] = CMS_SAN_BLOCK,

    [GUMBO_TAG_TABLE] = CMS_SAN_BLOCK | CMS_SAN_SCOPE | CMS_SAN_TABLE,
    [GUMBO_TAG_THEAD] = CMS_SAN_ROWS,
    [GUMBO_TAG_TBODY] = CMS_SAN_ROWS,
    [GUMBO_TAG_TFOOT] = CMS_SAN_ROWS,
    [GUMBO_TAG_TR] = CMS_SAN_ROWS,
    [GUMBO_TAG_CAPTION] = CMS_SAN_CELL,
    [GUMBO_TAG_TD] = CMS_SAN_CELL,
    [GUMBO_TAG_TH] = CMS_SAN_CELL,

    [GUMBO_TAG_SCRIPT] = CMS_SAN_DROP,
    [GUMBO_TAG_STYLE] = CMS_SAN_DROP,
    [GUMBO_TAG_SVG] = CMS_SAN_DROP,
    [GUMBO_TAG_MATH] = CMS_SAN_DROP,
    [GUMBO_TAG_NOSCRIPT] = CMS_SAN_DROP,
    [GUMBO_TAG_TEMPLATE] = CMS_SAN_DROP,
    [GUMBO_TAG_IFRAME] = CMS_SAN_DROP,
    [GUMBO_TAG_OBJECT] = CMS_SAN_DROP,
    [GUMBO_TAG_EMBED] = CMS_SAN_DROP,
    [GUMBO_TAG_APPLET] = CMS_SAN_DROP,
    [GUMBO_TAG_MARQUEE] = CMS_SAN_DROP,
    [GUMBO_TAG_FORM] = CMS_SAN_DROP,
    [GUMBO_TAG_INPUT] = CMS_SAN_DROP,
    [GUMBO_TAG_BUTTON] = CMS_SAN_DROP,
    [GUMBO_TAG_SELECT] = CMS_SAN_DROP,
    [GUMBO_TAG_OPTION] = CMS_SAN_DROP,
    [GUMBO_TAG_OPTGROUP] = CMS_SAN_DROP,
    [GUMBO_TAG_DATALIST] = CMS_SAN_DROP,
    [GUMBO_TAG_TEXTAREA] = CMS_SAN_DROP,
    [GUMBO_TAG_KEYGEN] = CMS_SAN_DROP,
    [GUMBO_TAG_BASE] = CMS_SAN_DROP,
    [GUMBO_TAG_LINK] = CMS_SAN_DROP,
    [GUMBO_TAG_META] = CMS_SAN_DROP,
    [GUMBO_TAG_TITLE] = CMS_SAN_DROP,
    [GUMBO_TAG_HEAD] = CMS_SAN_DROP,
    [GUMBO_TAG_FRAME] = CMS_SAN_DROP,
    [GUMBO_TAG_FRAMESET] = CMS_SAN_DROP,
    [GUMBO_TAG_NOEMBED] = CMS_SAN_DROP,
    [GUMBO_TAG_NOFRAMES] = CMS_SAN_DROP,
    [GUMBO_TAG_XMP] = CMS_SAN_DROP,
    [GUMBO_TAG_PLAINTEXT] = CMS_SAN_DROP,
    [GUMBO_TAG_COLGROUP] = CMS_SAN_DROP,
    [GUMBO_TAG_COL] = CMS_SAN_DROP,
    [GUMBO_TAG_PARAM] = CMS_SAN_DROP,
    [GUMBO_TAG_SOURCE] = CMS_SAN_DROP,
    [GUMBO_TAG_TRACK] = CMS_SAN_DROP,
    [GUMBO_TAG_MENUITEM] = CMS_SAN_DROP
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
    char                 *copy;
    size_t                limit;
    cms_sanitize_walk_t   w;

    *out_len = 0;

    if (len > CMS_SANITIZE_MAX_INPUT) {
        return CMS_SANITIZE_TOO_LARGE;
    }

    if (len == 0) {
        return CMS_SANITIZE_OK;
    }

    rc = cms_sanitize_scan_copy(html, len, &copy);
    if (rc != CMS_SANITIZE_OK) {
        return rc;
    }

    limit = cms_sanitize_out_max(len);
    if (limit > out_size) {
        limit = out_size;
    }

    w.pos = out;
    w.end = out + limit;
    w.html = html;
    w.copy = copy;
    w.len = len;
    w.rc = CMS_SANITIZE_OK;
    w.depth = 0;
    w.nframes = 0;

    rc = cms_sanitize_tree(&w);
    free(copy);

    if (rc == CMS_SANITIZE_OK) {
        *out_len = (size_t) (w.pos - out);
    }

    return rc;
}


/*
 * Parses w->copy (or w->html when there is no copy) and walks the tree
 * into w's output; every block Gumbo allocated is freed on return.
 */

static int
cms_sanitize_tree(cms_sanitize_walk_t *w)
{
    GumboOutput          *output;
    GumboOptions          options;
    cms_sanitize_heap_t   heap;

    cms_sanitize_options(&options, &heap);

    output = cms_sanitize_parse(&heap, &options,
                                w->copy ? w->copy : w->html, w->len);

    if (output == NULL) {
        cms_sanitize_heap_free(&heap);
        return heap.rc != CMS_SANITIZE_OK ? heap.rc : CMS_SANITIZE_ERROR;
    }

    cms_sanitize_walk(w, output->root);

    gumbo_destroy_output(&options, output);
    cms_sanitize_heap_free(&heap);

    return w->rc;
}


/* a fragment in <body> context, errors not kept, memory from heap */

static void
cms_sanitize_options(GumboOptions *options, cms_sanitize_heap_t *heap)
{
    heap->list.h.prev = &heap->list;
    heap->list.h.next = &heap->list;
    heap->used = 0;
    heap->rc = CMS_SANITIZE_OK;

    *options = kGumboDefaultOptions;
    options->allocator = cms_sanitize_alloc;
    options->deallocator = cms_sanitize_dealloc;
    options->userdata = heap;
    options->max_errors = 0;
    options->fragment_context = GUMBO_TAG_BODY;
    options->fragment_namespace = GUMBO_NAMESPACE_HTML;
}


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

    /*
     * Zeroed: in a fragment parse Gumbo 0.10.1 reads the document's quirks
     * mode without setting it (valgrind shows it on every <table>), which
     * decides whether <table> closes an open <p>.  Zero is no-quirks, as
     * for a page with <!DOCTYPE html>.
     */
    b = calloc(1, need);
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

    if ((flags & CMS_SAN_DROP) || cms_sanitize_renamed(w, el)) {
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
 * 1 for a bdi or samp that was an svg or math in the input (see
 * cms_sanitize_scan_foreign()): the copy differs from the input only
 * there, at the same offsets.
 */

static int
cms_sanitize_renamed(cms_sanitize_walk_t *w, const GumboElement *el)
{
    size_t       off;
    const char  *p;

    p = el->original_tag.data;

    if (w->copy == NULL
        || (el->tag != GUMBO_TAG_BDI && el->tag != GUMBO_TAG_SAMP)
        || (uintptr_t) p < (uintptr_t) w->copy
        || (uintptr_t) p >= (uintptr_t) w->copy + w->len)
    {
        return 0;
    }

    off = (size_t) ((uintptr_t) p - (uintptr_t) w->copy);

    return off + 3 < w->len && memcmp(p + 1, w->html + off + 1, 3) != 0;
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


/* the flags of tag in the policy table, 0 for a tag it does not name */

static unsigned
cms_sanitize_tag_flags(GumboTag tag)
{
    return ((unsigned) tag < GUMBO_TAG_LAST) ? cms_sanitize_policy[tag] : 0;
}


/*
 * 1 when a start tag for tag, written now, would be re-parsed as a child
 * of the element currently open in the output: the parser's own start-tag
 * rules for the allowed elements, checked against the output stack.
 */

static int
cms_sanitize_fits(cms_sanitize_walk_t *w, GumboTag tag, unsigned flags)
{
    int  top, rc;

    top = cms_sanitize_top(w);

    rc = cms_sanitize_table_fits(tag, top);
    if (rc >= 0) {
        return rc;
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


/*
 * The parts of a table fit only directly in their parent (a tr in a row
 * group, a cell in a tr): 1 or 0 for them, -1 for any other tag.
 */

static int
cms_sanitize_table_fits(GumboTag tag, int top)
{
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
        return -1;
    }
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
