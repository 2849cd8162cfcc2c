#
# microcache/https-redirect.vcl (opt-in): readers who reach Varnish over plain
# HTTP are sent to the same URL over HTTPS, through the TLS front
# (stack/images/tls: hitch, PROXY v2 to `-a https=:8443,PROXY`).
#
# Include it from the entry VCL before microcache.vcl:
#
#     include "microcache/https-redirect.vcl";
#     include "microcache.vcl";
#
# Over HTTPS means what forwarded.vcl calls https: the listen address named
# "https" or a PROXY v2 header with the TLS flag. Any other request gets
#   GET, HEAD                          301 to https://<host><url>
#   POST, PUT, PATCH, DELETE, OPTIONS  308 to the same: the browser repeats the
#       method and body over HTTPS; the origin never gets them in clear text
#       (a form posted to an http:// URL has already crossed the network once,
#       but it goes no further, and a 403 would lose it for good)
# except
#   - trusted clients (acl purgers, directly: trust.vcl): the purger's PURGE,
#     PURGEKEYS, BAN and refresh GETs, which reach the node over plain HTTP, and
#     whatever runs beside Varnish (k6, the audit, an operator's curl);
#   - GET and HEAD /varnish-health (load balancers probe plain HTTP);
#   - PURGE, PURGEKEYS, BAN from anyone else: invalidate.vcl refuses them (403),
#     and methods guard.vcl refuses (405); requests without Host get
#     normalize.vcl's 400, and a Host that is not a host name (or a URL that is
#     not a path) a 400 here: neither goes into a Location.
# <host> is the request's Host (or the host of an absolute-form URL) in the
# cache key's spelling, without its port: readers come in on :80 or :8080 and
# HTTPS is on 443. The redirect is a synth: never cached, the origin untouched.
#
# Setting (a vmod var task variable, like microcache.vcl's, set by the entry in
# a `sub vcl_recv` placed before the includes):
#
#     var.set("mc_https_port", "8443");  # HTTPS is published on another port than 443
#
# Order: this file's vcl_recv runs before microcache.vcl's (VCL joins
# same-named subs in include order), so guard, host normalization and trust
# have not run yet. It runs those three first itself, on plain HTTP only and in
# microcache.vcl's order, so the decision sees what the rest of the VCL sees (no
# client-sent x-mc-trusted, the normalized host); microcache.vcl runs them again,
# which changes nothing. HTTPS readers, the hot path, pay two compares.
#

import proxy;
import var;

sub mc_https_redirect_recv {
    if (req.restarts > 0 || local.socket == "https" || proxy.is_ssl()) {
        return;
    }
    if (req.method == "GET" || req.method == "HEAD") {
        if (req.url == "/varnish-health") {
            return;
        }
    } elsif (req.method != "POST" && req.method != "PUT" && req.method != "PATCH" &&
             req.method != "DELETE" && req.method != "OPTIONS") {
        return;
    }
    call mc_guard_recv;
    call mc_normalize_recv_host;
    call mc_trust_recv;
    if (req.http.x-mc-trusted) {
        return;
    }
    # Both go into Location: a host name or [IPv6 address] (its port is
    # dropped), a path (not OPTIONS' "*").
    if (req.http.host !~ "^([a-z0-9_.-]+|\[[0-9a-f:.]+\])(:[0-9]{1,5})?$" || req.url !~ "^/") {
        return (synth(400, "Bad Request"));
    }
    if (var.get("mc_https_port") ~ "^[0-9]{1,5}$" && var.get("mc_https_port") != "443") {
        var.set("mc_https_location", "https://" + regsub(req.http.host, ":[0-9]+$", "") +
            ":" + var.get("mc_https_port") + req.url);
    } else {
        var.set("mc_https_location", "https://" + regsub(req.http.host, ":[0-9]+$", "") + req.url);
    }
    if (req.method == "GET" || req.method == "HEAD") {
        return (synth(301, "Moved Permanently"));
    }
    return (synth(308, "Permanent Redirect"));
}

sub mc_https_redirect_synth {
    if (var.get("mc_https_location") && (resp.status == 301 || resp.status == 308)) {
        set resp.http.Location = var.get("mc_https_location");
    }
}

sub vcl_recv {
    call mc_https_redirect_recv;
}

sub vcl_synth {
    call mc_https_redirect_synth;
}
