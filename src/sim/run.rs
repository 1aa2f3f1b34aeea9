//! Running a character through its clip under physics (METHOD §6–§8): the simulation's
//! state and settings, setting it up (the feedforward first), and each step's phases —
//! the step factored with the tracking torques, solved with ψ, the contact phase, the
//! position update — then the run, reset, snapshots and restore. The feedforward is in
//! `sim::feedforward`, the controller's targets and the let-go in `sim::controller`, the
//! record and its resampling for export in `sim::record`.

use super::controller::{ProtectivePose, StiffnessSchedule};
use super::feedforward::add_feedforward_wrenches;
use crate::Character;
use crate::dynamics::control::{Gains, Tracking};
use crate::dynamics::stabilize::Drift;
use crate::dynamics::state::{BodyState, State};
use crate::dynamics::step::{Root, StepError, StepOptions, Stepper};
use crate::motion::kinematics::BodyKinematics;
use crate::motion::reference::{JointTargets, ReferenceScratch};
use crate::sim::balance::{Balance, FallOptions};
use crate::sim::balls::{
    Ball, ContactOptions, ContactReport, ContactWorkspace, WarmStart, contact_phase_with_floor,
    launch_balls,
};
use crate::sim::ground::Ground;
use crate::sim::reflex::{ImpactReflex, reflex_joints, reflex_triggers};
use crate::sim::root::{FeetShift, RootMode, SpringScale, SpringTuning};
use crate::sim::support::{ClipFloor, SupportContact};
use nalgebra::{Vector3, Vector6};

pub use super::feedforward::Feedforward;
pub use super::record::Record;

/// How often [`Simulation::run_cancellable`] asks whether to stop, in steps (about 10 ms of
/// work at ~100 µs a step: prompt enough for Ctrl-C, rare enough to cost nothing).
pub const CANCEL_CHECK_STEPS: usize = 64;

/// Settings of a simulation run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimOptions {
    /// Time step h, s.
    pub step: f64,
    /// Feedback gains.
    pub gains: Gains,
    /// Constraint-drift control.
    pub drift: Drift,
    /// With [`Drift::PostStabilization`]: which factorisation post-stabilises each step
    /// and projects the feedforward's target velocities.
    pub projection: Projection,
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
    /// How the trunk yields for a moment after an impact (the reflex delay).
    pub reflex: ImpactReflex,
}

impl SimOptions {
    /// Check the settings before any clip is loaded or run: the step in (0, 0.05] s, the
    /// fall, reflex and root-spring numbers, and a drift scheme a spring-held root can
    /// run with. The error names the flags.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.step > 0.0 && self.step <= 0.05) {
            return Err(format!("step {} s must be in (0, 0.05]", self.step));
        }
        self.falls.validate()?;
        self.reflex.validate()?;
        if let RootMode::Spring(tuning) = &self.root {
            tuning.validate()?;
            if self.drift == Drift::ImprovedImplicit {
                return Err(
                    "a spring-held root (the default) needs --drift post, baumgarte \
                            or none; --drift improved runs with --root pinned"
                        .into(),
                );
            }
        }
        Ok(())
    }
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            step: 1.0 / 240.0,
            gains: Gains::default(),
            drift: Drift::PostStabilization,
            projection: Projection::default(),
            feedforward: true,
            feedback: true,
            root: RootMode::Spring(SpringTuning::default()),
            ground: true,
            falls: FallOptions::default(),
            reflex: ImpactReflex::default(),
        }
    }
}

