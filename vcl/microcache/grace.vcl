#
# microcache/grace.vcl: stale copies. An expired page is served at once while
# one background fetch refreshes it; an older one on a healthy origin is
# refreshed in the foreground; a failing refresh falls back to the stale copy
# (stale-if-error). How long: mc_policy_grace, mc_policy_healthy_grace.
#

import std;

# Restarts from mc_grace_hit and mc_grace_synth: a foreground refresh must not
# find the stale copy again (and so queues behind one shared fetch); a
# stale-if-error retry takes any copy, however old.
sub mc_grace_recv {
    if (req.http.x-mc-serve-stale) {
        unset req.http.x-mc-refresh;
        set req.grace = 365d;
    } elsif (req.http.x-mc-refresh) {
        set req.grace = 0s;
    }
}

# Stale object: serve it now while one background fetch refreshes it, if the
# origin is sick (stale-if-error) or the copy is only a little stale. An older
# copy on a healthy origin is refreshed in the foreground; the flag tells the
# fetch a stale copy exists, so a failing origin still gets it served
# (errors.vcl abandons, mc_grace_synth restarts).
sub mc_grace_hit {
    if (obj.ttl >= 0s) {
        return (deliver);
    }
    set req.http.x-mc-cache = "STALE";
    if (req.http.x-mc-serve-stale || !std.healthy(req.backend_hint)) {
        return (deliver);
    }
    call mc_policy_healthy_grace;
    set req.http.x-mc-refresh = "1";
    return (restart);
}

# Refreshes ask for the whole page, never If-Modified-Since / If-None-Match.
# WordPress dates its feeds to the second: after an edit made in the same
# second as the copy we hold, it answers 304, and a purged feed would come back
# with its old body until the next edit.
sub mc_grace_backend_fetch {
    if (!bereq.uncacheable) {
        unset bereq.http.If-Modified-Since;
        unset bereq.http.If-None-Match;
    }
}

# The foreground refresh of a stale page failed (abandoned in
# mc_errors_backend_response or mc_errors_backend_error): go back and serve
# the stale copy instead of an error.
sub mc_grace_synth {
    if (resp.status == 503 && req.http.x-mc-refresh) {
        set req.http.x-mc-serve-stale = "1";
        return (restart);
    }
}
