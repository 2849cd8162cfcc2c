# Included by bench/varnish-microcache.sh's full flavour after bench/microcache-only.vcl: the
# cache state (X-Cache & co., vcl/microcache/debug.vcl) shown to every client, so k6 can count
# hits and make bench can ask /varnish-health. A deployment shows it to trusted addresses only;
# the hit-path runs (bench/hit_path.py) use the quiet flavour, without this file, as users run it.
import var;

sub vcl_recv {
    var.set("mc_debug_headers", "all");
}
