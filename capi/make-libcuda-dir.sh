#!/bin/sh
# Makes DIR (default target/libcuda) hold ptxjit's C library under the driver's name, so that
# LD_LIBRARY_PATH=DIR makes CUDA clients load it instead of NVIDIA's libcuda.so.1.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/target/libcuda}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p ptxjit-capi
mkdir -p "$dir"
cp "$root/target/release/libptxjit_capi.so" "$dir/libcuda.so.1"
ln -sf libcuda.so.1 "$dir/libcuda.so"
echo "$dir"
