
/*
 * The list engine: which page a list asks for, and the page written from
 * result columns (no json_agg: PostgreSQL reads the page, C writes it).
 */


#ifndef _NGX_HTTP_CMS_LIST_H_INCLUDED_
#define _NGX_HTTP_CMS_LIST_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <libpq-fe.h>
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_pg.h"


/*
 * The deepest page an offset reaches (README, Pagination): the database
 * walks every row an offset skips, so a deeper one is refused (400).
 */
#define NGX_HTTP_CMS_LIST_MAX_OFFSET       100000
#define NGX_HTTP_CMS_LIST_MAX_OFFSET_TEXT  "100000"


typedef struct {
    ngx_uint_t                  limit;
    ngx_uint_t                  offset;
    ngx_uint_t                  base;      /* where the total's column is:
                                              0, or after a fused key's */
    const ngx_http_cms_record_t  *rec;     /* what a row is */
    unsigned                    no_limit:1;  /* pagination without limit
                                                (custom entries: spec) */
    unsigned                    search:1;  /* NGX_HTTP_CMS_SEARCH's rows:
                                              "fuzzy" in column 0, the
                                              total in 1 (base 1), each
                                              item's "highlight" last */
} ngx_http_cms_page_t;


/*
 * The page a content-API list asks for: "limit" (default "def", 1..max;
 * anything else falls back to the default) and "offset" (default 0; not a
 * whole number: 0): the spec asks for fallbacks, not errors.  An offset
 * beyond NGX_HTTP_CMS_LIST_MAX_OFFSET is 400 invalid_field_value (a
 * fallback to the first page would loop a client walking the pages).
 * page->base is 0.  With "args" (room for two), also limit and offset as
 * statement arguments.  Returns NGX_OK, the error recorded (also the query
 * reader's 400 for text that is not clean: repeated, bad escape, invalid
 * UTF-8, NUL), or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_list_page(ngx_http_request_t *r, ngx_uint_t def,
    ngx_uint_t max, ngx_http_cms_page_t *page, ngx_str_t *args);

/*
 * Sends {"<list>": [items], "pagination": {"total", "limit", "offset"}}
 * from "res", whose every row holds the total in column page->base and
 * one item in the record's columns (counted from there); a page past the
 * end is one row whose first item column is NULL (the item query LEFT
 * JOINed to the count).  A NULL total is a list whose parent is not there
 * (another workspace's site, say): 404 not_found.  Returns the handler
 * contract's codes (NGX_OK once sent).
 */
ngx_int_t ngx_http_cms_list_send(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res, ngx_http_cms_page_t *page);

/*
 * Sends {"<list>": [items]}, one item a row of "res": the lists the spec
 * does not paginate (their statements bound the row count).  Returns the
 * handler contract's codes.
 */
ngx_int_t ngx_http_cms_list_send_all(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res);

/*
 * The same for the items of a parent: column 0 is NULL when the parent
 * is not there (404 not_found), and a NULL first item column is a parent
 * with no items (the items LEFT JOINed to it); the record's columns are
 * counted from column 0.  Returns the handler contract's codes.
 */
ngx_int_t ngx_http_cms_list_send_under(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res);


/* the page an extension-API list asks for (ngx_http_cms_list_cursor()) */
typedef struct {
    ngx_uint_t                  limit;
    ngx_str_t                   after;     /* starting_after; NULL: none */
} ngx_http_cms_cursor_t;


/*
 * The page an extension-API list asks for: "limit" (default "def", 1..max;
 * anything else, a number out of range or not a number, is 422
 * validation_error naming it, as Stripe does) and "starting_after" (the
 * last identifier of the previous page, at most 64 bytes; absent, its data
 * is NULL).  With "args" (room for two): starting_after (SQL NULL when
 * absent) and limit + 1, the rows to read (a row past the page says that
 * there is more).  Returns NGX_OK, the query reader's 400 for text that is
 * not clean, the 422 recorded, or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_list_cursor(ngx_http_request_t *r, ngx_uint_t def,
    ngx_uint_t max, ngx_http_cms_cursor_t *cur, ngx_str_t *args);

/*
 * Sends {"data": [items], "has_more": bool} from "res", one item a row in
 * the record's columns, read with up to cur->limit + 1 rows: the first
 * cur->limit are the page, one more sets has_more.  Returns the handler
 * contract's codes (NGX_OK once sent).
 */