/// The metric of the two velocity-level projections a post-stabilised run makes each
/// step (METHOD §6, §10): the drift correction after the step, and the feedforward's
/// target velocity u* onto the joint rows. They must use the same metric: the step lands
/// on u* = the reference displacement minus its component in the range of A⁻¹Jᵀ, and the
/// correction, which lies in that same range, then removes exactly that component — the
/// pose lands on the reference to second order. Mixed (one in M, the other in M̃) the
/// demo walk and CMU 01_01 tracked 21–49× less closely (RMS 0.005–0.009°).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Projection {
    /// The step's own factorisation `[M̃ −J(p)ᵀ; J(p) 0]` (default): no factorisation
    /// beyond the step's. The drift correction is a chord step with the rows at the
    /// step's start (it shrinks the error by ~h|ω| per pass, three passes at most) in the
    /// metric of mass plus the implicit PD stiffness. Tracks 1.3–47× closer than
    /// [`Mass`](Self::Mass) on the demo walk and CMU 01_01.
    #[default]
    Step,
    /// The thesis' mass metric: `[M −J(p⁺)ᵀ; J(p⁺) 0]` factored afresh after every step
    /// (a Newton step, quadratic), its factorisation reused for the next step's u*: one
    /// more factorisation per step.
    Mass,
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
    /// The caller's cancellation check said stop ([`Simulation::run_cancellable`]).
    #[error("{path}: cancelled")]
    Cancelled {
        /// Clip file.
        path: String,
    },
    /// The contact solver failed.
    #[error("{path}: {source}")]
    Contact {
        /// Clip file.
        path: String,
        /// Cause.
        source: crate::sim::balls::ContactError,
    },
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
    /// The root spring target's shift with the feet.
    feet_shift: FeetShift,
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
    /// The step this run started at (see [`Simulation::reset_from`]): before it the run
    /// is the reference.
    pub start_step: usize,
    /// Feedforward schedule.
    pub feedforward: Feedforward,
    /// While the feedforward is computed: its stiffness schedule's builder, which appends
    /// each step's row to `feedforward.stiffness` (see `prepare_step`).
    pub(super) schedule: Option<StiffnessSchedule>,
    /// What happened so far.
    pub record: Record,
    /// Thrown balls (their current state and hits).
    pub balls: Vec<Ball>,
    /// Contact settings (ground height: [`Simulation::floor_height`]).
    pub contact: ContactOptions,
    pub(super) contact_ws: ContactWorkspace,
    pub(super) stepper: Stepper,
    pub(super) tracking: Tracking,
    pub(super) scratch: ReferenceScratch,
    /// The step's ψ (storage kept from step to step).
    psi_step: Vec<f64>,
    pub(super) kin: Vec<BodyKinematics>,
    pub(super) targets: JointTargets,
    pub(super) external: Vec<(Vector3<f64>, Vector3<f64>)>,
    /// The wrenches of ψ_k alone (added to the factored step's right-hand side, see
    /// [`Self::solve_with_feedforward`]).
    pub(super) feedforward_wrench: Vec<(Vector3<f64>, Vector3<f64>)>,
    pub(super) offsets: Vec<usize>,
    /// The bodies whose joints yield after an impact ([`ImpactReflex`]).
    pub(super) reflex_joints: Vec<usize>,
    /// Per body: whether a ball striking it sets the reflex delay off.
    pub(super) reflex_triggers: Vec<bool>,
    /// The factor the reflex delay put on the yielding joints' stiffness (trunk and hips)
    /// in the latest step (1 when none).
    pub(super) reflex_stiffness_scale: f64,
    /// Per body: the torque (world, N·m, on the body; its parent takes −τ) that holds the
    /// unperturbed path while the yielding joints' feedback is late (see
    /// `hold_unperturbed_path`). Set each step of the reflex delay and applied only then
    /// (`reflex_stiffness_scale` < 1, the figure still standing); left as it was otherwise.
    pub(super) reflex_hold: Vec<Vector3<f64>>,
    /// The factor the reflex delay put on the root spring's frequencies in the latest step
    /// (1 when none).
    pub(super) root_frequency_scale: f64,
    /// How far the root spring's target stands off the mocap path because the feet do.
    pub(super) feet_shift: FeetShift,
    pub(super) spring_scale: SpringScale,
    /// The character's floor contacts (spring-held root only).
    pub(super) ground: Option<Ground>,
    /// Watches for a loss of balance (standing runs).
    pub(super) balance: Balance,
    /// Once the character has let go: the pose its joints hold.
    pub(super) protective: Option<ProtectivePose>,
    /// Copy a step from the feedforward's unperturbed path when its inputs are that
    /// path's ([`crate::sim::replay`]; default true). Off, every step is computed: for
    /// timing the step itself, and for tests that compare the two.
    pub replay_unperturbed: bool,
    /// Steps copied from the unperturbed path since the last reset.
    pub replayed_steps: usize,
    /// Per step count i (0..=steps): whether [`Simulation::trajectory`] reads the pose
    /// after i steps; `None` (default) keeps every step's pose in the record. See
    /// [`Simulation::keep_frame_poses_only`].
    pub(super) frame_poses: Option<Vec<bool>>,
}

