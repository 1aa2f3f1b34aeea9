#!/usr/bin/env bash
# A profile-guided (PGO) release build of jostle: the compiler lays out and inlines the
# code as a training run used it. Same bytes out as the plain release build (checked at
# the end by scripts/output_check.sh); measured on CMU 01_01 about 8 % faster steps and feedforward (#15, see
# scripts/speed_results.md). Two builds in their own target folders, ~5 min each cold.
#
# usage: scripts/pgo_build.sh [TRAINING_DIR]
#   TRAINING_DIR  BVH clips to train on: your own library for a long batch of it
#                 (default: ../shared/mocap if present, else the repository's mocap/)
# needs llvm-profdata of rustc's own LLVM: `rustup component add llvm-tools`
#   (or LLVM_PROFDATA=/path/to/llvm-profdata); RUSTFLAGS you set are kept (e.g. a
#   target-cpu)
# writes target/pgo/release/jostle
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
host=$(rustc -vV | awk '/^host:/ {print $2}')
profdata=${LLVM_PROFDATA:-$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata}
if [ ! -x "$profdata" ]; then
  echo "pgo_build.sh: no llvm-profdata at $profdata" >&2
  echo "  install it with: rustup component add llvm-tools   (or set LLVM_PROFDATA)" >&2
  exit 1
fi
train=${1:-}
if [ -z "$train" ]; then
  if [ -d "$root/../shared/mocap" ]; then train=$root/../shared/mocap; else train=$root/mocap; fi
fi
clips=("$train"/*.bvh)
if [ ! -f "${clips[0]}" ]; then
  echo "pgo_build.sh: no .bvh clips in $train: pass a folder of clips to train on" >&2
  exit 1
fi
prof=$(mktemp -d)
trap 'rm -rf "$prof"' EXIT
flags=${RUSTFLAGS:-}

echo "pgo_build.sh: 1/3 instrumented build (target/pgo-gen)" >&2
RUSTFLAGS="$flags -Cprofile-generate=$prof/raw" \
  cargo build --release --locked --target-dir target/pgo-gen
gen=target/pgo-gen/release/jostle

# what users run: a batch (feedforward, replay, perturbed steps, export) and a simulation
# that computes every step; a big library trains on a shard of about 20 of its clips
shards=$(((${#clips[@]} + 19) / 20))
echo "pgo_build.sh: 2/3 training on $train (${#clips[@]} clips, shard 0 of $shards)" >&2
"$gen" batch "$train" --out "$prof/batch" --shard "0/$shards" -j 2 --variations 2 --quiet \
  >/dev/null 2>&1 || true
"$gen" simulate "${clips[0]}" >/dev/null 2>&1 || true
"$profdata" merge -o "$prof/merged.profdata" "$prof"/raw/*.profraw

echo "pgo_build.sh: 3/3 optimised build (target/pgo)" >&2
RUSTFLAGS="$flags -Cprofile-use=$prof/merged.profdata -Cllvm-args=-pgo-warn-missing-function=false" \
  cargo build --release --locked --target-dir target/pgo
pgo=target/pgo/release/jostle

# the same outputs as the instrumented build (whose arithmetic is the plain build's):
# scripts/output_check.sh's checksums of both
JOSTLE_BIN=$gen scripts/output_check.sh "$prof/check-gen" > "$prof/gen.sums"
JOSTLE_BIN=$pgo scripts/output_check.sh "$prof/check-pgo" > "$prof/pgo.sums"
if ! diff "$prof/gen.sums" "$prof/pgo.sums" >&2; then
  echo "pgo_build.sh: $pgo gives other outputs than the plain build: do not use it" >&2
  exit 1
fi
echo "pgo_build.sh: built $pgo (the same outputs as the plain build: scripts/output_check.sh)" >&2
