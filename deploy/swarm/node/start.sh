#!/bin/sh
# A swarm test node's entry point: makes the cgroup hierarchies and /proc/sys writable in this
# container (its own cgroup namespace), then runs dockerd. The node runs with every capability
# but CAP_SYS_RESOURCE instead of --privileged: where the host's bounding set lacks a capability
# (some VMs), --privileged cannot start a container at all.
set -eu
for dir in /sys/fs/cgroup/*/; do
  dir=${dir%/}
  opts=$(awk -v m="$dir" '$2 == m { print $4 }' /proc/mounts | tr , '\n' | grep -vxE 'ro|rw|nosuid|nodev|noexec|relatime' | paste -sd, -)
  umount "$dir"
  mount -t cgroup -o "rw,nosuid,nodev,noexec,$opts" cgroup "$dir"
done
mount -o remount,rw /proc/sys 2>/dev/null || true
exec dockerd --host=unix:///var/run/docker.sock --log-level=warn "$@"
