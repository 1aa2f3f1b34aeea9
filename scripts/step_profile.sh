#!/usr/bin/env bash
# Instruction counts of the simulation and of the feedforward precompute, per phase
# (callgrind: deterministic, unlike wall time on a shared VM), for one clip's `simulate`.
# usage: scripts/step_profile.sh [CLIP.bvh] [extra simulate flags...]
#   JOSTLE_BIN=path/to/jostle to profile another build (default: target/release/jostle)
# prints: total instructions of each phase, per step, and the functions over 2 % of it
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${JOSTLE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/jostle}
clip=${1:-${JOSTLE_MOCAP_DIR:-$root/../shared/mocap}/cmu_01_01_jumps_turn.bvh}
shift || true
command -v valgrind >/dev/null || { echo "step_profile.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
[ -f "$clip" ] || { echo "step_profile.sh: no clip at $clip (pass one, or set JOSTLE_MOCAP_DIR)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
steps=$("$bin" simulate "$clip" --json "$@" | python3 -c "import json,sys; print(json.load(sys.stdin)['steps'])")
for phase in 'jostle::sim::run::Simulation::run_cancellable' 'jostle::sim::feedforward::*compute_feedforward*'; do
  case $phase in *feedforward*) label="feedforward precompute" ;; *) label="simulation (every step computed)" ;; esac
  valgrind --tool=callgrind --toggle-collect="$phase" --callgrind-out-file="$tmp/cg.out" \
    "$bin" simulate "$clip" "$@" >/dev/null 2>"$tmp/err"
  total=$(grep -o "Collected : [0-9]*" "$tmp/err" | awk '{print $3}')
  echo "== $label: $((total / 1000000)) M instructions, $((total / steps / 1000)) k per step ($steps steps)"
  # inclusive costs of the step's own functions (not the lines inlined into callers,
  # which callgrind lists without the binary in brackets), over 2 % of the phase
  callgrind_annotate --inclusive=yes "$tmp/cg.out" 2>/dev/null \
    | awk -v t="$total" '$1 ~ /^[0-9,]+$/ { n = $1; gsub(",", "", n); if (n / t > 0.02 && n / t < 0.999) print }' \
    | grep " \[" | grep -E ":(<)?jostle::(dynamics|sim|contact|motion)" \
    | sed -e 's/ \[.*//' -e 's|[^ ]*/src/|src/|' | head -25
done
