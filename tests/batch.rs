//! `jostle batch` over the repo's demo clips and over the shared real clips (skipped when
//! ../shared/mocap is absent) plus broken files: outputs, summary rows, exit code, resume,
//! shards + merge, determinism, interruption.

mod common;

use jostle::mocap::{load_bvh, write_bvh};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn jostle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_jostle"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jostle-batch-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("tmp");
    d
}

/// The clips `sources` (linked, never copied) under `good/`, and three broken files.
fn library(root: &Path, sources: &[PathBuf]) -> (Vec<String>, Vec<String>) {
    let good_dir = root.join("good");
    let bad_dir = root.join("broken");
    std::fs::create_dir_all(&good_dir).unwrap();
    std::fs::create_dir_all(&bad_dir).unwrap();
    let mut good = vec![];
    for p in sources {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        std::os::unix::fs::symlink(p.canonicalize().unwrap(), good_dir.join(&name)).unwrap();
        good.push(format!("good/{name}"));
    }
    let demo = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/mocap/demo_walk.bvh"))
        .unwrap();
    std::fs::write(bad_dir.join("truncated.bvh"), &demo[..demo.len() / 2]).unwrap();
    let motion = demo.find("MOTION").unwrap();
    let frame = demo[motion..].find("Frame Time").unwrap() + motion;
    let line_end = demo[frame..].find('\n').unwrap() + frame + 1;
    let mut nan = demo.clone();
    let first_value_end = nan[line_end..].find(' ').unwrap() + line_end;
    nan.replace_range(line_end..first_value_end, "NaN");
    std::fs::write(bad_dir.join("nan.bvh"), nan).unwrap();
    std::fs::write(bad_dir.join("empty.bvh"), "").unwrap();
    let bad = ["broken/empty.bvh", "broken/nan.bvh", "broken/truncated.bvh"]
        .map(String::from)
        .to_vec();
    (good, bad)
}

fn run(args: &[&str], lib: &Path, out: &Path) -> Output {
    jostle()
        .arg("batch")
        .arg(lib)
        .arg("--out")
        .arg(out)
        .args(args)
        .output()
        .expect("runs")
}

fn summary(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("summary")).expect("json")
}

fn rows(s: &Value) -> Vec<Value> {
    s["clips"].as_array().expect("clips").clone()
}

