#
# microcache/device.vcl: Vary: User-Agent, one copy per device class. Mobile
# themes vary on wp_is_mobile(); one copy per browser build would be thousands,
# one copy for all serves the phone page to desktops. The class follows
# WordPress core's rule exactly (wp-includes/vars.php, wp_is_mobile: the
# User-Agent contains Mobile, Android, Silk/, Kindle, BlackBerry, Opera Mini or
# Opera Mobi, case-sensitive), and the origin sees one representative
# User-Agent per class on cacheable fetches, so no visitor's own string is
# rendered into a shared page. Clients still get Vary: User-Agent.
#

# Only cacheable requests get here (after bypass.vcl). Desktop is the absence
# of the header: a desktop request does one match and no header write, and an
# object without Vary costs nothing more.
sub mc_device_recv {
    if (req.http.User-Agent ~ "Mobile|Android|Silk/|Kindle|BlackBerry|Opera Mini|Opera Mobi") {
        set req.http.x-mc-device = "mobile";
    }
}

# The representative User-Agent of the class (both recent Chrome builds; the
# mobile one is what wp_is_mobile() and the common detection libraries call a
# phone). Passes keep the visitor's own.
sub mc_device_backend_fetch {
    if (bereq.uncacheable) {
        return;
    }
    if (bereq.http.x-mc-device == "mobile") {
        set bereq.http.User-Agent = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36";
    } else {
        set bereq.http.User-Agent = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
    }
}

# The object varies on the class, not on the raw string (called after
# mc_normalize_backend_response has collected Vary into one line).
sub mc_device_backend_response {
    if (beresp.http.Vary ~ "(?i)User-Agent") {
        set beresp.http.Vary = regsuball(beresp.http.Vary, "(?i)(^|,)(\s*)User-Agent\s*(?=,|$)", "\1\2X-MC-Device");
    }
}

# Downstream caches and browsers must still know the page depends on the
# User-Agent. Runs after mc_plain_copy_deliver: the common Vary is then exactly
# "Accept-Encoding", a string compare; an object without Vary (images, fonts)
# takes no regex either.
sub mc_device_deliver {
    if (resp.http.Vary != "Accept-Encoding" && resp.http.Vary &&
        resp.http.Vary ~ "X-MC-Device") {
        set resp.http.Vary = regsub(resp.http.Vary, "X-MC-Device", "User-Agent");
    }
}
