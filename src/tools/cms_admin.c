
/*
 * cms-admin: option parsing, command dispatch, usage.
 *
 *   cms-admin [--db CONNINFO] [--secret FILE] COMMAND [options]
 *
 * Global options may also follow the command.  --db defaults to
 * $CMS_DATABASE_URL, --secret to $CMS_SECRET_FILE.
 */


#include "cms_admin.h"

#include <getopt.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>


typedef struct {
    const char            *noun;
    const char            *verb;       /* NULL: the noun alone */
    const struct option   *options;
    cms_admin_handler_pt   handler;
    unsigned               need_db:1;
    unsigned               need_secret:1;
} cms_admin_command_t;


enum {
    CMS_ADMIN_OPT_DB = 256,
    CMS_ADMIN_OPT_SECRET,
    CMS_ADMIN_OPT_EMAIL,
    CMS_ADMIN_OPT_PASSWORD,
    CMS_ADMIN_OPT_NAME,
    CMS_ADMIN_OPT_WORKSPACE,
    CMS_ADMIN_OPT_OWNER,
    CMS_ADMIN_OPT_LOCALE,
    CMS_ADMIN_OPT_ROLE,
    CMS_ADMIN_OPT_CREATOR,
    CMS_ADMIN_OPT_SCOPES,
    CMS_ADMIN_OPT_ID,
    CMS_ADMIN_OPT_TTL,
    CMS_ADMIN_OPT_FACILITY,
    CMS_ADMIN_OPT_EXTENSION,
    CMS_ADMIN_OPT_VERSION,
    CMS_ADMIN_OPT_CATEGORY,
    CMS_ADMIN_OPT_STATUS,
    CMS_ADMIN_OPT_REQUIRED_PRIVILEGE,
    CMS_ADMIN_OPT_PRIVILEGES,
    CMS_ADMIN_OPT_EXPIRES_IN,
    CMS_ADMIN_OPT_PATIENT,
    CMS_ADMIN_OPT_AMOUNT,
    CMS_ADMIN_OPT_CURRENCY,
    CMS_ADMIN_OPT_VERIFIED,
    CMS_ADMIN_OPT_INACTIVE,
    CMS_ADMIN_OPT_SUSPENDED,
    CMS_ADMIN_OPT_SANDBOX,
    CMS_ADMIN_OPT_MEMBERS,
    CMS_ADMIN_OPT_STORAGE,
    CMS_ADMIN_OPT_UPLOAD,
    CMS_ADMIN_OPT_CUSTOM_MODULES,
    CMS_ADMIN_OPT_SITES,
    CMS_ADMIN_OPT_WEBHOOKS,
    CMS_ADMIN_OPT_DIR,
    CMS_ADMIN_OPT_CHECK
};


static const cms_admin_command_t *cms_admin_find(int argc, char **argv,
    int *used);
static int cms_admin_parse(int argc, char **argv,
    const struct option *options, cms_admin_args_t *a);
static int cms_admin_set(int opt, const char *name, char *arg,
    cms_admin_args_t *a);
static int cms_admin_run(const cms_admin_command_t *cmd,
    cms_admin_args_t *a);
static int cms_admin_help(cms_admin_ctx_t *ctx, const cms_admin_args_t *a);
static int cms_admin_version(cms_admin_ctx_t *ctx,
    const cms_admin_args_t *a);
static void cms_admin_usage(FILE *f);


typedef struct {
    int      opt;
    size_t   offset;
} cms_admin_field_t;


#define cms_admin_field(id, f)  { id, offsetof(cms_admin_args_t, f) }

