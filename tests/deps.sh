#!/bin/sh
# The Debian packages that building and testing flashprobe use, in one
# place.  "deps.sh install" (make deps, .ci/run; as root) installs the
# missing ones with apt-get.  "deps.sh check" (make check) installs nothing:
# it fails when the check library is missing and says how to get it, and
# names the missing test tools, whose tests are then skipped loudly.
set -u
build="build-essential check pkg-config"
# mkfs tools and losetup for the safety and end-to-end tests, sfdisk, mkfs
# and fsck for the partition and check tests, rsvg-convert to render the
# chart, FUSE for the real-time card (bench/simfuse, the realtime suite),
# strace to stop a run at each step of its journal files (killsweep)
tools="e2fsprogs dosfstools exfatprogs f2fs-tools util-linux fdisk librsvg2-bin fuse3 libfuse3-dev strace"

missing() {
	command -v dpkg >/dev/null 2>&1 || return 0
	for p in "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || printf ' %s' "$p"
	done
}

case "${1:-check}" in
install)
	if [ "$(id -u)" != 0 ]; then
		echo "make deps installs with apt-get and needs root: sudo make deps" >&2
		exit 1
	fi
	want=$(missing $build $tools)
	[ -z "$want" ] && exit 0
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	apt-get update -qq && apt-get install -y -qq $want
	;;
check)
	want=$(missing $tools)
	[ -n "$want" ] && echo "note: test tools missing (their tests will be skipped):$want;" \
		"install them with: sudo make deps" >&2
	pkg-config --exists check 2>/dev/null && exit 0
	echo "the check library is missing; install it with: sudo make deps" \
	     "(or: sudo apt-get install -y check pkg-config)" >&2
	exit 1
	;;
*)
	echo "usage: deps.sh install|check" >&2
	exit 2
	;;
esac
