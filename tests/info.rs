//! `jostle info` describes any valid BVH file, even one no character can be built from
//! (one frame, one joint): what it can, with a note on what cannot be built, exit 0. The
//! simulating commands keep rejecting such clips with the same clear message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn jostle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jostle"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("info-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The demo walk cut to its first frame.
fn one_frame_clip() -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/mocap/demo_walk.bvh"))
        .unwrap();
    let (head, motion) = text.split_once("MOTION").unwrap();
    let first_frame = motion
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with(|c: char| c == '-' || c.is_ascii_digit())
        })
        .unwrap();
    format!("{head}MOTION\nFrames: 1\nFrame Time: 0.0083333\n{first_frame}\n")
}

const ROOT_ONLY: &str = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n}\nMOTION\nFrames: 3\nFrame Time: 0.0333333\n0 90 0 0 0 0\n1 90 0 0 0 10\n2 90 0 0 0 20\n";

fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn info_describes_a_one_frame_clip() {
    let d = dir("one-frame");
    let p = write(&d, "pose.bvh", &one_frame_clip());
    let p = p.to_str().unwrap();
    let s = json_of(&jostle(&["info", p, "--json"]));
    assert_eq!(s["frames"], 1);
    assert_eq!(s["joints"], 31);
    assert_eq!(s["channels"], 96);
    assert_eq!(s["duration_s"], 0.0);
    // one frame has a size: the units are measured (the demo clip is in CMU units)
    assert!(s["unit"].is_string(), "{s}");
    let h = s["height_m"].as_f64().unwrap();
    assert!((1.3..2.1).contains(&h), "height {h}");
    assert!(s["model"].is_null());
    assert_eq!(s["bodies"], 19, "the model builds from one frame");
    let notes = s["warnings"].to_string();
    assert!(notes.contains("at least 2 frames"), "{notes}");

    let text = jostle(&["info", p]);
    assert!(text.status.success());
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("frames       1") && stdout.contains("no reference motion to simulate")
    );

    // The commands that simulate still refuse it, with the same message.
    let out = jostle(&["simulate", p]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("at least 2 frames") && err.contains("pose.bvh"),
        "{err}"
    );
}

#[test]
fn info_describes_a_root_only_skeleton() {
    let d = dir("root-only");
    let p = write(&d, "root.bvh", ROOT_ONLY);
    let p = p.to_str().unwrap();
    let s = json_of(&jostle(&["info", p, "--json"]));
    assert_eq!(s["frames"], 3);
    assert_eq!(s["joints"], 1);
    assert_eq!(s["channels"], 6);
    assert!((s["duration_s"].as_f64().unwrap() - 2.0 * 0.0333333).abs() < 1e-12);
    assert!(s["unit"].is_null() && s["height_m"].is_null(), "{s}");
    let notes = s["warnings"].to_string();
    assert!(
        notes.contains("zero height") && notes.contains("no physical model"),
        "{notes}"
    );
    // --model-json cannot be written: an error naming the file, and no file.
    let m = d.join("model.json");
    let out = jostle(&["info", p, "--model-json", m.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("root.bvh"));
    assert!(!m.exists());

    let out = jostle(&["perturb", p, "--out", d.join("x.glb").to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("zero height") && err.contains("root.bvh"),
        "{err}"
    );
    assert!(!d.join("x.glb").exists());
}

#[test]
fn info_still_fails_on_a_malformed_file() {
    let d = dir("malformed");
    let p = write(&d, "bad.bvh", "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n}\n");
    let out = jostle(&["info", p.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.bvh:4") && err.contains("OFFSET"), "{err}");
}
