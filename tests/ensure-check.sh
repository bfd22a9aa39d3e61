#!/bin/sh
# Make sure the check unit-test library is available: install it with
# apt-get when running as root, otherwise print the command and fail.
if pkg-config --exists check 2>/dev/null; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "check library missing: installing it with apt-get" >&2
	{ apt-get update -qq && apt-get install -y -qq check pkg-config; } >&2 || exit 1
	pkg-config --exists check && exit 0
fi
echo "the check library is missing; install it with: sudo apt-get install -y check pkg-config" >&2
exit 1
