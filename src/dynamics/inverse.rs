//! Inverse dynamics by a leaf-to-root sweep (METHOD §6, thesis eq. 5.3):
//! `M u̇ − f = Jᵀλ + Hᵀτ + J_rᵀλ_r`, solved in O(n) without forming any 6n×6n matrix.

use crate::motion::kinematics::BodyKinematics;
use crate::skeleton::Joint;
use crate::skeleton::Model;
use crate::skeleton::joint::JointFrame;
use nalgebra::Vector3;

/// Result of inverse dynamics at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointTorques {
    /// Muscle torques τ stacked per joint DOF (order of [`Model::dof_offsets`]), N·m.
    /// Ball joints: components along the parent body's axes; hinge: about the hinge axis;
    /// universal: about n₁ and n₂. These are the body-relative feedforward torques ψ.
    pub tau: Vec<f64>,
    /// Per body: the constraint force λ of its joint (world, N): the force the child
    /// exerts on the parent at the joint point. Entry 0 is unused.
    pub joint_force: Vec<Vector3<f64>>,
    /// Per body: the constraint torques about the forbidden axes, N·m (hinge: 2, universal: 1).
    pub joint_constraint_torque: Vec<[f64; 2]>,
    /// Root ("hand of god") force on the root body, world, N.
    pub root_force: Vector3<f64>,
    /// Root torque about the root COM, world, N·m.
    pub root_torque: Vector3<f64>,
}

impl JointTorques {
    /// The root wrench as one vector: force (N), then torque about the root COM (N·m).
    pub fn root_wrench(&self) -> nalgebra::Vector6<f64> {
        let (f, t) = (&self.root_force, &self.root_torque);
        nalgebra::Vector6::new(f.x, f.y, f.z, t.x, t.y, t.z)
    }
}

/// Scratch space for [`inverse_dynamics`], reused between calls (no allocation per sample).
#[derive(Clone, Debug, Default)]
pub struct InverseWorkspace {
    force: Vec<Vector3<f64>>,
    torque: Vec<Vector3<f64>>,
    offsets: Vec<usize>,
}

/// Size the workspace and the output for `model` (allocates only when the model changes).
fn prepare_buffers(model: &Model, ws: &mut InverseWorkspace, out: &mut JointTorques) {
    let n = model.bodies.len();
    if ws.force.len() != n {
        ws.force = vec![Vector3::zeros(); n];
        ws.torque = vec![Vector3::zeros(); n];
        ws.offsets = model.dof_offsets();
    }
    out.tau.resize(model.joint_dofs(), 0.0);
    out.joint_force.resize(n, Vector3::zeros());
    out.joint_constraint_torque.resize(n, [0.0; 2]);
}

/// Net wrench (M u̇ − f) of body `b` with gravity as the only applied force:
/// (m(a − g), Iα + ω × Iω), world frame, torque about the COM.
#[inline]
pub fn inertial_wrench(
    model: &Model,
    b: usize,
    k: &BodyKinematics,
) -> (Vector3<f64>, Vector3<f64>) {
    let body = &model.bodies[b];
    // I_w v = R (Ī (Rᵀ v)): products with vectors, not I_w = R Ī Rᵀ
    let r = k.q.to_rotation_matrix();
    let (r, inertia) = (r.matrix(), &body.inertia);
    let i_world = |v: &Vector3<f64>| r * (inertia * r.tr_mul(v));
    let f = (k.a - model.gravity) * body.mass;
    let t = i_world(&k.dw) + k.w.cross(&i_world(&k.w));
    (f, t)
}

/// Joint torques, constraint forces and root wrench that produce the body accelerations
/// in `kin` (one entry per body, on the constraint manifold). Extra applied wrenches per
/// body (world; force, torque about COM) may be given in `applied` (e.g. contact forces).
pub fn inverse_dynamics(
    model: &Model,
    kin: &[BodyKinematics],
    applied: Option<&[(Vector3<f64>, Vector3<f64>)]>,
    ws: &mut InverseWorkspace,
    out: &mut JointTorques,
) {
    let n = model.bodies.len();
    prepare_buffers(model, ws, out);
    for b in 0..n {
        let (f, t) = inertial_wrench(model, b, &kin[b]);
        ws.force[b] = f;
        ws.torque[b] = t;
        if let Some(ap) = applied {
            ws.force[b] -= ap[b].0;
            ws.torque[b] -= ap[b].1;
        }
    }
    decompose_wrenches(
        model,
        |a, b, joint| Some(joint.frame(&kin[a].q, &kin[b].q)),
        ws,
        out,
    );
}

