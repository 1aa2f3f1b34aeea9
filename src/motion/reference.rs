//! The reference motion (METHOD §5): zero-phase low-pass filtered, C² spline-fitted joint
//! trajectories — root path and orientation, each joint's relative rotation (ball:
//! sign-continuous quaternion components; hinge/universal: unwrapped angles after the
//! swing–twist projection) — and every body's pose, twist and acceleration at any time by
//! forward kinematics with analytic derivatives. Fitting joint coordinates keeps the
//! reference exactly on the model's constraint manifold.

use super::filter::lowpass_filtfilt;
use super::kinematics::{
    BodyKinematics, BodyPose, JointMotion, RootMotion, forward_kinematics, forward_poses,
    joint_motion_from_angles, joint_rotation_from_angles, project_to_joint,
};
use super::quat::{make_sign_continuous, normalized_quaternion, normalized_quaternion_derivatives};
use super::spline::{SplineError, UniformCubicSpline};
use crate::mocap::Clip;
use crate::skeleton::{ClipFrames, JointType, Model};
use nalgebra::{Quaternion, UnitQuaternion, Vector3, Vector4};

/// Options of the reference fit.
#[derive(Clone, Debug)]
pub struct ReferenceOptions {
    /// Low-pass cut-off, Hz (Butterworth, forward–backward). Biomechanics uses 6–8 Hz
    /// before inverse dynamics; `f64::INFINITY` disables filtering.
    pub cutoff_hz: f64,
}

impl Default for ReferenceOptions {
    fn default() -> Self {
        ReferenceOptions { cutoff_hz: 8.0 }
    }
}

/// Why a reference could not be fitted.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// The clip has too few frames.
    #[error("the clip needs at least 2 frames for a reference motion, it has {0}")]
    TooShort(usize),
    /// The spline fit failed (non-finite data).
    #[error("spline fit failed: {0}")]
    Spline(#[from] SplineError),
    /// The clip does not belong to this model.
    #[error("the clip does not match the model: {0}")]
    Mismatch(String),
}

/// Per joint: where its channels sit in the joint spline.
#[derive(Clone, Copy, Debug)]
struct ChannelSlot {
    offset: usize,
    kind: JointType,
}

/// The fitted reference motion of a model.
#[derive(Clone, Debug)]
pub struct Reference {
    /// All channels: root position (3), root quaternion (4), then per joint
    /// (ball: 4 quaternion components, hinge: 1 angle, universal: 2 angles).
    spline: UniformCubicSpline,
    slots: Vec<Option<ChannelSlot>>,
    /// Duration, s (time 0 is the first used frame).
    pub duration: f64,
    /// Per body: RMS over the clip of the rotation the joint type cannot represent (the
    /// discarded swing of hinge/universal joints), degrees. 0 for ball joints and the root.
    pub swing_rms_deg: Vec<f64>,
    /// RMS over frames and joints of the angle between the reference's and the raw mocap's
    /// relative joint rotations, degrees (what filtering and projection changed).
    pub mocap_rms_deg: f64,
    /// Largest such angle, degrees.
    pub mocap_max_deg: f64,
}

/// Scratch buffers for [`Reference::sample`].
#[derive(Clone, Debug, Default)]
pub struct ReferenceScratch {
    value: Vec<f64>,
    d1: Vec<f64>,
    d2: Vec<f64>,
    joints: Vec<JointMotion>,
    q_rel: Vec<UnitQuaternion<f64>>,
}

/// Desired joint coordinates at one time, for tracking control.
#[derive(Clone, Debug, Default)]
pub struct JointTargets {
    /// Per body: relative rotation R_a⁻¹R_b desired.
    pub q_rel: Vec<UnitQuaternion<f64>>,
    /// Per body: relative angular velocity (child frame), rad/s.
    pub w_rel: Vec<Vector3<f64>>,
}

fn unwrap_radians(x: &mut [f64]) {
    let tau = std::f64::consts::TAU;
    for k in 1..x.len() {
        let d = x[k] - x[k - 1];
        if d.abs() > std::f64::consts::PI {
            x[k] -= tau * (d / tau).round();
        }
    }
}

