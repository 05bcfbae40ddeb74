#!/usr/bin/env bash
# Runs an unmodified MPI program twice, plainly and with libclampi_pmpi preloaded, and
# requires identical "result" lines; with the preload, CLAMPI_STATS lines must show that
# the layer was active and, with EXPECT, that it really saved network gets.
# Usage: run_preload.sh MPIEXEC FLAVOR NP PRELOAD_LIB EXPECT [MPIEXEC_FLAGS...] -- PROGRAM [ARGS...]
#   FLAVOR: openmpi | mpich (how LD_PRELOAD reaches the ranks, not mpiexec itself)
#   EXPECT: hits (hits + inflight_hits > 0), direct (direct > 0), active (stats lines only),
#           none (no stats required: the program creates no window), hier (collectives took
#           the hierarchical path across simulated nodes: hierarchical > 0), off (no stats line:
#           CLAMPI_MODE=off is a pure pass-through), coll (collectives took clampi's shared
#           path: "clampi: coll" lines show direct > 0), nocoll (they all went to MPI), match
#           (CLAMPI_MATCH: "clampi: match" lines in the exact format, one per rank for
#           MPI_COMM_WORLD unless CLAMPI_TEST_NO_WORLD is set, their messages summing to > 0)
# CLAMPI_TEST_OUTPUT_REGEX, CLAMPI_TEST_OUTPUT_REGEX2 .. _REGEX4 (optional): extended
# regexes the preloaded run's stdout must match (each on some line). CLAMPI_TEST_EVERY (a line prefix)
# with CLAMPI_TEST_EVERY_REGEX: the preloaded run prints NP lines with that prefix, and
# every one of them matches the regex. CLAMPI_TEST_CLUSTER: run on emulated nodes (below).
# CLAMPI_TEST_COUNT_REGEX with CLAMPI_TEST_COUNT: exactly that many lines of the preloaded
# run's stdout match the regex.
# CLAMPI_TEST_FAIL_REGEX: an extended regex no line of the preloaded run's output (ranks'
# stdout and stderr, the launcher's) may match (e.g. UCX's warnings at MPI_Finalize).
# CLAMPI_TEST_NO_PLAIN (a reason): the MPI alone cannot run the program; only the preloaded
# run is made, and its result lines are checked by the other variables alone.
# CLAMPI_TEST_MPI_FLAKY (a reason): on a difference, the preloaded run may be repeated once
# too (below: where the MPI's own flaw reaches both runs).
# CLAMPI_TEST_STDERR_OK: an extended regex of clampi's stderr lines the test provokes on
# purpose (any other line of clampi's on stderr fails the test).
set -uo pipefail
mpiexec=$1 flavor=$2 np=$3 lib=$4 expect=$5; shift 5
flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck source=../support/rank_output.sh
. "$(dirname "$0")/../support/rank_output.sh"
# MPICH over TCP: each job goes through the finalize-hang guard (tests/CMakeLists.txt),
# whose preloaded marker library must stay ahead of the clampi preload.
guard=()
[ -n "${CLAMPI_GUARD:-}" ] && guard=("$CLAMPI_GUARD" "$np" "$CLAMPI_GUARD_MARK")
if [ "$flavor" = openmpi ]; then
  pre=(-x LD_PRELOAD="$lib" -x CLAMPI_STATS=1)
else
  pre=(-genv LD_PRELOAD "${CLAMPI_GUARD_MARK:+$CLAMPI_GUARD_MARK:}$lib" -genv CLAMPI_STATS 1)
fi
run() {  # run NAME [mpiexec args]
  local name=$1; shift
  if [ -n "${CLAMPI_TEST_CLUSTER:-}" ]; then cluster_run "$name" "$@"; return; fi
  local rc=0
  # shellcheck disable=SC2046  # the launcher's arguments, split on purpose
  timeout 240 "${guard[@]}" "$mpiexec" $(rank_output_args "$flavor" "$out/$name.rank") -n "$np" "${flags[@]}" "$@" \
    >"$out/$name.launcher" 2>"$out/$name.err" || rc=$?
  rank_output_collect "$out/$name.rank" "$np" >"$out/$name.out"
  if [ $rc -ne 0 ]; then
    echo "FAIL: $name run exited with an error"; cat "$out/$name.out" "$out/$name.launcher" "$out/$name.err"; exit 1
  fi
  grep '^result' "$out/$name.out" | sort >"$out/$name.res"
}
# CLAMPI_TEST_CLUSTER=scripts/cluster.sh: both runs go to the emulated nodes through it
# (MPIEXEC and its flags are then unused); the test's clampi, UCX and Open MPI variables are
# handed to every rank, and the preload's as VAR=VALUE words too.
cluster_run() {  # cluster_run NAME [VAR=VALUE...] PROGRAM [ARGS...]
  local name=$1; shift
  local vars=()
  while IFS= read -r v; do vars+=("$v"); done < <(env | grep -E '^(CLAMPI_|UCX_|OMPI_MCA_)' | grep -v '^CLAMPI_TEST_')
  if [ -n "${CLAMPI_GUARD_MARK:-}" ]; then  # MPICH over TCP: the finalize guard's marker goes first
    vars+=(CLAMPI_FINALIZE_MARK="$CLAMPI_GUARD_MARK")
    if [[ "$name" == preload* ]]; then set -- "LD_PRELOAD=$CLAMPI_GUARD_MARK:$lib" "${@:2}"; else vars+=(LD_PRELOAD="$CLAMPI_GUARD_MARK"); fi
  fi
  timeout 240 "${guard[@]}" "$CLAMPI_TEST_CLUSTER" run "$flavor" "$np" "${vars[@]}" "$@" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  if [ $rc -eq 77 ]; then cat "$out/$name.err"; exit 77; fi
  if [ $rc -ne 0 ]; then echo "FAIL: $name run exited with an error"; cat "$out/$name.out" "$out/$name.err"; exit 1; fi
  grep '^result' "$out/$name.out" | sort >"$out/$name.res"
}
[ -n "${CLAMPI_TEST_CLUSTER:-}" ] && pre=(LD_PRELOAD="$lib" CLAMPI_STATS=1)
if [ -n "${CLAMPI_TEST_NO_PLAIN:-}" ]; then  # the MPI alone cannot run it (the reason is the value)
  echo "plain run skipped: $CLAMPI_TEST_NO_PLAIN"
  run preload "${pre[@]}" "$@"
  cp "$out/preload.res" "$out/plain.res"
  cp "$out/preload.out" "$out/plain.out"
