#!/usr/bin/env bash
# The Make recipe of .ci/peers (200 targets under make -j4, timed from
# make's start to its end) for: tsp -f true (4 slots), plain true, the
# Make floor (a Go program per target running sh -c true itself), this
# minimal durable pair (client -> worker, 4 slots) in its three -running
# modes and, as a control that is not durable, with no fsync at all
# (nofsync), and `queuectl run -q -- true` against a real queuectl worker
# (4 slots, --no-spool), in interleaved rounds; prints the medians, tsp/X,
# and CPU per target: make and its children (the clients) from `times`,
# the worker's own utime+stime and its reaped children's (the shells)
# from /proc/PID/stat.
#
#	bash bench/handoff-floor/run.sh [ROUNDS] [TARGETS]
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"
rounds=${1:-7}
targets=${2:-200}
command -v tsp >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq task-spooler make >/dev/null; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/handoff-floor.XXXXXX")
export TMPDIR_ORIG=${TMPDIR:-/tmp}
tsp_stop() { [ -n "${TS_SOCKET:-}" ] && tsp -K 2>/dev/null || true; }
trap 'tsp_stop; rm -rf "$dir"' EXIT
CGO_ENABLED=0 go build -o "$dir/client" ./client
CGO_ENABLED=0 go build -o "$dir/worker" ./worker
# queuectl as .ci/peers builds it: the front program and the full one beside it
(cd ../.. && CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$dir/queuectl" . &&
  CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$dir/queuectl-full" ./cmd/queuectl-full)
q="$dir/queuectl"
mkdir -p "$dir/shell"
printf 'package main\n\nimport (\n\t"os"\n\t"os/exec"\n)\n\nfunc main() {\n\tc := exec.Command("/bin/sh", "-c", os.Args[1])\n\tc.Stdout, c.Stderr = os.Stdout, os.Stderr\n\tif c.Run() != nil {\n\t\tos.Exit(1)\n\t}\n}\n' >"$dir/shell/main.go"
printf 'module shell\n\ngo 1.26\n' >"$dir/shell/go.mod"
(cd "$dir/shell" && CGO_ENABLED=0 go build -o "$dir/shell-go" .)
printf 'N ?= %d\nT := $(shell seq $(N))\n.PHONY: all $(T)\nall: $(T)\n$(T):\n\t@$(CMD)\n' \
  "$targets" >"$dir/targets.mk"

now() { date +%s.%N; }
hz=$(getconf CLK_TCK)
# children's user+sys seconds of this shell, from `times`
# (`times` in this shell, into a file: in a $(...) it would see the subshell's)
kids() { times >"$dir/times"; tail -1 "$dir/times" | awk '{ gsub(/[ms]/, " "); split($0, a, " "); print a[1]*60 + a[2] + a[3]*60 + a[4] }'; }
# a process's own and its reaped children's CPU seconds
pcpu() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz, ($14 + $15) / hz }' "/proc/$1/stat"; }
# prints: seconds client-cpu-seconds
time_make() {
  local start end c0 c1
  kids >"$dir/c0"
  start=$(now)
  make -s -j4 -f "$dir/targets.mk" CMD="$1" >/dev/null
  end=$(now)
  kids >"$dir/c1"
  c0=$(cat "$dir/c0") c1=$(cat "$dir/c1")
  awk -v a="$start" -v b="$end" -v c0="$c0" -v c1="$c1" 'BEGIN { printf "%.3f %.3f", b - a, c1 - c0 }'
}
# prints: seconds client-cpu worker-cpu worker-children-cpu
around_worker() {
  local pid=$1 w0 w1 t
  shift
  w0=$(pcpu "$pid")
  t=$("$@")
  w1=$(pcpu "$pid")
  echo "$t $w0 $w1" | awk '{ printf "%s %s %.3f %.3f\n", $1, $2, $5 - $3, $6 - $4 }'
}

