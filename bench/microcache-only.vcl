# Included by bench/varnish-microcache.sh's entry VCL (vcl/render-entry.sh --include .../microcache-only.vcl)
# just before microcache.vcl: pure microcache mode. The plugin's Surrogate-Control (long TTL,
# kept fresh by purges) is dropped before microcache.vcl reads it, so every page gets the 1 s
# default TTL. Subroutines of the same name run in the order they appear; microcache.vcl's
# vcl_backend_response returns, so this must come first.
#
# This Varnish gets no purges, so its entry trusts no address (PURGERS empty): the load
# generators on loopback are served as visitors are, not as the stack's trusted operator
# (whose requests cost more: cache state, relay checks).

sub vcl_backend_response {
    unset beresp.http.Surrogate-Control;
}
