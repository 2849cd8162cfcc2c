#
# microcache/forwarded.vcl: Varnish owns the forwarding headers.
#

import proxy;
import var;

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
    # Varnish appended client.ip to the client's X-Forwarded-For: the chain
    # before it is kept only when the entry VCL vouches for the relay. The
    # setting first: without it (most requests) no regex runs.
    if (var.get("mc_trusted_relay") == "1" && req.http.X-Forwarded-For ~ ",") {
        set req.http.x-mc-relay = "1";
    }
}

# The client's own forwarding headers (and the purge token) never reach the
# origin, for fetches and passes alike. Removed here rather than on every
# request: a hit never talks to the origin, so it does not pay for them.
# X-Forwarded-For is the client's address (Varnish appended it last), nothing
# the client wrote; the other client-address headers go (WordPress plugins
# take them for the visitor's address: rate limits, logs, geolocation). The
# other spellings of the scheme and host go even on passes: Varnish owns
# X-Forwarded-Proto, and a scheme hint injected on plain HTTP would let a
# login page skip its redirect to HTTPS.
sub mc_forwarded_backend_fetch {
    if (bereq.http.x-mc-relay) {
        unset bereq.http.x-mc-relay;
    } elsif (bereq.http.X-Forwarded-For ~ ",") {
        set bereq.http.X-Forwarded-For = regsub(bereq.http.X-Forwarded-For, "^.*,\s*", "");
    }
    unset bereq.http.X-Real-IP;
    unset bereq.http.True-Client-IP;
    unset bereq.http.Client-IP;
    unset bereq.http.CF-Connecting-IP;
    unset bereq.http.Fastly-Client-IP;
    unset bereq.http.X-Cluster-Client-IP;
    unset bereq.http.X-Forwarded-Ssl;
    unset bereq.http.Front-End-Https;
    unset bereq.http.X-Forwarded-Scheme;
    unset bereq.http.X-Url-Scheme;
    unset bereq.http.X-Proto;
    unset bereq.http.CF-Visitor;
    unset bereq.http.CloudFront-Forwarded-Proto;
    unset bereq.http.X-Host;
    unset bereq.http.X-Forwarded-Prefix;
    unset bereq.http.Forwarded;
    unset bereq.http.X-Forwarded-Host;
    unset bereq.http.X-Forwarded-Port;
    unset bereq.http.X-Forwarded-Server;
    unset bereq.http.X-Original-URL;
    unset bereq.http.X-Rewrite-URL;
    unset bereq.http.X-Purge-Token;
}
