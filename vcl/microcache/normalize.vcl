#
# microcache/normalize.vcl: one page, one object. Host and URL are reduced to
# one spelling (PURGE runs through the same steps, so it reaches the object),
# leftover cookies are dropped, and Vary: Origin is ignored (Vary: User-Agent
# becomes one copy per device class: device.vcl).
#

import std;

# Lower-case host, no trailing dot, no default port, absolute-form request
# lines folded into Host + path.
sub mc_normalize_recv_host {
    if (req.url ~ "^(?i)https?://") {
        set req.http.host = regsub(req.url, "^(?i)https?://([^/?#]+).*$", "\1");
        set req.url = regsub(req.url, "^(?i)https?://[^/?#]+", "");
        if (req.url !~ "^/") {
            set req.url = "/" + req.url;
        }
    }
    # HTTP/1.0 allows a request without Host; nothing here would know which
    # site it is for, and letting it pass skipped every check after this one.
    if (!req.http.host) {
        return (synth(400, "Host header required"));
    }
    # Hosts nearly always come spelled the one way: one match, no rewrite.
    if (req.http.host ~ "[A-Z]|\.(:[0-9]*)?$|:(80|443)$") {
        set req.http.host = std.tolower(req.http.host);
        set req.http.host = regsub(req.http.host, ":(80|443)$", "");
        set req.http.host = regsub(req.http.host, "\.(:[0-9]+)?$", "\1");
    }
}

# Equivalent URLs share one object: no fragment, no tracking parameters,
# parameters sorted.
sub mc_normalize_recv_url {
    if (req.url !~ "[?#]") {
        return;
    }
    set req.url = regsub(req.url, "#.*$", "");
    if (req.url ~ "\?") {
        set req.url = regsuball(req.url,
            "(?i)([?&])(utm_[a-z0-9_]*|gclid|gclsrc|dclid|gbraid|wbraid|fbclid|msclkid|mc_cid|mc_eid|_ga|_gl|igshid|yclid|twclid|ttclid|_hsenc|_hsmi|mkt_tok|srsltid)(=[^&]*)?(?=&|$)",
            "\1");
        set req.url = std.querysort(req.url);
        set req.url = regsub(req.url, "\?&*$", "");
        set req.url = regsub(req.url, "\?&+", "?");
    }
}

# Anything left in Cookie once bypass.vcl has passed personal traffic
# (analytics, consent banners) does not change the page.
sub mc_normalize_recv_cookies {
    unset req.http.Cookie;
}

# Vary: Origin is moot: cacheable requests reach the origin without one (not in
# the allowlist, origin-headers.vcl), and the answer is public (mc_cors_public).
# Vary arrives on one line for mc_device_backend_response.
sub mc_normalize_backend_response {
    std.collect(beresp.http.Vary);
    if (beresp.http.Vary ~ "(?i)(^|,)\s*Origin\s*(,|$)") {
        call mc_cors_public;
        set beresp.http.Vary = regsuball(beresp.http.Vary, "(?i)(^|,)\s*Origin\s*(?=,|$)", "");
        set beresp.http.Vary = regsub(beresp.http.Vary, "^[\s,]+|[\s,]+$", "");
        if (beresp.http.Vary == "") {
            unset beresp.http.Vary;
        }
    }
}
