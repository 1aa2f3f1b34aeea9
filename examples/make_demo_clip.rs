//! Writes the procedurally generated demo clips `mocap/demo_walk.bvh` (walk, 120 Hz, 4 s,
//! ZYX like CMU) and `mocap/demo_wave.bvh` (standing right-arm wave, 60 Hz, 2 s, ZXY).
//!
//! `cargo run --example make_demo_clip [OUT_DIR]` (default: `mocap/` in the crate root).
//! Deterministic: the same bytes on every run (values are rounded to 1e-4).
//!
//! Skeleton: the CMU cgspeed 31-joint hierarchy (same names and nesting), with our own
//! offsets in centimetres for a 1.75 m figure: Y up, facing +Z, the figure's left on +X,
//! arms straight out along ±X in the rest pose (T-pose).
//!
//! Sign conventions used below (rotation = product of the channels in file order):
//! - Xrotation > 0 swings a limb that points down (−Y) backwards (−Z).
//! - Zrotation −75 turns the left arm (+X) down; +75 turns the right arm (−X) down.
use jostle::mocap::{BvhJoint, Channel, Clip, write_bvh};
use nalgebra::Vector3;
use std::f64::consts::PI;
use std::path::{Path, PathBuf};

/// (name, parent name, offset cm, End Site offset cm).
type JointSpec = (
    &'static str,
    Option<&'static str>,
    [f64; 3],
    Option<[f64; 3]>,
);

const SKELETON: &[JointSpec] = &[
    ("Hips", None, [0.0, 0.0, 0.0], None),
    ("LHipJoint", Some("Hips"), [0.0, 0.0, 0.0], None),
    ("LeftUpLeg", Some("LHipJoint"), [9.0, -5.0, 0.0], None),
    ("LeftLeg", Some("LeftUpLeg"), [0.0, -42.0, 0.0], None),
    ("LeftFoot", Some("LeftLeg"), [0.0, -40.0, 0.0], None),
    (
        "LeftToeBase",
        Some("LeftFoot"),
        [0.0, -6.0, 12.0],
        Some([0.0, 0.0, 6.0]),
    ),
    ("RHipJoint", Some("Hips"), [0.0, 0.0, 0.0], None),
    ("RightUpLeg", Some("RHipJoint"), [-9.0, -5.0, 0.0], None),
    ("RightLeg", Some("RightUpLeg"), [0.0, -42.0, 0.0], None),
    ("RightFoot", Some("RightLeg"), [0.0, -40.0, 0.0], None),
    (
        "RightToeBase",
        Some("RightFoot"),
        [0.0, -6.0, 12.0],
        Some([0.0, 0.0, 6.0]),
    ),
    ("LowerBack", Some("Hips"), [0.0, 0.0, 0.0], None),
    ("Spine", Some("LowerBack"), [0.0, 10.0, -1.0], None),
    ("Spine1", Some("Spine"), [0.0, 20.0, 0.0], None),
    ("Neck", Some("Spine1"), [0.0, 0.0, 0.0], None),
    ("Neck1", Some("Neck"), [0.0, 20.0, 1.0], None),
    (
        "Head",
        Some("Neck1"),
        [0.0, 10.0, 0.0],
        Some([0.0, 20.0, 0.0]),
    ),
    ("LeftShoulder", Some("Spine1"), [2.0, 16.0, 0.0], None),
    ("LeftArm", Some("LeftShoulder"), [15.0, 3.0, -1.0], None),
    ("LeftForeArm", Some("LeftArm"), [28.0, 0.0, 0.0], None),
    ("LeftHand", Some("LeftForeArm"), [26.0, 0.0, 0.0], None),
    ("LeftFingerBase", Some("LeftHand"), [8.0, 0.0, 0.0], None),
    (
        "LeftHandIndex1",
        Some("LeftFingerBase"),
        [4.0, 0.0, 0.0],
        Some([3.0, 0.0, 0.0]),
    ),
    (
        "LThumb",
        Some("LeftHand"),
        [2.0, 0.0, 3.0],
        Some([2.0, 0.0, 3.0]),
    ),
    ("RightShoulder", Some("Spine1"), [-2.0, 16.0, 0.0], None),
    ("RightArm", Some("RightShoulder"), [-15.0, 3.0, -1.0], None),
    ("RightForeArm", Some("RightArm"), [-28.0, 0.0, 0.0], None),
    ("RightHand", Some("RightForeArm"), [-26.0, 0.0, 0.0], None),
    ("RightFingerBase", Some("RightHand"), [-8.0, 0.0, 0.0], None),
    (
        "RightHandIndex1",
        Some("RightFingerBase"),
        [-4.0, 0.0, 0.0],
        Some([-3.0, 0.0, 0.0]),
    ),
    (
        "RThumb",
        Some("RightHand"),
        [-2.0, 0.0, 3.0],
        Some([-2.0, 0.0, 3.0]),
    ),
];

