#!/usr/bin/env bash
# Runs the README's Slurm array script ("Batch runs") for real, on a one-node Slurm started
# here on localhost, then checks that the merged shards equal an unsharded run of the same
# batch (summary.json/csv without the wall times, every clip's outputs byte for byte).
#
# The script is taken verbatim from README.md; only what a 2-core test must change is
# substituted (2 shards, 1 CPU per task, a small test library, a temporary output folder,
# the built binary's path), and every substitution must match, so README drift fails here.
# Everything (munged, slurmctld, slurmd, their config, state and logs) lives in a temporary
# folder and is stopped and removed on exit; /etc/slurm is not used. Run from anywhere:
#   bash .ci/slurm_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS=0
TIMEOUT_IDLE=60  # s for the node to come up idle
TIMEOUT_JOBS=300 # s for the array and the merge to finish

die() {
  echo "slurm_check: FAIL: $*" >&2
  exit 1
}
log() { echo "== $*"; }

# --- 1. packages ------------------------------------------------------------------------
pkgs=()
for p in slurm-wlm slurmctld slurmd slurm-client munge; do
  dpkg -s "$p" >/dev/null 2>&1 || pkgs+=("$p")
done
command -v python3 >/dev/null || pkgs+=(python3) # compares the outputs
if [ ${#pkgs[@]} -gt 0 ]; then
  log "installing ${pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${pkgs[@]}"
fi
for c in munged munge unmunge slurmctld slurmd sbatch squeue sinfo scontrol scancel setpriv python3; do
  command -v "$c" >/dev/null || die "$c not found after installing the packages"
done
id munge >/dev/null 2>&1 || die "no munge user (the munge package creates it)"
SLURM_VERSION=$(slurmd -V | awk '{print $2}')

# --- the binary ---------------------------------------------------------------------------
BIN=${JOSTLE_BIN:-$ROOT/target/release/jostle} # JOSTLE_BIN: another build, to try a fix
if [ ! -x "$BIN" ] && [ -z "${JOSTLE_BIN:-}" ]; then
  log "building $BIN"
  cargo build --release --locked --bin jostle
fi
[ -x "$BIN" ] || die "$BIN missing"
stale=""
[ -n "${JOSTLE_BIN:-}" ] || stale=$(find src Cargo.toml Cargo.lock -newer "$BIN" -type f 2>/dev/null | head -3 || true)
[ -z "$stale" ] || echo "slurm_check: warning: $BIN is older than: $stale" >&2

# --- temporary folder and cleanup ---------------------------------------------------------
T=$(mktemp -d /tmp/jostle-slurm.XXXXXX)
chmod 755 "$T" # munged (user munge) must reach its socket folder
MUNGED_PID="" CTLD_PID="" SLURMD_PID="" JOB_IDS=() SLURM_OK=""
export SLURM_CONF=$T/etc/slurm.conf

stop_pid() { # pid name: TERM, wait up to 15 s, then KILL
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.5
  done
  echo "slurm_check: $2 (pid $pid) did not stop on SIGTERM; killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  set +e
  if [ ${#JOB_IDS[@]} -gt 0 ] && [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
    scancel "${JOB_IDS[@]}" 2>/dev/null
    for _ in $(seq 1 20); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  stop_pid "$SLURMD_PID" slurmd
  stop_pid "$CTLD_PID" slurmctld
  stop_pid "$MUNGED_PID" munged
  if [ "$rc" -ne 0 ] && [ -z "$SLURM_OK" ] && [ -d "$T/log" ]; then
    # The daemons' logs (their stderr only where the log is empty: -D repeats it there).
    for f in "$T"/munge/munged.log "$T"/log/*.log "$T"/log/*.stderr; do
      [ -s "$f" ] || continue
      [[ $f == *.stderr && -s ${f%.stderr}.log ]] && continue
      [[ $f == */munged.stderr && -s $T/munge/munged.log ]] && continue
      echo "---- $f (last 40 lines)" >&2
      tail -n 40 "$f" >&2
    done
  fi
  rm -rf "$T"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$T"/{etc,state,spool,log,submit,munge}

# --- 2. the README's script, adapted (before any daemon starts: drift fails fast) -----
LIB=$T/lib
OUT=$T/out-slurm
WHOLE=$T/out-whole
mkdir -p "$LIB"
for f in "$ROOT"/mocap/*.bvh; do ln -s "$f" "$LIB/"; done
# Short real clips of other skeletons (0.9-4.6 s), when the shared clips are there
# ($JOSTLE_MOCAP_DIR, else ../shared/mocap beside the repo).
for n in bandai1_bow_normal_001 xia_depressed_18_000_punch cmu_walk_dme_example; do
  f=${JOSTLE_MOCAP_DIR:-$ROOT/../shared/mocap}/$n.bvh
  if [ -f "$f" ]; then ln -s "$(cd "$(dirname "$f")" && pwd)/$n.bvh" "$LIB/"; fi
done
NCLIPS=$(find "$LIB" -name '*.bvh' | wc -l)
[ "$NCLIPS" -ge 2 ] || die "test library $LIB has $NCLIPS clips"

# The fenced block that starts with #!/bin/bash (exactly one).
README_SCRIPT=$(awk '
  /^```/ { if (inb) { inb = 0; if (keep) n++; keep = 0; next } else { inb = 1; first = 1; next } }
  inb && first { first = 0; if ($0 == "#!/bin/bash") keep = 1 }
  inb && keep { print }
  END { if (n != 1) { print "found " n " blocks" > "/dev/stderr"; exit 1 } }
' README.md) || die "README.md: expected exactly one fenced block starting with #!/bin/bash"
# The merge command the README gives right after it (the first one past the block, in
# backticks or in sbatch's --wrap "…").
README_MERGE=$(awk '
  /^```/ { if (inb) { inb = 0; if (keep) done = 1; keep = 0 } else { inb = 1; first = 1 }; next }
  inb && first { first = 0; if ($0 == "#!/bin/bash") keep = 1 }
  done && match($0, /jostle batch --merge [^`"]*/) { print substr($0, RSTART, RLENGTH); exit }
' README.md)
[ -n "$README_MERGE" ] || die "README.md: no \`jostle batch --merge OUT\` after the Slurm script"

# README self-consistency: the array covers shards 0..N-1 of --shard .../N, and the merge
# is of the array's --out.
arr_n=$(printf '%s\n' "$README_SCRIPT" | sed -nE 's/^#SBATCH --array=0-([0-9]+)$/\1/p')
shard_n=$(printf '%s\n' "$README_SCRIPT" | sed -nE 's|.*--shard "\$SLURM_ARRAY_TASK_ID/([0-9]+)".*|\1|p')
[ -n "$arr_n" ] && [ -n "$shard_n" ] && [ $((arr_n + 1)) = "$shard_n" ] ||
  die "README script: --array=0-${arr_n:-?} does not match --shard .../${shard_n:-?}"
out_readme=$(printf '%s\n' "$README_SCRIPT" | sed -nE 's/.* --out ([^ ]+).*/\1/p')
[ "$README_MERGE" = "jostle batch --merge $out_readme" ] ||
  die "README: merge command '$README_MERGE' is not of the array's --out '$out_readme'"

sed_escape() { printf '%s' "$1" | sed -e 's/[|&\\]/\\&/g'; }
q() { sed_escape "$(printf '%q' "$1")"; }
# subst TEXT SED-EXPRESSION: apply it, and fail if it changed nothing.
subst() {
  local new
  new=$(printf '%s\n' "$1" | sed -E "$2")
  [ "$new" != "$1" ] || die "README script drifted: substitution '$2' matched nothing"
  printf '%s\n' "$new"
}
S=$README_SCRIPT
S=$(subst "$S" 's|^#SBATCH --array=0-[0-9]+$|#SBATCH --array=0-1|')
S=$(subst "$S" 's|^#SBATCH --cpus-per-task=[0-9]+$|#SBATCH --cpus-per-task=1|')
S=$(subst "$S" 's|(--shard "\$SLURM_ARRAY_TASK_ID)/[0-9]+"|\1/2"|')
S=$(subst "$S" "s|^jostle batch [^ ]+ |$(q "$BIN") batch $(q "$LIB") |")
S=$(subst "$S" "s| --out [^ ]+| --out $(q "$OUT")|")
MERGE=$(subst "$README_MERGE" "s|^jostle batch --merge .*|$(q "$BIN") batch --merge $(q "$OUT")|")
printf '%s\n' "$S" >"$T/submit/jostle.sbatch"
log "README script, adapted ($T/submit/jostle.sbatch):"
cat "$T/submit/jostle.sbatch"
log "merge: $MERGE"

# --- 3a. munge ----------------------------------------------------------------------------
KEY=/etc/munge/munge.key
if [ ! -s "$KEY" ]; then
  log "creating $KEY"
  install -d -o munge -g munge -m 700 /etc/munge
  mungekey --create --keyfile="$KEY" --force
fi
chown munge:munge "$KEY"
chmod 400 "$KEY"
# A private munged (own socket, pid, log and seed files), so a system munged, running or not,
# is neither needed nor disturbed.
chown munge:munge "$T/munge"
chmod 755 "$T/munge"
SOCK=$T/munge/munge.socket
setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground \
  --socket="$SOCK" --key-file="$KEY" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/munge/munged.log" --seed-file="$T/munge/munged.seed" \
  >"$T/log/munged.stderr" 2>&1 &
MUNGED_PID=$!
for _ in $(seq 1 40); do
  [ -S "$SOCK" ] && break
  kill -0 "$MUNGED_PID" 2>/dev/null || break
  sleep 0.25
done
if ! munge -S "$SOCK" -n </dev/null | unmunge -S "$SOCK" >/dev/null; then
  cat "$T/munge/munged.log" "$T/log/munged.stderr" >&2 2>/dev/null || true
  die "munged did not start (socket $SOCK)"
fi

# --- 3b. slurm.conf -----------------------------------------------------------------------
HOST=$(hostname -s)
[ -n "$HOST" ] || die "hostname -s is empty"
CPUS=$(nproc)
MEM_MB=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo) # what free -m shows
REAL_MB=$((MEM_MB * 9 / 10))
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
CTLD_PORT="" SLURMD_PORT=""
for p in 17817 18817 19817 27817 28817 29817; do
  if port_free "$p" && port_free $((p + 1)); then
    CTLD_PORT=$p SLURMD_PORT=$((p + 1))
    break
  fi
done
[ -n "$CTLD_PORT" ] || die "no free port pair for slurmctld/slurmd"
: >"$T/etc/plugstack.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=jostlecheck
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$T/etc/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=1024
SchedulerType=sched/backfill
ReturnToService=2
MinJobAge=3600
InactiveLimit=0
KillWait=10
SlurmdTimeout=120
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$REAL_MB State=UNKNOWN
PartitionName=check Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF

# --- 3c. daemons --------------------------------------------------------------------------
log "Slurm $SLURM_VERSION: slurmctld :$CTLD_PORT, slurmd :$SLURMD_PORT, node $HOST ($CPUS CPUs, RealMemory=$REAL_MB MB), config $SLURM_CONF"
slurmctld -D -f "$SLURM_CONF" >"$T/log/slurmctld.stderr" 2>&1 &
CTLD_PID=$!
slurmd -D -f "$SLURM_CONF" -N "$HOST" >"$T/log/slurmd.stderr" 2>&1 &
SLURMD_PID=$!
state=""
for _ in $(seq 1 $((TIMEOUT_IDLE * 2))); do
  kill -0 "$CTLD_PID" 2>/dev/null || die "slurmctld exited"
  kill -0 "$SLURMD_PID" 2>/dev/null || die "slurmd exited"
  state=$(sinfo -h -N -n "$HOST" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
if [ "$state" != idle ]; then
  sinfo -N -l >&2 || true
  scontrol show node "$HOST" >&2 || true
  die "node $HOST not idle after ${TIMEOUT_IDLE} s (state: '${state:-no answer}')"
fi
sinfo

# --- 4. submit, wait, check ------------------------------------------------------------------
cd "$T/submit"
t0=$SECONDS
AID=$(sbatch --parsable jostle.sbatch)
AID=${AID%%;*}
JOB_IDS+=("$AID")
MID=$(sbatch --parsable --dependency="afterany:$AID" --job-name=jostle-merge --wrap "$MERGE")
MID=${MID%%;*}
JOB_IDS+=("$MID")
log "array job $AID, merge job $MID (afterany:$AID)"
while [ -n "$(squeue -h -o %i)" ]; do
  if [ $((SECONDS - t0)) -ge "$TIMEOUT_JOBS" ]; then
    squeue >&2 || true
    die "jobs not done after ${TIMEOUT_JOBS} s"
  fi
  sleep 1
done
t_slurm=$((SECONDS - t0))
cd "$ROOT"
for f in "$T"/submit/slurm-*.out; do
  [ -f "$f" ] || continue
  echo "---- $(basename "$f")"
  cat "$f"
done
# Every array task and the merge: COMPLETED with exit code 0 (no accounting database:
# slurmctld keeps finished jobs for MinJobAge).
scontrol -o show job "$AID" >"$T/array.jobs" || die "scontrol show job $AID"
scontrol -o show job "$MID" >"$T/merge.jobs" || die "scontrol show job $MID"
tasks=$(grep -oE 'ArrayTaskId=[0-9]+ ' "$T/array.jobs" | sort -u | wc -l)
[ "$tasks" = 2 ] || die "array job $AID: $tasks tasks, expected 2: $(cat "$T/array.jobs")"
while read -r line; do
  task=$(grep -oE 'ArrayTaskId=[0-9]+' <<<"$line")
  st=$(grep -oE 'JobState=[A-Z_]+' <<<"$line")
  ec=$(grep -oE ' ExitCode=[0-9]+:[0-9]+' <<<"$line")
  echo "array $AID $task: $st$ec"
  [ "$st" = JobState=COMPLETED ] && [ "$ec" = " ExitCode=0:0" ] ||
    die "array job $AID $task: $st$ec (output: $T/submit/slurm-${AID}_${task#ArrayTaskId=}.out)"
done <"$T/array.jobs"
st=$(grep -oE 'JobState=[A-Z_]+' "$T/merge.jobs")
ec=$(grep -oE ' ExitCode=[0-9]+:[0-9]+' "$T/merge.jobs")
echo "merge $MID: $st$ec"
[ "$st" = JobState=COMPLETED ] && [ "$ec" = " ExitCode=0:0" ] || die "merge job $MID: $st$ec"
SLURM_OK=1 # failures from here on are jostle's, not Slurm's: no daemon logs

# Every output the shards wrote matches the size and SHA-256 its job.json records.
log "checking the merged library: jostle batch --check"
"$BIN" batch --check "$OUT" || die "jostle batch --check found bad outputs in $OUT"

# The same batch unsharded: the script's command without --shard, into another folder.
cmd=$(printf '%s\n' "$S" | grep -v '^#' | sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
cmd=$(subst "$cmd" 's| --shard "\$SLURM_ARRAY_TASK_ID/2"||')
cmd=$(subst "$cmd" "s| --out [^ ]+| --out $(q "$WHOLE")|")
log "unsharded: SLURM_CPUS_PER_TASK=$CPUS $cmd"
t0=$SECONDS
env -u SLURM_ARRAY_TASK_ID SLURM_CPUS_PER_TASK="$CPUS" bash -euo pipefail -c "$cmd" ||
  die "unsharded run failed"
t_whole=$((SECONDS - t0))

log "comparing $OUT (2 shards, merged) with $WHOLE (unsharded)"
python3 - "$OUT" "$WHOLE" "$NCLIPS" <<'PY' || die "the merged shards differ from the unsharded run (above)"
import csv, io, json, math, os, sys

sharded, whole, nclips = sys.argv[1], sys.argv[2], int(sys.argv[3])
fail = []

def load(p):
    with open(p, "rb") as f:
        return f.read()

def summary(root):
    s = json.loads(load(os.path.join(root, "summary.json")))
    for k in ("wall_s", "clips_per_min", "sim_s_per_wall_s"):  # wall-time based
        s["totals"].pop(k)
    for c in s["clips"]:
        c.pop("timing")
    return s

def leaves(x, y, path="", out=None):
    """The paths where two JSON values differ (at most 12)."""
    out = [] if out is None else out
    if len(out) >= 12:
        return out
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y)):
            leaves(x.get(k), y.get(k), f"{path}.{k}", out)
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            leaves(u, v, f"{path}[{x[i].get('path', i) if isinstance(u, dict) else i}]", out)
    elif x != y or type(x) != type(y):
        note = ""
        if isinstance(x, float) and isinstance(y, float) and math.nextafter(x, y) == y:
            note = " (1 ulp: a float that did not survive a JSON write + read; serde_json without float_roundtrip?)"
        out.append(f"  {path}: merged {json.dumps(x)}, unsharded {json.dumps(y)}{note}")
    return out

a, b = summary(sharded), summary(whole)
if a != b:
    fail.append("summary.json differs (wall times aside):\n" + "\n".join(leaves(a, b)))
n = len(a["clips"])
bad = [c["path"] + ": " + c["status"] for c in a["clips"] if c["status"] != "ok"]
if n != nclips or bad:
    fail.append(f"merged summary has {n} clips (library: {nclips}), not ok: {bad}")
if a["totals"]["ok"] != nclips:
    fail.append(f"totals: {a['totals']}")

def table(root):
    rows = list(csv.reader(io.StringIO(load(os.path.join(root, "summary.csv")).decode())))
    timing = {"load_s", "inverse_s", "simulate_s", "export_s", "total_s"}
    keep = [i for i, h in enumerate(rows[0]) if h not in timing]
    if len(keep) != len(rows[0]) - len(timing):
        fail.append(f"{root}/summary.csv: timing columns not found in {rows[0]}")
    return [[r[i] for i in keep] for r in rows]

ta, tb = table(sharded), table(whole)
if ta != tb:
    diff = [f"  row {i} column {ta[0][j]}: merged {x}, unsharded {y}"
            for i, (ra, rb) in enumerate(zip(ta, tb)) for j, (x, y) in enumerate(zip(ra, rb)) if x != y]
    fail.append(f"summary.csv differs (timing columns aside; {len(ta)} vs {len(tb)} rows):\n" + "\n".join(diff[:12]))
for root in (sharded, whole):
    if os.path.getsize(os.path.join(root, "report.html")) < 1000:
        fail.append(f"{root}/report.html is (nearly) empty")

def files(root):
    out = set()
    for d, _, names in os.walk(root):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), root)
            if os.sep in rel:  # per-clip outputs; the summaries are compared above
                out.add(rel)
    return out

