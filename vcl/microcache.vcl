#
# microcache.vcl: WordPress microcaching, grace, coalescing and invalidation.
#
# Include it from a VCL that defines the backend(s) and `acl purgers`:
#
#     vcl 4.1;
#     backend default { .host = "127.0.0.1"; .port = "8081"; .probe = { ... } }
#     acl purgers { "127.0.0.1"; }
#     include "microcache.vcl";
#
# Optional settings, made by the entry VCL in a `sub vcl_recv` placed before
# the include (vmod var task variables: no client can set them):
#
#     var.set("mc_purge_token", "<secret>");  # PURGE/PURGEKEYS/BAN also need X-Purge-Token: <secret>
#     var.set("mc_trusted_relay", "1");       # accept invalidations that came through a relay
#     var.set("mc_debug_headers", "all");     # X-Cache & co. for everyone, not only trusted clients
#
# X-Forwarded-Proto is https for requests on a listen address named "https"
# (-a https=...) or with a PROXY v2 header flagging TLS; http otherwise.
# Everything tunable sits in the mc_policy_* subroutines right below.
# Internal request headers are named x-mc-*; objects carry x-url / x-host for bans.
#
vcl 4.1;

import std;
import purge;
import xkey;
import proxy;
import var;

# ---------------------------------------------------------------------------
# Policy: the one place to change TTLs and grace.
# ---------------------------------------------------------------------------

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

# ---------------------------------------------------------------------------
# vcl_recv
# ---------------------------------------------------------------------------

sub vcl_recv {
    call mc_recv_strip_internal;
    call mc_recv_method;
    call mc_recv_normalize_host;
    call mc_recv_trust;
    call mc_recv_health;
    call mc_recv_normalize_url;
    call mc_recv_invalidation;
    call mc_recv_forwarded;
    call mc_recv_write_methods;
    call mc_recv_static;
    call mc_recv_bypass;
    call mc_recv_shared_request;
    call mc_recv_strip_cookies;
    call mc_recv_grace_mode;
    return (hash);
}

# The x-mc-* request headers carry decisions between our subroutines (and
# across restarts); a client must not be able to send them in.
sub mc_recv_strip_internal {
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
    }
}

# Trusted: an address in acl purgers talking to Varnish directly. A relay
# (TLS terminator, proxy) in front adds forwarding headers: its address being
# in the ACL must not make all its clients trusted. Varnish itself puts the
# peer's address in X-Forwarded-For, so anything more came from before us.
# A PROXY-protocol relay is transparent: client.ip is the real client.
# Trusted clients also see the cache state (X-Cache, X-Cache-Hits, Age...);
# others only when the entry VCL sets var mc_debug_headers to "all".
sub mc_recv_trust {
    if (req.restarts == 0) {
        if (client.ip ~ purgers &&
            req.http.X-Forwarded-For == "" + client.ip && !req.http.Forwarded &&
            !req.http.X-Real-IP && !req.http.True-Client-IP && !req.http.Via) {
            set req.http.x-mc-trusted = "1";
            set req.http.x-mc-debug = "1";
        } elsif (var.get("mc_debug_headers") == "all") {
            set req.http.x-mc-debug = "1";
        }
    }
}

# Load balancers ask Varnish itself; the origin is never touched.
sub mc_recv_health {
    if (req.url == "/varnish-health" && (req.method == "GET" || req.method == "HEAD")) {
        return (synth(200, "OK"));
    }
}

# One page, one object: lower-case host, no trailing dot, no default port,
# absolute-form request lines folded into Host + path.
sub mc_recv_normalize_host {
    if (req.url ~ "^(?i)https?://") {
        set req.http.host = regsub(req.url, "^(?i)https?://([^/?#]+).*$", "\1");
        set req.url = regsub(req.url, "^(?i)https?://[^/?#]+", "");
        if (req.url !~ "^/") {
            set req.url = "/" + req.url;
        }
    }
    # HTTP/1.0 allows a request without Host; nothing here would know which
    # site it is for, and letting it pass skipped every check below.
    if (!req.http.host) {
        return (synth(400, "Host header required"));
    }
    set req.http.host = std.tolower(req.http.host);
    set req.http.host = regsub(req.http.host, ":(80|443)$", "");
    set req.http.host = regsub(req.http.host, "\.(:[0-9]+)?$", "\1");
}

