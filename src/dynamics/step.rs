//! The linearly implicit step (METHOD §8; thesis §2.7.4, eq. 2.50–2.55; Anitescu & Potra).
//!
//! Backward Euler `M(u⁺ − u) = h f(p⁺, u⁺)` linearised once about (p, u):
//!
//! ```text
//!     M̃ = M − h² ∇_p f − h ∇_u f          f̃ = f − ∇_u f · u
//!     [ M̃  −Jᵀ ] [u⁺]   [ M u + h f̃ ]
//!     [ J    0  ] [λ ] = [ b         ]       x⁺ = x + h v⁺,  R⁺ = exp(\[h ω⁺\]×) R
//! ```
//!
//! J stacks every joint's rows (METHOD §4) and, for a pinned root, J_r = I₆ with
//! b_r = the root's prescribed twist at t + h; b = 0 for joints unless the drift control
//! asks otherwise ([`Drift`]). λ are impulses (N·s, N·m·s). Applied forces: gravity,
//! optional external wrenches per body (explicit), and joint torques from a
//! [`JointTorque`] provider whose gradients are estimated numerically per joint
//! ([`GradientEstimator::torque_gradient`], 24 torque evaluations per joint; 9 if the
//! provider declares itself affine in the relative ω and frame-indifferent); a torque
//! couples only its joint's two bodies, so M̃ has the tree's block sparsity and the
//! system is factored in O(n) by [`BlockTree`].
//!
//! **Gyroscopic term and momentum.** Written in world-frame angular velocity, the Euler
//! equation carries −ω × (Iω); treated explicitly (or merely linearised) it makes the
//! implicit step gain or lose angular momentum at O(h²) per step. We instead solve each
//! body's rotational momentum row in *momentum form*: with R⁺ = exp(\[hω⁺\]×) R one has
//! R⁺ Ī R⁺ᵀ ω⁺ = E (R Ī Rᵀ) ω⁺ with E = exp(\[hω⁺\]×) (E leaves ω⁺ fixed), so
//!
//! ```text
//!     E(hω⁺) I_w ω⁺ − I_w ω = h T + (Jᵀλ)_ω + (linearised stiff terms)
//! ```
//!
//! is exactly "new angular momentum − old = impulse", with no gyroscopic torque at all.
//! Its linearisation about ω is the usual linearly implicit step with the gyroscopic
//! Jacobian in M̃ (we use the exact derivative E I_w − h E \[I_w ω\]× J_r(hω) − I_w, which is
//! h(\[ω\]× I_w − \[I_w ω\]×) to first order); chord iterations reusing the same
//! factorisation (each one O(n) solve) then solve the nonlinear rows to round-off —
//! usually none or one is needed, since the linearisation error is O(h |Δω|²). A free body therefore conserves
//! L = R Ī Rᵀ ω exactly (and P trivially), and, because E ω⁺ = ω⁺, the rotational kinetic
//! energy change is ω⁺ᵀ(impulse) − ½|ω⁺ − ω|²_I: the step stays dissipative.
//! Set [`StepOptions::gyroscopic_iterations`] to 0 for the plain linearly implicit step.
//! The rows may be linearised about a prediction of ω⁺ instead of ω
//! ([`Stepper::predict_angular_velocities`]; the character simulation passes ω + h ω̇ of
//! its reference): the iterations then start O(h|ω⁺ − ω̂|²) from the solution instead of
//! O(h|ω⁺ − ω|²) and converge to the same step (CMU 01_01: chord iterations 171 → 87 M
//! instructions over the clip; a fifth of the steps need none, the rest one).

use super::gradient::{GradientEstimator, GradientOptions, TorqueGradient, TorqueStructure};
use super::kkt::{BlockTree, KktError, KktVector, joint_rows};
use super::stabilize::{
    Drift, PostStabilizationReport, constraint_error, post_stabilize, root_error,
};
use super::state::{BodyState, State, renormalize, rotation_from_vector, rotation_vector};
use super::torque::JointTorque;
use crate::skeleton::Model;
use crate::skeleton::joint::JointFrame;
use nalgebra::{Matrix3, Matrix6, UnitQuaternion, Vector3, Vector6};

/// Pose and twist a pinned root body must have at the end of the step (its COM, world
/// frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootTarget {
    /// COM position at t + h, m.
    pub x: Vector3<f64>,
    /// Orientation at t + h.
    pub q: UnitQuaternion<f64>,
    /// COM velocity at t + h, m/s.
    pub v: Vector3<f64>,
    /// Angular velocity at t + h, rad/s.
    pub w: Vector3<f64>,
}

impl RootTarget {
    /// A root held still at pose (`x`, `q`).
    pub fn fixed(x: Vector3<f64>, q: UnitQuaternion<f64>) -> Self {
        RootTarget {
            x,
            q,
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }
}

/// A root held to a prescribed motion by a 6-DOF spring-damper instead of hard rows
/// (METHOD §12.3, the "hand of god" a push can overcome), plus a known impulse over the
/// step (the inverse dynamics' root wrench × h: the support the recorded motion needs).
/// The wrench is linear in the state, so the step's gradient is exact: the root's block
/// of M̃ gains `h·D + h²·K` per axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootSpring {
    /// Pose and twist the spring pulls toward, at the end of the step.
    pub target: RootTarget,
    /// Translational stiffness, N/m.
    pub k_linear: f64,
    /// Translational damping, N·s/m.
    pub d_linear: f64,
    /// Rotational stiffness, N·m/rad.
    pub k_angular: f64,
    /// Rotational damping, N·m·s/rad.
    pub d_angular: f64,
    /// Known impulse on the root over the step (world; N·s, then N·m·s about its COM).
    pub impulse: Vector6<f64>,
}

impl RootSpring {
    /// The spring-damper's wrench (world; N, then N·m about the COM) on a root at `s`.
    pub fn wrench(&self, s: &BodyState) -> Vector6<f64> {
        let t = &self.target;
        let f = (t.x - s.x) * self.k_linear + (t.v - s.v) * self.d_linear;
        let tq =
            rotation_vector(&(t.q * s.q.inverse())) * self.k_angular + (t.w - s.w) * self.d_angular;
        Vector6::new(f.x, f.y, f.z, tq.x, tq.y, tq.z)
    }
}

/// How body 0 (the root) is driven.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Root {
    /// Free-floating: no root rows.
    #[default]
    Free,
    /// Pinned to a prescribed motion (METHOD §4 root rows, J_r = I₆): the twist is
    /// enforced at the velocity level and the pose error is fed to the drift control.
    Pinned(RootTarget),
    /// Held by a spring-damper toward a prescribed motion: no root rows.
    Spring(RootSpring),
}

impl Root {
    /// The target of a pinned root (`None` for a free or spring-held root, which have no
    /// root rows).
    pub fn target(&self) -> Option<&RootTarget> {
        match self {
            Root::Free | Root::Spring(_) => None,
            Root::Pinned(t) => Some(t),
        }
    }
}

/// Settings of the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepOptions {
    /// Time step h, s.
    pub h: f64,
    /// Constraint-drift control.
    pub drift: Drift,
    /// Central-difference step sizes for the torque gradients.
    pub gradient: GradientOptions,
    /// Extra chord iterations on the momentum-form rotational rows (0: plain linearly
    /// implicit step with the linearised gyroscopic term).
    pub gyroscopic_iterations: usize,
    /// Stop those iterations when the momentum residual is below this fraction of the
    /// largest momentum right-hand side (dimensionless).
    pub gyroscopic_tolerance: f64,
    /// At most this many post-stabilisation passes per step.
    pub post_stabilization_passes: usize,
    /// Post-stabilisation stops below this joint error, m (separation) and rad (rotation).
    pub post_stabilization_tolerance: f64,
    /// Post-stabilise with the step's own factorisation `[M̃ −J(p)ᵀ; J(p) 0]` (chord
    /// steps) instead of factoring `[M −J(p⁺)ᵀ; J(p⁺) 0]` afresh: saves one factorisation
    /// per step; each pass then shrinks the error by ~h|ω| rather than quadratically, and
    /// the correction is weighted by M̃ instead of M. Off by default (thesis: A = M); the
    /// character simulation turns it on ([`crate::sim::Projection::Step`]), projecting
    /// its feedforward's target velocities with the same factorisation.
    pub post_stabilization_reuse: bool,
    /// [`Drift::ImprovedImplicit`]: the half-step rows are `J u_½ = −((1 + α)/h) g`, so
    /// the linearised error after a step is −α g (+ curvature). α = 1 is Hong et al.'s
    /// literal scheme, whose reflected error mode is undamped; the default 0.9 damps it
    /// (dimensionless, in [0, 1]).
    pub improved_reflection: f64,
    /// A body faster than this after the step is an error, m/s.
    pub max_linear_speed: f64,
    /// A body spinning faster than this after the step is an error, rad/s.
    pub max_angular_speed: f64,
}

