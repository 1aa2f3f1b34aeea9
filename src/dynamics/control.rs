//! Tracking control (METHOD §7, thesis eq. 5.6–5.7): per rotational DOF, muscle torque =
//! feedforward ψ + feedback γ, with γ = (k_s|τ| + k_0)(θd − θ) + k_d(θ̇d − θ̇).
//!
//! The feedback is a [`JointTorque`] (its gradients make the step implicit in the stiff
//! PD forces). The feedforward is applied as an external, body-relative torque without
//! gradients, so that the discrete-time inverse dynamics and the simulation assemble
//! exactly the same M̃.

use super::gradient::{GradientEstimator, TorqueGradient};
use super::state::{BodyState, atan2_near_zero, rotation_vector};
use super::torque::JointTorque;
use crate::motion::kinematics::{JointMotion, joint_angles};
use crate::skeleton::{JointType, Model};
use nalgebra::{Matrix2, Matrix3, Quaternion, UnitQuaternion, Vector2, Vector3};

/// Feedback gains, one set for the whole character.
///
/// Stiffness of DOF i of joint j is `k_s·|τ_i| + k_0 + k_g·G_j` (N·m/rad): proportional to
/// the muscle's feedforward load (thesis eq. 5.7; co-contraction scales with load), with a
/// floor so that unloaded joints are not limp. The floor has a part `k_g·G_j` beyond the
/// thesis: G_j = m·g·l of the subtree the joint carries (its gravitational "negative
/// stiffness"), so a trunk balanced over the hips stays upright when a torque component
/// passes through zero, while light limbs stay compliant. A joint that carries the standing
/// figure (ankle, knee, hip of a leg on the floor) holds the rest of it up like an inverted
/// pendulum: its floor is at least `k_stance·S_j`, S_j = m·g·l of everything it does not
/// carry down the tree. Damping is `damping_time × stiffness` (N·m·s/rad). With the defaults a forearm struck by a 12 m/s handball
/// deviates by tens of degrees and returns within about a second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    /// k_s, stiffness per N·m of feedforward torque, 1/rad.
    pub k_s: f64,
    /// k_0, stiffness floor, N·m/rad.
    pub k_0: f64,
    /// Damping time constant, s (k_d = damping_time · k).
    pub damping_time: f64,
    /// k_g, multiple of the carried subtree's gravitational stiffness m·g·l in the floor.
    pub k_g: f64,
    /// k_stance, multiple of the supported figure's gravitational stiffness m·g·l in the
    /// floor of a joint that holds the standing figure up. Above 1 the feedback beats the
    /// inverted pendulum's negative stiffness (without it the smallest push grew: a 10 g
    /// ball tipped the demo walk's feet by 57°). The default, 3, is k_g's (the one gain both
    /// were before). Measured over handballs to every shared clip, 1.5 keeps a turning
    /// salsa dancer up after a chest hit that knocks her down at 2–3 and ends a jump clip's
    /// 16 s drift, but leaves a kick and a punch clip slower to recover (0.3 → 10 s and
    /// never; 0.06 → 9 s): the stance stiffness trades one clip's failure for another's, so
    /// it is a knob (`--k-stance`), not a new default.
    pub k_stance: f64,
}

impl Default for Gains {
    fn default() -> Self {
        Gains {
            k_s: 10.0,
            k_0: 10.0,
            damping_time: 0.08,
            k_g: 3.0,
            k_stance: 3.0,
        }
    }
}

/// Desired joint coordinates of one joint at the end of the current step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointTarget {
    /// Desired R_a⁻¹R_b.
    pub q_rel: UnitQuaternion<f64>,
    /// Desired relative angular velocity, parent frame, rad/s.
    pub w_rel_parent: Vector3<f64>,
    /// Hinge/universal: desired angles, rad.
    pub angles: [f64; 2],
    /// Hinge/universal: desired angle rates, rad/s.
    pub rates: [f64; 2],
}

impl Default for JointTarget {
    fn default() -> Self {
        JointTarget {
            q_rel: UnitQuaternion::identity(),
            w_rel_parent: Vector3::zeros(),
            angles: [0.0; 2],
            rates: [0.0; 2],
        }
    }
}