pub(super) fn step_error(c: &Character, e: StepError, t: f64) -> SimError {
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

/// How a run's feedforward precompute is taken (see [`Simulation::new_from_cancellable`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Precompute {
    /// Where the precompute and the run start, s (rounded down to a step, and to a
    /// multiple of `restart_every_s` if that is set): see [`Simulation::new_from`].
    pub start_s: f64,
    /// With `restart_every_s` > 0 the precompute's unperturbed path restarts from the
    /// reference at every multiple of it after the start
    /// ([`Feedforward::restart_steps`]): each stretch between two is then the same to the
    /// bit wherever the precompute began, so runs that start at different multiples
    /// ([`Simulation::reset_from`]) can share one precompute and still each be what a
    /// precompute of its own would give. 0: never.
    pub restart_every_s: f64,
    /// The stretches of time (from, to; s) in which runs will replay the unperturbed
    /// path: from a run's start to its first ball's launch (a run replays no step after
    /// a launch). Only those steps' states are kept ([`crate::sim::replay`]); a run that
    /// strays outside computes its steps, with the same result, only slower. `None`
    /// keeps every step (a run whose balls are not known yet, as in the viewer); an
    /// empty list none (a run without replay, as `simulate`'s).
    pub replay_windows: Option<Vec<(f64, f64)>>,
}

impl<'c> Simulation<'c> {
    /// Prepare a run: computes the feedforward (discrete-time inverse dynamics) first.
    pub fn new(character: &'c Character, opts: SimOptions) -> Result<Self, SimError> {
        Self::new_cancellable(character, opts, &mut || false)
    }

    /// [`Simulation::new`] that asks `cancelled` every [`CANCEL_CHECK_STEPS`] steps of the
    /// feedforward precompute and stops with [`SimError::Cancelled`] when it says so.
    pub fn new_cancellable(
        character: &'c Character,
        opts: SimOptions,
        cancelled: &mut dyn FnMut() -> bool,
    ) -> Result<Self, SimError> {
        Self::new_from_cancellable(character, opts, &Precompute::default(), cancelled)
    }

    /// A run that starts at `start_s` (s; rounded down to a step) from the reference's
    /// state there, with the feedforward computed from there on: what nothing before
    /// the first ball can change is not simulated. The steps before the start are
    /// recorded as the reference itself, which the unperturbed simulation tracks to
    /// ~1e-4° (an unperturbed run started at t = 0 and one started later agree to
    /// round-off from the later start on). A start past the clip's last step starts at
    /// that step.
    pub fn new_from(
        character: &'c Character,
        opts: SimOptions,
        start_s: f64,
    ) -> Result<Self, SimError> {
        let precompute = Precompute {
            start_s,
            ..Default::default()
        };
        Self::new_from_cancellable(character, opts, &precompute, &mut || false)
    }

