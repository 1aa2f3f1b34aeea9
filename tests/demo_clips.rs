//! The generated demo clips: committed files are exactly what the generator writes, they
//! parse, use the CMU hierarchy, and move plausibly.
mod common;

#[allow(dead_code)]
#[path = "../examples/make_demo_clip.rs"]
mod make_demo_clip;

use jostle::mocap::{Channel, Clip, load_bvh};
use std::path::Path;

fn committed(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("mocap")
        .join(name)
}

#[test]
fn generator_reproduces_the_committed_files() {
    let dir = common::temp_dir("demo_clips");
    let paths = make_demo_clip::generate(&dir).unwrap();
    assert_eq!(paths.len(), 2);
    for p in &paths {
        let name = p.file_name().unwrap().to_str().unwrap();
        let fresh = std::fs::read(p).unwrap();
        let old = std::fs::read(committed(name))
            .unwrap_or_else(|e| panic!("{name}: {e} (run `cargo run --example make_demo_clip`)"));
        assert!(
            fresh == old,
            "{name} differs from the generator's output: regenerate it"
        );
    }
    // Twice in a row: identical bytes, no temp files left.
    let again = common::temp_dir("demo_clips_again");
    make_demo_clip::generate(&again).unwrap();
    for p in &paths {
        let q = again.join(p.file_name().unwrap());
        assert_eq!(std::fs::read(p).unwrap(), std::fs::read(q).unwrap());
    }
    assert_eq!(std::fs::read_dir(&again).unwrap().count(), 2);
}

fn rot_order(c: &Clip, j: usize) -> String {
    c.joints[j]
        .channels
        .iter()
        .filter(|ch| ch.is_rotation())
        .map(|ch| &ch.keyword()[..1])
        .collect()
}

#[test]
fn demo_clips_use_the_cmu_hierarchy() {
    // The CMU cgspeed hierarchy, as in ../shared/mocap/cmu_walk_bvhmatlab.bvh (compared
    // with that file below when the shared clips are there): (joint, parent), and the
    // joints that end in an End Site.
    const CMU: [(&str, Option<&str>); 31] = [
        ("Hips", None),
        ("LHipJoint", Some("Hips")),
        ("LeftUpLeg", Some("LHipJoint")),
        ("LeftLeg", Some("LeftUpLeg")),
        ("LeftFoot", Some("LeftLeg")),
        ("LeftToeBase", Some("LeftFoot")),
        ("RHipJoint", Some("Hips")),
        ("RightUpLeg", Some("RHipJoint")),
        ("RightLeg", Some("RightUpLeg")),
        ("RightFoot", Some("RightLeg")),
        ("RightToeBase", Some("RightFoot")),
        ("LowerBack", Some("Hips")),
        ("Spine", Some("LowerBack")),
        ("Spine1", Some("Spine")),
        ("Neck", Some("Spine1")),
        ("Neck1", Some("Neck")),
        ("Head", Some("Neck1")),
        ("LeftShoulder", Some("Spine1")),
        ("LeftArm", Some("LeftShoulder")),
        ("LeftForeArm", Some("LeftArm")),
        ("LeftHand", Some("LeftForeArm")),
        ("LeftFingerBase", Some("LeftHand")),
        ("LeftHandIndex1", Some("LeftFingerBase")),
        ("LThumb", Some("LeftHand")),
        ("RightShoulder", Some("Spine1")),
        ("RightArm", Some("RightShoulder")),
        ("RightForeArm", Some("RightArm")),
        ("RightHand", Some("RightForeArm")),
        ("RightFingerBase", Some("RightHand")),
        ("RightHandIndex1", Some("RightFingerBase")),
        ("RThumb", Some("RightHand")),
    ];
    const END_SITES: [&str; 7] = [
        "LeftToeBase",
        "RightToeBase",
        "Head",
        "LeftHandIndex1",
        "LThumb",
        "RightHandIndex1",
        "RThumb",
    ];
    let cmu = common::shared_dir_or_skip_part("cmu_walk_bvhmatlab.bvh comparison")
        .map(|d| load_bvh(&d.join("cmu_walk_bvhmatlab.bvh")).unwrap());
    for (name, frames, rate, order) in [
        ("demo_walk.bvh", 480, 120.0, "ZYX"),
        ("demo_wave.bvh", 120, 60.0, "ZXY"),
    ] {
        let c = load_bvh(&committed(name)).unwrap();
        assert_eq!(c.num_frames(), frames, "{name}");
        assert_eq!(c.frame_time, 1.0 / rate, "{name}");
        assert_eq!(c.joints.len(), 31);
        assert_eq!(c.num_channels, 96);
        for (joint, (joint_name, parent)) in c.joints.iter().zip(CMU) {
            let p = joint.parent.map(|p| c.joints[p].name.as_str());
            assert_eq!((joint.name.as_str(), p), (joint_name, parent), "{name}");
            assert_eq!(
                joint.end_site.is_some(),
                END_SITES.contains(&joint_name),
                "{name}: {joint_name}"
            );
        }
        if let Some(cmu) = &cmu {
            for (a, b) in c.joints.iter().zip(&cmu.joints) {
                assert_eq!((&a.name, a.parent), (&b.name, b.parent), "{name}");
                assert_eq!(
                    a.end_site.is_some(),
                    b.end_site.is_some(),
                    "{name}: {}",
                    a.name
                );
            }
        }
        assert_eq!(
            c.joints[0].channels[..3],
            [Channel::Xposition, Channel::Yposition, Channel::Zposition]
        );
        for j in 0..31 {
            assert_eq!(rot_order(&c, j), order, "{name}: {}", c.joints[j].name);
        }
    }
    if let Some(cmu) = &cmu {
        let walk = load_bvh(&committed("demo_walk.bvh")).unwrap();
        assert_eq!(walk.joints[0].channels, cmu.joints[0].channels);
    }
}

