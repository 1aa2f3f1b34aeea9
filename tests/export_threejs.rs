//! The exported .glb as viewers see it: three.js's GLTFLoader in headless Chromium
//! (tests/js/threejs_check.mjs: SkinnedMeshes on one Skeleton with a bone per clip joint,
//! a SkeletonHelper, both animations playing) and the Khronos glTF validator (tests/js/validate.js), on the
//! repo's demo walk and a real CMU clip from ../shared/mocap (the repo's demo wave instead
//! when the shared clips are absent, saying so; a failure under `JOSTLE_REQUIRE_SHARED=1`).
//!
//! Needs node, `tests/js/node_modules` (`cd tests/js && npm ci`) and, for three.js, Chromium
//! (`/usr/bin/chromium`, or `$JOSTLE_CHROMIUM`). Without them the tests print "skipped: …"
//! and pass, unless `JOSTLE_REQUIRE_JS=1` (CI sets it), where they fail.

mod common;

use jostle::export::gltf::{GltfLayout, glb_bytes_with_layout};
use jostle::export::write_atomic;
use jostle::sim::{BallTrack, Trajectory};
use jostle::{Character, CharacterOptions};
use nalgebra::Vector3;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The repo's demo walk and a real CMU walk, or the repo's demo wave (another rotation order
/// and frame rate) without the shared clips.
fn clips() -> [PathBuf; 2] {
    [
        common::repo_clip("demo_walk.bvh"),
        common::shared_clip_or_repo("cmu_walk_bvhmatlab.bvh", "demo_wave.bvh"),
    ]
}

/// True when the JS tooling is there. Otherwise panics under `JOSTLE_REQUIRE_JS=1`, or prints
/// why the test is skipped and returns false.
fn js_tooling(test: &str, modules: &[&str], browser: bool) -> bool {
    let mut missing = vec![];
    let node_ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node_ok {
        missing.push("node (not on PATH)".to_string());
    }
    for m in modules {
        let p = Path::new(ROOT).join("tests/js/node_modules").join(m);
        if !p.join("package.json").is_file() {
            missing.push(format!("{} (run `cd tests/js && npm ci`)", p.display()));
        }
    }
    if browser {
        let chromium = chromium_path();
        if !chromium.is_file() {
            missing.push(format!(
                "{} (apt-get install chromium, or set JOSTLE_CHROMIUM)",
                chromium.display()
            ));
        }
    }
    if missing.is_empty() {
        return true;
    }
    let msg = format!("{test}: missing {}", missing.join(", "));
    if std::env::var("JOSTLE_REQUIRE_JS").is_ok_and(|v| v == "1") {
        panic!("JOSTLE_REQUIRE_JS=1 and {msg}");
    }
    // Straight to stderr, past libtest's capture, so the skip shows in a plain `cargo test`.
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {msg} (set JOSTLE_REQUIRE_JS=1 to make this a failure)"
    );
    false
}