else
  run plain "$@"
  run preload "${pre[@]}" "$@"
fi
if [ ! -s "$out/plain.res" ]; then echo "FAIL: no result lines"; cat "$out/plain.out" "$out/plain.err"; exit 1; fi
# The plain run is the reference, but the MPI alone is not always right: MPICH 4.0.2 between
# emulated nodes has returned a stale MPI_Get after a local flush (3 of 158 plain jobs of
# plain_rma lock_all on 2 nodes x 2 ranks: bench/results/mpich_stale_get_after_flush_local_all.txt).
# On a difference the plain run alone is repeated, up to twice: a wrong preloaded answer still
# fails against a right reference. CLAMPI_TEST_MPI_FLAKY (a reason; set only where the MPI's
# own flaw reaches the preloaded run too, as there) also repeats the preloaded run once.
if ! diff "$out/plain.res" "$out/preload.res" >"$out/diff"; then
  echo "first difference (plain < > preloaded):"; cat "$out/diff"
  same=
  if [ -z "${CLAMPI_TEST_NO_PLAIN:-}" ]; then
    for again in plain2 plain3; do
      run "$again" "$@"
      if diff -q "$out/$again.res" "$out/preload.res" >/dev/null; then same=$again; break; fi
    done
  fi
  if [ -z "$same" ] && [ -n "${CLAMPI_TEST_MPI_FLAKY:-}" ]; then
    # the first preloaded run's stderr is checked before the repeat replaces it
    cp "$out/preload.err" "$out/preload1.err"
    run preload2 "${pre[@]}" "$@"
    for ref in plain plain2 plain3; do
      [ -s "$out/$ref.res" ] && diff -q "$out/$ref.res" "$out/preload2.res" >/dev/null && { same="$ref and preload2"; break; }
    done
    if [ -n "$same" ]; then for f in out err res; do cp "$out/preload2.$f" "$out/preload.$f"; done; fi
  fi
  if [ -z "$same" ]; then
    echo "FAIL: results differ with the preload"; echo "-- preloaded run's output:"; cat "$out/preload.out" "$out/preload.err"; exit 1
  fi
  reason="the plain run was repeated"
  [[ "$same" == *preload2 ]] && reason=$CLAMPI_TEST_MPI_FLAKY
  echo "note: the runs agreed when repeated ($same; $reason)"