fn world(c: &Clip, f: usize, joint: &str) -> nalgebra::Vector3<f64> {
    c.world_transforms(f)[c.joint_index(joint).unwrap()].0
}

#[test]
fn demo_walk_moves_plausibly() {
    let c = load_bvh(&committed("demo_walk.bvh")).unwrap();
    let col = |joint: &str, ch: Channel| {
        let j = &c.joints[c.joint_index(joint).unwrap()];
        j.first_column + j.channels.iter().position(|&x| x == ch).unwrap()
    };
    let series = |joint: &str, ch: Channel| -> Vec<f64> {
        let k = col(joint, ch);
        (0..c.num_frames()).map(|f| c.frame(f)[k]).collect()
    };
    let range = |v: &[f64]| {
        (
            v.iter().cloned().fold(f64::MAX, f64::min),
            v.iter().cloned().fold(f64::MIN, f64::max),
        )
    };
    // Hips bob ±2 cm; forward at ~1 m/s.
    let (lo, hi) = range(&series("Hips", Channel::Yposition));
    assert!((hi - lo - 4.0).abs() < 0.01, "{lo} {hi}");
    let z = series("Hips", Channel::Zposition);
    let speed = (z[479] - z[0]) / (479.0 / 120.0) / 100.0;
    assert!((speed - 1.0).abs() < 0.01, "{speed} m/s");
    // Thighs ±25° in opposite phase; knees 0..60°, never hyper-extended.
    let l = series("LeftUpLeg", Channel::Xrotation);
    let r = series("RightUpLeg", Channel::Xrotation);
    assert!(l.iter().zip(&r).all(|(a, b)| (a + b).abs() < 1e-3));
    let (lo, hi) = range(&l);
    assert!(lo > -25.01 && hi < 25.01 && hi > 24.9, "{lo} {hi}");
    for knee in ["LeftLeg", "RightLeg"] {
        let (lo, hi) = range(&series(knee, Channel::Xrotation));
        assert!(lo >= 0.0 && hi <= 60.0 && hi > 55.0, "{knee}: {lo} {hi}");
    }
    for elbow in ["LeftForeArm", "RightForeArm"] {
        let (lo, hi) = range(
            &series(elbow, Channel::Yrotation)
                .iter()
                .map(|v| v.abs())
                .collect::<Vec<_>>(),
        );
        assert!(lo >= 9.99 && hi <= 40.01, "{elbow}: {lo} {hi}");
    }
    for f in (0..480).step_by(5) {
        // A flexed knee puts the ankle behind the knee (shin goes backwards).
        let knee = world(&c, f, "LeftLeg");
        let ankle = world(&c, f, "LeftFoot");
        let flex = c.frame(f)[col("LeftLeg", Channel::Xrotation)];
        let thigh = c.frame(f)[col("LeftUpLeg", Channel::Xrotation)];
        if flex > thigh.abs() + 5.0 {
            assert!(ankle.z < knee.z, "frame {f}");
        }
        // Feet near the ground, never deep below it; hands hang below the shoulders.
        for foot in ["LeftToeBase", "RightToeBase"] {
            let y = world(&c, f, foot).y;
            assert!((-3.0..30.0).contains(&y), "frame {f} {foot} y={y}");
        }
        for (hand, arm, side) in [
            ("LeftHand", "LeftArm", 1.0),
            ("RightHand", "RightArm", -1.0),
        ] {
            let h = world(&c, f, hand);
            let a = world(&c, f, arm);
            assert!(
                h.y < a.y - 30.0 && (h.x - a.x) * side > 0.0,
                "frame {f} {hand} {h} {a}"
            );
        }
        let head = world(&c, f, "Head");
        assert!((145.0..160.0).contains(&head.y));
    }
}

#[test]
fn demo_wave_raises_and_waves_the_right_hand() {
    let c = load_bvh(&committed("demo_wave.bvh")).unwrap();
    let head_top = |f: usize| {
        let w = c.world_transforms(f);
        let j = c.joint_index("Head").unwrap();
        (w[j].0 + w[j].1 * c.joints[j].end_site.unwrap()).y
    };
    let mut xs = Vec::new();
    for f in 0..120 {
        let hand = world(&c, f, "RightHand");
        let left = world(&c, f, "LeftHand");
        assert!(left.y < 100.0, "left hand hangs");
        if (40..80).contains(&f) {
            assert!(hand.y > head_top(f), "frame {f}: right hand above the head");
            xs.push(hand.x);
        }
    }
    // Side-to-side wave: the hand sweeps > 20 cm.
    let span =
        xs.iter().cloned().fold(f64::MIN, f64::max) - xs.iter().cloned().fold(f64::MAX, f64::min);
    assert!(span > 20.0, "{span}");
    // Starts and ends with the arm down.
    assert!(world(&c, 0, "RightHand").y < 100.0);
    assert!(world(&c, 119, "RightHand").y < 110.0);
}
