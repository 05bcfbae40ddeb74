#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds clampi once per MPI (Debian's Open
# MPI and MPICH, and the platform matrix: Open MPI 5, MPICH 5 and Intel MPI from their PyPI
# wheels), once with ASan/UBSan and once with TSan, and runs CTest in each build.
# CLAMPI_TEST_MATRIX=0 skips the platform matrix for a quick local run (never in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
run_suite() {  # run_suite NAME BUILD_DIR MPI [cmake args] -- [ctest args]
  local name=$1 dir=$2 mpi=$3; shift 3
  local cargs=() targs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do cargs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  targs=("$@")
  echo "=== clampi test suite: $name ==="
  scripts/build.sh "$mpi" "$dir" "${cargs[@]}"
  # stdin from /dev/null: mpirun forwards its stdin to rank 0, and a rank that has exited
  # while input was pending killed Open MPI's mpirun with SIGPIPE once (coll_diff_np8,
  # after the test had printed its result).
  local t0=$SECONDS
  local failed=""
  if ! (cd "$dir" && ctest --output-on-failure --timeout 600 "${targs[@]}" </dev/null); then
    status=1
    # CTest's own list of what failed, repeated at the end where a log's tail shows it.
    failed=$(sed 's/^[0-9]*://' "$dir/Testing/Temporary/LastTestsFailed.log" 2>/dev/null | tr '\n' ' ')
    failures+=("$name: ${failed:-(see the log above)}")
    failed_output+=("$(failed_tail "$dir" "$name")")
  fi
  times+=("$name: $((SECONDS - t0)) s of tests${failed:+, FAILED}")
}
# The last lines each failed test printed (CTest's LastTest.log), for the end of the log:
# a CI report that shows only the log's tail still says why a test failed.
failed_tail() {  # failed_tail BUILD_DIR NAME
  awk -v suite="$2" '
    / Testing: / { name = $3 }
    /^Output:$/ { grab = 1; n = 0; next }
    /^<end of output>$/ { grab = 0; next }
    grab && !/^-+$/ { out[name, n++ % 25] = $0; cnt[name] = n }
    /^Test Failed\.$/ {
      printf "--- %s: %s (its last lines) ---\n", suite, name
      k = cnt[name]; for (i = (k > 25 ? k - 25 : 0); i < k; i++) print out[name, i % 25]
    }' "$1/Testing/Temporary/LastTest.log" 2>/dev/null | cut -c1-300
}
times=() failures=() failed_output=()
run_suite "Open MPI" build/openmpi openmpi -DCLAMPI_BUILD_TESTS=ON -DCLAMPI_BUILD_BENCH=ON -DCLAMPI_SANITIZE=OFF
run_suite "MPICH" build/mpich mpich -DCLAMPI_BUILD_TESTS=ON -DCLAMPI_BUILD_BENCH=ON -DCLAMPI_SANITIZE=OFF
# Sanitizers: the engine unit tests and the MPI tests, against MPICH (Open MPI's own
# allocations at init trip LeakSanitizer, so leaks are not checked inside MPI runs).
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
  run_suite "ASan+UBSan (MPICH)" build/asan-mpich mpich -DCLAMPI_SANITIZE=ON -DCLAMPI_BUILD_TESTS=ON -DCLAMPI_BUILD_BENCH=OFF -- -LE nosan
# ThreadSanitizer on the threaded tests only (label tsan; suppressions for MPI/UCX frames in
# tests/pmpi/tsan.supp; the tests set UCX_MEM_EVENTS=no: UCX's madvise hook crashes TSan).
# CLAMPI_TEST_TSAN=0 skips it.
if [ "${CLAMPI_TEST_TSAN:-1}" = 1 ]; then
  run_suite "TSan (MPICH, threaded tests)" build/tsan-mpich mpich -DCLAMPI_TSAN=ON -DCLAMPI_BUILD_TESTS=ON -DCLAMPI_BUILD_BENCH=OFF -- -L tsan
fi
# A build without UCX (-DCLAMPI_UCX=OFF, what a machine without UCX gets): the parts that do
# not need UCX (get cache, collectives, install, matching on the MPI carrier); the UCX-only
# tests are not built or are left out by name.
run_suite "MPICH without UCX" build/noucx-mpich mpich -DCLAMPI_UCX=OFF -DCLAMPI_BUILD_TESTS=ON -DCLAMPI_BUILD_BENCH=OFF \
  -- -L "cache|coll|install" -E "ucx|_tcp|nodes"
run_suite "MPICH without UCX, matching" build/noucx-mpich mpich -DCLAMPI_UCX=OFF -DCLAMPI_BUILD_TESTS=ON \
  -DCLAMPI_BUILD_BENCH=OFF -- -R carrier_mpi -E "ucx|_tcp|nodes|cluster"
# The platform matrix: the parts' labels that make sense on each MPI (MPICH-derived MPIs keep
# passive-target RMA at 2 ranks, as with Debian's MPICH).
matrix=${CLAMPI_TEST_MATRIX:-1}
if [ "${CI:-}" = true ] && [ "$matrix" != 1 ]; then
  echo "clampi: CLAMPI_TEST_MATRIX=$matrix ignored in CI: the platform matrix always runs there"
  matrix=1
fi
if [ "$matrix" = 1 ]; then
  scripts/mpi_wheels.sh build/venv
  export I_MPI_ROOT=$PWD/build/venv/impi
  labels='cache|preload|coll|match|rmax|install|fortran'
  run_suite "Open MPI 5.0 (PyPI wheel)" build/openmpi5 openmpi5 -DCLAMPI_BUILD_TESTS=ON -DCLAMPI_BUILD_BENCH=OFF -- -L "$labels" -LE tsan
  run_suite "MPICH 5.0 (PyPI wheel)" build/mpich5 mpich5 -DCLAMPI_BUILD_TESTS=ON -DCLAMPI_BUILD_BENCH=OFF -- -L "$labels" -LE tsan
  run_suite "Intel MPI 2021 (PyPI wheel)" build/impi impi -DCLAMPI_BUILD_TESTS=ON -DCLAMPI_BUILD_BENCH=OFF -- -L "$labels" -LE tsan
  # One build for the MPI-5 ABI (mpicc_abi): its tests under MPICH 5's launcher, and the
  # abi tests run each program under MPICH 5 and Intel MPI.
  run_suite "MPI-5 ABI (MPICH 5 and Intel MPI)" build/abi abi -DCLAMPI_BUILD_TESTS=ON -DCLAMPI_BUILD_BENCH=OFF \
    -- -L "abi|cache|coll|install" -E "ucx|_tcp|nodes|cluster" -LE tsan
else
  echo "clampi: platform matrix skipped (CLAMPI_TEST_MATRIX=0)"
fi
[ ${#failed_output[@]} -eq 0 ] || printf '%s\n' "${failed_output[@]}"
printf 'clampi: %s\n' "${times[@]}"
[ ${#failures[@]} -eq 0 ] || printf 'clampi: failed in %s\n' "${failures[@]}"
if [ $status -eq 0 ]; then echo "clampi: all test suites passed"; else echo "clampi: some tests FAILED"; fi
exit $status