    /// A run prepared as `precompute` says (where the feedforward precompute starts, its
    /// restarts, what of its path it keeps for replay), that asks `cancelled` every
    /// [`CANCEL_CHECK_STEPS`] steps of the precompute and stops with
    /// [`SimError::Cancelled`] when it says so.
    pub fn new_from_cancellable(
        character: &'c Character,
        opts: SimOptions,
        precompute: &Precompute,
        cancelled: &mut dyn FnMut() -> bool,
    ) -> Result<Self, SimError> {
        opts.validate().map_err(SimError::Settings)?;
        let Precompute {
            start_s,
            restart_every_s,
            ref replay_windows,
        } = *precompute;
        if !(start_s >= 0.0 && start_s.is_finite()) {
            return Err(SimError::Settings(format!(
                "the run's start {start_s} s must be a time in the clip"
            )));
        }
        if !(restart_every_s >= 0.0 && restart_every_s.is_finite()) {
            return Err(SimError::Settings(format!(
                "the unperturbed path's restarts every {restart_every_s} s must be a duration"
            )));
        }
        if let Some(w) = replay_windows
            && let Some((a, b)) = w
                .iter()
                .find(|(a, b)| !(a.is_finite() && *a >= 0.0 && b >= a))
        {
            return Err(SimError::Settings(format!(
                "a replay window from {a} s to {b} s must be a stretch of the clip"
            )));
        }
        // The feedforward is the discrete inverse dynamics of the figure held as it will be
        // run (pinned, or spring-held and standing on the floor): computed through the
        // same step, so an unperturbed run reproduces it.
        let floor = ClipFloor::of(&character.model, &character.reference);
        let mut sim = Self::bare(character, opts, None, &floor)?;
        sim.feedforward.restart_steps = (restart_every_s / opts.step).round() as usize;
        sim.feedforward.first_step = sim.step_at(start_s);
        let keep = replay_windows.as_ref().map(|w| {
            w.iter()
                .map(|&(a, b)| {
                    // (past the clip: up to its end)
                    let end = (b / opts.step).ceil().min(usize::MAX as f64) as usize;
                    sim.step_at(a)..end.saturating_add(1)
                })
                .collect::<Vec<_>>()
        });
        let ff = sim.compute_feedforward(keep.as_deref(), cancelled)?;
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
            post_stabilization_reuse: opts.projection == Projection::Step,
            // chord passes shrink the error by ~h|ω| each, not quadratically: a third pass
            // (run only above the tolerance) keeps fast clips' joints within ~1e-4 mm
            // (salsa, Bandai dance and kick: 1.6e-3 / 5.8e-4 / 4.8e-4 mm with two)
            post_stabilization_passes: match opts.projection {
                Projection::Step => 3,
                Projection::Mass => StepOptions::default().post_stabilization_passes,
            },
            ..Default::default()
        };
        let stepper = Stepper::new(model, step_opts).map_err(|e| step_error(character, e, 0.0))?;
        let n = model.num_bodies();
        // The figure at t = 0 scales the gravity stiffness floor and the root spring.
        let mut kin0 = vec![BodyKinematics::default(); n];
        character
            .reference
            .sample(model, 0.0, &mut ReferenceScratch::default(), &mut kin0);
        // without a feedforward (the run that computes it), the stiffness schedule is
        // built as it steps
        let schedule = ff
            .is_none()
            .then(|| StiffnessSchedule::new(character, &opts, floor, &kin0));
        let feedforward = ff.unwrap_or_else(|| Feedforward::empty(opts.step));
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
            start_step: 0,
            feedforward,
            schedule,
            record: Record::default(),
            balls: vec![],
            contact: ContactOptions::default(),
            contact_ws: ContactWorkspace::default(),
            stepper,
            tracking,
            scratch: ReferenceScratch::default(),
            psi_step: Vec::new(),
            kin: vec![BodyKinematics::default(); n],
            targets: JointTargets::default(),
            external: vec![(Vector3::zeros(), Vector3::zeros()); n],
            feedforward_wrench: vec![(Vector3::zeros(), Vector3::zeros()); n],
            offsets: model.dof_offsets(),
            reflex_joints: reflex_joints(model),
            reflex_triggers: reflex_triggers(model),
            reflex_stiffness_scale: 1.0,
            root_frequency_scale: 1.0,
            reflex_hold: vec![Vector3::zeros(); n],
            feet_shift: FeetShift::default(),
            spring_scale,
            ground: (opts.ground && matches!(opts.root, RootMode::Spring(_)))
                .then(|| Ground::new(model, floor.height)),
            balance: Balance::default(),
            protective: None,
            replay_unperturbed: true,
            replayed_steps: 0,
            frame_poses: None,
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