/// Joint rates (rad/s) of a universal joint from a relative angular velocity `w` (world),
/// given its world axes n₁, n₂: the least-squares split w ≈ θ̇₁n₁ + θ̇₂n₂.
fn universal_rates(n1: &Vector3<f64>, n2: &Vector3<f64>, w: &Vector3<f64>) -> [f64; 2] {
    let g = Matrix2::new(n1.dot(n1), n1.dot(n2), n1.dot(n2), n2.dot(n2));
    let r = Vector2::new(n1.dot(w), n2.dot(w));
    let x = g.try_inverse().map_or(Vector2::zeros(), |gi| gi * r);
    [x[0], x[1]]
}

/// PD feedback toward per-joint targets, as a joint torque provider for the step.
#[derive(Clone, Debug)]
pub struct Tracking {
    /// Per body: target of its joint (entry 0 unused).
    pub targets: Vec<JointTarget>,
    /// Per body: stiffness of each of its DOF (N·m/rad), up to 3.
    pub stiffness: Vec<[f64; 3]>,
    /// Damping time constant, s.
    pub damping_time: f64,
    /// Per body: the joint (copied from the model so the provider is self-contained).
    joints: Vec<Option<crate::skeleton::Joint>>,
    /// False disables the feedback (feedforward-only runs).
    pub enabled: bool,
}

impl Tracking {
    /// A controller for `model` with every stiffness at `k_0`.
    pub fn new(model: &Model, gains: &Gains) -> Self {
        let n = model.num_bodies();
        Tracking {
            targets: vec![JointTarget::default(); n],
            stiffness: vec![[gains.k_0; 3]; n],
            damping_time: gains.damping_time,
            joints: model.bodies.iter().map(|b| b.joint.clone()).collect(),
            enabled: true,
        }
    }

    /// Set the target of body `b`'s joint from the reference's relative motion.
    pub fn set_target(&mut self, b: usize, jm: &JointMotion) {
        let Some(joint) = self.joints[b].as_ref() else {
            return;
        };
        // the angles alone: the swing the joint discards is not needed here (every step,
        // every joint)
        let angles = joint_angles(joint, &jm.q_rel);
        let w_parent = jm.q_rel * jm.w;
        let rates = match joint.kind {
            JointType::Ball => [0.0; 2],
            JointType::Hinge => [jm.w.dot(&joint.axis_child), 0.0],
            JointType::Universal => {
                // in the parent frame: n₁ = axis_parent, n₂ = q_rel · axis_child
                universal_rates(
                    &joint.axis_parent,
                    &(jm.q_rel * joint.axis_child),
                    &w_parent,
                )
            }
        };
        self.targets[b] = JointTarget {
            q_rel: jm.q_rel,
            w_rel_parent: w_parent,
            angles,
            rates,
        };
    }

    /// Feedback torque on body `b` (world, N·m) from the two bodies' states.
    pub fn feedback(&self, b: usize, pa: &BodyState, pb: &BodyState) -> Vector3<f64> {
        let Some(joint) = self.joints[b].as_ref() else {
            return Vector3::zeros();
        };
        let k = self.stiffness[b];
        let d = self.damping_time;
        let tg = &self.targets[b];
        let q_rel = pa.q.inverse() * pb.q;
        let w_rel_world = pb.w - pa.w;
        match joint.kind {
            JointType::Ball => {
                // error rotation in the parent frame: desired · current⁻¹
                let e = rotation_vector(&(tg.q_rel * q_rel.inverse()));
                let wd = tg.w_rel_parent - pa.q.inverse() * w_rel_world;
                pa.q * ball_pd(&k, d, &e, &wd)
            }
            JointType::Hinge => {
                let ang = joint_angles(joint, &q_rel);
                let n = pa.q * joint.axis_parent;
                let rate = n.dot(&w_rel_world);
                n * axis_pd(k[0], d, tg.angles[0] - ang[0], tg.rates[0] - rate)
            }
            JointType::Universal => {
                let ang = joint_angles(joint, &q_rel);
                let n1 = pa.q * joint.axis_parent;
                let n2 = pb.q * joint.axis_child;
                let r = universal_rates(&n1, &n2, &w_rel_world);
                let mut t = Vector3::zeros();
                for (i, n) in [n1, n2].iter().enumerate() {
                    t += n * axis_pd(k[i], d, tg.angles[i] - ang[i], tg.rates[i] - r[i]);
                }
                t
            }
        }
    }
}

