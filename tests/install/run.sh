#!/usr/bin/env bash
# Installs clampi from BUILD_DIR into a scratch prefix under /tmp, then, with nothing on
# LD_LIBRARY_PATH: runs the installed clampi-info, builds and runs a program outside the tree
# against it (once through pkg-config, once through CMake, with no extra flags), and preloads
# the installed libclampi_pmpi.so into a plain MPI program (its stats line must appear).
# Usage: run.sh BUILD_DIR MPI_C_COMPILER MPIEXEC FLAVOR [mpiexec flags...]
# CLAMPI_LIB_SUFFIX: _abi for a build for the MPI-5 ABI (libclampi_abi, libclampi_pmpi_abi).
set -euo pipefail
build=$1 mpicc=$2 mpiexec=$3 flavor=$4; shift 4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/clampi-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH
cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/ | head -1)
libdir=${libdir%/}
sfx=${CLAMPI_LIB_SUFFIX:-}
test -f "$libdir/libclampi$sfx.so" && test -f "$libdir/libclampi$sfx.a" && test -f "$work/prefix/include/clampi.h"
test -f "$libdir/libclampi_pmpi$sfx.so"  # the transparent preload, next to libclampi

# The installed tool finds its library from its own place ($ORIGIN).
"$work/prefix/bin/clampi-info" >"$work/info.txt"
grep -q "^clampi " "$work/info.txt" || { cat "$work/info.txt"; echo "clampi-info printed no version line"; exit 1; }

# pkg-config: the flags it gives are enough to link and to run.
PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exists clampi
"$mpicc" -o "$work/example_pc" "$here/consumer/example.c" \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs clampi)
"$mpiexec" -n 2 "$@" "$work/example_pc"

# CMake package: find_package(clampi) and nothing else.
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DMPI_C_COMPILER="$mpicc" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$mpiexec" -n 2 "$@" "$work/consumer/example"

# The preload from the prefix, into a program that knows nothing of clampi.
"$mpicc" -o "$work/plain" "$here/consumer/plain_get.c"
if [ "$flavor" = openmpi ]; then
  pre=(-x LD_PRELOAD="$libdir/libclampi_pmpi$sfx.so" -x CLAMPI_STATS=1 -x CLAMPI_WINDOW_MODES=data:always_cache)
else
  pre=(-genv LD_PRELOAD "$libdir/libclampi_pmpi$sfx.so" -genv CLAMPI_STATS 1 -genv CLAMPI_WINDOW_MODES data:always_cache)
fi
"$mpiexec" -n 2 "$@" "${pre[@]}" "$work/plain" >"$work/plain.txt" 2>&1 || { cat "$work/plain.txt"; exit 1; }
grep -q "plain_get ok" "$work/plain.txt" && grep -Eq "win=data mode=always_cache .*hits=[1-9]" "$work/plain.txt" ||
  { cat "$work/plain.txt"; echo "the installed preload did not serve the plain program"; exit 1; }
echo "install test: clampi-info, pkg-config and CMake consumers, preload ok"
