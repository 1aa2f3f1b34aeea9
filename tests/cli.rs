//! The `jostle` binary: the README's main job, the JSON keys scripts depend on, and errors
//! that name the problem without leaving partial output files.

mod common;

use std::process::Command;

fn jostle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_jostle"))
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("jostle-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("tmp");
    d
}

#[test]
fn perturb_writes_glb_bvh_and_metrics_with_the_documented_keys() {
    let d = tmp("perturb");
    let out = jostle()
        .args([
            "perturb",
            "mocap/demo_walk.bvh",
            "--ball",
            "t=1.5,target=right_forearm,speed=12",
        ])
        .arg("--out")
        .arg(d.join("o/x.glb"))
        .arg("--bvh")
        .arg(d.join("o/x.bvh"))
        .arg("--metrics")
        .arg(d.join("o/m.json"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("o/m.json")).expect("metrics"))
            .expect("json");
    for key in [
        "balls",
        "peak_deviation_deg",
        "peak_joint",
        "peak_time_s",
        "recovery_time_s",
        "recovery",
        "after_last_hit_s",
        "steps",
        "step_s",
        "timing",
    ] {
        assert!(m.get(key).is_some(), "metrics lack `{key}`");
    }
    for key in [
        "inverse_s",
        "simulate_s",
        "export_s",
        "us_per_step",
        "feedforward_us_per_step",
    ] {
        assert!(m["timing"].get(key).is_some(), "timing lacks `{key}`");
    }
    let b = &m["balls"][0];
    for key in ["hit", "first_contact_s", "body", "impulse_ns"] {
        assert!(b.get(key).is_some(), "ball lacks `{key}`");
    }
    assert_eq!(b["hit"], true);
    assert!(m["peak_deviation_deg"].as_f64().expect("number") > 5.0);
    // a forearm hit at 1.5 s of the 3.99 s walk: 2.5 s left, back within 2° well before
    assert_eq!(m["recovery"], "recovered");
    let left = m["after_last_hit_s"].as_f64().expect("number");
    assert!((2.3..2.6).contains(&left), "{left}");
    assert!(m["recovery_time_s"].as_f64().expect("number") < left);
    let glb = std::fs::read(d.join("o/x.glb")).expect("glb");
    assert_eq!(&glb[0..4], b"glTF");
    let back = jostle::mocap::load_bvh(&d.join("o/x.bvh")).expect("exported BVH parses");
    assert_eq!(back.joints.len(), 31);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn simulate_and_inverse_json_keys() {
    let out = jostle()
        .args(["simulate", "mocap/demo_wave.bvh", "--json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    for key in [
        "steps",
        "step_s",
        "rms_error_deg",
        "max_error_deg",
        "reference_vs_mocap_rms_deg",
        "max_constraint_error_mm",
    ] {
        assert!(v.get(key).is_some(), "simulate lacks `{key}`");
    }
    assert!(v["timing"]["us_per_step"].as_f64().is_some());
    assert!(
        v["timing"]["feedforward_us_per_step"]
            .as_f64()
            .expect("number")
            > 0.0
    );
    assert!(v["rms_error_deg"].as_f64().expect("number") < 1.0);
    let d = tmp("inverse");
    let out = jostle()
        .args(["inverse", "mocap/demo_wave.bvh", "--json", "--out"])
        .arg(d.join("t.csv"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v["timing"]["us_per_sample"].as_f64().is_some());
    let csv = std::fs::read_to_string(d.join("t.csv")).expect("csv");
    assert!(
        csv.starts_with("time_s,")
            && csv
                .lines()
                .next()
                .expect("header")
                .contains("RightForeArm.hinge")
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn errors_name_the_problem_and_leave_no_output() {
    let d = tmp("errors");
    let bad = d.join("bad.bvh");
    std::fs::write(&bad, "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n}\nMOTION\nFrames: 2\nFrame Time: 0.01\n1 2 3\n1 NaN 3\n").expect("write");
    let out = jostle()
        .args(["perturb"])
        .arg(&bad)
        .arg("--out")
        .arg(d.join("x.glb"))
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.bvh:11") && err.contains("NaN"), "{err}");
    assert!(!d.join("x.glb").exists());
    // `jostle perturb mocap/demo_walk.bvh --ball B… --out OUT` from the repository
    let perturb_walk = |balls: &[&str], out: &std::path::Path| {
        let mut cmd = jostle();
        cmd.args(["perturb", "mocap/demo_walk.bvh"]);
        for b in balls {
            cmd.args(["--ball", b]);
        }
        cmd.arg("--out")
            .arg(out)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("runs")
    };
    let out = perturb_walk(&["t=1,target=tail,speed=10"], &d.join("y.glb"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tail") && err.contains("right_forearm"),
        "{err}"
    );
    assert!(!d.join("y.glb").exists());
    // a ball after the clip's end (the demo walk is 3.99 s long) would only "miss"
    let out = perturb_walk(
        &["t=1.5,target=chest", "t=5,target=chest"],
        &d.join("z.glb"),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("demo_walk.bvh")
            && err.contains("ball 2")
            && err.contains("after the clip's end (3.9"),
        "{err}"
    );
    assert!(!d.join("z.glb").exists());
    // open loop, a chest hit spins a light body away: the error names the body and says
    // what --no-feedback does; a giant figure is warned of, whatever else happens
    let out = jostle()
        .args([
            "perturb",
            "mocap/demo_walk.bvh",
            "--ball",
            "t=1,target=chest",
            "--no-feedback",
            "--scale",
            "0.3",
        ])
        .arg("--out")
        .arg(d.join("w.glb"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: mocap/demo_walk.bvh: --scale 0.3 m per file unit makes"),
        "{err}"
    );
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("blew up") && err.contains("hint: --no-feedback runs the figure open loop"),
        "{err}"
    );
    assert!(!d.join("w.glb").exists());
    let out = perturb_walk(&["t=1,target=chest"], &d.join("v.glb"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("hint:") && !err.contains("warning:"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).ok();
}

/// `jostle info mocap/demo_walk.bvh ARGS…` from the repository.
fn info(args: &[&str]) -> std::process::Output {
    jostle()
        .args(["info", "mocap/demo_walk.bvh"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs")
}

#[test]
fn info_reports_stature_and_mass_and_rejects_bad_values() {
    let d = tmp("info");
    let model_json = d.join("model.json");
    let out = info(&[
        "--json",
        "--model-json",
        model_json.to_str().expect("utf-8"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    for key in [
        "height_m",
        "stature_source",
        "stature_detail",
        "mass_kg",
        "mass_source",
        "bmi_kg_m2",
    ] {
        assert!(v.get(key).is_some(), "info --json lacks `{key}`");
    }
    assert!((v["bmi_kg_m2"].as_f64().expect("bmi") - 23.0).abs() < 1e-9);
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("model.json")).expect("model"))
            .expect("json");
    assert!(model["stature_source"].is_string());
    let bodies = model["bodies"].as_array().expect("bodies");
    // the schema keeps its keys and adds each body's share of the de Leva segments
    for key in [
        "name",
        "role",
        "parent",
        "mass_kg",
        "com_world_m",
        "inertia_body_kgm2",
        "inertia_world_kgm2",
        "capsules_body_m",
        "joint",
        "merged_clip_joints",
        "role_fractions",
    ] {
        assert!(bodies[0].get(key).is_some(), "model body lacks `{key}`");
    }
    let thigh = bodies
        .iter()
        .find(|b| b["role"] == "left_thigh")
        .expect("thigh");
    assert_eq!(thigh["role_fractions"]["left_thigh"], 1.0);

    let out = info(&["--json", "--mass", "80", "--height", "1.8"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!((v["mass_kg"].as_f64().expect("mass") - 80.0).abs() < 1e-9);
    assert!((v["height_m"].as_f64().expect("height") - 1.8).abs() < 1e-12);
    assert_eq!(v["stature_source"], "--height");

    for (args, flag) in [
        (&["--mass", "-3"][..], "--mass"),
        (&["--mass", "NaN"][..], "--mass"),
        (&["--height", "-1.7"][..], "--height"),
        (&["--height", "inf"][..], "--height"),
        (&["--height", "1.8", "--scale", "0.01"][..], "--height"),
    ] {
        let out = info(args);
        assert!(!out.status.success(), "{args:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn perturb_fsyncs_each_output_before_renaming_it() {
    let d = tmp("durable");
    let outs = [d.join("o/x.glb"), d.join("o/x.bvh"), d.join("o/m.json")];
    let mut cmd = jostle();
    cmd.args([
        "perturb",
        "mocap/demo_walk.bvh",
        "--ball",
        "t=1.5,target=right_forearm,speed=12",
    ])
    .arg("--out")
    .arg(&outs[0])
    .arg("--bvh")
    .arg(&outs[1])
    .arg("--metrics")
    .arg(&outs[2])
    .current_dir(env!("CARGO_MANIFEST_DIR"));
    let Some((trace, out)) = common::strace_writes(&cmd, "perturb_fsyncs_each_output") else {
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::assert_durable_writes(&trace, &outs);
    std::fs::remove_dir_all(&d).ok();
}