impl Tracking {
    /// The feedback torque on body `b` (world, N·m) and its numerical gradient along
    /// `est`'s perturbations of the child, for ball and hinge joints: central differences
    /// in its orientation (R_b ← exp(±ε e_k) R_b), forward differences in its angular
    /// velocity, as [`GradientEstimator::torque_gradient_structured`] takes them from
    /// [`feedback`](Self::feedback) evaluations. Each perturbed torque is evaluated from
    /// what the child's perturbation leaves unchanged: ball, with C = Q_d R_b⁻¹, the error
    /// rotation is C exp(∓ε e_k) R_a (two quaternion products and a rotation vector);
    /// hinge, the angle is read from (Q_rest⁻¹ R_a⁻¹)(exp(±ε e_k) R_b) and the axis
    /// n = R_a a_parent stays; a change of ω_b moves only the damping term. `None` for
    /// universal joints.
    fn own_feedback_and_gradient(
        &self,
        b: usize,
        pa: &BodyState,
        pb: &BodyState,
        est: &GradientEstimator,
        gradient: &mut TorqueGradient,
    ) -> Option<Vector3<f64>> {
        let joint = self.joints[b].as_ref()?;
        let k = self.stiffness[b];
        let damping = self.damping_time;
        let tg = &self.targets[b];
        let (tau0, d_theta, d_omega) = match joint.kind {
            JointType::Ball => {
                let qa_inv = pa.q.inverse();
                let ra = pa.q.to_rotation_matrix();
                let wd0 = tg.w_rel_parent - qa_inv * (pb.w - pa.w);
                let c = tg.q_rel * pb.q.inverse();
                let torque_of =
                    |e: &Vector3<f64>, wd: &Vector3<f64>| ra * ball_pd(&k, damping, e, wd);
                let p = (c * pa.q).into_inner();
                let e0 = rotation_vector(&UnitQuaternion::new_unchecked(p));
                let tau0 = torque_of(&e0, &wd0);
                // The turned error rotations C r⁻¹ R_a, r = (w_r, s_r e_k): with
                // r⁻¹ = w_r − s_r e_k it is w_r P − s_r Q_k, P = C R_a, Q_k = C e_k R_a,
                // so three quaternion products serve the six turns (twelve before).
                let q_axis = axes_times(pa.q.quaternion()).map(|e| c.quaternion() * e);
                let (dt, dw) = child_columns(
                    est,
                    &tau0,
                    |sign, axis| {
                        let r = est.rotation_step(sign, axis);
                        let (w_r, s_r) = (r.w, r.imag()[axis]);
                        let turned = p * w_r - q_axis[axis] * s_r;
                        torque_of(
                            &rotation_vector(&UnitQuaternion::new_unchecked(turned)),
                            &wd0,
                        )
                    },
                    |dw| torque_of(&e0, &(wd0 - qa_inv * dw)),
                );
                (tau0, dt, dw)
            }
            JointType::Hinge => {
                let n = pa.q * joint.axis_parent;
                let rate0 = n.dot(&(pb.w - pa.w));
                // the angle from D = (Q_rest⁻¹ R_a⁻¹) R_b: 2 atan2(v_D · a_child, w_D)
                let to_rest = (joint.rest_rel.inverse() * pa.q.inverse()).into_inner();
                let ax = &joint.axis_child;
                let qb = pb.q.quaternion();
                let d0 = to_rest * qb;
                let (s0, w0) = (d0.imag().dot(ax), d0.w);
                let a0 = 2.0 * s0.atan2(w0);
                let torque_of = |ang: f64, rate: f64| {
                    n * axis_pd(k[0], damping, tg.angles[0] - ang, tg.rates[0] - rate)
                };
                let tau0 = torque_of(a0, rate0);
                // A turn r = (w_r, s_r e_k) of the child: D' = w_r D + s_r Q_rest⁻¹ R_a⁻¹
                // e_k R_b (three quaternion products for the six turns), and its angle a0
                // plus the small difference 2 arg((w' + i s')(w0 − i s0)) (a series,
                // not atan2; the same angle modulo 2π, which the PD law wraps)
                let d_axis = axes_times(qb).map(|e| to_rest * e);
                let (dt, dw) = child_columns(
                    est,
                    &tau0,
                    |sign, axis| {
                        let r = est.rotation_step(sign, axis);
                        let d = d0 * r.w + d_axis[axis] * r.imag()[axis];
                        let (s1, w1) = (d.imag().dot(ax), d.w);
                        let da = 2.0 * atan2_near_zero(s1 * w0 - w1 * s0, w1 * w0 + s1 * s0);
                        torque_of(a0 + da, rate0)
                    },
                    |dw| torque_of(a0, rate0 + n.dot(dw)),
                );
                (tau0, dt, dw)
            }
            JointType::Universal => return None,
        };
        est.pd_gradient_from_child(pa, pb, &tau0, &d_theta, &d_omega, gradient);
        Some(tau0)
    }
}

