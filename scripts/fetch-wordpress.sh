#!/usr/bin/env bash
# Usage: scripts/fetch-wordpress.sh VERSION   (e.g. 7.1)
#
# Builds .cache/wordpress/VERSION/: a complete WordPress tree like Debian's /usr/share/wordpress
# (wp-content/themes/twentytwentythree and twentytwentyfive included) from Debian sid's packages,
# with no symlink left in it, for WP_SOURCE=... (scripts/suites/plugin.sh, stack/).
#
# apt-get runs with a private state directory (.cache/apt-sid, scripts/lib/apt-private.sh): the
# machine's /etc/apt and dpkg database are never written; the packages are unpacked with
# dpkg-deb -x into a private root. Debian's wordpress package replaces bundled libraries with symlinks into
# other packages (libjs-*, libphp-phpmailer, php-getid3...) and into /etc: every symlink is
# replaced by a copy of its target, resolved inside the extraction root; an absolute target the
# packages do not ship is taken from this machine when it is there (/etc/ssl/certs/
# ca-certificates.crt is generated at install time, not shipped), /var/lib/wordpress targets
# (Debian's writable data) become empty directories. Idempotent: with the tree present it only
# prints its path. The last line of stdout is the tree's path.
set -euo pipefail

die() { echo "fetch-wordpress: $*" >&2; exit 1; }
log() { echo "fetch-wordpress: $*" >&2; }

[[ $# -eq 1 && $1 =~ ^[0-9]+(\.[0-9]+)*$ ]] || die "usage: $0 VERSION (e.g. 7.1)"
want=$1
repo=$(cd "$(dirname "$0")/.." && pwd)
dest=$repo/.cache/wordpress/$want

if [[ -f $dest/wp-settings.php && -f $dest/wp-includes/version.php ]]; then
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
apt_private "$state" sid || die "apt-get update failed (network? keyring?)"

version=$(apt-cache "${APT_PRIVATE[@]}" policy wordpress | awk '/Candidate:/ { print $2 }')
[[ -n $version && $version != "(none)" ]] || die "Debian sid has no wordpress package"
upstream=${version#*:}
upstream=${upstream%%[-+~]*}
if [[ $upstream != "$want" && $upstream != "$want".* ]]; then
  die "Debian sid's wordpress is $version, which is not WordPress $want"
fi
log "wordpress $version"

work=$repo/.cache/wordpress/.work-$want
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
tmp=$dest.tmp
rm -rf "$tmp"
mkdir -p "$(dirname "$dest")"
cp -rL --preserve=mode,timestamps "$src" "$tmp"
left=$(find "$tmp" -type l)
[[ -z $left ]] || die "symlinks left in the tree: $left"
for theme in twentytwentythree twentytwentyfive; do
  [[ -f $tmp/wp-content/themes/$theme/style.css ]] || die "theme $theme is missing from the tree"
done
got=$(sed -n "s/^\$wp_version = '\(.*\)';/\1/p" "$tmp/wp-includes/version.php")
[[ $got == "$want" || $got == "$want".* ]] || die "the tree is WordPress $got, not $want"
rm -rf "$dest"
mv "$tmp" "$dest"
log "WordPress $got in $dest"
echo "$dest"
