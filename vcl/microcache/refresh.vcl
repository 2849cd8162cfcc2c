#
# microcache/refresh.vcl: right after an edit, the purger asks each node to
# fetch the pages it just invalidated (GET + X-Refresh, trusted like PURGE),
# so the next reader gets the new page from the cache instead of waiting for
# its render. Only pages readers looked up in the last minute are fetched:
# anything else would be origin load nobody reads.
# Protocol: docs/protocol.md §2 and vcl/README.md ("Refresh").
#
# X-Refresh-Copy: plain asks for the plain copy (plain-copy.vcl) instead of
# the gzipped one, and is fetched only when a reader without gzip (curl,
# scripts, some bots) looked the page up in the last minute; the gzipped copy
# is fetched when a reader of either copy did.
#
# Answers (X-Refresh): 204 skipped (no reader in the last 60 s, or the origin
# keeps the URL out of the cache), 204 cached (a copy is there: a reader
# refilled it, or the fetch this request queued behind did), the page itself
# fetched, 503 failed (the origin failed; a stale copy stays for readers).
# The refresh is an ordinary lookup, so it shares one fetch with readers'
# misses. Which request is a refresh: var mc_refresh (no client can set it),
# also its outcome.
#

import std;
import var;
import vsthrottle;

# The same checks as PURGE (one rule for trusted senders). What is left is the
# request an anonymous desktop reader with gzip makes, so it gets that
# reader's cache key and copy: no cookie, credentials, device, condition or
# range, and nothing of the purger's reaches the origin. A page no reader
# looked up is not fetched (mc_refresh_count_reader). x-mc-refresh is grace.vcl's
# foreground refresh: a stale copy does not answer it (req.grace 0 s, so it
# fetches after a soft purge) and an origin error does not replace that copy
# (errors.vcl abandons the fetch).
sub mc_refresh_recv_request {
    if (!req.http.X-Refresh) {
        return;
    }
    call mc_invalidate_allowed;
    if (req.method != "GET") {
        return (synth(400, "A refresh (X-Refresh) is a GET"));
    }
    # After mc_forwarded_recv: X-Refresh: https fills the copy readers behind
    # a TLS terminator get (the purger reaches the node over plain HTTP).
    if (req.http.X-Refresh == "https") {
        set req.http.X-Forwarded-Proto = "https";
    } elsif (req.http.X-Refresh != "1") {
        return (synth(400, "X-Refresh must be 1 (this listener's scheme) or https"));
    }
    if (req.http.X-Refresh-Copy == "plain") {
        unset req.http.Accept-Encoding;
        var.set("mc_refresh_copy", "plain");
    } elsif (req.http.X-Refresh-Copy && req.http.X-Refresh-Copy != "gzip") {
        return (synth(400, "X-Refresh-Copy must be gzip or plain"));
    } else {
        set req.http.Accept-Encoding = "gzip";
    }
    unset req.http.X-Refresh;
    unset req.http.X-Refresh-Copy;
    unset req.http.X-Purge-Token;
    unset req.http.Cookie;
    unset req.http.Authorization;
    unset req.http.User-Agent;
    unset req.http.If-Modified-Since;
    unset req.http.If-None-Match;
    unset req.http.Range;
    # A reader took its copy's token (mc_refresh_count_reader): the plain copy
    # is for its own readers, the gzipped one for a reader of either copy
    # (its token first: most pages have gzip readers, one call).
    if (var.get("mc_refresh_copy") == "plain") {
        if (vsthrottle.remaining("mc-seen-plain " + req.http.host + req.url, 1, 60s) != 0) {
            var.set("mc_refresh", "skipped");
            return (synth(204, "No Content"));
        }
    } elsif (vsthrottle.remaining("mc-seen " + req.http.host + req.url, 1, 60s) != 0 &&
             vsthrottle.remaining("mc-seen-plain " + req.http.host + req.url, 1, 60s) != 0) {
        var.set("mc_refresh", "skipped");
        return (synth(204, "No Content"));
    }
    var.set("mc_refresh", "fetched");
    set req.http.x-mc-refresh = "1";
}

