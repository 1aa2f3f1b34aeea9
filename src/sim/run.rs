//! Running a character through its clip under physics (METHOD §6–§8): the discrete-time
//! feedforward, the tracking controller, the linearly implicit step with the root pinned
//! to the mocap path, and the recorded trajectory with its tracking errors.
//!
//! ## Discrete-time feedforward (METHOD §6, beyond the thesis)
//! ψ_k is chosen so that one step from the state at t_k lands on the velocity u* that
//! takes the bodies to the reference pose at t_{k+1} (projected onto the joint
//! constraints at t_k, which the step enforces): with the step's momentum rows
//! `F(u) − Jᵀλ = rhs + h·Hᵀψ`, the generalised force `F(u*) − F(u₀)` (u₀: the same step
//! with ψ = 0) is split by the O(n) tree sweep into Jᵀλ + Hᵀ(hψ) + J_rᵀλ_r. ψ is computed
//! along the integrator's own unperturbed path, re-targeting the reference pose every
//! step, so the O(h²) per-step mismatch between joint-space and body-space updates does
//! not accumulate. ψ is an external torque (no gradient), so it changes only the step's
//! right-hand side: both the feedforward and every simulation step solve with ψ = 0 and
//! then add ψ by re-solving with the same factorisation. The feedforward thus costs one
//! factorisation per step, not two, and an unperturbed simulation reproduces its path to
//! the last bit.

use crate::Character;
use crate::dynamics::control::{Gains, Tracking, feedforward_torque};
use crate::dynamics::inverse::{InverseWorkspace, JointTorques, wrench_to_joint_torques};
use crate::dynamics::kkt::{BlockTree, KktVector};
use crate::dynamics::stabilize::{Drift, assemble_projection};
use crate::dynamics::state::{BodyState, State};
use crate::dynamics::step::{Root, RootTarget, StepError, StepOptions, Stepper};
use crate::motion::kinematics::{BodyKinematics, JointMotion};
use crate::motion::reference::{JointTargets, ReferenceScratch};
use crate::sim::balance::{Balance, FallOptions, extrapolated_com};
use crate::sim::balls::{
    Ball, ContactOptions, ContactReport, ContactWorkspace, WarmStart, contact_phase_with_floor,
    launch_balls,
};
use crate::sim::ground::{Ground, foot_slip};
use crate::sim::root::{RootMode, SpringScale, SpringTuning};
use crate::sim::support::{ClipFloor, FloorSplit, SupportContact, SupportSplit};
use crate::sim::{BallTrack, BodyPose, Trajectory};
use nalgebra::{UnitQuaternion, Vector3, Vector6};

/// Settings of a simulation run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimOptions {
    /// Time step h, s.
    pub step: f64,
    /// Feedback gains.
    pub gains: Gains,
    /// Constraint-drift control.
    pub drift: Drift,
    /// Apply the feedforward ψ.
    pub feedforward: bool,
    /// Apply the PD feedback γ.
    pub feedback: bool,
    /// How the root is held: by a spring toward its mocap path (default, METHOD §12.3),
    /// or pinned to it (the thesis).
    pub root: RootMode,
    /// With a spring-held root: the character stands on the floor (default; METHOD
    /// §12.2–12.3), its feet carrying the weight the reference implies and every capsule
    /// end kept above the floor; otherwise the root spring carries all of it.
    pub ground: bool,
    /// Standing on the floor: when a hit puts the character out of balance it falls
    /// (METHOD §12.4).
    pub falls: FallOptions,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            step: 1.0 / 240.0,
            gains: Gains::default(),
            drift: Drift::PostStabilization,
            feedforward: true,
            feedback: true,
            root: RootMode::Spring(SpringTuning::default()),
            ground: true,
            falls: FallOptions::default(),
        }
    }
}

/// Why a simulation stopped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The step failed (blow-up, NaN, singular system) — names the time and body.
    #[error("{path}: simulation failed at t = {t:.4} s (body `{body}`): {source}")]
    Step {
        /// Clip file.
        path: String,
        /// Time, s.
        t: f64,
        /// Body name (or `-`).
        body: String,
        /// Cause.
        source: StepError,
    },
    /// Bad settings.
    #[error("invalid simulation settings: {0}")]
    Settings(String),
    /// The contact solver failed.
    #[error("{path}: {source}")]
    Contact {
        /// Clip file.
        path: String,
        /// Cause.
        source: crate::sim::balls::ContactError,
    },
}

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
    /// Per step k: the floor contacts that carry the figure (METHOD §12.2), when the
    /// root is spring-held; empty otherwise.
    pub support: Vec<Vec<SupportContact>>,
    /// Size of the split of the root's support (METHOD §12.2), over the clip.
    pub support_split: SupportSplit,
}

/// Per-step record of a run.
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// Step end times, s.
    pub times: Vec<f64>,
    /// Body poses at each step end.
    pub poses: Vec<Vec<BodyPose>>,
    /// Per step: RMS over joints of the joint-angle error vs the reference, degrees.
    pub rms_error_deg: Vec<f64>,
    /// Per step: largest joint-angle error and its body, degrees.
    pub max_error_deg: Vec<(f64, usize)>,
    /// Per step: largest joint separation, m.
    pub constraint_error_m: Vec<f64>,
    /// Per step: distance of the root's COM from its reference position, m.
    pub root_offset_m: Vec<f64>,
    /// Per step: angle between the root's orientation and its reference, degrees.
    pub root_tilt_deg: Vec<f64>,
    /// Per step: every ball's centre (m), `None` before launch.
    pub balls: Vec<Vec<Option<Vector3<f64>>>>,
    /// Per step: the contact phase's report.
    pub contacts: Vec<ContactReport>,
    /// Per step: the deepest any capsule end lies below the floor beyond where the
    /// reference puts it, m (spring-held root; empty otherwise).
    pub ground_penetration_m: Vec<f64>,
    /// Per step: the horizontal offset from the reference (m) of each capsule end the
    /// reference supports (spring-held root; empty otherwise). See [`Record::foot_slip_m`].
    pub support_offsets: Vec<Vec<(usize, [f64; 2])>>,
}

