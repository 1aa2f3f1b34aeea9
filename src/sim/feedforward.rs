//! The discrete-time inverse dynamics (METHOD §6): the feedforward ψ computed along the
//! integrator's own unperturbed path, and the root targets it and the step aim at.
//!
//! ## Discrete-time feedforward (METHOD §6, beyond the thesis)
//! ψ_k is chosen so that one step from the state at t_k lands on the velocity u* that
//! takes the bodies to the reference pose at t_{k+1} (projected onto the joint
//! constraints at t_k, which the step enforces): with the step's momentum rows
//! `F(u) − Jᵀλ = rhs + h·Hᵀψ`, the generalised force `F(u*) − rhs` is split by the O(n)
//! tree sweep into Jᵀλ + Hᵀ(hψ) + J_rᵀλ_r. ψ is computed along the integrator's own
//! unperturbed path, re-targeting the reference pose every step, so the O(h²) per-step
//! mismatch between joint-space and body-space updates does not accumulate. ψ is an
//! external torque (no gradient), so it changes only the step's right-hand side: both
//! the feedforward and every simulation step factor the step, and solve it once with ψ
//! (the feedforward finds ψ from that factorisation, before the solve). The feedforward
//! thus costs one factorisation and one solve per step, as a simulation step does, and
//! an unperturbed simulation reproduces its path to the last bit.

use crate::dynamics::control::{feedforward_torque, feedforward_torque_in_frame};
use crate::dynamics::inverse::{InverseWorkspace, JointTorques, wrench_to_joint_torques_in_frames};
use crate::dynamics::kkt::{BlockTree, KktVector};
use crate::dynamics::stabilize::{Drift, assemble_projection};
use crate::dynamics::state::{BodyState, State, rotation_vector};
use crate::dynamics::step::{Root, RootTarget};
use crate::motion::kinematics::BodyKinematics;
use crate::sim::balls::ContactReport;
use crate::sim::replay::UnperturbedPath;
use crate::sim::root::RootMode;
use crate::sim::run::{SimError, Simulation, step_error};
use crate::sim::support::{FloorSplit, SupportContact, SupportSplit};
use crate::skeleton::joint::JointFrame;
use nalgebra::{UnitQuaternion, Vector3, Vector6};

/// Precomputed per-step feedforward and stiffness schedules.
#[derive(Clone, Debug)]
pub struct Feedforward {
    /// Step, s.
    pub h: f64,
    /// Per step k: ψ_k stacked per joint DOF (N·m, body-relative).
    pub psi: Vec<Vec<f64>>,
    /// Per step k: stiffness per DOF (N·m/rad), from the continuous inverse dynamics.
    pub stiffness: Vec<Vec<f64>>,
    /// Per step k: the root's support over the step (world; N·s, then N·m·s about its COM):
    /// for a pinned root what its rows gave it; for a spring-held root the impulse added
    /// with ψ (all of the "hand of god", or with `ground` the residual the floor leaves).
    pub root_impulse: Vec<Vector6<f64>>,
    /// Largest |u⁺ − u*| over the precompute (m/s or rad/s): how exactly the step with ψ
    /// lands on its target.
    pub max_landing_error: f64,
    /// Time of the worst landing, s.
    pub worst_landing_time: f64,
    /// Steps whose target velocity u* needed a projection factored at the step's start:
    /// none with [`Projection::Step`](super::run::Projection::Step) (the step's own
    /// factorisation projects), the first step with
    /// [`Projection::Mass`](super::run::Projection::Mass) (then the previous step's
    /// post-stabilisation factorisation serves), every step with other drift schemes.
    pub projections_factored: usize,
    /// Per step k: the floor contacts that carry the figure (METHOD §12.2), when the
    /// root is spring-held; empty otherwise.
    pub support: Vec<Vec<SupportContact>>,
    /// Size of the split of the root's support (METHOD §12.2), over the clip.
    pub support_split: SupportSplit,
    /// The unperturbed path this precompute took, for replaying its steps
    /// ([`crate::sim::replay`]).
    pub path: UnperturbedPath,
    /// The step the precompute (and every run with it) starts at, from the reference's
    /// state there: the steps before it are not computed (their entries above are empty)
    /// and a run records them as the reference (see [`Simulation::new_from`]).
    pub first_step: usize,
    /// Every this many steps after the first (at multiples of it), the precompute's
    /// unperturbed path restarts from the reference's state, as a precompute begun there
    /// would (0: never). Runs that start at different multiples can then share it (see
    /// [`Simulation::new_from_cancellable`]); an unperturbed run replaying it takes the
    /// restarts too (a jump of the path's distance from the reference, ~1e-6).
    pub restart_steps: usize,
}

