//! Hand-built models for tests and benchmarks (no clip needed).

use super::drift::rod_inertia;
use crate::dynamics::State;
use crate::motion::kinematics::{
    BodyKinematics, JointMotion, RootMotion, forward_kinematics, joint_motion_from_angles,
};
use crate::skeleton::{JointSpec, JointType, Model, ModelBuilder};
use nalgebra::{Rotation3, UnitQuaternion, Vector3};

/// A 20-body humanoid-like tree in a T-pose (Y up, facing +z; metres, kilograms):
/// pelvis (root), abdomen, spine, chest, neck, head, and per side clavicle, upper arm,
/// forearm (hinge elbow), hand (universal wrist), thigh, shin (hinge knee), foot
/// (universal ankle); every other joint is a ball. Segments are rods (radius 0.1 ×
/// length); 68 kg in total.
pub fn humanoid() -> Model {
    let mut mb = ModelBuilder::new();
    // (name, parent, joint type, start point (world), end point (world), mass, hinge or
    // universal axes (parent frame n₁, child frame n₂))
    type Seg = (
        String,
        usize,
        JointType,
        [f64; 3],
        [f64; 3],
        f64,
        [f64; 3],
        [f64; 3],
    );
    let z = [0.0, 0.0, 1.0];
    let x = [1.0, 0.0, 0.0];
    let y = [0.0, 1.0, 0.0];
    let mut segs: Vec<Seg> = vec![
        (
            "abdomen".to_string(),
            0,
            JointType::Ball,
            [0.0, 1.0, 0.0],
            [0.0, 1.12, 0.0],
            6.0,
            z,
            z,
        ),
        (
            "spine".to_string(),
            1,
            JointType::Ball,
            [0.0, 1.12, 0.0],
            [0.0, 1.25, 0.0],
            6.0,
            z,
            z,
        ),
        (
            "chest".to_string(),
            2,
            JointType::Ball,
            [0.0, 1.25, 0.0],
            [0.0, 1.45, 0.0],
            12.0,
            z,
            z,
        ),
        (
            "neck".to_string(),
            3,
            JointType::Ball,
            [0.0, 1.45, 0.0],
            [0.0, 1.55, 0.0],
            1.0,
            z,
            z,
        ),
        (
            "head".to_string(),
            4,
            JointType::Ball,
            [0.0, 1.55, 0.0],
            [0.0, 1.78, 0.0],
            5.0,
            z,
            z,
        ),
    ];
    for (side, sx) in [("l", 1.0), ("r", -1.0)] {
        let base = segs.len() + 1; // index of this side's clavicle body
        segs.extend([
            (
                format!("{side}_clavicle"),
                3,
                JointType::Ball,
                [0.0, 1.42, 0.0],
                [0.18 * sx, 1.42, 0.0],
                1.5,
                z,
                z,
            ),
            (
                format!("{side}_upper_arm"),
                base,
                JointType::Ball,
                [0.18 * sx, 1.42, 0.0],
                [0.47 * sx, 1.42, 0.0],
                2.0,
                z,
                z,
            ),
            (
                format!("{side}_forearm"),
                base + 1,
                JointType::Hinge,
                [0.47 * sx, 1.42, 0.0],
                [0.73 * sx, 1.42, 0.0],
                1.2,
                y,
                y,
            ),
            (
                format!("{side}_hand"),
                base + 2,
                JointType::Universal,
                [0.73 * sx, 1.42, 0.0],
                [0.9 * sx, 1.42, 0.0],
                0.5,
                z,
                y,
            ),
        ]);
    }
    for (side, sx) in [("l", 1.0), ("r", -1.0)] {
        let base = segs.len() + 1;
        segs.extend([
            (
                format!("{side}_thigh"),
                0,
                JointType::Ball,
                [0.1 * sx, 0.95, 0.0],
                [0.1 * sx, 0.52, 0.0],
                8.0,
                x,
                x,
            ),
            (
                format!("{side}_shin"),
                base,
                JointType::Hinge,
                [0.1 * sx, 0.52, 0.0],
                [0.1 * sx, 0.1, 0.0],
                3.5,
                x,
                x,
            ),
            (
                format!("{side}_foot"),
                base + 1,
                JointType::Universal,
                [0.1 * sx, 0.1, 0.0],
                [0.1 * sx, 0.05, 0.2],
                1.0,
                x,
                z,
            ),
        ]);
    }
    let com = |s: &[f64; 3], e: &[f64; 3]| (Vector3::from(*s) + Vector3::from(*e)) * 0.5;
    let pelvis_com = Vector3::new(0.0, 1.0, 0.0);
    let inertia_along = |m: f64, s: &[f64; 3], e: &[f64; 3]| {
        let d = Vector3::from(*e) - Vector3::from(*s);
        let len = d.norm();
        let r = Rotation3::rotation_between(&Vector3::x(), &d).unwrap_or_else(Rotation3::identity);
        r.matrix() * rod_inertia(m, len, 0.1 * len) * r.matrix().transpose()
    };
    mb.add_body(
        "pelvis",
        None,
        10.0,
        inertia_along(10.0, &[-0.15, 1.0, 0.0], &[0.15, 1.0, 0.0]),
        None,
    );
    let mut coms = vec![pelvis_com];
    for (name, parent, kind, s, e, m, n1, n2) in segs {
        let c = com(&s, &e);
        let joint = Vector3::from(s);
        mb.add_body(
            &name,
            Some(parent),
            m,
            inertia_along(m, &s, &e),
            Some(JointSpec {
                kind,
                parent_anchor: joint - coms[parent],
                child_anchor: joint - c,
                axis_parent: Vector3::from(n1),
                axis_child: Vector3::from(n2),
                rest_rel: UnitQuaternion::identity(),
            }),
        );
        coms.push(c);
    }
    mb.build()
}

/// A state of [`humanoid`] near its T-pose with every joint moving (ball joints at
/// ~1 rad/s, hinge/universal angles 0.1 rad at 1 rad/s) and the pelvis moving with
/// `root_v` (m/s) and `root_w` (rad/s). On the constraint manifold.
pub fn humanoid_state(model: &Model, root_v: Vector3<f64>, root_w: Vector3<f64>) -> State {
    let root = RootMotion {
        p: Vector3::new(0.0, 1.0, 0.0) - model.bodies[0].com,
        q: UnitQuaternion::identity(),
        v: root_v,
        w: root_w,
        a: Vector3::zeros(),
        dw: Vector3::zeros(),
    };
    let joints: Vec<JointMotion> = model
        .bodies
        .iter()
        .enumerate()
        .map(|(b, body)| match body.joint.as_ref() {
            None => JointMotion::default(),
            Some(j) if j.kind == JointType::Ball => JointMotion {
                w: Vector3::new(0.7, -0.4 + 0.05 * b as f64, 0.5),
                ..Default::default()
            },
            Some(j) => joint_motion_from_angles(j, &[0.1, -0.1], &[1.0, -0.5], &[0.0, 0.0]),
        })
        .collect();
    let mut kin = vec![BodyKinematics::default(); model.bodies.len()];
    forward_kinematics(model, &root, &joints, &mut kin);
    State::from_kinematics(&kin, 0.0)
}