/// The products e_k q (k = x, y, z) of the unit pure quaternions with `q`: signed
/// permutations of q's components, exact.
#[inline]
fn axes_times(q: &Quaternion<f64>) -> [Quaternion<f64>; 3] {
    [
        Quaternion::new(-q.i, q.w, -q.k, q.j),
        Quaternion::new(-q.j, q.k, q.w, -q.i),
        Quaternion::new(-q.k, -q.j, q.i, q.w),
    ]
}

/// The ball-joint PD law in the parent's frame, per axis k_i (e_i + d·ė_i) (N·m): `e` the
/// error rotation vector (rad), `wd` the rate error (rad/s), `damping` d (s).
#[inline]
fn ball_pd(k: &[f64; 3], damping: f64, e: &Vector3<f64>, wd: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(
        k[0] * (e.x + damping * wd.x),
        k[1] * (e.y + damping * wd.y),
        k[2] * (e.z + damping * wd.z),
    )
}

/// One joint axis' PD law, k (wrap(θd − θ) + d (θ̇d − θ̇)) (N·m), from the angle error
/// θd − θ (rad, wrapped here) and the rate error θ̇d − θ̇ (rad/s).
#[inline]
fn axis_pd(k: f64, damping: f64, angle_error: f64, rate_error: f64) -> f64 {
    k * (crate::motion::kinematics::wrap_angle(angle_error) + damping * rate_error)
}

/// ∂τ/∂δθ_b by central differences and ∂τ/∂ω_b by forward differences from `tau0`, along
/// `est`'s steps: `turned(sign, axis)` is τ with the child turned, R_b ← r R_b with
/// r = [`est.rotation_step(sign, axis)`](GradientEstimator::rotation_step); `spun(δω)` is
/// τ with ω_b ← ω_b + δω.
fn child_columns(
    est: &GradientEstimator,
    tau0: &Vector3<f64>,
    turned: impl Fn(usize, usize) -> Vector3<f64>,
    spun: impl Fn(&Vector3<f64>) -> Vector3<f64>,
) -> (Matrix3<f64>, Matrix3<f64>) {
    let opts = est.options();
    let (eps_r, eps_w) = (opts.eps_rotation, opts.eps_angular_velocity);
    let mut d_theta = Matrix3::zeros();
    let mut d_omega = Matrix3::zeros();
    for axis in 0..3 {
        let plus = turned(0, axis);
        let minus = turned(1, axis);
        d_theta.set_column(axis, &((plus - minus) * (0.5 / eps_r)));
        let mut dw = Vector3::zeros();
        dw[axis] = eps_w;
        d_omega.set_column(axis, &((spun(&dw) - tau0) * (1.0 / eps_w)));
    }
    (d_theta, d_omega)
}

impl JointTorque for Tracking {
    fn torque(&self, body: usize, parent: &BodyState, child: &BodyState, _t: f64) -> Vector3<f64> {
        self.feedback(body, parent, child)
    }

    /// Ball and hinge joints: `Tracking::own_feedback_and_gradient`,
    /// about half the work of ten [`feedback`](Tracking::feedback) evaluations.
    fn torque_and_gradient(
        &self,
        body: usize,
        parent: &BodyState,
        child: &BodyState,
        _t: f64,
        est: &GradientEstimator,
        gradient: &mut TorqueGradient,
    ) -> Option<Vector3<f64>> {
        self.own_feedback_and_gradient(body, parent, child, est, gradient)
    }

    fn is_active(&self, body: usize) -> bool {
        self.enabled && self.joints.get(body).is_some_and(|j| j.is_some())
    }