impl Feedforward {
    /// No schedules yet, for steps of `h` s: what the run computing them starts from.
    pub(super) fn empty(h: f64) -> Self {
        Feedforward {
            h,
            psi: vec![],
            root_impulse: vec![],
            stiffness: vec![],
            max_landing_error: 0.0,
            worst_landing_time: 0.0,
            projections_factored: 0,
            support: vec![],
            support_split: SupportSplit::default(),
            path: UnperturbedPath::default(),
            first_step: 0,
            restart_steps: 0,
        }
    }

    /// Number of steps the precompute computed (from [`Feedforward::first_step`] on).
    pub fn computed_steps(&self) -> usize {
        self.psi.len().saturating_sub(self.first_step)
    }
}

/// Add ψ's joint torques (body-relative, N·m) as equal and opposite world torques on each
/// joint's two bodies at `state`; `frames`, when given, are the joints' frames at `state`
/// (the step's, [`Stepper::joint_frames`](crate::dynamics::step::Stepper::joint_frames)).
pub(super) fn add_feedforward_wrenches(
    model: &crate::skeleton::Model,
    state: &State,
    frames: Option<&[Option<JointFrame>]>,
    offsets: &[usize],
    psi: &[f64],
    out: &mut [(Vector3<f64>, Vector3<f64>)],
) {
    for (b, body) in model.bodies.iter().enumerate().skip(1) {
        let (Some(a), Some(j)) = (body.parent, body.joint.as_ref()) else {
            continue;
        };
        let off = offsets[b];
        let psi_j = &psi[off..off + j.dof()];
        let t = match frames.and_then(|f| f.get(b).copied().flatten()) {
            Some(jf) => feedforward_torque_in_frame(&jf, psi_j),
            None => feedforward_torque(model, b, &state.bodies[a], &state.bodies[b], psi_j),
        };
        out[b].1 += t;
        out[a].1 -= t;
    }
}

/// The root's target at the end of a step: the reference pose at t_{k+1}, reached with
/// the twist that carries the reference pose at t_k there in one step of `h` (x⁺ = x + h v,
/// R⁺ = exp(\[hω\]×) R), not the spline's instantaneous twist at t_{k+1}. With it the
/// unperturbed root lands exactly on its reference pose, as every other body does in the
/// discrete-time inverse dynamics, so a spring-held root meets no O(h²) defect each step
/// to pull against (it drifted ~1 mm and shook the joints by 0.3° with the spline twist).
pub(super) fn root_target(before: &BodyKinematics, after: &BodyKinematics, h: f64) -> RootTarget {
    RootTarget {
        x: after.x,
        q: after.q,
        v: (after.x - before.x) / h,
        w: rotation_vector(&(after.q * before.q.inverse())) / h,
    }
}

/// The wrench the root has to supply when every body needs `wrenches` (world; force N,
/// torque about its COM N·m) and the joints supply the rest: their sum, as force (N) and
/// torque about the root's COM (N·m). The joints' forces and torques are internal to the
/// tree, so this is the root wrench the sweep ([`wrench_to_joint_torques_in_frames`])
/// leaves, without its joint frames and 3 × 3 solves.
fn root_wrench_of(bodies: &[BodyState], wrenches: &[(Vector3<f64>, Vector3<f64>)]) -> Vector6<f64> {
    let x0 = bodies[0].x;
    let (mut f, mut t) = (Vector3::zeros(), Vector3::zeros());
    for (s, (fb, tb)) in bodies.iter().zip(wrenches) {
        f += fb;
        t += tb + (s.x - x0).cross(fb);
    }
    Vector6::new(f.x, f.y, f.z, t.x, t.y, t.z)
}

/// The constant twist (linear, then angular velocity; world) that takes a body from pose
/// `from` to pose `to` (COM position m, orientation) in `h` s.
fn secant_twist(
    from: (&Vector3<f64>, &UnitQuaternion<f64>),
    to: (&Vector3<f64>, &UnitQuaternion<f64>),
    h: f64,
) -> Vector6<f64> {
    let dv = (to.0 - from.0) / h;
    let dw = rotation_vector(&(to.1 * from.1.inverse())) / h;
    Vector6::new(dv.x, dv.y, dv.z, dw.x, dw.y, dw.z)
}