static const cms_admin_field_t  cms_admin_fields[] = {
    cms_admin_field(CMS_ADMIN_OPT_DB, db),
    cms_admin_field(CMS_ADMIN_OPT_SECRET, secret),
    cms_admin_field(CMS_ADMIN_OPT_EMAIL, email),
    cms_admin_field(CMS_ADMIN_OPT_PASSWORD, password),
    cms_admin_field(CMS_ADMIN_OPT_NAME, name),
    cms_admin_field(CMS_ADMIN_OPT_WORKSPACE, workspace),
    cms_admin_field(CMS_ADMIN_OPT_OWNER, owner),
    cms_admin_field(CMS_ADMIN_OPT_LOCALE, locale),
    cms_admin_field(CMS_ADMIN_OPT_ROLE, role),
    cms_admin_field(CMS_ADMIN_OPT_CREATOR, creator),
    cms_admin_field(CMS_ADMIN_OPT_SCOPES, scopes),
    cms_admin_field(CMS_ADMIN_OPT_ID, id),
    cms_admin_field(CMS_ADMIN_OPT_TTL, ttl),
    cms_admin_field(CMS_ADMIN_OPT_FACILITY, facility),
    cms_admin_field(CMS_ADMIN_OPT_EXTENSION, extension),
    cms_admin_field(CMS_ADMIN_OPT_VERSION, version),
    cms_admin_field(CMS_ADMIN_OPT_CATEGORY, category),
    cms_admin_field(CMS_ADMIN_OPT_STATUS, status),
    cms_admin_field(CMS_ADMIN_OPT_REQUIRED_PRIVILEGE, required_privilege),
    cms_admin_field(CMS_ADMIN_OPT_PRIVILEGES, privileges),
    cms_admin_field(CMS_ADMIN_OPT_EXPIRES_IN, expires_in),
    cms_admin_field(CMS_ADMIN_OPT_PATIENT, patient),
    cms_admin_field(CMS_ADMIN_OPT_AMOUNT, amount),
    cms_admin_field(CMS_ADMIN_OPT_CURRENCY, currency),
    cms_admin_field(CMS_ADMIN_OPT_MEMBERS, members),
    cms_admin_field(CMS_ADMIN_OPT_STORAGE, storage),
    cms_admin_field(CMS_ADMIN_OPT_UPLOAD, upload),
    cms_admin_field(CMS_ADMIN_OPT_CUSTOM_MODULES, custom_modules),
    cms_admin_field(CMS_ADMIN_OPT_SITES, sites),
    cms_admin_field(CMS_ADMIN_OPT_WEBHOOKS, webhooks),
    cms_admin_field(CMS_ADMIN_OPT_DIR, dir)
};

#define CMS_ADMIN_NFIELDS                                                     \
    (sizeof(cms_admin_fields) / sizeof(cms_admin_field_t))


#define cms_admin_opt(name, has_arg, id)  { name, has_arg, NULL, id }

#define CMS_ADMIN_GLOBAL_OPTIONS                                              \
    cms_admin_opt("db", required_argument, CMS_ADMIN_OPT_DB),                 \
    cms_admin_opt("secret", required_argument, CMS_ADMIN_OPT_SECRET),         \
    cms_admin_opt("help", no_argument, 'h')

#define cms_admin_null_option  { NULL, 0, NULL, 0 }


static const struct option  cms_admin_global_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_null_option
};

static const struct option  cms_admin_user_create_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("email", required_argument, CMS_ADMIN_OPT_EMAIL),
    cms_admin_opt("password", required_argument, CMS_ADMIN_OPT_PASSWORD),
    cms_admin_opt("name", required_argument, CMS_ADMIN_OPT_NAME),
    cms_admin_opt("verified", no_argument, CMS_ADMIN_OPT_VERIFIED),
    cms_admin_opt("inactive", no_argument, CMS_ADMIN_OPT_INACTIVE),
    cms_admin_null_option
};

static const struct option  cms_admin_workspace_create_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("name", required_argument, CMS_ADMIN_OPT_NAME),
    cms_admin_opt("owner", required_argument, CMS_ADMIN_OPT_OWNER),
    cms_admin_opt("locale", required_argument, CMS_ADMIN_OPT_LOCALE),
    cms_admin_opt("suspended", no_argument, CMS_ADMIN_OPT_SUSPENDED),
    cms_admin_null_option
};

static const struct option  cms_admin_member_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("workspace", required_argument, CMS_ADMIN_OPT_WORKSPACE),
    cms_admin_opt("email", required_argument, CMS_ADMIN_OPT_EMAIL),
    cms_admin_opt("role", required_argument, CMS_ADMIN_OPT_ROLE),
    cms_admin_null_option
};

static const struct option  cms_admin_session_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("email", required_argument, CMS_ADMIN_OPT_EMAIL),
    cms_admin_opt("ttl", required_argument, CMS_ADMIN_OPT_TTL),
    cms_admin_null_option
};

static const struct option  cms_admin_key_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("workspace", required_argument, CMS_ADMIN_OPT_WORKSPACE),
    cms_admin_opt("creator", required_argument, CMS_ADMIN_OPT_CREATOR),
    cms_admin_opt("name", required_argument, CMS_ADMIN_OPT_NAME),
    cms_admin_opt("scopes", required_argument, CMS_ADMIN_OPT_SCOPES),
    cms_admin_opt("id", required_argument, CMS_ADMIN_OPT_ID),
    cms_admin_null_option
};