    /// Back to the precompute's first step ([`Feedforward::first_step`]; t = 0 unless
    /// the run was made to start later) on the reference, with an empty record and balls
    /// not yet launched.
    pub fn reset(&mut self) {
        self.reset_from_step(self.feedforward.first_step);
    }

    /// Back to `start_s` (rounded down to a step, and to a multiple of the precompute's
    /// restarts if it has them; not before its first step, not past the clip's last) on
    /// the reference, as [`Simulation::reset`]: a run of a shared precompute that starts
    /// later than it, at its own first ball.
    pub fn reset_from(&mut self, start_s: f64) {
        let k = self.step_at(start_s).max(self.feedforward.first_step);
        self.reset_from_step(k);
    }

    /// The step a run asked to start at `start_s` starts at (see
    /// [`Simulation::new_from_cancellable`]).
    fn step_at(&self, start_s: f64) -> usize {
        // (a tolerance for a start given as a multiple of the step)
        let mut k = (start_s.max(0.0) / self.opts.step + 1e-9).floor() as usize;
        let every = self.feedforward.restart_steps;
        if every > 0 {
            k -= k % every;
        }
        k.min(self.num_steps().saturating_sub(1))
    }

    /// [`Simulation::reset`] to step `first`.
    pub(super) fn reset_from_step(&mut self, first: usize) {
        for b in self.balls.iter_mut() {
            let aimed_at = b.aimed_at;
            *b = Ball::new(b.params, b.launch_t, b.launch_x, b.launch_v);
            b.aimed_at = aimed_at;
        }
        let model = &self.character.model;
        let t0 = first as f64 * self.opts.step;
        self.record = Record::default();
        // (the run computing the feedforward records nothing of the steps before)
        if self.schedule.is_none() {
            self.record_reference_steps(first);
        }
        self.character
            .reference
            .sample(model, t0, &mut self.scratch, &mut self.kin);
        self.state = State::from_kinematics(&self.kin, t0);
        if first > 0 {
            self.arrive_as_the_path(first);
        }
        self.k = first;
        self.start_step = first;
        self.balance = Balance::default();
        self.protective = None;
        self.reflex_stiffness_scale = 1.0;
        self.root_frequency_scale = 1.0;
        self.reflex_hold.fill(Vector3::zeros());
        self.feet_shift = FeetShift::default();
        self.contact_ws.set_warm_start(None);
        self.replayed_steps = 0;
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
            feet_shift: self.feet_shift,
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
        self.feet_shift = snapshot.feet_shift;
        self.contact_ws
            .set_warm_start(snapshot.contact_warm_start.clone());
        self.record.truncate(snapshot.k);
    }

    /// Number of steps in the clip.
    pub fn num_steps(&self) -> usize {
        (self.character.reference.duration / self.opts.step).floor() as usize
    }

    /// Time of the state, s.
    pub fn time(&self) -> f64 {
        self.k as f64 * self.opts.step
    }

