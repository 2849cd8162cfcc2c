#
# microcache/policy.vcl: the tunables (TTLs, grace). Every number microcache.vcl
# uses about time lives here, in one subroutine per decision.
#
# microcache.vcl includes this file as "microcache/policy.vcl" through vcl_path
# (the other feature files are included relative to microcache.vcl). To change
# a number without forking, copy this file to <your folder>/microcache/policy.vcl,
# edit it, and put <your folder> first: -p vcl_path=<your folder>:<this repo>/vcl.
# Keep every subroutine (microcache.vcl calls each of them) and keep their names;
# see vcl/README.md, "Changing the policy".
#

import header;

# Request headers a cacheable fetch (miss, refresh) sends the origin besides
# Varnish's own (Host, User-Agent by device class, Accept-Encoding,
# X-Forwarded-For, X-Forwarded-Proto, X-Varnish: origin-headers.vcl). Every
# other header line arrives here prefixed "x-mc-drop: "; the names listed in
# (?i)(...) get their own name back, the rest is removed. Accept: a REST or
# image-format answer may depend on it (say Vary: Accept then). Add a name only
# if the origin sends Vary on it, or every visitor shares the first one's answer.
sub mc_policy_origin_headers {
    header.regsub(bereq, "^x-mc-drop: (?=(?i)(accept)[ \t]*:)", "");
}

# TTL of a page that did not ask for one (no s-maxage, no Surrogate-Control).
# One second turns a traffic spike into one origin request per URL per second.
sub mc_policy_default_ttl {
    set beresp.ttl = 1s;
}

# How long an expired object is kept to be served stale. This is the
# stale-if-error window: while the backend probe says sick, anything this old
# is still served.
sub mc_policy_grace {
    set beresp.grace = 24h;
}

# How stale a page may be served while the backend is healthy (one background
# fetch refreshes it). Older than this, a healthy origin is asked in the
# foreground instead, so a quiet page is never hours out of date.
sub mc_policy_healthy_grace {
    if (obj.ttl + 10s > 0s) {
        return (deliver);
    }
}

# Upper bound for 404/410: a missing page may appear any moment (a scheduled post).
sub mc_policy_not_found_ttl {
    if (beresp.ttl > 30s) {
        set beresp.ttl = 30s;
    }
}

# Static assets are versioned by WordPress (?ver=), so they can live long.
sub mc_policy_static_ttl {
    set beresp.ttl = 7d;
}

# How long an "uncacheable" verdict (hit-for-miss) is remembered. During it,
# requests for that URL go to the origin in parallel instead of queueing.
sub mc_policy_uncacheable_ttl {
    set beresp.ttl = 30s;
}

# A 5xx answered in the foreground is shared with the requests queued behind
# it for this long, then forgotten.
sub mc_policy_error_ttl {
    set beresp.ttl = 1s;
    set beresp.grace = 0s;
    set beresp.keep = 0s;
}

# How long a passed request (a write, wp-admin, a logged-in or previewing
# visitor: bypass.vcl) waits for the origin. Someone is waiting on one
# operation that cannot be retried (Move to Trash on 500 posts, an import, a
# core update streaming its progress), so Varnish waits longer than any usual
# origin limit (nginx 60 s, Apache 300 s) and the origin's own answer reaches
# the editor. Page fetches keep the backend's shorter timeouts: many readers
# may queue behind one, and a stale copy is there to serve instead.
sub mc_policy_pass_timeouts {
    set bereq.first_byte_timeout = 600s;
    set bereq.between_bytes_timeout = 600s;
}
