#
# microcache/invalidate.vcl: PURGE (one URL, every variant), PURGEKEYS (xkey
# surrogate keys), BAN (host / URL regex), all of it in this file.
# Protocol: docs/protocol.md and vcl/README.md ("Invalidation protocol").
#
# Allowed from `acl purgers` (entry VCL), directly (trust.vcl), and with
# X-Purge-Token when the entry VCL sets var mc_purge_token.
#
# Also here: a page whose fetch began before the last invalidation of its host
# is not kept (mc_invalidate_stamp, mc_invalidate_backend_fetch,
# mc_invalidate_backend_response_inflight).
#

import std;
import purge;
import xkey;
import var;

# X-Purge-Keep-Gen (of "refresh before a hard purge", removed) is ignored:
# PURGE, PURGEKEYS and BAN remove all they name.
sub mc_invalidate_recv {
    if (req.method != "PURGE" && req.method != "PURGEKEYS" && req.method != "BAN") {
        return;
    }
    call mc_invalidate_allowed;
    if (req.method == "PURGE") {
        call mc_invalidate_purge_url;
    } elsif (req.method == "PURGEKEYS") {
        call mc_invalidate_purge_keys;
    } else {
        call mc_invalidate_ban;
    }
}

# Who may invalidate: an address in acl purgers, directly (not through a
# relay, unless the entry VCL vouches for it with
# var.set("mc_trusted_relay", "1")), and, when the entry VCL configures one
# with var.set("mc_purge_token", ...), presenting that secret as X-Purge-Token.
# Refusals say only "Forbidden"; the reason goes to the log (VCL_Log).
sub mc_invalidate_allowed {
    if (client.ip !~ purgers) {
        std.log("mc: " + req.method + " refused: client not in acl purgers");
        return (synth(403, "Forbidden"));
    }
    if (!req.http.x-mc-trusted && var.get("mc_trusted_relay") != "1") {
        std.log("mc: " + req.method + " refused: came through a relay (forwarding headers)");
        return (synth(403, "Forbidden"));
    }
    if (var.get("mc_purge_token")) {
        call mc_purge_token_parse;
        if (var.get("mc_purge_token_unusable")) {
            std.log("mc: " + req.method + " refused: mc_purge_token is not a usable token (purge-token.vcl)");
            return (synth(403, "Forbidden"));
        }
        call mc_purge_token_compare;
        if (var.get("mc_purge_token_wrong") != "0") {
            std.log("mc: " + req.method + " refused: missing or wrong X-Purge-Token");
            return (synth(403, "Forbidden"));
        }
    }
}

# The purge happens in vcl_miss (mc_invalidate_miss) so vmod purge can report
# a count; always_miss keeps it from queueing behind an in-flight fetch.
sub mc_invalidate_purge_url {
    if (req.http.x-purge-mode && req.http.x-purge-mode !~ "^(?i)(hard|soft)$") {
        return (synth(400, "X-Purge-Mode must be hard or soft"));
    }
    set req.hash_always_miss = true;
    return (hash);
}

sub mc_invalidate_miss {
    if (req.method == "PURGE") {
        # A Host that is no plain host name stamps every host instead.
        var.set("mc_stamp_host", req.http.host);
        call mc_invalidate_stamp_host_check;
        call mc_invalidate_stamp;
        if (req.http.x-purge-mode ~ "^(?i)soft$") {
            set req.http.x-mc-invalidated = purge.soft();
        } else {
            set req.http.x-mc-invalidated = purge.hard();
        }
        return (synth(200, "Purged"));
    }
}

