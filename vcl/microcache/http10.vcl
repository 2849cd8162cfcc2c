#
# microcache/http10.vcl: HTTP/1.0 keep-alive clients (ApacheBench's ab -k,
# some monitors and proxies) keep their connection and get each body with
# the length they were told.
#
# Varnish decides Connection: keep-alive before it knows how the body will be
# delimited (V1D_Deliver in http1/cache_http1_deliver.c, 7.1 to 9.0). A body
# whose length is not known yet, an object still streaming in from the origin
# (the miss itself, and every hit on the new copy of a page until its last byte
# is in: once a second per hot page in microcache mode), goes chunked to an
# HTTP/1.1 client; HTTP/1.0 has no chunks, so Varnish sends it without
# Content-Length and ends it by closing the connection, while the header still
# says "Connection: keep-alive". A client that believes the header reads the
# rest of the body as its next response (ab: a Length failure, then an invalid
# header, and "Test aborted after 10 failures").
#
# So a fetch an HTTP/1.0 client starts for the cache is not streamed: the page
# becomes visible whole, with its length. Clients queued behind such a miss get
# it when its last byte is in instead of byte by byte; a background refresh
# changes nothing for anyone (the stale copy is served meanwhile). Fetches
# HTTP/1.1 clients start stream as before. What still reaches an HTTP/1.0
# client in flight (a hit on a page an HTTP/1.1 client's fetch is streaming, a
# pass, a hit-for-miss) says Connection: close, which is the truth.
#

import var;

# x-mc-http10 (cleared by guard.vcl): this request starts the fetch, "fetch" for
# its own miss (it is delivered that fetch's object), "refresh" for the
# background refresh a stale hit starts (it is delivered the stale copy). A
# foreground refresh restarts into vcl_miss.
sub mc_http10_hit {
    if (obj.ttl < 0s && req.proto == "HTTP/1.0") {
        set req.http.x-mc-http10 = "refresh";
    }
}

sub mc_http10_miss {
    if (req.proto == "HTTP/1.0") {
        set req.http.x-mc-http10 = "fetch";
    }
}

# The flag is not the origin's business; the backend task keeps it.
sub mc_http10_backend_fetch {
    if (bereq.http.x-mc-http10) {
        unset bereq.http.x-mc-http10;
        var.set("mc_http10", "1");
    }
}

# Cacheable fetches only (microcache.vcl calls this after the pass check): a
# pass or hit-for-miss is one client's, and may be a download not worth holding.
sub mc_http10_backend_response {
    if (var.get("mc_http10") == "1") {
        set beresp.do_stream = false;
    }
}

# resp.is_streaming means the fetch has not let go of the object yet: a miss
# that was not streamed is complete by now (Varnish gives it a length), any
# other object may still be arriving.
sub mc_http10_deliver {
    if (resp.is_streaming && req.proto == "HTTP/1.0" &&
        (req.http.x-mc-http10 != "fetch" || obj.uncacheable)) {
        set resp.http.Connection = "close";
    }
}