    /// The damping term of every joint type is linear in ω at fixed orientations: the
    /// rates are projections of ω_b − ω_a on axes that depend on R_a, R_b only (ball:
    /// R_a⁻¹(ω_b − ω_a); hinge: n·(ω_b − ω_a); universal: a least-squares split on n₁, n₂),
    /// and the output frame (R_a, n₁, n₂) does not depend on ω.
    fn affine_in_angular_velocity(&self) -> bool {
        true
    }

    /// Every joint type reads ω only as ω_b − ω_a (`w_rel_world` in
    /// [`feedback`](Tracking::feedback)).
    fn relative_angular_velocity_only(&self) -> bool {
        true
    }

    /// Errors and rates are read in the parent's frame or on body-fixed axes (R_a⁻¹R_b,
    /// R_a⁻¹(ω_b − ω_a), n = R_a·axis) and the torque is put back with those axes, so it
    /// turns with the two bodies.
    fn frame_indifferent(&self) -> bool {
        true
    }
}

/// World torque on body `b` (the child; its parent gets the opposite) of body-relative
/// feedforward values `psi` (this joint's DOF: ball = parent-frame components, hinge =
/// about the axis, universal = about n₁ and n₂), N·m.
pub fn feedforward_torque(
    model: &Model,
    b: usize,
    pa: &BodyState,
    pb: &BodyState,
    psi: &[f64],
) -> Vector3<f64> {
    let Some(joint) = model.bodies[b].joint.as_ref() else {
        return Vector3::zeros();
    };
    feedforward_torque_in_frame(&joint.frame(&pa.q, &pb.q), psi)
}

/// [`feedforward_torque`] with the joint's frame at the bodies' poses given, N·m.
pub fn feedforward_torque_in_frame(
    jf: &crate::skeleton::joint::JointFrame,
    psi: &[f64],
) -> Vector3<f64> {
    let mut t = Vector3::zeros();
    for (i, p) in psi.iter().enumerate().take(jf.dof) {
        t += jf.axes.column(i) * *p;
    }
    t
}

/// Per body: the mass of its subtree (kg) and its first moment Σ m x (kg·m), poses in `kin`.
fn subtree_mass_moments(
    model: &Model,
    kin: &[crate::motion::kinematics::BodyKinematics],
) -> (Vec<f64>, Vec<Vector3<f64>>) {
    let n = model.num_bodies();
    let mut mass = vec![0.0; n];
    let mut moment = vec![Vector3::zeros(); n];
    for b in (0..n).rev() {
        mass[b] += model.bodies[b].mass;
        moment[b] += kin[b].x * model.bodies[b].mass;
        if let Some(p) = model.bodies[b].parent {
            let (m, mo) = (mass[b], moment[b]);
            mass[p] += m;
            moment[p] += mo;
        }
    }
    (mass, moment)
}

/// Per body: the gravitational stiffness m·g·l (N·m/rad) of the subtree its joint carries,
/// from the poses in `kin` (m: subtree mass, l: distance from the joint to the subtree's COM).
pub fn gravity_stiffness(
    model: &Model,
    kin: &[crate::motion::kinematics::BodyKinematics],
) -> Vec<f64> {
    let (mass, moment) = subtree_mass_moments(model, kin);
    (0..model.num_bodies())
        .map(|b| joint_gravity_stiffness(model, kin, b, mass[b], &moment[b]))
        .collect()
}

/// m·g·l (N·m/rad) of a mass `m` (kg) whose first moment is `moment` (kg·m, world) about
/// body b's joint, l the distance from the joint to its COM; 0 without a joint or mass.
fn joint_gravity_stiffness(
    model: &Model,
    kin: &[crate::motion::kinematics::BodyKinematics],
    b: usize,
    m: f64,
    moment: &Vector3<f64>,
) -> f64 {
    match model.bodies[b].joint.as_ref() {
        Some(j) if m > 0.0 => {
            let joint_point = kin[b].x + kin[b].q * j.child_anchor;
            m * model.gravity.norm() * (moment / m - joint_point).norm()
        }
        _ => 0.0,
    }
}

