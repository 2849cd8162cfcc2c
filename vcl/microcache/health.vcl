#
# microcache/health.vcl: GET /varnish-health, answered by Varnish itself for
# load balancers; the origin is never touched.
#

import std;

sub mc_health_recv {
    if (req.url == "/varnish-health" && (req.method == "GET" || req.method == "HEAD")) {
        return (synth(200, "OK"));
    }
}

# Everyone learns that Varnish is up (200); only trusted clients whether
# the origin is: a load balancer needs the first, an attacker the second.
sub mc_health_synth {
    if (req.url == "/varnish-health" && resp.status == 200 && req.http.x-mc-debug) {
        if (std.healthy(req.backend_hint)) {
            set resp.http.X-Backend-Health = "healthy";
        } else {
            set resp.http.X-Backend-Health = "sick";
        }
    }
}
