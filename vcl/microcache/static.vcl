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

# An asset the origin marks private, no-store or no-cache (a plugin serving a
# member's download, a generated per-visitor image or stylesheet) is not an
# asset for everyone: it takes the page path (ttl.vcl), which keeps it out of
# the cache (hit-for-miss; no-cache with Surrogate-Control: the default TTL at
# most) and leaves its Set-Cookie alone, whatever Surrogate-Control says.
sub mc_static_backend_response {
    if (bereq.http.x-mc-static && beresp.status == 200) {
        if (beresp.http.Surrogate-Control ~ "(?i)no-store" ||
            beresp.http.Cache-Control ~ "(?i)(private|no-store|no-cache)") {
            return;
        }
        unset beresp.http.Set-Cookie;
        call mc_policy_static_ttl;
        call mc_policy_grace;
        return (deliver);
    }
}
