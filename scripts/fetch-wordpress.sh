#!/usr/bin/env bash
# Usage: scripts/fetch-wordpress.sh sid                whatever WordPress Debian sid serves, at
#                                                     least platforms.json's newest (the newest cell)
#        scripts/fetch-wordpress.sh --at-least MIN    whatever Debian sid serves, refused only when
#                                                     older than MIN (e.g. 7.1: 7.1.4, 7.2, ... pass)
#        scripts/fetch-wordpress.sh VERSION           exactly WordPress VERSION (e.g. 7.1: 7.1.x),
#                                                     refused when sid serves another
#
# Builds .cache/wordpress/<version>/ (the tree's own version, wp-includes/version.php's
# $wp_version, e.g. 7.1.4): a complete WordPress tree like Debian's /usr/share/wordpress
# (wp-content/themes/twentytwentythree and twentytwentyfive included) from Debian sid's packages,
# with no symlink left in it, for WP_SOURCE=... (scripts/suites/plugin.sh, stack/). The newest
# cell of the platform matrix (scripts/platforms.sh) uses `--at-least`: when sid moves to a newer
# WordPress the cell runs on it (and reports the version it ran) instead of failing.
#
# apt-get runs with a private state directory (.cache/apt-sid, scripts/lib/apt-private.sh): the
# machine's /etc/apt and dpkg database are never written; the packages are unpacked with
# dpkg-deb -x into a private root. Debian's wordpress package replaces bundled libraries with symlinks into
# other packages (libjs-*, libphp-phpmailer, php-getid3...) and into /etc: every symlink is
# replaced by a copy of its target, resolved inside the extraction root; an absolute target the
# packages do not ship is taken from this machine when it is there (/etc/ssl/certs/
# ca-certificates.crt is generated at install time, not shipped), /var/lib/wordpress targets
# (Debian's writable data) become empty directories. Idempotent: with a matching tree built
# before, VERSION only prints its path (no network); --at-least asks sid which version it serves
# and builds only a version not built yet, or, when sid cannot be reached, takes the newest tree
# built before that is at least MIN (saying so on stderr). The last line of stdout is the tree's
# path.
set -euo pipefail

die() { echo "fetch-wordpress: $*" >&2; exit 1; }
log() { echo "fetch-wordpress: $*" >&2; }
usage="usage: $0 sid | --at-least MIN | VERSION (e.g. 7.1)"
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=$repo/.cache/wordpress

# wp_version DIR: the WordPress version of the tree at DIR (wp-includes/version.php's $wp_version).
wp_version() { sed -n "s/^\\\$wp_version *= *'\\([^']*\\)'.*/\\1/p" "$1/wp-includes/version.php" 2>/dev/null; }
# at_least A B: whether version A >= version B (7.1.4 >= 7.1, 7.10 >= 7.9).
at_least() { [[ $(printf '%s\n' "$2" "$1" | sort -V | head -n 1) == "$2" ]]; }
# matches V WANT: whether version V is release WANT (7.1 or 7.1.x for WANT 7.1); same V W: V is W.
matches() { [[ $1 == "$2" || $1 == "$2".* ]]; }
same() { [[ $1 == "$2" ]]; }
# cached TEST ARG: the newest complete tree under .cache/wordpress/ whose version passes TEST ARG.
cached() {
  local dir v best="" best_v=""
  for dir in "$cache"/*/; do
    dir=${dir%/}
    [[ ${dir##*/} != .* && -f $dir/wp-settings.php ]] || continue
    v=$(wp_version "$dir")
    if [[ -z $v ]] || ! "$1" "$v" "$2"; then continue; fi
    if [[ -z $best_v ]] || at_least "$v" "$best_v"; then best=$dir best_v=$v; fi
  done
  [[ -n $best ]] && echo "$best"
}

