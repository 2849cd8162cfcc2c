#
# microcache/forwarded.vcl: Varnish owns the forwarding headers.
#

import proxy;

# WordPress believes them (HTTPS on for X-Forwarded-Proto: https, links built
# from the forwarded host) but they are not in the cache key, so a client could
# have a page stored with its value for everyone. Only Varnish knows how the
# request came in: a listen address named "https" (`-a https=...`, where a TLS
# terminator sends its traffic) or a PROXY v2 header from the terminator saying
# TLS. Text varies on X-Forwarded-Proto (plain-copy.vcl).
sub mc_forwarded_recv {
    if (local.socket == "https" || proxy.is_ssl()) {
        set req.http.X-Forwarded-Proto = "https";
    } else {
        set req.http.X-Forwarded-Proto = "http";
    }
}

# The client's own forwarding headers (and the purge token) never reach the
# origin, for fetches and passes alike. Removed here rather than on every
# request: a hit never talks to the origin, so it does not pay for them.
sub mc_forwarded_backend_fetch {
    unset bereq.http.Forwarded;
    unset bereq.http.X-Forwarded-Host;
    unset bereq.http.X-Forwarded-Port;
    unset bereq.http.X-Forwarded-Server;
    unset bereq.http.X-Original-URL;
    unset bereq.http.X-Rewrite-URL;
    unset bereq.http.X-Purge-Token;
}
