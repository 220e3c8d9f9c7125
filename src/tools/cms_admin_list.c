
/*
 * cms-admin: the list and revoke commands of every family of records
 * (keys, extension keys, admin credentials, extensions), each described
 * by a table entry in its family's file and run here.
 */


#include "cms_admin.h"

#include <stdio.h>
#include <string.h>


static int cms_admin_words(const char *s);


/*
 * Prints the rows of l->query for id (checked as a UUID first and named
 * --l->option in the error), one tab-separated line per row, no header
 * line.  Returns 0 (also for no rows), or -1 (printed).
 */

int
cms_admin_list(cms_admin_ctx_t *ctx, const cms_admin_listing_t *l,
    const char *id)
{
    int          i, j, n, ncols;
    PGresult    *res;
    const char  *params[1];

    if (cms_admin_check_uuid(l->option, id) != 0) {
        return -1;
    }

    params[0] = id;

    res = cms_admin_pg_run(ctx, &l->query, params);

    if (res == NULL) {
        return -1;
    }

    ncols = PQnfields(res);

    if (ncols != cms_admin_words(l->columns)) {
        PQclear(res);
        return cms_admin_error("%s: unexpected result", l->query.what);
    }

    n = PQntuples(res);

    for (i = 0; i < n; i++) {
        for (j = 0; j < ncols; j++) {
            printf("%s%c", PQgetvalue(res, i, j), j < ncols - 1 ? '\t' : '\n');
        }
    }

    PQclear(res);

    return 0;
}


/*
 * Revokes the row with id (checked as a UUID first, given as --id) and
 * prints its id.  Revoking a revoked row keeps its first time and is not
 * an error.  Returns 0, or -1 (printed; "no <noun> with id" when none).
 */

int
cms_admin_revoke(cms_admin_ctx_t *ctx, const cms_admin_revoking_t *r,
    const char *id)
{
    int          rc;
    char         out[CMS_ADMIN_ID_LEN + 1];
    const char  *params[1];

    if (cms_admin_check_uuid("id", id) != 0) {
        return -1;
    }

    params[0] = id;

    rc = cms_admin_pg_one(ctx, &r->query, params, out, sizeof(out));

    if (rc == 0) {
        return cms_admin_error("%s: no %s with id \"%s\"", r->query.what,
                               r->noun, id);
    }

    if (rc < 0) {
        return -1;
    }

    printf("%s\n", out);

    return 0;
}


/* the number of space-separated words in s */

static int
cms_admin_words(const char *s)
{
    int  n;

    for (n = 0; /* void */; n++) {
        s += strspn(s, " ");

        if (*s == '\0') {
            return n;
        }

        s += strcspn(s, " ");
    }
}
