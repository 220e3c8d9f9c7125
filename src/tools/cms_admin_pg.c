
/*
 * cms-admin: PostgreSQL access (blocking libpq, parameterized SQL only),
 * input checks shared by the commands, randomness.
 */


#include "cms_admin.h"

#include <stdio.h>
#include <string.h>
#include <openssl/rand.h>

#include "cms_uuid.h"


static void cms_admin_pg_report(const cms_admin_query_t *q,
    const PGresult *res);
static int cms_admin_name_check(const char *what, const char *p, size_t n,
    const char *const *allowed);
static int cms_admin_name_new(const char *what, const char *list,
    const char *p, size_t n);


/*
 * Opens ctx->pg to conninfo (NULL: the caller had no --db and no
 * $CMS_DATABASE_URL).  Returns 0, or -1 with the error printed; ctx->pg
 * may then be set and is closed by the caller.
 */

int
cms_admin_pg_connect(cms_admin_ctx_t *ctx, const char *conninfo)
{
    char    *msg;
    size_t   n;

    if (conninfo == NULL || conninfo[0] == '\0') {
        return cms_admin_error("no database: give --db CONNINFO or set "
                               "CMS_DATABASE_URL");
    }

    ctx->pg = PQconnectdb(conninfo);

    if (ctx->pg == NULL) {
        return cms_admin_error("out of memory");
    }

    if (PQstatus(ctx->pg) != CONNECTION_OK) {
        msg = PQerrorMessage(ctx->pg);
        n = strlen(msg);

        /* libpq ends its messages with a newline */

        while (n > 0 && msg[n - 1] == '\n') {
            n--;
        }

        return cms_admin_error("cannot connect to the database: %.*s",
                               (int) n, msg);
    }

    return 0;
}


/*
 * Runs q with params (q->nparams text values, NULL for SQL NULL).
 * Returns the result, which the caller PQclear()s, or NULL with the error
 * printed: q's own message for an SQLSTATE it lists, else libpq's.
 */

PGresult *
cms_admin_pg_run(cms_admin_ctx_t *ctx, const cms_admin_query_t *q,
    const char *const *params)
{
    PGresult        *res;
    ExecStatusType   st;

    res = PQexecParams(ctx->pg, q->sql, q->nparams, NULL, params, NULL, NULL,
                       0);

    st = PQresultStatus(res);

    if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
        return res;
    }

    cms_admin_pg_report(q, res);
    PQclear(res);

    return NULL;
}


/*
 * Runs q, which returns at most one row, and copies its first column (as
 * text, NUL-terminated) to out.  Returns 1 with a row, 0 without one
 * (nothing printed: the caller explains), -1 on error (printed), also when
 * the value does not fit in size.
 */

int
cms_admin_pg_one(cms_admin_ctx_t *ctx, const cms_admin_query_t *q,
    const char *const *params, char *out, size_t size)
{
    int        rc;
    size_t     n;
    PGresult  *res;

    res = cms_admin_pg_run(ctx, q, params);

    if (res == NULL) {
        return -1;
    }

    rc = 0;

    if (PQntuples(res) > 0) {
        n = (size_t) PQgetlength(res, 0, 0);

        if (n < size) {
            memcpy(out, PQgetvalue(res, 0, 0), n + 1);
            rc = 1;

        } else {
            rc = cms_admin_error("%s: unexpected result", q->what);
        }
    }

    PQclear(res);

    return rc;
}


/*
 * Runs q, which inserts one row and returns its id, and prints the id.
 * Returns 0, or -1 (printed: "<q->what>: no id returned" when q returned
 * no row).
 */

int
cms_admin_pg_print_id(cms_admin_ctx_t *ctx, const cms_admin_query_t *q,
    const char *const *params)
{
    int   rc;
    char  id[CMS_ADMIN_ID_LEN + 1];

    rc = cms_admin_pg_one(ctx, q, params, id, sizeof(id));

    if (rc != 1) {
        return rc == 0 ? cms_admin_error("%s: no id returned", q->what) : -1;
    }

    printf("%s\n", id);

    return 0;
}


/*
 * 0 when s is a UUID in canonical text form; else prints that the option
 * named what is not one and returns -1.  Checked before any query so that
 * a typo reads as such, not as an SQL error.
 */

int
cms_admin_check_uuid(const char *what, const char *s)
{
    if (s == NULL) {
        return cms_admin_error("--%s is required", what);
    }

    if (!cms_uuid_valid(s, strlen(s))) {
        return cms_admin_error("--%s \"%s\" is not a UUID", what, s);
    }

    return 0;
}


/*
 * 0 when s is given and has min to max bytes; else prints what is wrong
 * with option --what and returns -1.
 */

int
cms_admin_check_text(const char *what, const char *s, size_t min,
    size_t max)
{
    size_t  n;

    if (s == NULL) {
        return cms_admin_error("--%s is required", what);
    }

    n = strlen(s);

    if (n < min || n > max) {
        return cms_admin_error("--%s must have %zu to %zu bytes", what, min,
                               max);
    }

    return 0;
}


/* s is given, has min to max bytes, and no control characters */

int
cms_admin_check_printable(const char *what, const char *s, size_t min,
    size_t max)
{
    const unsigned char  *p;

    if (cms_admin_check_text(what, s, min, max) != 0) {
        return -1;
    }

    for (p = (const unsigned char *) s; *p != '\0'; p++) {
        if (*p < ' ' || *p == 0x7f) {
            return cms_admin_error("--%s holds a control character", what);
        }
    }

    return 0;
}


