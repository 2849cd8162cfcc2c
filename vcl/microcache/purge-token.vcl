#
# microcache/purge-token.vcl: what a usable purge token is, said once. The
# purger sends its shared secret (VARNISH_PURGE_TOKEN) as X-Purge-Token; the
# entry VCL reads the same secret from a file into var mc_purge_token. Usable:
# 16 or more visible ASCII characters, no spaces; whitespace around it (the
# file's trailing newline) is not part of it. The purger's configuration and
# stack/settings.table check the same rule.
#

import var;

# var mc_purge_token becomes the bare token when it is usable; otherwise
# var mc_purge_token_unusable is set. Called from the entry's vcl_init (which
# then refuses to load) and from mc_invalidate_allowed (which refuses).
sub mc_purge_token_parse {
    if (var.get("mc_purge_token") ~ "^\s*[!-~]{16,}\s*$") {
        var.set("mc_purge_token", regsuball(var.get("mc_purge_token"), "^\s+|\s+$", ""));
    } else {
        var.set("mc_purge_token_unusable", "1");
    }
}