fa, fb = files(sharded), files(whole)
if fa != fb:
    fail.append(f"output files differ: only merged {sorted(fa - fb)}, only unsharded {sorted(fb - fa)}")
for rel in sorted(fa & fb):
    x, y = load(os.path.join(sharded, rel)), load(os.path.join(whole, rel))
    if os.path.basename(rel) == "job.json":  # records wall times besides hashes and outputs
        x, y = json.loads(x), json.loads(y)
        x.pop("timing"), y.pop("timing")
    if x != y:
        fail.append(f"{rel} differs")
glb = sum(1 for r in fa if r.endswith(".glb"))
shards = sorted(f for f in os.listdir(sharded) if f.startswith("summary.shard-"))
per = [len(json.loads(load(os.path.join(sharded, f)))["clips"]) for f in shards]
if len(shards) != 2:
    fail.append(f"shard summaries: {shards}")
elif 0 in per:
    print(f"slurm_check: warning: a shard got no clip ({per}): the split is not exercised", file=sys.stderr)
if fail:
    print("\n".join(fail), file=sys.stderr)
    sys.exit(1)
print(f"{n} clips ({' + '.join(map(str, per))} over 2 shards), {len(fa)} per-clip files identical "
      f"({glb} .glb; job.json without timing), summary.json/csv equal without wall times")
PY
echo "slurm_check: PASS: README Slurm array (Slurm $SLURM_VERSION): $NCLIPS clips, 2 shards + merge in ${t_slurm} s, unsharded in ${t_whole} s, identical outputs; ${SECONDS} s in all"
