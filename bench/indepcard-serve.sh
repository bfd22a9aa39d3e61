# bench/indepcard-serve.sh - sourced by the bench/indep-* scripts: checks
# what they need, and serves a bench/indepcard card as a loop device.
# Set name (the script's, for messages) and bin (flashprobe) first.
# Defines $card, $work (a temporary directory, removed at exit), and
# start_card PARAMS SCALE (sets $loop) and stop_card.
card=$(dirname "$bin")/indepcard
[ -x "$bin" ] || { echo "$name: '$bin' is not executable (run make)" >&2; exit 1; }
[ -x "$card" ] || { echo "$name: no '$card' (make $card; needs libfuse3-dev)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$name: needs root (loop devices)" >&2; exit 1; }

work=$(mktemp -d "/tmp/$name.XXXXXX")
mnt=$work/mnt
loop='' pid=''
stop_card() {
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	mountpoint -q "$mnt" 2>/dev/null && fusermount3 -u "$mnt"
	[ -n "$pid" ] && wait "$pid" 2>/dev/null
	loop='' pid=''
	rm -f "$work/card.img"
}
trap 'stop_card; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

start_card() {	# PARAMS SCALE
	mkdir -p "$mnt"
	"$card" "$1,img=$work/card.img" "$2" "$mnt" &
	pid=$!
	for _ in $(seq 50); do [ -e "$mnt/card" ] && break; sleep 0.1; done
	[ -e "$mnt/card" ] || { echo "$name: the card did not start" >&2; exit 1; }
	loop=$(losetup --find --show --direct-io=on \
		--sector-size "$(cat "$mnt/sector_bytes")" "$mnt/card")
}