impl Default for StepOptions {
    fn default() -> Self {
        StepOptions {
            h: 1e-3,
            drift: Drift::PostStabilization,
            gradient: GradientOptions::default(),
            gyroscopic_iterations: 2,
            gyroscopic_tolerance: 1e-12,
            post_stabilization_passes: 2,
            post_stabilization_tolerance: 1e-8,
            post_stabilization_reuse: false,
            improved_reflection: 0.9,
            max_linear_speed: 1e3,
            max_angular_speed: 1e4,
        }
    }
}

/// Why a step failed. The state is left as it was before the step.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StepError {
    /// NaN or infinity in an input or a result.
    #[error("non-finite {what} on body {body} at t = {t} s")]
    NonFinite {
        /// Time at the start of the step, s.
        t: f64,
        /// Body index.
        body: usize,
        /// What was non-finite (`state`, `external wrench`, `joint torque`, `velocity`, …).
        what: &'static str,
    },
    /// A body's velocity exceeded the limits of [`StepOptions`].
    #[error(
        "body {body} blew up at t = {t} s: |v| = {linear_speed:.3e} m/s, |ω| = {angular_speed:.3e} rad/s"
    )]
    Exploded {
        /// Time at the start of the step, s.
        t: f64,
        /// The body furthest beyond the limits.
        body: usize,
        /// Its speed, m/s.
        linear_speed: f64,
        /// Its angular speed, rad/s.
        angular_speed: f64,
    },
    /// The constraint system could not be factored.
    #[error("constraint system at t = {t} s: {source}")]
    Singular {
        /// Time at the start of the step, s.
        t: f64,
        /// The failing block.
        #[source]
        source: KktError,
    },
    /// Inputs inconsistent with the model.
    #[error("bad input: {0}")]
    BadInput(String),
}

/// What one step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Chord iterations spent on the momentum-form rotational rows (summed over stages).
    pub gyroscopic_iterations: usize,
    /// Post-stabilisation outcome (only with [`Drift::PostStabilization`]).
    pub stabilization: Option<PostStabilizationReport>,
}

/// Preallocated workspace of the step for one model; reuse it for every step (no heap
/// allocation per step).
#[derive(Clone, Debug)]
pub struct Stepper {
    opts: StepOptions,
    grad: GradientEstimator,
    kkt: BlockTree,
    kkt2: BlockTree,
    sol: KktVector,
    res: KktVector,
    g: KktVector,
    iw: Vec<Matrix3<f64>>,
    force: Vec<Vector6<f64>>,
    active: Vec<bool>,
    tgrad: Vec<TorqueGradient>,
    /// Each joint's frame at the last `prepare`'s poses (`None`: no joint).
    frames: Vec<Option<JointFrame>>,
    gyro_jac: Vec<Matrix3<f64>>,
    gyro_n0: Vec<Vector3<f64>>,
    /// The rotational rows' part of `A u − Jᵀλ − rhs_lin` that the last solve holds: the
    /// linearisation G ω₀ − N(ω₀) plus every chord correction since (N·m·s). The chord
    /// iterations' residual is then `G ω − N(ω)` minus this, with no product by A.
    gyro_offset: Vec<Vector3<f64>>,
    rhs_lin: Vec<Vector6<f64>>,
    /// The bodies a re-solve's right-hand-side change reaches on their ways to the root
    /// (see [`BlockTree::solve_sparse`]).
    rhs_path: Vec<usize>,
    u_new: Vec<Vector6<f64>>,
    u_pos: Vec<Vector6<f64>>,
    next: Vec<BodyState>,
    report: StepReport,
    t: f64,
    /// The root spring's implicit gain of the last prepared step (h D + h² K: linear,
    /// angular), zero without a spring.
    spring_gain: (f64, f64),
    /// The last solve left its chord iterations for later
    /// ([`solve_deferring_iterations`](Stepper::solve_deferring_iterations)).
    deferred: bool,
    /// [`factor`](Stepper::factor) assembled and factored the step, and
    /// [`solve_factored`](Stepper::solve_factored) has not solved it yet.
    factored: bool,
    /// `kkt2` holds the factorisation of the last [`finish`](Stepper::finish)'s
    /// post-stabilisation ([`post_stabilization_factor`](Stepper::post_stabilization_factor)).
    post_factor: bool,
    /// Scratch for [`converged_velocities`](Stepper::converged_velocities): the solution
    /// and chord offsets it restores.
    side_sol: KktVector,
    side_offset: Vec<Vector3<f64>>,
    /// Per body: the angular velocity the next solve linearises its gyroscopic rows about
    /// (rad/s), when [`predict_angular_velocities`](Stepper::predict_angular_velocities)
    /// gave one; the state's own otherwise.
    w_lin: Vec<Vector3<f64>>,
    w_lin_set: bool,
}

fn top(v: &Vector6<f64>) -> Vector3<f64> {
    v.fixed_rows::<3>(0).into_owned()
}

fn bottom(v: &Vector6<f64>) -> Vector3<f64> {
    v.fixed_rows::<3>(3).into_owned()
}

/// N(ω) = E(h ω) I_w ω − I_w ω: the momentum-form rotational row minus its linear part.
#[inline]
fn gyro_n(h: f64, iw: &Matrix3<f64>, w: &Vector3<f64>) -> Vector3<f64> {
    let l = iw * w;
    rotation_from_vector(&(w * h)) * l - l
}

/// Right Jacobian of SO(3): ∂(exp(\[φ\]×) v)/∂φ = −exp(\[φ\]×) \[v\]× J_r(φ), with
/// J_r = I − a \[φ\]× + b \[φ\]×², a = (1 − cos θ)/θ², b = (θ − sin θ)/θ³, θ = |φ|.
#[inline]
fn right_jacobian(phi: &Vector3<f64>) -> Matrix3<f64> {
    let y = phi.norm_squared();
    let (a, b) = if y < 0.0625 {
        // a step turns a body by far less than 0.25 rad: the series (to θ¹⁰, truncation
        // below 2e-18 of a and b) spares a square root, sin and cos
        let a = 0.5
            + y * (-1.0 / 24.0
                + y * (1.0 / 720.0
                    + y * (-1.0 / 40320.0 + y * (1.0 / 3628800.0 + y * (-1.0 / 479001600.0)))));
        let b = 1.0 / 6.0
            + y * (-1.0 / 120.0
                + y * (1.0 / 5040.0
                    + y * (-1.0 / 362880.0 + y * (1.0 / 39916800.0 + y * (-1.0 / 6227020800.0)))));
        (a, b)
    } else {
        let th = y.sqrt();
        ((1.0 - th.cos()) / y, (th - th.sin()) / (y * th))
    };
    // [φ]×² = φφᵀ − θ² I
    let k = phi.cross_matrix();
    let k2 = phi * phi.transpose() - Matrix3::from_diagonal_element(y);
    Matrix3::identity() - k * a + k2 * b
}

