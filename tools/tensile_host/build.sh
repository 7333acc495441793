#!/usr/bin/env bash
# Build tensile-host-select and tensile-host-solve: Tensile's own C++ host library (Tensile/Source/lib of Tensile
# 4.44, unmodified) compiled for library loading (msgpack), solution selection and kernel-launch generation
# (ContractionSolution::solve, no GPU), plus our drivers select_main.cpp (which solution) and solve_main.cpp
# (which kernel launches: names, grids, argument bytes), both reading problem_line.hpp's problem lines.
#
# usage: tools/tensile_host/build.sh [--install-deps]
#   TENSILE_TGZ   the Tensile source archive (default ../shared/reference/tensile/tensile-4.44.0-a164ed70.tgz)
#   CACHE_DIR     where sources, objects and the binary go (default ~/.cache/tensile-host)
#   HIP_CXX       a clang that compiles HIP host code (default /usr/lib/llvm-15/bin/clang++, Debian's ROCm clang)
#   JOBS          parallel compiles (default 1)
# --install-deps  apt-get installs libmsgpack-cxx-dev (msgpack-c++ headers), libamdhip64-dev (hip headers) and
#                 clang-15 first (needs root).
#
# Why a HIP compiler: Tensile's DataTypes_*.hpp use __host__/__device__ and hipLaunchKernelGGL from
# <hip/hip_runtime.h> (included under TENSILE_USE_HIP), so g++ cannot compile them. clang's HIP mode with
# --cuda-host-only compiles the host side only: no GPU, no device libraries, no HIP runtime at link time.
# Sources compiled: the TensileHost list of Tensile/Source/lib/CMakeLists.txt plus source/msgpack/MessagePack.cpp
# (TENSILE_USE_MSGPACK on); source/hip/* (the runtime adapter) and source/llvm/* (LLVM YAML) are left out.
# Prints the binaries' paths on success.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
TENSILE_TGZ="${TENSILE_TGZ:-$repo/../shared/reference/tensile/tensile-4.44.0-a164ed70.tgz}"
CACHE_DIR="${CACHE_DIR:-$HOME/.cache/tensile-host}"
HIP_CXX="${HIP_CXX:-/usr/lib/llvm-15/bin/clang++}"
JOBS="${JOBS:-1}"

if [[ "${1:-}" == "--install-deps" ]]; then
    apt-get install -y --no-install-recommends libmsgpack-cxx-dev libamdhip64-dev clang-15
elif [[ $# -gt 0 ]]; then
    echo "usage: $0 [--install-deps]" >&2
    exit 2
fi

fail() { echo "tensile_host/build.sh: $*" >&2; exit 1; }
[[ -f "$TENSILE_TGZ" ]] || fail "no Tensile archive at $TENSILE_TGZ; set TENSILE_TGZ"
[[ -x "$HIP_CXX" ]] || fail "no HIP-capable clang at $HIP_CXX; run with --install-deps (clang-15) or set HIP_CXX"
[[ -f /usr/include/msgpack.hpp ]] || fail "msgpack-c++ headers missing; run with --install-deps (libmsgpack-cxx-dev)"
[[ -f /usr/include/hip/hip_runtime.h ]] || fail "HIP headers missing; run with --install-deps (libamdhip64-dev)"

src="$CACHE_DIR/src"
lib="$src/Tensile/Source/lib"
stamp="$src/.from-$(basename "$TENSILE_TGZ")"
if [[ ! -f "$stamp" ]]; then
    rm -rf "$src"
    mkdir -p "$src"
    tar -xzf "$TENSILE_TGZ" -C "$src" Tensile/Source/lib
    touch "$stamp"
fi

sources=(AMDGPU ArithmeticUnitTypes ContractionProblem ContractionSolution DataTypes Debug EmbeddedLibrary
         KernelArguments KernelLanguageTypes MLFeatures PerformanceMetricTypes ScalarValueTypes TensorDescriptor
         TensorOps Tensile UserDrivenTuningParser Utils msgpack/MessagePack)
flags=(-x hip --cuda-host-only -nogpulib -nogpuinc -std=c++17 -O2 -w
       -D__HIP_PLATFORM_AMD__ -DTENSILE_USE_HIP -DTENSILE_DEFAULT_SERIALIZATION -DTENSILE_MSGPACK=1
       -I"$lib/include")
obj="$CACHE_DIR/obj-$(echo "$HIP_CXX ${flags[*]}" | md5sum | cut -c1-8)"  # new flags, new objects
mkdir -p "$obj"

compile() {  # source (.cpp) -> object, skipped when the object is newer than the source
    local in="$1" out="$2"
    if [[ ! -f "$out" || "$in" -nt "$out" ]]; then
        echo "compiling $(basename "$in")" >&2
        "$HIP_CXX" "${flags[@]}" -c "$in" -o "$out.tmp" || return 1
        mv "$out.tmp" "$out"
    fi
}
objects=()
running=0
for s in "${sources[@]}"; do
    out="$obj/$(basename "$s").o"
    objects+=("$out")
    compile "$lib/source/$s.cpp" "$out" &
    running=$((running + 1))
    if (( running >= JOBS )); then
        wait -n || fail "compiling failed"
        running=$((running - 1))
    fi
done
while (( running > 0 )); do
    wait -n || fail "compiling failed"
    running=$((running - 1))
done
for driver in select solve; do
    # a driver is recompiled when it or the header both read their problem lines with is newer than its object
    [[ "$here/problem_line.hpp" -nt "$obj/${driver}_main.o" ]] && rm -f "$obj/${driver}_main.o"
    compile "$here/${driver}_main.cpp" "$obj/${driver}_main.o" || fail "compiling ${driver}_main.cpp failed"
    bin="$CACHE_DIR/bin/tensile-host-$driver"
    mkdir -p "$(dirname "$bin")"
    "$HIP_CXX" -fuse-ld=lld -o "$bin.tmp" "$obj/${driver}_main.o" "${objects[@]}" -lpthread 2>/dev/null ||
        "$HIP_CXX" -o "$bin.tmp" "$obj/${driver}_main.o" "${objects[@]}" -lpthread
    mv "$bin.tmp" "$bin"
    echo "$bin"
done