version_re='^[0-9]+(\.[0-9]+)*$'
case ${1:-} in
  sid)
    [[ $# -eq 1 ]] || die "$usage"
    mode=at-least
    # platforms.json's newest WordPress: the cell that follows sid, its version the minimum.
    want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["wordpress"][-1]["version"])' "$repo/platforms.json") ||
      die "cannot read the newest WordPress from platforms.json"
    ;;
  --at-least)
    [[ $# -eq 2 ]] || die "$usage"
    mode=at-least want=$2
    ;;
  *)
    [[ $# -eq 1 ]] || die "$usage"
    mode=exact want=${1:-}
    ;;
esac
[[ $want =~ $version_re ]] || die "$usage"

if [[ $mode == exact ]] && dest=$(cached matches "$want"); then
  echo "$dest"
  exit 0
fi

for tool in apt-get apt-cache dpkg-deb; do
  command -v "$tool" >/dev/null || die "$tool is missing"
done

# Packages: WordPress, the themes the tests use, and the arch-all packages the bundled-library
# symlinks point into. Any symlink still dangling after extraction is reported by name.
packages=(
  wordpress wordpress-theme-twentytwentythree wordpress-theme-twentytwentyfive
  libjs-cropper libjs-jquery-ui libjs-lodash libjs-underscore libphp-phpmailer php-getid3
)

# shellcheck source=scripts/lib/apt-private.sh
source "$repo/scripts/lib/apt-private.sh"
state=$repo/.cache/apt-sid
log "apt-get update (Debian sid, private state in $state)"
if ! apt_private "$state" sid; then
  # Offline: the newest tree built before that is new enough still serves the newest cell.
  if [[ $mode == at-least ]] && dest=$(cached at_least "$want"); then
    log "Debian sid cannot be reached: WordPress $(wp_version "$dest") built before ($dest)"
    echo "$dest"
    exit 0
  fi
  die "apt-get update failed (network? keyring?)"
fi

version=$(apt-cache "${APT_PRIVATE[@]}" policy wordpress | awk '/Candidate:/ { print $2 }')
[[ -n $version && $version != "(none)" ]] || die "Debian sid has no wordpress package"
upstream=${version#*:}
upstream=${upstream%%[-+~]*}
if [[ $mode == exact ]]; then
  if ! matches "$upstream" "$want"; then
    hint=""
    at_least "$upstream" "$want" && hint=" (scripts/fetch-wordpress.sh --at-least $want takes it)"
    die "Debian sid's wordpress is $version, which is not WordPress $want$hint"
  fi
else
  at_least "$upstream" "$want" || die "Debian sid's wordpress is $version, older than WordPress $want"
fi
log "wordpress $version"
if dest=$(cached same "$upstream"); then
  echo "$dest"
  exit 0
fi

work=$cache/.work-$upstream
rm -rf "$work"
mkdir -p "$work/debs" "$work/root"
trap 'rm -rf "$work"' EXIT
(cd "$work/debs" && apt-get "${APT_PRIVATE[@]}" -qq download "wordpress=$version" "${packages[@]:1}" >&2) ||
  die "apt-get download failed"
for deb in "$work"/debs/*.deb; do
  dpkg-deb -x "$deb" "$work/root"
done

root=$work/root
src=$root/usr/share/wordpress
[[ -f $src/wp-settings.php ]] || die "the wordpress package has no usr/share/wordpress/wp-settings.php"

# Absolute symlinks: point them into the extraction root (the packages' own /etc, /usr), taking
# what the packages do not ship from this machine or, for Debian's data dir, an empty directory.
while IFS= read -r link; do
  target=$(readlink "$link")
  [[ $target == /* ]] || continue
  if [[ ! -e $root$target && ! -L $root$target ]]; then
    if [[ -e $target ]]; then
      mkdir -p "$(dirname "$root$target")"
      cp -rL "$target" "$root$target"
    elif [[ $target == /var/lib/wordpress/* ]]; then
      mkdir -p "$root$target"
    else
      die "$(realpath -s --relative-to="$root" "$link") -> $target: not in the packages nor on this machine"
    fi
  fi
  ln -sfn "$root$target" "$link"
done < <(find "$root" -type l)

dangling=$(find -L "$src" -type l 2>/dev/null || true)
[[ -z $dangling ]] || die "symlinks with no target (add their package to the list):"$'\n'"$dangling"

# The tree: every symlink replaced by a copy of what it points to.
tmp=$work/tree
cp -rL --preserve=mode,timestamps "$src" "$tmp"
left=$(find "$tmp" -type l)
[[ -z $left ]] || die "symlinks left in the tree: $left"
for theme in twentytwentythree twentytwentyfive; do
  [[ -f $tmp/wp-content/themes/$theme/style.css ]] || die "theme $theme is missing from the tree"
done
got=$(wp_version "$tmp")
[[ $got =~ ^[0-9]+(\.[0-9]+)* ]] || die "the tree's wp-includes/version.php names no version (${got:-nothing})"
if [[ $mode == exact ]]; then
  matches "$got" "$want" || die "the tree is WordPress $got, not $want"
else
  at_least "$got" "$want" || die "the tree is WordPress $got, older than $want"
fi
dest=$cache/$got
rm -rf "$dest"
mv "$tmp" "$dest"
log "WordPress $got in $dest"
echo "$dest"
