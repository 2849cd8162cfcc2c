#
# microcache/ttl.vcl: how long a page is kept, and what is not kept at all.
# The numbers are in policy.vcl.
#

import std;
import var;

# Surrogate-Control (meant for us) beats s-maxage (meant for shared caches);
# max-age is left to browsers. This is how purge-managed pages get long TTLs.
# Then hit-for-miss, never ttl=0, for what must not be shared: a zero TTL would
# make every request queued on this URL wait for the previous one to finish
# (serialized origin fetches). Cache-Control private or no-store is never
# stored, whatever Surrogate-Control says: the origin (a plugin, a member
# page) says it is one visitor's. no-cache alone without Surrogate-Control is
# not stored either; with it, the page is shared at most the default TTL: a
# page with an anonymous nonce (nocache_headers()) under a plugin's day-long
# Surrogate-Control would otherwise outlive its nonce.
sub mc_ttl_backend_response {
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
    if (beresp.ttl <= 0s ||
        beresp.http.Set-Cookie ||
        beresp.http.Surrogate-Control ~ "(?i)no-store" ||
        beresp.http.Cache-Control ~ "(?i)(private|no-store)" ||
        (!beresp.http.Surrogate-Control && beresp.http.Cache-Control ~ "(?i)no-cache") ||
        beresp.http.Vary == "*") {
        call mc_policy_uncacheable_ttl;
        set beresp.grace = 0s;
        set beresp.uncacheable = true;
        return (deliver);
    }
    if (beresp.http.Cache-Control ~ "(?i)no-cache") {
        var.set_duration("mc_ttl", beresp.ttl);
        call mc_policy_default_ttl;
        if (var.get_duration("mc_ttl") < beresp.ttl) {
            set beresp.ttl = var.get_duration("mc_ttl");
        }
    }
}

# Surrogate-Control is ours: never passed on.
sub mc_ttl_deliver {
    unset resp.http.Surrogate-Control;
}
