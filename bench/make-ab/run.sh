#!/usr/bin/env bash
# Two revisions of queuectl side by side on the Make path, in interleaved
# rounds, so that a change is measured against what it changed in one
# sitting (this guest's speed moves by tens of percent within an hour):
#
# - the Make recipe of .ci/peers: TARGETS targets `queuectl run -q -- true`
#   under `make -j4`, against a worker of 4 slots of the same build, with
#   `tsp -f true` (4 slots) in every round; per revision the median wall
#   time, tsp/X, and the CPU per target of the clients (make and all it
#   waited for) and of the worker (its own and its reaped children's, the
#   shells);
# - the enqueue loop: 300 one-by-one `queuectl enqueue -q --command true`
#   against a worker of 2 slots, timed to the last answer.
#
#	bash bench/make-ab/run.sh REV_A REV_B [ROUNDS=21] [TARGETS=200]
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
[ $# -ge 2 ] || { echo "usage: bash bench/make-ab/run.sh REV_A REV_B [ROUNDS] [TARGETS]" >&2; exit 2; }
revs=("$1" "$2")
rounds=${3:-21}
targets=${4:-200}
command -v tsp >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq task-spooler make >/dev/null; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/make-ab.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  TS_SOCKET=$dir/ts tsp -K 2>/dev/null || true
  for i in 0 1; do git worktree remove --force "$dir/src$i" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
for i in 0 1; do
  git worktree add -q --detach "$dir/src$i" "${revs[$i]}"
  (cd "$dir/src$i" && CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$dir/bin$i/queuectl" . &&
    CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$dir/bin$i/queuectl-full" ./cmd/queuectl-full)
done
printf 'N ?= %d\nT := $(shell seq $(N))\n.PHONY: all $(T)\nall: $(T)\n$(T):\n\t@$(CMD)\n' "$targets" >"$dir/targets.mk"
export TS_SOCKET=$dir/ts TS_MAXFINISHED=100000 TS_SAVELIST=/dev/null
tsp -S 4

hz=$(getconf CLK_TCK)
# a process's CPU seconds with its reaped children's
pcpu() { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13 + $14 + $15) / hz }' "/proc/$1/stat"; }
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# seconds make-cpu-seconds of one make run of CMD
time_make() {
  /usr/bin/time -f "%e %U %S" -o "$dir/t" make -s -j4 -f "$dir/targets.mk" CMD="$1" >/dev/null
  awk '{ print $1, $2 + $3 }' "$dir/t"
}

# The Make recipe: a worker of 4 slots for each build, one warm-up run each.
for i in 0 1; do
  "$dir/bin$i/queuectl" --home "$dir/make$i" worker start --count 4 --no-spool 2>/dev/null &
  pids+=($!)
  worker[$i]=$!
done
sleep 2
for i in 0 1; do make -s -j4 -f "$dir/targets.mk" CMD="$dir/bin$i/queuectl --home $dir/make$i run -q -- true" >/dev/null; done
: >"$dir/tsp"
for r in $(seq "$rounds"); do
  time_make "tsp -f true" | awk '{ print $1 }' >>"$dir/tsp"
  tsp -C
  for i in 0 1; do
    w0=$(pcpu "${worker[$i]}")
    read -r secs cpu < <(time_make "$dir/bin$i/queuectl --home $dir/make$i run -q -- true")
    w1=$(pcpu "${worker[$i]}")
    echo "$secs $cpu $w0 $w1" | awk -v n="$targets" '{ printf "%.3f %.2f %.2f\n", $1, $2 * 1000 / n, ($4 - $3) * 1000 / n }' >>"$dir/make$i.res"
  done
done
t=$(med <"$dir/tsp")
echo "Make recipe: $targets targets under make -j4, median of $rounds interleaved rounds; tsp -f $t s"
printf '%-14s %8s %7s %14s %14s\n' REVISION SECONDS TSP/X CLIENT-MS/TGT WORKER-MS/TGT
for i in 0 1; do
  s=$(awk '{ print $1 }' "$dir/make$i.res" | med)
  printf '%-14s %8s %7s %14s %14s\n' "${revs[$i]}" "$s" "$(awk -v t="$t" -v s="$s" 'BEGIN { printf "%.2f", t / s }')" \
    "$(awk '{ print $2 }' "$dir/make$i.res" | med)" "$(awk '{ print $3 }' "$dir/make$i.res" | med)"
  kill "${worker[$i]}"
done

# The enqueue loop: a worker of 2 slots for each build.
for i in 0 1; do
  "$dir/bin$i/queuectl" --home "$dir/loop$i" worker start --count 2 --no-spool 2>/dev/null &
  pids+=($!)
done
sleep 2
loops=$(( (rounds + 2) / 3 ))
for r in $(seq "$loops"); do
  for i in 0 1; do
    s=$(date +%s.%N)
    for _ in $(seq 300); do "$dir/bin$i/queuectl" --home "$dir/loop$i" enqueue -q --command true >/dev/null; done
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f\n", e - s }' >>"$dir/loop$i.res"
  done
done
echo "enqueue loop: 300 one-by-one enqueues, worker of 2 slots, median of $loops interleaved rounds"
for i in 0 1; do printf '%-14s %8s s\n' "${revs[$i]}" "$(med <"$dir/loop$i.res")"; done
