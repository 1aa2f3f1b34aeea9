#!/usr/bin/env bash
# The check set for a change meant to leave every output as it was (a speed-up, a
# refactor, another build such as scripts/pgo_build.sh's): runs one build on a few clips
# and prints a checksum per output; two builds whose lists match gave the same bytes.
# usage: scripts/output_check.sh OUTDIR
#   JOSTLE_BIN=path/to/jostle (default: target/release/jostle)
#   JOSTLE_MOCAP_DIR=... (default: ../shared/mocap; without it, the repository's clips only)
# The metrics' timings (and paths) are left out of their checksums.
set -eu
out=$1
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${JOSTLE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/jostle}
mocap=${JOSTLE_MOCAP_DIR:-$root/../shared/mocap}
mkdir -p "$out"
strip='import json, sys
d = json.load(open(sys.argv[1]))
for k in ("timing", "out", "file", "clip"):
    d.pop(k, None)
print(json.dumps(d, sort_keys=True))'
file_sum() { printf '%-28s %s\n' "$1" "$(md5sum < "$2" | cut -c1-12)"; }
json_sum() { printf '%-28s %s\n' "$1" "$(python3 -c "$strip" "$2" | md5sum | cut -c1-12)"; }
demo=$root/mocap/demo_walk.bvh
"$bin" perturb "$demo" --ball t=0.8,target=right_forearm,speed=12 --out "$out/demo.glb" \
  --bvh "$out/demo.bvh" --metrics "$out/demo.json" >/dev/null 2>&1
file_sum demo.glb "$out/demo.glb"
file_sum demo.bvh "$out/demo.bvh"
json_sum demo.json "$out/demo.json"
if [ ! -d "$mocap" ]; then
  echo "output_check.sh: no $mocap: the repository's clips only" >&2
  exit 0
fi
"$bin" perturb "$mocap/cmu_01_01_jumps_turn.bvh" --ball t=5,target=chest,speed=12 \
  --ball t=9,target=pelvis,speed=12,mass=5 --out "$out/cmu.glb" --metrics "$out/cmu.json" >/dev/null 2>&1
file_sum cmu.glb "$out/cmu.glb"
json_sum cmu.json "$out/cmu.json"
"$bin" perturb "$mocap/bandai1_kick_normal_001.bvh" --random-balls 3 --out "$out/kick.glb" \
  --metrics "$out/kick.json" >/dev/null 2>&1
file_sum kick.glb "$out/kick.glb"
json_sum kick.json "$out/kick.json"
"$bin" simulate "$mocap/xia_neutral_01_000_walk.bvh" --root pinned --json > "$out/xia.json" 2>/dev/null
json_sum "xia.json (pinned)" "$out/xia.json"
"$bin" simulate "$mocap/cmu_walk_bvhmatlab.bvh" --json > "$out/walk.json" 2>/dev/null
json_sum walk.json "$out/walk.json"
