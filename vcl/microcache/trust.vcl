#
# microcache/trust.vcl: who is trusted. An address in `acl purgers` (defined by
# the entry VCL) talking to Varnish directly may invalidate (invalidate.vcl)
# and sees the cache state (debug.vcl).
#

import std;
import var;

# A relay (TLS terminator, proxy) in front adds forwarding headers: its address
# being in the ACL must not make all its clients trusted. Varnish itself puts
# the peer's address in X-Forwarded-For, alone, or after a comma when the
# client sent one: a comma means the request came from before us. (A test for
# the comma, not a compare with "" + client.ip: formatting the address costs
# more than the rest of a cache hit.)
# Via likewise: from 7.3 on (7.7, Vinyl Cache 9.0) Varnish appends its own
# "1.1 <identity> (Varnish/7.7)" or "(Vinyl-Cache/9.0)" before vcl_recv, after
# any Via the client sent and a comma. Only that entry, alone and naming this
# server, is ours; 7.1 adds none. Any other Via is a relay's.
# A relay that adds no forwarding header is still a relay: a request on the
# listen address named "https" came through the TLS terminator (client.ip is
# the terminator's), and a PROXY header that names another peer than the
# connection's own (client.ip or its port differ from remote.ip's) is a claim
# anyone who reaches that port can make. Neither is trusted; the entry VCL can
# vouch for its relays by their real address (remote.ip) with
# var.set("mc_trusted_relay", "1"), which lets their invalidations through
# (acl purgers on client.ip and the token still apply). These compares run
# only for ACL addresses.
# Trusted clients also see the cache state (X-Cache, X-Cache-Hits, Age...);
# others only when the entry VCL sets var mc_debug_headers to "all".
sub mc_trust_recv {
    if (req.restarts == 0) {
        if (client.ip ~ purgers &&
            local.socket != "https" && client.ip == remote.ip &&
            std.port(client.ip) == std.port(remote.ip) &&
            req.http.X-Forwarded-For !~ "," && !req.http.Forwarded &&
            !req.http.X-Real-IP && !req.http.True-Client-IP &&
            (!req.http.Via ||
             (req.http.Via ~ "^1\.1 [^ ,]+ \((Varnish|Vinyl-Cache)/[0-9.]+\)$" &&
              regsub(req.http.Via, "^1\.1 ([^ ]+) .*$", "\1") == server.identity))) {
            set req.http.x-mc-trusted = "1";
            set req.http.x-mc-debug = "1";
        } elsif (var.get("mc_debug_headers") == "all") {
            set req.http.x-mc-debug = "1";
        }
    }
}
