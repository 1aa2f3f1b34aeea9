"""Tests of the jostle Python package against the `jostle` command line built from the
same tree: same arrays, same bytes, same metrics; errors as named exceptions; no crash on
bad input; deterministic; threads give the same results."""

from __future__ import annotations

import json
import math
import os
import pickle
import random
import signal
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

import jostle

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "mocap" / "demo_walk.bvh"
WAVE = REPO / "mocap" / "demo_wave.bvh"
BALL = {"t": 1.5, "target": "right_forearm", "speed": 12.0}
BALL_FLAG = "t=1.5,target=right_forearm,speed=12"


def _cli() -> Path | None:
    """The release `jostle` binary of this tree: $JOSTLE_BIN, or target/release/jostle
    under $CARGO_TARGET_DIR or the repository."""
    candidates = []
    if os.environ.get("JOSTLE_BIN"):
        candidates.append(Path(os.environ["JOSTLE_BIN"]))
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "jostle")
    candidates.append(REPO / "target" / "release" / "jostle")
    return next((c for c in candidates if c.is_file()), None)


@pytest.fixture(scope="session")
def cli() -> Path:
    exe = _cli()
    if exe is None:
        message = "no release jostle binary (cargo build --release, or set JOSTLE_BIN)"
        if os.environ.get("JOSTLE_REQUIRE_CLI") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return exe


def run_cli(cli: Path, *args: str) -> str:
    out = subprocess.run([str(cli), *args], check=True, capture_output=True, text=True)
    return out.stdout


def cli_perturb(cli: Path, tmp: Path, clip: Path, *flags: str) -> dict:
    """Run `jostle perturb` with every output; returns the paths and the metrics."""
    p = {k: tmp / f"cli.{k}" for k in ("glb", "bvh", "npz", "json")}
    run_cli(cli, "perturb", str(clip), *flags, "--out", str(p["glb"]), "--bvh", str(p["bvh"]),
            "--npz", str(p["npz"]), "--metrics", str(p["json"]))
    return p


def assert_same_arrays(run: jostle.Perturbation, npz_path: Path) -> None:
    with np.load(npz_path) as z:
        assert sorted(z.files) == sorted(name for name, _, _ in jostle.DATASET_ARRAYS)
        for name in z.files:
            ours, theirs = getattr(run, name), z[name]
            assert isinstance(ours, np.ndarray), name
            assert ours.dtype == theirs.dtype, name
            assert ours.shape == theirs.shape, name
            assert np.array_equal(ours, theirs, equal_nan=ours.dtype.kind == "f"), name


def comparable_metrics(m: dict) -> dict:
    """The metrics without what differs by design: this call's `timing`, the CLI's `out`."""
    return {k: v for k, v in m.items() if k not in ("timing", "out")}


def test_arrays_outputs_and_metrics_equal_the_cli(cli, tmp_path):
    flags = ["--ball", BALL_FLAG, "--random-balls", "2", "--seed", "3"]
    p = cli_perturb(cli, tmp_path, DEMO, *flags)
    run = jostle.perturb(DEMO, [BALL], random_balls=2, seed=3)
    assert_same_arrays(run, p["npz"])
    for kind in ("glb", "bvh", "npz"):
        out = tmp_path / "py" / f"run.{kind}"
        getattr(run, f"save_{kind}")(out)
        assert out.read_bytes() == p[kind].read_bytes(), kind
    assert run.glb == p["glb"].read_bytes()
    cli_metrics = json.loads(p["json"].read_text())
    assert comparable_metrics(run.metrics) == comparable_metrics(cli_metrics)
    assert set(run.metrics["timing"]) == set(cli_metrics["timing"])
    assert run.ball_hit.tolist() == [b["hit"] for b in run.metrics["balls"]]
    # nothing but the outputs in the folder: no temporary left behind
    assert sorted(f.name for f in (tmp_path / "py").iterdir()) == ["run.bvh", "run.glb", "run.npz"]