sub mc_invalidate_purge_keys {
    if (req.http.xkey-purge && req.http.xkey-softpurge) {
        return (synth(400, "Send either xkey-purge or xkey-softpurge, not both"));
    }
    # Several lines are one list, of at most 8192 bytes (http_req_hdr_len's
    # default: one line always fits). That bounds one request's work, and is
    # checked before the copy: the request, the joined list and its copy share
    # workspace_client, which a longer copy could overflow (a bare 500). Every
    # regex on the list is anchored or one character class: it never
    # backtracks over the list.
    std.collect(req.http.xkey-purge, " ");
    std.collect(req.http.xkey-softpurge, " ");
    if (req.http.xkey-purge ~ "^.{8193}" || req.http.xkey-softpurge ~ "^.{8193}") {
        return (synth(413, "At most 8192 bytes of keys per request: split the list"));
    }
    if (req.http.xkey-softpurge) {
        set req.http.x-mc-keys = req.http.xkey-softpurge;
    } else {
        set req.http.x-mc-keys = req.http.xkey-purge;
    }
    if (req.http.x-mc-keys !~ "[!-+--~]") {
        return (synth(400, "PURGEKEYS needs an xkey-purge or xkey-softpurge header with at least one key"));
    }
    if (req.http.x-mc-keys !~ "^[ -~]+$") {
        return (synth(400, "Surrogate keys must be printable ASCII, separated by spaces or commas"));
    }
    # Keys are not scoped to a host: without X-Purge-Host, every host is stamped.
    if (req.http.x-purge-host) {
        std.collect(req.http.x-purge-host);
        var.set("mc_stamp_host", req.http.x-purge-host);
        call mc_invalidate_stamp_host_check;
        if (var.get("mc_stamp_host") !~ ".") {
            return (synth(400, "X-Purge-Host must be one host name with an optional port"));
        }
    }
    call mc_invalidate_stamp;
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
sub mc_invalidate_ban {
    if (!req.http.x-ban-host) {
        return (synth(400, "BAN needs X-Ban-Host (and optionally X-Ban-Url, a regex on the path)"));
    }
    var.set("mc_stamp_host", req.http.x-ban-host);
    call mc_invalidate_stamp_host_check;
    if (var.get("mc_stamp_host") !~ ".") {
        return (synth(400, "X-Ban-Host must be a host name with an optional port"));
    }
    set req.http.x-mc-ban = "obj.http.x-host == " + var.get("mc_stamp_host");
    if (req.http.x-ban-url) {
        if (req.http.x-ban-url !~ "^[!#-~]+$") {
            return (synth(400, "X-Ban-Url must be printable ASCII without spaces or double quotes"));
        }
        set req.http.x-mc-ban = req.http.x-mc-ban + " && obj.http.x-url ~ " + req.http.x-ban-url;
    }
    call mc_invalidate_stamp;
    if (!std.ban(req.http.x-mc-ban)) {
        return (synth(400, "Ban rejected: " + std.ban_error()));
    }
    return (synth(200, "Banned"));
}

# Stored on the object so bans can test obj.* (lurker-friendly); stripped at
# delivery (mc_invalidate_deliver). Keys on one line: a ban reads only the
# first line of a header.
sub mc_invalidate_backend_response_meta {
    std.collect(beresp.http.xkey, " ");
    set beresp.http.x-url = bereq.url;
    set beresp.http.x-host = bereq.http.host;
}

# Fetches in flight. Purges and xkey purges skip an object still being fetched,
# and a ban added during a fetch is not applied to it, so a page rendered
# before an edit and inserted after its invalidation would keep the old content
# for its whole TTL. Instead, every accepted invalidation (PURGE, PURGEKEYS,
# BAN; hard or soft) records when it arrived, before it acts, and a fetch that
# began at or before the last stamp of its host, or the last stamp of every
# host, is not kept. Per host, so a site's edits cost other sites nothing:
# PURGE stamps its Host, BAN its X-Ban-Host, PURGEKEYS the X-Purge-Host it
# names and, without one, every host (keys name no site). Both times are whole
# microseconds since 2023-11-14 (1700000000 s: a VCL INT stops at 10^15,
# reached in 2055), written the same way, so a fetch begun in the same
# microsecond counts as begun before. Strings: vmod var globals are strings
# and its INT is 32 bits.
sub mc_invalidate_stamp {
    if (var.get("mc_stamp_host") ~ ".") {
        var.global_set("mc_invalidated_at " + var.get("mc_stamp_host"), "" + std.integer(real = (std.real(time = now) - 1700000000) * 1000000));
    } else {
        var.global_set("mc_invalidated_at", "" + std.integer(real = (std.real(time = now) - 1700000000) * 1000000));
    }
}

# The host an invalidation names (var mc_stamp_host) spelled as the cache key
# spells it (mc_normalize_recv_host), or "" when it is not one host name of at
# most 253 characters with an optional port. Stamps live as long as the vmod
# and are looked up by a list walk: only trusted senders create them, and only
# for real host names, so there are as many as the sites they serve.
sub mc_invalidate_stamp_host_check {
    var.set("mc_stamp_host", regsub(regsub(std.tolower(var.get("mc_stamp_host")), ":(80|443)$", ""), "\.(:[0-9]+)?$", "\1"));
    if (var.get("mc_stamp_host") !~ "^[a-z0-9.-]{1,253}(:[0-9]{1,5})?$") {
        var.set("mc_stamp_host", "");
    }
}

sub mc_invalidate_backend_fetch {
    if (!bereq.uncacheable) {
        var.set("mc_fetch_began", "" + std.integer(real = (std.real(time = now) - 1700000000) * 1000000));
    }
}

# The common path is two global reads and two compares. A refused page is
# still delivered to the request that fetched it (which asked before the edit
# landed), as hit-for-miss for 0.1 s. Not a zero TTL: the requests queued
# behind the fetch (some asked after the invalidation) would then go to the
# origin one after another; hit-for-miss sends them in parallel. Not 1 s:
# every request in that second went to the origin too, where after 0.1 s they
# queue behind one fetch again. A background refresh is abandoned instead: the
# stale copy it was replacing stays if the invalidation left it (soft), and the
# next request refreshes it.
sub mc_invalidate_backend_response_inflight {
    if (!var.get("mc_fetch_began") ||
        (std.integer(var.global_get("mc_invalidated_at"), 0) < std.integer(var.get("mc_fetch_began"), 0) &&
         std.integer(var.global_get("mc_invalidated_at " + bereq.http.host), 0) < std.integer(var.get("mc_fetch_began"), 0))) {
        return;
    }
    if (bereq.is_bgfetch) {
        std.log("mc: background fetch began before an invalidation: abandoned");
        return (abandon);
    }
    std.log("mc: fetch began before an invalidation: not kept");
    set beresp.ttl = 0.1s;
    set beresp.grace = 0s;
    set beresp.keep = 0s;
    set beresp.uncacheable = true;
    set beresp.http.x-mc-uncacheable = "fetch began before an invalidation";
    return (deliver);
}

# Surrogate keys and ban metadata are ours; a trusted host can ask to see
# them with X-Cache-Debug: 1.
sub mc_invalidate_deliver {
    if (req.http.X-Cache-Debug && req.http.x-mc-trusted) {
        return;
    }
    unset resp.http.xkey;
    unset resp.http.x-url;
    unset resp.http.x-host;
}

sub mc_invalidate_synth {
    if (req.http.x-mc-invalidated) {
        set resp.http.X-Invalidated = req.http.x-mc-invalidated;
    }
    if (req.http.x-mc-ban) {
        set resp.http.X-Ban = req.http.x-mc-ban;
    }
}
