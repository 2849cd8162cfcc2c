#
# microcache/guard.vcl: first checks of every request. The internal x-mc-*
# request headers cannot come from a client, and a method this VCL does not
# handle is refused before any other code path can send it on.
#

# The x-mc-* request headers carry decisions between the feature files (and
# across restarts); a client must not be able to send them in.
sub mc_guard_recv {
    if (req.restarts == 0) {
        unset req.http.x-mc-bypass;
        unset req.http.x-mc-static;
        unset req.http.x-mc-cache;
        unset req.http.x-mc-refresh;
        unset req.http.x-mc-serve-stale;
        unset req.http.x-mc-invalidated;
        unset req.http.x-mc-keys;
        unset req.http.x-mc-ban;
        unset req.http.x-mc-plain;
        unset req.http.x-mc-trusted;
        unset req.http.x-mc-debug;
        unset req.http.x-mc-http10;
        unset req.http.x-mc-device;
        unset req.http.x-mc-relay;
    }
    # TRACE, CONNECT, made-up methods: 405 with Allow (mc_guard_synth).
    if (req.method == "GET" || req.method == "HEAD" || req.method == "PURGE" ||
        req.method == "PURGEKEYS" || req.method == "BAN" || req.method == "POST" ||
        req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE" ||
        req.method == "OPTIONS") {
        return;
    }
    return (synth(405, "Method not allowed"));
}

sub mc_guard_synth {
    if (resp.status == 405) {
        set resp.http.Allow = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, PURGE, PURGEKEYS, BAN";
    }
}