static const struct option  cms_admin_facility_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("name", required_argument, CMS_ADMIN_OPT_NAME),
    cms_admin_null_option
};

static const struct option  cms_admin_extension_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("facility", required_argument, CMS_ADMIN_OPT_FACILITY),
    cms_admin_opt("name", required_argument, CMS_ADMIN_OPT_NAME),
    cms_admin_opt("version", required_argument, CMS_ADMIN_OPT_VERSION),
    cms_admin_opt("category", required_argument, CMS_ADMIN_OPT_CATEGORY),
    cms_admin_opt("status", required_argument, CMS_ADMIN_OPT_STATUS),
    cms_admin_opt("required-privilege", required_argument,
                  CMS_ADMIN_OPT_REQUIRED_PRIVILEGE),
    cms_admin_opt("privileges", required_argument, CMS_ADMIN_OPT_PRIVILEGES),
    cms_admin_null_option
};

static const struct option  cms_admin_extension_list_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("facility", required_argument, CMS_ADMIN_OPT_FACILITY),
    cms_admin_null_option
};

static const struct option  cms_admin_admin_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("facility", required_argument, CMS_ADMIN_OPT_FACILITY),
    cms_admin_opt("name", required_argument, CMS_ADMIN_OPT_NAME),
    cms_admin_opt("privileges", required_argument, CMS_ADMIN_OPT_PRIVILEGES),
    cms_admin_opt("id", required_argument, CMS_ADMIN_OPT_ID),
    cms_admin_null_option
};

static const struct option  cms_admin_facility_member_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("facility", required_argument, CMS_ADMIN_OPT_FACILITY),
    cms_admin_opt("email", required_argument, CMS_ADMIN_OPT_EMAIL),
    cms_admin_opt("privileges", required_argument, CMS_ADMIN_OPT_PRIVILEGES),
    cms_admin_null_option
};

static const struct option  cms_admin_extkey_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("extension", required_argument, CMS_ADMIN_OPT_EXTENSION),
    cms_admin_opt("sandbox", no_argument, CMS_ADMIN_OPT_SANDBOX),
    cms_admin_opt("privileges", required_argument, CMS_ADMIN_OPT_PRIVILEGES),
    cms_admin_opt("expires-in", required_argument, CMS_ADMIN_OPT_EXPIRES_IN),
    cms_admin_opt("id", required_argument, CMS_ADMIN_OPT_ID),
    cms_admin_null_option
};

static const struct option  cms_admin_invoice_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("facility", required_argument, CMS_ADMIN_OPT_FACILITY),
    cms_admin_opt("patient", required_argument, CMS_ADMIN_OPT_PATIENT),
    cms_admin_opt("amount", required_argument, CMS_ADMIN_OPT_AMOUNT),
    cms_admin_opt("currency", required_argument, CMS_ADMIN_OPT_CURRENCY),
    cms_admin_opt("sandbox", no_argument, CMS_ADMIN_OPT_SANDBOX),
    cms_admin_null_option
};

static const struct option  cms_admin_plan_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("name", required_argument, CMS_ADMIN_OPT_NAME),
    cms_admin_opt("workspace", required_argument, CMS_ADMIN_OPT_WORKSPACE),
    cms_admin_opt("members", required_argument, CMS_ADMIN_OPT_MEMBERS),
    cms_admin_opt("storage", required_argument, CMS_ADMIN_OPT_STORAGE),
    cms_admin_opt("upload", required_argument, CMS_ADMIN_OPT_UPLOAD),
    cms_admin_opt("custom-modules", required_argument,
                  CMS_ADMIN_OPT_CUSTOM_MODULES),
    cms_admin_opt("sites", required_argument, CMS_ADMIN_OPT_SITES),
    cms_admin_opt("webhooks", required_argument, CMS_ADMIN_OPT_WEBHOOKS),
    cms_admin_null_option
};

static const struct option  cms_admin_migrate_options[] = {
    CMS_ADMIN_GLOBAL_OPTIONS,
    cms_admin_opt("dir", required_argument, CMS_ADMIN_OPT_DIR),
    cms_admin_opt("check", no_argument, CMS_ADMIN_OPT_CHECK),
    cms_admin_null_option
};