    /// External wrenches of the step: `extra` (world; per body force N, torque about the
    /// COM N·m), plus ψ_k's joint torques when `psi` is given.
    pub(super) fn fill_external(
        &mut self,
        psi: Option<&[f64]>,
        extra: Option<&[(Vector3<f64>, Vector3<f64>)]>,
    ) {
        for (b, e) in self.external.iter_mut().enumerate() {
            *e = extra.map_or((Vector3::zeros(), Vector3::zeros()), |x| x[b]);
        }
        if let Some(psi) = psi {
            let model = &self.character.model;
            // (before the step's `prepare`: its frames are the last step's)
            add_feedforward_wrenches(
                model,
                &self.state,
                None,
                &self.offsets,
                psi,
                &mut self.external,
            );
        }
        // (once fallen the controller holds its protective pose: no path to hold to)
        if self.reflex_stiffness_scale < 1.0 && self.protective.is_none() {
            let model = &self.character.model;
            for &b in &self.reflex_joints {
                if let Some(a) = model.bodies[b].parent {
                    let tau = self.reflex_hold[b];
                    self.external[b].1 += tau;
                    self.external[a].1 -= tau;
                }
            }
        }
    }

    /// Phase 1 of a step: prepare and factor with the tracking torques and `extra` (ψ
    /// follows in [`solve_with_feedforward`](Self::solve_with_feedforward)); with the
    /// improved implicit scheme, whose stages can't be split, solve with ψ as well.
    pub(super) fn factor_step(
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
        let done = if improved {
            self.stepper
                .solve_deferring_iterations(model, &self.state, root)
        } else {
            self.stepper.factor(model, &self.state, root)
        };
        done.map_err(|e| step_error(self.character, e, t))
    }

