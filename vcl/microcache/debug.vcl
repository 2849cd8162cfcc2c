#
# microcache/debug.vcl: the cache state (X-Cache: HIT, STALE, MISS, PASS with
# X-Cache-Reason, SYNTH; X-Cache-Hits; X-Varnish; Age) for clients with
# x-mc-debug (trust.vcl: trusted clients, or everyone with mc_debug_headers).
# To anyone else it tells what others recently asked for, so they get none.
#

# The state is noted only for clients that will see it: a hit for anyone else
# costs no header work. PASS needs no note: mc_debug_deliver reads it from
# obj.uncacheable.
sub mc_debug_hit {
    if (req.http.x-mc-debug) {
        set req.http.x-mc-cache = "HIT";
    }
}

sub mc_debug_miss {
    if (req.http.x-mc-debug) {
        set req.http.x-mc-cache = "MISS";
    }
}

sub mc_debug_deliver {
    if (!req.http.x-mc-debug) {
        call mc_debug_hide;
        return;
    }
    if (obj.uncacheable) {
        set resp.http.X-Cache = "PASS";
        if (req.http.x-mc-bypass) {
            set resp.http.X-Cache-Reason = req.http.x-mc-bypass;
        } elsif (resp.http.x-mc-uncacheable) {
            set resp.http.X-Cache-Reason = resp.http.x-mc-uncacheable;
            unset resp.http.x-mc-uncacheable;
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
sub mc_debug_hide {
    unset resp.http.X-Varnish;
    if (!resp.http.Cache-Control) {
        unset resp.http.Age;
    }
    # Only hit-for-miss objects carry a reason (x-mc-uncacheable): no cost on hits.
    if (obj.uncacheable) {
        unset resp.http.x-mc-uncacheable;
    }
}

sub mc_debug_synth {
    if (req.http.x-mc-debug) {
        set resp.http.X-Cache = "SYNTH";
    } else {
        unset resp.http.X-Varnish;
    }
}
