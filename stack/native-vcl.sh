#!/usr/bin/env bash
# native-vcl.sh SRC HOST PORT TOKEN_FILE: prints SRC (vcl/default.vcl) with the backend address
# set to HOST:PORT, `acl purgers` narrowed to loopback and the purge token read from TOKEN_FILE
# instead of /run/secrets/varnish_purge_token, so the native stack runs the lead's VCL unchanged
# otherwise. Fails if SRC has no backend .host/.port, `acl purgers` or token path to rewrite.
set -euo pipefail
src=$1 host=$2 port=$3 token=$4
grep -Eq '\.host[[:space:]]*=' "$src" || { echo "native-vcl: no backend .host in $src" >&2; exit 1; }
grep -Eq 'acl[[:space:]]+purgers' "$src" || { echo "native-vcl: no 'acl purgers' in $src" >&2; exit 1; }
grep -q '/run/secrets/varnish_purge_token' "$src" || { echo "native-vcl: no /run/secrets/varnish_purge_token in $src" >&2; exit 1; }
[[ $token =~ ^/[A-Za-z0-9._/-]+$ ]] || { echo "native-vcl: token file path '$token' must be absolute, without quotes or spaces" >&2; exit 1; }
HOST=$host PORT=$port TOKEN=$token perl -0pe '
  s/(\.host\s*=\s*)"[^"]*"/$1"$ENV{HOST}"/g;
  s/(\.port\s*=\s*)"[^"]*"/$1"$ENV{PORT}"/g;
  s/(acl\s+purgers\s*\{).*?\n\}/$1\n  "127.0.0.1";\n  "::1";\n}/s;
  s{/run/secrets/varnish_purge_token}{$ENV{TOKEN}}g;
' "$src"