/// Root height at which the straight legs put the toes on the ground (5+42+40+6 cm).
const STAND_HEIGHT: f64 = 93.0;

/// The skeleton with the given rotation order (e.g. "ZYX") on every joint; the root also
/// gets `Xposition Yposition Zposition` first.
fn skeleton(order: &str) -> Vec<BvhJoint> {
    let rot: Vec<Channel> = order
        .chars()
        .filter_map(|a| Channel::from_keyword(&format!("{a}rotation")))
        .collect();
    let mut joints: Vec<BvhJoint> = Vec::new();
    let mut column = 0;
    for &(name, parent, o, end) in SKELETON {
        let parent = parent.map(|p| {
            joints
                .iter()
                .position(|j| j.name == p)
                .expect("parents are listed first")
        });
        let mut channels = Vec::new();
        if parent.is_none() {
            channels.extend([Channel::Xposition, Channel::Yposition, Channel::Zposition]);
        }
        channels.extend(&rot);
        let n = channels.len();
        joints.push(BvhJoint {
            name: name.to_string(),
            parent,
            offset: Vector3::from(o),
            channels,
            first_column: column,
            end_site: end.map(Vector3::from),
            line: 0,
        });
        column += n;
    }
    joints
}

/// One frame being filled: channel values by joint name and axis letter.
struct Pose<'a> {
    joints: &'a [BvhJoint],
    row: Vec<f64>,
}

impl Pose<'_> {
    fn set(&mut self, joint: &str, channel: Channel, value: f64) {
        let j = self
            .joints
            .iter()
            .find(|j| j.name == joint)
            .unwrap_or_else(|| panic!("no joint {joint}"));
        let k = j
            .channels
            .iter()
            .position(|&c| c == channel)
            .unwrap_or_else(|| panic!("{joint} has no {channel:?}"));
        self.row[j.first_column + k] = value;
    }
    fn rot(&mut self, joint: &str, x: f64, y: f64, z: f64) {
        self.set(joint, Channel::Xrotation, x);
        self.set(joint, Channel::Yrotation, y);
        self.set(joint, Channel::Zrotation, z);
    }
    fn pos(&mut self, x: f64, y: f64, z: f64) {
        self.set("Hips", Channel::Xposition, x);
        self.set("Hips", Channel::Yposition, y);
        self.set("Hips", Channel::Zposition, z);
    }
}

fn clip(order: &str, rate: f64, frames: usize, pose: impl Fn(f64, &mut Pose)) -> Clip {
    let joints = skeleton(order);
    let num_channels: usize = joints.iter().map(|j| j.channels.len()).sum();
    let mut values = Vec::with_capacity(frames * num_channels);
    for f in 0..frames {
        let mut p = Pose {
            joints: &joints,
            row: vec![0.0; num_channels],
        };
        pose(f as f64 / rate, &mut p);
        // Round so the file is short and identical across platforms' sin/cos.
        values.extend(p.row.iter().map(|v| {
            let r = (v * 1e4).round() / 1e4;
            if r == 0.0 { 0.0 } else { r }
        }));
    }
    Clip {
        joints,
        frame_time: 1.0 / rate,
        num_channels,
        values,
    }
}