# First check of all: a method this VCL does not handle (TRACE, CONNECT,
# made-up ones) is refused before any other code path can send it on.
sub mc_recv_method {
    if (req.method == "GET" || req.method == "HEAD" || req.method == "PURGE" ||
        req.method == "PURGEKEYS" || req.method == "BAN" || req.method == "POST" ||
        req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE" ||
        req.method == "OPTIONS") {
        return;
    }
    return (synth(405, "Method not allowed"));
}

# Varnish owns the forwarding headers: WordPress believes them (HTTPS on for
# X-Forwarded-Proto: https, links built from the forwarded host) but they are
# not in the cache key, so a client could have a page stored with its value
# for everyone. Only Varnish knows how the request came in: a listen address
# named "https" (`-a https=...`, where a TLS terminator sends its traffic) or
# a PROXY v2 header from the terminator saying TLS. Requests that pass carry
# the same values, so the origin never sees a client's.
sub mc_recv_forwarded {
    unset req.http.Forwarded;
    unset req.http.X-Forwarded-Host;
    unset req.http.X-Forwarded-Port;
    unset req.http.X-Forwarded-Server;
    unset req.http.X-Original-URL;
    unset req.http.X-Rewrite-URL;
    unset req.http.X-Purge-Token;
    if (local.socket == "https" || proxy.is_ssl()) {
        set req.http.X-Forwarded-Proto = "https";
    } else {
        set req.http.X-Forwarded-Proto = "http";
    }
}

# Write methods go straight through (cookies kept). Invalidation methods have
# been answered by now, so only GET and HEAD go on to the cache.
sub mc_recv_write_methods {
    if (req.method != "GET" && req.method != "HEAD") {
        set req.http.x-mc-bypass = "method";
        return (pass);
    }
}

