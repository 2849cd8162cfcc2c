# bench/minimal-varnish.vcl: the reference the full VCL's hot path is measured against in
# make bench ("minimal" column): the least a WordPress microcache needs and nothing else.
# A 1 s TTL, grace, and cookies stripped from anonymous requests; logged-in users, write
# methods and Set-Cookie answers go to the origin (the builtin VCL's checks). No
# normalization, no invalidation, no debug headers, no plain/gzip copies, and not
# vcl/microcache/http10.vcl: HTTP/1.0 keep-alive clients (ab -k) get streamed bodies without a
# length under "Connection: keep-alive" and fail, so make bench runs ab against NGINX and the full
# VCL only. The wrk runs this file is the reference for are HTTP/1.1, where that fix changes nothing.
# bench/varnish-microcache.sh renders the entry (vcl/render-entry.sh --minimal: the origin) that
# includes this file.

sub vcl_recv {
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    if (req.http.Cookie ~ "wordpress_logged_in_|wp-postpass_|comment_author_") {
        return (pass);
    }
    unset req.http.Cookie;
    return (hash);
}

sub vcl_backend_response {
    set beresp.ttl = 1s;
    set beresp.grace = 24h;
}
