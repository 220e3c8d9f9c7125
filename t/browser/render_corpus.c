
/*
 * Writes an HTML page that renders every vector of an XSS corpus file
 * (t/data/xss-vectors.txt format) after cms_sanitize(), for
 * t/090-sanitizer-browser.t to load in headless Chromium.
 *
 *     render_corpus [--control] VECTORS > page.html
 *
 * The page's first script hooks alert, confirm, prompt, print, fetch,
 * open, XMLHttpRequest and sendBeacon before any vector markup is parsed
 * and counts the calls.  After load it audits the rendered DOM of the
 * vectors: every element must be an allow-listed HTML element, no
 * attribute may be an event handler, and no URL attribute may resolve to
 * a javascript:, vbscript: or data: URL.  The result goes, as JSON, into
 * a final <pre id="cms-result"> that --dump-dom prints.
 *
 * --control appends one vector that is NOT sanitized and calls alert()
 * once, to prove that the hooks see calls.
 */


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cms_sanitize.h"


static const char  head[] =
    "<!DOCTYPE html>\n"
    "<html><head><meta charset=\"utf-8\"><title>corpus</title>\n"
    "<script>\n"
    "(function () {\n"
    "  var calls = [];\n"
    "  function hook(obj, name, label) {\n"
    "    var orig = obj[name];\n"
    "    obj[name] = function () {\n"
    "      calls.push(label);\n"
    "      if (name === 'fetch') { return new Promise(function () {}); }\n"
    "      return undefined;\n"
    "    };\n"
    "  }\n"
    "  ['alert', 'confirm', 'prompt', 'print', 'fetch', 'open']\n"
    "    .forEach(function (n) { hook(window, n, n); });\n"
    "  hook(XMLHttpRequest.prototype, 'open', 'xhr');\n"
    "  if (navigator.sendBeacon) { hook(navigator, 'sendBeacon', 'beacon'); }\n"
    "  window.__cmsCalls = calls;\n"
    "})();\n"
    "</script>\n"
    "</head><body>\n";

/* after all vectors: audit the DOM once load and timers have run */
static const char  tail[] =
    "<script>\n"
    "(function () {\n"
    "  var allowed = ('p h1 h2 h3 h4 h5 h6 div blockquote figure figcaption'\n"
    "    + ' pre ul ol li strong b em i u s sub sup code br hr table'\n"
    "    + ' caption thead tbody tfoot tr td th a img').split(' ');\n"
    "  var urlAttrs = ['href', 'src', 'action', 'formaction', 'data',\n"
    "    'background', 'poster', 'srcdoc', 'xlink:href', 'cite'];\n"
    "  function report() {\n"
    "    var r = { calls: window.__cmsCalls.length,\n"
    "              names: window.__cmsCalls.slice(0, 20),\n"
    "              vectors: 0, elements: 0, bad_elements: [],\n"
    "              handlers: [], script_urls: [] };\n"
    "    var vs = document.querySelectorAll('div.cms-v');\n"
    "    r.vectors = vs.length;\n"
    "    vs.forEach(function (v) {\n"
    "      var id = v.getAttribute('data-id');\n"
    "      if (id === 'control') { return; }\n"
    "      v.querySelectorAll('*').forEach(function (el) {\n"
    "        r.elements++;\n"
    "        if (el.namespaceURI !== 'http://www.w3.org/1999/xhtml'\n"
    "            || allowed.indexOf(el.localName) < 0) {\n"
    "          r.bad_elements.push(id + ':' + el.localName);\n"
    "        }\n"
    "        Array.prototype.forEach.call(el.attributes, function (a) {\n"
    "          if (/^on/i.test(a.name)) {\n"
    "            r.handlers.push(id + ':' + a.name);\n"
    "          }\n"
    "          if (urlAttrs.indexOf(a.name.toLowerCase()) < 0) { return; }\n"
    "          var proto = '';\n"
    "          try { proto = new URL(a.value, document.baseURI).protocol; }\n"
    "          catch (e) { proto = ''; }\n"
    "          if (/^(javascript|vbscript|data):$/i.test(proto)) {\n"
    "            r.script_urls.push(id + ':' + a.name);\n"
    "          }\n"
    "        });\n"
    "      });\n"
    "    });\n"
    "    var pre = document.createElement('pre');\n"
    "    pre.id = 'cms-result';\n"
    "    pre.textContent = 'CMS-RESULT ' + JSON.stringify(r) + ' CMS-END';\n"
    "    document.body.appendChild(pre);\n"
    "  }\n"
    "  window.addEventListener('load', function () {\n"
    "    setTimeout(report, 1000);\n"
    "  });\n"
    "})();\n"
    "</script>\n"
    "</body></html>\n";