/// N(ω₀) and its exact Jacobian N'(ω₀) = E (I_w − h \[I_w ω₀\]× J_r(h ω₀)) − I_w, the
/// gyroscopic part of M̃ (≈ h(\[ω\]× I_w − \[I_w ω\]×) to first order).
#[inline]
pub(crate) fn gyro_n_and_jacobian(
    h: f64,
    iw: &Matrix3<f64>,
    w: &Vector3<f64>,
) -> (Vector3<f64>, Matrix3<f64>) {
    let l = iw * w;
    let phi = w * h;
    let e = rotation_from_vector(&phi).to_rotation_matrix();
    let e = e.matrix();
    let n = e * l - l;
    let jac = e * (iw - l.cross_matrix() * right_jacobian(&phi) * h) - iw;
    (n, jac)
}

fn finite6(v: &Vector6<f64>) -> bool {
    all_finite(v.as_slice())
}

/// True if every entry is finite: x·0 is NaN exactly for infinite or NaN x, so the sum is
/// zero unless one is not. Branch-free over a plain slice (the per-entry early exits of
/// `iter().all` over nalgebra's element iterators cost ~7 k instructions a step).
#[inline]
fn all_finite(s: &[f64]) -> bool {
    s.iter().fold(0.0, |acc, &x| acc + x * 0.0) == 0.0
}

impl Stepper {
    /// A workspace for `model` with `options`.
    pub fn new(model: &Model, options: StepOptions) -> Result<Self, StepError> {
        if !(options.h > 0.0 && options.h.is_finite()) {
            return Err(StepError::BadInput(format!(
                "time step h = {} s must be positive",
                options.h
            )));
        }
        let parents: Vec<Option<usize>> = model.bodies.iter().map(|b| b.parent).collect();
        let kkt = BlockTree::new(&parents).map_err(|e| StepError::BadInput(e.to_string()))?;
        let n = parents.len();
        Ok(Stepper {
            opts: options,
            grad: GradientEstimator::new(options.gradient),
            kkt2: kkt.clone(),
            kkt,
            sol: KktVector::zeros(n),
            res: KktVector::zeros(n),
            g: KktVector::zeros(n),
            iw: vec![Matrix3::zeros(); n],
            force: vec![Vector6::zeros(); n],
            active: vec![false; n],
            tgrad: vec![TorqueGradient::default(); n],
            frames: vec![None; n],
            gyro_jac: vec![Matrix3::zeros(); n],
            gyro_n0: vec![Vector3::zeros(); n],
            gyro_offset: vec![Vector3::zeros(); n],
            rhs_lin: vec![Vector6::zeros(); n],
            rhs_path: Vec::with_capacity(n),
            u_new: vec![Vector6::zeros(); n],
            spring_gain: (0.0, 0.0),
            u_pos: vec![Vector6::zeros(); n],
            next: vec![BodyState::default(); n],
            report: StepReport::default(),
            t: 0.0,
            deferred: false,
            factored: false,
            post_factor: false,
            side_sol: KktVector::zeros(n),
            side_offset: vec![Vector3::zeros(); n],
            w_lin: vec![Vector3::zeros(); n],
            w_lin_set: false,
        })
    }

    /// Linearise the next solve's gyroscopic rows about these angular velocities (world,
    /// rad/s, one per body) instead of the state's: a prediction of the step's end makes
    /// the chord iterations' start closer to the nonlinear solution. The step they
    /// converge to does not depend on it, up to their tolerance (with
    /// [`StepOptions::gyroscopic_iterations`] = 0 the step is the plain linearly implicit
    /// one about this point). A prediction with the wrong number of bodies or a non-finite
    /// value is ignored: the state's ω serves.
    pub fn predict_angular_velocities(&mut self, w: impl IntoIterator<Item = Vector3<f64>>) {
        let mut w = w.into_iter();
        let mut usable = true;
        for slot in self.w_lin.iter_mut() {
            match w.next() {
                Some(v) => {
                    usable &= v.iter().all(|x| x.is_finite());
                    *slot = v;
                }
                None => usable = false,
            }
        }
        self.w_lin_set = usable && w.next().is_none();
    }

    /// The options in use.
    pub fn options(&self) -> &StepOptions {
        &self.opts
    }

    /// Change the options (e.g. the drift control) between steps.
    pub fn set_options(&mut self, options: StepOptions) -> Result<(), StepError> {
        if !(options.h > 0.0 && options.h.is_finite()) {
            return Err(StepError::BadInput(format!(
                "time step h = {} s must be positive",
                options.h
            )));
        }
        self.grad = GradientEstimator::new(options.gradient);
        self.opts = options;
        Ok(())
    }

    /// Each joint's frame (anchors and axes, world) at the poses of the last
    /// [`prepare`](Self::prepare), the step's start: `None` for a body without a joint.
    /// What the step's joint rows were built from, for whoever needs the same frames at
    /// that pose (the feedforward's joint torques) without evaluating them again.
    pub fn joint_frames(&self) -> &[Option<JointFrame>] {
        &self.frames
    }

    /// The factored dynamics system of the last step (for Schur complements of extra
    /// rows, e.g. contacts): valid after [`solve`](Self::solve).
    pub fn kkt(&self) -> &BlockTree {
        &self.kkt
    }

    /// Advance `state` by one step h. On error `state` is unchanged.
    pub fn step<T: JointTorque + ?Sized>(
        &mut self,
        model: &Model,
        state: &mut State,
        root: &Root,
        torques: &T,
        external: Option<&[(Vector3<f64>, Vector3<f64>)]>,
    ) -> Result<StepReport, StepError> {
        self.prepare(model, state, root, torques, external)?;
        self.solve(model, state, root)?;
        self.finish(model, state, root)
    }

    /// Phase 1 (exposed for benchmarks): world inertias, applied forces, joint torques
    /// and their numerical gradients, joint rows at p, and g(p) if the drift control
    /// needs it.
    pub fn prepare<T: JointTorque + ?Sized>(
        &mut self,
        model: &Model,
        state: &State,
        root: &Root,
        torques: &T,
        external: Option<&[(Vector3<f64>, Vector3<f64>)]>,
    ) -> Result<(), StepError> {
        let n = model.bodies.len();
        let t = state.t;
        self.t = t;
        self.report = StepReport::default();
        self.spring_gain = match root {
            Root::Spring(s) => {
                let h = self.opts.h;
                (
                    h * s.d_linear + h * h * s.k_linear,
                    h * s.d_angular + h * h * s.k_angular,
                )
            }
            _ => (0.0, 0.0),
        };
        if state.bodies.len() != n || self.kkt.len() != n {
            return Err(StepError::BadInput(format!(
                "state has {} bodies, workspace {}, model {n}",
                state.bodies.len(),
                self.kkt.len()
            )));
        }
        if let Some(ext) = external
            && ext.len() != n
        {
            return Err(StepError::BadInput(format!(
                "{} external wrenches for {n} bodies",
                ext.len()
            )));
        }
        for (b, body) in model.bodies.iter().enumerate() {
            let s = &state.bodies[b];
            let ok = all_finite(s.x.as_slice())
                && all_finite(s.v.as_slice())
                && all_finite(s.w.as_slice())
                && all_finite(s.q.coords.as_slice());
            if !ok {
                return Err(StepError::NonFinite {
                    t,
                    body: b,
                    what: "state",
                });
            }
            self.iw[b] = s.world_inertia(&body.inertia);
            let mut f = model.gravity * body.mass;
            let mut tq = Vector3::zeros();
            if let Some(ext) = external {
                let (fe, te) = ext[b];
                if !(all_finite(fe.as_slice()) && all_finite(te.as_slice())) {
                    return Err(StepError::NonFinite {
                        t,
                        body: b,
                        what: "external wrench",
                    });
                }
                f += fe;
                tq += te;
            }
            self.force[b] = Vector6::new(f.x, f.y, f.z, tq.x, tq.y, tq.z);
        }
        let pinned = root.target().is_some();
        for (b, body) in model.bodies.iter().enumerate() {
            let (Some(a), Some(joint)) = (body.parent, body.joint.as_ref()) else {
                let own = b == 0 && pinned;
                self.kkt
                    .set_rows(b, if own { 6 } else { 0 })
                    .map_err(|e| StepError::Singular { t, source: e })?;
                *self.kkt.j_self_mut(b) = if own {
                    Matrix6::identity()
                } else {
                    Matrix6::zeros()
                };
                self.kkt.j_parent_mut(b).fill(0.0);
                self.active[b] = false;
                self.frames[b] = None;
                continue;
            };
            let (sa, sb) = (&state.bodies[a], &state.bodies[b]);
            let (jp, jc) = self.kkt.joint_blocks_mut(b);
            let (c, frame) = joint_rows(joint, &sa.q, &sb.q, jp, jc);
            self.frames[b] = Some(frame);
            self.kkt
                .set_rows(b, c)
                .map_err(|e| StepError::Singular { t, source: e })?;
            self.active[b] = torques.is_active(b);
            if !self.active[b] {
                continue;
            }
            // the provider's own gradient goes straight into the step's block (see
            // `GradientEstimator::pd_gradient_from_child`)
            let tg = &mut self.tgrad[b];
            let tau = match torques.torque_and_gradient(b, sa, sb, t, &self.grad, tg) {
                Some(tau) => tau,
                None => {
                    let tau = torques.torque(b, sa, sb, t);
                    let structure = TorqueStructure {
                        affine: torques.affine_in_angular_velocity(),
                        relative: torques.relative_angular_velocity_only(),
                        frame_indifferent: torques.frame_indifferent(),
                    };
                    *tg = self.grad.torque_gradient_structured(
                        |pa, pb| torques.torque(b, pa, pb, t),
                        sa,
                        sb,
                        &tau,
                        structure,
                    );
                    tau
                }
            };
            let finite = all_finite(tau.as_slice())
                && tg
                    .d_theta
                    .iter()
                    .chain(tg.d_omega.iter())
                    .all(|m| all_finite(m.as_slice()));
            if !finite {
                return Err(StepError::NonFinite {
                    t,
                    body: b,
                    what: "joint torque",
                });
            }
            for k in 0..3 {
                self.force[b][3 + k] += tau[k];
                self.force[a][3 + k] -= tau[k];
            }
        }
        if matches!(
            self.opts.drift,
            Drift::Baumgarte { .. } | Drift::ImprovedImplicit
        ) {
            constraint_error(model, &state.bodies, root.target(), &mut self.g);
        }
        Ok(())
    }

