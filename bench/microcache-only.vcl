# Included by bench/varnish-microcache.sh's entry VCL (stack/native-vcl.sh ... microcache-only.vcl)
# just before microcache.vcl: pure microcache mode. The plugin's Surrogate-Control (long TTL,
# kept fresh by purges) is dropped before microcache.vcl reads it, so every page gets the 1 s
# default TTL. Subroutines of the same name run in the order they appear; microcache.vcl's
# vcl_backend_response returns, so this must come first.
sub vcl_backend_response {
    unset beresp.http.Surrogate-Control;
}