make_tsp() {
  export TS_SOCKET="$dir/tsp$1.sock" TS_MAXFINISHED=$((targets + 10)) TMPDIR="$dir/tsp$1"
  mkdir -p "$TMPDIR"
  tsp -S 4
  local pid
  pid=$(ss -xlpn 2>/dev/null | grep -F "$TS_SOCKET" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
  if [ -n "$pid" ]; then around_worker "$pid" time_make "tsp -f true"; else echo "$(time_make "tsp -f true") - -"; fi
  tsp_stop
  unset TS_SOCKET
  export TMPDIR=$TMPDIR_ORIG
}
make_true() { echo "$(time_make true) - -"; }
make_floor() { echo "$(time_make "$dir/shell-go true") - -"; }
pair() {
  local home="$dir/$2$1"
  mkdir -p "$home"
  "$dir/worker" -running "$2" -sync "${3:-FULL}" -sock "$home/s" -db "$home/db" -logs "$home/logs" &
  local pid=$!
  until [ -S "$home/s" ]; do sleep 0.02; done
  HANDOFF_SOCK=$home/s around_worker "$pid" time_make "$dir/client true"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
make_pair() { pair "$1" same; }
make_pair-nosync() { pair "$1" nosync; }
make_pair-sync() { pair "$1" sync; }
make_nofsync() { pair "$1" same OFF; } # not durable: the control
make_queuectl() {
  local home="$dir/q$1"
  "$q" --home "$home" status >/dev/null
  "$q" --home "$home" worker start --count 4 --no-spool 2>/dev/null &
  local pid=$! # the front execs queuectl-full in this process
  until [ -S "$home/enqueue.sock" ]; do sleep 0.05; done
  QUEUECTL_HOME=$home around_worker "$pid" time_make "$q run -q -- true"
  "$q" --home "$home" worker stop --wait >/dev/null 2>&1
  wait "$pid"
}

tools="tsp true floor pair pair-nosync pair-sync nofsync queuectl"
declare -A res
for r in $(seq "$rounds"); do
  for t in $tools; do
    out=$("make_$t" "$r")
    res[$t]+="$out"$'\n'
    printf 'round %d  %-12s  %s\n' "$r" "$t" "$out" >&2
  done
done

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
col() { echo -n "${res[$1]}" | awk -v c="$2" '{ print $c }' | grep -v '^-$' | median; }
tspm=$(col tsp 1)
# tsp/X within each round, then the median of those: the rounds share the
# machine's load of the moment, so the paired ratio moves less than the
# ratio of the two medians
paired() { paste <(echo -n "${res[tsp]}" | awk '{ print $1 }') <(echo -n "${res[$1]}" | awk '{ print $1 }') |
  awk '{ print $1 / $2 }' | median; }
echo "$targets targets under make -j4, median of $rounds interleaved rounds; $(nproc) cores, $(uname -r)"
printf '%-12s %8s %8s %8s %14s %14s %14s\n' TOOL SECONDS TSP/X PAIRED CLIENT-MS/TGT WORKER-MS/TGT SHELLS-MS/TGT
for t in $tools; do
  awk -v t="$t" -v s="$(col "$t" 1)" -v ts="$tspm" -v p="$(paired "$t")" -v c="$(col "$t" 2)" -v w="$(col "$t" 3)" -v k="$(col "$t" 4)" -v n="$targets" '
    function ms(x) { return x == "" ? "-" : sprintf("%.2f", x * 1000 / n) }
    BEGIN { printf "%-12s %8.3f %8.2f %8.2f %14s %14s %14s\n", t, s, ts / s, p, ms(c), ms(w), ms(k) }'
done
echo "TSP/X: ratio of the medians; PAIRED: median of the per-round ratios. CPU columns: medians per target of"
echo "make and everything it waited for (the clients; tsp's client also runs the job), the worker's own CPU,"
echo "and its reaped children's (the /bin/sh -c of each job; tsp's server has none, its clients run the jobs)."
