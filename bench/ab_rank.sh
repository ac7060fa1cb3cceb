#!/usr/bin/env bash
# Whole-process A/B of toolselect binaries: runs `BIN rank --catalog C
# --queries Q --k 10 --json` for each binary in turn, N rounds interleaved (so
# the machine's load falls on all of them alike), and prints each binary's
# median, min and max wall time, median CPU time (user + system) and peak RSS.
#
#   bench/ab_rank.sh [-n N] [-d DIR] BIN...     (DIR holds tools.jsonl and queries.jsonl;
#                                                 default .cache/scale/10k from make bench-scale)
#
# Build the binaries to compare first, e.g.
#   git worktree add /tmp/old HEAD~3 && (cd /tmp/old && go build -o /tmp/ts-old ./cmd/toolselect)
#   go build -o /tmp/ts-new ./cmd/toolselect && bench/ab_rank.sh -n 11 /tmp/ts-old /tmp/ts-new
set -euo pipefail
n=11
dir=.cache/scale/10k
while getopts "n:d:" o; do
  case $o in
    n) n=$OPTARG ;;
    d) dir=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-d DIR] BIN..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-n N] [-d DIR] BIN..." >&2; exit 2; }
for f in "$dir/tools.jsonl" "$dir/queries.jsonl"; do
  [ -f "$f" ] || { echo "$0: $f missing (make bench-scale builds it)" >&2; exit 2; }
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$n"); do
  for b in "$@"; do
    /usr/bin/time -f "$b %e %M %U %S" -a -o "$out" "$b" rank --catalog "$dir/tools.jsonl" \
      --queries "$dir/queries.jsonl" --k 10 --json >/dev/null 2>&1
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
wall, rss, cpu = collections.defaultdict(list), collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    b, w, m, u, s = line.split()
    wall[b].append(float(w))
    rss[b].append(int(m) / 1024)
    cpu[b].append(float(u) + float(s))
for b in wall:
    print(f"{b}: median {statistics.median(wall[b]):.3f} s (min {min(wall[b]):.2f}, max {max(wall[b]):.2f}; "
          f"n={len(wall[b])}), CPU median {statistics.median(cpu[b]):.2f} s, peak RSS median {statistics.median(rss[b]):.0f} MiB")
PY