static const cms_admin_command_t  cms_admin_commands[] = {
    { "user", "create", cms_admin_user_create_options,
      cms_admin_user_create, 1, 0 },
    { "workspace", "create", cms_admin_workspace_create_options,
      cms_admin_workspace_create, 1, 0 },
    { "member", "add", cms_admin_member_options,
      cms_admin_member_add, 1, 0 },
    { "member", "remove", cms_admin_member_options,
      cms_admin_member_remove, 1, 0 },
    { "session", NULL, cms_admin_session_options,
      cms_admin_session, 1, 1 },
    { "key", "create", cms_admin_key_options,
      cms_admin_key_create, 1, 1 },
    { "key", "list", cms_admin_key_options,
      cms_admin_key_list, 1, 0 },
    { "key", "revoke", cms_admin_key_options,
      cms_admin_key_revoke, 1, 0 },
    { "facility", "create", cms_admin_facility_options,
      cms_admin_facility_create, 1, 0 },
    { "facility", "member", cms_admin_facility_member_options,
      cms_admin_facility_member, 1, 0 },
    { "extension", "create", cms_admin_extension_options,
      cms_admin_extension_create, 1, 0 },
    { "extension", "list", cms_admin_extension_list_options,
      cms_admin_extension_list, 1, 0 },
    { "extkey", "create", cms_admin_extkey_options,
      cms_admin_extkey_create, 1, 1 },
    { "extkey", "list", cms_admin_extkey_options,
      cms_admin_extkey_list, 1, 0 },
    { "extkey", "revoke", cms_admin_extkey_options,
      cms_admin_extkey_revoke, 1, 0 },
    { "invoice", "create", cms_admin_invoice_options,
      cms_admin_invoice_create, 1, 0 },
    { "admin", "create", cms_admin_admin_options,
      cms_admin_admin_create, 1, 1 },
    { "admin", "list", cms_admin_admin_options,
      cms_admin_admin_list, 1, 0 },
    { "admin", "revoke", cms_admin_admin_options,
      cms_admin_admin_revoke, 1, 0 },
    { "plan", "set", cms_admin_plan_options,
      cms_admin_plan_set, 1, 0 },
    { "plan", "assign", cms_admin_plan_options,
      cms_admin_plan_assign, 1, 0 },
    { "plan", "list", cms_admin_plan_options,
      cms_admin_plan_list, 1, 0 },
    { "account", "mail", cms_admin_global_options,
      cms_admin_account_mail, 1, 1 },
    { "migrate", NULL, cms_admin_migrate_options,
      cms_admin_migrate, 1, 0 },
    { "help", NULL, cms_admin_global_options,
      cms_admin_help, 0, 0 },
    { "version", NULL, cms_admin_global_options,
      cms_admin_version, 0, 0 },
    { NULL, NULL, NULL, NULL, 0, 0 }
};