/// The rows without wall times and status (what must agree between runs).
fn comparable(s: &Value) -> Vec<Value> {
    rows(s)
        .into_iter()
        .map(|mut r| {
            r.as_object_mut().unwrap().remove("timing");
            r
        })
        .collect()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn batch_over_the_shared_library() {
    let Some(shared) = common::shared_dir_or_skip() else {
        return;
    };
    let mut names: Vec<PathBuf> = std::fs::read_dir(shared)
        .expect("the shared clip folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bvh"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "expected the 20 shared clips");
    batch_over("lib", &names);
}

/// The same checks on the repo's two demo clips (a fresh clone's batch run; ~1 s).
#[test]
fn batch_over_the_demo_clips() {
    batch_over("demo", &common::repo_clips());
}

/// A library of `sources` plus three broken files, run whole, again (resumed), in two
/// shards merged, with another seed and with changed options.
fn batch_over(tag: &str, sources: &[PathBuf]) {
    let root = tmp(tag);
    let lib = root.join("library");
    let (good, bad) = library(&lib, sources);
    let (n, n_good, n_bad) = (good.len() + bad.len(), good.len(), bad.len());
    let out = root.join("out");

    // 1. Whole run: good clips ok with outputs, broken ones failed with a reason, exit 1.
    let first = run(&["-q", "--seed", "7", "--npz"], &lib, &out);
    let err = String::from_utf8_lossy(&first.stderr);
    assert_eq!(
        first.status.code(),
        Some(1),
        "exit code with failures: {err}"
    );
    assert!(
        err.contains(&format!("{n_bad} of {n} clips failed")),
        "{err}"
    );
    let s1 = summary(&out.join("summary.json"));
    let r1 = rows(&s1);
    let paths: Vec<&str> = r1.iter().map(|r| r["path"].as_str().unwrap()).collect();
    let mut expected: Vec<&str> = good.iter().chain(&bad).map(|s| s.as_str()).collect();
    expected.sort();
    assert_eq!(paths, expected, "one row per clip, sorted");
    for r in &r1 {
        let path = r["path"].as_str().unwrap();
        let dir = out.join(path.trim_end_matches(".bvh"));
        if bad.iter().any(|b| b == path) {
            assert_eq!(r["status"], "failed", "{path}");
            let reason = r["reason"].as_str().unwrap();
            let file = Path::new(path).file_name().unwrap().to_str().unwrap();
            assert!(reason.contains(file), "reason names the file: {reason}");
            assert!(
                !dir.exists(),
                "no outputs for a failed clip: {}",
                dir.display()
            );
        } else {
            assert_eq!(r["status"], "ok", "{path}: {}", r["reason"]);
            assert!(r["reason"].is_null());
            for f in ["v01.glb", "v01.npz", "metrics.json", "job.json"] {
                assert!(dir.join(f).is_file(), "{path}: {f}");
            }
            let glb = std::fs::read(dir.join("v01.glb")).unwrap();
            assert_eq!(&glb[..4], b"glTF");
            let m: Value =
                serde_json::from_slice(&std::fs::read(dir.join("metrics.json")).unwrap()).unwrap();
            assert_eq!(m["clip"], path);
            assert_eq!(m["variations"][0]["balls"].as_array().unwrap().len(), 2);
            assert!(r["mass_kg"].as_f64().unwrap() > 40.0);
            assert!(r["height_m"].as_f64().unwrap() > 1.3);
            assert!(r["peak_deviation_deg"].as_f64().unwrap() >= 0.0);
        }
    }
    let reason_of = |name: &str| {
        r1.iter().find(|r| r["path"] == name).unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(reason_of("broken/nan.bvh").contains(":"), "line number");
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + n);
    assert_eq!(
        csv.lines().filter(|l| l.contains(",failed,")).count(),
        n_bad
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("<polyline") && html.contains("<rect"));
    // (paths may carry <wbr> line-break hints after each folder)
    assert!(html.replace("<wbr>", "").contains("broken/nan.bvh") && !html.contains("<script"));
    assert_eq!(s1["totals"]["ok"], n_good);
    assert_eq!(s1["totals"]["failed"], n_bad);
    assert!(
        files_under(&out)
            .iter()
            .all(|p| !jostle::export::is_temporary(p)),
        "temporary files left"
    );

    // 2. Second run: every good clip skipped (nothing recomputed), JSON lines for scripts.
    let second = run(&["--json-lines", "--seed", "7", "--npz"], &lib, &out);
    assert_eq!(second.status.code(), Some(1));
    let lines: Vec<Value> = String::from_utf8_lossy(&second.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object per line"))
        .collect();
    assert_eq!(lines.len(), n);
    let s2 = summary(&out.join("summary.json"));
    for r in rows(&s2) {
        let want = if bad.iter().any(|b| b == r["path"].as_str().unwrap()) {
            "failed"
        } else {
            "skipped"
        };
        assert_eq!(r["status"], want, "{}", r["path"]);
    }
    assert_eq!(s2["totals"]["skipped"], n_good);
    // Skipped rows carry the same results as the run that made the outputs.
    let strip_status = |v: Vec<Value>| -> Vec<Value> {
        v.into_iter()
            .map(|mut r| {
                r.as_object_mut().unwrap().remove("status");
                r
            })
            .collect()
    };
    assert_eq!(strip_status(comparable(&s1)), strip_status(comparable(&s2)));

    // 3. Shards 0/2 and 1/2 cover the library exactly once and merge to the same summary;
    //    their outputs are byte-identical to the single run's (same seed, other threads).
    let sharded = root.join("sharded");
    let mut seen = BTreeSet::new();
    for i in 0..2 {
        let o = run(
            &[
                "-q",
                "--seed",
                "7",
                "--npz",
                "-j",
                "1",
                "--shard",
                &format!("{i}/2"),
            ],
            &lib,
            &sharded,
        );
        assert!(o.status.code().is_some());
        let s = summary(&sharded.join(format!("summary.shard-{i}-of-2.json")));
        for r in rows(&s) {
            assert!(
                seen.insert(r["path"].as_str().unwrap().to_string()),
                "twice: {}",
                r["path"]
            );
        }
        assert!(!rows(&s).is_empty(), "shard {i} is empty");
    }
    assert_eq!(seen.len(), n, "the shards cover every clip");
    assert!(!sharded.join("summary.json").exists());
    let merged = jostle()
        .args(["batch", "--merge"])
        .arg(&sharded)
        .output()
        .unwrap();
    assert_eq!(
        merged.status.code(),
        Some(1),
        "failed clips make the merge exit 1"
    );
    let sm = summary(&sharded.join("summary.json"));
    assert_eq!(comparable(&s1), comparable(&sm), "merge == one run");
    assert_eq!(sm["options_sha256"], s1["options_sha256"]);
    assert!(sharded.join("report.html").is_file() && sharded.join("summary.csv").is_file());
    for g in &good {
        let a = out.join(g.trim_end_matches(".bvh"));
        let b = sharded.join(g.trim_end_matches(".bvh"));
        for f in ["v01.glb", "v01.npz", "metrics.json"] {
            assert!(
                std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(),
                "{g}/{f} differs between runs with the same seed"
            );
        }
    }

    // 4. Another seed gives other throws (and so other bytes).
    let other = root.join("other");
    let one = &good[0];
    let lib1 = root.join("lib1");
    std::fs::create_dir_all(&lib1).unwrap();
    std::os::unix::fs::symlink(lib.join(one).canonicalize().unwrap(), lib1.join("a.bvh")).unwrap();
    assert!(run(&["-q", "--seed", "8"], &lib1, &other).status.success());
    let m7: Value = serde_json::from_slice(
        &std::fs::read(out.join(one.trim_end_matches(".bvh")).join("metrics.json")).unwrap(),
    )
    .unwrap();
    let m8: Value =
        serde_json::from_slice(&std::fs::read(other.join("a/metrics.json")).unwrap()).unwrap();
    assert_ne!(m7["variations"][0]["balls"], m8["variations"][0]["balls"]);

    // 5. Changed options invalidate the outputs: --variations 2 recomputes that clip.
    let again = run(
        &["-q", "--seed", "8", "--variations", "2", "--bvh"],
        &lib1,
        &other,
    );
    assert!(again.status.success());
    let s = summary(&other.join("summary.json"));
    assert_eq!(rows(&s)[0]["status"], "ok");
    assert_eq!(rows(&s)[0]["variations"], 2);
    for f in ["v01.glb", "v02.glb", "v01.bvh", "v02.bvh"] {
        assert!(other.join("a").join(f).is_file(), "{f}");
    }

    // 6. --mass and --height are options too: each recomputes the clip with that figure.
    for (flag, value, key) in [("--mass", "80", "mass_kg"), ("--height", "1.8", "height_m")] {
        let o = run(
            &[
                "-q",
                "--seed",
                "8",
                "--variations",
                "2",
                "--bvh",
                flag,
                value,
            ],
            &lib1,
            &other,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r = &rows(&summary(&other.join("summary.json")))[0];
        assert_eq!(r["status"], "ok", "{flag} {value} recomputes");
        let want: f64 = value.parse().unwrap();
        assert!(
            (r[key].as_f64().unwrap() - want).abs() < 1e-9,
            "{key}: {}",
            r[key]
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// Linked into `lib`, two shared clips run under one scenario file: each is hit.
fn scenario_for_every_clip(root: &Path, lib: &Path, out: &Path, shared: &Path) {
    for (name, dst) in [
        ("cmu_walk_dme_example.bvh", "sub/cmu.bvh"),
        ("xia_neutral_01_000_walk.bvh", "xia.bvh"),
    ] {
        std::os::unix::fs::symlink(shared.join(name).canonicalize().unwrap(), lib.join(dst))
            .unwrap();
    }
    let scenario = root.join("s.toml");
    std::fs::write(
        &scenario,
        "[[ball]]\nt = 1.2\ntarget = \"right_forearm\"\nspeed = 12\n",
    )
    .unwrap();
    let o = jostle()
        .arg("batch")
        .arg(lib)
        .arg("--out")
        .arg(out)
        .arg("--scenario")
        .arg(&scenario)
        .args(["-q", "--bvh", "--npz"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for d in ["sub/cmu", "xia"] {
        let m: Value =
            serde_json::from_slice(&std::fs::read(out.join(d).join("metrics.json")).unwrap())
                .unwrap();
        let v = &m["variations"][0];
        assert_eq!(v["balls"].as_array().unwrap().len(), 1);
        assert!(
            v["balls"][0]
                .as_str()
                .unwrap()
                .contains("target=right_forearm")
        );
        assert_eq!(v["metrics"]["balls"][0]["hit"], true, "{d}");
        assert!(out.join(d).join("v01.bvh").is_file());
        // the dataset arrays, named in metrics.json (a manifest a training script reads)
        assert_eq!(v["npz"], "v01.npz", "{d}");
        let npz = std::fs::read(out.join(d).join("v01.npz")).unwrap();
        let mut reader = ndarray_npy::NpzReader::new(std::io::Cursor::new(npz)).unwrap();
        let hit: ndarray::Array1<bool> = reader.by_name("ball_hit").unwrap();
        assert!(hit[0], "{d}");
    }
    // summary.json lists every variation's files, relative to the output folder
    let s = summary(&out.join("summary.json"));
    for row in rows(&s) {
        let files = row["files"].as_array().expect("files");
        assert_eq!(files.len(), 1, "{row}");
        for key in ["glb", "bvh", "npz"] {
            let rel = files[0][key].as_str().expect("a path");
            assert!(out.join(rel).is_file(), "{rel}");
        }
    }
}

#[test]
fn scenario_for_every_clip_and_bad_arguments() {
    let shared = common::shared_dir_or_skip_part(
        "scenario on cmu_walk_dme_example.bvh and xia_neutral_01_000_walk.bvh",
    );
    let root = tmp("scenario");
    let lib = root.join("lib");
    std::fs::create_dir_all(lib.join("sub")).unwrap();
    let out = root.join("out");
    if let Some(shared) = shared {
        scenario_for_every_clip(&root, &lib, &out, &shared);
    }
    // Bad arguments are errors that say what to do.
    let bad_shard = jostle()
        .arg("batch")
        .arg(&lib)
        .arg("--out")
        .arg(&out)
        .args(["--shard", "2/2"])
        .output()
        .unwrap();
    assert!(!bad_shard.status.success());
    assert!(String::from_utf8_lossy(&bad_shard.stderr).contains("I/N"));
    let missing = jostle()
        .args(["batch", "/nonexistent/library", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/library"));
    let no_shards = jostle()
        .args(["batch", "--merge"])
        .arg(&lib)
        .output()
        .unwrap();
    assert!(!no_shards.status.success());
    assert!(String::from_utf8_lossy(&no_shards.stderr).contains("--shard"));
    let _ = std::fs::remove_dir_all(&root);
}

/// Settings no clip can run with stop the batch before any clip is read, with one error
/// that names the flags (not one failed row per clip); a `--scale` that makes the figures
/// giants is warned of per clip, and the run goes on.
#[test]
fn settings_no_clip_can_run_stop_the_batch_and_a_giant_is_warned_of() {
    let root = tmp("settings");
    let lib = root.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    for c in common::repo_clips() {
        std::fs::copy(&c, lib.join(c.file_name().unwrap())).unwrap();
    }
    let out = root.join("out");
    let o = run(&["--drift", "improved", "-q"], &lib, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("--root pinned"), "{err}");
    assert_eq!(err.matches("--drift improved").count(), 1, "{err}");
    assert!(!out.join("summary.json").exists());
    // the repo's clips are in centimetres: at 0.3 m per unit the figures are ~50 m tall
    let o = run(&["--scale", "0.3", "-q"], &lib, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    for clip in ["demo_walk.bvh", "demo_wave.bvh"] {
        let line = format!("warning: {clip}: --scale 0.3 m per file unit makes the figure");
        assert_eq!(err.matches(&line).count(), 1, "{clip}: {err}");
    }
    assert!(err.contains("read in cm (--scale 0.01"), "{err}");
    let s = summary(&out.join("summary.json"));
    for r in rows(&s) {
        assert!(
            r["warnings"][0]
                .as_str()
                .is_some_and(|w| w.contains("m tall")),
            "{r}"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// The walk `path` repeated `n` times, each copy moved on by the distance one copy covers
/// (the demo walk is a whole number of strides, so the joins are as smooth as any frame).
fn tiled(path: &Path, n: usize) -> jostle::mocap::Clip {
    let mut c = load_bvh(path).unwrap();
    let (frames, width) = (c.num_frames(), c.num_channels);
    let root = &c.joints[0];
    let z = root.first_column
        + root
            .channels
            .iter()
            .position(|&ch| ch == jostle::mocap::Channel::Zposition)
            .unwrap();
    let first = c.values[z];
    let last = c.values[(frames - 1) * width + z];
    let stride = (last - first) * frames as f64 / (frames - 1) as f64;
    let one = c.values.clone();
    for k in 1..n {
        let mut copy = one.clone();
        for f in 0..frames {
            copy[f * width + z] += k as f64 * stride;
        }
        c.values.extend(copy);
    }
    c
}

#[test]
fn interrupted_batch_leaves_complete_files_and_resumes() {
    // A long clip to interrupt and a short one that finishes first: two real clips (63 s
    // and 1.2 s), or without them the demo walk tiled to 60 s (~3 s of batch work here)
    // and the 2-s demo wave (~0.15 s).
    let shared = common::shared_dir_or_fallback("the demo walk tiled to 60 s and demo_wave.bvh");
    let root = tmp("kill");
    let lib = root.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let (long, short) = match shared {
        Some(shared) => {
            let pair = (
                "bandai1_dance_short_normal_001_LONG.bvh",
                "xia_angry_13_000_run.bvh",
            );
            for name in [pair.0, pair.1] {
                std::os::unix::fs::symlink(
                    shared.join(name).canonicalize().unwrap(),
                    lib.join(name),
                )
                .unwrap();
            }
            pair
        }
        None => {
            write_bvh(
                &tiled(&common::repo_clip("demo_walk.bvh"), 15),
                &lib.join("long_walk.bvh"),
            )
            .unwrap();
            std::os::unix::fs::symlink(
                common::repo_clip("demo_wave.bvh"),
                lib.join("demo_wave.bvh"),
            )
            .unwrap();
            ("long_walk.bvh", "demo_wave.bvh")
        }
    };
    let (long_dir, short_dir) = (
        long.trim_end_matches(".bvh"),
        short.trim_end_matches(".bvh"),
    );
    let out = root.join("out");
    // A stale temporary from a run killed with SIGKILL is cleaned at the next start.
    std::fs::create_dir_all(out.join("x")).unwrap();
    std::fs::write(out.join("x/.v01.glb.tmp-99999"), b"partial").unwrap();
    let mut child = jostle()
        .arg("batch")
        .arg(&lib)
        .arg("--out")
        .arg(&out)
        .args(["-q", "-j", "2"])
        .spawn()
        .unwrap();
    // Wait until the short clip is done, then interrupt while the long one is running.
    let marker = out.join(short_dir).join("job.json");
    let t0 = std::time::Instant::now();
    while !marker.exists() && t0.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(marker.exists(), "short clip never finished");
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "exit code after SIGTERM");
    let files = files_under(&out);
    assert!(
        files.iter().all(|p| !jostle::export::is_temporary(p)),
        "temporaries left: {files:?}"
    );
    assert!(
        !out.join("summary.json").exists(),
        "no summary of an interrupted run"
    );
    assert!(
        !out.join(long_dir).join("job.json").exists(),
        "the long clip was not finished"
    );
    // Resume: the finished clip is skipped, the other one done.
    let o = jostle()
        .arg("batch")
        .arg(&lib)
        .arg("--out")
        .arg(&out)
        .args(["--json-lines"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out.join("summary.json"));
    let status_of =
        |p: &str| rows(&s).into_iter().find(|r| r["path"] == p).unwrap()["status"].clone();
    assert_eq!(status_of(short), "skipped");
    assert_eq!(status_of(long), "ok");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn batch_fsyncs_each_output_before_renaming_it() {
    let out = tmp("durable");
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("mocap");
    let mut cmd = jostle();
    cmd.arg("batch")
        .arg(&lib)
        .arg("--out")
        .arg(&out)
        .args(["--bvh", "-q"]);
    let Some((trace, o)) = common::strace_writes(&cmd, "batch_fsyncs_each_output") else {
        return;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let outputs = files_under(&out);
    assert!(outputs.len() >= 2 * 4 + 3, "{outputs:?}");
    common::assert_durable_writes(&trace, &outputs);
    std::fs::remove_dir_all(&out).ok();
}

/// The outputs of a batch folder by path relative to it, without `job.json` (wall times)
/// and the run's summary files: what must equal a clean run byte for byte.
fn clip_outputs(out: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files_under(out)
        .into_iter()
        .filter(|p| p.components().count() > out.components().count() + 1)
        .filter(|p| !p.ends_with("job.json"))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p.strip_prefix(out).unwrap().to_path_buf(), bytes)
        })
        .collect()
}

#[test]
fn resume_redoes_clips_whose_outputs_were_truncated_or_altered() {
    let root = tmp("damaged");
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("mocap");
    let (clean, out) = (root.join("clean"), root.join("out"));
    for o in [&clean, &out] {
        let r = run(&["--bvh", "-q"], &lib, o);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let job: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("demo_walk/job.json")).unwrap())
            .unwrap();
    let glb = job["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "v01.glb")
        .expect("job.json records v01.glb");
    let size = glb["bytes"].as_u64().unwrap();
    assert_eq!(
        size,
        std::fs::metadata(out.join("demo_walk/v01.glb"))
            .unwrap()
            .len()
    );
    assert_eq!(glb["sha256"].as_str().unwrap().len(), 64);
    // Damage: a truncated glTF in one clip, a flipped byte (same size) in the other's BVH.
    let truncated = out.join("demo_walk/v01.glb");
    let half = std::fs::read(&truncated).unwrap()[..size as usize / 2].to_vec();
    std::fs::write(&truncated, &half).unwrap();
    let altered = out.join("demo_wave/v01.bvh");
    let mut bytes = std::fs::read(&altered).unwrap();
    let i = bytes.len() / 2;
    bytes[i] ^= 0x01;
    std::fs::write(&altered, &bytes).unwrap();

    let r = run(&["--bvh", "--json-lines"], &lib, &out);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "redo demo_walk/v01.glb: {} bytes, expected {size}",
            half.len()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("redo demo_wave/v01.bvh: ") && stderr.contains("SHA-256 differs"),
        "{stderr}"
    );
    let statuses: Vec<Value> = String::from_utf8_lossy(&r.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["status"].clone())
        .collect();
    assert_eq!(statuses, ["ok", "ok"], "both clips redone");
    assert_eq!(clip_outputs(&out), clip_outputs(&clean));
    // A third run finds everything intact.
    let r = run(&["--bvh", "--json-lines"], &lib, &out);
    assert!(!String::from_utf8_lossy(&r.stderr).contains("redo "));
    assert_eq!(
        String::from_utf8_lossy(&r.stdout)
            .matches("\"skipped\"")
            .count(),
        2
    );
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn check_passes_a_clean_run_and_finds_a_flipped_byte() {
    let out = tmp("check");
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("mocap");
    let r = run(&["--bvh", "-q"], &lib, &out);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let check_dir = |dir: &Path| {
        jostle()
            .args(["batch", "--check"])
            .arg(dir)
            .output()
            .unwrap()
    };
    let check = || check_dir(&out);
    let ok = check();
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("ok: 2 clips, 6 files"), "{stdout}");
    let glb = out.join("demo_walk/v01.glb");
    let mut bytes = std::fs::read(&glb).unwrap();
    bytes[100] ^= 0x80;
    std::fs::write(&glb, &bytes).unwrap();
    let bad = check();
    let stdout = String::from_utf8_lossy(&bad.stdout);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.starts_with("demo_walk/v01.glb: ") && stdout.contains("SHA-256 differs"),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&bad.stderr).contains("1 bad file(s)"));
    // Not an output folder: an error that says what to give.
    let none = check_dir(&lib);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no finished clips"));
    std::fs::remove_dir_all(&out).ok();
}

/// Names of the entries of a folder (hidden ones too), sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Bytes a folder's files take on a tmpfs (whole 4 KiB pages).
fn pages_of(dir: &Path) -> u64 {
    files_under(dir)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len().div_ceil(4096) * 4096)
        .sum()
}

/// Whether this process may mount a tmpfs in a user + mount namespace of its own
/// (`unshare -rm`); `Err` says why not.
fn tmpfs_possible(probe_dir: &Path) -> Result<(), String> {
    let o = Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs \"$0\""])
        .arg(probe_dir)
        .output()
        .map_err(|e| format!("unshare: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`unshare -rm` + `mount -t tmpfs` failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// The out-of-space run: six 2-s walks with BVH on a volume with room for 1.5 clips. The
/// first clip fits, the next three fail for lack of space (3 in a row: the run stops), the
/// last two are not run. On a real 1.5-clip tmpfs (mounted in a user namespace of its
/// own) where possible, else with the staged writes limited to as many bytes
/// (`JOSTLE_TEST_DISK_BYTES`, the batch's test hook), saying so on stderr. Then, with space,
/// the resumed run equals a clean run byte for byte.
#[test]
fn out_of_space_stops_the_run_leaves_no_partial_clip_and_resumes_to_a_clean_result() {
    let root = tmp("nospace");
    let lib = root.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let names: Vec<String> = (1..=6).map(|i| format!("walk{i}")).collect();
    for n in &names {
        std::os::unix::fs::symlink(
            common::repo_clip("demo_walk.bvh"),
            lib.join(format!("{n}.bvh")),
        )
        .unwrap();
    }
    let args = ["--bvh", "-q", "-j", "1"];
    let clean = root.join("clean");
    let r = run(&args, &lib, &clean);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // -j 1 goes by size, then by path: walk1 first.
    let one_clip = pages_of(&clean.join("walk1"));
    let room = one_clip + one_clip / 2;
    let out = root.join("out");
    let mnt = root.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let (o, volume) = match tmpfs_possible(&mnt) {
        Ok(()) => {
            // The tmpfs lives as long as the namespace: the run's output folder is
            // copied out (hidden entries too) for the checks.
            let script = r#"mount -t tmpfs -o size="$1" tmpfs "$2" || exit 99
"$3" batch "$4" --out "$2/out" --bvh -q -j 1; rc=$?
cp -a "$2/out" "$5" || exit 98
exit $rc"#;
            let o = Command::new("unshare")
                .args(["-rm", "sh", "-c", script, "sh"])
                .arg(room.to_string())
                .arg(&mnt)
                .arg(env!("CARGO_BIN_EXE_jostle"))
                .arg(&lib)
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                !matches!(o.status.code(), Some(98 | 99)),
                "tmpfs set-up failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            (o, mnt.clone())
        }
        Err(why) => {
            eprintln!(
                "fallback: batch::out_of_space_stops_the_run_leaves_no_partial_clip_and_resumes_to_a_clean_result \
                 needs a small tmpfs ({why}); it ran with the batch's writes limited to {room} bytes (JOSTLE_TEST_DISK_BYTES) instead"
            );
            let o = jostle()
                .arg("batch")
                .arg(&lib)
                .arg("--out")
                .arg(&out)
                .args(args)
                .env("JOSTLE_TEST_DISK_BYTES", room.to_string())
                .output()
                .unwrap();
            (o, jostle::batch::space::volume_of(&out).0)
        }
    };
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("out of space: 3 clips in a row failed with \"no space left on device\""),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("(the volume mounted at {}", volume.display())),
        "names the full volume: {stderr}"
    );
    assert!(
        stderr.contains("(2 not run). The 5 clips left to do need roughly "),
        "{stderr}"
    );
    // Nothing but the finished clip and the summary: no partial clip folder, no staging
    // folder, no temporary.
    assert_eq!(
        entries(&out),
        ["report.html", "summary.csv", "summary.json", "walk1"],
        "{stderr}"
    );
    assert_eq!(
        clip_outputs(&out),
        clip_outputs(&clean)
            .into_iter()
            .filter(|(p, _)| p.starts_with("walk1"))
            .collect::<Vec<_>>()
    );
    let s = summary(&out.join("summary.json"));
    let status: Vec<(String, String)> = rows(&s)
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = names
        .iter()
        .zip(["ok", "failed", "failed", "failed", "not_run", "not_run"])
        .map(|(n, st)| (format!("{n}.bvh"), st.to_string()))
        .collect();
    assert_eq!(status, expected);
    for r in rows(&s).iter().filter(|r| r["status"] == "failed") {
        let reason = r["reason"].as_str().unwrap();
        assert!(reason.contains("No space left on device"), "{reason}");
    }
    assert_eq!(s["totals"]["not_run"], 2);
    assert!(
        s["stopped"].as_str().unwrap().starts_with("out of space: "),
        "{}",
        s["stopped"]
    );
    // Space again: the resumed run does the five others and equals a clean run.
    let r = run(&["--bvh", "--json-lines", "-j", "2"], &lib, &out);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let s = summary(&out.join("summary.json"));
    assert_eq!(s["totals"]["skipped"], 1);
    assert_eq!(s["totals"]["ok"], 5);
    assert_eq!(clip_outputs(&out), clip_outputs(&clean));
    std::fs::remove_dir_all(&root).ok();
}

/// A clip that fails while its new outputs are being written (here: out of space after
/// the first file, by the test hook `JOSTLE_TEST_DISK_BYTES`) leaves its complete earlier
/// result exactly as it was; a staging folder left by a killed run is deleted at the next
/// start and never counts as a finished clip.
#[test]
fn a_clip_failing_midway_leaves_the_previous_result_untouched() {
    let root = tmp("midway");
    let lib = root.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::os::unix::fs::symlink(
        common::repo_clip("demo_walk.bvh"),
        lib.join("demo_walk.bvh"),
    )
    .unwrap();
    let out = root.join("out");
    let r = run(&["--bvh", "-q"], &lib, &out);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let before: Vec<(PathBuf, Vec<u8>)> = files_under(&out)
        .into_iter()
        .filter(|p| p.components().count() > out.components().count() + 1)
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    assert_eq!(before.len(), 4, "v01.glb, v01.bvh, metrics.json, job.json");
    // A killed run's staging folder (a dead writer), with a job.json already in it.
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = out.join(format!(
        ".demo_walk.staging.tmp-{}-{dead}",
        jostle::export::host_name()
    ));
    std::fs::create_dir_all(&stale).unwrap();
    for (p, bytes) in &before {
        if p.starts_with(out.join("demo_walk")) {
            std::fs::write(stale.join(p.file_name().unwrap()), bytes).unwrap();
        }
    }
    let check = || {
        jostle()
            .args(["batch", "--check"])
            .arg(&out)
            .output()
            .unwrap()
    };
    let c = check();
    assert!(c.status.success());
    assert!(
        String::from_utf8_lossy(&c.stdout).starts_with("ok: 1 clips,"),
        "a staging folder is not a finished clip: {}",
        String::from_utf8_lossy(&c.stdout)
    );
    // Room for the first file of the redone clip (its .glb) and not for the next.
    let glb = std::fs::metadata(out.join("demo_walk/v01.glb"))
        .unwrap()
        .len();
    let bvh = std::fs::metadata(out.join("demo_walk/v01.bvh"))
        .unwrap()
        .len();
    let o = jostle()
        .arg("batch")
        .arg(&lib)
        .arg("--out")
        .arg(&out)
        .args(["--bvh", "--seed", "2", "-j", "1", "-q"])
        .env("JOSTLE_TEST_DISK_BYTES", (glb + bvh / 2).to_string())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 of 1 clips failed") && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert!(!stale.exists(), "the stale staging folder was deleted");
    let after: Vec<(PathBuf, Vec<u8>)> = files_under(&out)
        .into_iter()
        .filter(|p| p.components().count() > out.components().count() + 1)
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    assert!(after == before, "the earlier results changed");
    assert_eq!(
        entries(&out),
        ["demo_walk", "report.html", "summary.csv", "summary.json"]
    );
    assert!(check().status.success());
    std::fs::remove_dir_all(&root).ok();
}

/// A knock-down is counted as such in the summary (`falls`), the CSV and the report, and
/// not as "not recovered": a 5 kg ball at 15 m/s to the demo walk's chest.
#[test]
fn a_knocked_down_variation_is_counted_as_a_fall() {
    let (clip, row, html) = demo_walk_scenario_batch(
        "falls",
        "[[ball]]\nt = 1.2\ntarget = \"chest\"\nspeed = 15.0\nmass = 5.0\n",
    );
    assert_eq!(clip["falls"], 1, "{clip}");
    assert_eq!(clip["not_recovered"], 0, "{clip}");
    assert_eq!(row("falls"), "1");
    assert!(html.contains("1 knocked down"), "the report says so");
}

/// A variation still deviating when its clip ends soon after the hit is counted apart
/// ("clip ended first": too soon to tell), not as "not recovered": a forearm hit 0.2 s
/// before the demo walk's end.
#[test]
fn a_hit_just_before_the_clips_end_is_not_counted_as_a_failed_recovery() {
    let (clip, row, html) = demo_walk_scenario_batch(
        "clip-ended",
        "[[ball]]\nt = 3.8\ntarget = \"right_forearm\"\nspeed = 12.0\n",
    );
    assert_eq!(clip["clip_ended"], 1, "{clip}");
    assert_eq!(clip["not_recovered"], 0, "{clip}");
    assert_eq!(clip["falls"], 0, "{clip}");
    assert_eq!(clip["off_target"], 0, "the forearm is met: {clip}");
    assert_eq!(row("clip_ended"), "1");
    assert_eq!(row("not_recovered"), "0");
    assert!(
        html.contains("0 not recovered by the end of their clip")
            && html.contains("1 whose clip ended sooner than 2 s after the hit"),
        "the report says so"
    );
}

/// A ball aimed at a body it cannot reach first (the left forearm, thrown from the
/// figure's right side: the spine is in the way) is counted as off target in the summary,
/// the CSV and the report, so a dataset labelled by target can tell.
#[test]
fn a_ball_that_strikes_another_body_than_its_target_is_counted_off_target() {
    let (clip, row, html) = demo_walk_scenario_batch(
        "off-target",
        "[[ball]]\nt = 1.2\ntarget = \"left_forearm\"\nfrom = [-3.0, 1.0, 0.0]\n",
    );
    assert_eq!(clip["hits"], 1, "{clip}");
    assert_eq!(clip["off_target"], 1, "{clip}");
    assert_eq!(row("off_target"), "1");
    assert!(
        html.contains(">off target</th>") && html.contains("<td>1 / 1</td><td>1</td>"),
        "the report's clip table says so"
    );
}

/// `jostle batch -q --scenario S` over a library holding the demo walk alone, S being
/// `scenario_toml`: the clip's summary.json entry, its summary.csv row by column name, and
/// report.html.
fn demo_walk_scenario_batch(
    tag: &str,
    scenario_toml: &str,
) -> (serde_json::Value, impl Fn(&str) -> String, String) {
    let root = tmp(tag);
    let lib = root.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::copy(common::repo_clip("demo_walk.bvh"), lib.join("walk.bvh")).unwrap();
    let scenario = root.join("scenario.toml");
    std::fs::write(&scenario, scenario_toml).unwrap();
    let out = root.join("out");
    let done = run(
        &["-q", "--scenario", scenario.to_str().unwrap()],
        &lib,
        &out,
    );
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let clip = summary["clips"][0].clone();
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = csv
        .lines()
        .map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
    let (header, values) = (lines.next().unwrap(), lines.next().unwrap());
    let row = move |column: &str| {
        let i = header
            .iter()
            .position(|h| h == column)
            .unwrap_or_else(|| panic!("no `{column}` column in {header:?}"));
        values[i].clone()
    };
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let _ = std::fs::remove_dir_all(&root);
    (clip, row, html)
}
