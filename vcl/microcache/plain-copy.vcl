#
# microcache/plain-copy.vcl: text is stored gzipped for clients that take gzip,
# and as a plain copy of its own for those that do not (curl, load generators,
# some bots): gunzipping a page on every hit costs ten times what the hit itself
# does. Text also varies on X-Forwarded-Proto (forwarded.vcl): WordPress writes
# http:// or https:// links into it, so a site reached both ways keeps a copy
# per scheme. All copies live under one hash, so a PURGE or an xkey purge
# removes them all.
#

# By now Varnish has reduced Accept-Encoding to "gzip" or nothing. Varnish
# ignores Accept-Encoding when it matches Vary, so this flag is what keeps a
# plain-text copy apart from the gzipped one.
sub mc_plain_copy_hash {
    if (!req.http.Accept-Encoding) {
        set req.http.x-mc-plain = "1";
    }
}

# A plain copy is fetched plain: Varnish would otherwise ask for gzip. The
# flag is not the origin's business; mc_plain_copy_backend_response puts it back.
sub mc_plain_copy_backend_fetch {
    if (bereq.http.x-mc-plain) {
        unset bereq.http.Accept-Encoding;
        unset bereq.http.x-mc-plain;
    }
}

sub mc_plain_copy_backend_response {
    if (beresp.http.Content-Type !~ "^(?i)(text/|application/(javascript|json|ld\+json|xml|rss\+xml|atom\+xml|manifest\+json)|image/svg\+xml)" ||
        beresp.http.Vary ~ "\*") {
        return;
    }
    if (bereq.http.Accept-Encoding) {
        if (!beresp.http.Content-Encoding) {
            set beresp.do_gzip = true;
        }
    } else {
        set bereq.http.x-mc-plain = "1";
    }
    if (!beresp.http.Vary) {
        set beresp.http.Vary = "Accept-Encoding";
    } elsif (beresp.http.Vary !~ "(?i)(^|,)\s*Accept-Encoding\s*(,|$)") {
        set beresp.http.Vary = beresp.http.Vary + ", Accept-Encoding";
    }
    set beresp.http.Vary = beresp.http.Vary + ", X-MC-Plain, X-Forwarded-Proto";
}

# Clients see the Vary the origin sent (plus Accept-Encoding), not our flag.
# Objects without Vary (images, fonts: not text) take no regex.
sub mc_plain_copy_deliver {
    if (resp.http.Vary == "Accept-Encoding, X-MC-Plain, X-Forwarded-Proto") {
        set resp.http.Vary = "Accept-Encoding";   # the common case, without a regex
    } elsif (resp.http.Vary && resp.http.Vary ~ "X-MC-Plain") {
        set resp.http.Vary = regsub(resp.http.Vary, ",?\s*X-MC-Plain(, X-Forwarded-Proto)?", "");
    }
}
