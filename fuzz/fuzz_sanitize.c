
/*
 * libFuzzer target for cms_sanitize():
 *
 *   - no crash, leak or out-of-bounds access (ASAN, UBSAN);
 *   - the output fits cms_sanitize_out_max(len) and the buffer given;
 *   - the output holds only allow-listed tags and attributes, all values
 *     double-quoted, no javascript:/vbscript:/data: in a value;
 *   - sanitize(sanitize(x)) == sanitize(x) for every OK result;
 *   - the pre-scan estimate d (the smallest depth cms_sanitize_scan()
 *     accepts) never falls below the depth of Gumbo's tree by more than
 *     the implied-table factor: tree depth <= 2 * d + 2.  The tree is that
 *     of the input as cms_sanitize() parses it, with svg and math renamed
 *     (cms_sanitize_scan_copy()): Gumbo 0.10.1 aborts on some foreign
 *     content, which is why they are renamed.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <gumbo.h>

#include "cms_sanitize.h"
#include "cms_sanitize_int.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


/*
 * Gumbo is not instrumented, so coverage cannot steer the fuzzer through
 * the parser's states.  An input starting with a 0 byte is therefore read
 * as a token list instead: each following byte picks one of these, which
 * makes misnesting across tables, lists, formatting, raw text and foreign
 * content likely rather than lucky.
 */

static const char *const  tokens[] = {
    "<p>", "</p>", "<a href=/x>", "<a href=javascript:x>", "</a>", "<b>",
    "</b>", "<i>", "</i>", "<em>", "<strong>", "</strong>", "<code>",
    "<pre>", "</pre>", "\n", "<ul>", "</ul>", "<ol>", "<li>", "</li>",
    "<h1>", "</h1>", "<h2>", "</h2>", "<div>", "</div>", "<span>",
    "</span>", "<blockquote>", "<figure>", "<figcaption>", "<table>",
    "</table>", "<caption>", "</caption>", "<thead>", "<tbody>", "<tfoot>",
    "<tr>", "</tr>", "<td>", "</td>", "<th>", "<br>", "<hr>",
    "<img src=https://e/x>", "<sub>", "<sup>", "<u>", "<s>", "<marquee>",
    "</marquee>", "<object>", "<applet>", "<button>", "</button>",
    "<select>", "<option>", "<textarea>", "</textarea>", "<svg>", "</svg>",
    "<svg/>", "<math>", "</math>", "<mi>", "<mtext>", "<foreignObject>",
    "<desc>", "<title>", "<style>", "</style>", "<script>", "</script>",
    "<template>", "</template>", "<noscript>", "<xmp>", "<iframe>",
    "<form>", "</form>", "<input>", "<nobr>", "<font>", "<dd>", "<dt>",
    "<dl>", "<section>", "<address>", "<center>", "<listing>",
    "<plaintext>", "<col>", "<colgroup>", "<frameset>", "<body>", "<html>",
    "<head>", "<!--", "-->", "<!-- x -->", "text", "x y", " ", "&amp;",
    "&lt;", "&#1;", "&#13;", "<isindex>", "<image src=https://e/y>",
    "<ruby>", "<rt>", "<rp>", "<menu>", "<dir>", "<details>", "<summary>",
    "<main>", "<keygen>", "<embed>", "<frame>", "</html>", "</body>",
    "<mglyph>", "<malignmark>", "<annotation-xml encoding=text/html>",
    "<tt>", "<big>", "<small>", "<strike>", "<bdi>", "</bdi>", "<samp>",
    "</samp>", "<p title=\"</p>\">", "<a title='<svg>'>", "<![CDATA[x]]>"
};

#define NTOKENS  (sizeof(tokens) / sizeof(tokens[0]))


/* the token list in data[1 .. size) as HTML, in a malloc()ed buffer */

static char *
from_tokens(const uint8_t *data, size_t size, size_t *len)
{
    char        *buf;
    size_t       i, n, k;
    const char  *t;

    buf = malloc(size * 40 + 1);
    if (buf == NULL) {
        abort();
    }

    n = 0;

    for (i = 1; i < size; i++) {
        t = tokens[data[i] % NTOKENS];
        k = strlen(t);
        memcpy(buf + n, t, k);
        n += k;
    }

    *len = n;

    /* exactly sized, as for raw input */
    return realloc(buf, n ? n : 1);
}


static const char *const  tags[] = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "div", "blockquote", "figure",
    "figcaption", "pre", "ul", "ol", "li", "strong", "b", "em", "i", "u",
    "s", "sub", "sup", "code", "br", "hr", "table", "caption", "thead",
    "tbody", "tfoot", "tr", "td", "th", "a", "img", NULL
};

static const char *const  attrs[] = {
    "href", "title", "target", "rel", "src", "alt", "width", "height",
    "colspan", "rowspan", "start", "class", NULL
};


static int
in_list(const char *const *list, const char *s, size_t n)
{
    for ( /* void */ ; *list; list++) {
        if (strlen(*list) == n && memcmp(*list, s, n) == 0) {
            return 1;
        }
    }

    return 0;
}


/* 1 when the lowercase needle occurs in v[0 .. n), controls skipped */

