#
# microcache/bypass.vcl: personal traffic is never cached and never served
# from cache. The reason is kept in x-mc-bypass (X-Cache-Reason, debug.vcl).
#

# Write methods go straight through (cookies kept). Invalidation methods have
# been answered by now, so only GET and HEAD go on to the cache.
sub mc_bypass_recv_method {
    if (req.method != "GET" && req.method != "HEAD") {
        set req.http.x-mc-bypass = "method";
        return (pass);
    }
}

# Assets are the same for everyone (static.vcl), so a login cookie does not
# make them personal.
sub mc_bypass_recv_personal {
    if (req.http.Authorization) {
        set req.http.x-mc-bypass = "authorization";
    } elsif (req.url ~ "^[^?]*/(wp-admin(/|$)|wp-login\.php|xmlrpc\.php|wp-cron\.php)") {
        set req.http.x-mc-bypass = "admin";
    } elsif (req.url ~ "[?&](preview=true|preview_id=|preview_nonce=)") {
        set req.http.x-mc-bypass = "preview";
    } elsif (!req.http.x-mc-static && req.http.Cookie &&
             req.http.Cookie ~ "(^|;\s*)(wordpress_logged_in_|wordpress_sec_|wordpress_[0-9a-f]{32}=|wp-postpass_|comment_author_|wordpress_no_cache|woocommerce_items_in_cart|wp_woocommerce_session_)") {
        set req.http.x-mc-bypass = "cookie";
    }
    if (req.http.x-mc-bypass) {
        return (pass);
    }
}

# A passed request waits for the origin as long as mc_policy_pass_timeouts
# says, not the backend's first_byte_timeout: at 30 s a bulk action on a busy
# origin came back as a 503 while WordPress went on to finish it. Set here, it
# also wins over the short wait of the unprobed twin (sick-origin.vcl).
sub mc_bypass_backend_fetch {
    if (bereq.uncacheable) {
        call mc_policy_pass_timeouts;
    }
}
