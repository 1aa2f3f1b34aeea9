//! Helpers shared by the integration tests: where the clips are, temp dirs, random models.
#![allow(dead_code)]

use jostle::mocap::Clip;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The shared real clips (never copied into the repo): `$JOSTLE_MOCAP_DIR` if that is set
/// (used as is; an empty value counts as unset), otherwise `../shared/mocap` beside the
/// checkout, where CI has them. A fresh clone has neither: the tests that need the real
/// clips then skip (see [`shared_dir_or_skip`]) unless `JOSTLE_REQUIRE_SHARED=1`.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("JOSTLE_MOCAP_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap")),
    }
}

/// `(file, joints, end sites, channels/frame, frames, frame time, rotation order)` as listed in
/// `shared/mocap/MANIFEST.md` (computed there by an independent parser). Order "mixed" means
/// the root is ZYX and every other joint ZXY.
pub const MANIFEST: &[(&str, usize, usize, usize, usize, f64, &str)] = &[
    (
        "cmu_01_01_jumps_turn.bvh",
        31,
        7,
        96,
        2752,
        0.0083333,
        "ZYX",
    ),
    ("cmu_walk_bvhmatlab.bvh", 31, 7, 96, 344, 0.0083333, "ZYX"),
    ("cmu_walk_dme_example.bvh", 31, 7, 96, 278, 0.0083333, "ZYX"),
    (
        "xia_neutral_01_000_walk.bvh",
        31,
        7,
        96,
        327,
        0.008333,
        "ZYX",
    ),
    ("xia_angry_13_000_run.bvh", 31, 7, 96, 140, 0.008333, "ZYX"),
    (
        "xia_depressed_18_000_punch.bvh",
        31,
        7,
        96,
        105,
        0.008333,
        "ZYX",
    ),
    (
        "iclone_cmu_02_01_walk.bvh",
        101,
        41,
        306,
        171,
        0.016667,
        "ZYX",
    ),
    (
        "iclone_cmu_02_05_punch_strike.bvh",
        100,
        41,
        303,
        927,
        0.016667,
        "ZYX",
    ),
    (
        "iclone_cmu_05_02_dance_pirouette.bvh",
        100,
        41,
        303,
        562,
        0.016667,
        "ZYX",
    ),
    (
        "bandai1_walk_normal_001.bvh",
        22,
        5,
        132,
        195,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_run_happy_001.bvh",
        22,
        5,
        132,
        140,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_punch_normal_001.bvh",
        22,
        5,
        132,
        224,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_kick_normal_001.bvh",
        22,
        5,
        132,
        358,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_bow_normal_001.bvh",
        22,
        5,
        132,
        138,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_dance_short_normal_001_LONG.bvh",
        22,
        5,
        132,
        1901,
        0.0333333,
        "ZXY",
    ),
    (
        "cmusl_60_12_salsa_lead_m.bvh",
        43,
        14,
        132,
        1690,
        0.008333,
        "mixed",
    ),
    ("arena_louise.bvh", 18, 5, 57, 2998, 0.01, "ZXY"),
    ("mixamo_freebvh.bvh", 55, 15, 168, 69, 0.0333333, "ZYX"),
    ("mocapbank_sit_stand.bvh", 19, 5, 60, 455, 0.033333, "ZXY"),
    (
        "pymo_av_8walk_meredith.bvh",
        23,
        7,
        72,
        1064,
        0.008333,
        "XYZ",
    ),
];

/// One of the repository's own clips (`mocap/demo_walk.bvh`, `mocap/demo_wave.bvh`).
pub fn repo_clip(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("mocap")
        .join(name)
}

/// The repository's own clips, sorted.
pub fn repo_clips() -> Vec<PathBuf> {
    ["demo_walk.bvh", "demo_wave.bvh"]
        .into_iter()
        .map(repo_clip)
        .collect()
}

/// The shared clip folder, or `None` when it is missing: then a skip line goes straight to
/// stderr (past libtest's capture, so a plain `cargo test` shows it), or, under
/// `JOSTLE_REQUIRE_SHARED=1` (CI), the test panics.
pub fn shared_dir_or_skip() -> Option<PathBuf> {
    let dir = shared_dir();
    if dir.is_dir() {
        return Some(dir);
    }
    absent("skipped", &test_name(), None, "");
    None
}

/// The shared clip `name`, or `None` (after the skip line, or a panic under
/// `JOSTLE_REQUIRE_SHARED=1`) when it or its folder is missing.
pub fn shared_clip(name: &str) -> Option<PathBuf> {
    let path = shared_dir().join(name);
    if path.is_file() {
        return Some(path);
    }
    absent("skipped", &test_name(), Some(name), "");
    None
}

