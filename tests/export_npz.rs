//! The dataset arrays (`perturb --npz`, `batch --npz`; issue #16): read back with an npz
//! reader, every array has its documented shape, and the values are the run's — checked
//! against the simulation's own body poses and the mocap by routes the writer does not take
//! (local rotations composed back up the hierarchy, the bodies' joint points, the balls'
//! hits), plus the same bytes from the same run, and NumPy's own `np.load` where Python has
//! numpy (CI requires it with `JOSTLE_REQUIRE_NUMPY=1`).

mod common;

use jostle::batch::job::{Outputs, run_variations_with};
use jostle::export::npz::{DATASET_ARRAYS, dataset_npz};
use jostle::export::pose::joint_world_transforms;
use jostle::sim::balls::Ball;
use jostle::sim::metrics::perturb_metrics;
use jostle::sim::scenario::{BallSpec, Scenario};
use jostle::sim::{SimOptions, Simulation};
use jostle::skeleton::ClipFrames;
use jostle::{Character, CharacterOptions};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use ndarray::{Array0, Array1, Array2, Array3};
use ndarray_npy::NpzReader;
use std::io::{Cursor, Read};

fn walk() -> Character {
    Character::load(
        &common::repo_clip("demo_walk.bvh"),
        &CharacterOptions::default(),
    )
    .expect("demo walk loads")
}

fn scenario() -> Scenario {
    Scenario {
        balls: vec![
            BallSpec::from_flag("t=1,target=chest,speed=12").expect("ball"),
            BallSpec::from_flag("t=1.5,target=right_hand,speed=10").expect("ball"),
        ],
    }
}

/// The string array `key` (NumPy `<U{N}`: N little-endian UTF-32 code units per name).
fn read_names(bytes: &[u8], key: &str) -> Vec<String> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
    let mut file = zip.by_name(&format!("{key}.npy")).expect("entry");
    let mut npy = vec![];
    file.read_to_end(&mut npy).expect("read");
    assert_eq!(&npy[..6], b"\x93NUMPY");
    let header_len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
    let header = std::str::from_utf8(&npy[10..10 + header_len]).expect("ascii header");
    let width: usize = header
        .split("'<U")
        .nth(1)
        .and_then(|s| s.split('\'').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{key}: not a <U array: {header}"));
    npy[10 + header_len..]
        .chunks(4 * width)
        .map(|item| {
            item.chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .take_while(|&c| c != 0)
                .map(|c| char::from_u32(c).expect("a char"))
                .collect()
        })
        .collect()
}