impl Reference {
    /// Fit the reference motion of `model` to the clip it was built from.
    pub fn fit(
        model: &Model,
        clip: &Clip,
        opts: &ReferenceOptions,
    ) -> Result<Self, ReferenceError> {
        Self::fit_with_poses(model, clip, opts, None)
    }

    /// [`fit`](Self::fit) from the clip's world poses when the caller has them (from
    /// [`crate::skeleton::build_model_with_poses`]); `None`, or poses of another frame
    /// count, and they are computed here.
    pub fn fit_with_poses(
        model: &Model,
        clip: &Clip,
        opts: &ReferenceOptions,
        poses: Option<&crate::skeleton::ClipWorldPoses>,
    ) -> Result<Self, ReferenceError> {
        if model.clip_joint_names.len() != clip.joints.len() {
            return Err(ReferenceError::Mismatch(format!(
                "model has {} clip joints, clip has {}",
                model.clip_joint_names.len(),
                clip.joints.len()
            )));
        }
        let frames = ClipFrames::from_figure(clip, &model.figure);
        let nf = frames.num_frames();
        if nf < 2 {
            return Err(ReferenceError::TooShort(nf));
        }
        let dt = frames.frame_time();
        let rate = 1.0 / dt;
        let nb = model.bodies.len();
        let mut slots = vec![None; nb];
        let mut nch = 7;
        for (b, body) in model.bodies.iter().enumerate() {
            if let Some(j) = &body.joint {
                slots[b] = Some(ChannelSlot {
                    offset: nch,
                    kind: j.kind,
                });
                nch += match j.kind {
                    JointType::Ball => 4,
                    JointType::Hinge => 1,
                    JointType::Universal => 2,
                };
            }
        }
        // Raw channel tracks.
        let computed;
        let world = match poses {
            Some(p) if p.len() == nf => p,
            _ => {
                computed = (0..nf).map(|f| frames.world(f)).collect();
                &computed
            }
        };
        // (each its own capacity: `vec![v; n]` clones `v`, and a clone keeps no capacity)
        let mut tracks: Vec<Vec<f64>> = (0..nch).map(|_| Vec::with_capacity(nf)).collect();
        let rep0 = model.bodies[0].bvh_joint;
        let mut root_q: Vec<Quaternion<f64>> =
            world.iter().map(|w| w[rep0].1.into_inner()).collect();
        make_sign_continuous(&mut root_q);
        for (f, w) in world.iter().enumerate() {
            for (i, tr) in tracks.iter_mut().take(3).enumerate() {
                tr.push(w[rep0].0[i]);
            }
            for (i, tr) in tracks.iter_mut().skip(3).take(4).enumerate() {
                tr.push(root_q[f].coords[i]);
            }
        }
        let mut swing_rms_deg = vec![0.0; nb];
        let mut raw_rel: Vec<Vec<UnitQuaternion<f64>>> = vec![vec![]; nb];
        for (b, body) in model.bodies.iter().enumerate() {
            let (Some(slot), Some(joint), Some(p)) = (slots[b], body.joint.as_ref(), body.parent)
            else {
                continue;
            };
            let (ra, rb) = (model.bodies[p].bvh_joint, body.bvh_joint);
            let rel: Vec<UnitQuaternion<f64>> =
                world.iter().map(|w| w[ra].1.inverse() * w[rb].1).collect();
            match slot.kind {
                JointType::Ball => {
                    let mut qs: Vec<Quaternion<f64>> = rel.iter().map(|q| q.into_inner()).collect();
                    make_sign_continuous(&mut qs);
                    for q in &qs {
                        for i in 0..4 {
                            tracks[slot.offset + i].push(q.coords[i]);
                        }
                    }
                }
                JointType::Hinge | JointType::Universal => {
                    let mut sq = 0.0;
                    for q in &rel {
                        let (ang, swing) = project_to_joint(joint, q);
                        sq += swing * swing;
                        for i in 0..joint.dof() {
                            tracks[slot.offset + i].push(ang[i]);
                        }
                    }
                    for i in 0..joint.dof() {
                        unwrap_radians(&mut tracks[slot.offset + i]);
                    }
                    swing_rms_deg[b] = (sq / nf as f64).sqrt().to_degrees();
                }
            }
            raw_rel[b] = rel;
        }
        // Filter each channel, then fit one multi-channel spline.
        let mut samples = vec![0.0; nf * nch];
        for (c, tr) in tracks.iter().enumerate() {
            let filtered = if opts.cutoff_hz.is_finite() {
                lowpass_filtfilt(tr, rate, opts.cutoff_hz)
            } else {
                tr.clone()
            };
            for (f, v) in filtered.iter().enumerate() {
                samples[f * nch + c] = *v;
            }
        }
        let spline = UniformCubicSpline::fit(0.0, dt, nch, &samples)?;
        let mut reference = Reference {
            spline,
            slots,
            duration: (nf - 1) as f64 * dt,
            swing_rms_deg,
            mocap_rms_deg: 0.0,
            mocap_max_deg: 0.0,
        };
        // How far the reference is from the raw mocap, joint by joint.
        let mut targets = JointTargets::default();
        let mut scratch = ReferenceScratch::default();
        let (mut sum, mut count, mut max) = (0.0, 0usize, 0.0f64);
        for f in 0..nf {
            reference.joint_targets(model, f as f64 * dt, &mut scratch, &mut targets);
            for (b, rel) in raw_rel.iter().enumerate() {
                if let Some(q) = rel.get(f) {
                    let a = (targets.q_rel[b].inverse() * q).angle().to_degrees();
                    sum += a * a;
                    count += 1;
                    max = max.max(a);
                }
            }
        }
        reference.mocap_rms_deg = if count > 0 {
            (sum / count as f64).sqrt()
        } else {
            0.0
        };
        reference.mocap_max_deg = max;
        Ok(reference)
    }