static const char  control[] =
    "<div class=\"cms-v\" data-id=\"control\">"
    "<img src=\"cms-missing.png\" onerror=\"alert(1)\"></div>\n";


/* writes s with &, <, >, " escaped, for the data-id attribute */

static void
put_attr(const char *s, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        switch (s[i]) {
        case '&':
            fputs("&amp;", stdout);
            break;
        case '<':
            fputs("&lt;", stdout);
            break;
        case '>':
            fputs("&gt;", stdout);
            break;
        case '"':
            fputs("&quot;", stdout);
            break;
        default:
            putchar(s[i]);
        }
    }
}


static char *
read_file(const char *path, size_t *size)
{
    FILE  *f;
    char  *buf;
    long   n;

    f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(2);
    }

    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);

    buf = malloc((size_t) n + 1);
    if (buf == NULL || fread(buf, 1, (size_t) n, f) != (size_t) n) {
        fprintf(stderr, "%s: read failed\n", path);
        exit(2);
    }

    fclose(f);
    buf[n] = '\0';
    *size = (size_t) n;

    return buf;
}


int
main(int argc, char **argv)
{
    int          rc, ctl, count;
    char        *buf, *p, *end, *nl, *out, *sp;
    size_t       size, len, n, cap;
    const char  *path;

    ctl = argc > 1 && strcmp(argv[1], "--control") == 0;
    path = argv[ctl ? 2 : 1];

    if (path == NULL) {
        fprintf(stderr, "usage: %s [--control] VECTORS > page.html\n",
                argv[0]);
        return 2;
    }

    buf = read_file(path, &size);
    cap = cms_sanitize_out_max(CMS_SANITIZE_MAX_INPUT);
    out = malloc(cap);
    if (out == NULL) {
        return 2;
    }

    fputs(head, stdout);

    p = buf;
    end = buf + size;
    count = 0;

    while (p < end) {
        nl = memchr(p, '\n', (size_t) (end - p));
        if (nl == NULL) {
            break;
        }

        if (*p == '#') {
            p = nl + 1;
            continue;
        }

        /* "=== <id> <source> <category> <length>" */
        *nl = '\0';
        sp = strchr(p + 4, ' ');
        len = strtoul(strrchr(p, ' ') + 1, NULL, 10);

        if (strncmp(p, "=== ", 4) != 0 || sp == NULL
            || len > (size_t) (end - nl) || nl[1 + len] != '\n')
        {
            fprintf(stderr, "bad record at offset %ld\n", (long) (p - buf));
            return 2;
        }

        rc = cms_sanitize(nl + 1, len, out, cap, &n);
        if (rc != CMS_SANITIZE_OK) {
            fprintf(stderr, "%.*s: rc %d\n", (int) (sp - p - 4), p + 4, rc);
            return 1;
        }

        fputs("<div class=\"cms-v\" data-id=\"", stdout);
        put_attr(p + 4, (size_t) (sp - p - 4));
        fputs("\">", stdout);
        fwrite(out, 1, n, stdout);
        fputs("</div>\n", stdout);

        count++;
        p = nl + 1 + len + 1;
    }

    if (ctl) {
        fputs(control, stdout);
    }

    fputs(tail, stdout);
    fprintf(stderr, "%d vectors\n", count);

    free(out);
    free(buf);

    return 0;
}
