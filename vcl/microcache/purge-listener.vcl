#
# microcache/purge-listener.vcl (opt-in): the purger's requests only on the
# listen address named "purge", readers' only on the others.
#
# Why: on one port, readers and the purger are told apart by `acl purgers` and
# X-Purge-Token alone, which a network policy cannot see. With a port of its
# own for invalidations, the network (a Kubernetes NetworkPolicy, a firewall)
# admits to it only the purger, and the ACL and the token still apply there.
#
# Include it from the entry VCL before microcache.vcl and before
# https-redirect.vcl (`render-entry.sh --purge-listener` does), and give
# varnishd a listener named purge beside the readers' own:
#
#     varnishd -a http=:8080,HTTP -a purge=:8088,HTTP ...
#
#     include "microcache/purge-listener.vcl";
#     include "microcache.vcl";
#
# The purger's requests are what invalidate.vcl and refresh.vcl act on, and
# all the purger sends (purger/src/delivery/varnish-client.ts): PURGE,
# PURGEKEYS, BAN, and a GET with X-Refresh (trusted like PURGE).
#   - On any other listener they are refused: 403 "Invalidations are taken only
#     on the purge port". A 403, which the purger retries until the operator
#     points it at the right port, not a 405, which it would take for a refused
#     request shape and send again as ever wider bans.
#   - On the purge listener they go on to invalidate.vcl and refresh.vcl, which
#     check acl purgers, directly (trust.vcl), and the token as on any port.
# Anything else on the purge listener is refused too: 403 "The purge port takes
# only invalidations and refreshes", except GET and HEAD /varnish-health (a
# probe of the listener itself; the origin is never asked). Serving readers
# there would make a Service or Ingress pointed at the wrong port work, quietly
# mixing readers into the port the policy keeps for the purger; refused, that
# mistake shows at once, and the refresh's "read in the last 60 s" counts real
# readers only.
#
# Order: this file's vcl_recv runs before microcache.vcl's (VCL joins
# same-named subs in include order). Before refusing it runs guard.vcl and
# trust.vcl itself, so the 403 sees no client-sent x-mc-* header (trusted
# clients get X-Cache: SYNTH, others nothing). Readers on their own port pay
# one socket compare, three method compares and a header lookup. A restart
# (grace.vcl, after refresh.vcl removed X-Refresh) is the request already let
# through.
#

import std;

sub mc_purge_listener_recv {
    if (req.restarts > 0) {
        return;
    }
    if (local.socket != "purge") {
        if (req.method == "PURGE" || req.method == "PURGEKEYS" || req.method == "BAN" || req.http.X-Refresh) {
            call mc_guard_recv;
            call mc_trust_recv;
            std.log("mc: " + req.method + " refused: not on the listener named purge");
            return (synth(403, "Invalidations are taken only on the purge port"));
        }
        return;
    }
    if (req.method == "PURGE" || req.method == "PURGEKEYS" || req.method == "BAN" || req.http.X-Refresh) {
        return;
    }
    if (req.url == "/varnish-health" && (req.method == "GET" || req.method == "HEAD")) {
        return;
    }
    call mc_guard_recv;
    call mc_trust_recv;
    std.log("mc: " + req.method + " " + req.url + " refused: reader traffic on the purge listener");
    return (synth(403, "The purge port takes only invalidations and refreshes"));
}

sub vcl_recv {
    call mc_purge_listener_recv;
}