#[test]
fn the_dataset_arrays_hold_the_run() {
    let c = walk();
    let (model, clip) = (&c.model, &c.clip);
    let mut sim = Simulation::new(&c, SimOptions::default()).expect("simulation");
    let launches = scenario()
        .launches(model, &c.reference, "walk")
        .expect("launches");
    for l in &launches {
        sim.throw(Ball::from_launch(l));
    }
    sim.run().expect("runs");
    let metrics = perturb_metrics(&sim);
    let traj = sim.trajectory();
    let bytes = dataset_npz(&sim, &traj, &metrics).expect("npz");
    let frames = ClipFrames::from_figure(clip, &model.figure);
    let nf = traj.num_frames().min(frames.num_frames());
    let (nj, nb) = (clip.joints.len(), model.num_bodies());

    let mut npz = NpzReader::new(Cursor::new(bytes.clone())).expect("npz reads");
    let mut names = npz.names().expect("names");
    names.sort();
    let mut documented: Vec<String> = DATASET_ARRAYS.iter().map(|a| a.0.to_string()).collect();
    documented.sort();
    assert_eq!(names, documented, "the arrays are the documented ones");

    let fps: Array0<f64> = npz.by_name("fps").expect("fps");
    assert!((fps[()] - 1.0 / clip.frame_time).abs() < 1e-9);
    let parents: Array1<i32> = npz.by_name("parents").expect("parents");
    for (j, joint) in clip.joints.iter().enumerate() {
        assert_eq!(parents[j], joint.parent.map_or(-1, |p| p as i32));
    }
    assert_eq!(
        read_names(&bytes, "joint_names"),
        clip.joints
            .iter()
            .map(|j| j.name.clone())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        read_names(&bytes, "body_names"),
        model
            .bodies
            .iter()
            .map(|b| b.name.clone())
            .collect::<Vec<_>>()
    );

    let pos: Array3<f32> = npz.by_name("positions").expect("positions");
    let rot: Array3<f32> = npz.by_name("rotations").expect("rotations");
    let opos: Array3<f32> = npz.by_name("original_positions").expect("original");
    let orot: Array3<f32> = npz.by_name("original_rotations").expect("original");
    let dev: Array2<f32> = npz.by_name("deviation_deg").expect("deviation");
    assert_eq!(pos.shape(), &[nf, nj, 3]);
    assert_eq!(rot.shape(), &[nf, nj, 4]);
    assert_eq!(opos.shape(), &[nf, nj, 3]);
    assert_eq!(orot.shape(), &[nf, nj, 4]);
    assert_eq!(dev.shape(), &[nf, nj]);
    let body_joints: Array1<i32> = npz.by_name("body_joints").expect("body joints");
    let (mut worst_pos, mut worst_rot, mut worst_orig) = (0.0f64, 0.0f64, 0.0f64);
    for f in 0..nf {
        // each body's own joint sits at the body's joint point, turned as the body is
        for (b, body) in model.bodies.iter().enumerate() {
            let j = body_joints[b] as usize;
            assert_eq!(j, body.bvh_joint);
            let p = &traj.poses[f][b];
            let joint_point = p.x - p.q * body.com;
            let got = Vector3::new(pos[[f, j, 0]], pos[[f, j, 1]], pos[[f, j, 2]]).cast::<f64>();
            worst_pos = worst_pos.max((got - joint_point).norm());
        }
        // the local rotations composed up the hierarchy give the bodies' orientations
        let mut world: Vec<UnitQuaternion<f64>> = Vec::with_capacity(nj);
        for (j, joint) in clip.joints.iter().enumerate() {
            let q = UnitQuaternion::from_quaternion(Quaternion::new(
                rot[[f, j, 3]] as f64,
                rot[[f, j, 0]] as f64,
                rot[[f, j, 1]] as f64,
                rot[[f, j, 2]] as f64,
            ));
            world.push(joint.parent.map_or(q, |p| world[p] * q));
        }
        for (b, body) in model.bodies.iter().enumerate() {
            worst_rot = worst_rot.max(world[body.bvh_joint].angle_to(&traj.poses[f][b].q));
        }
        // the original is the mocap, joint for joint
        for (j, (x, _)) in joint_world_transforms(model, &frames, f, None)
            .iter()
            .enumerate()
        {
            let got = Vector3::new(opos[[f, j, 0]], opos[[f, j, 1]], opos[[f, j, 2]]).cast::<f64>();
            worst_orig = worst_orig.max((got - x).norm());
        }
    }
    eprintln!(
        "npz vs the run: joint points {worst_pos:.1e} m, orientations {:.1e}°, mocap {worst_orig:.1e} m",
        worst_rot.to_degrees()
    );
    // float32: ~1e-7 relative to metres and unit quaternions
    assert!(worst_pos < 2e-6, "{worst_pos}");
    assert!(worst_rot.to_degrees() < 1e-3, "{worst_rot}");
    assert!(worst_orig < 2e-6, "{worst_orig}");
    let peak = dev.iter().copied().fold(0.0f32, f32::max) as f64;
    assert!(peak > 1.0, "the hits show in the deviation: {peak}");
    let root: Array2<f32> = npz.by_name("root_positions").expect("root");
    assert_eq!(root.shape(), &[nf, 3]);
    assert_eq!(root[[nf / 2, 1]], pos[[nf / 2, 0, 1]]);

    // the balls: where they flew, what they hit and when, and the contacts that shows
    let balls: Array3<f32> = npz.by_name("balls").expect("balls");
    assert_eq!(balls.shape(), &[nf, 2, 3]);
    for (i, track) in traj.balls.iter().enumerate() {
        for (f, p) in track.positions.iter().enumerate().take(nf) {
            match p {
                None => assert!(balls[[f, i, 0]].is_nan()),
                Some(p) => assert!((balls[[f, i, 1]] as f64 - p.y).abs() < 1e-5),
            }
        }
    }
    let hit: Array1<bool> = npz.by_name("ball_hit").expect("hit");
    let hit_body: Array1<i32> = npz.by_name("ball_hit_body").expect("hit body");
    let hit_time: Array1<f64> = npz.by_name("ball_hit_time").expect("hit time");
    let contact: Array2<bool> = npz.by_name("contact").expect("contact");
    assert_eq!(contact.shape(), &[nf, nb]);
    for (i, m) in metrics.balls.iter().enumerate() {
        assert!(m.hit && hit[i]);
        let b = hit_body[i] as usize;
        assert_eq!(Some(&model.bodies[b].name), m.body.as_ref());
        assert_eq!(Some(hit_time[i]), m.first_contact_s);
        // the struck body is in contact within a frame of the hit
        let f = (hit_time[i] / clip.frame_time).ceil() as usize;
        assert!(
            (f..=f + 1).any(|f| contact[[f, b]]),
            "ball {i}: {} not in contact at frame {f}",
            model.bodies[b].name
        );
    }
    // standing on the floor, some body touches it in most frames, and no frame of the
    // first second (before any ball) has contact anywhere but on the floor's bodies
    let touching = (0..nf)
        .filter(|&f| (0..nb).any(|b| contact[[f, b]]))
        .count();
    assert!(touching * 10 > nf * 8, "{touching} of {nf} frames");
    let floor_bodies: Vec<usize> = (0..nb)
        .filter(|&b| (0..nf).filter(|&f| contact[[f, b]]).count() > 20)
        .collect();
    assert!(!floor_bodies.is_empty());
    for f in 0..(0.9 / clip.frame_time) as usize {
        for b in 0..nb {
            assert!(
                !contact[[f, b]] || floor_bodies.contains(&b),
                "frame {f}, body {b}"
            );
        }
    }

    // the same run through the job gives the same bytes (what perturb and batch write)
    let (_, mut out) = run_variations_with(
        &c,
        SimOptions::default(),
        std::slice::from_ref(&scenario()),
        "walk",
        Outputs {
            npz: true,
            ..Outputs::default()
        },
    )
    .expect("job");
    let job_bytes = out.pop().and_then(|v| v.npz).expect("npz bytes");
    assert!(
        job_bytes == bytes,
        "deterministic and the same as the job's"
    );

    numpy_check(&bytes, nf, nj, nb);
}

