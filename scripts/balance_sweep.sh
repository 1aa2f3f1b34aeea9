#!/usr/bin/env bash
# Handball / 5 kg / unperturbed sweep over the shared clips for one set of flags.
# usage: scripts/balance_sweep.sh OUTDIR [extra jostle flags...]
# writes OUTDIR/<clip>.<case>.json; summarise with scripts/balance_table.py
# TIMES="0.6 0.8 1.0 1.2 1.4": the chest and pelvis balls also at each of these hit times
# (s) that leaves 2 s of the clip to recover in (OUTDIR/<clip>.<case>@<t>.json): the
# criterion's pass rate over the gait's phases, not at one instant
set -u
out=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${JOSTLE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/jostle}
mocap=${JOSTLE_MOCAP_DIR:-$root/../shared/mocap}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cases=${CASES:-"chest pelvis heavy sim"}
mkdir -p "$out"
jobs=()
for f in "$mocap"/*.bvh; do
  c=$(basename "$f" .bvh)
  for k in $cases; do jobs+=("$c $k"); done
  d=$(awk '/^Frames:/{n=$2} /^Frame Time:/{print n*$3; exit}' "$f")
  for t in ${TIMES:-}; do
    if awk -v t="$t" -v d="$d" 'BEGIN{exit !(t + 2 <= d)}'; then
      for k in chest pelvis; do jobs+=("$c $k@$t"); done
    fi
  done
done
run() {
  c=$1; k=$2; f=$mocap/$c.bvh
  # the ball arrives at t = 1 s, or at half the clip for clips under 2 s (the 0.87 s Xia
  # punch: a ball after the clip's end is an error)
  t=$(awk '/^Frames:/{n=$2} /^Frame Time:/{print (n*$3 < 2 ? n*$3/2 : 1); exit}' "$f")
  case $k in
    chest@*|pelvis@*)
      nice -n 10 "$bin" perturb "$f" --ball "t=${k#*@},target=${k%@*},speed=12" --out "$tmp/$c.$k.glb" --metrics "$out/$c.$k.json" "${@:3}" > "$out/$c.$k.log" 2>&1 ;;
    chest)  nice -n 10 "$bin" perturb "$f" --ball t=$t,target=chest,speed=12 --out $tmp/$c.$k.glb --metrics "$out/$c.$k.json" "${@:3}" > "$out/$c.$k.log" 2>&1 ;;
    pelvis) nice -n 10 "$bin" perturb "$f" --ball t=$t,target=pelvis,speed=12 --out $tmp/$c.$k.glb --metrics "$out/$c.$k.json" "${@:3}" > "$out/$c.$k.log" 2>&1 ;;
    heavy)  nice -n 10 "$bin" perturb "$f" --ball t=$t,target=chest,speed=15,mass=5 --out $tmp/$c.$k.glb --metrics "$out/$c.$k.json" "${@:3}" > "$out/$c.$k.log" 2>&1 ;;
    sim)    nice -n 10 "$bin" simulate "$f" --json "${@:3}" > "$out/$c.$k.json" 2> "$out/$c.$k.log" ;;
  esac
  rm -f $tmp/$c.$k.glb
}
export -f run; export bin mocap out tmp
printf '%s\n' "${jobs[@]}" | xargs -P "${PAR:-2}" -I{} bash -c 'run {} "$@"' _ "$@"
