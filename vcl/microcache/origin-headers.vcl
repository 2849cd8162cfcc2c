#
# microcache/origin-headers.vcl: a cacheable fetch (a miss, a background or
# foreground refresh, a hit-for-miss) sends the origin an allowlist of request
# headers. Whatever else a client sends is not in the cache key, so the origin
# must not see it: WordPress and its plugins believe many scheme, host and
# method hints (X-Forwarded-Ssl, CF-Visitor, X-Host, X-HTTP-Method, ...), and
# a denylist always misses one. Passes (personal traffic) keep the client's
# headers, minus what forwarded.vcl removes from every fetch.
#

import header;

# Every line outside Varnish's own headers is prefixed "x-mc-drop: " (one
# pass of vmod header over the header lines, names compared case-insensitively);
# mc_policy_origin_headers takes the prefix off the content-negotiation headers
# a site needs (Accept by default), and one unset removes the rest.
# Varnish's own: Host (normalized, in the key), User-Agent (the device class'
# representative, device.vcl), Accept-Encoding (gzip or none, Varnish's),
# X-Forwarded-For (the client address, forwarded.vcl), X-Forwarded-Proto
# (Varnish's, in the key), X-Varnish (the fetch id; X-Vinyl on Vinyl Cache 9.0),
# and by name the x-mc-* flags the backend side reads back (set by the feature
# files after guard.vcl cleared the client's): any other x-mc-* name a client
# invents (x-mc-forwarded-host...) is dropped like every unknown header.
sub mc_origin_headers_backend_fetch {
    if (bereq.uncacheable) {
        return;
    }
    header.regsub(bereq, "^(?!(?i)(host|user-agent|accept-encoding|x-forwarded-for|x-forwarded-proto|x-varnish|x-vinyl|x-mc-(device|http10|plain|refresh|relay|static))[ \t]*:)", "x-mc-drop: ");
    call mc_policy_origin_headers;
    unset bereq.http.x-mc-drop;
}
