//! Forward kinematics with analytic derivatives (METHOD §5): from the root's motion and
//! each joint's relative motion to every body's pose, twist and acceleration.
//! Built from joint coordinates, the result lies exactly on the constraint manifold.

use crate::skeleton::{Joint, JointType, Model};
use nalgebra::{Unit, UnitQuaternion, Vector3};

/// Pose, twist and acceleration of one body (world frame, COM).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyKinematics {
    /// COM position, m.
    pub x: Vector3<f64>,
    /// Orientation (body → world).
    pub q: UnitQuaternion<f64>,
    /// COM velocity, m/s.
    pub v: Vector3<f64>,
    /// Angular velocity, rad/s.
    pub w: Vector3<f64>,
    /// COM acceleration, m/s².
    pub a: Vector3<f64>,
    /// Angular acceleration, rad/s².
    pub dw: Vector3<f64>,
}

impl Default for BodyKinematics {
    fn default() -> Self {
        BodyKinematics {
            x: Vector3::zeros(),
            q: UnitQuaternion::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
            a: Vector3::zeros(),
            dw: Vector3::zeros(),
        }
    }
}

/// Motion of the root body's joint point (the clip root) in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMotion {
    /// Joint-point position, m.
    pub p: Vector3<f64>,
    /// Orientation.
    pub q: UnitQuaternion<f64>,
    /// Joint-point velocity, m/s.
    pub v: Vector3<f64>,
    /// Angular velocity (world), rad/s.
    pub w: Vector3<f64>,
    /// Joint-point acceleration, m/s².
    pub a: Vector3<f64>,
    /// Angular acceleration (world), rad/s².
    pub dw: Vector3<f64>,
}

/// Relative motion of a joint: child rotation relative to the parent, and the relative
/// angular velocity / acceleration expressed in the child's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointMotion {
    /// R_a⁻¹ R_b.
    pub q_rel: UnitQuaternion<f64>,
    /// Relative angular velocity, child frame, rad/s.
    pub w: Vector3<f64>,
    /// Its time derivative (child frame), rad/s².
    pub dw: Vector3<f64>,
}

impl Default for JointMotion {
    fn default() -> Self {
        JointMotion {
            q_rel: UnitQuaternion::identity(),
            w: Vector3::zeros(),
            dw: Vector3::zeros(),
        }
    }
}

/// Relative motion of a hinge or universal joint from its angles (rad) and their
/// derivatives; `angles` etc. hold `dof` entries (ball joints are not angle-parametrised).
pub fn joint_motion_from_angles(
    joint: &Joint,
    angles: &[f64],
    rates: &[f64],
    accs: &[f64],
) -> JointMotion {
    match joint.kind {
        JointType::Ball => JointMotion::default(),
        JointType::Hinge => {
            let n = joint.axis_child;
            JointMotion {
                q_rel: joint_rotation_from_angles(joint, angles),
                w: n * rates[0],
                dw: n * accs[0],
            }
        }
        JointType::Universal => {
            let n1 = joint.rest_rel.inverse() * joint.axis_parent;
            let n2 = joint.axis_child;
            let b = UnitQuaternion::from_axis_angle(&Unit::new_unchecked(n2), angles[1]);
            let bt_n1 = b.inverse() * n1;
            JointMotion {
                q_rel: joint_rotation_from_angles(joint, angles),
                w: bt_n1 * rates[0] + n2 * rates[1],
                dw: -n2.cross(&bt_n1) * (rates[1] * rates[0]) + bt_n1 * accs[0] + n2 * accs[1],
            }
        }
    }
}

/// Relative rotation R_a⁻¹R_b of a hinge or universal joint from its angles (rad): the
/// `q_rel` of [`joint_motion_from_angles`], bit for bit (the identity for a ball joint,
/// which is not angle-parametrised).
#[inline]
pub fn joint_rotation_from_angles(joint: &Joint, angles: &[f64]) -> UnitQuaternion<f64> {
    match joint.kind {
        JointType::Ball => UnitQuaternion::identity(),
        JointType::Hinge => {
            let n = joint.axis_child;
            joint.rest_rel * UnitQuaternion::from_axis_angle(&Unit::new_unchecked(n), angles[0])
        }
        JointType::Universal => {
            let n1 = joint.rest_rel.inverse() * joint.axis_parent;
            let n2 = joint.axis_child;
            let a = UnitQuaternion::from_axis_angle(&Unit::new_unchecked(n1), angles[0]);
            let b = UnitQuaternion::from_axis_angle(&Unit::new_unchecked(n2), angles[1]);
            joint.rest_rel * a * b
        }
    }
}

/// Angles (rad) of a hinge/universal joint for the relative rotation `q_rel` (the same
/// as [`project_to_joint`] without computing the discarded swing): the controller's hot path.
#[inline]
pub fn joint_angles(joint: &Joint, q_rel: &UnitQuaternion<f64>) -> [f64; 2] {
    let d = joint.rest_rel.inverse() * q_rel;
    match joint.kind {
        JointType::Ball => [0.0; 2],
        JointType::Hinge => {
            let v = Vector3::new(d.i, d.j, d.k).dot(&joint.axis_child);
            [2.0 * v.atan2(d.w), 0.0]
        }
        JointType::Universal => project_to_joint(joint, q_rel).0,
    }
}

