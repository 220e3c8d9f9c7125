
/*
 * cms-admin migrate [--dir DIR] [--check]: the migrations of DIR
 * (sql/NNNN_name.sql; default CMS_ADMIN_SQL_DIR, the build's sql/) that
 * the database has not recorded in schema_migrations, applied in order
 * (docs/operations.md, "Schema and upgrades").
 *
 * The whole run holds a session advisory lock, so hosts that start at
 * once apply each migration exactly once: the second waits, then finds
 * them recorded.  Each file runs in one transaction with the INSERT that
 * records it (the INSERT first: a file's own BEGIN and COMMIT then commit
 * the record with it, as scripts/migrate.sh does); a failing file rolls
 * back whole and stops the run.  A file whose first line is "-- migrate:
 * no transaction" runs step by step instead (its steps safe to run again)
 * and is recorded once all of them ran.  --check applies nothing: it
 * prints the pending versions, one a line, and exits 1 when there is one.
 */


#include "cms_admin.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#define CMS_ADMIN_MIGRATIONS_MAX  1000
#define CMS_ADMIN_VERSION_MAX     120       /* "NNNN_name" */
#define CMS_ADMIN_MIGRATION_MAX   (4 * 1024 * 1024)

/* a file's first line that runs it step by step, and the steps' line */
#define CMS_ADMIN_NO_TRANSACTION  "-- migrate: no transaction"
#define CMS_ADMIN_STEP            "-- step"

/* pg_advisory_lock()'s key: "cms migrate" */
#define CMS_ADMIN_MIGRATE_LOCK    "7163636d73206d67"


typedef char  cms_admin_version_t[CMS_ADMIN_VERSION_MAX + 1];


static int cms_admin_migrate_lock(cms_admin_ctx_t *ctx);
static int cms_admin_migrations(const char *dir, cms_admin_version_t *v,
    size_t *n);
static int cms_admin_version_name(const char *s, size_t len);
static int cms_admin_version_cmp(const void *a, const void *b);
static int cms_admin_applied(cms_admin_ctx_t *ctx, const char *version);
static int cms_admin_apply(cms_admin_ctx_t *ctx, const char *dir,
    const char *version);
static int cms_admin_apply_steps(cms_admin_ctx_t *ctx, char *sql,
    const char *version);
static char *cms_admin_read_sql(const char *path);
static int cms_admin_exec(cms_admin_ctx_t *ctx, const char *sql,
    const char *what);


static const cms_admin_query_t  cms_admin_migrate_record = {
    "migrate",
    "INSERT INTO schema_migrations (version) VALUES ($1)",
    1, NULL
};


/* long: the files, the lock, then each pending one */
int
cms_admin_migrate(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int                   rc;
    size_t                i, n = 0, pending;
    const char           *dir;
    cms_admin_version_t  *v;

    dir = a->dir ? a->dir : CMS_ADMIN_SQL_DIR;

    v = calloc(CMS_ADMIN_MIGRATIONS_MAX, sizeof(cms_admin_version_t));
    if (v == NULL) {
        return cms_admin_error("out of memory");
    }

    rc = cms_admin_migrations(dir, v, &n);

    if (rc == 0) {
        rc = cms_admin_migrate_lock(ctx);
    }

    pending = 0;

    for (i = 0; rc == 0 && i < n; i++) {
        rc = cms_admin_applied(ctx, v[i]);

        if (rc == 1) {
            rc = 0;
            continue;
        }

        if (rc != 0) {
            break;
        }

        pending++;

        if (a->check) {
            printf("%s\n", v[i]);
            continue;
        }

        rc = cms_admin_apply(ctx, dir, v[i]);

        if (rc == 0) {
            fprintf(stderr, "cms-admin: migrate: applied %s\n", v[i]);
        }
    }

    free(v);

    if (rc != 0) {
        return rc;
    }

    if (!a->check) {
        fprintf(stderr, "cms-admin: migrate: %zu applied, %zu already there\n",
                pending, n - pending);
    }

    /* the lock goes with the connection */
    return (a->check && pending) ? 1 : 0;
}