# Readers: every request that is looked up (passes and invalidations were
# answered in vcl_recv, PURGE in mc_invalidate_miss; refreshes carry var
# mc_refresh) takes, once, the token of the copy it reads, for 60 s:
# "mc-seen <host><url>" for the gzipped copy, "mc-seen-plain <host><url>" for
# the plain one (x-mc-plain, set in vcl_hash). remaining() == 0 then means a
# reader of that copy took it in the last 60 s (mc_refresh_recv_request). One
# SHA-256 and one lock per call; the vmod drops the buckets of copies nobody
# read for 60 s. Asking while the token is taken changes nothing (the bucket
# keeps the time it was taken), which lets mc_refresh_hit skip most hits.
# Only the first lookup counts (req.restarts == 0): a restart is the same
# request, and here every restart follows a lookup made at req.restarts 0.
sub mc_refresh_count_reader {
    if (req.http.x-mc-plain) {
        if (vsthrottle.is_denied("mc-seen-plain " + req.http.host + req.url, 1, 60s)) {
        }
    } elsif (vsthrottle.is_denied("mc-seen " + req.http.host + req.url, 1, 60s)) {
    }
}

# A refresh that finds a fresh copy has nothing to fetch. A reader's hit
# counts, except on an object that was hit before and is less than 2 s old:
# obj.hits counts this hit too (1 on the first hit, 7.1 to 9.0), and the first
# hit of every object counts, so a call was made on this copy's token less
# than 2 s ago and the token, taken for 60 s, is nearly always still taken:
# this call would change nothing (the exceptions: README, "Known limits").
# That keeps the hashing and locking off most hits on a hot page, whose copy
# is fetched again about every second in microcache mode.
sub mc_refresh_hit {
    if (var.get("mc_refresh")) {
        var.set("mc_refresh", "cached");
        return (synth(204, "No Content"));
    }
    if (req.restarts == 0 && (obj.hits <= 1 || obj.age >= 2s)) {
        call mc_refresh_count_reader;
    }
}

# A reader's miss (hit-for-miss included) counts before its fetch begins, so a
# refresh that comes while it fetches queues behind that fetch (cached) instead
# of being skipped. PURGE was answered by mc_invalidate_miss, called before.
# Hit-for-miss has two causes. The origin keeps the URL out of the cache: a
# fetch would fill nothing, so skip. Or a reader's fetch began before this
# host's last invalidation and was not kept (invalidate.vcl, 0.1 s): then the
# page is exactly what the refresh is for. Refreshes follow their
# invalidation at once, so a hit-for-miss within 1 s of one is the second.
sub mc_refresh_miss {
    if (!var.get("mc_refresh")) {
        if (req.restarts == 0) {
            call mc_refresh_count_reader;
        }
        return;
    }
    if (!req.is_hitmiss) {
        return;
    }
    var.set("mc_refresh_now", "" + std.integer(real = (std.real(time = now) - 1700000000) * 1000000));
    if (std.integer(var.get("mc_refresh_now"), 0) - std.integer(var.global_get("mc_invalidated_at " + req.http.host), 0) < 1000000 ||
        std.integer(var.get("mc_refresh_now"), 0) - std.integer(var.global_get("mc_invalidated_at"), 0) < 1000000) {
        return;
    }
    var.set("mc_refresh", "skipped");
    return (synth(204, "No Content"));
}

# A hit-for-pass (an entry VCL's return (pass(...)) in vcl_backend_response;
# this VCL makes hit-for-miss only) was looked up too; passes from vcl_recv
# were not, and do not count.
sub mc_refresh_pass {
    if (req.is_hitpass && req.restarts == 0 && !var.get("mc_refresh")) {
        call mc_refresh_count_reader;
    }
}

sub mc_refresh_deliver {
    if (var.get("mc_refresh")) {
        set resp.http.X-Refresh = var.get("mc_refresh");
    }
}

# Before mc_grace_synth: a failed refresh is reported, not answered with the
# stale copy. A 204 has no body.
sub mc_refresh_synth {
    if (!var.get("mc_refresh")) {
        return;
    }
    if (resp.status == 204) {
        set resp.http.X-Refresh = var.get("mc_refresh");
        return (deliver);
    }
    set resp.http.X-Refresh = "failed";
    unset req.http.x-mc-refresh;
}