impl Record {
    /// Largest horizontal drift of a foot while the reference holds it planted, m.
    pub fn foot_slip_m(&self) -> f64 {
        foot_slip(&self.support_offsets)
    }

    /// Deepest ground penetration of the run, m.
    pub fn max_ground_penetration_m(&self) -> f64 {
        self.ground_penetration_m
            .iter()
            .copied()
            .fold(0.0, f64::max)
    }

    /// The largest joint-angle error of the run: (step index, degrees, body).
    pub fn peak_error(&self) -> (usize, f64, usize) {
        self.max_error_deg
            .iter()
            .enumerate()
            .fold(
                (0, 0.0, 0),
                |acc, (k, x)| if x.0 > acc.1 { (k, x.0, x.1) } else { acc },
            )
    }
}

/// Everything a [`Simulation`] needs to continue from step `k` exactly as an
/// uninterrupted run would (the rest of its fields are per-step scratch or constant).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// State of every body at t = k·h.
    pub state: State,
    /// Step index of `state`.
    pub k: usize,
    /// The balls at that step (flight state and hits so far).
    pub balls: Vec<Ball>,
    /// The balance watch and, once fallen, the protective pose.
    balance: Balance,
    protective: Option<ProtectivePose>,
    /// The contact LCP's active set the next step tries first.
    contact_warm_start: Option<WarmStart>,
}

/// What the PD controller holds once the character has let go (METHOD §12.4): the pose
/// it was in, at a fraction of the stiffness it had.
#[derive(Clone, Debug, PartialEq)]
struct ProtectivePose {
    targets: Vec<JointMotion>,
    stiffness: Vec<[f64; 3]>,
}

/// The simulation of one character.
pub struct Simulation<'c> {
    /// The character (model, reference).
    pub character: &'c Character,
    /// Settings.
    pub opts: SimOptions,
    /// Current state.
    pub state: State,
    /// Step index of `state` (t = k·h).
    pub k: usize,
    /// Feedforward schedule.
    pub feedforward: Feedforward,
    /// What happened so far.
    pub record: Record,
    /// Thrown balls (their current state and hits).
    pub balls: Vec<Ball>,
    /// Contact settings (ground height: [`Simulation::floor_height`]).
    pub contact: ContactOptions,
    contact_ws: ContactWorkspace,
    stepper: Stepper,
    tracking: Tracking,
    scratch: ReferenceScratch,
    kin: Vec<BodyKinematics>,
    targets: JointTargets,
    external: Vec<(Vector3<f64>, Vector3<f64>)>,
    /// The wrenches of ψ_k alone (added by re-solving the step, see [`Self::step`]).
    feedforward_wrench: Vec<(Vector3<f64>, Vector3<f64>)>,
    offsets: Vec<usize>,
    spring_scale: SpringScale,
    /// The character's floor contacts (spring-held root only).
    ground: Option<Ground>,
    /// Watches for a loss of balance (standing runs).
    balance: Balance,
    /// Once the character has let go: the pose its joints hold.
    protective: Option<ProtectivePose>,
}

/// Add ψ's joint torques (body-relative, N·m) as equal and opposite world torques on each
/// joint's two bodies at `state`.
fn add_feedforward_wrenches(
    model: &crate::skeleton::Model,
    state: &State,
    offsets: &[usize],
    psi: &[f64],
    out: &mut [(Vector3<f64>, Vector3<f64>)],
) {
    for (b, body) in model.bodies.iter().enumerate().skip(1) {
        let (Some(a), Some(j)) = (body.parent, body.joint.as_ref()) else {
            continue;
        };
        let off = offsets[b];
        let t = feedforward_torque(
            model,
            b,
            &state.bodies[a],
            &state.bodies[b],
            &psi[off..off + j.dof()],
        );
        out[b].1 += t;
        out[a].1 -= t;
    }
}

/// The root's target at the end of a step: the reference pose at t_{k+1}, reached with
/// the twist that carries the reference pose at t_k there in one step of `h` (x⁺ = x + h v,
/// R⁺ = exp([hω]×) R), not the spline's instantaneous twist at t_{k+1}. With it the
/// unperturbed root lands exactly on its reference pose, as every other body does in the
/// discrete-time inverse dynamics, so a spring-held root meets no O(h²) defect each step
/// to pull against (it drifted ~1 mm and shook the joints by 0.3° with the spline twist).
fn root_target(before: &BodyKinematics, after: &BodyKinematics, h: f64) -> RootTarget {
    RootTarget {
        x: after.x,
        q: after.q,
        v: (after.x - before.x) / h,
        w: (after.q * before.q.inverse()).scaled_axis() / h,
    }
}

fn step_error(c: &Character, e: StepError, t: f64) -> SimError {
    let body = match &e {
        StepError::NonFinite { body, .. } | StepError::Exploded { body, .. } => c
            .model
            .bodies
            .get(*body)
            .map_or("-".to_string(), |b| b.name.clone()),
        _ => "-".to_string(),
    };
    SimError::Step {
        path: c.path.display().to_string(),
        t,
        body,
        source: e,
    }
}