def test_options_reach_the_simulation_as_the_cli_flags(cli, tmp_path):
    flags = ["--ball", "t=1.0,target=chest,speed=14,mass=0.6", "--step", "0.008333333333333333",
             "--drift", "baumgarte", "--beta", "150", "--k-s", "0.6", "--root", "pinned",
             "--mass", "80", "--height", "1.9", "--gltf-layout", "nodes", "--cutoff", "6"]
    p = cli_perturb(cli, tmp_path, WAVE, *flags)
    run = jostle.perturb(WAVE, [jostle.Ball(t=1.0, target="chest", speed=14, mass=0.6)],
                         step=1 / 120, drift="baumgarte", beta=150, k_s=0.6, root="pinned",
                         mass=80, height=1.9, gltf_layout="nodes", cutoff=6)
    assert_same_arrays(run, p["npz"])
    assert run.glb == p["glb"].read_bytes()
    assert run.metrics["mass_kg"] == pytest.approx(80)
    assert run.step_s == pytest.approx(1 / 120)


def test_projection_metric_reaches_the_simulation(cli, tmp_path):
    p = cli_perturb(cli, tmp_path, DEMO, "--ball", BALL_FLAG, "--projection", "mass")
    run = jostle.perturb(DEMO, [BALL], projection="mass")
    assert_same_arrays(run, p["npz"])
    default = jostle.perturb(DEMO, [BALL])
    assert not np.array_equal(run.positions, default.positions)


def test_every_frame_is_simulated_as_the_cli_does_with_npz(cli, tmp_path):
    p = cli_perturb(cli, tmp_path, DEMO, "--ball", BALL_FLAG)
    run = jostle.perturb(DEMO, [BALL])
    assert run.metrics["timing"]["start_s"] == 0.0
    assert json.loads(p["json"].read_text())["timing"]["start_s"] == 0.0


def test_flags_without_value_take_booleans(cli, tmp_path):
    p = cli_perturb(cli, tmp_path, DEMO, "--ball", BALL_FLAG, "--no-ground", "--no-falls")
    run = jostle.perturb(DEMO, [BALL], no_ground=True, no_falls=True, no_feedback=False)
    assert_same_arrays(run, p["npz"])


def test_info_equals_cli_info_json(cli):
    assert jostle.info(DEMO) == json.loads(run_cli(cli, "info", str(DEMO), "--json"))
    assert jostle.info(DEMO, height=1.6) == json.loads(
        run_cli(cli, "info", str(DEMO), "--json", "--height", "1.6"))


def test_load_gives_the_files_hierarchy_and_channels():
    clip = jostle.load(DEMO)
    facts = jostle.info(DEMO)
    assert clip.frames == facts["frames"]
    assert len(clip.joint_names) == facts["joints"] == len(clip.parents)
    assert clip.parents[0] == -1 and all(0 <= p < i for i, p in enumerate(clip.parents) if i)
    assert clip.channels.shape == (clip.frames, len(clip.channel_names))
    assert clip.channels.dtype == np.float64 and clip.offsets.shape == (len(clip.joint_names), 3)
    assert clip.fps == pytest.approx(1 / clip.frame_time)
    # the first numbers of the first frame line of the file
    text = DEMO.read_text().splitlines()
    first = text[text.index(next(line for line in text if line.startswith("Frame Time"))) + 1]
    assert clip.channels[0, :6].tolist() == [float(x) for x in first.split()[:6]]