    /// Phase 2 of a step: solve the factored step with ψ_k (it changes only the
    /// right-hand side, and the discrete-time inverse dynamics finds it from the same
    /// factorisation). The feedforward is computed through exactly these two phases, so
    /// an unperturbed run reproduces its path to the last bit: without feedback the
    /// open-loop figure amplifies any difference (~25/s on a light collar bone), and a
    /// step whose arithmetic differed only at the chord iterations' tolerance diverged
    /// within a second. With a spring-held root, the root's share of the feedforward
    /// (`root_impulse`, world; N·s, N·m·s about its COM) is added the same way. With the
    /// improved implicit scheme (solved with ψ in phase 1), the iterations only.
    pub(super) fn solve_with_feedforward(
        &mut self,
        psi: Option<&[f64]>,
        root_impulse: Option<&Vector6<f64>>,
        t: f64,
    ) -> Result<(), SimError> {
        if self.stepper.options().drift == Drift::ImprovedImplicit {
            return self
                .stepper
                .converge()
                .map_err(|e| step_error(self.character, e, t));
        }
        let any = psi.is_some() || root_impulse.is_some();
        if any {
            for e in self.feedforward_wrench.iter_mut() {
                *e = (Vector3::zeros(), Vector3::zeros());
            }
            let model = &self.character.model;
            if let Some(psi) = psi {
                // the step's `prepare` built its rows from the joints' frames at this state
                add_feedforward_wrenches(
                    model,
                    &self.state,
                    Some(self.stepper.joint_frames()),
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
        }
        // the contact phase's re-solve (or `finish`) runs the iterations; with nothing
        // added, they run now
        let solved = self
            .stepper
            .solve_factored(any.then_some(self.feedforward_wrench.as_slice()))
            .and_then(|()| if any { Ok(()) } else { self.stepper.converge() });
        solved.map_err(|e| step_error(self.character, e, t))
    }

    /// The contact phase of a step: the balls, and with a spring-held root the floor under
    /// the character (the reference's `support` contacts of the step among them).
    pub(super) fn floor_contacts(
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
            self.contact_ws.clear_touching();
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

    /// Advance one step with optional extra external wrenches (world; per body force N,
    /// torque about the COM N·m), with ball contacts, recording the result.
    pub fn step(&mut self, extra: Option<&[(Vector3<f64>, Vector3<f64>)]>) -> Result<(), SimError> {
        if extra.is_none() && self.replay_step() {
            return Ok(());
        }
        let t = self.time();
        let root = self.prepare_step();
        // once fallen, ψ fades out and the root's support (residual, floor split) is gone
        let fade = self
            .balance
            .fell_at
            .map(|t0| self.opts.falls.feedforward_fade(t - t0));
        // ψ_k copied out of the precompute (the steps below borrow the simulation), into
        // storage taken out for the step and put back after it
        let mut psi = std::mem::take(&mut self.psi_step);
        psi.clear();
        let applied = match self.feedforward.psi.get(self.k) {
            Some(p) if self.opts.feedforward && fade != Some(0.0) => {
                match fade {
                    Some(s) => psi.extend(p.iter().map(|x| x * s)),
                    None => psi.extend_from_slice(p),
                }
                Some(psi.as_slice())
            }
            _ => None,
        };
        let step = self.take_step(&root, applied, extra, fade, t);
        self.psi_step = psi;
        step
    }

    /// [`Self::step`] after its ψ is known (`fade`: the feedforward's fraction still on
    /// after letting go).
    fn take_step(
        &mut self,
        root: &Root,
        psi: Option<&[f64]>,
        extra: Option<&[(Vector3<f64>, Vector3<f64>)]>,
        fade: Option<f64>,
        t: f64,
    ) -> Result<(), SimError> {
        let model = &self.character.model;
        self.factor_step(root, psi, extra, t)?;
        let root_impulse = match self.opts.root {
            RootMode::Spring(_) if fade.is_none() => {
                self.feedforward.root_impulse.get(self.k).copied()
            }
            _ => None,
        };
        self.solve_with_feedforward(psi, root_impulse.as_ref(), t)?;
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
        let finished = self
            .stepper
            .finish(model, &mut self.state, root)
            .map_err(|e| step_error(self.character, e, t))?;
        // the largest joint separation as the post-stabilisation measured it last: recorded
        // without measuring it again
        let separation = finished.stabilization.map(|s| s.joint_separation_after);
        self.record_step(report, separation);
        Ok(())
    }

    /// After a step (computed or replayed): advance k, record the state, the contact
    /// phase's report and touching bodies, and watch the balance. `separation`: the
    /// state's largest joint separation (m) if the step already measured it.
    pub(super) fn record_step(&mut self, report: ContactReport, separation: Option<f64>) {
        self.k += 1;
        self.record_state(separation);
        self.record.contacts.push(report);
        self.record
            .contact_bodies
            .push(self.contact_ws.touching().to_vec());
        self.watch_balance();
    }

    /// Run to the end of the clip.
    pub fn run(&mut self) -> Result<(), SimError> {
        self.run_cancellable(&mut || false)
    }

    /// Run to the end of the clip, asking `cancelled` every [`CANCEL_CHECK_STEPS`] steps;
    /// [`SimError::Cancelled`] when it said stop (the run is then incomplete).
    pub fn run_cancellable(&mut self, cancelled: &mut dyn FnMut() -> bool) -> Result<(), SimError> {
        while self.k < self.num_steps() {
            self.check_cancelled(cancelled)?;
            self.step(None)?;
        }
        Ok(())
    }

    /// [`SimError::Cancelled`] if `cancelled` says so (asked every [`CANCEL_CHECK_STEPS`]).
    pub(super) fn check_cancelled(
        &self,
        cancelled: &mut dyn FnMut() -> bool,
    ) -> Result<(), SimError> {
        if self.k.is_multiple_of(CANCEL_CHECK_STEPS) && cancelled() {
            return Err(SimError::Cancelled {
                path: self.character.path.display().to_string(),
            });
        }
        Ok(())
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
        // the snapshot after the hit, while the root spring's target follows the feet
        let (at, end) = (150, 300);
        for _ in 0..at {
            sim.step(None).unwrap();
        }
        let snap = sim.snapshot();
        assert!(
            snap.feet_shift.offset.norm() > 0.0,
            "the hit has moved the root target: {:?}",
            snap.feet_shift
        );
        while sim.k < end {
            sim.step(None).unwrap();
        }
        let first = sim.record.clone();
        let first_balls = sim.balls.clone();
        sim.restore(&snap);
        assert_eq!(sim.record.poses.len(), at);
        assert_eq!(sim.record.balls.len(), at);
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