/// Decompose the per-body wrenches held in the workspace (`ws.force`, `ws.torque`: what
/// each body's joints and the root must supply, world frame, torque about the COM) into
/// joint constraint forces, muscle torques τ and the root wrench, leaf to root, O(n),
/// each joint's frame from `frame(parent, child, joint)` (`None`: the joint is skipped).
fn decompose_wrenches(
    model: &Model,
    frame: impl Fn(usize, usize, &Joint) -> Option<JointFrame>,
    ws: &mut InverseWorkspace,
    out: &mut JointTorques,
) {
    let n = model.bodies.len();
    // Leaves to root: what remains of W_b must come from b's own joint.
    for b in (1..n).rev() {
        let body = &model.bodies[b];
        let (Some(a), Some(joint)) = (body.parent, body.joint.as_ref()) else {
            continue;
        };
        let Some(jf) = frame(a, b, joint) else {
            continue;
        };
        let (wf, wt) = (ws.force[b], ws.torque[b]);
        // The joint puts (−λ, −r_b×λ + E_m τ − E_c λ_c) on b; match it to (wf, wt).
        let lambda = -wf;
        let rhs = wt - jf.r_b.cross(&wf);
        // a ball joint's axes are the parent's rotation matrix, whose inverse is its
        // transpose; a hinge's or universal joint's are inverted
        let coeffs = if jf.dof == 3 {
            jf.axes.tr_mul(&rhs)
        } else {
            match jf.axes.try_inverse() {
                Some(inv) => inv * rhs,
                None => Vector3::zeros(),
            }
        };
        let off = ws.offsets[b];
        for i in 0..jf.dof {
            out.tau[off + i] = coeffs[i];
        }
        let mut ct = [0.0; 2];
        for i in jf.dof..3 {
            ct[i - jf.dof] = -coeffs[i];
        }
        out.joint_force[b] = lambda;
        out.joint_constraint_torque[b] = ct;
        // Reaction on the parent, moved to its COM: −(wf, wt + (r_a − r_b) × wf).
        ws.force[a] += wf;
        ws.torque[a] += wt + (jf.r_a - jf.r_b).cross(&wf);
    }
    out.root_force = ws.force[0];
    out.root_torque = ws.torque[0];
}

/// Joint torques, constraint forces and root wrench that supply the given per-body
/// wrenches (world; force N, torque about the COM N·m) at body orientations `q`:
/// `W = Jᵀλ + Hᵀτ + J_rᵀλ_r`. The same O(n) sweep as [`inverse_dynamics`], for
/// generalised forces that do not come from accelerations (the discrete-time inverse
/// dynamics of METHOD §6).
pub fn wrench_to_joint_torques(
    model: &Model,
    q: &[nalgebra::UnitQuaternion<f64>],
    wrenches: &[(Vector3<f64>, Vector3<f64>)],
    ws: &mut InverseWorkspace,
    out: &mut JointTorques,
) {
    load_wrenches(model, wrenches, ws, out);
    decompose_wrenches(
        model,
        |a, b, joint| Some(joint.frame(&q[a], &q[b])),
        ws,
        out,
    );
}

/// The workspace sized for `model`, holding `wrenches` as what each body must be supplied.
fn load_wrenches(
    model: &Model,
    wrenches: &[(Vector3<f64>, Vector3<f64>)],
    ws: &mut InverseWorkspace,
    out: &mut JointTorques,
) {
    prepare_buffers(model, ws, out);
    for (b, w) in wrenches.iter().enumerate().take(model.bodies.len()) {
        ws.force[b] = w.0;
        ws.torque[b] = w.1;
    }
}

/// [`wrench_to_joint_torques`] with each joint's frame at the orientations given
/// (`frames[b]`, e.g. [`Stepper::joint_frames`](super::step::Stepper::joint_frames) at the
/// step's start): the same numbers, without evaluating the frames again. A body whose
/// frame is missing is skipped, as one without a joint. The frames are
/// [`Joint::frame`]'s: a ball joint's axes (3 DOF) a rotation matrix, inverted by its
/// transpose.
pub fn wrench_to_joint_torques_in_frames(
    model: &Model,
    frames: &[Option<JointFrame>],
    wrenches: &[(Vector3<f64>, Vector3<f64>)],
    ws: &mut InverseWorkspace,
    out: &mut JointTorques,
) {
    load_wrenches(model, wrenches, ws, out);
    decompose_wrenches(model, |_, b, _| frames.get(b).copied().flatten(), ws, out);
}
