#!/usr/bin/env bash
# varnishd.sh VARNISHD_OPTION...: the one way this project starts varnishd: the native stack
# (stack/services/varnish.sh), the test kit (testkit/varnish.mjs), bench's microcaches
# (bench/varnish-microcache.sh) and the Varnish image (stack/images/varnish/start.sh). Varnish 7
# and Vinyl Cache 9.0 alike (Vinyl keeps the varnishd name). It puts the flags every one of them
# runs with first, the caller's after, and execs varnishd: the pid, the signals and the
# foreground or background are the caller's, as if it had run varnishd itself.
#
# The caller gives what differs from one use to the next, as varnishd's own options:
#   -n WORKDIR, -f ENTRY_VCL, -a ADDRESS (one or more), -s STORAGE;
#   -F (foreground: the tests, the container) or -P PIDFILE (a daemon: the native stack, bench);
#   -j JAIL, and -p NAME=VALUE of its own (a later -p wins over one below: the tests'
#   ban_lurker_age=0, a test node's smaller http_req_hdr_len).
# Environment:
#   VARNISH_VCL_DIR  the folder(s) `include "microcache.vcl"` and `microcache/*.vcl` are found in,
#                    first in vcl_path: default this repository's vcl/; the image sets /etc/varnish.
#                    A colon-separated list: a folder of your own first shadows microcache/policy.vcl
#                    (vcl/README.md, "Changing the policy").
#
# The fixed flags, and why:
#   -T 127.0.0.1:0          the management interface on loopback only, on a port the kernel picks
#                           (varnishadm finds it through -n): no other host reaches it, and any
#                           number of varnishd run side by side (tests, bench)
#   -p vcl_path             VARNISH_VCL_DIR, then the package's own VCL folder
#   -p http_req_hdr_len=32k request lines and headers up to 32 KB: wp-admin sends a bulk action as
#                           one GET of ~17 bytes per post, and past Varnish's 8 KB default (500
#                           posts with 4-digit ids) Varnish closed the connection without an answer
#   -p http_req_size=48k    the whole request head (that line plus cookies and the other headers)
#   -p workspace_client=128k  the request head is read into the client workspace, and the VCL works
#                           in the rest of it: 48 KB of request leaves too little of the 96 KB default
# nginx takes the same 32 KB (stack/render-config.sh, large_client_header_buffers).
set -euo pipefail
PATH=$PATH:/usr/sbin   # varnishd, for callers whose PATH lacks it (tests as an ordinary user)
vcl_dir=${VARNISH_VCL_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../vcl" && pwd)}
exec varnishd -T 127.0.0.1:0 -p "vcl_path=$vcl_dir:/usr/share/varnish/vcl" \
  -p http_req_hdr_len=32k -p http_req_size=48k -p workspace_client=128k "$@"