ngx_int_t ngx_http_cms_list_send_cursor(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res,
    ngx_http_cms_cursor_t *cur);


/*
 * A page's total from a counter function ("expr"), as the lateral "t" the
 * page joins.  The OFFSET 0 fence keeps PostgreSQL from flattening the
 * subquery into the page's rows: flattened, the function ran once a row
 * (21 times for a page of 20) instead of once, and the comment list's
 * statement cost PostgreSQL twice as much (bench).
 */
#define NGX_HTTP_CMS_LIST_TOTAL(expr)                                        \
    " CROSS JOIN LATERAL (SELECT " expr " AS total OFFSET 0) t"

/* the content API's page: 50 rows unless asked, at most 100 (README) */
#define NGX_HTTP_CMS_LIST_DEFAULT  50
#define NGX_HTTP_CMS_LIST_MAX      100

/*
 * Runs "stmt" for the page the request asks for (ngx_http_cms_list_page()
 * with the content API's default and maximum): "args" holds n arguments,
 * the last two left for limit and offset, which are filled here; the page
 * (with "rec") goes to ctx->data, and ngx_http_cms_list_done() answers.
 * Returns what ngx_http_cms_pg_query() returns, or the page reader's codes.
 */
ngx_int_t ngx_http_cms_list_query(ngx_http_request_t *r,
    ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args, ngx_uint_t n,
    const ngx_http_cms_record_t *rec);

/*
 * The continuation of a page's statement: the result checked, then
 * ngx_http_cms_list_send() with the page in ctx->data (its record, its
 * base).  For fused reads too (the result was checked by then).
 */
ngx_int_t ngx_http_cms_list_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);


/*
 * A list's filter from the query string, "name" (at most 64 bytes): one
 * of "one_of" (NULL-terminated; else 400 "code" naming it) when one_of is
 * given, else a uuid (else 400 invalid_field_value naming it).  Returns
 * NGX_OK with *value set, NGX_DECLINED when absent (*value null: SQL NULL,
 * no filter), the query reader's 400, the error recorded, or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_list_filter(ngx_http_request_t *r, const char *name,
    const char *const *one_of, ngx_uint_t code, ngx_str_t *value);


/*
 * A content list filtered by one query parameter: "name" (at most 64
 * bytes), one of "allowed" when given, else 400 with "code" naming it
 * (invalid_status for a status, say); its items are "rec".
 */
typedef struct {
    const char                   *name;
    const char *const            *allowed;
    ngx_uint_t                    code;
    const ngx_http_cms_record_t  *rec;
    ngx_http_cms_pg_stmt_t       *search;  /* with "q": $1 workspace, $2
                                              the filter, $3 limit, $4
                                              offset, $5 the query */
} ngx_http_cms_list_filter_t;

/*
 * Runs "stmt" for the page a filtered list asks for: $1 the workspace,
 * $2 the filter's value (NULL when absent), $3 the limit, $4 the offset
 * (f->search instead when the list is searched, "q" its $5);
 * the page goes to ctx->data and ngx_http_cms_list_done() answers.
 * Returns what ngx_http_cms_pg_query() returns, the error recorded, or
 * NGX_ERROR.
 */
ngx_int_t ngx_http_cms_list_filtered(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, const ngx_http_cms_list_filter_t *f,
    ngx_http_cms_pg_stmt_t *stmt);

