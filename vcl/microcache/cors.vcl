#
# microcache/cors.vcl: a cacheable answer is the same for every site that
# reads it. WordPress' REST API answers per request header (Origin for CORS,
# X-HTTP-Method-Override for the method); a shared copy cannot. Cacheable
# fetches send neither (they are not in origin-headers.vcl's allowlist;
# passes keep them): without Origin, every value a client invents would become
# one more long-lived copy; without X-HTTP-Method-Override, a GET could store
# another method's answer. Lookups never vary on Origin
# (mc_normalize_backend_response drops Vary: Origin), so hits need not touch
# either header.
#

# Called by mc_normalize_backend_response when the answer varied on Origin: the
# shared anonymous copy says what a public resource says: any site may read it,
# without credentials (an origin's own fixed Allow-Origin is kept).
sub mc_cors_public {
    if (!beresp.http.Access-Control-Allow-Origin) {
        set beresp.http.Access-Control-Allow-Origin = "*";
        unset beresp.http.Access-Control-Allow-Credentials;
    }
}
