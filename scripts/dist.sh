#!/usr/bin/env bash
# Usage: scripts/dist.sh [OUTDIR]   (make dist; OUTDIR defaults to dist/ at the repository root)
#
# Builds OUTDIR/varnish-edge-<version>.zip, the file a site owner uploads under Plugins → Add New →
# Upload Plugin: one top-level folder varnish-edge/ holding the plugin's runtime files and
# readme.txt, nothing else. <version> is the plugin header's `Version:`; the script stops when the
# VERSION constant or readme.txt's `Stable tag:` disagree with it.
#
# The tree is checked against an allow-list before anything is written: any other file (a test, a
# dev config, node_modules, an editor backup, a dotfile, a symlink) stops the build with its name.
# Every PHP file must pass `php -l`. The archive is reproducible: entries sorted, fixed
# permissions (0644 files, 0755 folders), every time stamp SOURCE_DATE_EPOCH (default: the last
# commit that touched the plugin), so the same tree gives the same bytes.
# DIST_SOURCE=<dir> builds from another copy of the plugin folder (the tests' refusal check).
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "dist: $*" >&2; exit 1; }

src=${DIST_SOURCE:-wordpress-plugin/varnish-edge}
src=${src%/}
out=${1:-dist}
[[ -f $src/varnish-edge.php ]] || die "$src/varnish-edge.php is missing: not the plugin folder"

# Version: the header is what WordPress reads; the constant and the readme must say the same.
version=$(sed -n 's/^[ *]*Version:[[:space:]]*\([^[:space:]]*\)[[:space:]]*$/\1/p' "$src/varnish-edge.php" | head -1)
[[ $version =~ ^[0-9]+(\.[0-9]+)*([-.][0-9A-Za-z.]+)?$ ]] ||
  die "no usable 'Version:' in the header of $src/varnish-edge.php (found '${version}')"
constant=$(sed -n "s/^const VERSION[[:space:]]*=[[:space:]]*'\([^']*\)';.*/\1/p" "$src/varnish-edge.php")
[[ $constant == "$version" ]] || die "header Version $version != const VERSION '$constant' in $src/varnish-edge.php"
stable=$(sed -n 's/^Stable tag:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$src/readme.txt" 2>/dev/null || true)
[[ $stable == "$version" ]] || die "header Version $version != readme.txt's 'Stable tag: ${stable}'"

# What a runtime folder may hold (paths relative to it). Anything else is a mistake to fix here or
# in the tree, never something to ship silently.
allowed() {
  # includes/: class-plugin.php (the composition root) at the top, the other classes one folder down
  # (one folder per role, varnish-edge.php's CLASS_FOLDERS).
  [[ $1 =~ ^includes/([^/.][^/]*/)?(class-[^/]*|index)\.php$ ]] && return 0
  case $1 in
    varnish-edge.php | uninstall.php | readme.txt | index.php) return 0 ;;
    languages/*/*) return 1 ;;
    languages/*.pot | languages/*.po | languages/*.mo | languages/*.json) return 0 ;;
    assets/*/*) return 1 ;;
    assets/*.css | assets/*.js | assets/*.png | assets/*.svg) return 0 ;;
  esac
  return 1
}
files=() bad=()
while IFS= read -r -d '' path; do
  rel=${path#"$src"/}
  if [[ -L $path ]]; then
    bad+=("$rel (a symlink)")
  elif [[ -d $path ]]; then
    continue
  elif [[ ! -f $path ]]; then
    bad+=("$rel (not a regular file)")
  elif [[ ${rel##*/} == .* ]] || ! allowed "$rel"; then
    bad+=("$rel")
  else
    files+=("$rel")
  fi
done < <(find "$src" -mindepth 1 -print0)
((${#bad[@]} == 0)) || die "not a runtime file of the plugin, refusing to build (move it out of $src, or allow it in $0):
$(printf '  %s\n' "${bad[@]}")"
for required in varnish-edge.php uninstall.php readme.txt includes/class-plugin.php; do
  [[ -f $src/$required ]] || die "$src/$required is missing"
done

if command -v php >/dev/null; then
  for f in "${files[@]}"; do
    [[ $f == *.php ]] || continue
    php -d display_errors=1 -l "$src/$f" >/dev/null 2>&1 || die "$src/$f: $(php -l "$src/$f" 2>&1 | head -3)"
  done
fi

epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct -- "$src" 2>/dev/null || true)}
epoch=${epoch:-315532800} # 1980-01-01, the earliest time a zip can hold
mkdir -p "$out"
zip="$out/varnish-edge-$version.zip"
py=/usr/bin/python3
[[ -x $py ]] || py=python3
"$py" - "$src" "$zip" "$epoch" "${files[@]}" <<'PY'
import hashlib, os, sys, time, zipfile
src, dest, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(sys.argv[4:])
stamp = time.gmtime(max(epoch, 315532800))[:6]
folders = sorted({"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 1)})

def entry(name, mode):
    info = zipfile.ZipInfo("varnish-edge/" + name, stamp)
    folder = info.filename.endswith("/")
    info.create_system = 3  # Unix, so the permissions below are honoured
    info.external_attr = mode << 16 | (0x10 if folder else 0)  # 0x10: MS-DOS directory bit
    info.compress_type = zipfile.ZIP_STORED if folder else zipfile.ZIP_DEFLATED
    return info

tmp = dest + ".tmp"
with zipfile.ZipFile(tmp, "w") as z:
    z.writestr(entry("", 0o40755), b"")
    for folder in folders:
        z.writestr(entry(folder + "/", 0o40755), b"")
    for f in files:
        with open(os.path.join(src, f), "rb") as fh:
            z.writestr(entry(f, 0o100644), fh.read(), compresslevel=9)
with zipfile.ZipFile(tmp) as z:
    bad = z.testzip()
    if bad:
        sys.exit(f"dist: {bad} is corrupt in the new archive")
    names = [n for n in z.namelist() if not n.endswith("/")]
    if names != ["varnish-edge/" + f for f in files]:
        sys.exit("dist: the archive does not list exactly the files it was given")
os.replace(tmp, dest)
digest = hashlib.sha256(open(dest, "rb").read()).hexdigest()
print(f"dist: {dest}: {len(files)} files, {os.path.getsize(dest)} bytes, sha256 {digest}")
PY
