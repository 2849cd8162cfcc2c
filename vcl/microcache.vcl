#
# microcache.vcl: WordPress microcaching, grace, coalescing and invalidation.
#
# Include it from a VCL that defines the backend(s) and `acl purgers`, with
# -p vcl_path=<this folder> (or a list starting with your own folder, to
# shadow microcache/policy.vcl: see README.md, "Changing the policy"):
#
#     vcl 4.1;
#     backend default { .host = "127.0.0.1"; .port = "8081"; .probe = { ... } }
#     acl purgers { "127.0.0.1"; }
#     include "microcache.vcl";
#
# Optional settings, made by the entry VCL in a `sub vcl_recv` placed before
# the include (vmod var task variables: no client can set them):
#
#     var.set("mc_purge_token", "<secret>");  # PURGE/PURGEKEYS/BAN and refreshes also need X-Purge-Token: <secret>
#     var.set("mc_trusted_relay", "1");       # accept invalidations that came through a relay
#     var.set("mc_debug_headers", "all");     # X-Cache & co. for everyone, not only trusted clients
#
# Opt-in features, included by the entry before this file:
#     microcache/sick-origin.vcl              # fetch through an unprobed twin while the probe says sick
#     microcache/purge-listener.vcl           # invalidations only on the listener named purge
#     microcache/https-redirect.vcl           # plain HTTP readers redirected to HTTPS
#
# This file only composes: one feature per file under microcache/, its
# subroutines named mc_<feature>_<phase> (mc_invalidate_recv, ...), called
# below in the order they must run. Internal request headers are named x-mc-*
# (guard.vcl strips them from clients); objects carry x-url / x-host for bans.
#
vcl 4.1;

include "microcache/policy.vcl";        # tunables; found through vcl_path, so it can be shadowed
include "./microcache/guard.vcl";       # x-mc-* from clients, unknown methods
include "./microcache/normalize.vcl";   # host, URL, cookies, Vary
include "./microcache/trust.vcl";       # acl purgers, directly
include "./microcache/health.vcl";      # /varnish-health
include "./microcache/purge-token.vcl"; # what a usable X-Purge-Token is
include "./microcache/invalidate.vcl";  # PURGE, PURGEKEYS, BAN
include "./microcache/refresh.vcl";     # re-fetch a page after its invalidation (GET + X-Refresh)
include "./microcache/forwarded.vcl";   # X-Forwarded-Proto and friends
include "./microcache/bypass.vcl";      # personal traffic
include "./microcache/static.vcl";      # assets
include "./microcache/cors.vcl";        # public CORS
include "./microcache/device.vcl";      # Vary: User-Agent by device class
include "./microcache/origin-headers.vcl"; # allowlist of request headers on cacheable fetches
include "./microcache/grace.vcl";       # stale copies
include "./microcache/errors.vcl";      # origin errors
include "./microcache/ttl.vcl";         # TTL, hit-for-miss
include "./microcache/plain-copy.vcl";  # gzip and plain copies
include "./microcache/debug.vcl";       # X-Cache & co.
include "./microcache/http10.vcl";      # HTTP/1.0 keep-alive clients

sub vcl_recv {
    call mc_guard_recv;
    call mc_normalize_recv_host;
    call mc_trust_recv;
    call mc_health_recv;
    call mc_normalize_recv_url;
    call mc_invalidate_recv;
    call mc_forwarded_recv;
    call mc_refresh_recv_request;
    call mc_bypass_recv_method;
    call mc_static_recv;
    call mc_bypass_recv_personal;
    call mc_normalize_recv_cookies;
    call mc_device_recv;
    call mc_grace_recv;
    return (hash);
}

sub vcl_hash {
    call mc_plain_copy_hash;
}

sub vcl_hit {
    call mc_refresh_hit;
    call mc_debug_hit;
    call mc_http10_hit;
    call mc_grace_hit;
}

sub vcl_miss {
    call mc_invalidate_miss;
    call mc_refresh_miss;
    call mc_debug_miss;
    call mc_http10_miss;
}

sub vcl_pass {
    call mc_refresh_pass;
}

sub vcl_backend_fetch {
    call mc_forwarded_backend_fetch;
    call mc_plain_copy_backend_fetch;
    call mc_grace_backend_fetch;
    call mc_invalidate_backend_fetch;
    call mc_http10_backend_fetch;
    call mc_device_backend_fetch;
    call mc_origin_headers_backend_fetch;
    call mc_bypass_backend_fetch;
}

sub vcl_backend_response {
    if (bereq.uncacheable) {
        return (deliver);
    }
    call mc_http10_backend_response;
    call mc_invalidate_backend_response_meta;
    call mc_errors_backend_response;
    call mc_normalize_backend_response;
    call mc_device_backend_response;
    call mc_plain_copy_backend_response;
    call mc_invalidate_backend_response_inflight;
    call mc_static_backend_response;
    call mc_ttl_backend_response;
    return (deliver);
}

sub vcl_backend_error {
    call mc_errors_backend_error;
}

sub vcl_deliver {
    call mc_debug_deliver;
    call mc_ttl_deliver;
    call mc_plain_copy_deliver;
    call mc_device_deliver;
    call mc_invalidate_deliver;
    call mc_refresh_deliver;
    call mc_http10_deliver;
}

# Synthetic answers (invalidation results, refusals, /varnish-health) are a
# line of text/plain.
sub vcl_synth {
    call mc_refresh_synth;
    call mc_grace_synth;
    call mc_debug_synth;
    set resp.http.Content-Type = "text/plain; charset=utf-8";
    call mc_invalidate_synth;
    call mc_guard_synth;
    call mc_health_synth;
    set resp.body = "" + resp.status + " " + resp.reason + {"
"};
    return (deliver);
}
