#!/bin/sh
# linkdest_snapshot.sh: the cost of a no-change snapshot with --link-dest.
#
# Usage (as root, for the loop mount):
#   benchmarks/linkdest_snapshot.sh NEW_FASTCOPY [OLD_FASTCOPY] [FILES] [KIB]
#
# A source of FILES files of KIB KiB each (default 1000 x 256) on the root
# filesystem, and an ext4 on a loop device with direct I/O whose image is
# on the root disk, so that a read past the page cache reaches the disk. Each tool gets a first
# snapshot of its own ("base-TOOL"), then five rounds time, in an order
# rotated per round, a no-change snapshot into a fresh name linked to the
# tool's previous one (a daily series, as rsnapshot makes it):
#   fc-link   NEW --link-dest ../PREV SRC snap-N   (reads every file it links)
#   fc-old    OLD --link-dest ../PREV SRC snap-N   (trusted the cache entry)
#   rsync     rsync -a --link-dest=../PREV SRC/ snap-N/     (size and mtime)
#   rsync-c   rsync -a -c --link-dest=../PREV SRC/ snap-N/  (reads both sides)
#   fc-rerun  NEW SRC base-fc-rerun               (cached rerun: reads nothing)
# and prints each one's median wall time of the five, with min and max.
# Page caches are not dropped between runs: fastcopy drops the cached
# pages of what it links itself; rsync reads what the page cache holds.
set -eu
NEW=$1
OLD=${2:-}
FILES=${3:-1000}
KIB=${4:-256}
W=$(mktemp -d /var/tmp/fc-linkdest.XXXXXX)
LOOP=
trap 'umount "$W/mnt" 2>/dev/null || true; [ -z "$LOOP" ] || losetup -d "$LOOP"; rm -rf "$W"' EXIT
mkdir -p "$W/src" "$W/mnt"
i=0
while [ $i -lt "$FILES" ]; do
	d="$W/src/d$((i / 100))"
	mkdir -p "$d"
	head -c $((KIB * 1024)) /dev/urandom >"$d/f$i"
	i=$((i + 1))
done
touch -d '2 hours ago' "$W"/src/*/*
sync
truncate -s $((FILES * KIB * 1024 * 6 + 512 * 1024 * 1024)) "$W/img" # a base per tool
mkfs.ext4 -q -F "$W/img"
# Direct I/O on the image: a read past the loop device's page cache goes
# to the disk, not to the image file's pages in the host's page cache.
LOOP=$(losetup -f --show --direct-io=on "$W/img")
mount "$LOOP" "$W/mnt"
tools="fc-link rsync rsync-c fc-rerun"
[ -n "$OLD" ] && tools="fc-link fc-old rsync rsync-c fc-rerun"
for t in $tools; do
	case $t in
	rsync*) rsync -a "$W/src/" "$W/mnt/base-$t/" ;;
	*)
		"$NEW" -q --cache "$W/$t.db" "$W/src" "$W/mnt/base-$t"
		"$NEW" -q --cache "$W/$t.db" "$W/src" "$W/mnt/base-$t" # entries past the racy window
		;;
	esac
	echo "base-$t" >"$W/prev-$t"
done
sync

run() { # tool round
	prev=$(cat "$W/prev-$1")
	dst="$W/mnt/snap-$1-$2"
	case $1 in
	fc-link) set -- "$NEW" -q --cache "$W/$1.db" --link-dest "../$prev" "$W/src" "$dst" ;;
	fc-old) set -- "$OLD" -q --cache "$W/$1.db" --link-dest "../$prev" "$W/src" "$dst" ;;
	rsync) set -- rsync -a --link-dest="../$prev" "$W/src/" "$dst/" ;;
	rsync-c) set -- rsync -a -c --link-dest="../$prev" "$W/src/" "$dst/" ;;
	fc-rerun) set -- "$NEW" -q --cache "$W/$1.db" "$W/src" "$W/mnt/base-$1" ;;
	esac
	s=$(date +%s.%N)
	"$@"
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}
for round in 1 2 3 4 5; do
	set -- $tools
	k=0
	while [ $k -lt $(( (round - 1) % $# )) ]; do
		first=$1
		shift
		set -- "$@" "$first"
		k=$((k + 1))
	done
	for t in "$@"; do
		echo "$t $(run "$t" "$round")" >>"$W/times"
		[ "$t" = fc-rerun ] || echo "snap-$t-$round" >"$W/prev-$t"
	done
	sync
done
printf '%-9s %8s %8s %8s\n' tool median min max
for t in $tools; do
	grep "^$t " "$W/times" | awk '{print $2}' | sort -n |
		awk -v t="$t" '{v[NR]=$1} END {printf "%-9s %8.3f %8.3f %8.3f\n", t, v[3], v[1], v[5]}'
done
