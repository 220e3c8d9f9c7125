# Varnish in front of the module (docs/public-surface.md, "Varnish"): the public
# surface's answers say themselves what a shared cache may keep (Cache-Control, Vary),
# so its reads are looked up in the cache even with an Authorization header.
vcl 4.1;

backend cms {
    .host = "127.0.0.1";
    .port = "8080";
}

sub vcl_recv {
    if (req.url ~ "^/v1/public/" && (req.method == "GET" || req.method == "HEAD")) {
        # ?key= answers are public; header-keyed ones private, which the built-in
        # vcl_backend_response never stores
        unset req.http.Cookie;
        return (hash);
    }
}
