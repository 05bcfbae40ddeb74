#!/usr/bin/env bash
# The demo: installs what is missing, builds clampi against Open MPI, and runs the get
# benchmark (plain MPI_Get+flush against CMPI_Get+flush) on 2 ranks over shared memory
# and over TCP loopback, printing its tables.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh openmpi build/demo-openmpi -DCLAMPI_BUILD_TESTS=OFF -DCLAMPI_BUILD_BENCH=ON
bench/run_get_bench.sh build/demo-openmpi --ops 1000 --trials 5
bench/hit_path_cost.sh build/demo-openmpi/bench/hit_path_cost