    fn eval(&self, t: f64, s: &mut ReferenceScratch) {
        let n = self.spline.n_channels();
        // all three: a scratch last used by `sample_pose` has its values sized alone
        if s.value.len() != n || s.d1.len() != n || s.d2.len() != n {
            s.value = vec![0.0; n];
            s.d1 = vec![0.0; n];
            s.d2 = vec![0.0; n];
        }
        self.spline.eval(t, &mut s.value, &mut s.d1, &mut s.d2);
    }

    fn joint_motion(&self, model: &Model, b: usize, s: &ReferenceScratch) -> JointMotion {
        let (Some(slot), Some(joint)) = (self.slots[b], model.bodies[b].joint.as_ref()) else {
            return JointMotion::default();
        };
        let o = slot.offset;
        match slot.kind {
            JointType::Ball => {
                let v4 = |x: &[f64]| Vector4::new(x[o], x[o + 1], x[o + 2], x[o + 3]);
                let (q, w, dw) =
                    normalized_quaternion_derivatives(&v4(&s.value), &v4(&s.d1), &v4(&s.d2));
                JointMotion { q_rel: q, w, dw }
            }
            JointType::Hinge | JointType::Universal => {
                let d = joint.dof();
                joint_motion_from_angles(
                    joint,
                    &s.value[o..o + d],
                    &s.d1[o..o + d],
                    &s.d2[o..o + d],
                )
            }
        }
    }