    /// Write the torque-gradient blocks for step `he` into `kkt` and the f̃ correction
    /// into `rhs` (both already holding the mass part).
    fn add_torque_terms(
        model: &Model,
        state: &State,
        active: &[bool],
        tgrad: &[TorqueGradient],
        he: f64,
        kkt: &mut BlockTree,
        rhs: &mut [Vector6<f64>],
    ) {
        for (b, body) in model.bodies.iter().enumerate() {
            let Some(a) = body.parent else { continue };
            if !active[b] {
                continue;
            }
            let tg = &tgrad[b];
            let ka = tg.d_theta[0] * (he * he) + tg.d_omega[0] * he;
            let kb = tg.d_theta[1] * (he * he) + tg.d_omega[1] * he;
            {
                let mut d = kkt.diag_mut(b).fixed_view_mut::<3, 3>(3, 3);
                d -= kb;
            }
            {
                let mut d = kkt.diag_mut(a).fixed_view_mut::<3, 3>(3, 3);
                d += ka;
            }
            kkt.a_child_parent_mut(b)
                .fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&(-ka));
            kkt.a_parent_child_mut(b)
                .fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&kb);
            // f̃ = f − ∇_u f · u
            let du = (tg.d_omega[0] * state.bodies[a].w + tg.d_omega[1] * state.bodies[b].w) * he;
            for k in 0..3 {
                rhs[b][3 + k] -= du[k];
                rhs[a][3 + k] += du[k];
            }
        }
    }

    /// The root spring-damper, backward Euler: with F(x⁺, v⁺) = K(x_d − x − h v⁺) +
    /// D(v_d − v⁺) the momentum row M(v⁺ − v) = h F + impulse becomes
    /// (M + hD + h²K) v⁺ = M v + hK(x_d − x) + hD v_d + impulse; the same per rotation axis
    /// with θ_err(R⁺) ≈ θ_err(R) − hω⁺ (θ_err the rotation vector of R_d R⁻¹).
    fn add_root_spring(
        spring: &RootSpring,
        s: &BodyState,
        h: f64,
        kkt: &mut BlockTree,
        rhs: &mut [Vector6<f64>],
    ) {
        let t = &spring.target;
        let lin = h * spring.d_linear + h * h * spring.k_linear;
        let ang = h * spring.d_angular + h * h * spring.k_angular;
        let d = kkt.diag_mut(0);
        for k in 0..3 {
            d[(k, k)] += lin;
            d[(3 + k, 3 + k)] += ang;
        }
        let f = (t.x - s.x) * (h * spring.k_linear) + t.v * (h * spring.d_linear);
        let tq = rotation_vector(&(t.q * s.q.inverse())) * (h * spring.k_angular)
            + t.w * (h * spring.d_angular);
        rhs[0] += Vector6::new(f.x, f.y, f.z, tq.x, tq.y, tq.z) + spring.impulse;
    }

    /// Mass part of the momentum rows: diag(m I, `iw_new`) on the diagonal, zero
    /// couplings, and rhs = M u + he f.
    fn add_mass_terms(
        model: &Model,
        state: &State,
        iw: &[Matrix3<f64>],
        force: &[Vector6<f64>],
        he: f64,
        kkt: &mut BlockTree,
        rhs: &mut [Vector6<f64>],
    ) {
        for (b, body) in model.bodies.iter().enumerate() {
            let s = &state.bodies[b];
            let d = kkt.diag_mut(b);
            d.fill(0.0);
            for k in 0..3 {
                d[(k, k)] = body.mass;
            }
            kkt.a_child_parent_mut(b).fill(0.0);
            kkt.a_parent_child_mut(b).fill(0.0);
            let p = s.v * body.mass + top(&force[b]) * he;
            let l = iw[b] * s.w + bottom(&force[b]) * he;
            rhs[b] = Vector6::new(p.x, p.y, p.z, l.x, l.y, l.z);
        }
    }

    /// Phase 2 (exposed for benchmarks): assemble M̃ and the right-hand sides, factor,
    /// solve, and iterate the momentum-form rotational rows; for
    /// [`Drift::ImprovedImplicit`] both stages.
    pub fn solve(&mut self, model: &Model, state: &State, root: &Root) -> Result<(), StepError> {
        self.solve_with(model, state, root, true)
    }

    /// [`solve`](Self::solve) without the chord iterations on the rotational rows, when a
    /// re-solve follows ([`resolve_with_external`](Self::resolve_with_external), whose
    /// iterations converge the rows with everything in them): the iterations of this
    /// first solve would only be undone by the change the re-solve brings. The
    /// velocities are then those of the linearised step until [`converge`](Self::converge),
    /// a re-solve or [`finish`](Self::finish) runs the iterations;
    /// [`converged_velocities`](Self::converged_velocities) gives the converged ones
    /// without disturbing the deferred solve. The improved implicit scheme iterates as
    /// usual (its second stage needs the first converged).
    pub fn solve_deferring_iterations(
        &mut self,
        model: &Model,
        state: &State,
        root: &Root,
    ) -> Result<(), StepError> {
        let improved = self.opts.drift == Drift::ImprovedImplicit;
        self.solve_with(model, state, root, improved)
    }

    /// Run the chord iterations a [`solve_deferring_iterations`](Self::solve_deferring_iterations)
    /// left (a no-op otherwise).
    pub fn converge(&mut self) -> Result<(), StepError> {
        if !self.deferred {
            return Ok(());
        }
        self.deferred = false;
        // as many as a re-solve after a deferred solve may take (see
        // `resolve_with_rhs_change`), so converging here after a deferred re-solve is
        // the same arithmetic as that re-solve iterating at once
        let max = 2 * self.opts.gyroscopic_iterations;
        self.report.gyroscopic_iterations += self.iterate_gyroscopic_at_most(self.opts.h, max)?;
        self.u_new.copy_from_slice(&self.sol.body);
        self.u_pos.copy_from_slice(&self.sol.body);
        Ok(())
    }

    /// The velocities the last solve converges to (per body v, ω; m/s, rad/s), into
    /// `out`: with deferred iterations they are run on a copy, and the deferred solve is
    /// left as it was, so what follows takes the same path as without this call.
    pub fn converged_velocities(&mut self, out: &mut Vec<Vector6<f64>>) -> Result<(), StepError> {
        out.clear();
        if !self.deferred {
            out.extend_from_slice(&self.sol.body);
            return Ok(());
        }
        self.side_sol.body.copy_from_slice(&self.sol.body);
        self.side_sol.rows.copy_from_slice(&self.sol.rows);
        self.side_offset.copy_from_slice(&self.gyro_offset);
        let result = self.iterate_gyroscopic(self.opts.h);
        out.extend_from_slice(&self.sol.body);
        self.sol.body.copy_from_slice(&self.side_sol.body);
        self.sol.rows.copy_from_slice(&self.side_sol.rows);
        self.gyro_offset.copy_from_slice(&self.side_offset);
        result.map(|_| ())
    }

    /// The factorisation of `[M −Jᵀ; J 0]` that the last [`finish`](Self::finish) built to
    /// post-stabilise, at the poses the step reached before their projection (M and J
    /// there; a pinned root's rows J_r = I), or `None` if that step had no such
    /// factorisation (no pass was needed, another drift scheme, or
    /// [`StepOptions::post_stabilization_reuse`]). A solve with it projects velocities in
    /// the mass metric onto joint rows that differ from the next step's by the projection's
    /// own displacement (~1e-5 m): the discrete-time inverse dynamics uses it instead of
    /// factoring the same matrix again at the next step's start.
    pub fn post_stabilization_factor(&self) -> Option<&BlockTree> {
        self.post_factor.then_some(&self.kkt2)
    }

    /// The change of the step's momentum rows from the last solve's velocities u to
    /// `target` (per body; N·s, then N·m·s): F(target) − F(u) with
    /// F(u) = A u + N(ω) − G ω (the rotational rows in momentum form, as the chord
    /// iterations solve them), which is what extra right-hand side (e.g. h Hᵀψ + Jᵀ Δλ)
    /// makes the step land on `target`. F(u) is taken by the iterations' bookkeeping
    /// (A u − Jᵀλ = rhs + offset holds after every solve), so u needs no converging
    /// first: the discrete-time inverse dynamics reads the linearised solve. `work` is
    /// scratch of the bodies' length. Not available with [`Drift::ImprovedImplicit`],
    /// whose result comes from a second system.
    pub fn momentum_change_to(
        &self,
        target: &[Vector6<f64>],
        work: &mut [Vector6<f64>],
        out: &mut [Vector6<f64>],
    ) -> Result<(), StepError> {
        let n = self.kkt.len();
        if self.opts.drift == Drift::ImprovedImplicit {
            return Err(StepError::BadInput(
                "the momentum change is not available with the improved implicit scheme".into(),
            ));
        }
        if target.len() != n || work.len() != n || out.len() != n {
            return Err(StepError::BadInput(format!(
                "momentum change of {} velocities for {n} bodies",
                target.len()
            )));
        }
        for b in 0..n {
            work[b] = target[b] - self.sol.body[b];
        }
        self.kkt.momentum_rows(work, out);
        let h = self.opts.h;
        for b in 0..n {
            let w = bottom(&target[b]);
            let rot = gyro_n(h, &self.iw[b], &w) - self.gyro_jac[b] * w + self.gyro_offset[b];
            for k in 0..3 {
                out[b][3 + k] += rot[k];
            }
        }
        Ok(())
    }

    /// [`prepare`](Self::prepare)'s step assembled and factored, not solved: the
    /// discrete-time inverse dynamics finds ψ from this factorisation
    /// ([`kkt`](Self::kkt), [`momentum_to_reach`](Self::momentum_to_reach)) and then
    /// solves the step once with it ([`solve_factored`](Self::solve_factored)), where it
    /// solved with ψ = 0 and again with ψ: a solve per step fewer, in the precompute and in
    /// every simulation step that takes the same path. Not available with
    /// [`Drift::ImprovedImplicit`], whose second stage needs the first solved.
    pub fn factor(&mut self, model: &Model, state: &State, root: &Root) -> Result<(), StepError> {
        if self.opts.drift == Drift::ImprovedImplicit {
            return Err(StepError::BadInput(
                "factoring without solving is not available with the improved implicit scheme"
                    .into(),
            ));
        }
        self.assemble_and_factor(model, state, root)?;
        self.factored = true;
        Ok(())
    }

    /// Solve the step [`factor`](Self::factor) left, with extra external wrenches (world;
    /// per body force N, torque about the COM N·m) in its right-hand side, leaving the
    /// chord iterations to what follows as
    /// [`solve_deferring_iterations`](Self::solve_deferring_iterations) does (a re-solve
    /// with contact impulses, [`converge`](Self::converge) or [`finish`](Self::finish)).
    pub fn solve_factored(
        &mut self,
        extra: Option<&[(Vector3<f64>, Vector3<f64>)]>,
    ) -> Result<(), StepError> {
        if !self.factored {
            return Err(StepError::BadInput(
                "solve_factored needs a step factored by `factor` and not yet solved".into(),
            ));
        }
        if let Some(extra) = extra {
            self.external_rhs_change(extra)?;
            // every wrench checked before any is added: an error leaves the step as it was
            self.check_rhs_change("external wrench")?;
            for b in 0..self.rhs_lin.len() {
                let dr = self.res.body[b];
                // the bookkeeping of the chord iterations: rhs_lin is what the momentum
                // rows balance (see `iterate_gyroscopic_at_most`)
                self.rhs_lin[b] += dr;
                self.sol.body[b] += dr;
            }
        }
        self.factored = false;
        self.solve_assembled(false, self.opts.h)
    }

    /// The impulse the step's momentum rows need, beyond the right-hand side they have,
    /// to land on `target` (per body v, ω; m/s, rad/s) with the joint rows' multipliers
    /// at zero: F(target) − rhs with F(u) = A u + N(ω) − G ω (the rotational rows in
    /// momentum form, as the chord iterations converge them), per body N·s, then N·m·s.
    /// Split by the tree's sweep into joint impulses Jᵀλ and torques Hᵀ(hψ), it is the
    /// discrete-time inverse dynamics' wrench; a velocity on the joint rows (J target = 0)
    /// is then reached by [`solve_factored`](Self::solve_factored) with Hᵀψ alone, the
    /// rows supplying the Jᵀλ part. Needs the step factored (or solved); not available
    /// with [`Drift::ImprovedImplicit`].
    pub fn momentum_to_reach(
        &self,
        target: &[Vector6<f64>],
        out: &mut [Vector6<f64>],
    ) -> Result<(), StepError> {
        let n = self.kkt.len();
        if self.opts.drift == Drift::ImprovedImplicit {
            return Err(StepError::BadInput(
                "the momentum to reach a velocity is not available with the improved implicit scheme"
                    .into(),
            ));
        }
        if target.len() != n || out.len() != n {
            return Err(StepError::BadInput(format!(
                "momentum to reach {} velocities for {n} bodies",
                target.len()
            )));
        }
        self.kkt.momentum_rows(target, out);
        let h = self.opts.h;
        for b in 0..n {
            let w = bottom(&target[b]);
            let rot = gyro_n(h, &self.iw[b], &w) - self.gyro_jac[b] * w;
            out[b] -= self.rhs_lin[b];
            for k in 0..3 {
                out[b][3 + k] += rot[k];
            }
        }
        Ok(())
    }

    fn solve_with(
        &mut self,
        model: &Model,
        state: &State,
        root: &Root,
        iterate: bool,
    ) -> Result<(), StepError> {
        let he = self.assemble_and_factor(model, state, root)?;
        self.solve_assembled(iterate, he)?;
        if self.opts.drift != Drift::ImprovedImplicit {
            return Ok(());
        }
        self.improved_second_stage(model, state, root)
    }

    /// Assemble M̃ and the right-hand sides of the step (into `sol`) and factor; the
    /// step's effective h (h, or h/2 for the improved scheme's first stage) is returned.
    fn assemble_and_factor(
        &mut self,
        model: &Model,
        state: &State,
        root: &Root,
    ) -> Result<f64, StepError> {
        self.deferred = false;
        self.factored = false;
        let h = self.opts.h;
        let t = self.t;
        let improved = self.opts.drift == Drift::ImprovedImplicit;
        // the second stage builds its system in kkt2
        self.post_factor &= !improved;
        let he = if improved { 0.5 * h } else { h };
        let n = model.bodies.len();

        // ---- momentum rows: mass, gyroscopic Jacobian, torque gradients
        Self::add_mass_terms(
            model,
            state,
            &self.iw,
            &self.force,
            he,
            &mut self.kkt,
            &mut self.rhs_lin,
        );
        // the linearisation point: the prediction if one was given, else the state's ω
        if !std::mem::take(&mut self.w_lin_set) {
            for (w, s) in self.w_lin.iter_mut().zip(&state.bodies) {
                *w = s.w;
            }
        }
        for b in 0..n {
            let iw = self.iw[b];
            let (nw, gj) = gyro_n_and_jacobian(he, &iw, &self.w_lin[b]);
            self.gyro_jac[b] = gj;
            self.gyro_n0[b] = nw;
            let mut d = self.kkt.diag_mut(b).fixed_view_mut::<3, 3>(3, 3);
            d.copy_from(&(iw + gj));
        }
        Self::add_torque_terms(
            model,
            state,
            &self.active,
            &self.tgrad,
            he,
            &mut self.kkt,
            &mut self.rhs_lin,
        );
        if let Root::Spring(spring) = root {
            if improved {
                return Err(StepError::BadInput(
                    "a spring-held root is not available with the improved implicit scheme".into(),
                ));
            }
            Self::add_root_spring(
                spring,
                &state.bodies[0],
                h,
                &mut self.kkt,
                &mut self.rhs_lin,
            );
        }
        for b in 0..n {
            let lin = self.gyro_jac[b] * self.w_lin[b] - self.gyro_n0[b];
            self.gyro_offset[b] = lin;
            let mut r = self.rhs_lin[b];
            for k in 0..3 {
                r[3 + k] += lin[k];
            }
            self.sol.body[b] = r;
        }

        // ---- constraint rows
        let beta = match self.opts.drift {
            Drift::None | Drift::PostStabilization => 0.0,
            Drift::Baumgarte { beta } => beta,
            Drift::ImprovedImplicit => (1.0 + self.opts.improved_reflection) / h,
        };
        for b in 0..n {
            let c = self.kkt.rows(b);
            let row = &mut self.sol.rows[b];
            row.fill(0.0);
            if beta != 0.0 {
                for k in 0..c {
                    row[k] = -beta * self.g.rows[b][k];
                }
            }
        }
        if let Some(target) = root.target() {
            let s0 = &state.bodies[0];
            let mut ud = Vector6::new(
                target.v.x, target.v.y, target.v.z, target.w.x, target.w.y, target.w.z,
            );
            if beta != 0.0 {
                // the root's error at t, estimated from the target at t + h
                let predicted = BodyState {
                    x: s0.x + target.v * h,
                    q: UnitQuaternion::from_scaled_axis(target.w * h) * s0.q,
                    ..*s0
                };
                ud -= root_error(&predicted, target) * beta;
            }
            self.sol.rows[0] = ud;
        }

        self.kkt
            .factor()
            .map_err(|e| StepError::Singular { t, source: e })?;
        Ok(he)
    }

    /// Solve the assembled and factored step (`sol` holds its right-hand sides), then
    /// iterate the rotational rows, or leave the iterations for later.
    fn solve_assembled(&mut self, iterate: bool, he: f64) -> Result<(), StepError> {
        self.kkt
            .solve(&mut self.sol)
            .map_err(|e| StepError::Singular {
                t: self.t,
                source: e,
            })?;
        if iterate {
            self.report.gyroscopic_iterations += self.iterate_gyroscopic(he)?;
        } else {
            self.deferred = true;
        }
        self.u_new.copy_from_slice(&self.sol.body);
        self.u_pos.copy_from_slice(&self.sol.body);
        Ok(())
    }

    /// The improved implicit scheme's second stage, after its first solved: a mid-point
    /// momentum step with the half-step multipliers at the half-step pose, plus a
    /// velocity projection at p⁺.
    fn improved_second_stage(
        &mut self,
        model: &Model,
        state: &State,
        root: &Root,
    ) -> Result<(), StepError> {
        let h = self.opts.h;
        let t = self.t;
        let n = model.bodies.len();
        self.u_pos.copy_from_slice(&self.sol.body);
        for b in 0..n {
            let s = &state.bodies[b];
            let u = &self.u_pos[b];
            let mut half = *s;
            half.displace(&(top(u) * (0.5 * h)), &(bottom(u) * (0.5 * h)));
            self.next[b] = half;
        }
        Self::add_mass_terms(
            model,
            state,
            &self.iw,
            &self.force,
            h,
            &mut self.kkt2,
            &mut self.rhs_lin,
        );
        // + 2 J(p_½)ᵀ λ_½ (the joints' half-step impulses applied over the whole step)
        for (b, body) in model.bodies.iter().enumerate() {
            let (Some(a), Some(joint)) = (body.parent, body.joint.as_ref()) else {
                continue;
            };
            let mut jp = Matrix6::zeros();
            let mut jc = Matrix6::zeros();
            let (c, _) = joint_rows(joint, &self.next[a].q, &self.next[b].q, &mut jp, &mut jc);
            let lam = self.sol.rows[b];
            for r in 0..6 {
                let (mut sa, mut sb) = (0.0, 0.0);
                for k in 0..c {
                    sa += jp[(k, r)] * lam[k];
                    sb += jc[(k, r)] * lam[k];
                }
                self.rhs_lin[a][r] += 2.0 * sa;
                self.rhs_lin[b][r] += 2.0 * sb;
            }
        }
        // end-of-step pose p⁺ = p ⊕ h u_½: inertia for the momentum rows, rows for the
        // projection J(p⁺) u⁺ = 0
        for b in 0..n {
            let s = &state.bodies[b];
            let u = &self.u_pos[b];
            let mut end = *s;
            end.displace(&(top(u) * h), &(bottom(u) * h));
            self.next[b] = end;
            self.kkt2
                .diag_mut(b)
                .fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&end.world_inertia(&model.bodies[b].inertia));
        }
        // the torque gradients after the inertia is set: they add to its diagonal blocks
        // (set before, they were overwritten there while their couplings stayed, and the
        // PD feedback blew the demo walk up within 5 steps)
        Self::add_torque_terms(
            model,
            state,
            &self.active,
            &self.tgrad,
            h,
            &mut self.kkt2,
            &mut self.rhs_lin,
        );
        let pinned = root.target();
        for (b, body) in model.bodies.iter().enumerate() {
            self.sol.body[b] = self.rhs_lin[b];
            self.sol.rows[b].fill(0.0);
            let rows = match (body.parent, body.joint.as_ref()) {
                (Some(a), Some(joint)) => {
                    let (jp, jc) = self.kkt2.joint_blocks_mut(b);
                    let (c, _) = joint_rows(joint, &self.next[a].q, &self.next[b].q, jp, jc);
                    c
                }
                _ => {
                    let own = b == 0 && pinned.is_some();
                    *self.kkt2.j_self_mut(b) = if own {
                        Matrix6::identity()
                    } else {
                        Matrix6::zeros()
                    };
                    self.kkt2.j_parent_mut(b).fill(0.0);
                    if own { 6 } else { 0 }
                }
            };
            self.kkt2
                .set_rows(b, rows)
                .map_err(|e| StepError::Singular { t, source: e })?;
        }
        if let Some(target) = pinned {
            self.sol.rows[0] = Vector6::new(
                target.v.x, target.v.y, target.v.z, target.w.x, target.w.y, target.w.z,
            );
        }
        self.kkt2
            .factor()
            .map_err(|e| StepError::Singular { t, source: e })?;
        self.kkt2
            .solve(&mut self.sol)
            .map_err(|e| StepError::Singular { t, source: e })?;
        self.u_new.copy_from_slice(&self.sol.body);
        Ok(())
    }

    /// The impulse the root rows of a pinned root exert on the root over the last
    /// [`solve`](Self::solve) (world; N·s, then N·m·s about its COM): the "hand of god"
    /// of that step. Zero for a free or spring-held root.
    pub fn root_impulse(&self) -> Vector6<f64> {
        if self.kkt.rows(0) == 6 {
            self.sol.rows[0]
        } else {
            Vector6::zeros()
        }
    }

    /// The impulse a spring-held root's spring adds over the step (world; N·s, then N·m·s)
    /// when the root's velocity at the step's end changes by `du_root` (m/s, rad/s), as an
    /// impulse applied within the step does: the spring is implicit, so it reacts at once,
    /// −(h D + h² K) Δu. Zero for a pinned or free root.
    pub fn root_spring_reaction(&self, du_root: &Vector6<f64>) -> Vector6<f64> {
        let (lin, ang) = self.spring_gain;
        let mut r = -du_root;
        for k in 0..3 {
            r[k] *= lin;
            r[3 + k] *= ang;
        }
        r
    }

    /// Velocities u⁺ (per body: v, ω) found by the last [`solve`](Self::solve), before the
    /// position update: the free velocities a contact solver starts from.
    pub fn velocities(&self) -> &[Vector6<f64>] {
        &self.u_new
    }

    /// Add velocity changes (contact impulse responses, computed with [`kkt`](Self::kkt))
    /// to the solved velocities, before [`finish`](Self::finish) updates positions.
    pub fn add_velocities(&mut self, du: &[Vector6<f64>]) {
        for (b, d) in du.iter().enumerate().take(self.u_new.len()) {
            self.u_new[b] += d;
            self.u_pos[b] += d;
        }
    }

    /// Add external wrenches (world; per body force N, torque about the COM N·m) to the
    /// last [`solve`](Self::solve) and solve again with its factorisation: external
    /// wrenches enter only the right-hand side (they have no gradient), so M̃ is unchanged
    /// and the new solution costs a few back-substitutions instead of a second
    /// [`prepare`](Self::prepare) + factorisation. The discrete-time inverse dynamics uses
    /// this for its step with ψ after the step with ψ = 0. Call before
    /// [`finish`](Self::finish); not available with [`Drift::ImprovedImplicit`], whose
    /// second stage depends on the first.
    pub fn resolve_with_external(
        &mut self,
        extra: &[(Vector3<f64>, Vector3<f64>)],
    ) -> Result<(), StepError> {
        self.external_rhs_change(extra)?;
        self.resolve_with_rhs_change("external wrench", false)
    }

    /// [`resolve_with_external`](Self::resolve_with_external) leaving the chord
    /// iterations to whatever follows (a re-solve with contact impulses, which converges
    /// the rows with everything in them, else [`converge`](Self::converge) or
    /// [`finish`](Self::finish)), as [`solve_deferring_iterations`](Self::solve_deferring_iterations)
    /// does: iterating here would only be undone by the contact impulses. Until then the
    /// velocities are the linearised step's (they differ from the converged ones by the
    /// gyroscopic nonlinearity, ~1e-7 of the momentum).
    pub fn resolve_with_external_deferring_iterations(
        &mut self,
        extra: &[(Vector3<f64>, Vector3<f64>)],
    ) -> Result<(), StepError> {
        self.external_rhs_change(extra)?;
        self.resolve_with_rhs_change("external wrench", true)
    }

    /// Put external wrenches (world; N, N·m) into `res.body` as the momentum rows'
    /// right-hand-side change h·(f, τ).
    fn external_rhs_change(
        &mut self,
        extra: &[(Vector3<f64>, Vector3<f64>)],
    ) -> Result<(), StepError> {
        let h = self.opts.h;
        let n = self.rhs_lin.len();
        if extra.len() != n {
            return Err(StepError::BadInput(format!(
                "{} extra wrenches for {n} bodies",
                extra.len()
            )));
        }
        for (b, (f, tau)) in extra.iter().enumerate() {
            self.res.body[b] = Vector6::new(f.x, f.y, f.z, tau.x, tau.y, tau.z) * h;
        }
        Ok(())
    }

    /// Add impulses (world; per body N·s, then N·m·s about the COM — e.g. contact
    /// impulses) to the momentum rows of the last [`solve`](Self::solve) and solve again
    /// with its factorisation, the momentum-form rotational rows iterated to the same
    /// tolerance as the step's own. Unlike adding the linear response
    /// ([`add_velocities`](Self::add_velocities)), the result satisfies the step's
    /// nonlinear rows with the impulses in them, so a free figure's angular momentum
    /// changes by exactly the impulses' moment. Call before [`finish`](Self::finish); not
    /// available with [`Drift::ImprovedImplicit`].
    pub fn resolve_with_impulses(&mut self, impulses: &[Vector6<f64>]) -> Result<(), StepError> {
        let n = self.rhs_lin.len();
        if impulses.len() != n {
            return Err(StepError::BadInput(format!(
                "{} impulses for {n} bodies",
                impulses.len()
            )));
        }
        self.res.body.copy_from_slice(impulses);
        self.resolve_with_rhs_change("impulse", false)
    }

    /// An error naming the first body whose right-hand-side change in `self.res.body`
    /// (`what`, e.g. "external wrench") is not finite.
    fn check_rhs_change(&self, what: &'static str) -> Result<(), StepError> {
        match self.res.body.iter().position(|dr| !finite6(dr)) {
            Some(body) => Err(StepError::NonFinite {
                t: self.t,
                body,
                what,
            }),
            None => Ok(()),
        }
    }

    /// Add `self.res.body` (a change of the momentum rows' right-hand side, N·s and
    /// N·m·s) to the last solve and solve again (see
    /// [`resolve_with_external`](Self::resolve_with_external)); `what` names the input in
    /// errors. With `defer` the chord iterations are left pending (see
    /// [`resolve_with_external_deferring_iterations`](Self::resolve_with_external_deferring_iterations)).
    fn resolve_with_rhs_change(
        &mut self,
        what: &'static str,
        defer: bool,
    ) -> Result<(), StepError> {
        if self.opts.drift == Drift::ImprovedImplicit {
            return Err(StepError::BadInput(format!(
                "re-solving with an extra {what} is not available with the improved implicit scheme"
            )));
        }
        let h = self.opts.h;
        let n = self.rhs_lin.len();
        self.check_rhs_change(what)?;
        for b in 0..n {
            self.rhs_lin[b] += self.res.body[b];
            self.res.rows[b].fill(0.0);
        }
        // One chord step takes up the change of the right-hand side, known exactly, so it
        // needs no residual evaluation; what the last solve left unconverged and the
        // gyroscopic nonlinearity go to the usual iterations. The change is mostly on a
        // few bodies (contact impulses on the feet): the elimination runs on their ways
        // to the root only.
        let mut path = std::mem::take(&mut self.rhs_path);
        let changed = self.res.body.iter().enumerate();
        let changed = changed.filter(|(_, r)| r.iter().any(|&v| v != 0.0));
        self.kkt.path_to_root(changed.map(|(b, _)| b), &mut path);
        let solved = self.kkt.solve_sparse(&mut self.res, &path);
        self.rhs_path = path;
        solved.map_err(|e| StepError::Singular {
            t: self.t,
            source: e,
        })?;
        for b in 0..n {
            self.sol.body[b] += self.res.body[b];
            self.sol.rows[b] += self.res.rows[b];
        }
        if defer {
            self.deferred = true;
            self.report.gyroscopic_iterations += 1;
            self.u_new.copy_from_slice(&self.sol.body);
            self.u_pos.copy_from_slice(&self.sol.body);
            return Ok(());
        }
        // a deferred first solve hands its own iterations on to this one
        let max = self.opts.gyroscopic_iterations * if self.deferred { 2 } else { 1 };
        self.deferred = false;
        self.report.gyroscopic_iterations += 1 + self.iterate_gyroscopic_at_most(h, max)?;
        self.u_new.copy_from_slice(&self.sol.body);
        self.u_pos.copy_from_slice(&self.sol.body);
        Ok(())
    }

    /// Chord iterations on `K_lin u + N(ω) − Jᵀλ = rhs_lin`, reusing the factorisation.
    fn iterate_gyroscopic(&mut self, he: f64) -> Result<usize, StepError> {
        self.iterate_gyroscopic_at_most(he, self.opts.gyroscopic_iterations)
    }

    /// [`iterate_gyroscopic`](Self::iterate_gyroscopic) with at most `max` iterations.
    ///
    /// The residual of `K_lin u + N(ω) − G ω − Jᵀλ = rhs_lin` is kept by bookkeeping, not
    /// by multiplying with K_lin: every solve makes `K_lin u − Jᵀλ = rhs_lin + offset`
    /// (offset: the linearisation `G ω₀ − N(ω₀)` plus the corrections solved since), so
    /// the residual is `G ω − N(ω) − offset` in the rotational rows and zero elsewhere, up
    /// to the solves' round-off (~1e-16 relative). A product by the whole matrix cost
    /// as much as a back-substitution per iteration.
    fn iterate_gyroscopic_at_most(&mut self, he: f64, max: usize) -> Result<usize, StepError> {
        let n = self.kkt.len();
        // the right-hand side the iterations balance does not change in them
        let scale = self.rhs_lin[..n]
            .iter()
            .fold(0.0_f64, |s, r| s.max(r.amax()));
        let tolerance = self.opts.gyroscopic_tolerance * scale;
        let mut its = 0;
        while its < max {
            let mut worst: f64 = 0.0;
            let residual = self.res.body[..n].iter_mut().zip(&mut self.res.rows[..n]);
            let at = self.sol.body[..n]
                .iter()
                .zip(&self.gyro_jac[..n])
                .zip(&self.iw[..n])
                .zip(&self.gyro_offset[..n]);
            for ((res, rows), (((u, jac), iw), offset)) in residual.zip(at) {
                let w = bottom(u);
                let r = jac * w - gyro_n(he, iw, &w) - offset;
                worst = worst.max(r.amax());
                *res = Vector6::new(0.0, 0.0, 0.0, r.x, r.y, r.z);
                rows.fill(0.0);
            }
            // NaN stops too: the velocity check in `finish` reports it
            if worst.is_nan() || worst <= tolerance {
                break;
            }
            for (offset, res) in self.gyro_offset[..n].iter_mut().zip(&self.res.body[..n]) {
                *offset += bottom(res);
            }
            self.kkt
                .solve(&mut self.res)
                .map_err(|e| StepError::Singular {
                    t: self.t,
                    source: e,
                })?;
            for b in 0..n {
                self.sol.body[b] += self.res.body[b];
                self.sol.rows[b] += self.res.rows[b];
            }
            its += 1;
        }
        Ok(its)
    }

    /// Phase 3 (exposed for benchmarks): check the new velocities, update positions
    /// (x⁺ = x + h v, R⁺ = exp(\[h ω\]×) R), post-stabilise if selected, and commit into
    /// `state` (t += h). On error `state` is unchanged.
    pub fn finish(
        &mut self,
        model: &Model,
        state: &mut State,
        root: &Root,
    ) -> Result<StepReport, StepError> {
        self.converge()?;
        let h = self.opts.h;
        let t = self.t;
        let n = model.bodies.len();
        let mut worst: Option<(usize, f64, f64, f64)> = None;
        for b in 0..n {
            let (u, up) = (&self.u_new[b], &self.u_pos[b]);
            if !finite6(u) || !finite6(up) {
                return Err(StepError::NonFinite {
                    t,
                    body: b,
                    what: "velocity",
                });
            }
            let (vs, ws) = (top(u).norm(), bottom(u).norm());
            let ratio = (vs / self.opts.max_linear_speed).max(ws / self.opts.max_angular_speed);
            if ratio > 1.0 && worst.is_none_or(|w| ratio > w.1) {
                worst = Some((b, ratio, vs, ws));
            }
        }
        if let Some((body, _, linear_speed, angular_speed)) = worst {
            return Err(StepError::Exploded {
                t,
                body,
                linear_speed,
                angular_speed,
            });
        }
        for b in 0..n {
            let s = &state.bodies[b];
            let up = &self.u_pos[b];
            let u = &self.u_new[b];
            self.next[b] = BodyState {
                x: s.x + top(up) * h,
                q: renormalize(rotation_from_vector(&(bottom(up) * h)) * s.q),
                v: top(u),
                w: bottom(u),
            };
        }
        self.post_factor = false;
        if self.opts.drift == Drift::PostStabilization {
            let reuse = self.opts.post_stabilization_reuse;
            let rep = post_stabilize(
                model,
                &mut self.next,
                root.target(),
                if reuse { &mut self.kkt } else { &mut self.kkt2 },
                &mut self.res,
                self.opts.post_stabilization_passes,
                self.opts.post_stabilization_tolerance,
                !reuse,
            )
            .map_err(|e| StepError::Singular { t, source: e })?;
            self.report.stabilization = Some(rep);
            self.post_factor = !reuse && rep.passes > 0;
            for (b, s) in self.next.iter().enumerate() {
                if !(all_finite(s.x.as_slice()) && all_finite(s.q.coords.as_slice())) {
                    return Err(StepError::NonFinite {
                        t,
                        body: b,
                        what: "position after stabilization",
                    });
                }
            }
        }
        state.bodies.copy_from_slice(&self.next);
        state.t = t + h;
        Ok(self.report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N'(ω₀) against central differences of N, on both sides of the series' threshold
    /// (|hω| = 0.25 rad) and far from it; and the series' a, b against the closed forms.
    #[test]
    fn the_gyroscopic_jacobian_is_ns_derivative() {
        let iw = Matrix3::new(0.31, 0.02, -0.05, 0.02, 0.18, 0.01, -0.05, 0.01, 0.09);
        let dir = Vector3::new(0.3, -0.8, 0.52).normalize();
        let h = 1.0 / 240.0;
        for speed in [0.0, 1e-3, 2.0, 30.0, 59.9, 60.1, 150.0, 700.0] {
            let w = dir * speed + Vector3::new(0.01, 0.02, -0.03);
            let (n, jac) = gyro_n_and_jacobian(h, &iw, &w);
            // the same N as the chord iterations evaluate (to rounding of |I_w ω|)
            assert!((n - gyro_n(h, &iw, &w)).amax() <= 1e-14 * (iw * w).amax().max(1e-12));
            let eps = 1e-6 * speed.max(1.0);
            let mut fd = Matrix3::zeros();
            for k in 0..3 {
                let mut d = Vector3::zeros();
                d[k] = eps;
                fd.set_column(
                    k,
                    &((gyro_n(h, &iw, &(w + d)) - gyro_n(h, &iw, &(w - d))) / (2.0 * eps)),
                );
            }
            let err = (jac - fd).amax();
            assert!(
                err < 1e-7 * jac.amax(),
                "|ω| {speed}: {err:e} of {:e}",
                jac.amax()
            );
        }
        for th in [1e-5f64, 0.01, 0.1, 0.2, 0.2499] {
            let phi = Vector3::new(0.6, 0.0, 0.8) * th;
            let closed = {
                let k = phi.cross_matrix();
                let (a, b) = (
                    (1.0 - th.cos()) / (th * th),
                    (th - th.sin()) / (th * th * th),
                );
                Matrix3::identity() - k * a + k * k * b
            };
            // the closed form loses digits to cancellation as θ → 0 (1 − cos θ ≈ θ²/2)
            let tol = if th < 0.05 { 1e-6 } else { 1e-14 };
            assert!((right_jacobian(&phi) - closed).amax() < tol, "θ {th}");
        }
    }
}