/// Walk forward along +Z at 1 m/s, 1 Hz gait cycle (one left + one right step per second).
pub fn demo_walk() -> Clip {
    clip("ZYX", 120.0, 480, |t, p| {
        let ph = 2.0 * PI * t; // gait phase; left thigh forward while sin(ph) > 0
        let s = ph.sin();
        // Hips: highest at mid-stance (thighs vertical), lowest in double support; ±2 cm.
        p.pos(0.0, STAND_HEIGHT - 4.0 + 2.0 * (2.0 * ph).cos(), 100.0 * t);
        p.rot("Hips", 0.0, -4.0 * s, 0.0); // pelvis turns with the forward leg
        // Thighs ±25°, opposite phase (negative Xrotation = forward).
        let thigh_l = -25.0 * s;
        let thigh_r = 25.0 * s;
        // Knees 0..60°, positive only (shin goes backwards): a 60° peak in swing and an
        // ~18° stance flexion at mid-stance (which keeps the stance foot on the ground
        // while the hips are at their highest).
        let knee = |phase: f64| {
            60.0 * ((1.0 + (phase - 0.2).cos()) / 2.0).powi(4)
                + 18.0 * ((1.0 + (phase - PI).cos()) / 2.0).powi(2)
        };
        let knee_l = knee(ph);
        let knee_r = knee(ph + PI);
        p.rot("LeftUpLeg", thigh_l, 0.0, 0.0);
        p.rot("RightUpLeg", thigh_r, 0.0, 0.0);
        p.rot("LeftLeg", knee_l, 0.0, 0.0);
        p.rot("RightLeg", knee_r, 0.0, 0.0);
        // Feet stay roughly level with the ground.
        p.rot("LeftFoot", -0.8 * (thigh_l + knee_l), 0.0, 0.0);
        p.rot("RightFoot", -0.8 * (thigh_r + knee_r), 0.0, 0.0);
        // Spine counter-twists against the pelvis; head keeps looking ahead.
        p.rot("Spine", 0.0, 3.0 * s, 0.0);
        p.rot("Spine1", 0.0, 3.0 * s, 0.0);
        p.rot("Head", 0.0, -2.0 * s, 0.0);
        // Arms hang down (Z ∓75°) and swing ±20° opposite to the legs (about the lateral
        // axis, which is Y before the Z rotation); elbows flex 10..40°, more when forward.
        p.rot("LeftArm", 0.0, 20.0 * s, -75.0);
        p.rot("RightArm", 0.0, 20.0 * s, 75.0);
        p.rot("LeftForeArm", 0.0, -(25.0 - 15.0 * s), 0.0);
        p.rot("RightForeArm", 0.0, 25.0 + 15.0 * s, 0.0);
    })
}

/// Smooth 0→1 step between `a` and `b`.
fn smoothstep(a: f64, b: f64, t: f64) -> f64 {
    let x = ((t - a) / (b - a)).clamp(0.0, 1.0);
    x * x * x * (x * (6.0 * x - 15.0) + 10.0)
}

/// Stand and wave the right hand: raise (0–0.5 s), wave at 2 Hz, lower (1.5–2 s).
pub fn demo_wave() -> Clip {
    clip("ZXY", 60.0, 120, |t, p| {
        let up = smoothstep(0.0, 0.5, t) * (1.0 - smoothstep(1.5, 2.0, t));
        let wave = (2.0 * PI * 2.0 * t).sin();
        p.pos(0.5 * (PI * t).sin(), STAND_HEIGHT, 0.0); // slight sideways sway
        p.rot("LeftUpLeg", 0.0, 0.0, 1.0);
        p.rot("RightUpLeg", 0.0, 0.0, -1.0);
        p.rot("Spine1", 0.0, 0.0, -4.0 * up); // lean slightly away from the raised arm
        p.rot("LeftArm", 0.0, 0.0, -75.0);
        p.rot("LeftForeArm", 0.0, -15.0, 0.0);
        // Right arm: from hanging (+75) to 20° above horizontal (−20), forearm upright,
        // waving side to side ±25° in the frontal plane.
        p.rot("RightArm", 0.0, 0.0, 75.0 + (-20.0 - 75.0) * up);
        p.rot(
            "RightForeArm",
            0.0,
            15.0 * (1.0 - up),
            (-70.0 + 25.0 * wave) * up,
        );
        p.rot("RightHand", 0.0, 0.0, 10.0 * wave * up);
        p.rot("Head", 0.0, -10.0 * up, 0.0); // look towards the waving side
    })
}

/// Write both demo clips into `dir`; returns their paths.
pub fn generate(dir: &Path) -> Result<Vec<PathBuf>, jostle::mocap::BvhError> {
    let mut out = Vec::new();
    for (name, clip) in [
        ("demo_walk.bvh", demo_walk()),
        ("demo_wave.bvh", demo_wave()),
    ] {
        let path = dir.join(name);
        write_bvh(&clip, &path)?;
        out.push(path);
    }
    Ok(out)
}

#[allow(dead_code)]
fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("mocap"));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("{}: {e}", dir.display());
        std::process::exit(1);
    }
    match generate(&dir) {
        Ok(paths) => {
            for p in paths {
                println!("wrote {}", p.display());
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