/// The repo's clips, then every shared `.bvh` (sorted) when the shared folder is there
/// (else a visible "skipped" line for the shared part).
pub fn repo_and_shared_clips() -> Vec<PathBuf> {
    let mut clips = repo_clips();
    if let Some(shared) = shared_dir_or_skip_part("shared clips") {
        let mut v: Vec<_> = std::fs::read_dir(shared)
            .expect("the shared clip folder")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
            .collect();
        v.sort();
        clips.extend(v);
    }
    clips
}

/// For a test that also runs on the repository's clips: the shared folder, or `None` after
/// a line naming the part skipped (`what`: the shared clips it would have used); the rest of
/// the test goes on. A panic under `JOSTLE_REQUIRE_SHARED=1`.
pub fn shared_dir_or_skip_part(what: &str) -> Option<PathBuf> {
    let dir = shared_dir();
    if dir.is_dir() {
        return Some(dir);
    }
    absent(
        "skipped",
        &format!("part of {} ({what})", test_name()),
        None,
        "; the rest of it ran",
    );
    None
}

/// For a test that can run on something else (`instead`, from the repo's clips) when the
/// shared clips are absent: the shared folder, or `None` after a `fallback:` line saying so.
/// A panic under `JOSTLE_REQUIRE_SHARED=1`.
pub fn shared_dir_or_fallback(instead: &str) -> Option<PathBuf> {
    let dir = shared_dir();
    if dir.is_dir() {
        return Some(dir);
    }
    absent(
        "fallback",
        &test_name(),
        None,
        &format!("; it ran on {instead} instead"),
    );
    None
}

/// A test that only needs "a real clip": the shared clip `name` when present, otherwise the
/// repository's `mocap/<fallback>` (saying so on stderr). Under `JOSTLE_REQUIRE_SHARED=1`
/// a missing shared clip is a panic, as everywhere.
pub fn shared_clip_or_repo(name: &str, fallback: &str) -> PathBuf {
    let path = shared_dir().join(name);
    if path.is_file() {
        return path;
    }
    absent(
        "fallback",
        &test_name(),
        Some(name),
        &format!("; it ran on mocap/{fallback} instead"),
    );
    repo_clip(fallback)
}

/// `crate::test` of the running test: libtest names each test's thread after the test.
fn test_name() -> String {
    let krate = env!("CARGO_CRATE_NAME");
    match std::thread::current().name() {
        Some(t) if t != "main" => format!("{krate}::{t}"),
        _ => krate.to_string(),
    }
}

/// The shared clips (or one of them) are missing: a panic under `JOSTLE_REQUIRE_SHARED=1`,
/// otherwise one line on stderr, `<tag>: <who> needs <what> (<why>; <how>)<tail>`.
fn absent(tag: &str, who: &str, clip: Option<&str>, tail: &str) {
    let dir = shared_dir();
    let from_env = std::env::var_os("JOSTLE_MOCAP_DIR").is_some_and(|d| !d.is_empty());
    let shown = if from_env {
        dir.display().to_string()
    } else {
        "../shared/mocap".to_string()
    };
    let what = match clip {
        Some(c) => format!("{c} from the real clips in {shown}"),
        None => format!("the real clips in {shown}"),
    };
    let why = if clip.is_some() && dir.is_dir() {
        "the folder lacks it"
    } else {
        "not found"
    };
    let how = if from_env {
        "JOSTLE_MOCAP_DIR points there: set it to the shared mocap folder, or unset it for ../shared/mocap"
    } else {
        "set JOSTLE_MOCAP_DIR=/path/to/mocap, or clone the shared folder beside the repository"
    };
    let msg = format!("{who} needs {what} ({why}; {how})");
    if std::env::var("JOSTLE_REQUIRE_SHARED").is_ok_and(|v| v == "1") {
        panic!("JOSTLE_REQUIRE_SHARED=1 and {msg}");
    }
    // Straight to stderr, past libtest's capture, so the skip shows in a plain `cargo test`.
    let _ = writeln!(std::io::stderr(), "{tag}: {msg}{tail}");
}

/// A copy of the clip with every `line` field zeroed (for comparing re-parsed clips).
pub fn without_lines(clip: &Clip) -> Clip {
    let mut c = clip.clone();
    for j in &mut c.joints {
        j.line = 0;
    }
    c
}

/// A fresh empty directory under the target dir, unique per test name and process.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

mod random;
#[allow(unused_imports)]
pub use random::*;