static int
has_scheme(const char *v, size_t n, const char *needle)
{
    size_t         i, j;
    unsigned char  c;
    const char    *s;

    for (i = 0; i < n; i++) {
        for (j = i, s = needle; *s && j < n; j++) {
            c = (unsigned char) v[j];

            if (c <= 0x20 || c == 0x7f) {
                continue;
            }

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


static void
check_output(const char *o, size_t n)
{
    size_t  i, k, v;

    for (i = 0; i < n; i++) {

        if (o[i] == '>') {
            abort();                    /* every ">" in text is escaped */
        }

        if (o[i] != '<') {
            continue;
        }

        i += (i + 1 < n && o[i + 1] == '/') ? 2 : 1;

        for (k = i; i < n && o[i] != ' ' && o[i] != '>'; i++) {
            /* void */
        }

        if (!in_list(tags, o + k, i - k)) {
            abort();
        }

        while (i < n && o[i] == ' ') {
            for (k = ++i; i < n && o[i] != '='; i++) {
                /* void */
            }

            if (!in_list(attrs, o + k, i - k) || i + 1 >= n
                || o[i + 1] != '"')
            {
                abort();
            }

            for (v = i + 2, i = v; i < n && o[i] != '"'; i++) {
                if (o[i] == '<' || o[i] == '>') {
                    abort();
                }
            }

            /* the output's own "&amp;" cannot spell a scheme, so the raw
             * value is what a browser decodes modulo those escapes */
            if (has_scheme(o + v, i - v, "javascript:")
                || has_scheme(o + v, i - v, "vbscript:")
                || has_scheme(o + v, i - v, "data:"))
            {
                abort();
            }

            i++;
        }

        if (i >= n || o[i] != '>') {
            abort();
        }
    }
}


/* zeroed like cms_sanitize()'s, so Gumbo parses tables deterministically */

static void *
zalloc(void *userdata, size_t size)
{
    (void) userdata;

    return calloc(1, size);
}


static void
zfree(void *userdata, void *p)
{
    (void) userdata;

    free(p);
}


/* depth of Gumbo's tree under the fragment root, iteratively */

static unsigned
tree_depth(const char *html, size_t len)
{
    size_t         top;
    unsigned       max;
    GumboNode     *n;
    GumboOutput   *out;
    GumboOptions   options;
    struct {
        GumboNode  *node;
        unsigned    next;
    }              stack[1024];

    options = kGumboDefaultOptions;
    options.allocator = zalloc;
    options.deallocator = zfree;
    options.max_errors = 0;
    options.fragment_context = GUMBO_TAG_BODY;
    options.fragment_namespace = GUMBO_NAMESPACE_HTML;

    out = gumbo_parse_with_options(&options, html, len);

    stack[0].node = out->root;
    stack[0].next = 0;
    top = 1;
    max = 0;

    while (top > 0) {
        n = stack[top - 1].node;

        if (stack[top - 1].next == n->v.element.children.length) {
            top--;
            continue;
        }

        n = n->v.element.children.data[stack[top - 1].next++];

        if (n->type != GUMBO_NODE_ELEMENT && n->type != GUMBO_NODE_TEMPLATE) {
            continue;
        }

        if (top == 1024) {
            abort();
        }

        stack[top].node = n;
        stack[top].next = 0;
        top++;

        if (top - 1 > max) {
            max = (unsigned) (top - 1);
        }
    }

    gumbo_destroy_output(&options, out);

    return max;
}


static void
check_scan(const char *html, size_t len)
{
    char      *copy;
    unsigned   lo, hi, mid, real;

    if (cms_sanitize_scan_copy(html, len, &copy) != CMS_SANITIZE_OK) {
        return;
    }

    /* smallest accepted depth: the scan's estimate */
    lo = 0;
    hi = CMS_SANITIZE_MAX_DEPTH;

    while (lo < hi) {
        mid = (lo + hi) / 2;

        if (cms_sanitize_scan(html, len, mid) == CMS_SANITIZE_OK) {
            hi = mid;

        } else {
            lo = mid + 1;
        }
    }

    real = tree_depth(copy ? copy : html, len);

    if (real > 2 * lo + 2) {
        abort();
    }

    free(copy);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int          rc;
    char        *in, *out, *again;
    size_t       cap, n, n2;
    const char  *html;

    if (size > CMS_SANITIZE_MAX_INPUT / 64) {
        return 0;
    }

    if (size > 0 && data[0] == 0) {
        in = from_tokens(data, size, &size);

    } else {
        /* an exactly-sized copy: ASAN sees any read past the end */
        in = malloc(size ? size : 1);
        if (in == NULL) {
            return 0;
        }

        memcpy(in, data, size);
    }

    html = in;

    /* one byte less than the bound: a write past it lands in the guard */
    cap = cms_sanitize_out_max(size);
    out = malloc(cap + 1);
    again = malloc(cap + 1);
    if (out == NULL || again == NULL) {
        abort();
    }

    out[cap] = 0x5a;

    rc = cms_sanitize(html, size, out, cap, &n);

    if (out[cap] != 0x5a) {
        abort();
    }

    if (rc == CMS_SANITIZE_OK) {
        if (n > cap) {
            abort();
        }

        check_output(out, n);

        if (n <= CMS_SANITIZE_MAX_INPUT && n <= cap) {
            rc = cms_sanitize(out, n, again, cap, &n2);

            if (rc != CMS_SANITIZE_OK || n2 != n
                || memcmp(out, again, n) != 0)
            {
                abort();
            }
        }

    } else if (rc != CMS_SANITIZE_TOO_LARGE && rc != CMS_SANITIZE_TOO_DEEP) {
        abort();

    } else if (n != 0) {
        abort();
    }

    check_scan(html, size);

    free(again);
    free(out);
    free(in);

    return 0;
}
