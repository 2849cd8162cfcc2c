#!/usr/bin/env bash
# native-vcl.sh SRC HOST PORT: prints SRC (vcl/default.vcl) with the backend address set to
# HOST:PORT and `acl purgers` narrowed to loopback, so the native stack runs the lead's VCL
# unchanged otherwise. Fails if SRC has no backend .host/.port or no `acl purgers` to rewrite.
set -euo pipefail
src=$1 host=$2 port=$3
grep -Eq '\.host[[:space:]]*=' "$src" || { echo "native-vcl: no backend .host in $src" >&2; exit 1; }
grep -Eq 'acl[[:space:]]+purgers' "$src" || { echo "native-vcl: no 'acl purgers' in $src" >&2; exit 1; }
HOST=$host PORT=$port perl -0pe '
  s/(\.host\s*=\s*)"[^"]*"/$1"$ENV{HOST}"/g;
  s/(\.port\s*=\s*)"[^"]*"/$1"$ENV{PORT}"/g;
  s/(acl\s+purgers\s*\{).*?\n\}/$1\n  "127.0.0.1";\n  "::1";\n}/s;
' "$src"