/// The right-hand side of a velocity projection on `tree`'s rows into `x`: body rows
/// zero, constraint rows −J u (a pinned root's rows: its target twist − u_root), so that a
/// solve gives the correction δ with J (u + δ) = 0 (and u_root + δ_root = the target).
/// `y` is scratch.
fn projection_rhs(
    tree: &BlockTree,
    u: &[Vector6<f64>],
    root: Option<&RootTarget>,
    y: &mut KktVector,
    x: &mut KktVector,
) {
    tree.constraint_rows(u, &mut y.rows);
    for b in 0..tree.len() {
        x.body[b] = Vector6::zeros();
        let mut r = -y.rows[b];
        if let (0, Some(t)) = (b, root) {
            r += Vector6::new(t.v.x, t.v.y, t.v.z, t.w.x, t.w.y, t.w.z);
        }
        for v in r.iter_mut().skip(tree.rows(b)) {
            *v = 0.0;
        }
        x.rows[b] = r;
    }
}

impl Simulation<'_> {
    /// Set the state's velocities (its poses the reference's at step `k` > 0) to those
    /// the unperturbed path arrives there with: each body's displacement from the
    /// reference's pose at step k − 1 over the step (the feedforward lands every step on
    /// the reference's next pose), projected onto the joints at step k in the mass metric
    /// (a spring-held root free, a pinned one on its target). The reference's own
    /// velocities there differ by (h/2)·acceleration, which a step starting from them
    /// absorbs into its ψ (18.5 N·m for one step on the demo walk): a run that crossed a
    /// restart of the feedforward's path ([`Feedforward::restart_steps`]) took that kick.
    /// Left as the secant velocities if the projection cannot be factored.
    pub(super) fn arrive_as_the_path(&mut self, k: usize) {
        let model = &self.character.model;
        let n = model.num_bodies();
        let h = self.opts.step;
        let mut before = vec![BodyKinematics::default(); n];
        self.character
            .reference
            .sample(model, (k - 1) as f64 * h, &mut self.scratch, &mut before);
        let u_hat: Vec<Vector6<f64>> = self
            .state
            .bodies
            .iter()
            .zip(&before)
            .map(|(s, b)| secant_twist((&b.x, &b.q), (&s.x, &s.q), h))
            .collect();
        let target = matches!(self.opts.root, RootMode::Pinned)
            .then(|| root_target(&before[0], &self.kin[0], h));
        let parents: Vec<Option<usize>> = model.bodies.iter().map(|b| b.parent).collect();
        let projected = BlockTree::new(&parents).ok().and_then(|mut tree| {
            assemble_projection(model, &self.state.bodies, target.as_ref(), &mut tree).ok()?;
            tree.factor_symmetric().ok()?;
            let (mut x, mut y) = (KktVector::zeros(n), KktVector::zeros(n));
            projection_rhs(&tree, &u_hat, target.as_ref(), &mut y, &mut x);
            tree.solve(&mut x).ok()?;
            Some(x.body)
        });
        for (b, s) in self.state.bodies.iter_mut().enumerate() {
            let mut u = u_hat[b];
            if let Some(d) = &projected {
                u += d[b];
            }
            s.v = Vector3::new(u[0], u[1], u[2]);
            s.w = Vector3::new(u[3], u[4], u[5]);
        }
    }

    /// The reflex joints' full-gain feedback at the present state with the present
    /// targets and stiffness (N·m; see [`UnperturbedPath::push_reflex_feedback`]).
    fn reflex_feedback_here(&self) -> impl ExactSizeIterator<Item = Vector3<f64>> + '_ {
        let bodies = &self.character.model.bodies;
        let s = &self.state.bodies;
        self.reflex_joints
            .iter()
            .map(move |&b| match bodies[b].parent {
                Some(a) => self.tracking.feedback(b, &s[a], &s[b]),
                None => Vector3::zeros(),
            })
    }

    /// The discrete-time inverse dynamics along the integrator's unperturbed path. With a
    /// spring-held root the floor takes its share of the root's support (METHOD §12.2): ψ
    /// then carries the weight through the legs, the root keeps the residual, and the
    /// floor impulses are recorded for the simulation's contacts to meet.
    pub(super) fn compute_feedforward(
        &mut self,
        keep: Option<&[std::ops::Range<usize>]>,
        cancelled: &mut dyn FnMut() -> bool,
    ) -> Result<Feedforward, SimError> {
        let model = &self.character.model;
        let n = model.num_bodies();
        let h = self.opts.step;
        let steps = self.num_steps();
        // the steps before the first are not computed: empty entries (no allocation)
        let first = self.feedforward.first_step;
        let mut psi_all = Vec::with_capacity(steps);
        psi_all.resize(first, Vec::new());
        let mut root_impulse_all = Vec::with_capacity(steps);
        root_impulse_all.resize(first, Vector6::zeros());
        let parents: Vec<Option<usize>> = model.bodies.iter().map(|b| b.parent).collect();
        let mut proj = BlockTree::new(&parents).map_err(|e| SimError::Settings(e.to_string()))?;
        let mut x = KktVector::zeros(n);
        let mut y = KktVector::zeros(n);
        let mut ws = InverseWorkspace::default();
        let mut out = JointTorques::default();
        let mut wrenches = vec![(Vector3::zeros(), Vector3::zeros()); n];
        let mut landing: f64 = 0.0;
        let mut worst_at = 0.0;
        let mut u0 = Vec::with_capacity(n);
        let mut factored = 0;
        let mut u_hat = vec![Vector6::zeros(); n];
        let mut u_star = vec![Vector6::zeros(); n];
        let mut split = FloorSplit::new(model, self.floor_height(), h);
        let spring = matches!(self.opts.root, RootMode::Spring(_));
        let mut support_all = Vec::with_capacity(if spring { steps } else { 0 });
        if spring {
            support_all.resize(first, Vec::new());
        }
        // the stiffness schedule's rows are built as the steps are prepared, from `first`
        self.feedforward.stiffness.clear();
        self.feedforward.stiffness.resize(first, Vec::new());
        // u* projected with the step's own factorisation (see `Projection`)
        let shared = self.stepper.options().post_stabilization_reuse
            && self.stepper.options().drift == Drift::PostStabilization;
        self.tracking.enabled = self.opts.feedback;
        self.reset();
        let mut path = UnperturbedPath::default();
        path.start(
            first,
            steps,
            keep,
            &self.state,
            self.contact_ws.warm_start(),
            (self.opts, self.contact),
        );
        // the state at the step's start and its poses (storage kept)
        let mut start = self.state.clone();
        let mut poses: Vec<(Vector3<f64>, UnitQuaternion<f64>)> = Vec::with_capacity(n);
        let restart = self.feedforward.restart_steps;
        for k in first..steps {
            let restarting = restart > 0 && k > first && k % restart == 0;
            if restarting {
                // from the reference again, as a precompute begun at k (see `restart_steps`)
                self.reset_from_step(k);
                split.restart();
                path.restart(&self.state, self.contact_ws.warm_start());
            }
            if k > first {
                // the state the last step led to (or its restart), with its targets
                path.push_reflex_feedback(self.reflex_feedback_here());
            }
            self.k = k;
            self.check_cancelled(cancelled)?;
            let t = k as f64 * h;
            let root = self.prepare_step();
            start.t = self.state.t;
            start.bodies.clone_from(&self.state.bodies);
            if matches!(root, Root::Free) {
                return Err(SimError::Settings(
                    "the feedforward needs the root held to its mocap path".into(),
                ));
            }
            // The step factored, not yet solved: ψ is found from its factorisation and
            // then the step is solved once with it, exactly as `step` does. (The improved
            // implicit scheme can't be split: its step with ψ = 0, u₀, is solved.)
            self.factor_step(&root, None, None, t)?;
            // u*: body displacements to the reference pose at t+h, projected onto the
            // joint rows at p_k (and a pinned root's rows: its target twist) in the metric
            // the post-stabilisation corrects in (see `Projection`). With the step's own
            // factorisation (default) that is one solve. In the mass metric, the last
            // step's post-stabilisation factored that matrix at the poses it then
            // corrected by ~1e-5 m: its factorisation projects onto rows that close to
            // p_k's, and one solve with the step's own factorisation puts u* exactly on
            // the rows the step enforces (J(p_k) u* = 0). Only without one (the first
            // step, another drift scheme, no pass needed) is a projection factored here.
            // (A spring-held root is free in the projection: holding it to its target
            // twist tracked 10× less closely, RMS 0.00018° → 0.0018°.)
            for ((u, s), k) in u_hat.iter_mut().zip(&start.bodies).zip(&self.kin) {
                *u = secant_twist((&s.x, &s.q), (&k.x, &k.q), h);
            }
            // (none at the precompute's first step or a restart: as a precompute begun there)
            let fresh = k == first || restarting;
            let last = (!fresh && !shared)
                .then(|| self.stepper.post_stabilization_factor())
                .flatten();
            let metric = match last {
                Some(f) => f,
                None if shared => self.stepper.kkt(),
                None => {
                    factored += 1;
                    assemble_projection(model, &start.bodies, root.target(), &mut proj)
                        .map_err(|e| SimError::Settings(e.to_string()))?;
                    proj.factor_symmetric()
                        .map_err(|e| SimError::Settings(e.to_string()))?;
                    &proj
                }
            };
            let singular = |e: crate::dynamics::kkt::KktError| {
                SimError::Settings(format!("feedforward projection at t = {t:.4} s: {e}"))
            };
            projection_rhs(metric, &u_hat, root.target(), &mut y, &mut x);
            metric.solve(&mut x).map_err(singular)?;
            for b in 0..n {
                u_star[b] = u_hat[b] + x.body[b];
            }
            if last.is_some() {
                let step = self.stepper.kkt();
                projection_rhs(step, &u_star, root.target(), &mut y, &mut x);
                step.solve(&mut x).map_err(singular)?;
                for (u, d) in u_star.iter_mut().zip(&x.body) {
                    *u += d;
                }
            }
            // F(u*) − rhs, F(u) = A u − G ω + N(ω) (rotational rows in momentum form):
            // the impulse the step needs to land on u*, of which the sweep below gives the
            // joint rows their share (Jᵀλ) and ψ the rest. (The improved scheme: F(u*) −
            // F(u₀), from its own solve.)
            if self.stepper.options().drift == Drift::ImprovedImplicit {
                // the improved scheme's velocities come from its second stage: its own
                // converged solve, and N taken at both ends
                self.stepper
                    .converged_velocities(&mut u0)
                    .map_err(|e| step_error(self.character, e, t))?;
                for (b, us) in u_star.iter().enumerate() {
                    x.body[b] = us - u0[b];
                }
                self.stepper.kkt().momentum_rows(&x.body, &mut y.body);
                for b in 0..n {
                    let s = &start.bodies[b];
                    let iw = s.world_inertia(&model.bodies[b].inertia);
                    let (_, gj) = crate::dynamics::step::gyro_n_and_jacobian(h, &iw, &s.w);
                    let nn = |w: &Vector3<f64>| {
                        let l = iw * w;
                        UnitQuaternion::from_scaled_axis(w * h) * l - l - gj * w
                    };
                    let ws_ = Vector3::new(u_star[b][3], u_star[b][4], u_star[b][5]);
                    let w0 = Vector3::new(u0[b][3], u0[b][4], u0[b][5]);
                    let rot = nn(&ws_) - nn(&w0);
                    for k in 0..3 {
                        y.body[b][3 + k] += rot[k];
                    }
                }
            } else {
                self.stepper
                    .momentum_to_reach(&u_star, &mut y.body)
                    .map_err(|e| step_error(self.character, e, t))?;
            }
            for (w, g) in wrenches.iter_mut().zip(&y.body) {
                *w = (
                    Vector3::new(g[0], g[1], g[2]) / h,
                    Vector3::new(g[3], g[4], g[5]) / h,
                );
            }
            poses.clear();
            poses.extend(start.bodies.iter().map(|s| (s.x, s.q)));
            let split_error =
                |e| SimError::Settings(format!("floor support split at t = {t:.4} s: {e}"));
            // what `step`'s contact phase reports (none with a pinned root: no floor)
            let mut report = ContactReport::default();
            if !spring {
                self.contact_ws.clear_touching();
            }
            let psi = if !spring {
                // the joints' frames at p_k, as the step's rows were built from them
                let frames = self.stepper.joint_frames();
                wrench_to_joint_torques_in_frames(model, frames, &wrenches, &mut ws, &mut out);
                let psi = out.tau.clone();
                // The real step with ψ (the improved implicit scheme's stages can't be
                // re-solved: a full step).
                if self.stepper.options().drift == Drift::ImprovedImplicit {
                    self.factor_step(&root, Some(&psi), None, t)?;
                } else {
                    self.solve_with_feedforward(Some(&psi), None, t)?;
                    // the root rows' impulse converged, as `finish` would leave it (the
                    // same iterations: the path is unchanged)
                    self.stepper
                        .converge()
                        .map_err(|e| step_error(self.character, e, t))?;
                }
                // the split's size only (the pinned root keeps carrying the figure)
                let hand_of_god = self.stepper.root_impulse();
                split
                    .at(&poses, &u_star, &hand_of_god)
                    .map_err(split_error)?;
                split.record(&hand_of_god, &hand_of_god, false);
                root_impulse_all.push(hand_of_god);
                psi
            } else {
                // The spring-held root: what the sweep leaves at the root is the hand of
                // god; the floor takes its share at the support points (their impulses
                // external to the tree), and the joints supply the rest of the wrenches:
                // ψ = sweep(W − floor), the root keeps the residual.
                let hand_of_god = root_wrench_of(&start.bodies, &wrenches) * h;
                let mut support = split
                    .at(&poses, &u_star, &hand_of_god)
                    .map_err(split_error)?;
                let standing = self.ground.is_some();
                if standing {
                    for (w, f) in wrenches.iter_mut().zip(&split.wrenches) {
                        w.0 -= f.0;
                        w.1 -= f.1;
                    }
                } else {
                    support.clear();
                }
                wrench_to_joint_torques_in_frames(
                    model,
                    self.stepper.joint_frames(),
                    &wrenches,
                    &mut ws,
                    &mut out,
                );
                let residual = out.root_wrench() * h;
                let psi = out.tau.clone();
                // Then the step exactly as `step` takes it: solved with ψ and the root's
                // residual, the floor's impulses from the contact LCP (which meets the
                // support points on the surfaces they move on), so an unperturbed run
                // reproduces this path to the last bit.
                self.solve_with_feedforward(Some(&psi), Some(&residual), t)?;
                report = self.floor_contacts(&support, t)?;
                split.record(&hand_of_god, &residual, standing);
                root_impulse_all.push(residual);
                if standing {
                    support_all.push(support);
                }
                psi
            };
            self.stepper
                .finish(model, &mut self.state, &root)
                .map_err(|e| step_error(self.character, e, t))?;
            path.push(
                &self.state,
                self.contact_ws.warm_start(),
                self.contact_ws.touching(),
                report,
            );
            for (b, us) in u_star.iter().enumerate() {
                let e = (self.state.bodies[b].twist() - us).amax();
                if e > landing {
                    landing = e;
                    worst_at = t;
                }
            }
            psi_all.push(psi);
        }
        if steps > first {
            path.push_reflex_feedback(self.reflex_feedback_here());
        }
        let mut ff = std::mem::replace(&mut self.feedforward, Feedforward::empty(h));
        ff.psi = psi_all;
        ff.root_impulse = root_impulse_all;
        ff.max_landing_error = landing;
        ff.worst_landing_time = worst_at;
        ff.projections_factored = factored;
        ff.support = support_all;
        ff.support_split = split.summary();
        ff.path = path;
        Ok(ff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::inverse::wrench_to_joint_torques;
    use crate::motion::reference::ReferenceScratch;
    use crate::{Character, CharacterOptions};

    /// The root wrench summed over the bodies is the one the tree's sweep leaves at the
    /// root, for wrenches on every body of the demo walk's pose.
    #[test]
    fn the_summed_root_wrench_is_the_sweeps() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mocap/demo_walk.bvh");
        let c = Character::load(&path, &CharacterOptions::default()).expect("demo walk");
        let model = &c.model;
        let n = model.num_bodies();
        let mut kin = vec![BodyKinematics::default(); n];
        c.reference
            .sample(model, 0.7, &mut ReferenceScratch::default(), &mut kin);
        let state = State::from_kinematics(&kin, 0.7);
        // deterministic wrenches of tens of N and N·m
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 80.0 - 40.0
        };
        let wrenches: Vec<_> = (0..n)
            .map(|_| {
                (
                    Vector3::new(next(), next(), next()),
                    Vector3::new(next(), next(), next()),
                )
            })
            .collect();
        let q: Vec<_> = state.bodies.iter().map(|b| b.q).collect();
        let (mut ws, mut out) = (InverseWorkspace::default(), JointTorques::default());
        wrench_to_joint_torques(model, &q, &wrenches, &mut ws, &mut out);
        let swept = out.root_wrench();
        let summed = root_wrench_of(&state.bodies, &wrenches);
        let miss = (summed - swept).amax();
        assert!(swept.amax() > 10.0, "the root carries {swept}");
        assert!(
            miss < 1e-11 * swept.amax(),
            "summed {summed} vs swept {swept}"
        );
    }
}