fi
stats=$(grep '^clampi: rank=' "$out/preload.out")
sum_field() { echo "$stats" | grep -o " $1=[0-9]*" | cut -d= -f2 | awk '{s+=$1} END {print s+0}'; }
gets=$(sum_field gets); hits=$(sum_field hits); inflight=$(sum_field inflight_hits); direct=$(sum_field direct)
echo "$(wc -l <"$out/plain.res") result lines identical; preload stats: windows=$(echo -n "$stats" | grep -c '^') gets=$gets hits=$hits inflight_hits=$inflight direct=$direct"
touch "$out/preload1.err"
cat "$out/preload.err" "$out/preload1.err" | grep -i 'clampi' | grep -Ev "${CLAMPI_TEST_STDERR_OK:-^$}" && { echo "FAIL: clampi wrote to stderr"; exit 1; }
case $expect in
  hits) [ $((hits + inflight)) -gt 0 ] || { echo "FAIL: expected cache hits"; echo "$stats"; exit 1; } ;;
  direct) [ "$direct" -gt 0 ] || { echo "FAIL: expected direct (shared-memory) gets"; echo "$stats"; exit 1; } ;;
  active) [ -n "$stats" ] || { echo "FAIL: the preload printed no stats line"; exit 1; } ;;
  none) ;;
  coll|nocoll|hier)
    cstats=$(grep '^clampi: coll rank=' "$out/preload.out")
    [ "$(echo -n "$cstats" | grep -c '^')" -eq "$np" ] || { echo "FAIL: expected $np coll stats lines"; echo "$cstats"; exit 1; }
    cdirect=$(echo "$cstats" | grep -o ' direct=[0-9]*' | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
    cstaged=$(echo "$cstats" | grep -o ' staged=[0-9]*' | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
    ceager=$(echo "$cstats" | grep -o ' eager=[0-9]*' | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
    chier=$(echo "$cstats" | grep -o ' hierarchical=[0-9]*' | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
    echo "preload coll stats: direct=$cdirect staged=$cstaged eager=$ceager hierarchical=$chier"
    cdirect=$((cdirect + ceager))   # small blocks take the shared mailbox path
    if [ "$expect" = hier ]; then
      [ "$chier" -gt 0 ] || { echo "FAIL: no collective took the hierarchical path"; echo "$cstats"; exit 1; }
    elif [ "$expect" = coll ]; then
      [ "$cdirect" -gt 0 ] || { echo "FAIL: no collective took the shared-heap path"; echo "$cstats"; exit 1; }
    else
      [ $((cdirect + cstaged)) -eq 0 ] || { echo "FAIL: collectives took clampi's path while switched off"; echo "$cstats"; exit 1; }
    fi ;;
  off) [ -z "$stats" ] || { echo "FAIL: CLAMPI_MODE=off printed stats"; exit 1; } ;;
  match)
    mstats=$(grep '^clampi: match rank=' "$out/preload.out")
    [ -n "$mstats" ] || { echo "FAIL: no clampi: match stats line"; cat "$out/preload.out"; exit 1; }
    fmt='^clampi: match rank=[0-9]+ comm=[^ =]+ structure=(list|lla|hot|lla\+hot|bins) messages=[0-9]+ mean_depth=[0-9]+\.[0-9]{2} max_depth=[0-9]+$'
    bad=$(echo "$mstats" | grep -Ev "$fmt")
    [ -z "$bad" ] || { echo "FAIL: match stats line not in the format"; echo "$bad"; exit 1; }
    world=$(echo "$mstats" | grep -c ' comm=MPI_COMM_WORLD ')
    if [ -z "${CLAMPI_TEST_NO_WORLD:-}" ] && [ "$world" -ne "$np" ]; then
      echo "FAIL: expected $np MPI_COMM_WORLD match lines"; echo "$mstats"; exit 1
    fi
    msgs=$(echo "$mstats" | grep -o ' messages=[0-9]*' | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
    echo "preload match stats: lines=$(echo "$mstats" | grep -c '^') messages=$msgs"
    [ "$msgs" -gt 0 ] || { echo "FAIL: the clampi communicators carried no message"; echo "$mstats"; exit 1; } ;;
  *) echo "bad EXPECT $expect"; exit 2 ;;
esac
for re in "${CLAMPI_TEST_OUTPUT_REGEX:-}" "${CLAMPI_TEST_OUTPUT_REGEX2:-}" "${CLAMPI_TEST_OUTPUT_REGEX3:-}" \
  "${CLAMPI_TEST_OUTPUT_REGEX4:-}"; do
  if [ -n "$re" ] && ! grep -Eq "$re" "$out/preload.out"; then
    echo "FAIL: preloaded output does not match $re"; cat "$out/preload.out"; exit 1
  fi
done
if [ -n "${CLAMPI_TEST_FAIL_REGEX:-}" ]; then
  bad=$(cat "$out"/preload.* 2>/dev/null | grep -E "$CLAMPI_TEST_FAIL_REGEX")
  if [ -n "$bad" ]; then echo "FAIL: the preloaded run printed lines matching $CLAMPI_TEST_FAIL_REGEX"; echo "$bad"; exit 1; fi
fi
if [ -n "${CLAMPI_TEST_COUNT_REGEX:-}" ]; then
  n=$(grep -Ec "$CLAMPI_TEST_COUNT_REGEX" "$out/preload.out")
  if [ "$n" -ne "${CLAMPI_TEST_COUNT:?}" ]; then
    echo "FAIL: $n lines match $CLAMPI_TEST_COUNT_REGEX, expected $CLAMPI_TEST_COUNT"; cat "$out/preload.out"; exit 1
  fi
fi
if [ -n "${CLAMPI_TEST_EVERY:-}" ]; then
  every=$(grep -F "$CLAMPI_TEST_EVERY" "$out/preload.out" | grep "^$CLAMPI_TEST_EVERY")
  if [ "$(echo -n "$every" | grep -c '^')" -ne "$np" ] || echo "$every" | grep -Evq "$CLAMPI_TEST_EVERY_REGEX"; then
    echo "FAIL: expected $np lines \"$CLAMPI_TEST_EVERY...\", each matching $CLAMPI_TEST_EVERY_REGEX"; echo "$every"; exit 1
  fi
fi
exit 0
