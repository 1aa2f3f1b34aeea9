//! The tracking controller's side of a run (METHOD §7, §12.4): the stiffness schedule,
//! each step's joint targets and stiffness (the reference's, or once fallen the
//! protective pose) and the root's target, and the balance watch that lets go.

use crate::Character;
use crate::dynamics::step::{Root, RootTarget};
use crate::dynamics::{InverseWorkspace, JointTorques, inverse_dynamics};
use crate::motion::kinematics::{BodyKinematics, JointMotion};
use crate::sim::balance::{extrapolated_com, up_direction};
use crate::sim::feedforward::root_target;
use crate::sim::root::{RootMode, SpringTuning};
use crate::sim::run::{SimOptions, Simulation};
use crate::sim::support::ClipFloor;
use crate::skeleton::Model;
use nalgebra::{UnitQuaternion, Vector3, Vector6};

/// What the PD controller holds once the character has let go (METHOD §12.4): the pose
/// it was in, at a fraction of the stiffness it had.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ProtectivePose {
    targets: Vec<JointMotion>,
    stiffness: Vec<[f64; 3]>,
}

/// The tracking stiffness schedule of a run (per step, per joint dof), built a step at a
/// time: from the clip's inverse dynamics torques at the step's start, with a floor for
/// gravity (stiffer for the joints that carry the figure when it stands on `floor`). The
/// feedforward's run builds it from the reference it samples anyway, instead of a second
/// pass over the whole clip (the same rows, to the bit: the same kinematics at the same
/// times, and `tests` compare the two).
pub(super) struct StiffnessSchedule {
    /// Per joint dof: the stiffness floor (the constant gain plus gravity's), N·m/rad.
    floor: Vec<f64>,
    /// Stiffness per N·m of inverse dynamics torque, 1/rad.
    k_s: f64,
    ws: InverseWorkspace,
    out: JointTorques,
}

impl StiffnessSchedule {
    /// The schedule's floor for `character` run with `opts` on `floor`, `kin0` its
    /// reference at t = 0.
    pub(super) fn new(
        character: &Character,
        opts: &SimOptions,
        floor: &ClipFloor,
        kin0: &[BodyKinematics],
    ) -> Self {
        let model = &character.model;
        // per body: the gravity part of its joints' stiffness floor, N·m/rad
        let mut grav: Vec<f64> = crate::dynamics::control::gravity_stiffness(model, kin0)
            .iter()
            .map(|g| opts.gains.k_g * g)
            .collect();
        if opts.ground && matches!(opts.root, RootMode::Spring(_)) {
            // Standing, the joints from the feet up carry the rest of the figure
            // (an inverted pendulum): their feedback must be stiffer than its
            // gravity (see `Gains::k_stance`).
            let held = crate::dynamics::control::supported_gravity_stiffness(model, kin0);
            for (b, g) in grav.iter_mut().enumerate() {
                if floor.standing[b] {
                    *g = g.max(opts.gains.k_stance * held[b]);
                }
            }
        }
        let offsets = model.dof_offsets();
        let mut dof_floor = vec![opts.gains.k_0; model.joint_dofs()];
        for (b, body) in model.bodies.iter().enumerate() {
            if let Some(j) = &body.joint {
                for i in 0..j.dof() {
                    dof_floor[offsets[b] + i] += grav[b];
                }
            }
        }
        StiffnessSchedule {
            floor: dof_floor,
            k_s: opts.gains.k_s,
            ws: InverseWorkspace::default(),
            out: JointTorques::default(),
        }
    }

    /// The stiffness per joint dof (N·m/rad) of a step starting where the reference's
    /// kinematics are `kin`.
    pub(super) fn row(&mut self, model: &Model, kin: &[BodyKinematics]) -> Vec<f64> {
        inverse_dynamics(model, kin, None, &mut self.ws, &mut self.out);
        self.out
            .tau
            .iter()
            .zip(&self.floor)
            .map(|(t, f)| self.k_s * t.abs() + f)
            .collect()
    }
}