/*
 * The same list read with the key (a route's fused args(), see
 * _resources.h): its $2 .. $4 into args[0 .. 2] and *nargs, the page's
 * columns after the key's "base" ones.  A search, or a query the list
 * would refuse, declines the fused read (NGX_DECLINED, nothing
 * recorded): the key is then checked alone and the handler searches or
 * answers the query's error, so that a bad credential is told first.
 * NGX_OK, NGX_DECLINED or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_list_filtered_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, const ngx_http_cms_list_filter_t *f,
    ngx_uint_t base, ngx_str_t *args, ngx_uint_t *nargs);



/*
 * Search (docs/search.md): a list's page for "q", its statement made by
 * NGX_HTTP_CMS_SEARCH from a resource's parts:
 *
 *   src    a FROM item aliased "l", one row: "locale" (the language the
 *          query is read in) and whatever "where" needs besides (as
 *          "s."); no row: the list's parent is not there (404);
 *   table  the table and its alias ("articles a"), "alias" the alias;
 *   where  which rows are the list's (the workspace, the filters);
 *   title  the text the fallback compares the query with (pg_trgm);
 *   cols   the record's columns; "doc" the text a highlight is cut from;
 *   q, lim, off  the query's, the limit's and the offset's parameters.
 *
 * Ranked by ts_rank() over the weighted `search` vector (sql/0040), the
 * newest first among equals.  When the text search finds nothing, the
 * titles whose words are like the query's (word_similarity() above
 * pg_trgm's threshold) are the answer, ranked by that likeness, and
 * "fuzzy" says so.  A query of no words (stop words, operators only)
 * finds nothing.  Every row: fuzzy, the total, the record's columns, the
 * highlight; past the end, one row whose record columns are NULL.
 */
#define NGX_HTTP_CMS_SEARCH(src, table, alias, where, title, cols, doc,      \
                            q, lim, off)                                     \
    "WITH s AS MATERIALIZED (SELECT l.*, cms_ts_config(l.locale) AS cfg,"   \
    "   websearch_to_tsquery(cms_ts_config(l.locale), " q "::text) AS tq"    \
    "  FROM " src "),"                                                       \
    " m AS MATERIALIZED (SELECT " alias ".id,"                               \
    "   ts_rank(" alias ".search, s.tq) AS r, " alias ".created_at AS c"     \
    "  FROM " table ", s WHERE " where " AND " alias ".search @@ s.tq),"     \
    " f AS MATERIALIZED (SELECT " alias ".id,"                               \
    "   word_similarity(" q ", " title ") AS r, " alias ".created_at AS c"   \
    "  FROM " table ", s WHERE NOT EXISTS (SELECT FROM m)"                   \
    "   AND numnode(s.tq) > 0 AND " where " AND " q " <% " title "),"        \
    " h AS (SELECT * FROM m UNION ALL SELECT * FROM f)"                      \
    " SELECT NOT EXISTS (SELECT FROM m) AND EXISTS (SELECT FROM f),"         \
    "  t.total, p.* FROM (SELECT CASE WHEN EXISTS (SELECT FROM s)"           \
    "   THEN count(*) END AS total FROM h) t"                                \
    " LEFT JOIN LATERAL (SELECT " cols ","                                   \
    "  cms_search_highlight(s.cfg, " doc ", s.tq)"                           \
    "  FROM (SELECT * FROM h ORDER BY r DESC, c DESC, id DESC"               \
    "   LIMIT " lim " OFFSET " off ") pg"                                    \
    "  JOIN " table " ON " alias ".id = pg.id, s"                            \
    "  ORDER BY pg.r DESC, pg.c DESC, pg.id DESC) p ON true"

/* the most bytes a query may have (a longer one is 400 invalid_request) */
#define NGX_HTTP_CMS_SEARCH_MAX  1000

/*
 * The query "q" into *q: NGX_OK when given and not blank, NGX_DECLINED
 * when absent or blank (the list is not searched), or the query reader's
 * 400 (longer than NGX_HTTP_CMS_SEARCH_MAX bytes, invalid UTF-8, ...).
 */
ngx_int_t ngx_http_cms_list_search_arg(ngx_http_request_t *r, ngx_str_t *q);

/*
 * Runs a search's statement "stmt": args[0 .. n - 3] the caller's, then
 * the page's limit and offset and the query "q" (args has room for n
 * arguments, the last three filled here).  The page goes to ctx->data
 * and ngx_http_cms_list_done() answers.  Returns what
 * ngx_http_cms_pg_query() returns, or the page reader's codes.
 */
ngx_int_t ngx_http_cms_list_search(ngx_http_request_t *r,
    ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args, ngx_uint_t n,
    const ngx_http_cms_record_t *rec, ngx_str_t *q);

#endif /* _NGX_HTTP_CMS_LIST_H_INCLUDED_ */