static const char  cms_admin_usage_text[] =
"usage: cms-admin [--db CONNINFO] [--secret FILE] COMMAND [options]\n"
"\n"
"  --db CONNINFO    libpq connection string (default $CMS_DATABASE_URL)\n"
"  --secret FILE    the cms_secret key file (default $CMS_SECRET_FILE)\n"
"\n"
"commands (each prints only its result on stdout):\n"
"  user create --email E --password P [--name N] [--verified] [--inactive]\n"
"      prints the user id; --password - reads the password from stdin\n"
"  workspace create --name N --owner EMAIL [--locale en] [--suspended]\n"
"      prints the workspace id; the owner becomes its member 'owner'\n"
"  member add --workspace ID --email E --role ROLE\n"
"  member remove --workspace ID --email E\n"
"      print the user id; ROLE: owner admin editor author viewer\n"
"  session --email E [--ttl SECONDS]\n"
"      prints a session JWT (default ttl 86400); needs --secret\n"
"  key create --workspace ID --creator EMAIL --name N --scopes a:read,...\n"
"      prints the new secret key, shown only once; needs --secret; the\n"
"      creator must be an owner or admin of the workspace; scopes are\n"
"      RESOURCE:read or RESOURCE:write for RESOURCE in articles videos\n"
"      categories media comments custom pages webhooks podcasts\n"
"      subscribers\n"
"  key list --workspace ID\n"
"      one line per key: id prefix name scopes created_at revoked_at\n"
"  key revoke --id KEYID\n"
"      prints the key id (revoking a revoked key is not an error)\n"
"  facility create --name N\n"
"      prints the facility id\n"
"  facility member --facility ID --email E --privileges LIST\n"
"      prints the user id; the user holds exactly LIST in the facility\n"
"      (comma-separated names of a-z 0-9 _ : . -, \"\" for none),\n"
"      replacing what it held; the UI token checks a manifest's\n"
"      required_privilege against it\n"
"  extension create --facility ID --name NAME --version V [--category C]\n"
"                   [--status running] [--required-privilege P]\n"
"                   [--privileges LIST]\n"
"      prints the extension id; NAME: lowercase words joined by '-';\n"
"      status installing, running (default) or reloading; LIST: comma-\n"
"      separated, of ext:billing:read ext:billing:write ext:control:write\n"
"      (default none)\n"
"  extension list --facility ID\n"
"      one line per extension: id name version status\n"
"  extkey create --extension ID [--sandbox] [--privileges LIST]\n"
"                [--expires-in SECONDS]\n"
"      prints the new sk_live_ (--sandbox: sk_sandbox_) key, shown only\n"
"      once; needs --secret; privileges default to the extension's and\n"
"      may not exceed them (\"\" for none); no expiry by default, 0 or\n"
"      less makes an already expired key\n"
"  extkey list --extension ID\n"
"      one line per key: id prefix live|sandbox privileges created_at\n"
"      expires_at revoked_at\n"
"  extkey revoke --id KEYID\n"
"      prints the key id (revoking a revoked key is not an error)\n"
"  invoice create --facility ID --patient P --amount 12.50 --currency XOF\n"
"                 [--sandbox]\n"
"      prints the invoice id; pending_payment, live unless --sandbox\n"
"  admin create --facility ID --name N [--privileges LIST]\n"
"      prints the new sk_admin_ key (for /v1/extensions), shown only\n"
"      once; needs --secret; LIST: comma-separated, of\n"
"      admin:extensions:view admin:extensions:manage (default both)\n"
"  admin list --facility ID\n"
"      one line per credential: id prefix name privileges created_at\n"
"      revoked_at\n"
"  admin revoke --id ID\n"
"      prints the credential id (revoking twice is not an error)\n"
"  plan set --name N [--members N|none] [--storage BYTES] [--upload BYTES]\n"
"           [--custom-modules yes|no] [--sites N|none] [--webhooks N|none]\n"
"      creates the plan or changes the limits given; prints its name;\n"
"      a new plan: no member, site or webhook limit, 1 GiB storage,\n"
"      50 MiB per upload, custom modules allowed; none: no limit\n"
"  plan assign --workspace ID --name PLAN\n"
"      puts the workspace on the plan (audit log: plan.changed); prints\n"
"      the workspace id\n"
"  plan list\n"
"      one line per plan: name members storage upload custom_modules\n"
"      sites webhooks\n"
"  migrate [--dir DIR] [--check]\n"
"      applies the migrations of DIR (default: the build's sql/) the\n"
"      database has not recorded, in order, each in a transaction, under\n"
"      an advisory lock (hosts may run it at once); --check applies\n"
"      nothing, prints the pending ones and exits 1 if there is one\n"
"  account mail\n"
"      hands over the waiting password-reset and verification messages:\n"
"      one line each: id type email token (marked sent); needs --secret\n"
"  version\n"
"      prints cms-admin's release and where it finds the migrations\n"
"  help\n";


int
main(int argc, char **argv)
{
    int                         used;
    cms_admin_args_t            a;
    const cms_admin_command_t  *cmd;

    memset(&a, 0, sizeof(a));

    /* global options before the command: stop at the first word ("+") */

    if (cms_admin_parse(argc, argv, cms_admin_global_options, &a) != 0) {
        return 1;
    }

    argc -= optind;
    argv += optind;

    if (argc == 0) {
        cms_admin_usage(stderr);
        return 1;
    }

    cmd = cms_admin_find(argc, argv, &used);

    if (cmd == NULL) {
        return 1;
    }

    /* getopt skips argv[0], so it becomes the last word of the command,
     * and names the program in getopt's messages */

    argc -= used - 1;
    argv += used - 1;
    argv[0] = (char *) "cms-admin";

    if (cms_admin_parse(argc, argv, cmd->options, &a) != 0) {
        return 1;
    }

    if (optind != argc) {
        cms_admin_error("unexpected argument \"%s\"", argv[optind]);
        return 1;
    }

    return cms_admin_run(cmd, &a) == 0 ? 0 : 1;
}


/*
 * Prints "cms-admin: " and the message to stderr.  Returns -1, so that a
 * caller can "return cms_admin_error(...)".
 */

int
cms_admin_error(const char *fmt, ...)
{
    va_list  args;

    fputs("cms-admin: ", stderr);

    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);

    fputc('\n', stderr);

    return -1;
}


