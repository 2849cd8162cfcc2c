#
# microcache/purge-token.vcl: what a usable purge token is, said once. The
# purger sends its shared secret (VARNISH_PURGE_TOKEN) as X-Purge-Token; the
# entry VCL reads the same secret from a file into var mc_purge_token. Usable:
# 16 to 128 visible ASCII characters, no spaces; whitespace around it (the
# file's trailing newline) is not part of it. The purger's configuration and
# stack/settings.table check the same rule.
#

import str;
import var;

# var mc_purge_token becomes the bare token when it is usable; otherwise
# var mc_purge_token_unusable is set. Called from the entry's vcl_init (which
# then refuses to load) and from mc_invalidate_allowed (which refuses).
sub mc_purge_token_parse {
    if (var.get("mc_purge_token") ~ "^\s*[!-~]{16,128}\s*$") {
        var.set("mc_purge_token", regsuball(var.get("mc_purge_token"), "^\s+|\s+$", ""));
    } else {
        var.set("mc_purge_token_unusable", "1");
    }
}

# Is X-Purge-Token the token? A string compare stops at the first byte that
# differs, so its time tells a prober how much of a guess was right. Here the
# time depends on the lengths only: each of the 128 positions is compared one
# byte at a time, whatever came before, on copies padded with 128 spaces (never
# in a token) so every position exists. var mc_purge_token_wrong is set when the
# lengths or any position differ. Called by mc_invalidate_allowed.
sub mc_purge_token_compare {
    var.set("mc_purge_token_wrong", "0");
    if (str.count(req.http.X-Purge-Token + "") != str.count(var.get("mc_purge_token"))) {
        var.set("mc_purge_token_wrong", "1");
        return;
    }
    var.set("mc_purge_token_a", req.http.X-Purge-Token + "                                                                                                                                ");
    var.set("mc_purge_token_b", var.get("mc_purge_token") + "                                                                                                                                ");
    if (str.take(var.get("mc_purge_token_a"), 1, 0) != str.take(var.get("mc_purge_token_b"), 1, 0)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 1) != str.take(var.get("mc_purge_token_b"), 1, 1)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 2) != str.take(var.get("mc_purge_token_b"), 1, 2)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 3) != str.take(var.get("mc_purge_token_b"), 1, 3)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 4) != str.take(var.get("mc_purge_token_b"), 1, 4)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 5) != str.take(var.get("mc_purge_token_b"), 1, 5)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 6) != str.take(var.get("mc_purge_token_b"), 1, 6)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 7) != str.take(var.get("mc_purge_token_b"), 1, 7)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 8) != str.take(var.get("mc_purge_token_b"), 1, 8)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 9) != str.take(var.get("mc_purge_token_b"), 1, 9)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 10) != str.take(var.get("mc_purge_token_b"), 1, 10)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 11) != str.take(var.get("mc_purge_token_b"), 1, 11)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 12) != str.take(var.get("mc_purge_token_b"), 1, 12)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 13) != str.take(var.get("mc_purge_token_b"), 1, 13)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 14) != str.take(var.get("mc_purge_token_b"), 1, 14)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 15) != str.take(var.get("mc_purge_token_b"), 1, 15)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 16) != str.take(var.get("mc_purge_token_b"), 1, 16)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 17) != str.take(var.get("mc_purge_token_b"), 1, 17)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 18) != str.take(var.get("mc_purge_token_b"), 1, 18)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 19) != str.take(var.get("mc_purge_token_b"), 1, 19)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 20) != str.take(var.get("mc_purge_token_b"), 1, 20)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 21) != str.take(var.get("mc_purge_token_b"), 1, 21)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 22) != str.take(var.get("mc_purge_token_b"), 1, 22)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 23) != str.take(var.get("mc_purge_token_b"), 1, 23)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 24) != str.take(var.get("mc_purge_token_b"), 1, 24)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 25) != str.take(var.get("mc_purge_token_b"), 1, 25)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 26) != str.take(var.get("mc_purge_token_b"), 1, 26)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 27) != str.take(var.get("mc_purge_token_b"), 1, 27)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 28) != str.take(var.get("mc_purge_token_b"), 1, 28)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 29) != str.take(var.get("mc_purge_token_b"), 1, 29)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 30) != str.take(var.get("mc_purge_token_b"), 1, 30)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 31) != str.take(var.get("mc_purge_token_b"), 1, 31)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 32) != str.take(var.get("mc_purge_token_b"), 1, 32)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 33) != str.take(var.get("mc_purge_token_b"), 1, 33)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 34) != str.take(var.get("mc_purge_token_b"), 1, 34)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 35) != str.take(var.get("mc_purge_token_b"), 1, 35)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 36) != str.take(var.get("mc_purge_token_b"), 1, 36)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 37) != str.take(var.get("mc_purge_token_b"), 1, 37)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 38) != str.take(var.get("mc_purge_token_b"), 1, 38)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 39) != str.take(var.get("mc_purge_token_b"), 1, 39)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 40) != str.take(var.get("mc_purge_token_b"), 1, 40)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 41) != str.take(var.get("mc_purge_token_b"), 1, 41)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 42) != str.take(var.get("mc_purge_token_b"), 1, 42)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 43) != str.take(var.get("mc_purge_token_b"), 1, 43)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 44) != str.take(var.get("mc_purge_token_b"), 1, 44)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 45) != str.take(var.get("mc_purge_token_b"), 1, 45)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 46) != str.take(var.get("mc_purge_token_b"), 1, 46)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 47) != str.take(var.get("mc_purge_token_b"), 1, 47)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 48) != str.take(var.get("mc_purge_token_b"), 1, 48)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 49) != str.take(var.get("mc_purge_token_b"), 1, 49)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 50) != str.take(var.get("mc_purge_token_b"), 1, 50)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 51) != str.take(var.get("mc_purge_token_b"), 1, 51)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 52) != str.take(var.get("mc_purge_token_b"), 1, 52)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 53) != str.take(var.get("mc_purge_token_b"), 1, 53)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 54) != str.take(var.get("mc_purge_token_b"), 1, 54)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 55) != str.take(var.get("mc_purge_token_b"), 1, 55)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 56) != str.take(var.get("mc_purge_token_b"), 1, 56)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 57) != str.take(var.get("mc_purge_token_b"), 1, 57)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 58) != str.take(var.get("mc_purge_token_b"), 1, 58)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 59) != str.take(var.get("mc_purge_token_b"), 1, 59)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 60) != str.take(var.get("mc_purge_token_b"), 1, 60)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 61) != str.take(var.get("mc_purge_token_b"), 1, 61)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 62) != str.take(var.get("mc_purge_token_b"), 1, 62)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 63) != str.take(var.get("mc_purge_token_b"), 1, 63)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 64) != str.take(var.get("mc_purge_token_b"), 1, 64)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 65) != str.take(var.get("mc_purge_token_b"), 1, 65)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 66) != str.take(var.get("mc_purge_token_b"), 1, 66)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 67) != str.take(var.get("mc_purge_token_b"), 1, 67)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 68) != str.take(var.get("mc_purge_token_b"), 1, 68)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 69) != str.take(var.get("mc_purge_token_b"), 1, 69)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 70) != str.take(var.get("mc_purge_token_b"), 1, 70)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 71) != str.take(var.get("mc_purge_token_b"), 1, 71)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 72) != str.take(var.get("mc_purge_token_b"), 1, 72)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 73) != str.take(var.get("mc_purge_token_b"), 1, 73)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 74) != str.take(var.get("mc_purge_token_b"), 1, 74)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 75) != str.take(var.get("mc_purge_token_b"), 1, 75)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 76) != str.take(var.get("mc_purge_token_b"), 1, 76)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 77) != str.take(var.get("mc_purge_token_b"), 1, 77)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 78) != str.take(var.get("mc_purge_token_b"), 1, 78)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 79) != str.take(var.get("mc_purge_token_b"), 1, 79)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 80) != str.take(var.get("mc_purge_token_b"), 1, 80)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 81) != str.take(var.get("mc_purge_token_b"), 1, 81)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 82) != str.take(var.get("mc_purge_token_b"), 1, 82)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 83) != str.take(var.get("mc_purge_token_b"), 1, 83)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 84) != str.take(var.get("mc_purge_token_b"), 1, 84)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 85) != str.take(var.get("mc_purge_token_b"), 1, 85)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 86) != str.take(var.get("mc_purge_token_b"), 1, 86)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 87) != str.take(var.get("mc_purge_token_b"), 1, 87)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 88) != str.take(var.get("mc_purge_token_b"), 1, 88)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 89) != str.take(var.get("mc_purge_token_b"), 1, 89)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 90) != str.take(var.get("mc_purge_token_b"), 1, 90)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 91) != str.take(var.get("mc_purge_token_b"), 1, 91)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 92) != str.take(var.get("mc_purge_token_b"), 1, 92)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 93) != str.take(var.get("mc_purge_token_b"), 1, 93)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 94) != str.take(var.get("mc_purge_token_b"), 1, 94)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 95) != str.take(var.get("mc_purge_token_b"), 1, 95)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 96) != str.take(var.get("mc_purge_token_b"), 1, 96)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 97) != str.take(var.get("mc_purge_token_b"), 1, 97)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 98) != str.take(var.get("mc_purge_token_b"), 1, 98)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 99) != str.take(var.get("mc_purge_token_b"), 1, 99)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 100) != str.take(var.get("mc_purge_token_b"), 1, 100)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 101) != str.take(var.get("mc_purge_token_b"), 1, 101)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 102) != str.take(var.get("mc_purge_token_b"), 1, 102)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 103) != str.take(var.get("mc_purge_token_b"), 1, 103)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 104) != str.take(var.get("mc_purge_token_b"), 1, 104)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 105) != str.take(var.get("mc_purge_token_b"), 1, 105)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 106) != str.take(var.get("mc_purge_token_b"), 1, 106)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 107) != str.take(var.get("mc_purge_token_b"), 1, 107)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 108) != str.take(var.get("mc_purge_token_b"), 1, 108)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 109) != str.take(var.get("mc_purge_token_b"), 1, 109)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 110) != str.take(var.get("mc_purge_token_b"), 1, 110)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 111) != str.take(var.get("mc_purge_token_b"), 1, 111)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 112) != str.take(var.get("mc_purge_token_b"), 1, 112)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 113) != str.take(var.get("mc_purge_token_b"), 1, 113)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 114) != str.take(var.get("mc_purge_token_b"), 1, 114)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 115) != str.take(var.get("mc_purge_token_b"), 1, 115)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 116) != str.take(var.get("mc_purge_token_b"), 1, 116)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 117) != str.take(var.get("mc_purge_token_b"), 1, 117)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 118) != str.take(var.get("mc_purge_token_b"), 1, 118)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 119) != str.take(var.get("mc_purge_token_b"), 1, 119)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 120) != str.take(var.get("mc_purge_token_b"), 1, 120)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 121) != str.take(var.get("mc_purge_token_b"), 1, 121)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 122) != str.take(var.get("mc_purge_token_b"), 1, 122)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 123) != str.take(var.get("mc_purge_token_b"), 1, 123)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 124) != str.take(var.get("mc_purge_token_b"), 1, 124)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 125) != str.take(var.get("mc_purge_token_b"), 1, 125)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 126) != str.take(var.get("mc_purge_token_b"), 1, 126)) { var.set("mc_purge_token_wrong", "1"); }
    if (str.take(var.get("mc_purge_token_a"), 1, 127) != str.take(var.get("mc_purge_token_b"), 1, 127)) { var.set("mc_purge_token_wrong", "1"); }
}
