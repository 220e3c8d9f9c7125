# Varnish in front of the module (docs/public-surface.md, "Varnish"): the public
# surface's answers say themselves what a shared cache may keep (Cache-Control, Vary),
# so its reads are looked up in the cache even with an Authorization header; their
# Surrogate-Key becomes xkey (varnish-modules), and "cms_cdn_purge" purges by it
# when a site publishes.
vcl 4.1;

import xkey;

backend cms {
    .host = "127.0.0.1";
    .port = "8080";
}

# the hosts whose worker 0 sends the purges (cms_cdn_purge)
acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Forbidden"));
        }
        if (!req.http.xkey) {
            return (synth(400, "No xkey"));
        }
        set req.http.n-gone = xkey.purge(req.http.xkey);
        return (synth(200, "Purged " + req.http.n-gone));
    }
    if (req.url ~ "^/v1/public/" && (req.method == "GET" || req.method == "HEAD")) {
        # ?key= answers are public; header-keyed ones private, which the built-in
        # vcl_backend_response never stores
        unset req.http.Cookie;
        return (hash);
    }
}

sub vcl_backend_response {
    if (beresp.http.Surrogate-Key) {
        set beresp.http.xkey = beresp.http.Surrogate-Key;
    }
}

sub vcl_deliver {
    unset resp.http.xkey;
}