    /// Pose, twist and acceleration of every body at time `t` (s, clamped to the clip).
    pub fn sample(
        &self,
        model: &Model,
        t: f64,
        s: &mut ReferenceScratch,
        out: &mut [BodyKinematics],
    ) {
        self.eval(t, s);
        let v3 = |x: &[f64]| Vector3::new(x[0], x[1], x[2]);
        let v4 = |x: &[f64]| Vector4::new(x[3], x[4], x[5], x[6]);
        let (q, w_body, dw_body) =
            normalized_quaternion_derivatives(&v4(&s.value), &v4(&s.d1), &v4(&s.d2));
        let root = RootMotion {
            p: v3(&s.value),
            q,
            v: v3(&s.d1),
            w: q * w_body,
            a: v3(&s.d2),
            dw: q * dw_body,
        };
        let mut joints = std::mem::take(&mut s.joints);
        joints.resize(model.bodies.len(), JointMotion::default());
        for (b, jm) in joints.iter_mut().enumerate().skip(1) {
            *jm = self.joint_motion(model, b, s);
        }
        forward_kinematics(model, &root, &joints, out);
        s.joints = joints;
    }

    /// Pose of every body at time `t` (s, clamped to the clip): bit for bit the `x` and
    /// `q` of [`sample`](Self::sample), at about a third of its work (no rates, no
    /// accelerations).
    pub fn sample_pose(
        &self,
        model: &Model,
        t: f64,
        s: &mut ReferenceScratch,
        out: &mut [BodyPose],
    ) {
        let n = self.spline.n_channels();
        if s.value.len() != n {
            s.value = vec![0.0; n];
        }
        self.spline.eval_values(t, &mut s.value);
        let v = &s.value;
        let root_p = Vector3::new(v[0], v[1], v[2]);
        let root_q = normalized_quaternion(&Vector4::new(v[3], v[4], v[5], v[6]));
        s.q_rel
            .resize(model.bodies.len(), UnitQuaternion::identity());
        for (b, q) in s.q_rel.iter_mut().enumerate().skip(1) {
            *q = match (self.slots[b], model.bodies[b].joint.as_ref()) {
                (Some(slot), Some(joint)) => {
                    let o = slot.offset;
                    match slot.kind {
                        JointType::Ball => {
                            normalized_quaternion(&Vector4::new(v[o], v[o + 1], v[o + 2], v[o + 3]))
                        }
                        JointType::Hinge | JointType::Universal => {
                            joint_rotation_from_angles(joint, &v[o..o + joint.dof()])
                        }
                    }
                }
                _ => UnitQuaternion::identity(),
            };
        }
        forward_poses(model, &root_p, &root_q, &s.q_rel, out);
    }

    /// The root joint's position at time `t` (s, clamped to the clip), m: bit for bit the
    /// point [`sample`](Self::sample) and [`sample_pose`](Self::sample_pose) place the root
    /// body from (its centre of mass is `q · com` from it). Three spline channels only.
    pub fn root_position(&self, t: f64) -> Vector3<f64> {
        Vector3::from(self.spline.eval_channels::<3>(t, 0))
    }

    /// [`sample`](Self::sample) and [`joint_targets`](Self::joint_targets) at one time
    /// `t` (s): the targets are the sample's own joint motions (bit for bit what
    /// `joint_targets` computes), so the splines are evaluated once, not twice.
    pub fn sample_with_targets(
        &self,
        model: &Model,
        t: f64,
        s: &mut ReferenceScratch,
        out: &mut [BodyKinematics],
        targets: &mut JointTargets,
    ) {
        self.sample(model, t, s, out);
        let n = model.bodies.len();
        targets.q_rel.resize(n, UnitQuaternion::identity());
        targets.w_rel.resize(n, Vector3::zeros());
        for (b, jm) in s.joints.iter().enumerate().take(n).skip(1) {
            targets.q_rel[b] = jm.q_rel;
            targets.w_rel[b] = jm.w;
        }
    }

    /// Desired relative rotations and rates of every joint at time `t` (s).
    pub fn joint_targets(
        &self,
        model: &Model,
        t: f64,
        s: &mut ReferenceScratch,
        out: &mut JointTargets,
    ) {
        self.eval(t, s);
        let n = model.bodies.len();
        out.q_rel.resize(n, UnitQuaternion::identity());
        out.w_rel.resize(n, Vector3::zeros());
        for b in 1..n {
            let jm = self.joint_motion(model, b, s);
            out.q_rel[b] = jm.q_rel;
            out.w_rel[b] = jm.w;
        }
    }
}
