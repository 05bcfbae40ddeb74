#!/usr/bin/env bash
# One of the README's two commands on a never-touched Debian 12: a minimal Debian 12
# (debootstrap --variant=minbase) in a directory, this repository's HEAD cloned into it,
# and the command run inside with chroot (the host's kernel, /proc, /sys and /dev), so that
# nothing installed on this machine is there to help. Prints the command's output and its
# time; the chroot is removed afterwards unless KEEP=1.
#   scripts/fresh_machine.sh demo|test [DIR]       (root; needs the network for apt-get)
# A maintainer's check, not part of the test suite: `test` takes as long as CI.
set -euo pipefail
what=${1:?demo or test}
case $what in demo | test) ;; *) echo "usage: $0 demo|test [DIR]" >&2; exit 2 ;; esac
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${2:-$(mktemp -d /tmp/clampi-fresh.XXXXXX)}
command -v debootstrap >/dev/null || { apt-get update -q && apt-get install -y -q debootstrap; }
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R "${mounted[i]}" 2>/dev/null || true; done
  # only once nothing of the host is mounted below it
  if [ "${KEEP:-0}" != 1 ] && ! mount | grep -q " $dir/"; then rm -rf "$dir" "$dir.debootstrap.log"; fi
}
trap cleanup EXIT
[ -x "$dir/bin/bash" ] || debootstrap --variant=minbase bookworm "$dir" http://deb.debian.org/debian >"$dir.debootstrap.log"
rm -rf "$dir/root/clampi"
git clone -q "$repo" "$dir/root/clampi"
cp /etc/resolv.conf "$dir/etc/"
mount -t proc proc "$dir/proc" && mounted+=("$dir/proc")
mount --rbind /sys "$dir/sys" && mounted+=("$dir/sys")
mount --rbind /dev "$dir/dev" && mounted+=("$dir/dev")
mount -t tmpfs tmpfs "$dir/dev/shm" && mounted+=("$dir/dev/shm")
env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb \
  chroot "$dir" /bin/bash -c "cd /root/clampi && time ./scripts/$what.sh"
