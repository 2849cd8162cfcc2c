#
# microcache/errors.vcl: what the origin's errors do to the cache. A refresh
# never replaces a good copy with an error; an error nobody has a copy for is
# shared briefly (5xx) or not at all (4xx other than 404/410).
#

sub mc_errors_backend_response {
    # A background refresh, or a foreground one with a stale copy behind it,
    # must not replace that copy with an error: abandon and keep serving stale.
    # Without a stale copy, the error is shared for a moment with whoever queued
    # behind this fetch instead of sending them to the failing origin one by one.
    if (beresp.status >= 500) {
        if (bereq.is_bgfetch || bereq.http.x-mc-refresh) {
            return (abandon);
        }
        unset beresp.http.Set-Cookie;
        call mc_policy_error_ttl;
        return (deliver);
    }
    # A 4xx other than 404/410 (429 rate limit, 403, 400, 401) answers one
    # client's request, not the URL: never kept, never served stale to others.
    # Hit-for-miss lets the next request ask the origin, and a good answer
    # replaces it. A background refresh keeps the stale copy it was refreshing.
    if (beresp.status >= 400 && beresp.status < 500 &&
        beresp.status != 404 && beresp.status != 410) {
        if (bereq.is_bgfetch) {
            return (abandon);
        }
        call mc_policy_uncacheable_ttl;
        set beresp.grace = 0s;
        set beresp.keep = 0s;
        set beresp.uncacheable = true;
        return (deliver);
    }
}

# No connection, no answer: a refresh keeps its stale copy; anything else gets
# a fast HTML 503 with Retry-After, shared like a 5xx.
sub mc_errors_backend_error {
    if (bereq.is_bgfetch || bereq.http.x-mc-refresh) {
        return (abandon);
    }
    call mc_policy_error_ttl;
    set beresp.http.Content-Type = "text/html; charset=utf-8";
    set beresp.http.Retry-After = "5";
    synthetic({"<!doctype html>
<html><head><meta charset="utf-8"><title>Temporarily unavailable</title></head>
<body><h1>This site is temporarily unavailable</h1>
<p>Please try again in a few seconds.</p></body></html>
"});
    return (deliver);
}
