
/*
 * The video provider (cms_video_provider): a streaming service that hosts
 * the videos' files.  The routes (ngx_http_cms_streams.c) know only the
 * interface below; each provider fills it (ngx_http_cms_streams_bunny.c:
 * Bunny Stream).  A provider's API is called through an in-memory
 * subrequest to the internal location cms_video_fetch_location, which
 * proxies to $cms_fetch_url with $cms_fetch_method, $cms_fetch_body and
 * the provider's key ($cms_video_access_key).
 */


#ifndef _NGX_HTTP_CMS_STREAMS_H_INCLUDED_
#define _NGX_HTTP_CMS_STREAMS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <jansson.h>
#include "ngx_http_cms_module.h"


typedef struct ngx_http_cms_video_provider_s  ngx_http_cms_video_provider_t;


/* cms_video_provider NAME library=ID api_key_file=PATH [api=URL]
   [upload_ttl=TIME] */
struct ngx_http_cms_video_conf_s {
    const ngx_http_cms_video_provider_t  *provider;
    ngx_str_t                   library;     /* the provider's library id */
    ngx_str_t                   key_file;
    ngx_str_t                   key;         /* from key_file; secret */
    ngx_str_t                   api;         /* base URL, no trailing "/" */
    ngx_msec_t                  upload_ttl;  /* upload credentials' life */
};


/* one call to the provider's API: what the fetch location sends */
typedef struct {
    ngx_str_t                   method;
    ngx_str_t                   url;
    ngx_str_t                   body;        /* JSON text; may be empty */
} ngx_http_cms_video_call_t;


/* a video as the provider reports it, in the spec's terms */
typedef struct {
    ngx_str_t                   id;          /* stream_video_id */
    ngx_str_t                   status;      /* pending .. failed */
    double                      duration;    /* seconds; 0: not known */
} ngx_http_cms_video_state_t;


/*
 * A provider's operations.  Every function answers NGX_OK, NGX_DECLINED
 * for an answer of the provider it cannot read (logged; the route answers
 * 502 provider_error), or NGX_ERROR.  Memory comes from r->pool.
 *
 *   id_valid     whether a path's stream id has the provider's form
 *   create       the call that creates a video titled "title"
 *   created      the id of the video a create answer describes
 *   credentials  adds to "out" what a client needs to upload the file of
 *                video "id" itself (signature, expiry, endpoint...)
 *   poll         the call that reads video "id"
 *   polled       the state a poll answer describes
 */
struct ngx_http_cms_video_provider_s {
    ngx_str_t                   name;
    ngx_str_t                   api;         /* the default of api= */
    ngx_int_t                 (*id_valid)(ngx_str_t *id);
    ngx_int_t                 (*create)(ngx_http_request_t *r,
                                        ngx_http_cms_video_conf_t *vcf,
                                        ngx_str_t *title,
                                        ngx_http_cms_video_call_t *call);
    ngx_int_t                 (*created)(ngx_http_request_t *r,
                                         ngx_str_t *answer,
                                         ngx_http_cms_video_state_t *st);
    ngx_int_t                 (*credentials)(ngx_http_request_t *r,
                                             ngx_http_cms_video_conf_t *vcf,
                                             ngx_str_t *id, json_t *out);
    ngx_int_t                 (*poll)(ngx_http_request_t *r,
                                      ngx_http_cms_video_conf_t *vcf,
                                      ngx_str_t *id,
                                      ngx_http_cms_video_call_t *call);
    ngx_int_t                 (*polled)(ngx_http_request_t *r,
                                        ngx_str_t *answer,
                                        ngx_http_cms_video_state_t *st);
};


/* Bunny Stream (ngx_http_cms_streams_bunny.c) */
extern const ngx_http_cms_video_provider_t  ngx_http_cms_streams_bunny;


/*
 * The "cms_video_provider" directive: the provider by name, its library,
 * its API key read from a file now (never written in nginx.conf, never
 * logged), its API's base URL, the upload credentials' lifetime.
 */
char *ngx_http_cms_streams_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_CMS_STREAMS_H_INCLUDED_ */