/// Per body: the gravitational stiffness m·g·l (N·m/rad) of everything its joint does NOT
/// carry down the tree (the rest of the figure: m its mass, l the distance from the joint to
/// its COM): what the joint holds up when the figure stands on the far side of it, as a
/// stance leg's ankle, knee and hip hold the body above them (an inverted pendulum, whose
/// negative stiffness the feedback must beat). Poses in `kin`.
pub fn supported_gravity_stiffness(
    model: &Model,
    kin: &[crate::motion::kinematics::BodyKinematics],
) -> Vec<f64> {
    let (mass, moment) = subtree_mass_moments(model, kin);
    let (total, total_moment) = (mass[0], moment[0]);
    (0..model.num_bodies())
        .map(|b| {
            let rest_moment = total_moment - moment[b];
            joint_gravity_stiffness(model, kin, b, total - mass[b], &rest_moment)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::gradient::{GradientEstimator, TorqueStructure};
    use crate::sim::models::{humanoid, humanoid_state};

    /// The cheaper gradient the step uses for [`Tracking`] (it declares itself affine in
    /// the relative ω and frame-indifferent) agrees with the general central differences
    /// on every joint type, away from the targets and at different stiffnesses per DOF.
    #[test]
    fn tracking_structured_gradient_matches_central_differences() {
        let model = humanoid();
        let state = humanoid_state(
            &model,
            Vector3::new(0.5, 0.0, 0.2),
            Vector3::new(0.3, -0.6, 0.4),
        );
        let mut tr = Tracking::new(&model, &Gains::default());
        assert!(tr.affine_in_angular_velocity());
        let mut kinds = [false; 3];
        let mut own_checked = [0; 2];
        for (b, body) in model.bodies.iter().enumerate() {
            let (Some(a), Some(j)) = (body.parent, body.joint.as_ref()) else {
                continue;
            };
            kinds[j.kind as usize] = true;
            let jm = JointMotion {
                q_rel: j.rest_rel
                    * UnitQuaternion::from_scaled_axis(Vector3::new(0.2, -0.1, 0.15 * b as f64)),
                w: Vector3::new(1.0, -2.0, 0.5),
                dw: Vector3::zeros(),
            };
            tr.set_target(b, &jm);
            tr.stiffness[b] = [150.0 + b as f64, 80.0, 300.0];
            let (sa, sb) = (&state.bodies[a], &state.bodies[b]);
            let tau = |pa: &BodyState, pb: &BodyState| tr.torque(b, pa, pb, 0.0);
            let est = GradientEstimator::default();
            let central = est.torque_gradient(tau, sa, sb);
            let structure = TorqueStructure {
                affine: tr.affine_in_angular_velocity(),
                relative: tr.relative_angular_velocity_only(),
                frame_indifferent: tr.frame_indifferent(),
            };
            assert_eq!(structure, TorqueStructure::PD);
            let tau0 = tau(sa, sb);
            let fast = est.torque_gradient_structured(tau, sa, sb, &tau0, structure);
            let agree = |fast: &TorqueGradient, what: &str| {
                for k in 0..2 {
                    for (f, c) in [
                        (fast.d_theta[k], central.d_theta[k]),
                        (fast.d_omega[k], central.d_omega[k]),
                    ] {
                        let scale = c.amax().max(1.0);
                        let err = (f - c).amax();
                        assert!(
                            err < 1e-9 * scale,
                            "{what}, body {b} side {k}: {err:e} of {scale:e}"
                        );
                    }
                }
            };
            agree(&fast, "structured");
            // a ball or hinge joint's own estimate (the step's path for PD) agrees too
            let mut own = TorqueGradient::default();
            match (
                j.kind,
                tr.torque_and_gradient(b, sa, sb, 0.0, &est, &mut own),
            ) {
                (JointType::Universal, t0) => {
                    assert!(t0.is_none(), "body {b}: a universal joint has none")
                }
                (kind, Some(t0)) => {
                    assert!((t0 - tau0).amax() < 1e-12 * tau0.amax().max(1.0));
                    agree(&own, "own");
                    own_checked[kind as usize] += 1;
                }
                (_, None) => panic!("body {b}: ball and hinge joints have their own"),
            }
        }
        assert!(
            own_checked[0] >= 3 && own_checked[1] >= 1,
            "own gradients checked on {own_checked:?} ball/hinge joints"
        );
        assert_eq!(
            kinds, [true; 3],
            "ball, hinge and universal joints all checked"
        );
    }
}