fn chromium_path() -> PathBuf {
    std::env::var_os("JOSTLE_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// A fresh directory under the system temp dir; removed on drop unless the test failed
/// (then it is kept and named, for a look at the files).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!("jostle-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for inspection", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// What the test knows about one exported file.
struct Exported {
    path: PathBuf,
    joints: usize,
    joint_names: Vec<String>,
    balls: usize,
    n_frames: usize,
    frame_time: f64,
}

/// Export a clip's reference motion plus one ball (flying in the second half) to `dir`.
fn export(clip: &Path, dir: &Path, layout: GltfLayout) -> Exported {
    let c = Character::load(clip, &CharacterOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", clip.display()));
    let n = c.clip.num_frames() - c.model.figure.first_frame;
    let mut traj = Trajectory::from_reference(&c.model, &c.reference, c.clip.frame_time, n);
    traj.balls.push(BallTrack {
        radius: 0.095,
        positions: (0..n)
            .map(|f| (f >= n / 2).then(|| Vector3::new(-1.0 + f as f64 / n as f64, 1.2, 0.5)))
            .collect(),
    });
    let (bytes, summary) = glb_bytes_with_layout(
        &c.model,
        &c.clip,
        &traj,
        &serde_json::json!({"tool": "jostle", "scenario": "export_threejs test"}),
        layout,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", clip.display()));
    let stem = clip.file_stem().unwrap().to_string_lossy();
    let path = dir.join(format!("{stem}_{}.glb", layout.name()));
    write_atomic(&path, &bytes).unwrap();
    eprintln!("{}: {summary:?}", path.display());
    Exported {
        path,
        joints: c.clip.joints.len(),
        joint_names: c.clip.joints.iter().map(|j| j.name.clone()).collect(),
        balls: traj.balls.len(),
        n_frames: n,
        frame_time: c.clip.frame_time,
    }
}

fn node(script: &str, args: &[&Path]) -> std::process::Output {
    Command::new("node")
        .arg(script)
        .args(args)
        .current_dir(ROOT)
        .output()
        .unwrap_or_else(|e| panic!("running node {script}: {e}"))
}

#[test]
fn threejs_loads_and_plays_the_exported_glb() {
    if !js_tooling(
        "threejs_loads_and_plays_the_exported_glb",
        &["three", "playwright-core"],
        true,
    ) {
        return;
    }
    let dir = TempDir::new("threejs");
    for path in clips() {
        let clip = path.display();
        let e = export(&path, &dir.0, GltfLayout::Skinned);
        let t0 = std::time::Instant::now();
        let out = node("tests/js/threejs_check.mjs", &[&e.path]);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success(),
            "threejs_check failed on {} ({}):\nstdout: {stdout}\nstderr: {stderr}",
            e.path.display(),
            out.status
        );
        let line = stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        eprintln!("{clip} ({:.1} s): {line}", t0.elapsed().as_secs_f64());
        let r: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|err| panic!("not JSON ({err}): {line}\nstderr: {stderr}"));

        // joints, the skinned figure, the balls
        let expected_nodes = e.joints + 1 + e.balls;
        assert_eq!(r["nodes"], expected_nodes, "{clip}: glTF nodes");
        assert_eq!(
            r["scene_nodes"], expected_nodes,
            "{clip}: three.js node objects"
        );
        // one SkinnedMesh per colour (centre, left, right) sharing one Skeleton
        let skinned = r["skinned_meshes"].as_u64().expect("skinned_meshes") as usize;
        assert!(
            (1..=3).contains(&skinned),
            "{clip}: {skinned} SkinnedMeshes"
        );
        assert_eq!(r["meshes"], skinned + e.balls, "{clip}: three.js meshes");
        assert_eq!(r["skeletons"], 1, "{clip}: one skeleton");
        assert_eq!(r["bones"], e.joints, "{clip}: a bone per clip joint");
        assert_eq!(
            r["bone_names"],
            serde_json::json!(e.joint_names),
            "{clip}: bones in the clip's hierarchy order"
        );
        assert_eq!(
            r["skeleton_helper_bones"], e.joints,
            "{clip}: SkeletonHelper"
        );
        assert_eq!(
            r["animations"],
            serde_json::json!(["perturbed", "original"]),
            "{clip}"
        );
        let duration = r["duration_s"].as_f64().expect("duration_s");
        let expected = (e.n_frames - 1) as f64 * e.frame_time;
        assert!(
            (duration - expected).abs() < 1e-3,
            "{clip}: duration {duration} s, expected {expected} s"
        );
        assert_eq!(r["played"], true, "{clip}: {line}");
        assert_eq!(r["bone_moved"], true, "{clip}: {line}");
        assert_eq!(r["skinned_bones_moved"], true, "{clip}: {line}");
        assert_eq!(r["skinned_vertices_moved"], true, "{clip}: {line}");
        assert_eq!(r["original_played"], true, "{clip}: {line}");
        assert_eq!(r["original_bones_moved"], true, "{clip}: {line}");
        assert_eq!(
            r["unbound_tracks"],
            serde_json::json!([]),
            "{clip}: tracks three could not bind"
        );
    }
}

#[test]
fn khronos_validator_finds_no_errors_or_warnings() {
    if !js_tooling(
        "khronos_validator_finds_no_errors_or_warnings",
        &["gltf-validator"],
        false,
    ) {
        return;
    }
    let dir = TempDir::new("validate");
    // both layouts: the default skinned one and the plain node tree of --gltf-layout nodes
    let files: Vec<PathBuf> = clips()
        .iter()
        .flat_map(|c| {
            [GltfLayout::Skinned, GltfLayout::Nodes].map(|layout| export(c, &dir.0, layout).path)
        })
        .collect();
    let args: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let out = node("tests/js/validate.js", &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "validator: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert_eq!(reports.len(), files.len(), "one report per file: {stdout}");
    for r in reports {
        assert_eq!(r["errors"], 0, "{r}");
        assert_eq!(r["warnings"], 0, "{r}");
    }
}
