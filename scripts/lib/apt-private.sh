# shellcheck shell=bash
# apt-get against another Debian suite with a private state directory, so the machine's /etc/apt
# and dpkg database are never written: packages are only downloaded (apt-get download), then
# unpacked with dpkg-deb -x by the caller; no maintainer script runs. Sourced, never run.
#
#   apt_private STATE_DIR SUITE   sets APT_PRIVATE (the apt-get/apt-cache options) for SUITE
#                                 (trixie, sid...) with its lists and archives under STATE_DIR,
#                                 and runs apt-get update; returns non-zero when that fails.
#                                 Sid's Release file is past its Valid-Until: its check is off for
#                                 every suite here (the archive's signatures are still checked).

apt_private() {
  local state=$1 suite=$2
  mkdir -p "$state/lists/partial" "$state/archives/partial" "$state/parts" "$state/prefs"
  echo "deb [check-valid-until=no] http://deb.debian.org/debian $suite main" >"$state/sources.list"
  : >"$state/status"
  APT_PRIVATE=(
    -o "Dir::Etc::SourceList=$state/sources.list"
    -o "Dir::Etc::SourceParts=$state/parts"
    -o "Dir::Etc::Preferences=$state/preferences"
    -o "Dir::Etc::PreferencesParts=$state/prefs"
    -o "Dir::State=$state"
    -o "Dir::State::Lists=$state/lists"
    -o "Dir::State::status=$state/status"
    -o "Dir::Cache=$state"
    -o "Dir::Cache::Archives=$state/archives"
    -o "Dir::Cache::pkgcache=$state/pkgcache.bin"
    -o "Dir::Cache::srcpkgcache=$state/srcpkgcache.bin"
    -o "Debug::NoLocking=1"
    -o "APT::Get::List-Cleanup=0"
    -o "APT::Sandbox::User=$(id -un)"
  )
  apt-get "${APT_PRIVATE[@]}" -qq update >&2
}
