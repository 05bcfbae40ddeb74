#!/usr/bin/env bash
# Installs clampi from BUILD_DIR into a scratch prefix, then builds and runs a program
# outside the tree against it, once through pkg-config and once through CMake.
# Usage: run.sh BUILD_DIR MPI_C_COMPILER MPIEXEC [mpiexec flags...]
set -euo pipefail
build=$1 mpicc=$2 mpiexec=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/ | head -1)
test -f "$libdir/libclampi.so" && test -f "$libdir/libclampi.a" && test -f "$work/prefix/include/clampi.h"
test -f "$libdir/libclampi_pmpi.so"  # the transparent preload, next to libclampi

# pkg-config
PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exists clampi
"$mpicc" -o "$work/example_pc" "$here/consumer/example.c" \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs clampi) -Wl,-rpath,"$libdir"
"$mpiexec" -n 2 "$@" "$work/example_pc"

# CMake package
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DMPI_C_COMPILER="$mpicc" -DCMAKE_BUILD_RPATH="$libdir" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$mpiexec" -n 2 "$@" "$work/consumer/example"
echo "install test: pkg-config and CMake consumers ok"