impl<'c> Simulation<'c> {
    /// Prepare a run: computes the feedforward (discrete-time inverse dynamics) first.
    pub fn new(character: &'c Character, opts: SimOptions) -> Result<Self, SimError> {
        if !(opts.step > 0.0 && opts.step <= 0.05) {
            return Err(SimError::Settings(format!(
                "step {} s must be in (0, 0.05]",
                opts.step
            )));
        }
        opts.falls.validate().map_err(SimError::Settings)?;
        if let RootMode::Spring(tuning) = &opts.root {
            tuning.validate().map_err(SimError::Settings)?;
            if opts.drift == Drift::ImprovedImplicit {
                return Err(SimError::Settings(
                    "a spring-held root needs --drift post, baumgarte or none".into(),
                ));
            }
        }
        // The feedforward is the discrete inverse dynamics of the figure held as it will be
        // run (pinned, or spring-held and standing on the floor): computed through the
        // same step, so an unperturbed run reproduces it.
        let floor = {
            let (c, mut scratch) = (character, ReferenceScratch::default());
            ClipFloor::of(
                &c.model,
                |t, kin| c.reference.sample(&c.model, t, &mut scratch, kin),
                c.reference.duration,
            )
        };
        let mut sim = Self::bare(character, opts, None, &floor)?;
        let ff = sim.compute_feedforward()?;
        let mut sim = Self::bare(character, opts, Some(ff), &floor)?;
        sim.reset();
        Ok(sim)
    }

    /// A simulation on `floor` (balls bounce on it and, with a spring-held root and
    /// `ground`, the character stands on it) with the feedforward `ff`, or with only the
    /// stiffness schedule when `ff` is `None` (for computing the feedforward).
    fn bare(
        character: &'c Character,
        opts: SimOptions,
        ff: Option<Feedforward>,
        floor: &ClipFloor,
    ) -> Result<Self, SimError> {
        let model = &character.model;
        let step_opts = StepOptions {
            h: opts.step,
            drift: opts.drift,
            ..Default::default()
        };
        let stepper = Stepper::new(model, step_opts).map_err(|e| step_error(character, e, 0.0))?;
        let n = model.num_bodies();
        // The figure at t = 0 scales the gravity stiffness floor and the root spring.
        let mut kin0 = vec![BodyKinematics::default(); n];
        character
            .reference
            .sample(model, 0.0, &mut ReferenceScratch::default(), &mut kin0);
        let feedforward = match ff {
            Some(f) => f,
            None => {
                let table = character.inverse_dynamics(opts.step);
                let mut grav = crate::dynamics::control::gravity_stiffness(model, &kin0);
                if opts.ground && matches!(opts.root, RootMode::Spring(_)) {
                    // Standing, the joints from the feet up carry the rest of the figure
                    // (an inverted pendulum): their feedback must be stiffer than its
                    // gravity, or the smallest push grows (a 10 g ball tipped the demo
                    // walk's feet by 57°).
                    let held = crate::dynamics::control::supported_gravity_stiffness(model, &kin0);
                    for (b, g) in grav.iter_mut().enumerate() {
                        if floor.standing[b] {
                            *g = g.max(held[b]);
                        }
                    }
                }
                let offsets = model.dof_offsets();
                let mut floor = vec![opts.gains.k_0; model.joint_dofs()];
                for (b, body) in model.bodies.iter().enumerate() {
                    if let Some(j) = &body.joint {
                        for i in 0..j.dof() {
                            floor[offsets[b] + i] += opts.gains.k_g * grav[b];
                        }
                    }
                }
                let stiffness = table
                    .tau
                    .iter()
                    .map(|tau| {
                        tau.iter()
                            .zip(&floor)
                            .map(|(t, f)| opts.gains.k_s * t.abs() + f)
                            .collect()
                    })
                    .collect();
                Feedforward {
                    h: opts.step,
                    psi: vec![],
                    root_impulse: vec![],
                    stiffness,
                    max_landing_error: 0.0,
                    worst_landing_time: 0.0,
                    support: vec![],
                    support_split: SupportSplit::default(),
                }
            }
        };
        let spring_scale = SpringScale::of(model, &kin0);
        let mut tracking = Tracking::new(model, &opts.gains);
        tracking.enabled = opts.feedback;
        let mut sim = Simulation {
            character,
            opts,
            state: State {
                bodies: vec![BodyState::default(); n],
                t: 0.0,
            },
            k: 0,
            feedforward,
            record: Record::default(),
            balls: vec![],
            contact: ContactOptions::default(),
            contact_ws: ContactWorkspace::default(),
            stepper,
            tracking,
            scratch: ReferenceScratch::default(),
            kin: vec![BodyKinematics::default(); n],
            targets: JointTargets::default(),
            external: vec![(Vector3::zeros(), Vector3::zeros()); n],
            feedforward_wrench: vec![(Vector3::zeros(), Vector3::zeros()); n],
            offsets: model.dof_offsets(),
            spring_scale,
            ground: (opts.ground && matches!(opts.root, RootMode::Spring(_)))
                .then(|| Ground::new(model, floor.height)),
            balance: Balance::default(),
            protective: None,
        };
        sim.contact.ground_y = Some(floor.height);
        sim.reset();
        Ok(sim)
    }