/// `cmd` run under `strace -f -y` tracing `fsync`, `fdatasync` and the renames; returns
/// the trace (one syscall a line, file descriptors shown with their paths) and whether the
/// command succeeded. Without strace: a `skipped:` line on stderr and `None` (a panic
/// under `JOSTLE_REQUIRE_STRACE=1`, which `.ci/run` sets after installing strace).
pub fn strace_writes(cmd: &Command, test: &str) -> Option<(String, std::process::Output)> {
    // Installed, and allowed to trace (a container may forbid ptrace).
    let usable = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=fsync", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !usable {
        let msg = format!(
            "{test} needs strace (apt-get install strace) allowed to trace (ptrace) to see the fsyncs"
        );
        if std::env::var("JOSTLE_REQUIRE_STRACE").is_ok_and(|v| v == "1") {
            panic!("JOSTLE_REQUIRE_STRACE=1 and {msg}");
        }
        let _ = writeln!(std::io::stderr(), "skipped: {msg}");
        return None;
    }
    let log = temp_dir(&format!("strace-{test}")).join("trace.txt");
    let mut traced = Command::new("strace");
    traced
        .args(["-f", "-y", "-qq", "-e"])
        .arg("trace=fsync,fdatasync,rename,renameat,renameat2")
        .arg("-o")
        .arg(&log)
        .arg("--")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    if let Some(d) = cmd.get_current_dir() {
        traced.current_dir(d);
    }
    let out = traced.output().expect("strace runs");
    let trace = std::fs::read_to_string(&log).expect("strace wrote its log");
    Some((trace, out))
}

/// Asserts from a [`strace_writes`] trace that every file of `outputs` (absolute paths)
/// came into place by a rename from a temporary that was fsynced (an `fsync`/`fdatasync`
/// on a descriptor of that temporary) before the rename, and that its folder was fsynced
/// after it.
pub fn assert_durable_writes(trace: &str, outputs: &[PathBuf]) {
    let lines: Vec<&str> = trace.lines().collect();
    let synced = |line: &str, path: &Path| {
        (line.contains("fsync(") || line.contains("fdatasync("))
            && line.contains(&format!("<{}>", path.display()))
    };
    for out in outputs {
        let quoted = |s: &str| -> Vec<String> {
            s.split('"').skip(1).step_by(2).map(String::from).collect()
        };
        let renamed = lines.iter().enumerate().find_map(|(i, l)| {
            if !l.contains("rename") {
                return None;
            }
            let args = quoted(l);
            (args.len() >= 2 && Path::new(&args[1]) == out.as_path())
                .then(|| (i, PathBuf::from(&args[0])))
        });
        let Some((at, tmp)) = renamed else {
            panic!(
                "{} was not renamed into place; trace:\n{trace}",
                out.display()
            );
        };
        assert!(
            lines[..at].iter().any(|l| synced(l, &tmp)),
            "{} was renamed from {} without an fsync of it before; trace:\n{trace}",
            out.display(),
            tmp.display()
        );
        let dir = out.parent().expect("output in a folder");
        assert!(
            lines[at..].iter().any(|l| synced(l, dir)),
            "the folder of {} was not fsynced after its rename; trace:\n{trace}",
            out.display()
        );
    }
}

/// A free forearm-sized rigid body: 1.3 kg, asymmetric inertia, one capsule 0.26 m long
/// along its y axis, 0.03 m thick.
pub fn forearm_model() -> jostle::skeleton::Model {
    use nalgebra::{Matrix3, Vector3};
    let inertia = Matrix3::from_diagonal(&Vector3::new(0.02, 0.005, 0.018));
    let mut mb = jostle::skeleton::ModelBuilder::new();
    mb.add_body("forearm", None, 1.3, inertia, None);
    let mut model = mb.build();
    model.bodies[0].capsules = vec![jostle::skeleton::Capsule {
        a: Vector3::new(0.0, -0.13, 0.0),
        b: Vector3::new(0.0, 0.13, 0.0),
        radius: 0.03,
    }];
    model
}

/// A stepper with default options at step `h` s.
pub fn stepper(model: &jostle::skeleton::Model, h: f64) -> jostle::dynamics::step::Stepper {
    let opts = jostle::dynamics::step::StepOptions {
        h,
        ..Default::default()
    };
    jostle::dynamics::step::Stepper::new(model, opts).expect("stepper")
}

/// A root pinned to a target that moves steadily with twist (`v`, `w`) (m/s, rad/s) from
/// (`x0`, `q0`), at time `t` s.
pub fn steadily_moving_root(
    x0: nalgebra::Vector3<f64>,
    q0: nalgebra::UnitQuaternion<f64>,
    v: nalgebra::Vector3<f64>,
    w: nalgebra::Vector3<f64>,
    t: f64,
) -> jostle::dynamics::Root {
    jostle::dynamics::Root::Pinned(jostle::dynamics::RootTarget {
        x: x0 + v * t,
        q: nalgebra::UnitQuaternion::from_scaled_axis(w * t) * q0,
        v,
        w,
    })
}
