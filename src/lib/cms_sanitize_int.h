
/*
 * Private to the sanitizer (cms_sanitize.c, cms_sanitize_scan.c,
 * cms_sanitize_write.c): the walk's state and what the files share.
 */


#ifndef _CMS_SANITIZE_INT_H_INCLUDED_
#define _CMS_SANITIZE_INT_H_INCLUDED_


#include <stddef.h>
#include <gumbo.h>


/* tree levels the walk follows; deeper trees are refused as too deep */
#define CMS_SANITIZE_WALK_MAX  (4 * CMS_SANITIZE_MAX_DEPTH)


typedef struct {
    GumboNode                 *node;
    unsigned                   next;       /* next child to visit */
    int                        tag;        /* GumboTag written, or -1 */
} cms_sanitize_frame_t;


typedef struct {
    char                      *pos;        /* output */
    char                      *end;
    const char                *html;       /* the input, as given */
    const char                *copy;       /* what Gumbo parsed, or NULL */
    size_t                     len;
    int                        rc;
    unsigned                   depth;      /* frames with a written tag */
    unsigned                   nframes;
    cms_sanitize_frame_t       frames[CMS_SANITIZE_WALK_MAX];
} cms_sanitize_walk_t;


int cms_sanitize_scan_copy(const char *html, size_t len, char **copy);
int cms_sanitize_space(unsigned char c);

int cms_sanitize_start_tag(cms_sanitize_walk_t *w, GumboTag tag,
    const GumboVector *attrs);
void cms_sanitize_put(cms_sanitize_walk_t *w, const char *s, size_t n);
void cms_sanitize_put_escaped(cms_sanitize_walk_t *w, const char *s,
    int attr);


#endif /* _CMS_SANITIZE_INT_H_INCLUDED_ */