/*
 * The session's lock, taken by polling: a session waiting in
 * pg_advisory_lock() holds a snapshot that the holder's CREATE INDEX
 * CONCURRENTLY would wait for, a deadlock; between tries this one is idle.
 * 0, or -1 reported.
 */
static int
cms_admin_migrate_lock(cms_admin_ctx_t *ctx)
{
    int              locked;
    PGresult        *res;
    struct timespec  pause = { 0, 100 * 1000 * 1000 };

    for ( ;; ) {
        res = PQexec(ctx->pg, "SELECT pg_try_advisory_lock(x'"
                              CMS_ADMIN_MIGRATE_LOCK "'::bigint)");

        if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
            cms_admin_error("migrate: taking the lock: %s",
                            PQerrorMessage(ctx->pg));
            PQclear(res);
            return -1;
        }

        locked = (PQgetvalue(res, 0, 0)[0] == 't');
        PQclear(res);

        if (locked) {
            break;
        }

        nanosleep(&pause, NULL);
    }

    /* once held: hosts starting at once would race to create it */
    return cms_admin_exec(ctx, "SET client_min_messages = error;"
                               "CREATE TABLE IF NOT EXISTS schema_migrations"
                               " (version text PRIMARY KEY,"
                               "  applied_at timestamptz NOT NULL"
                               "  DEFAULT now())", "taking the lock");
}


/* DIR's NNNN_name.sql files, their versions sorted */
static int
cms_admin_migrations(const char *dir, cms_admin_version_t *v, size_t *n)
{
    DIR            *d;
    size_t          len;
    struct dirent  *de;

    d = opendir(dir);
    if (d == NULL) {
        return cms_admin_error("migrate: cannot open \"%s\"", dir);
    }

    *n = 0;

    while ((de = readdir(d)) != NULL) {
        len = strlen(de->d_name);

        if (len < 10 || len - 4 > CMS_ADMIN_VERSION_MAX
            || strcmp(de->d_name + len - 4, ".sql") != 0)
        {
            continue;
        }

        if (!cms_admin_version_name(de->d_name, len - 4)) {
            continue;
        }

        if (*n == CMS_ADMIN_MIGRATIONS_MAX) {
            closedir(d);
            return cms_admin_error("migrate: more than %d migrations",
                                   CMS_ADMIN_MIGRATIONS_MAX);
        }

        memcpy(v[*n], de->d_name, len - 4);
        v[(*n)++][len - 4] = '\0';
    }

    closedir(d);

    if (*n == 0) {
        return cms_admin_error("migrate: no NNNN_name.sql in \"%s\"", dir);
    }

    qsort(v, *n, sizeof(cms_admin_version_t), cms_admin_version_cmp);

    return 0;
}


/* what a migration's name may be, "NNNN_" then [A-Za-z0-9_] (it goes
   into SQL as a value) */
static int
cms_admin_version_name(const char *s, size_t len)
{
    size_t  i;

    for (i = 0; i < len; i++) {
        if (i < 4 ? (s[i] < '0' || s[i] > '9')
            : i == 4 ? s[i] != '_'
            : !(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z')
                || (s[i] >= 'A' && s[i] <= 'Z')
                || (s[i] >= '0' && s[i] <= '9')))
        {
            return 0;
        }
    }

    return 1;
}


static int
cms_admin_version_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}


/* 1 when recorded, 0 when not, -1 on an error */
static int
cms_admin_applied(cms_admin_ctx_t *ctx, const char *version)
{
    int                       rc;
    PGresult                 *res;
    const char               *params[1];
    static cms_admin_query_t  q = {
        "migrate",
        "SELECT 1 FROM schema_migrations WHERE version = $1",
        1, NULL
    };

    params[0] = version;

    res = cms_admin_pg_run(ctx, &q, params);
    if (res == NULL) {
        return -1;
    }

    rc = (PQntuples(res) == 1);
    PQclear(res);

    return rc;
}


