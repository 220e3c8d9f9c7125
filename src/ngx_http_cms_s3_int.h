
/*
 * The S3 backend's private types (ngx_http_cms_s3.c: the exchanges,
 * ngx_http_cms_s3_conf.c: the directive and the variables).
 */


#ifndef _NGX_HTTP_CMS_S3_INT_H_INCLUDED_
#define _NGX_HTTP_CMS_S3_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_s3.h"
#include "cms_sigv4.h"


/* the variables the locations read, in this order */
typedef enum {
    NGX_HTTP_CMS_S3_URL = 0,
    NGX_HTTP_CMS_S3_URI,
    NGX_HTTP_CMS_S3_HOST,
    NGX_HTTP_CMS_S3_METHOD,
    NGX_HTTP_CMS_S3_AUTHORIZATION,
    NGX_HTTP_CMS_S3_DATE,
    NGX_HTTP_CMS_S3_SHA256,
    NGX_HTTP_CMS_S3_TYPE,
    NGX_HTTP_CMS_S3_TOKEN,
    NGX_HTTP_CMS_S3_VARS
} ngx_http_cms_s3_var_e;


struct ngx_http_cms_s3_conf_s {
    /* the directive's parameters */
    ngx_str_t                   endpoint;
    ngx_str_t                   bucket;
    ngx_str_t                   region;
    ngx_str_t                   credentials;
    ngx_str_t                   stage;
    ngx_str_t                   path_style;
    ngx_str_t                   prefix;
    ngx_str_t                   base_url;
    ngx_str_t                   multipart_text;
    ngx_str_t                   part_text;
    ngx_str_t                   reads;      /* "proxy" or "redirect" */
    ngx_msec_t                  expires;    /* a presigned URL's life */

    /* derived */
    ngx_str_t                   origin;     /* "http://host:port" */
    ngx_str_t                   host;       /* the Host header */
    ngx_str_t                   root;       /* "/bucket/prefix" or
                                               "/prefix" */
    ngx_str_t                   key_id;
    ngx_str_t                   secret;
    ngx_str_t                   token;
    off_t                       multipart;  /* objects above: in parts */
    off_t                       part_size;
    ngx_uint_t                  redirect;   /* reads=redirect */
    cms_sigv4_cache_t           cache;

    /* the sweeper's requests, on the client (ngx_http_cms_client.h) */
    ngx_str_t                   peer;       /* the Host's name, no [] nor
                                               port, NUL-terminated */
    in_port_t                   port;
    ngx_ssl_t                  *ssl;        /* https: certificate checked */
    ngx_str_t                   bucket_root; /* "/bucket/" or "/" */
};


typedef struct ngx_http_cms_s3_op_s  ngx_http_cms_s3_op_t;

/* after an exchange, from its parent request's event handler */
typedef ngx_int_t (*ngx_http_cms_s3_step_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_s3_op_t *op);


/* a write or a delete: its exchanges one after the other */
struct ngx_http_cms_s3_op_s {
    ngx_http_cms_s3_done_pt     done;        /* the caller's, at the end */
    void                       *data;
    ngx_str_t                   key;
    u_char                     *path;        /* the staged file */
    ngx_file_t                 *file;        /* open once, when sent */
    off_t                       size;
    ngx_uint_t                  reported;    /* done() called */

    /* the exchange in flight: its body and what it got */
    ngx_str_t                   method;
    ngx_http_cms_s3_step_pt     next;
    off_t                       body_off;    /* a range of the file */
    off_t                       body_len;
    ngx_str_t                   body;        /* or bytes in memory */
    ngx_uint_t                  status;      /* 0: no answer */
    ngx_str_t                   answer;      /* its body (bounded) */
    ngx_str_t                   etag;

    /* a multipart upload (ngx_http_cms_s3_multipart.c) */
    ngx_uint_t                  parts;
    ngx_uint_t                  part;        /* the one in flight, from 1 */
    u_char                     *hashes;      /* 64 hex digits a part */
    ngx_str_t                   upload_id;
    ngx_str_t                  *etags;
    ngx_uint_t                  failed;      /* reported after the abort */
};


/* the variables' indexes (ngx_http_cms_s3_conf.c) */
extern ngx_int_t  ngx_http_cms_s3_index[NGX_HTTP_CMS_S3_VARS];


extern ngx_str_t  ngx_http_cms_s3_put;
extern ngx_str_t  ngx_http_cms_s3_delete;

/* one exchange of "op" with the bucket (ngx_http_cms_s3.c) */
ngx_int_t ngx_http_cms_s3_exchange(ngx_http_request_t *r,
    ngx_http_cms_s3_op_t *op, ngx_str_t *method, ngx_str_t *query,
    u_char *sha256, const char *type, ngx_http_cms_s3_step_pt next);

/* the bucket's configuration of r's server */
#define ngx_http_cms_s3_scf(r)                                               \
    (((ngx_http_cms_main_conf_t *)                                            \
      ngx_http_get_module_main_conf(r, ngx_http_cms_module))->s3)

/*
 * "method" of root (NULL: the keys' root, "/bucket/prefix") + key, with
 * "query", signed now: the variables' values into vars, in pool
 */
ngx_int_t ngx_http_cms_s3_sign(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_cms_s3_conf_t *scf, ngx_str_t *root, ngx_str_t *method,
    ngx_str_t *key, ngx_str_t *query, u_char *sha256, const char *type,
    ngx_str_t *vars);

/* the caller's done(op->data, status), once */
ngx_int_t ngx_http_cms_s3_report(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_s3_op_t *op, ngx_uint_t status);

/* the Content-Type of "key"; "name" then a value escaped for a query */
const char *ngx_http_cms_s3_type(ngx_str_t *key);
u_char *ngx_http_cms_s3_param(u_char *p, const char *name, u_char *value,
    size_t len);

/* $cms_s3_authorization and $cms_s3_date of a read (data: which) */
ngx_int_t ngx_http_cms_s3_signed_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);

/* whether op's object goes in parts; the multipart upload started */
ngx_uint_t ngx_http_cms_s3_multipart(ngx_http_request_t *r,
    ngx_http_cms_s3_op_t *op);
ngx_int_t ngx_http_cms_s3_parts(ngx_http_request_t *r,
    ngx_http_cms_s3_op_t *op);


#endif /* _NGX_HTTP_CMS_S3_INT_H_INCLUDED_ */