/// `np.load` opens the file and sees the documented shapes and dtypes.
fn numpy_check(bytes: &[u8], nf: usize, nj: usize, nb: usize) {
    let python = std::env::var("JOSTLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_numpy = std::process::Command::new(&python)
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_numpy {
        assert!(
            std::env::var_os("JOSTLE_REQUIRE_NUMPY").is_none(),
            "JOSTLE_REQUIRE_NUMPY is set but {python} has no numpy"
        );
        // straight to stderr, past libtest's capture, so the skip shows in a plain `cargo test`
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: NumPy's np.load check ({python} has no numpy; pip install numpy)"
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("jostle-npz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("run.npz");
    std::fs::write(&path, bytes).expect("write");
    let script = format!(
        r#"
import numpy as np
d = np.load({path:?})
assert d["positions"].shape == ({nf}, {nj}, 3) and d["positions"].dtype == np.float32
assert d["rotations"].shape == ({nf}, {nj}, 4)
assert abs(np.linalg.norm(d["rotations"], axis=-1) - 1).max() < 1e-6
assert d["contact"].shape == ({nf}, {nb}) and d["contact"].dtype == bool
assert d["joint_names"].dtype.kind == "U" and d["joint_names"][0] == "Hips", d["joint_names"][:3]
assert list(d["parents"][:2]) == [-1, 0]
assert d["body_names"].shape == ({nb},)
assert d["balls"].shape == ({nf}, 2, 3) and np.isnan(d["balls"][0]).all()
assert d["ball_hit"].all() and float(d["fps"]) == 120.0
assert np.isnan(d["fall_time"]) and not bool(d["fell"])
assert d["after_last_hit"].shape == () and float(d["after_last_hit"]) > 0.5, d["after_last_hit"]
print("numpy", np.__version__, "read", len(d.files), "arrays")
"#,
        path = path.display().to_string()
    );
    let out = std::process::Command::new(&python)
        .args(["-c", &script])
        .output()
        .expect("python runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "np.load check failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout).trim());
}

/// The README documents every array the writer writes (the table under "Dataset arrays").
#[test]
fn the_readme_lists_every_dataset_array() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README");
    let section = readme
        .split("## Dataset arrays")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a Dataset arrays section");
    for (name, dtype, _) in DATASET_ARRAYS {
        assert!(
            section.contains(&format!("| `{name}` | {dtype} |")),
            "README: no row for `{name}` ({dtype})"
        );
    }
}