/* long: the record and the file in one transaction */
static int
cms_admin_apply(cms_admin_ctx_t *ctx, const char *dir, const char *version)
{
    int          rc;
    char        *sql, path[4096];
    PGresult    *res;
    const char  *params[1];

    if ((size_t) snprintf(path, sizeof(path), "%s/%s.sql", dir, version)
        >= sizeof(path))
    {
        return cms_admin_error("migrate: \"%s\" is too long a path", dir);
    }

    sql = cms_admin_read_sql(path);
    if (sql == NULL) {
        return -1;
    }

    params[0] = version;

    if (strncmp(sql, CMS_ADMIN_NO_TRANSACTION "\n",
                sizeof(CMS_ADMIN_NO_TRANSACTION)) == 0)
    {
        rc = cms_admin_apply_steps(ctx, sql, version);
        free(sql);

        if (rc != 0) {
            return cms_admin_error("migrate: %s failed (its steps ran until"
                                   " the one above; it runs again whole)",
                                   version);
        }

        res = cms_admin_pg_run(ctx, &cms_admin_migrate_record, params);
        if (res == NULL) {
            return -1;
        }

        PQclear(res);
        return 0;
    }

    if (cms_admin_exec(ctx, "BEGIN", version) != 0) {
        free(sql);
        return -1;
    }

    res = cms_admin_pg_run(ctx, &cms_admin_migrate_record, params);

    if (res == NULL) {
        free(sql);
        (void) cms_admin_exec(ctx, "ROLLBACK", version);
        return -1;
    }

    PQclear(res);

    /* the file's own BEGIN and COMMIT may warn: nothing to say of them */
    rc = cms_admin_exec(ctx, sql, version);
    free(sql);

    if (rc != 0) {
        (void) cms_admin_exec(ctx, "ROLLBACK", version);
        return cms_admin_error("migrate: %s failed, rolled back", version);
    }

    if (PQtransactionStatus(ctx->pg) != PQTRANS_IDLE) {
        return cms_admin_exec(ctx, "COMMIT", version);
    }

    return 0;
}


/*
 * A file run outside one transaction: its steps, the text between lines
 * "-- step", each sent alone (a CREATE INDEX CONCURRENTLY, a CALL whose
 * procedure commits, a BEGIN ... COMMIT block).  0, or -1 reported.
 */
static int
cms_admin_apply_steps(cms_admin_ctx_t *ctx, char *sql, const char *version)
{
    char  *p, *end;

    p = sql;

    for ( ;; ) {
        end = strstr(p, "\n" CMS_ADMIN_STEP "\n");

        if (end != NULL) {
            end[1] = '\0';
        }

        if (cms_admin_exec(ctx, p, version) != 0) {
            return -1;
        }

        if (end == NULL) {
            return 0;
        }

        p = end + sizeof(CMS_ADMIN_STEP) + 1;
    }
}


static char *
cms_admin_read_sql(const char *path)
{
    FILE    *f;
    char    *sql;
    size_t   n;

    f = fopen(path, "r");
    if (f == NULL) {
        cms_admin_error("migrate: cannot open \"%s\"", path);
        return NULL;
    }

    sql = malloc(CMS_ADMIN_MIGRATION_MAX + 1);
    if (sql == NULL) {
        fclose(f);
        cms_admin_error("out of memory");
        return NULL;
    }

    n = fread(sql, 1, CMS_ADMIN_MIGRATION_MAX + 1, f);
    fclose(f);

    if (n > CMS_ADMIN_MIGRATION_MAX || memchr(sql, '\0', n) != NULL) {
        free(sql);
        cms_admin_error("migrate: \"%s\" is over 4 MiB or holds a NUL", path);
        return NULL;
    }

    sql[n] = '\0';

    return sql;
}


/* statements without parameters (the lock, a file): 0, or -1 reported */
static int
cms_admin_exec(cms_admin_ctx_t *ctx, const char *sql, const char *what)
{
    PGresult        *res;
    ExecStatusType   st;

    res = PQexec(ctx->pg, sql);
    st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK
        && st != PGRES_EMPTY_QUERY)
    {
        cms_admin_error("migrate: %s: %s", what,
                        res ? PQresultErrorMessage(res)
                            : PQerrorMessage(ctx->pg));
        PQclear(res);
        return -1;
    }

    PQclear(res);

    return 0;
}
