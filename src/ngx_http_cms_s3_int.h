
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

    /* derived */
    ngx_str_t                   origin;     /* "http://host:port" */
    ngx_str_t                   host;       /* the Host header */
    ngx_str_t                   root;       /* "/bucket/prefix" or
                                               "/prefix" */
    ngx_str_t                   key_id;
    ngx_str_t                   secret;
    ngx_str_t                   token;
    cms_sigv4_cache_t           cache;
};


/* the variables' indexes (ngx_http_cms_s3_conf.c) */
extern ngx_int_t  ngx_http_cms_s3_index[NGX_HTTP_CMS_S3_VARS];


#endif /* _NGX_HTTP_CMS_S3_INT_H_INCLUDED_ */
