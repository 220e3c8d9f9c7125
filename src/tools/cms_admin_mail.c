
/*
 * cms-admin account mail: hands over the account messages waiting in
 * account_outbox (sql/0019_account_recovery.sql): password resets and
 * email verifications.  Each is marked sent, and printed as one
 * tab-separated line: the message's id, type, address and token, whose
 * link the mailer builds.  The token is made again here from the token
 * row's id under cms_secret (cms_token_random_for()), exactly as the
 * module made it; the database never held it.  A message whose token is
 * no longer open (used, superseded, expired) is marked sent, not printed.
 */


#include "cms_admin.h"
#include "cms_token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const cms_admin_query_t  cms_admin_mail_take = {
    "account mail",
    "WITH s AS (UPDATE account_outbox o SET sent_at = now()"
    "  FROM account_tokens t"
    "  WHERE o.sent_at IS NULL AND t.id = o.token_id"
    "  RETURNING o.id, o.type, o.email, t.id::text AS token_id, t.kind,"
    "   extract(epoch FROM t.expires_at)::bigint AS expires,"
    "   t.used_at IS NULL AND t.expires_at > now() AS open)"
    " SELECT id, type, email, token_id, kind, expires FROM s WHERE open"
    " ORDER BY id",
    0, NULL
};


/* long: take the messages, then per message make its token and print it */
int
cms_admin_account_mail(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int            i, n, rc;
    size_t         len;
    PGresult      *res;
    const char    *id;
    char           token[CMS_TOKEN_MAX_LEN + 1];
    unsigned char  key[CMS_TOKEN_KEY_LEN], rnd[CMS_TOKEN_RANDOM_LEN];

    (void) a;

    if (cms_admin_secret_derive(ctx, CMS_TOKEN_KDF_LABEL, key) != 0) {
        return -1;
    }

    res = cms_admin_pg_run(ctx, &cms_admin_mail_take, NULL);
    if (res == NULL) {
        memset(key, 0, sizeof(key));
        return -1;
    }

    n = PQntuples(res);
    rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        id = PQgetvalue(res, i, 3);
        len = 0;

        if (cms_token_random_for(key, id, strlen(id), rnd) == 0) {
            len = cms_token_make(key, PQgetvalue(res, i, 4),
                                 strtoll(PQgetvalue(res, i, 5), NULL, 10),
                                 rnd, token, CMS_TOKEN_MAX_LEN);
        }

        if (len == 0) {
            rc = cms_admin_error("cannot make the token of message %s",
                                 PQgetvalue(res, i, 0));
            break;
        }

        token[len] = '\0';
        printf("%s\t%s\t%s\t%s\n", PQgetvalue(res, i, 0),
               PQgetvalue(res, i, 1), PQgetvalue(res, i, 2), token);
    }

    memset(key, 0, sizeof(key));
    memset(rnd, 0, sizeof(rnd));
    memset(token, 0, sizeof(token));
    PQclear(res);

    return rc;
}