    /// The clip's floor (METHOD §12.1, [`ClipFloor`]), m.
    pub fn floor_height(&self) -> f64 {
        self.contact.ground_y.unwrap_or(0.0)
    }

    /// Add a ball to the run (before or during it).
    pub fn throw(&mut self, ball: Ball) {
        self.balls.push(ball);
    }

    /// Back to t = 0 on the reference, with an empty record and balls not yet launched.
    pub fn reset(&mut self) {
        for b in self.balls.iter_mut() {
            let aimed_at = b.aimed_at;
            *b = Ball::new(b.params, b.launch_t, b.launch_x, b.launch_v);
            b.aimed_at = aimed_at;
        }
        let model = &self.character.model;
        self.character
            .reference
            .sample(model, 0.0, &mut self.scratch, &mut self.kin);
        self.state = State::from_kinematics(&self.kin, 0.0);
        self.k = 0;
        self.record = Record::default();
        self.balance = Balance::default();
        self.protective = None;
        self.contact_ws.set_warm_start(None);
    }

    /// The state needed to resume from the current step (see [`Simulation::restore`]).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            state: self.state.clone(),
            k: self.k,
            balls: self.balls.clone(),
            balance: self.balance.clone(),
            protective: self.protective.clone(),
            contact_warm_start: self.contact_ws.warm_start().cloned(),
        }
    }

    /// Go back to a snapshot taken from this run: the state, step index and balls are
    /// restored and the record is cut to the snapshot's `k` steps, so stepping on from
    /// here reproduces an uninterrupted run bit for bit. A snapshot ahead of the record
    /// (not taken from this run) leaves the record as it is.
    pub fn restore(&mut self, snapshot: &Snapshot) {
        self.state = snapshot.state.clone();
        self.k = snapshot.k;
        // the reference at the state's time, as stepping there would have left it
        let model = &self.character.model;
        let t = self.time().min(self.character.reference.duration);
        self.character
            .reference
            .sample(model, t, &mut self.scratch, &mut self.kin);
        self.balls = snapshot.balls.clone();
        self.balance = snapshot.balance.clone();
        self.protective = snapshot.protective.clone();
        self.contact_ws
            .set_warm_start(snapshot.contact_warm_start.clone());
        let r = &mut self.record;
        let k = snapshot.k;
        r.times.truncate(k);
        r.poses.truncate(k);
        r.rms_error_deg.truncate(k);
        r.max_error_deg.truncate(k);
        r.constraint_error_m.truncate(k);
        r.root_offset_m.truncate(k);
        r.root_tilt_deg.truncate(k);
        r.balls.truncate(k);
        r.contacts.truncate(k);
        r.ground_penetration_m.truncate(k);
        r.support_offsets.truncate(k);
    }

    /// Number of steps in the clip.
    pub fn num_steps(&self) -> usize {
        (self.character.reference.duration / self.opts.step).floor() as usize
    }

    /// Time of the state, s.
    pub fn time(&self) -> f64 {
        self.k as f64 * self.opts.step
    }

    /// Set controller targets/stiffness for step k (→ k+1) and the reference at t_{k+1}
    /// in `self.kin`. Returns the root target.
    fn prepare_step(&mut self) -> Root {
        let model = &self.character.model;
        let t1 = (self.k + 1) as f64 * self.opts.step;
        let reference = &self.character.reference;
        // self.kin holds the reference at t_k (the state's time) until it is resampled
        let before = self.kin[0];
        reference.sample(model, t1, &mut self.scratch, &mut self.kin);
        reference.joint_targets(model, t1, &mut self.scratch, &mut self.targets);
        let sched = self.feedforward.stiffness.get(
            self.k
                .min(self.feedforward.stiffness.len().saturating_sub(1)),
        );
        if let Some(p) = &self.protective {
            // fallen: the joints hold the protective pose and the root is free
            for b in 1..model.num_bodies() {
                self.tracking.set_target(b, &p.targets[b]);
                self.tracking.stiffness[b] = p.stiffness[b];
            }
            return Root::Free;
        }
        for (b, body) in model.bodies.iter().enumerate().skip(1) {
            let jm = JointMotion {
                q_rel: self.targets.q_rel[b],
                w: self.targets.w_rel[b],
                dw: Vector3::zeros(),
            };
            self.tracking.set_target(b, &jm);
            if let (Some(s), Some(j)) = (sched, body.joint.as_ref()) {
                for i in 0..j.dof() {
                    self.tracking.stiffness[b][i] = s[self.offsets[b] + i];
                }
            }
        }
        let target = root_target(&before, &self.kin[0], self.opts.step);
        match &self.opts.root {
            RootMode::Pinned => Root::Pinned(target),
            // the root's feedforward impulse comes with ψ (see `add_feedforward`)
            RootMode::Spring(tuning) => {
                Root::Spring(self.spring_scale.spring(tuning, target, Vector6::zeros()))
            }
        }
    }

    /// External wrenches of the step: `extra` (world; per body force N, torque about the
    /// COM N·m), plus ψ_k's joint torques when `psi` is given.
    fn fill_external(
        &mut self,
        psi: Option<&[f64]>,
        extra: Option<&[(Vector3<f64>, Vector3<f64>)]>,
    ) {
        for (b, e) in self.external.iter_mut().enumerate() {
            *e = extra.map_or((Vector3::zeros(), Vector3::zeros()), |x| x[b]);
        }
        if let Some(psi) = psi {
            let model = &self.character.model;
            add_feedforward_wrenches(model, &self.state, &self.offsets, psi, &mut self.external);
        }
    }

    /// Phase 1 of a step: prepare and solve with the tracking torques and `extra` only
    /// (ψ follows in [`add_feedforward`](Self::add_feedforward)); with the improved
    /// implicit scheme, whose stages can't be re-solved, with ψ as well.
    fn solve_without_feedforward(
        &mut self,
        root: &Root,
        psi: Option<&[f64]>,
        extra: Option<&[(Vector3<f64>, Vector3<f64>)]>,
        t: f64,
    ) -> Result<(), SimError> {
        let improved = self.stepper.options().drift == Drift::ImprovedImplicit;
        self.fill_external(psi.filter(|_| improved), extra);
        let model = &self.character.model;
        self.stepper
            .prepare(
                model,
                &self.state,
                root,
                &self.tracking,
                Some(&self.external),
            )
            .map_err(|e| step_error(self.character, e, t))?;
        self.stepper
            .solve(model, &self.state, root)
            .map_err(|e| step_error(self.character, e, t))
    }

    /// Phase 2 of a step: add ψ_k by re-solving with the step's factorisation (ψ changes
    /// only the right-hand side). The feedforward is computed through exactly these two
    /// phases, so an unperturbed run reproduces its path to the last bit: without
    /// feedback the open-loop figure amplifies any difference (~25/s on a light collar
    /// bone), and a fresh solve with ψ, equal only to the chord iterations' tolerance,
    /// diverged within a second.
    /// With a spring-held root, the root's share of the feedforward (`root_impulse`, world;
    /// N·s, N·m·s about its COM) is added the same way.
    fn add_feedforward(
        &mut self,
        psi: Option<&[f64]>,
        root_impulse: Option<&Vector6<f64>>,
        t: f64,
    ) -> Result<(), SimError> {
        if (psi.is_none() && root_impulse.is_none())
            || self.stepper.options().drift == Drift::ImprovedImplicit
        {
            return Ok(()); // nothing to add, or already in the solve
        }
        for e in self.feedforward_wrench.iter_mut() {
            *e = (Vector3::zeros(), Vector3::zeros());
        }
        let model = &self.character.model;
        if let Some(psi) = psi {
            add_feedforward_wrenches(
                model,
                &self.state,
                &self.offsets,
                psi,
                &mut self.feedforward_wrench,
            );
        }
        if let Some(r) = root_impulse {
            let h = self.opts.step;
            self.feedforward_wrench[0].0 += Vector3::new(r[0], r[1], r[2]) / h;
            self.feedforward_wrench[0].1 += Vector3::new(r[3], r[4], r[5]) / h;
        }
        self.stepper
            .resolve_with_external(&self.feedforward_wrench)
            .map_err(|e| step_error(self.character, e, t))
    }

    /// The contact phase of a step: the balls, and with a spring-held root the floor under
    /// the character (the reference's `support` contacts of the step among them).
    fn floor_contacts(
        &mut self,
        support: &[SupportContact],
        t: f64,
    ) -> Result<ContactReport, SimError> {
        let model = &self.character.model;
        let h = self.opts.step;
        let let_go = self.protective.is_some();
        let floor = match &mut self.ground {
            Some(g) => g.rows(
                &self.state,
                self.stepper.velocities(),
                &self.kin,
                support,
                let_go,
                h,
            ),
            None => &[],
        };
        if self.balls.is_empty() && floor.is_empty() {
            return Ok(ContactReport::default());
        }
        launch_balls(&mut self.balls, t, h, &model.gravity);
        contact_phase_with_floor(
            model,
            &self.state,
            &mut self.stepper,
            &mut self.balls,
            floor,
            &self.contact,
            t,
            h,
            &mut self.contact_ws,
        )
        .map_err(|e| SimError::Contact {
            path: self.character.path.display().to_string(),
            source: e,
        })
    }

    /// The discrete-time inverse dynamics along the integrator's unperturbed path. With a
    /// spring-held root the floor takes its share of the root's support (METHOD §12.2): ψ
    /// then carries the weight through the legs, the root keeps the residual, and the
    /// floor impulses are recorded for the simulation's contacts to meet.
    fn compute_feedforward(&mut self) -> Result<Feedforward, SimError> {
        let model = &self.character.model;
        let n = model.num_bodies();
        let h = self.opts.step;
        let steps = self.num_steps();
        let mut psi_all = Vec::with_capacity(steps);
        let mut root_impulse_all = Vec::with_capacity(steps);
        let parents: Vec<Option<usize>> = model.bodies.iter().map(|b| b.parent).collect();
        let mut proj = BlockTree::new(&parents).map_err(|e| SimError::Settings(e.to_string()))?;
        let mut x = KktVector::zeros(n);
        let mut y = KktVector::zeros(n);
        let mut ws = InverseWorkspace::default();
        let mut out = JointTorques::default();
        let mut wrenches = vec![(Vector3::zeros(), Vector3::zeros()); n];
        let mut landing: f64 = 0.0;
        let mut worst_at = 0.0;
        let mut split = FloorSplit::new(model, self.floor_height(), h);
        let spring = matches!(self.opts.root, RootMode::Spring(_));
        let mut support_all = Vec::with_capacity(if spring { steps } else { 0 });
        self.tracking.enabled = self.opts.feedback;
        self.reset();
        for k in 0..steps {
            self.k = k;
            let t = k as f64 * h;
            let root = self.prepare_step();
            let start = self.state.clone();
            // u*: body displacements to the reference pose at t+h, projected onto the
            // joint constraints at p_k (root rows: the root target twist).
            let target = match &root {
                Root::Pinned(t) => *t,
                // re-targeted from where the root is: the stabilisation moves a free root
                // by round-off each step, and a target that didn't see it let the whole
                // figure drift (0.0017° per step on the demo walk)
                Root::Spring(s) => RootTarget {
                    v: (s.target.x - start.bodies[0].x) / h,
                    w: (s.target.q * start.bodies[0].q.inverse()).scaled_axis() / h,
                    ..s.target
                },
                Root::Free => {
                    return Err(SimError::Settings(
                        "the feedforward needs the root held to its mocap path".into(),
                    ));
                }
            };
            assemble_projection(model, &start.bodies, Some(&target), &mut proj)
                .map_err(|e| SimError::Settings(e.to_string()))?;
            for b in 0..n {
                let s = &start.bodies[b];
                let dv = (self.kin[b].x - s.x) / h;
                let dw = (self.kin[b].q * s.q.inverse()).scaled_axis() / h;
                x.body[b] = Vector6::new(dv.x, dv.y, dv.z, dw.x, dw.y, dw.z);
                x.rows[b] = Vector6::zeros();
            }
            proj.apply(&x, &mut y); // y.rows = J û
            let u_hat = x.body.clone();
            for b in 0..n {
                x.body[b] = Vector6::zeros();
                let c = proj.rows(b);
                let mut r = -y.rows[b];
                if b == 0 {
                    r = Vector6::new(
                        target.v.x, target.v.y, target.v.z, target.w.x, target.w.y, target.w.z,
                    ) - y.rows[0];
                }
                for i in c..6 {
                    r[i] = 0.0;
                }
                x.rows[b] = r;
            }
            proj.factor()
                .map_err(|e| SimError::Settings(e.to_string()))?;
            proj.solve(&mut x)
                .map_err(|e| SimError::Settings(e.to_string()))?;
            let u_star: Vec<Vector6<f64>> = (0..n).map(|b| u_hat[b] + x.body[b]).collect();
            // u₀: the step with ψ = 0, solved but not finished: ψ is then added by
            // re-solving with its factorisation, exactly as `step` does.
            self.solve_without_feedforward(&root, None, None, t)?;
            // F(u*) − F(u₀), F(u) = A u − G ω + N(ω) (rotational rows in momentum form).
            let u0 = self.stepper.velocities();
            for (b, us) in u_star.iter().enumerate() {
                x.body[b] = us - u0[b];
                x.rows[b] = Vector6::zeros();
            }
            self.stepper.kkt().apply(&x, &mut y);
            for (b, w) in wrenches.iter_mut().enumerate() {
                let s = &start.bodies[b];
                let iw = s.world_inertia(&model.bodies[b].inertia);
                // the same momentum-form rows as the step: N(ω) and its Jacobian at ω_k
                let (_, gj) = crate::dynamics::step::gyro_n_and_jacobian(h, &iw, &s.w);
                let nn = |w: &Vector3<f64>| {
                    let l = iw * w;
                    UnitQuaternion::from_scaled_axis(w * h) * l - l - gj * w
                };
                let ws_ = Vector3::new(u_star[b][3], u_star[b][4], u_star[b][5]);
                let w0 = Vector3::new(u0[b][3], u0[b][4], u0[b][5]);
                let rot = nn(&ws_) - nn(&w0);
                let g = y.body[b];
                *w = (
                    Vector3::new(g[0], g[1], g[2]) / h,
                    (Vector3::new(g[3], g[4], g[5]) + rot) / h,
                );
            }
            let qs: Vec<UnitQuaternion<f64>> = start.bodies.iter().map(|s| s.q).collect();
            wrench_to_joint_torques(model, &qs, &wrenches, &mut ws, &mut out);
            let poses: Vec<_> = start.bodies.iter().map(|s| (s.x, s.q)).collect();
            let split_error =
                |e| SimError::Settings(format!("floor support split at t = {t:.4} s: {e}"));
            let psi = if !spring {
                let psi = out.tau.clone();
                // The real step with ψ (the improved implicit scheme's stages can't be
                // re-solved: a full step).
                if self.stepper.options().drift == Drift::ImprovedImplicit {
                    self.solve_without_feedforward(&root, Some(&psi), None, t)?;
                } else {
                    self.add_feedforward(Some(&psi), None, t)?;
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
                let hand_of_god = out.root_wrench() * h;
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
                wrench_to_joint_torques(model, &qs, &wrenches, &mut ws, &mut out);
                let residual = out.root_wrench() * h;
                let psi = out.tau.clone();
                // Then the step exactly as `step` takes it: ψ and the root's residual by
                // re-solving, the floor's impulses from the contact LCP (which meets the
                // support points on the surfaces they move on), so an unperturbed run
                // reproduces this path to the last bit.
                self.add_feedforward(Some(&psi), Some(&residual), t)?;
                self.floor_contacts(&support, t)?;
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
            for (b, us) in u_star.iter().enumerate() {
                let e = (self.state.bodies[b].twist() - us).amax();
                if e > landing {
                    landing = e;
                    worst_at = t;
                }
            }
            psi_all.push(psi);
        }
        let mut ff = std::mem::replace(
            &mut self.feedforward,
            Feedforward {
                h,
                psi: vec![],
                root_impulse: vec![],
                stiffness: vec![],
                max_landing_error: 0.0,
                worst_landing_time: 0.0,
                support: vec![],
                support_split: SupportSplit::default(),
            },
        );
        ff.psi = psi_all;
        ff.root_impulse = root_impulse_all;
        ff.max_landing_error = landing;
        ff.worst_landing_time = worst_at;
        ff.support = support_all;
        ff.support_split = split.summary();
        Ok(ff)
    }

    /// Advance one step with optional extra external wrenches (world; per body force N,
    /// torque about the COM N·m), with ball contacts, recording the result.
    pub fn step(&mut self, extra: Option<&[(Vector3<f64>, Vector3<f64>)]>) -> Result<(), SimError> {
        let model = &self.character.model;
        let t = self.time();
        let root = self.prepare_step();
        // once fallen, ψ fades out and the root's support (residual, floor split) is gone
        let fade = self
            .balance
            .fell_at
            .map(|t0| self.opts.falls.feedforward_fade(t - t0));
        let psi = if self.opts.feedforward && fade != Some(0.0) {
            self.feedforward.psi.get(self.k).map(|p| match fade {
                Some(s) => p.iter().map(|x| x * s).collect(),
                None => p.clone(),
            })
        } else {
            None
        };
        self.solve_without_feedforward(&root, psi.as_deref(), extra, t)?;
        let root_impulse = match self.opts.root {
            RootMode::Spring(_) if fade.is_none() => {
                self.feedforward.root_impulse.get(self.k).copied()
            }
            _ => None,
        };
        self.add_feedforward(psi.as_deref(), root_impulse.as_ref(), t)?;
        // (taken out and put back: the contact phase borrows the simulation mutably)
        let support = match fade {
            Some(_) => None,
            None => self.feedforward.support.get_mut(self.k).map(std::mem::take),
        }
        .unwrap_or_default();
        let report = self.floor_contacts(&support, t);
        if fade.is_none()
            && let Some(s) = self.feedforward.support.get_mut(self.k)
        {
            *s = support;
        }
        let report = report?;
        self.stepper
            .finish(model, &mut self.state, &root)
            .map_err(|e| step_error(self.character, e, t))?;
        self.k += 1;
        self.record_state();
        self.record.contacts.push(report);
        self.watch_balance();
        Ok(())
    }

    /// When the character let go of its reference and fell (METHOD §12.4), s.
    pub fn fall_time(&self) -> Option<f64> {
        self.balance.fell_at
    }

    /// Largest change of the extrapolated centre of mass from the reference's so far, m
    /// (standing runs; 0 otherwise).
    pub fn peak_xcom_change_m(&self) -> f64 {
        self.balance.peak_xcom_change_m
    }

    /// After a step of a standing run: has the hit put the character out of balance? If
    /// so, let go: the root is freed, ψ fades out and the joints hold a protective pose.
    fn watch_balance(&mut self) {
        let (Some(g), RootMode::Spring(tuning)) = (&self.ground, &self.opts.root) else {
            return;
        };
        if self.protective.is_some() {
            return;
        }
        let model = &self.character.model;
        // self.kin holds the reference at the state's time (see prepare_step)
        let (s, r) = (&self.state.bodies, &self.kin);
        let xi = extrapolated_com(model, g.floor_y, |b| (s[b].x, s[b].v));
        let xi_ref = extrapolated_com(model, g.floor_y, |b| (r[b].x, r[b].v));
        let spring = self.spring_scale.spring(
            tuning,
            RootTarget {
                x: r[0].x,
                q: r[0].q,
                v: r[0].v,
                w: r[0].w,
            },
            Vector6::zeros(),
        );
        let pull = spring.k_linear * (r[0].x - s[0].x) + spring.d_linear * (r[0].v - s[0].v);
        let weight = self.spring_scale.mass * model.gravity.norm().max(1e-9);
        let t = self.time();
        let last_hit = self
            .balls
            .iter()
            .flat_map(|b| &b.hits)
            .filter(|h| matches!(h.other, crate::sim::balls::Touched::Body(_)))
            .map(|h| h.t + h.duration)
            .reduce(f64::max);
        let (xcom_change, pull_bw) = ((xi - xi_ref).norm(), pull.norm() / weight);
        if self
            .balance
            .observe(&self.opts.falls, t, xcom_change, pull_bw, last_hit)
        {
            self.let_go();
        }
    }

    /// Let go of the reference: the joints hold the pose they are in, at a fraction of
    /// their stiffness (METHOD §12.4's protective pose, braced but yielding).
    fn let_go(&mut self) {
        let model = &self.character.model;
        let n = model.num_bodies();
        let s = &self.state.bodies;
        let mut targets = vec![
            JointMotion {
                q_rel: UnitQuaternion::identity(),
                w: Vector3::zeros(),
                dw: Vector3::zeros(),
            };
            n
        ];
        let mut stiffness = vec![[0.0; 3]; n];
        let fraction = self.opts.falls.protective_stiffness;
        for (b, body) in model.bodies.iter().enumerate().skip(1) {
            let Some(a) = body.parent else { continue };
            targets[b].q_rel = s[a].q.inverse() * s[b].q;
            stiffness[b] = self.tracking.stiffness[b].map(|k| k * fraction);
        }
        self.protective = Some(ProtectivePose { targets, stiffness });
    }

    /// Joint-angle errors vs the reference at the state's time (kinematics in self.kin).
    fn record_state(&mut self) {
        let model = &self.character.model;
        let (mut sq, mut cnt, mut worst) = (0.0, 0usize, (0.0f64, 0usize));
        for (b, body) in model.bodies.iter().enumerate().skip(1) {
            let Some(a) = body.parent else { continue };
            let sim_rel = self.state.bodies[a].q.inverse() * self.state.bodies[b].q;
            let err = (self.targets.q_rel[b].inverse() * sim_rel)
                .angle()
                .to_degrees();
            sq += err * err;
            cnt += 1;
            if err > worst.0 {
                worst = (err, b);
            }
        }
        self.record.times.push(self.time());
        self.record.poses.push(
            self.state
                .bodies
                .iter()
                .map(|s| BodyPose { x: s.x, q: s.q })
                .collect(),
        );
        self.record.rms_error_deg.push(if cnt > 0 {
            (sq / cnt as f64).sqrt()
        } else {
            0.0
        });
        self.record.max_error_deg.push(worst);
        self.record
            .constraint_error_m
            .push(self.state.max_joint_separation(model));
        // self.kin holds the reference at the state's time (see prepare_step)
        let (root, reference) = (&self.state.bodies[0], &self.kin[0]);
        self.record
            .root_offset_m
            .push((root.x - reference.x).norm());
        self.record
            .root_tilt_deg
            .push((reference.q.inverse() * root.q).angle().to_degrees());
        self.record
            .balls
            .push(self.balls.iter().map(|b| b.active.then_some(b.x)).collect());
        if let Some(g) = &self.ground {
            let let_go = self.protective.is_some();
            let support = self
                .k
                .checked_sub(1)
                .filter(|_| !let_go)
                .and_then(|k| self.feedforward.support.get(k))
                .map_or(&[][..], |v| v);
            let mut offsets = Vec::with_capacity(support.len());
            let deepest = g.measure(&self.state, &self.kin, support, let_go, &mut offsets);
            self.record.ground_penetration_m.push(deepest);
            self.record.support_offsets.push(offsets);
        }
    }

    /// Run to the end of the clip.
    pub fn run(&mut self) -> Result<(), SimError> {
        while self.k < self.num_steps() {
            self.step(None)?;
        }
        Ok(())
    }

    /// The recorded run resampled at the clip's frame times (frame 0 = the initial
    /// state), for export.
    pub fn trajectory(&self) -> Trajectory {
        let model = &self.character.model;
        let dt = self.character.clip.frame_time;
        let frames = self.character.clip.num_frames() - model.figure.first_frame;
        let h = self.opts.step;
        let mut scratch = ReferenceScratch::default();
        let mut kin = vec![BodyKinematics::default(); model.num_bodies()];
        self.character
            .reference
            .sample(model, 0.0, &mut scratch, &mut kin);
        let initial: Vec<BodyPose> = kin.iter().map(|k| BodyPose { x: k.x, q: k.q }).collect();
        let pose_at = |i: usize| {
            if i == 0 {
                &initial
            } else {
                &self.record.poses[(i - 1).min(self.record.poses.len().saturating_sub(1))]
            }
        };
        let last = self.record.poses.len();
        let poses = (0..frames)
            .map(|f| {
                let s = (f as f64 * dt / h).min(last as f64);
                let i = s.floor() as usize;
                let a = s - i as f64;
                let (p0, p1) = (pose_at(i), pose_at((i + 1).min(last)));
                p0.iter()
                    .zip(p1)
                    .map(|(x0, x1)| BodyPose {
                        x: x0.x * (1.0 - a) + x1.x * a,
                        q: x0.q.slerp(&x1.q, a),
                    })
                    .collect()
            })
            .collect();
        let balls = self
            .balls
            .iter()
            .enumerate()
            .map(|(i, b)| BallTrack {
                radius: b.params.radius,
                positions: (0..frames)
                    .map(|f| {
                        let s = (f as f64 * dt / h).round() as usize;
                        if s == 0 {
                            None
                        } else {
                            self.record
                                .balls
                                .get(s - 1)
                                .and_then(|v| v.get(i).copied().flatten())
                        }
                    })
                    .collect(),
            })
            .collect();
        Trajectory {
            frame_time: dt,
            poses,
            balls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CharacterOptions;
    use crate::sim::balls::BallParams;

    fn demo() -> Character {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mocap/demo_walk.bvh");
        Character::load(&path, &CharacterOptions::default()).expect("demo clip loads")
    }

    #[test]
    fn restoring_a_snapshot_reproduces_the_run_bit_for_bit() {
        let c = demo();
        let mut sim = Simulation::new(&c, SimOptions::default()).unwrap();
        let pelvis = sim.state.bodies[0].x;
        // a ball launched 2 m in front of the pelvis toward it, hitting around 0.5 s
        sim.throw(Ball::new(
            BallParams::default(),
            0.3,
            pelvis + Vector3::new(0.0, 0.3, 2.0),
            Vector3::new(0.0, 0.0, -10.0),
        ));
        let end = 180;
        for _ in 0..60 {
            sim.step(None).unwrap();
        }
        let snap = sim.snapshot();
        while sim.k < end {
            sim.step(None).unwrap();
        }
        let first = sim.record.clone();
        let first_balls = sim.balls.clone();
        sim.restore(&snap);
        assert_eq!(sim.record.poses.len(), 60);
        assert_eq!(sim.record.balls.len(), 60);
        while sim.k < end {
            sim.step(None).unwrap();
        }
        assert_eq!(sim.record.poses, first.poses);
        assert_eq!(sim.record.balls, first.balls);
        assert_eq!(sim.record.max_error_deg, first.max_error_deg);
        assert_eq!(sim.balls, first_balls);
        assert!(
            first.balls[end - 1][0].is_some(),
            "the ball is recorded once launched"
        );
    }
}