/* the command named by argv[0] (and argv[1]); *used words it took */

static const cms_admin_command_t *
cms_admin_find(int argc, char **argv, int *used)
{
    const cms_admin_command_t  *c;

    for (c = cms_admin_commands; c->noun != NULL; c++) {

        if (strcmp(argv[0], c->noun) != 0) {
            continue;
        }

        if (c->verb == NULL) {
            *used = 1;
            return c;
        }

        if (argc > 1 && strcmp(argv[1], c->verb) == 0) {
            *used = 2;
            return c;
        }
    }

    if (argc > 1) {
        cms_admin_error("unknown command \"%s %s\" (see cms-admin help)",
                        argv[0], argv[1]);

    } else {
        cms_admin_error("unknown command \"%s\" (see cms-admin help)",
                        argv[0]);
    }

    return NULL;
}


/*
 * getopt_long over argv with the given options, stopping at the first
 * non-option.  optind = 0 makes glibc start afresh on a new argv.
 */

static int
cms_admin_parse(int argc, char **argv, const struct option *options,
    cms_admin_args_t *a)
{
    int  opt, idx;

    optind = 0;

    for ( ;; ) {
        idx = -1;
        opt = getopt_long(argc, argv, "+h", options, &idx);

        if (opt == -1) {
            return 0;
        }

        if (opt == '?' || opt == ':') {
            /* getopt has printed what is wrong */
            fputs("cms-admin: see cms-admin help\n", stderr);
            return -1;
        }

        if (cms_admin_set(opt, idx >= 0 ? options[idx].name : "help", optarg,
                          a)
            != 0)
        {
            return -1;
        }
    }
}


/* stores one option; string options go by offset, as nginx conf setters */

static int
cms_admin_set(int opt, const char *name, char *arg, cms_admin_args_t *a)
{
    size_t        i;
    const char  **field;

    switch (opt) {

    case 'h':
        cms_admin_usage(stdout);
        exit(0);

    case CMS_ADMIN_OPT_VERIFIED:
        a->verified = 1;
        return 0;

    case CMS_ADMIN_OPT_INACTIVE:
        a->inactive = 1;
        return 0;

    case CMS_ADMIN_OPT_SUSPENDED:
        a->suspended = 1;
        return 0;

    case CMS_ADMIN_OPT_SANDBOX:
        a->sandbox = 1;
        return 0;

    case CMS_ADMIN_OPT_CHECK:
        a->check = 1;
        return 0;
    }

    for (i = 0; i < CMS_ADMIN_NFIELDS; i++) {

        if (cms_admin_fields[i].opt != opt) {
            continue;
        }

        field = (const char **) ((char *) a + cms_admin_fields[i].offset);

        if (*field != NULL) {
            return cms_admin_error("option --%s given twice", name);
        }

        *field = arg;

        return 0;
    }

    return cms_admin_error("unexpected option --%s", name);
}


/* connects and loads the secret as the command needs, then runs it */

static int
cms_admin_run(const cms_admin_command_t *cmd, cms_admin_args_t *a)
{
    int               rc;
    cms_admin_ctx_t  *ctx;

    /* calloc: the secret must not end up in a stack frame left behind */

    ctx = calloc(1, sizeof(cms_admin_ctx_t));

    if (ctx == NULL) {
        return cms_admin_error("out of memory");
    }

    if (a->db == NULL) {
        a->db = getenv("CMS_DATABASE_URL");
    }

    if (a->secret == NULL) {
        a->secret = getenv("CMS_SECRET_FILE");
    }

    rc = 0;

    if (cmd->need_secret) {
        rc = cms_admin_secret_load(ctx, a->secret);
    }

    if (rc == 0 && cmd->need_db) {
        rc = cms_admin_pg_connect(ctx, a->db);
    }

    if (rc == 0) {
        rc = cmd->handler(ctx, a);
    }

    if (ctx->pg != NULL) {
        PQfinish(ctx->pg);
    }

    OPENSSL_cleanse(ctx->secret, sizeof(ctx->secret));
    free(ctx);

    return rc;
}


static int
cms_admin_help(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    (void) ctx;
    (void) a;

    cms_admin_usage(stdout);

    return 0;
}


static int
cms_admin_version(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    (void) ctx;
    (void) a;

    printf("cms-admin %s (migrations: %s)\n", CMS_VERSION, CMS_ADMIN_SQL_DIR);

    return 0;
}


static void
cms_admin_usage(FILE *f)
{
    fputs(cms_admin_usage_text, f);
}