/*
 * Checks the comma-separated list of names given as option --what ("" is
 * the empty list; no empty element, none twice, at most
 * CMS_ADMIN_NAMES_MAX) and writes it to out as a PostgreSQL array literal
 * for a text[] parameter, every element double-quoted: {"a","b:c"}.  With
 * allowed (NULL-terminated), each name must be one of its entries;
 * without, each is [a-z0-9_:.-]{1,CMS_ADMIN_NAME_MAX}.  Names never hold
 * '"' or '\\', so the quotes need no escapes, and they keep a name such as
 * "null" from reading as an SQL NULL.  Returns 0, or -1 (printed).
 */

int
cms_admin_name_list(const char *what, const char *list,
    const char *const *allowed, char *out, size_t size)
{
    size_t       n, used;
    const char  *p, *e;

    if (list == NULL) {
        return cms_admin_error("--%s is required (\"\" for none)", what);
    }

    if (size < 3) {
        return cms_admin_error("--%s: too long", what);
    }

    out[0] = '{';
    used = 1;

    /* an empty list skips the loop; an empty element is refused */

    for (p = list; *list != '\0'; p = e + 1) {
        e = strchr(p, ',');
        n = e ? (size_t) (e - p) : strlen(p);

        if (cms_admin_name_check(what, p, n, allowed) != 0
            || cms_admin_name_new(what, list, p, n) != 0)
        {
            return -1;
        }

        /* '"' name '"' and ',' or '}' + NUL */

        if (used + n + 4 > size) {
            return cms_admin_error("--%s: too long", what);
        }

        out[used++] = '"';
        memcpy(out + used, p, n);
        used += n;
        out[used++] = '"';

        if (e == NULL) {
            break;
        }

        out[used++] = ',';
    }

    out[used++] = '}';
    out[used] = '\0';

    return 0;
}


/*
 * The name p[0 .. n) of the list --what: one of allowed, or without
 * allowed, [a-z0-9_:.-]{1,CMS_ADMIN_NAME_MAX}.  0, or -1 (printed, with
 * the allowed names).
 */

static int
cms_admin_name_check(const char *what, const char *p, size_t n,
    const char *const *allowed)
{
    char                names[256];
    size_t              len;
    const char *const  *a;

    if (allowed == NULL) {
        if (n < 1 || n > CMS_ADMIN_NAME_MAX
            || strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_:.-") < n)
        {
            return cms_admin_error("--%s: \"%.*s\" is not a name of 1 to %d "
                                   "characters a-z 0-9 _ : . -", what,
                                   (int) n, p, CMS_ADMIN_NAME_MAX);
        }

        return 0;
    }

    for (a = allowed; *a != NULL; a++) {
        if (strlen(*a) == n && memcmp(p, *a, n) == 0) {
            return 0;
        }
    }

    len = 0;
    names[0] = '\0';

    for (a = allowed; *a != NULL && len < sizeof(names); a++) {
        len += (size_t) snprintf(names + len, sizeof(names) - len, "%s%s",
                                 len ? " " : "", *a);
    }

    return cms_admin_error("--%s: \"%.*s\" is not one of %s", what, (int) n,
                           p, names);
}


/*
 * 0 when the name p[0 .. n) does not stand earlier in list and is one of
 * its first CMS_ADMIN_NAMES_MAX names; else -1 (printed).
 */

static int
cms_admin_name_new(const char *what, const char *list, const char *p,
    size_t n)
{
    int          count;
    size_t       m;
    const char  *q, *f;

    count = 1;

    for (q = list; q < p; q = f + 1) {
        f = strchr(q, ',');
        m = (size_t) (f - q);   /* q < p: a ',' follows */

        if (m == n && memcmp(q, p, n) == 0) {
            return cms_admin_error("--%s: \"%.*s\" is listed twice", what,
                                   (int) n, p);
        }

        count++;
    }

    if (count > CMS_ADMIN_NAMES_MAX) {
        return cms_admin_error("--%s: more than %d names", what,
                               CMS_ADMIN_NAMES_MAX);
    }

    return 0;
}


/* n bytes from OpenSSL's CSPRNG into buf; 0, or -1 (printed) */

int
cms_admin_random(unsigned char *buf, size_t n)
{
    if (n > 0x7fffffff || RAND_bytes(buf, (int) n) != 1) {
        return cms_admin_error("RAND_bytes() failed");
    }

    return 0;
}


/* prints q's message for the error's SQLSTATE, or the server's text */

static void
cms_admin_pg_report(const cms_admin_query_t *q, const PGresult *res)
{
    const char                  *state, *msg;
    const cms_admin_pg_error_t  *e;

    state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

    for (e = q->errors; state != NULL && e != NULL && e->sqlstate != NULL;
         e++)
    {
        if (strcmp(e->sqlstate, state) == 0) {
            cms_admin_error("%s: %s", q->what, e->message);
            return;
        }
    }

    msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

    if (msg == NULL) {
        msg = res ? PQresultErrorMessage(res) : "out of memory";
    }

    cms_admin_error("%s: %s%s%s", q->what, msg, state ? " SQLSTATE " : "",
                    state ? state : "");
}