impl Simulation<'_> {
    /// Set controller targets/stiffness for step k (→ k+1) and the reference at t_{k+1}
    /// in `self.kin`. Returns the root target.
    pub(super) fn prepare_step(&mut self) -> Root {
        let character = self.character;
        let model = &character.model;
        let t1 = (self.k + 1) as f64 * self.opts.step;
        let reference = &character.reference;
        // self.kin holds the reference at t_k (the state's time) until it is resampled
        let before = self.kin[0];
        let shift = self.feet_shift.offset;
        let root_offset = (self.state.bodies[0].x - before.x - shift).norm();
        let lean = self.balance_lean();
        // the step's end predicted from the reference's angular acceleration at its start,
        // ω + h ω̇_ref(t): the gyroscopic rows' linearisation point (see
        // `Stepper::predict_angular_velocities`). The unperturbed step changes ω by that to
        // O(h³) (the feedforward's targets are the reference's displacements over the
        // step); ω_ref(t + h) − ω_ref(t) is off by (h²/2) ω̈, which left a chord solve in
        // every step instead of four in five.
        if self.protective.is_none() {
            let (s, k, h) = (&self.state.bodies, &self.kin, self.opts.step);
            self.stepper
                .predict_angular_velocities(s.iter().zip(k).map(|(s, k)| s.w + k.dw * h));
        }
        // the feedforward's run builds the stiffness schedule as it goes (see
        // `StiffnessSchedule`), here from the reference at t_k: it prepares every step in
        // turn from its reset, so row k is the next one
        if let Some(schedule) = &mut self.schedule
            && self.feedforward.stiffness.len() == self.k
        {
            let row = schedule.row(model, &self.kin);
            self.feedforward.stiffness.push(row);
        }
        reference.sample_with_targets(
            model,
            t1,
            &mut self.scratch,
            &mut self.kin,
            &mut self.targets,
        );
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
        self.yield_after_impact();
        if let Some(lean) = lean {
            self.tilt_stance_ankles(&lean);
        }
        let mut target = root_target(&before, &self.kin[0], self.opts.step);
        target.x += shift;
        match &self.opts.root {
            RootMode::Pinned => Root::Pinned(target),
            // the root's feedforward impulse comes with ψ (see `add_feedforward`)
            RootMode::Spring(tuning) => Root::Spring(self.spring_scale.spring(
                &self.root_tuning(tuning, root_offset),
                target,
                Vector6::zeros(),
            )),
        }
    }

    /// Time since the latest ball's first contact with a body that sets the reflex delay
    /// off ([`ImpactReflex`](crate::sim::reflex::ImpactReflex)), at the state's time, s;
    /// `None` before any.
    fn since_reflex_trigger(&self) -> Option<f64> {
        let t = self.time();
        let triggers = &self.reflex_triggers;
        self.balls
            .iter()
            .flat_map(|b| &b.hits)
            .filter(|h| matches!(h.other, crate::sim::balls::Touched::Body(b) if triggers[b]))
            .map(|h| t - h.t)
            .filter(|d| *d >= 0.0)
            .reduce(f64::min)
    }

    /// Whether a ball has touched the figure (any body) so far.
    pub(super) fn touched_by_a_ball(&self) -> bool {
        self.balls
            .iter()
            .flat_map(|b| &b.hits)
            .any(|h| matches!(h.other, crate::sim::balls::Touched::Body(_)))
    }

    /// Set the reflex delay's factors for this step: scale the yielding joints' stiffness
    /// (the trunk's and hips', `reflex_joints`), just set from the schedule, and keep the
    /// root spring's frequency factor for the root target.
    fn yield_after_impact(&mut self) {
        let (yielding, root) = self.since_reflex_trigger().map_or((1.0, 1.0), |since| {
            let r = &self.opts.reflex;
            (r.stiffness_scale(since), r.root_frequency_scale(since))
        });
        self.reflex_stiffness_scale = yielding;
        self.root_frequency_scale = root;
        if yielding < 1.0 {
            self.hold_unperturbed_path(yielding);
            for &b in &self.reflex_joints {
                for k in self.tracking.stiffness[b].iter_mut() {
                    *k *= yielding;
                }
            }
        }
    }

    /// While the yielding joints' feedback is at `scale` of its gains (the reflex delay),
    /// the part it no longer gives, `(1 − scale)` of the full-gain feedback on the
    /// unperturbed path, into `self.reflex_hold`: the muscles' planned torque goes on, only
    /// their answer to the blow is late. The feedforward ψ was computed with the full
    /// gains' feedback along that path, taken by the linearly implicit step at the step's
    /// end (its torque plus its gradients times the step), so the hold is that feedback at
    /// the path's state k + 1. Dropping the gains alone moved the trunk off the path with
    /// no blow at all: a 1 g ball to CMU 01_01's chest as it jumped bent the spine by 0.32°
    /// at a tenth of the gains and 0.59° at 2.5 %, against 0.008° without the reflex delay;
    /// with the hold taken at step k, about as much (the implicit damping's share is the
    /// larger); at k + 1, 0.019° (the trunk alone, before the hips yielded too). Zero
    /// when the unperturbed path is not at hand (another run's settings, or the clip's
    /// last step).
    fn hold_unperturbed_path(&mut self, scale: f64) {
        self.reflex_hold.fill(Vector3::zeros());
        let settings = (self.opts, self.contact);
        let Some(full) = self.feedforward.path.reflex_feedback_at(self.k, settings) else {
            return;
        };
        for (&b, full) in self.reflex_joints.iter().zip(full) {
            self.reflex_hold[b] = full * (1.0 - scale);
        }
    }

    /// The root spring's tuning with the pelvis `offset_m` from its path, its frequencies
    /// scaled by the reflex delay's factor of the latest step.
    fn root_tuning(&self, tuning: &SpringTuning, offset_m: f64) -> SpringTuning {
        let t = tuning.at_offset(offset_m);
        let f = self.root_frequency_scale;
        if f < 1.0 {
            SpringTuning {
                linear_hz: t.linear_hz * f,
                angular_hz: t.angular_hz * f,
                ..t
            }
        } else {
            t
        }
    }

    /// The balance feedback's leg tilt for this step (see `SpringTuning::balance_cd`):
    /// −(c_d·Δd + c_v·Δv) from the horizontal COM changes at the step's start, as a
    /// horizontal vector (rad) toward which the stance legs should lean; `None` when off,
    /// before any hit, or without a floor. Call while `self.kin` holds the reference at
    /// the state's time.
    fn balance_lean(&self) -> Option<Vector3<f64>> {
        let RootMode::Spring(tuning) = &self.opts.root else {
            return None;
        };
        if (tuning.balance_cd == 0.0 && tuning.balance_cv == 0.0)
            || self.ground.is_none()
            || self.protective.is_some()
        {
            return None;
        }
        if !self.touched_by_a_ball() {
            return None;
        }
        let model = &self.character.model;
        let up = up_direction(&model.gravity);
        let (mut dc, mut dv, mut m) = (Vector3::zeros(), Vector3::zeros(), 0.0);
        for (b, body) in model.bodies.iter().enumerate() {
            dc += (self.state.bodies[b].x - self.kin[b].x) * body.mass;
            dv += (self.state.bodies[b].v - self.kin[b].v) * body.mass;
            m += body.mass;
        }
        let u = -(dc * tuning.balance_cd + dv * tuning.balance_cv) / m;
        let u = u - up * u.dot(&up);
        // at most ~11°: a lean, not a fall
        let n = u.norm();
        Some(if n > 0.2 { u * (0.2 / n) } else { u })
    }

    /// Tilt the ankles' targets so the shins lean by `lean` (rad, horizontal: the shin
    /// rotates toward it) in the world, the feet keeping their reference orientation.
    /// `self.kin` holds the reference at the step's end.
    fn tilt_stance_ankles(&mut self, lean: &Vector3<f64>) {
        use crate::skeleton::Role;
        let model = &self.character.model;
        let n = lean.norm();
        if n < 1e-12 {
            return;
        }
        let up = up_direction(&model.gravity);
        // rotating `up` about up × û by n tilts it toward û
        let axis = up.cross(&(lean / n));
        let Some(axis) = nalgebra::Unit::try_new(axis, 1e-12) else {
            return;
        };
        let r = UnitQuaternion::from_axis_angle(&axis, n);
        let floor_y = self
            .ground
            .as_ref()
            .map_or(f64::NEG_INFINITY, |g| g.floor_y);
        for (b, body) in model.bodies.iter().enumerate() {
            if !matches!(body.role, Some(Role::LeftFoot | Role::RightFoot)) {
                continue;
            }
            let Some(s) = body.parent else { continue };
            // stance feet only: the reference's foot low and slow (a swing foot keeps its
            // target)
            let (xf, vf) = (self.kin[b].x, self.kin[b].v);
            if xf.dot(&up) - floor_y > 0.15 || vf.norm() > 0.5 {
                continue;
            }
            let (qs, qf) = (self.kin[s].q, self.kin[b].q);
            let jm = JointMotion {
                q_rel: qs.inverse() * r.inverse() * qf,
                w: self.targets.w_rel[b],
                dw: Vector3::zeros(),
            };
            self.tracking.set_target(b, &jm);
        }
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
    pub(super) fn watch_balance(&mut self) {
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
            &self.root_tuning(tuning, (s[0].x - r[0].x).norm()),
            RootTarget {
                x: r[0].x,
                q: r[0].q,
                v: r[0].v,
                w: r[0].w,
            },
            Vector6::zeros(),
        );
        let w = spring.wrench(&s[0]);
        let pull = Vector3::new(w[0], w[1], w[2]);
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
        // the margins are the figure's lengths (a model built without a stature: an adult's)
        let stature = Some(model.figure.height_m)
            .filter(|h| h.is_finite() && *h > 0.0)
            .unwrap_or(crate::sim::balance::REFERENCE_STATURE_M);
        if self
            .balance
            .observe(&self.opts.falls, t, stature, xcom_change, pull_bw, last_hit)
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
        // a fraction of the full stiffness, not of the trunk's while its reflex is late: a
        // figure that let go within the reflex delay otherwise kept its trunk at 3 % and
        // folded it back by 146° (the demo walk after a 5 kg chest ball)
        let reflex = self.reflex_stiffness_scale;
        if reflex < 1.0 {
            for &b in &self.reflex_joints {
                stiffness[b] = stiffness[b].map(|k| k / reflex);
            }
        }
        self.protective = Some(ProtectivePose { targets, stiffness });
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::balls::Ball;
    use crate::sim::scenario::BallSpec;
    use crate::sim::{SimOptions, Simulation};
    use crate::{Character, CharacterOptions};

    /// The repository's demo walk.
    fn demo_walk() -> Character {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mocap/demo_walk.bvh");
        Character::load(&path, &CharacterOptions::default()).expect("demo walk")
    }

    /// A simulation of `c` with default options and the ball `flag` (a `--ball` spec).
    fn with_ball<'c>(c: &'c Character, flag: &str) -> Simulation<'c> {
        let mut sim = Simulation::new(c, SimOptions::default()).expect("simulation");
        let launch = BallSpec::from_flag(flag)
            .expect("ball flag")
            .launch(&c.model, &c.reference)
            .expect("aims");
        sim.throw(Ball::from_launch(&launch));
        sim
    }

    /// The feedback the reflex delay holds on to at step k is the full-gain feedback at
    /// the unperturbed path's state k + 1, with step k's targets and stiffness: after an
    /// untouched step k (computed, not replayed) a run that started with the path (or at
    /// its latest restart) is on that state. Kept apart from the path's states, so a
    /// precompute that keeps none of them still has it.
    #[test]
    fn the_reflex_hold_is_the_feedback_on_the_unperturbed_path() {
        use crate::sim::Precompute;
        let c = demo_walk();
        let opts = SimOptions::default();
        let precompute = Precompute {
            start_s: 0.5,
            restart_every_s: 0.5,
            replay_windows: Some(vec![]),
        };
        let mut sim = Simulation::new_from_cancellable(&c, opts, &precompute, &mut || false)
            .expect("simulation");
        let restart = sim.feedforward.restart_steps;
        // the path from its restart at 1 s on: a run started there
        let mut restarted = Simulation::new_from(&c, opts, 1.0).expect("a run from the restart");
        assert_eq!(restarted.k, 2 * restart, "the run starts at the restart");
        sim.replay_unperturbed = false;
        restarted.replay_unperturbed = false;
        let settings = (sim.opts, sim.contact);
        let mut checked = 0;
        while sim.time() < 1.2 {
            let k = sim.k;
            sim.step(None).expect("steps");
            let on_path = if k + 1 < restarted.k {
                &sim
            } else {
                if k + 1 > restarted.k {
                    restarted.step(None).expect("steps");
                }
                &restarted
            };
            let held = sim
                .feedforward
                .path
                .reflex_feedback_at(k, settings)
                .expect("the path's feedback at every step it took");
            assert_eq!(held.len(), sim.reflex_joints.len());
            for (&b, held) in sim.reflex_joints.iter().zip(held) {
                let a = c.model.bodies[b].parent.expect("a joint");
                let s = &on_path.state.bodies;
                // (the step's targets and stiffness: the same in both runs)
                let full = sim.tracking.feedback(b, &s[a], &s[b]);
                assert_eq!(*held, full, "step {k}, body {b}");
                assert!(full.norm() > 0.0, "step {k}, body {b}: no feedback to hold");
            }
            checked += 1;
        }
        assert_eq!(checked, (1.2 / opts.step).ceil() as usize - restart);
    }

    /// While the reflex is late after a handball to the pelvis, the trunk's and hips'
    /// stiffness is the schedule's times the reflex's scale, a knee's, an arm's and an
    /// ankle's the schedule's; once it has passed, every joint is back on the schedule.
    #[test]
    fn the_trunk_and_hips_yield_while_the_reflex_is_late() {
        use crate::skeleton::Role;
        let c = demo_walk();
        let mut sim = with_ball(&c, "t=1,target=pelvis,speed=12");
        let model = &c.model;
        let role_body = |r: Role| {
            model
                .bodies
                .iter()
                .position(|b| b.role == Some(r))
                .expect("the demo walk has every role")
        };
        let yielding = [
            Role::Abdomen,
            Role::Chest,
            Role::LeftThigh,
            Role::RightThigh,
        ]
        .map(role_body);
        let holding = [
            Role::LeftShin,
            Role::LeftUpperArm,
            Role::RightFoot,
            Role::Head,
        ]
        .map(role_body);
        // stiffness of body b's dofs against step k's schedule
        let ratios = |sim: &Simulation<'_>, b: usize| -> Vec<f64> {
            let row = &sim.feedforward.stiffness[sim.k - 1];
            let dofs = model.bodies[b].joint.as_ref().expect("a joint").dof();
            (0..dofs)
                .map(|i| sim.tracking.stiffness[b][i] / row[sim.offsets[b] + i])
                .collect()
        };
        let mut seen_late = false;
        while sim.k < sim.num_steps() {
            sim.step(None).expect("steps");
            let scale = sim.reflex_stiffness_scale;
            if scale < 1.0 {
                seen_late = true;
                for &b in &yielding {
                    for r in ratios(&sim, b) {
                        assert!((r - scale).abs() < 1e-12, "body {b}: {r} against {scale}");
                    }
                }
                for &b in &holding {
                    for r in ratios(&sim, b) {
                        assert!((r - 1.0).abs() < 1e-12, "body {b} yields: {r}");
                    }
                }
            } else if seen_late {
                for &b in yielding.iter().chain(&holding) {
                    for r in ratios(&sim, b) {
                        assert!((r - 1.0).abs() < 1e-12, "body {b} not back: {r}");
                    }
                }
                break;
            }
        }
        assert!(seen_late, "the pelvis ball set off the reflex");
        assert!(sim.protective.is_none(), "a handball knocked the walk down");
    }

    /// The schedule the feedforward's run builds step by step is, row for row and to the
    /// bit, the one from the clip's inverse dynamics table sampled on its own (what it was
    /// computed from before), for a standing and a pinned figure.
    #[test]
    fn the_schedule_built_while_stepping_is_the_inverse_dynamics_tables() {
        use super::StiffnessSchedule;
        use crate::motion::kinematics::BodyKinematics;
        use crate::motion::reference::ReferenceScratch;
        use crate::sim::root::RootMode;
        use crate::sim::support::ClipFloor;
        let c = demo_walk();
        let model = &c.model;
        let mut scratch = ReferenceScratch::default();
        let floor = ClipFloor::of(model, &c.reference);
        let mut kin0 = vec![BodyKinematics::default(); model.num_bodies()];
        c.reference.sample(model, 0.0, &mut scratch, &mut kin0);
        for opts in [
            SimOptions::default(),
            SimOptions {
                root: RootMode::Pinned,
                ..SimOptions::default()
            },
        ] {
            let sim = Simulation::new(&c, opts).expect("simulation");
            let built = &sim.feedforward.stiffness;
            assert!(sim.schedule.is_none(), "the finished run keeps no builder");
            assert_eq!(built.len(), sim.num_steps(), "a row per step");
            let reference = StiffnessSchedule::new(&c, &opts, &floor, &kin0);
            let table = c.inverse_dynamics(opts.step);
            for (k, row) in built.iter().enumerate() {
                let want: Vec<f64> = table.tau[k]
                    .iter()
                    .zip(&reference.floor)
                    .map(|(t, f)| opts.gains.k_s * t.abs() + f)
                    .collect();
                assert_eq!(row, &want, "step {k} ({:?} root)", opts.root);
            }
        }
    }

    /// A figure that lets go while its trunk's reflex is still late holds the protective
    /// pose at the protective fraction of the trunk's full stiffness, not of the reduced
    /// one (which left the demo walk's trunk at 3 % and folded it back by 146°).
    #[test]
    fn letting_go_during_the_reflex_delay_braces_the_trunk_at_its_full_stiffness() {
        let c = demo_walk();
        let mut sim = with_ball(&c, "t=1.5,target=chest,speed=15,mass=5");
        let last = sim.feedforward.stiffness.len();
        while sim.protective.is_none() && sim.k < last {
            sim.step(None).expect("steps");
        }
        let pose = sim
            .protective
            .as_ref()
            .expect("a 5 kg chest ball knocks it down");
        let scale = sim.reflex_stiffness_scale;
        assert!(
            scale < 1.0,
            "the figure let go at {:.3} s, after the reflex delay (the test needs it within)",
            sim.time()
        );
        // the step that let go ran on the schedule of step k − 1, its trunk at `scale`
        let schedule = &sim.feedforward.stiffness[sim.k - 1];
        let fraction = sim.opts.falls.protective_stiffness;
        assert!(!sim.reflex_joints.is_empty());
        for &b in &sim.reflex_joints {
            let dofs = c.model.bodies[b].joint.as_ref().expect("a joint").dof();
            for i in 0..dofs {
                let full = schedule[sim.offsets[b] + i];
                let held = pose.stiffness[b][i];
                assert!(
                    (held - fraction * full).abs() <= 1e-9 * full,
                    "body {b} dof {i}: protective {held} against {fraction} × {full} (reflex {scale})"
                );
            }
        }
    }
}
