"""Benchmark of the Python package (a plain script, not a test):

1. the cost of calling jostle.perturb from Python over the same work in the CLI: the
   call's wall time vs the CLI's own timing (load + inverse + simulate + export) of the
   same clip and throws, medians over --repeat runs;
2. two threads on two cores vs one: the wall time of two concurrent calls over that of one.

    python python/bench.py [CLIP.bvh] [--repeat 5] [--cli target/release/jostle]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import sys
import time
from pathlib import Path

# Run as `python python/bench.py`, this folder comes first on sys.path and its jostle/
# (the Python half, without the compiled extension) would shadow the installed package.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
import jostle  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("clip", type=Path, nargs="?", default=REPO / "mocap" / "demo_walk.bvh")
parser.add_argument("--repeat", type=int, default=5)
parser.add_argument("--cli", type=Path, default=Path(os.environ.get("JOSTLE_BIN", REPO / "target" / "release" / "jostle")))
args = parser.parse_args()
BALL = {"t": 1.5, "target": "right_forearm", "speed": 12.0}
WORK = ("load_s", "inverse_s", "simulate_s", "export_s")


def py_call() -> tuple[float, float]:
    """(wall time of one call, the Rust work it timed itself), s."""
    t0 = time.perf_counter()
    run = jostle.perturb(args.clip, [BALL])
    wall = time.perf_counter() - t0
    return wall, sum(run.metrics["timing"][k] for k in WORK)


def cli_call(tmp: Path) -> float:
    """The CLI's own timing of the same work (--npz and --bvh: the arrays and BVH the
    Python call also builds), s."""
    out = subprocess.run(
        [str(args.cli), "perturb", str(args.clip), "--ball", "t=1.5,target=right_forearm,speed=12",
         "--out", str(tmp / "a.glb"), "--bvh", str(tmp / "a.bvh"), "--npz", str(tmp / "a.npz"), "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    timing = json.loads(out)["timing"]
    return sum(timing[k] for k in WORK)


py_call()  # warm up: first import of numpy's pieces, page cache
py = [py_call() for _ in range(args.repeat)]
py_wall = statistics.median(w for w, _ in py)
py_inner = statistics.median(w - inner for w, inner in py)
print(f"clip {args.clip.name}, medians of {args.repeat}")
print(f"  python call       {py_wall * 1e3:8.1f} ms wall; outside the Rust-timed work: {py_inner * 1e3:.2f} ms")
if args.cli.is_file():
    with tempfile.TemporaryDirectory() as d:
        cli = statistics.median(cli_call(Path(d)) for _ in range(args.repeat))
    print(f"  CLI (its timing)  {cli * 1e3:8.1f} ms")
    print(f"  python over CLI   {(py_wall / cli - 1) * 100:+8.2f} %  (call wall vs the CLI's load+inverse+simulate+export)")
    print(f"  python-only part  {py_inner / cli * 100:8.2f} %  of the CLI's time")
else:
    print(f"  (no CLI at {args.cli}: build it with cargo build --release)")

one = statistics.median(py_call()[0] for _ in range(args.repeat))


def two_threads() -> tuple[float, float]:
    """(wall time, process CPU time / wall time) of two calls in two threads."""
    threads = [threading.Thread(target=py_call) for _ in range(2)]
    t0, c0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return wall, (time.process_time() - c0) / wall


pairs = [two_threads() for _ in range(args.repeat)]
two = statistics.median(w for w, _ in pairs)
busy = statistics.median(c for _, c in pairs)
print(f"  1 call            {one * 1e3:8.1f} ms")
print(f"  2 calls, 2 threads{two * 1e3:8.1f} ms  = {two / one:.2f}x one call (os.cpu_count() = {os.cpu_count()});"
      f" CPU/wall {busy:.2f} (2 = both threads ran at once, 1 = serialised)")
if args.cli.is_file():
    # The same pair as two CLI processes: what the machine gives two independent runs (a
    # busy machine shows here too, so the threads' ratio can be read against it).
    def cli_wall(n: int, tmp: Path) -> float:
        cmd = [str(args.cli), "perturb", str(args.clip), "--ball", "t=1.5,target=right_forearm,speed=12"]
        t0 = time.perf_counter()
        procs = [subprocess.Popen([*cmd, "--out", str(tmp / f"{i}.glb")], stdout=subprocess.DEVNULL) for i in range(n)]
        for p in procs:
            p.wait()
        return time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as d:
        p1 = statistics.median(cli_wall(1, Path(d)) for _ in range(args.repeat))
        p2 = statistics.median(cli_wall(2, Path(d)) for _ in range(args.repeat))
    print(f"  CLI: 1 process {p1 * 1e3:.1f} ms, 2 processes {p2 * 1e3:.1f} ms = {p2 / p1:.2f}x (the machine's own ratio)")
