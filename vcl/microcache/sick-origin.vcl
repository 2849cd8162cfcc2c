#
# microcache/sick-origin.vcl (opt-in): while the probe says the origin is sick,
# fetch through an unprobed twin of it instead of refusing.
#
# The probe decides how stale a page may be served (hours while it says sick,
# grace.vcl), not whether WordPress is asked at all: a saturated origin that
# misses probes can still render the pages nobody has cached, where Varnish
# would answer them 503 at once. A dead origin refuses the connection, so those
# requests still fail fast.
#
# Include it from an entry VCL that defines `backend default` (with the probe)
# and `backend default_unprobed` (the same address, no probe, a short
# first_byte_timeout so a hung origin costs an uncached page seconds, not 30):
#
#     include "microcache/sick-origin.vcl";
#     include "microcache.vcl";
#

import std;

sub mc_sick_origin_backend_fetch {
    if (bereq.backend == default && !std.healthy(default)) {
        set bereq.backend = default_unprobed;
    }
}

sub vcl_backend_fetch {
    call mc_sick_origin_backend_fetch;
}
