
/*
 * cms-admin: the command-line administration tool (bootstrap users,
 * workspaces and members, mint sessions and API keys; facilities,
 * extensions, extension keys and invoices for tests and the demo seed;
 * admin credentials and facility memberships, which only it issues).  It
 * is not part of
 * the nginx module: it runs once per command, so blocking libpq and
 * malloc are fine here.  SQL is always parameterized.
 *
 * Output contract, so that scripts can capture results: a command prints
 * only its result on stdout; errors go to stderr as "cms-admin: ..." and
 * the exit status is 1.
 */


#ifndef _CMS_ADMIN_H_INCLUDED_
#define _CMS_ADMIN_H_INCLUDED_


#define _POSIX_C_SOURCE  200809L

#include <stddef.h>
#include <libpq-fe.h>

#include "cms_kdf.h"
#include "cms_key.h"
#include "cms_version.h"


/* migrate's default folder: the build's sql/, or the package's (make install) */
#ifndef CMS_ADMIN_SQL_DIR
#define CMS_ADMIN_SQL_DIR  "sql"
#endif


/* as nginx's cms_secret: 32 to 4095 bytes once trailing white space goes */
#define CMS_ADMIN_SECRET_MIN  32
#define CMS_ADMIN_SECRET_MAX  4096

#define CMS_ADMIN_ID_LEN      36

/* privilege lists (--privileges): at most CMS_ADMIN_NAMES_MAX names of at
 * most CMS_ADMIN_NAME_MAX bytes; the array literal "{" '"'name'"',... "}" */
#define CMS_ADMIN_NAMES_MAX   32
#define CMS_ADMIN_NAME_MAX    64
#define CMS_ADMIN_NAME_LIST_LEN                                               \
    (CMS_ADMIN_NAMES_MAX * (CMS_ADMIN_NAME_MAX + 3) + 2)


/* every option any command takes; NULL or 0 when not given */
typedef struct {
    const char    *db;
    const char    *secret;
    const char    *email;
    const char    *password;
    const char    *name;
    const char    *workspace;
    const char    *owner;
    const char    *locale;
    const char    *role;
    const char    *creator;
    const char    *scopes;
    const char    *id;
    const char    *ttl;
    const char    *facility;
    const char    *extension;
    const char    *version;
    const char    *category;
    const char    *status;
    const char    *required_privilege;
    const char    *privileges;
    const char    *expires_in;
    const char    *patient;
    const char    *amount;
    const char    *currency;
    const char    *members;
    const char    *storage;
    const char    *upload;
    const char    *custom_modules;
    const char    *sites;
    const char    *webhooks;
    unsigned       verified:1;
    unsigned       inactive:1;
    unsigned       suspended:1;
    const char    *dir;
    unsigned       sandbox:1;
    unsigned       check:1;
} cms_admin_args_t;


typedef struct {
    PGconn         *pg;
    unsigned char   secret[CMS_ADMIN_SECRET_MAX];
    size_t          secret_len;
} cms_admin_ctx_t;


/* an SQLSTATE the command explains itself, instead of libpq's text */
typedef struct {
    const char    *sqlstate;
    const char    *message;
} cms_admin_pg_error_t;


typedef struct {
    const char                  *what;      /* "user create", for errors */
    const char                  *sql;
    int                          nparams;
    const cms_admin_pg_error_t  *errors;    /* { NULL, NULL }-terminated */
} cms_admin_query_t;


/*
 * A list command: query, whose one parameter is the id given as
 * --option, prints one tab-separated line per row.  columns names its
 * columns in order, as the usage text does; the printer checks that the
 * query returns that many.
 */
typedef struct {
    const char                  *option;    /* "workspace" */
    cms_admin_query_t            query;
    const char                  *columns;   /* "id prefix name ..." */
} cms_admin_listing_t;


/*
 * A revoke command: query sets revoked_at of the row whose id is $1 (the
 * first time only) and returns the id; noun names the row in the error
 * for an id that matches none.
 */
typedef struct {
    cms_admin_query_t            query;
    const char                  *noun;      /* "extension key" */
} cms_admin_revoking_t;


/* a freshly minted key: shown once, then only hash and prefix are kept */
typedef struct {
    char           key[CMS_KEY_MAX_LEN + 1];
    char           prefix[CMS_KEY_VISIBLE_MAX + 1];
    char           hash_hex[2 * CMS_KDF_LEN + 1];
} cms_admin_new_key_t;


typedef int (*cms_admin_handler_pt)(cms_admin_ctx_t *ctx,
    const cms_admin_args_t *a);


/* cms_admin.c */
int cms_admin_error(const char *fmt, ...);

/* cms_admin_pg.c */
int cms_admin_pg_connect(cms_admin_ctx_t *ctx, const char *conninfo);
PGresult *cms_admin_pg_run(cms_admin_ctx_t *ctx, const cms_admin_query_t *q,
    const char *const *params);
int cms_admin_pg_one(cms_admin_ctx_t *ctx, const cms_admin_query_t *q,
    const char *const *params, char *out, size_t size);
int cms_admin_pg_print_id(cms_admin_ctx_t *ctx, const cms_admin_query_t *q,
    const char *const *params);
int cms_admin_check_uuid(const char *what, const char *s);
int cms_admin_check_text(const char *what, const char *s, size_t min,
    size_t max);
int cms_admin_check_printable(const char *what, const char *s, size_t min,
    size_t max);
int cms_admin_name_list(const char *what, const char *list,
    const char *const *allowed, char *out, size_t size);
int cms_admin_random(unsigned char *buf, size_t n);

/* cms_admin_list.c */
int cms_admin_list(cms_admin_ctx_t *ctx, const cms_admin_listing_t *l,
    const char *id);
int cms_admin_revoke(cms_admin_ctx_t *ctx, const cms_admin_revoking_t *r,
    const char *id);

/* cms_admin_secret.c */
int cms_admin_secret_load(cms_admin_ctx_t *ctx, const char *path);
int cms_admin_secret_derive(cms_admin_ctx_t *ctx, const char *label,
    unsigned char out[CMS_KDF_LEN]);

/* cms_admin_users.c */
int cms_admin_user_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_workspace_create(cms_admin_ctx_t *ctx,
    const cms_admin_args_t *a);
int cms_admin_member_add(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_member_remove(cms_admin_ctx_t *ctx,
    const cms_admin_args_t *a);

/* cms_admin_keys.c */
int cms_admin_session(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_key_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_key_list(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_key_revoke(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_key_new(cms_admin_ctx_t *ctx, cms_key_kind_e kind,
    cms_admin_new_key_t *k);

/* cms_admin_ext.c */
int cms_admin_facility_create(cms_admin_ctx_t *ctx,
    const cms_admin_args_t *a);
int cms_admin_extension_create(cms_admin_ctx_t *ctx,
    const cms_admin_args_t *a);
int cms_admin_extkey_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_extkey_list(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_extkey_revoke(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_invoice_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_extension_list(cms_admin_ctx_t *ctx,
    const cms_admin_args_t *a);

/* cms_admin_migrate.c */
int cms_admin_migrate(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);

/* cms_admin_plans.c */
int cms_admin_plan_set(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_plan_assign(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_plan_list(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);

/* cms_admin_mail.c */
int cms_admin_account_mail(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);

/* cms_admin_mgmt.c */
int cms_admin_admin_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_admin_list(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_admin_revoke(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
int cms_admin_facility_member(cms_admin_ctx_t *ctx,
    const cms_admin_args_t *a);


#endif /* _CMS_ADMIN_H_INCLUDED_ */
