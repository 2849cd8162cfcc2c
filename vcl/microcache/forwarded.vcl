#
# microcache/forwarded.vcl: Varnish owns the forwarding headers.
#

import proxy;

# WordPress believes them (HTTPS on for X-Forwarded-Proto: https, links built
# from the forwarded host) but they are not in the cache key, so a client could
# have a page stored with its value for everyone. Only Varnish knows how the
# request came in: a listen address named "https" (`-a https=...`, where a TLS
# terminator sends its traffic) or a PROXY v2 header from the terminator saying
# TLS. Requests that pass carry the same values, so the origin never sees a
# client's. Text varies on X-Forwarded-Proto (plain-copy.vcl).
sub mc_forwarded_recv {
    unset req.http.Forwarded;
    unset req.http.X-Forwarded-Host;
    unset req.http.X-Forwarded-Port;
    unset req.http.X-Forwarded-Server;
    unset req.http.X-Original-URL;
    unset req.http.X-Rewrite-URL;
    unset req.http.X-Purge-Token;
    if (local.socket == "https" || proxy.is_ssl()) {
        set req.http.X-Forwarded-Proto = "https";
    } else {
        set req.http.X-Forwarded-Proto = "http";
    }
}
