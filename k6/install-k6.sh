#!/usr/bin/env bash
# Prints the path of a k6 v1.8.1 binary, building it with `go install` (about 75 s) only when
# neither PATH nor $K6_BIN_DIR (default $HOME/go/bin) has that version. Build output goes to
# stderr, so `k6=$(k6/install-k6.sh)` works.
set -euo pipefail
K6_VERSION=v1.8.1
K6_BIN_DIR=${K6_BIN_DIR:-$HOME/go/bin}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

has_version() { [[ -x $1 ]] && "$1" version 2>/dev/null | grep -q "k6 $K6_VERSION"; }

for candidate in "$(command -v k6 || true)" "$K6_BIN_DIR/k6"; do
  [[ -n $candidate ]] && has_version "$candidate" && { echo "$candidate"; exit 0; }
done
[[ -x $GO ]] || { echo "install-k6: k6 $K6_VERSION missing and no Go toolchain to build it" >&2; exit 1; }
echo "install-k6: building k6 $K6_VERSION into $K6_BIN_DIR (go install, about 75 s)" >&2
mkdir -p "$K6_BIN_DIR"
GOBIN=$K6_BIN_DIR GOFLAGS=-buildvcs=false "$GO" install "go.k6.io/k6@$K6_VERSION" >&2
has_version "$K6_BIN_DIR/k6" || { echo "install-k6: $K6_BIN_DIR/k6 is not k6 $K6_VERSION" >&2; exit 1; }
echo "$K6_BIN_DIR/k6"