# Equivalent URLs share one object: no fragment, no tracking parameters,
# parameters sorted. PURGE runs through the same steps so it reaches the object.
sub mc_recv_normalize_url {
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

# ---------------------------------------------------------------------------
# Invalidation: PURGE (one URL), PURGEKEYS (xkey), BAN (host / URL regex).
# Protocol: docs/protocol.md and vcl/README.md.
# ---------------------------------------------------------------------------

sub mc_recv_invalidation {
    if (req.method != "PURGE" && req.method != "PURGEKEYS" && req.method != "BAN") {
        return;
    }
    call mc_recv_invalidation_allowed;
    if (req.method == "PURGE") {
        call mc_recv_purge_url;
    } elsif (req.method == "PURGEKEYS") {
        call mc_recv_purge_keys;
    } else {
        call mc_recv_ban;
    }
}

# Who may invalidate: an address in acl purgers, directly (not through a
# relay, unless the entry VCL vouches for it with
# var.set("mc_trusted_relay", "1")), and, when the entry VCL configures one
# with var.set("mc_purge_token", ...), presenting that secret as X-Purge-Token.
# Refusals say only "Forbidden"; the reason goes to the log (VCL_Log).
sub mc_recv_invalidation_allowed {
    if (client.ip !~ purgers) {
        std.log("mc: " + req.method + " refused: client not in acl purgers");
        return (synth(403, "Forbidden"));
    }
    if (!req.http.x-mc-trusted && var.get("mc_trusted_relay") != "1") {
        std.log("mc: " + req.method + " refused: came through a relay (forwarding headers)");
        return (synth(403, "Forbidden"));
    }
    if (var.get("mc_purge_token")) {
        if (var.get("mc_purge_token") !~ "[!-~]") {
            std.log("mc: " + req.method + " refused: mc_purge_token is configured but empty");
            return (synth(403, "Forbidden"));
        }
        if (req.http.X-Purge-Token != regsuball(var.get("mc_purge_token"), "^\s+|\s+$", "")) {
            std.log("mc: " + req.method + " refused: missing or wrong X-Purge-Token");
            return (synth(403, "Forbidden"));
        }
    }
}

# The purge happens in vcl_miss (mc_miss_purge) so vmod purge can report a
# count; always_miss keeps it from queueing behind an in-flight fetch.
sub mc_recv_purge_url {
    if (req.http.x-purge-mode && req.http.x-purge-mode !~ "^(?i)(hard|soft)$") {
        return (synth(400, "X-Purge-Mode must be hard or soft"));
    }
    set req.hash_always_miss = true;
    return (hash);
}

sub mc_miss_purge {
    if (req.method == "PURGE") {
        if (req.http.x-purge-mode ~ "^(?i)soft$") {
            set req.http.x-mc-invalidated = purge.soft();
        } else {
            set req.http.x-mc-invalidated = purge.hard();
        }
        return (synth(200, "Purged"));
    }
}

sub mc_recv_purge_keys {
    if (req.http.xkey-purge && req.http.xkey-softpurge) {
        return (synth(400, "Send either xkey-purge or xkey-softpurge, not both"));
    }
    if (req.http.xkey-purge) {
        std.collect(req.http.xkey-purge, " ");
        set req.http.x-mc-keys = req.http.xkey-purge;
    } elsif (req.http.xkey-softpurge) {
        std.collect(req.http.xkey-softpurge, " ");
        set req.http.x-mc-keys = req.http.xkey-softpurge;
    }
    if (req.http.x-mc-keys !~ "[!-+--~]") {
        return (synth(400, "PURGEKEYS needs an xkey-purge or xkey-softpurge header with at least one key"));
    }
    if (req.http.x-mc-keys !~ "^[ -~]+$") {
        return (synth(400, "Surrogate keys must be printable ASCII, separated by spaces or commas"));
    }
    if (req.http.xkey-softpurge) {
        set req.http.x-mc-invalidated = xkey.softpurge(req.http.x-mc-keys);
    } else {
        set req.http.x-mc-invalidated = xkey.purge(req.http.x-mc-keys);
    }
    return (synth(200, "Purged"));
}

# Bans only test obj.http.* so the ban lurker can retire them in the
# background. Input is validated, never quoted: a space would let it append
# "&& ..." clauses to the expression.
sub mc_recv_ban {
    if (!req.http.x-ban-host) {
        return (synth(400, "BAN needs X-Ban-Host (and optionally X-Ban-Url, a regex on the path)"));
    }
    set req.http.x-ban-host = std.tolower(req.http.x-ban-host);
    set req.http.x-ban-host = regsub(req.http.x-ban-host, ":(80|443)$", "");
    if (req.http.x-ban-host !~ "^[a-z0-9.-]+(:[0-9]{1,5})?$") {
        return (synth(400, "X-Ban-Host must be a host name with an optional port"));
    }
    set req.http.x-mc-ban = "obj.http.x-host == " + req.http.x-ban-host;
    if (req.http.x-ban-url) {
        if (req.http.x-ban-url !~ "^[!#-~]+$") {
            return (synth(400, "X-Ban-Url must be printable ASCII without spaces or double quotes"));
        }
        set req.http.x-mc-ban = req.http.x-mc-ban + " && obj.http.x-url ~ " + req.http.x-ban-url;
    }
    if (!std.ban(req.http.x-mc-ban)) {
        return (synth(400, "Ban rejected: " + std.ban_error()));
    }
    return (synth(200, "Banned"));
}

# ---------------------------------------------------------------------------
# Bypass and normalization of cacheable requests
# ---------------------------------------------------------------------------

# Personal traffic is never cached and never served from cache. Assets are
# the same for everyone, so a login cookie does not make them personal.
sub mc_recv_bypass {
    if (req.http.Authorization) {
        set req.http.x-mc-bypass = "authorization";
    } elsif (req.url ~ "^[^?]*/(wp-admin(/|$)|wp-login\.php|xmlrpc\.php|wp-cron\.php)") {
        set req.http.x-mc-bypass = "admin";
    } elsif (req.url ~ "[?&](preview=true|preview_id=|preview_nonce=)") {
        set req.http.x-mc-bypass = "preview";
    } elsif (!req.http.x-mc-static && req.http.Cookie ~ "(^|;\s*)(wordpress_logged_in_|wordpress_sec_|wordpress_[0-9a-f]{32}=|wp-postpass_|comment_author_|wordpress_no_cache|woocommerce_items_in_cart|wp_woocommerce_session_)") {
        set req.http.x-mc-bypass = "cookie";
    }
    if (req.http.x-mc-bypass) {
        return (pass);
    }
}

# Assets look the same to everyone: cookies are dropped both ways.
sub mc_recv_static {
    if (req.url ~ "^[^?]*\.(avif|bmp|css|eot|gif|ico|jpe?g|js|mjs|map|mp3|mp4|ogg|otf|pdf|png|svgz?|ttf|webm|webp|woff2?)(\?|$)") {
        set req.http.x-mc-static = "1";
    }
}

# A cacheable request is answered the same for everyone, so headers that
# would make the origin answer differently without being in the cache key go:
# Origin (WordPress' REST API varies on it; every value a client invents
# would become one more long-lived copy) and X-HTTP-Method-Override (the REST
# API honours it on GET, so a GET could store another method's answer).
sub mc_recv_shared_request {
    unset req.http.Origin;
    unset req.http.X-HTTP-Method-Override;
}

# Anything left in Cookie (analytics, consent banners) does not change the page.
sub mc_recv_strip_cookies {
    unset req.http.Cookie;
}

# Restarts from mc_hit_grace and vcl_synth: a foreground refresh must not
# find the stale copy again (and so queues behind one shared fetch); a
# stale-if-error retry takes any copy, however old.
sub mc_recv_grace_mode {
    if (req.http.x-mc-serve-stale) {
        unset req.http.x-mc-refresh;
        set req.grace = 365d;
    } elsif (req.http.x-mc-refresh) {
        set req.grace = 0s;
    }
}

# ---------------------------------------------------------------------------
# Lookup outcome
# ---------------------------------------------------------------------------

sub vcl_hit {
    set req.http.x-mc-cache = "HIT";
    if (obj.ttl >= 0s) {
        return (deliver);
    }
    call mc_hit_grace;
}

# Stale object: serve it now while one background fetch refreshes it, if the
# origin is sick (stale-if-error) or the copy is only a little stale. An older
# copy on a healthy origin is refreshed in the foreground; the flag tells the
# fetch a stale copy exists, so a failing origin still gets it served.
sub mc_hit_grace {
    set req.http.x-mc-cache = "STALE";
    if (req.http.x-mc-serve-stale || !std.healthy(req.backend_hint)) {
        return (deliver);
    }
    call mc_policy_healthy_grace;
    set req.http.x-mc-refresh = "1";
    return (restart);
}

sub vcl_hash {
    call mc_hash_plain_client;
}

# By now Varnish has reduced Accept-Encoding to "gzip" or nothing. Varnish
# ignores Accept-Encoding when it matches Vary, so this flag is what keeps a
# plain-text copy apart from the gzipped one (see mc_fetch_compression).
sub mc_hash_plain_client {
    if (!req.http.Accept-Encoding) {
        set req.http.x-mc-plain = "1";
    }
}

sub vcl_miss {
    call mc_miss_purge;
    set req.http.x-mc-cache = "MISS";
}

sub vcl_pass {
    set req.http.x-mc-cache = "PASS";
}

# ---------------------------------------------------------------------------
# Fetch: what is kept, and for how long
# ---------------------------------------------------------------------------

sub vcl_backend_fetch {
    call mc_fetch_plain_request;
    call mc_fetch_unconditional;
}

# Refreshes ask for the whole page, never If-Modified-Since / If-None-Match.
# WordPress dates its feeds to the second: after an edit made in the same
# second as the copy we hold, it answers 304, and a purged feed would come back
# with its old body until the next edit.
sub mc_fetch_unconditional {
    if (!bereq.uncacheable) {
        unset bereq.http.If-Modified-Since;
        unset bereq.http.If-None-Match;
    }
}

# A plain copy is fetched plain: Varnish would otherwise ask for gzip. The
# flag is not the origin's business; mc_fetch_compression puts it back.
sub mc_fetch_plain_request {
    if (bereq.http.x-mc-plain) {
        unset bereq.http.Accept-Encoding;
        unset bereq.http.x-mc-plain;
    }
}

sub vcl_backend_response {
    if (bereq.uncacheable) {
        return (deliver);
    }
    call mc_fetch_ban_metadata;
    call mc_fetch_server_error;
    call mc_fetch_client_error;
    call mc_fetch_vary;
    call mc_fetch_compression;
    call mc_fetch_static;
    call mc_fetch_ttl;
    call mc_fetch_uncacheable;
    return (deliver);
}

# Stored on the object so bans can test obj.* (lurker-friendly); stripped at delivery.
sub mc_fetch_ban_metadata {
    set beresp.http.x-url = bereq.url;
    set beresp.http.x-host = bereq.http.host;
}

# A background refresh, or a foreground one with a stale copy behind it, must
# not replace that copy with an error: abandon and keep serving stale. Without
# a stale copy, the error is shared for a moment with whoever queued behind
# this fetch instead of sending them to the failing origin one by one.
sub mc_fetch_server_error {
    if (beresp.status >= 500) {
        if (bereq.is_bgfetch || bereq.http.x-mc-refresh) {
            return (abandon);
        }
        unset beresp.http.Set-Cookie;
        call mc_policy_error_ttl;
        return (deliver);
    }
}

# A 4xx other than 404/410 (429 rate limit, 403, 400, 401) answers one
# client's request, not the URL: never kept, never served stale to others.
# Hit-for-miss lets the next request ask the origin, and a good answer
# replaces it. A background refresh keeps the stale copy it was refreshing.
sub mc_fetch_client_error {
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

# Text is stored gzipped for clients that take gzip, and as a plain copy of
# its own for those that do not (curl, load generators, some bots): gunzipping
# a page on every hit costs ten times what the hit itself does. Text also
# varies on X-Forwarded-Proto (mc_recv_forwarded): WordPress writes http:// or
# https:// links into it, so a site reached both ways keeps a copy per scheme.
# All copies live under one hash, so a PURGE or an xkey purge removes them all.
sub mc_fetch_compression {
    if (beresp.http.Content-Type !~ "^(?i)(text/|application/(javascript|json|ld\+json|xml|rss\+xml|atom\+xml|manifest\+json)|image/svg\+xml)" ||
        beresp.http.Vary ~ "\*") {
        return;
    }
    if (bereq.http.Accept-Encoding) {
        if (!beresp.http.Content-Encoding) {
            set beresp.do_gzip = true;
        }
    } else {
        set bereq.http.x-mc-plain = "1";
    }
    if (!beresp.http.Vary) {
        set beresp.http.Vary = "Accept-Encoding";
    } elsif (beresp.http.Vary !~ "(?i)(^|,)\s*Accept-Encoding\s*(,|$)") {
        set beresp.http.Vary = beresp.http.Vary + ", Accept-Encoding";
    }
    set beresp.http.Vary = beresp.http.Vary + ", X-MC-Plain, X-Forwarded-Proto";
}

sub mc_fetch_static {
    if (bereq.http.x-mc-static && beresp.status == 200) {
        unset beresp.http.Set-Cookie;
        call mc_policy_static_ttl;
        call mc_policy_grace;
        return (deliver);
    }
}

# Surrogate-Control (meant for us) beats s-maxage (meant for shared caches);
# max-age is left to browsers. This is how purge-managed pages get long TTLs.
sub mc_fetch_ttl {
    if (beresp.http.Surrogate-Control ~ "(?i)(^|[\s,;])max-age=[0-9]+") {
        set beresp.ttl = std.duration(regsub(beresp.http.Surrogate-Control, "(?i)^(.*[\s,;])?max-age=([0-9]+).*$", "\2") + "s", 0s);
    } elsif (beresp.http.Cache-Control ~ "(?i)s-maxage=[0-9]+") {
        set beresp.ttl = std.duration(regsub(beresp.http.Cache-Control, "(?i)^.*s-maxage=([0-9]+).*$", "\1") + "s", 0s);
    } else {
        call mc_policy_default_ttl;
    }
    call mc_policy_grace;
    if (beresp.status == 404 || beresp.status == 410) {
        call mc_policy_not_found_ttl;
    }
}

# Hit-for-miss, never ttl=0: a zero TTL would make every request queued on
# this URL wait for the previous one to finish (serialized origin fetches).
sub mc_fetch_uncacheable {
    if (beresp.ttl <= 0s ||
        beresp.http.Set-Cookie ||
        beresp.http.Surrogate-Control ~ "(?i)no-store" ||
        (!beresp.http.Surrogate-Control && beresp.http.Cache-Control ~ "(?i)(private|no-store|no-cache)") ||
        beresp.http.Vary == "*") {
        call mc_policy_uncacheable_ttl;
        set beresp.grace = 0s;
        set beresp.uncacheable = true;
        return (deliver);
    }
}

# Vary: User-Agent would keep one copy per browser build; WordPress pages do
# not depend on it. Vary: Origin is moot: cacheable requests reach the origin
# without one (mc_recv_shared_request), and the answer is public.
sub mc_fetch_vary {
    std.collect(beresp.http.Vary);
    if (beresp.http.Vary ~ "(?i)(User-Agent|Origin)") {
        if (beresp.http.Vary ~ "(?i)(^|,)\s*Origin\s*(,|$)") {
            call mc_fetch_public_cors;
        }
        set beresp.http.Vary = regsuball(beresp.http.Vary, "(?i)(^|,)\s*(User-Agent|Origin)\s*(?=,|$)", "");
        set beresp.http.Vary = regsub(beresp.http.Vary, "^[\s,]+|[\s,]+$", "");
        if (beresp.http.Vary == "") {
            unset beresp.http.Vary;
        }
    }
}

# The origin answers CORS per Origin (WordPress echoes any Origin for its
# REST API). A shared anonymous copy cannot, so it says what a public
# resource says: any site may read it, without credentials.
sub mc_fetch_public_cors {
    if (!beresp.http.Access-Control-Allow-Origin) {
        set beresp.http.Access-Control-Allow-Origin = "*";
        unset beresp.http.Access-Control-Allow-Credentials;
    }
}

sub vcl_backend_error {
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

# ---------------------------------------------------------------------------
# Delivery
# ---------------------------------------------------------------------------

sub vcl_deliver {
    call mc_deliver_cache_status;
    call mc_deliver_strip_internal;
}

# X-Cache: HIT, STALE (served in grace), MISS, PASS (with X-Cache-Reason).
# Only for trusted clients (mc_recv_trust): to anyone else they tell what
# others recently asked for.
sub mc_deliver_cache_status {
    if (!req.http.x-mc-debug) {
        call mc_deliver_hide_cache_state;
        return;
    }
    if (obj.uncacheable) {
        set resp.http.X-Cache = "PASS";
        if (req.http.x-mc-bypass) {
            set resp.http.X-Cache-Reason = req.http.x-mc-bypass;
        } else {
            set resp.http.X-Cache-Reason = "uncacheable";
        }
    } elsif (req.http.x-mc-cache) {
        set resp.http.X-Cache = req.http.x-mc-cache;
    } else {
        set resp.http.X-Cache = "MISS";
    }
    set resp.http.X-Cache-Hits = obj.hits;
}

# X-Varnish has two ids on a hit (and counts requests); Age says when the
# page was last fetched. Age stays when Cache-Control lets a cache further
# down keep the page: it needs Age to keep it no longer than the origin said.
sub mc_deliver_hide_cache_state {
    unset resp.http.X-Varnish;
    if (!resp.http.Cache-Control) {
        unset resp.http.Age;
    }
}

# Surrogate keys and ban metadata are ours; a trusted host can ask to see
# them with X-Cache-Debug: 1.
sub mc_deliver_strip_internal {
    unset resp.http.Surrogate-Control;
    if (resp.http.Vary ~ "X-MC-Plain") {
        set resp.http.Vary = regsub(resp.http.Vary, ",?\s*X-MC-Plain(, X-Forwarded-Proto)?", "");
    }
    if (req.http.X-Cache-Debug && req.http.x-mc-trusted) {
        return;
    }
    unset resp.http.xkey;
    unset resp.http.x-url;
    unset resp.http.x-host;
}

sub vcl_synth {
    call mc_synth_stale_if_error;
    call mc_synth_response;
    return (deliver);
}

# The foreground refresh of a stale page failed (abandoned in
# mc_fetch_server_error): go back and serve the stale copy instead of an error.
sub mc_synth_stale_if_error {
    if (resp.status == 503 && req.http.x-mc-refresh) {
        set req.http.x-mc-serve-stale = "1";
        return (restart);
    }
}

sub mc_synth_response {
    if (req.http.x-mc-debug) {
        set resp.http.X-Cache = "SYNTH";
    } else {
        unset resp.http.X-Varnish;
    }
    set resp.http.Content-Type = "text/plain; charset=utf-8";
    if (req.http.x-mc-invalidated) {
        set resp.http.X-Invalidated = req.http.x-mc-invalidated;
    }
    if (resp.reason == "Banned") {
        set resp.http.X-Ban = req.http.x-mc-ban;
    }
    if (resp.status == 405) {
        set resp.http.Allow = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, PURGE, PURGEKEYS, BAN";
    }
    # Everyone learns that Varnish is up (200); only trusted clients whether
    # the origin is: a load balancer needs the first, an attacker the second.
    if (req.url == "/varnish-health" && resp.status == 200 && req.http.x-mc-debug) {
        if (std.healthy(req.backend_hint)) {
            set resp.http.X-Backend-Health = "healthy";
        } else {
            set resp.http.X-Backend-Health = "sick";
        }
    }
    set resp.body = "" + resp.status + " " + resp.reason + {"
"};
}