/// Angles (rad) of a hinge/universal joint that best reproduce the relative rotation
/// `q_rel`, and the angle (rad) of the rotation the joint cannot represent (the
/// discarded swing). Ball joints return no angles and zero.
pub fn project_to_joint(joint: &Joint, q_rel: &UnitQuaternion<f64>) -> ([f64; 2], f64) {
    let d = joint.rest_rel.inverse() * q_rel;
    let angles = match joint.kind {
        JointType::Ball => return ([0.0; 2], 0.0),
        JointType::Hinge => {
            let n = joint.axis_child;
            // twist about n: from the quaternion's vector part projected on n
            let v = Vector3::new(d.i, d.j, d.k).dot(&n);
            [2.0 * v.atan2(d.w), 0.0]
        }
        JointType::Universal => {
            let n1 = joint.rest_rel.inverse() * joint.axis_parent;
            let n2 = joint.axis_child;
            let v = d * n2;
            let p = |x: Vector3<f64>| x - n1 * n1.dot(&x);
            let (a, b) = (p(n2), p(v));
            let t1 = n1.dot(&a.cross(&b)).atan2(a.dot(&b));
            let rest = UnitQuaternion::from_axis_angle(&Unit::new_unchecked(n1), -t1) * d;
            let tw = Vector3::new(rest.i, rest.j, rest.k).dot(&n2);
            [t1, 2.0 * tw.atan2(rest.w)]
        }
    };
    let zero = [0.0; 2];
    let m = joint_motion_from_angles(joint, &angles, &zero, &zero);
    let swing = (m.q_rel.inverse() * q_rel).angle();
    (angles, swing)
}

/// Wrap an angle to (−π, π].
pub fn wrap_angle(a: f64) -> f64 {
    let t = std::f64::consts::TAU;
    let r = a.rem_euclid(t);
    if r > std::f64::consts::PI { r - t } else { r }
}

/// A child body's COM position (m) and orientation from its parent's (`xa`, `qa`) and
/// the joint's relative rotation R_a⁻¹R_b, with the joint's anchors in the world (r_a from
/// the parent's COM, r_b from the child's; m): the one placement [`forward_kinematics`]
/// and [`forward_poses`] share, so their poses agree to the bit.
#[inline]
fn child_pose(
    joint: &Joint,
    xa: &Vector3<f64>,
    qa: &UnitQuaternion<f64>,
    q_rel: &UnitQuaternion<f64>,
) -> (
    Vector3<f64>,
    UnitQuaternion<f64>,
    Vector3<f64>,
    Vector3<f64>,
) {
    let q = qa * q_rel;
    let r_a = qa * joint.parent_anchor;
    let r_b = q * joint.child_anchor;
    (xa + r_a - r_b, q, r_a, r_b)
}

/// Forward kinematics of every body from the root's motion and each joint's relative
/// motion (`joints[b]` for body b; entry 0 is ignored). Writes into `out` (len = bodies).
pub fn forward_kinematics(
    model: &Model,
    root: &RootMotion,
    joints: &[JointMotion],
    out: &mut [BodyKinematics],
) {
    let b0 = &model.bodies[0];
    let c = root.q * b0.com;
    out[0] = BodyKinematics {
        x: root.p + c,
        q: root.q,
        v: root.v + root.w.cross(&c),
        w: root.w,
        a: root.a + root.dw.cross(&c) + root.w.cross(&root.w.cross(&c)),
        dw: root.dw,
    };
    for (bi, body) in model.bodies.iter().enumerate().skip(1) {
        let (Some(pi), Some(joint)) = (body.parent, body.joint.as_ref()) else {
            continue;
        };
        let pk = out[pi];
        let jm = &joints[bi];
        let (x, q, r_a, r_b) = child_pose(joint, &pk.x, &pk.q, &jm.q_rel);
        let w_rel = q * jm.w;
        let w = pk.w + w_rel;
        let dw = pk.dw + pk.w.cross(&w_rel) + q * jm.dw;
        out[bi] = BodyKinematics {
            x,
            q,
            v: pk.v + pk.w.cross(&r_a) - w.cross(&r_b),
            w,
            a: pk.a + pk.dw.cross(&r_a) + pk.w.cross(&pk.w.cross(&r_a))
                - dw.cross(&r_b)
                - w.cross(&w.cross(&r_b)),
            dw,
        };
    }
}

/// Pose of one body: COM position (m) and orientation (body → world), world frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyPose {
    /// COM position, m.
    pub x: Vector3<f64>,
    /// Orientation (body → world).
    pub q: UnitQuaternion<f64>,
}

impl Default for BodyPose {
    fn default() -> Self {
        BodyPose {
            x: Vector3::zeros(),
            q: UnitQuaternion::identity(),
        }
    }
}

/// The poses of [`forward_kinematics`] without rates (bit for bit its `x` and `q`): the
/// root at `root_p` (its joint, m) turned by `root_q`, each joint by `q_rel[b]`
/// (R_a⁻¹R_b; entry 0 unused). About a third of the work, for callers that only place
/// the bodies.
pub fn forward_poses(
    model: &Model,
    root_p: &Vector3<f64>,
    root_q: &UnitQuaternion<f64>,
    q_rel: &[UnitQuaternion<f64>],
    out: &mut [BodyPose],
) {
    out[0] = BodyPose {
        x: root_p + root_q * model.bodies[0].com,
        q: *root_q,
    };
    for (bi, body) in model.bodies.iter().enumerate().skip(1) {
        let (Some(pi), Some(joint)) = (body.parent, body.joint.as_ref()) else {
            continue;
        };
        let pk = out[pi];
        let (x, q, _, _) = child_pose(joint, &pk.x, &pk.q, &q_rel[bi]);
        out[bi] = BodyPose { x, q };
    }
}