def test_results_are_deterministic_and_threads_agree():
    a = jostle.perturb(DEMO, random_balls=3, seed=11)
    b = jostle.perturb(DEMO, random_balls=3, seed=11)
    assert a.glb == b.glb and a.bvh == b.bvh
    for name in a.arrays:
        assert np.array_equal(a.arrays[name], b.arrays[name], equal_nan=a.arrays[name].dtype.kind == "f")
    results = {}

    def work(seed):
        results[seed] = jostle.perturb(DEMO, random_balls=3, seed=seed).glb

    threads = [threading.Thread(target=work, args=(s,)) for s in (11, 12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[11] == a.glb
    assert results[12] == jostle.perturb(DEMO, random_balls=3, seed=12).glb


def test_a_perturbation_pickles_with_its_arrays_and_outputs(tmp_path):
    # what a DataLoader worker process does to hand a result back
    run = jostle.perturb(DEMO, [BALL])
    again = pickle.loads(pickle.dumps(run))
    assert again.glb == run.glb and again.bvh == run.bvh and again.metrics == run.metrics
    for name, a in run.arrays.items():
        b = getattr(again, name)
        assert b.dtype == a.dtype and np.array_equal(b, a, equal_nan=a.dtype.kind == "f"), name
    run.save_npz(tmp_path / "a.npz")
    again.save_npz(tmp_path / "b.npz")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


@pytest.mark.parametrize("kwargs", [{"random_balls": -1}, {"seed": -3}, {"random_balls": 1.5}])
def test_bad_counts_raise_value_error_naming_them(kwargs):
    with pytest.raises(ValueError, match=f"`{next(iter(kwargs))}`"):
        jostle.perturb(DEMO, **kwargs)


def test_ball_objects_and_dicts_are_the_same_ball():
    from_dict = jostle.perturb(DEMO, [{"t": 0.8, "from": [0, 1.2, 3], "velocity": [0, 0, -12]}])
    from_ball = jostle.perturb(DEMO, [jostle.Ball(t=0.8, from_=(0, 1.2, 3), velocity=(0, 0, -12))])
    assert from_dict.glb == from_ball.glb
    assert jostle.perturb(DEMO, jostle.Ball(t=0.8, from_=(0, 1.2, 3), velocity=(0, 0, -12))).glb == from_ball.glb
    assert from_dict.ball_launch_velocity.tolist() == [[0, 0, -12]]


def test_malformed_bvh_raises_bvh_error_naming_file_and_line(tmp_path):
    lines = DEMO.read_text().splitlines()
    bad_at = next(i for i, line in enumerate(lines) if "CHANNELS" in line)
    lines[bad_at] = "  CHANNELS 3 Xrotation Wrotation Zrotation"
    bad = tmp_path / "broken.bvh"
    bad.write_text("\n".join(lines) + "\n")
    for call in (jostle.perturb, jostle.load, jostle.info):
        with pytest.raises(jostle.BvhError) as e:
            call(bad)
        assert isinstance(e.value, ValueError)
        assert f"broken.bvh:{bad_at + 1}:" in str(e.value)
        assert "Wrotation" in str(e.value)


def test_missing_file_raises_file_not_found_naming_it(tmp_path):
    missing = tmp_path / "nowhere.bvh"
    for call in (jostle.perturb, jostle.load, jostle.info):
        with pytest.raises(FileNotFoundError) as e:
            call(missing)
        assert e.value.filename == str(missing)
        assert "nowhere.bvh" in str(e.value)
    with pytest.raises(FileNotFoundError, match="spec.toml"):
        jostle.perturb(DEMO, skeleton=tmp_path / "spec.toml")


@pytest.mark.parametrize(
    "ball, culprit",
    [
        ({"t": 1.0, "target": "chest", "speed": math.nan}, "`speed`"),
        ({"t": 1.0, "target": "chest", "speed": 12, "mass": -1}, "`mass`"),
        ({"t": math.inf, "target": "chest"}, "`t`"),
        ({"t": 1.0, "target": "chest", "colour": "red"}, "`colour`"),
        ({"t": 1.0, "from": [0, 1], "velocity": [0, 0, -1]}, "`from`"),
        ({"t": 1.0, "target": "chest", "speed": "fast"}, "`speed`"),
        ({"target": "chest"}, "`t`"),
        ("t=1,target=chest", "ball 1"),
    ],
)
def test_bad_balls_raise_value_error_naming_the_key(ball, culprit):
    with pytest.raises(ValueError, match=culprit):
        jostle.perturb(DEMO, [ball])


def test_unknown_target_names_it():
    with pytest.raises(ValueError, match="left_tentacle"):
        jostle.perturb(DEMO, [{"t": 1.0, "target": "left_tentacle"}])


@pytest.mark.parametrize(
    "options, culprit",
    [
        ({"k_s": -1.0}, "`k_s`"),
        ({"k_0": math.nan}, "`k_0`"),
        ({"step": 0.5}, "`step`"),
        ({"mass": -70}, "`mass`"),
        ({"height": 0}, "`height`"),
        ({"drift": "sideways"}, "`drift`"),
        ({"root_hz": -2}, "`root_hz`"),
        ({"no_ground": 1}, "`no_ground`"),
        ({"step": True}, "`step`"),
        ({"gravity": 3}, "`gravity`"),
        ({"help": True}, "`help`"),
        ({"scale": 0.01, "height": 1.7}, "`"),
    ],
)
def test_bad_options_raise_value_error_naming_the_key(options, culprit):
    with pytest.raises(ValueError, match=culprit):
        jostle.perturb(DEMO, [BALL], **options)


def test_a_blow_up_raises_simulation_error():
    # a 1,000 t ball at 1,000 km/s: the struck bodies leave at absurd speeds
    with pytest.raises(jostle.SimulationError, match=r"simulation failed at t = .* \(body `\w+`\)"):
        jostle.perturb(DEMO, [{"t": 1.0, "target": "chest", "speed": 1e6, "mass": 1e6}])
    assert issubclass(jostle.SimulationError, RuntimeError)


# The seed of the Rust fuzz target (fuzz/seeds/tiny.bvh), as tests/bvh_malformed.rs mutates it.
SMALL = (REPO / "fuzz" / "seeds" / "tiny.bvh").read_text()


def torture_inputs():
    rng = random.Random(1)
    alphabet = " \t\r\n{}:.-+e0123456789xXJOINTEndSite"
    yield from (SMALL[:end] for end in range(0, len(SMALL), 3))
    yield "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n" + "JOINT j\n{\nOFFSET 0 1 0\n" * 1001
    yield "HIERARCHY\nROOT a\n{\nOFF\x01SET 0 0 0\n"
    for seed in sorted((REPO / "fuzz" / "seeds").glob("*.bvh")):
        yield seed.read_text(errors="replace")
    while True:
        chars = list(SMALL)
        for _ in range(1 + rng.randrange(3)):
            pos = rng.randrange(len(chars))
            op = rng.randrange(3)
            if op == 0:
                chars[pos] = rng.choice(alphabet)
            elif op == 1:
                chars.insert(pos, rng.choice(alphabet))
            else:
                del chars[pos]
        yield "".join(chars)


def test_the_interpreter_survives_1000_calls_on_bad_input(tmp_path):
    expected = (ValueError, OSError, jostle.SimulationError)
    calls = 0
    f = tmp_path / "t.bvh"
    for text in torture_inputs():
        if calls >= 900:
            break
        f.write_text(text)
        for call in (jostle.load, jostle.info):
            try:
                call(f)
            except expected:
                pass
            calls += 1
    rng = random.Random(2)
    junk = [math.nan, -1, 0, "x", None, [], {}, [1, 2], True, 1e308, -math.inf]
    while calls < 1000:
        key = rng.choice(["t", "target", "speed", "from", "velocity", "mass", "radius", "spin"])
        ball = {"t": 1.0, "target": "chest", key: rng.choice(junk)}
        option = {rng.choice(["k_s", "step", "drift", "mass", "root", "cutoff"]): rng.choice(junk)}
        try:
            jostle.perturb(tmp_path / "missing.bvh", [ball], **option)
        except expected:
            pass
        calls += 1
    assert jostle.load(DEMO).frames > 0  # still alive and working


@pytest.mark.parametrize("delay", [0.3, 1.8])
def test_ctrl_c_interrupts_a_long_call(delay, tmp_path):
    # SIGINT the process while the main thread runs calls of a few seconds each (1/4000 s
    # steps): on this machine 0.3 s lands in the feedforward precompute, 1.8 s in the
    # simulation. The calls repeat so that a faster machine cannot finish before the
    # signal; how soon the call returns (18-43 ms here) is measured by hand, not asserted.
    # Python's own handler, whatever the launcher left: a shell's background job starts
    # with SIGINT ignored, and then no Ctrl-C reaches the interpreter at all.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in range(20):
                jostle.perturb(DEMO, [BALL], step=1 / 4000).save_npz(tmp_path / "run.npz")
                (tmp_path / "run.npz").unlink()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert list(tmp_path.iterdir()) == []
    assert jostle.load(DEMO).frames > 0


def test_a_shared_clip_matches_the_cli(cli, tmp_path):
    folder = Path(os.environ.get("JOSTLE_MOCAP_DIR", REPO.parent / "shared" / "mocap"))
    clips = sorted(folder.rglob("*.bvh")) if folder.is_dir() else []
    if not clips:
        message = f"no shared clips in {folder} (../shared/mocap or JOSTLE_MOCAP_DIR)"
        if os.environ.get("JOSTLE_REQUIRE_SHARED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    p = cli_perturb(cli, tmp_path, clips[0], "--random-balls", "2", "--seed", "5")
    run = jostle.perturb(clips[0], random_balls=2, seed=5)
    assert_same_arrays(run, p["npz"])
    assert run.glb == p["glb"].read_bytes()


def test_stub_lists_every_array():
    stub = (Path(jostle.__file__).parent / "__init__.pyi").read_text()
    for name, _, _ in jostle.DATASET_ARRAYS:
        assert f"    {name}: NDArray" in stub, name
