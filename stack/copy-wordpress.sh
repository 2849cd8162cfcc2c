#!/usr/bin/env bash
# Usage: stack/copy-wordpress.sh [--core] SOURCE DEST
#
# Copies a WordPress tree (Debian's /usr/share/wordpress, or one scripts/fetch-wordpress.sh built)
# into DEST as plain files: wp-config.php, .htaccess and wp-content/languages are left out (the
# copy gets its own). Debian's package links its bundled libraries (underscore, the image cropper,
# getID3) to other packages by *relative* symlinks, which break in any copy and leave the Media
# Library blank; every link is therefore copied as the file it points to (tar -h). A link whose
# target is missing stops the copy with its name, and the copy is checked for dangling links.
# With --core, wp-content is left out too: the core alone, for a refresh of a site's tree
# (stack/prepare-wordpress.sh refresh_core), which must never touch the site's wp-content.
# The stack (stack/prepare-wordpress.sh), its image and the plugin's tests all copy through here.
set -euo pipefail
die() { echo "copy-wordpress: $*" >&2; exit 1; }
skip=(--exclude=./wp-content/languages)
if [[ ${1:-} == --core ]]; then skip=(--exclude=./wp-content); shift; fi
[[ $# -eq 2 ]] || die "usage: $0 [--core] SOURCE DEST"
src=${1%/} dest=${2%/}
[[ -f $src/wp-settings.php ]] || die "$src/wp-settings.php is missing: no WordPress tree there (Debian: apt-get install wordpress)"

dangling=$(cd "$src" && find . -xtype l ! -path ./wp-config.php ! -path ./.htaccess ! -path './wp-content/languages*' -printf '%p -> %l\n')
[[ -z $dangling ]] || die "links in $src point to nothing (is the package that ships them installed? Debian's wordpress depends on libjs-underscore, libjs-cropper, php-getid3):
$dangling"

mkdir -p "$dest"
(cd "$src" && tar --dereference --exclude=./wp-config.php --exclude=./.htaccess \
  "${skip[@]}" -cf - .) | (cd "$dest" && tar -xf -)

left=$(find "$dest" -xtype l -printf '%p\n')
[[ -z $left ]] || die "the copy in $dest still has dangling links:
$left"
