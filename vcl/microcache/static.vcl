#
# microcache/static.vcl: images, CSS, JS, fonts, media and PDF look the same to
# everyone: cookies are dropped both ways and they live long
# (mc_policy_static_ttl), unless the origin says the answer is private.
#

sub mc_static_recv {
    if (req.url ~ "^[^?]*\.(avif|bmp|css|eot|gif|ico|jpe?g|js|mjs|map|mp3|mp4|ogg|otf|pdf|png|svgz?|ttf|webm|webp|woff2?)(\?|$)") {
        set req.http.x-mc-static = "1";
    }
}

# An asset the origin marks private or no-store (a plugin serving a member's
# download, a generated per-visitor image) is not an asset for everyone: it
# takes the page path (ttl.vcl), which keeps it out of the cache (hit-for-miss)
# and leaves its Set-Cookie alone. Surrogate-Control, when present, speaks for
# us instead of Cache-Control, as for pages.
sub mc_static_backend_response {
    if (bereq.http.x-mc-static && beresp.status == 200) {
        if (beresp.http.Surrogate-Control ~ "(?i)no-store" ||
            (!beresp.http.Surrogate-Control && beresp.http.Cache-Control ~ "(?i)(private|no-store)")) {
            return;
        }
        unset beresp.http.Set-Cookie;
        call mc_policy_static_ttl;
        call mc_policy_grace;
        return (deliver);
    }
}
