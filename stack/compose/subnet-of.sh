#!/usr/bin/env bash
# subnet-of.sh [--without-gateway] ADDR: the subnet (NET/BITS) of this container's route that
# reaches the IPv4 address ADDR, from /proc/net/route (the images carry no iproute2). The compose
# images use it to trust a network by what is on it instead of a subnet pinned in
# docker-compose.yml: Varnish's `acl purgers` admits the network it shares with the purger,
# WordPress's nginx believes X-Forwarded-For from its own network. --without-gateway: the same
# addresses as CIDR blocks, less the subnet's first host (Docker's bridge: the Docker host itself,
# whose own processes must not claim a reader's address). Prints nothing when no route matches.
set -euo pipefail
except=0
[[ ${1:-} == --without-gateway ]] && { except=1; shift; }
[[ $# -eq 1 && $1 =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || { echo "usage: subnet-of.sh [--without-gateway] IPV4-ADDRESS" >&2; exit 2; }
awk -v ip="$1" -v except="$except" '
  function dec(hex,  i, v) { v = 0; for (i = 1; i <= length(hex); i++) v = v * 16 + index("0123456789ABCDEF", toupper(substr(hex, i, 1))) - 1; return v }
  # /proc/net/route writes addresses as little-endian hex: the octets come reversed.
  function quad(hex) { return dec(substr(hex, 7, 2)) "." dec(substr(hex, 5, 2)) "." dec(substr(hex, 3, 2)) "." dec(substr(hex, 1, 2)) }
  function and8(x, y,  r, p) { r = 0; p = 1; while (x > 0 && y > 0) { if (x % 2 && y % 2) r += p; x = int(x / 2); y = int(y / 2); p *= 2 } return r }
  function ones8(x,  b) { b = 0; while (x > 0) { b += x % 2; x = int(x / 2) } return b }
  BEGIN { split(ip, a, ".") }
  NR > 1 && $8 != "00000000" {
    split(quad($8), m, "."); split(quad($2), d, ".")
    ok = 1; bits = 0
    for (i = 1; i <= 4; i++) { if (and8(a[i] + 0, m[i] + 0) != d[i] + 0) ok = 0; bits += ones8(m[i] + 0) }
    if (ok && bits > best) { best = bits; net = quad($2) "/" bits }
  }
  # NET/BITS less NET+1: NET/32, then NET+2^k/(32-k) for k = 1 .. 31-BITS.
  function plus(q, n,  o, i, c) { split(q, o, "."); for (i = 4; i >= 1; i--) { c = o[i] + n; o[i] = c % 256; n = int(c / 256) } return o[1] "." o[2] "." o[3] "." o[4] }
  END {
    if (net == "") exit
    if (!except) { print net; exit }
    split(net, nb, "/"); out = nb[1] "/32"
    for (k = 1; k <= 31 - nb[2]; k++) out = out " " plus(nb[1], 2 ^ k) "/" (32 - k)
    print out
  }
' /proc/net/route
