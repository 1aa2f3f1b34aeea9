//! The simulation's contact phase (METHOD §9, §12.3): each step, after the character's
//! velocities are solved without contacts, the balls' contacts with the character, the
//! ground and each other, and the character's floor contacts, solved in one LCP whose
//! impulses go back into the step. The building blocks it uses — swept collision, the
//! frictional impulse rows, Lemke — are the top-level [`crate::contact`]; this module is
//! the step's use of them.
//!
//! - [`rows`]: contact rows, who receives their impulses, biases, directions, relative
//!   velocities;
//! - [`detect`]: swept detection of the balls' contacts;
//! - [`delassus`]: impulse responses through the step's factorisation, the Delassus matrix;
//! - [`solve`]: free velocities, warm start / Lemke / fallback, applying the impulses.

mod delassus;
mod detect;
mod rows;
mod solve;

pub use rows::FloorRow;
pub(crate) use rows::floor_row_bias;
pub use solve::WarmStart;

use crate::dynamics::kkt::KktVector;
use crate::dynamics::state::State;
use crate::dynamics::step::Stepper;
use crate::sim::balls::{Ball, Touched};
use crate::skeleton::Model;
use detect::detect_ball_rows;
use nalgebra::{DMatrix, DVector, Matrix6, Vector3, Vector6};
use rows::{ContactRow, Owner};
use solve::solve_and_apply;

/// Contact settings of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactOptions {
    /// Ground height, m (`None`: no ground).
    pub ground_y: Option<f64>,
    /// Restitution ball–ground.
    pub ground_restitution: f64,
    /// Friction ball–ground.
    pub ground_friction: f64,
    /// Restitution ball–ball.
    pub ball_restitution: f64,
    /// Friction directions of the polyhedral cone.
    pub directions: usize,
    /// Below this approach speed (m/s) restitution is off, so resting contact stays put.
    pub restitution_threshold: f64,
    /// Contacts within this gap (m) at the start of a step count as touching.
    pub margin: f64,
    /// Try the reference's expected floor impulses (the inverse dynamics' support split)
    /// as the LCP's solution of the character's floor rows before building their Delassus
    /// matrix: taken when every supported point then moves with its surface, which holds
    /// on the unperturbed path (the feedforward and any run's steps before a hit), and
    /// refused, for the next 64 contact phases, once a push has moved the figure off it.
    /// Off: every contact phase solves the LCP.
    pub expected_impulses: bool,
}

impl Default for ContactOptions {
    fn default() -> Self {
        ContactOptions {
            ground_y: None,
            ground_restitution: 0.6,
            ground_friction: 0.6,
            ball_restitution: 0.7,
            directions: 4,
            restitution_threshold: 0.3,
            margin: 1e-4,
            expected_impulses: true,
        }
    }
}

/// Why the contact phase failed.
#[derive(Debug, thiserror::Error)]
pub enum ContactError {
    /// The LCP had no solution even without restitution and friction.
    #[error("contact LCP at t = {t:.4} s failed: {message}")]
    Lcp {
        /// Time, s.
        t: f64,
        /// Lemke's message.
        message: String,
    },
}

/// Scratch of the contact phase (reused between steps).
#[derive(Clone, Debug, Default)]
pub struct ContactWorkspace {
    rhs: Option<KktVector>,
    /// The contacted bodies' responses to unit wrenches on each other, 6×6 blocks
    /// (see [`delassus::contacted_responses`]).
    responses: Vec<Matrix6<f64>>,
    /// Each contact row's velocity response at the contacted bodies (see
    /// [`delassus::delassus_matrix`]).
    row_responses: Vec<Vector6<f64>>,
    /// The contacted bodies' ways to the root.
    path: Vec<usize>,
    /// The last step's Delassus matrix (storage reused, see [`delassus::Delassus`]).
    delassus: DMatrix<f64>,
    /// The step's frictional LCP, M and q (see [`crate::contact::friction_lcp_into`]).
    lcp_m: DMatrix<f64>,
    lcp_q: DVector<f64>,
    /// The last contact LCP's rows and active set, tried first in the next step.
    warm_start: Option<WarmStart>,
    /// The character's bodies that received a contact impulse in the last contact phase
    /// (floor or ball), each once, in increasing order.
    touching: Vec<usize>,
    /// The phase's contact rows (storage kept from step to step).
    rows: Vec<ContactRow>,
    /// The phase's other buffers.
    scratch: solve::PhaseScratch,
    /// The buffers of the LCP of balls apart from the character (touching only the floor
    /// or each other), solved beside the character's (see `solve::lcp_split_and_apply`);
    /// its warm start travels in this one's.
    apart: Option<Box<ContactWorkspace>>,
}

/// The workspace's scratch right-hand side for the step's factorisation, sized for `n`
/// bodies (its contents are whatever the last use left). A free function over the field,
/// so the workspace's other fields stay borrowable beside it.
pub(super) fn rhs_buffer(slot: &mut Option<KktVector>, n: usize) -> &mut KktVector {
    let rhs = slot.get_or_insert_with(|| KktVector::zeros(n));
    if rhs.body.len() != n {
        *rhs = KktVector::zeros(n);
    }
    rhs
}

impl ContactWorkspace {
    /// The character's bodies that received a contact impulse (from the floor or a ball)
    /// in the last contact phase, each once, in increasing order.
    pub fn touching(&self) -> &[usize] {
        &self.touching
    }

    /// Forget the last contact phase's touching bodies (a step without one).
    pub fn clear_touching(&mut self) {
        self.touching.clear();
    }

    /// The touching bodies of a contact phase taken from elsewhere (a replayed step).
    pub(crate) fn set_touching(&mut self, bodies: &[usize]) {
        self.touching.clear();
        self.touching.extend_from_slice(bodies);
    }

    /// The active set the next contact phase tries first (`None`: straight to Lemke).
    pub fn warm_start(&self) -> Option<&WarmStart> {
        self.warm_start.as_ref()
    }

    /// Set what the next contact phase tries first (a snapshot's, or `None`).
    pub fn set_warm_start(&mut self, warm: Option<WarmStart>) {
        self.warm_start = warm;
    }
}

/// Outcome of one contact phase.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactReport {
    /// Contacts in the LCP.
    pub contacts: usize,
    /// Lemke pivots (or, when `warm_started`, rounds of active-set changes).
    pub pivots: usize,
    /// The LCP was answered without Lemke: from the previous step's active set, or (see
    /// `expected`) by the reference's expected floor impulses.
    pub warm_started: bool,
    /// The character's floor rows took the impulses the reference's support split expects
    /// (they solved the LCP as they were: every supported point moves with its surface,
    /// within `EXPECTED_TOLERANCE_M_S`), with no Delassus matrix built for them.
    pub expected: bool,
    /// Impulse the root's holder received because of the contacts (world, N·s): a pinned
    /// root's rows, or a spring-held root's implicit spring answering the contacts' change
    /// of its velocity — what the "hand of god" absorbed.
    pub root_impulse: Vector3<f64>,
    /// Linear momentum change of the character from the contacts, N·s.
    pub character_momentum: Vector3<f64>,
    /// Linear momentum change of the balls from the contacts, N·s (ground contacts
    /// included: the ground absorbs those).
    pub ball_momentum: Vector3<f64>,
    /// The part of `ball_momentum` that came from the ground, N·s.
    pub ground_impulse: Vector3<f64>,
    /// Impulse of the floor on the character (world, N·s).
    pub floor_impulse: Vector3<f64>,
    /// Moment of the floor's impulses about the world origin (N·m·s): Σ p × λ over the
    /// floor rows, each impulse at its contact point p. With `floor_impulse` it gives the
    /// floor's angular impulse about any point o, `floor_moment − o × floor_impulse`, for
    /// an angular momentum balance of the character (bookkeeping only).
    pub floor_moment: Vector3<f64>,
    /// Floor contacts of the character in the LCP.
    pub floor_contacts: usize,
    /// The frictional LCP with restitution had no solution Lemke could find, and the
    /// step's contacts were solved without restitution and friction instead (METHOD §9:
    /// squeezed balls). Counted in the metrics, never silent.
    pub fallback: bool,
}

/// Detect contacts over the step [t, t+h], solve the contact LCP and apply the impulses:
/// to the character through `stepper` (before its position update) and to the balls,
/// whose positions are advanced here (to the time of impact, then with the new velocity).
#[allow(clippy::too_many_arguments)]
pub fn contact_phase(
    model: &Model,
    state: &State,
    stepper: &mut Stepper,
    balls: &mut [Ball],
    opts: &ContactOptions,
    t: f64,
    h: f64,
    ws: &mut ContactWorkspace,
) -> Result<ContactReport, ContactError> {
    contact_phase_with_floor(model, state, stepper, balls, &[], opts, t, h, ws)
}

/// [`contact_phase`] with the character's floor contacts `floor` in the same LCP
/// (METHOD §12.3: e = 0, friction, the floor possibly moving with a supporting point).
#[allow(clippy::too_many_arguments)]
pub fn contact_phase_with_floor(
    model: &Model,
    state: &State,
    stepper: &mut Stepper,
    balls: &mut [Ball],
    floor: &[FloorRow],
    opts: &ContactOptions,
    t: f64,
    h: f64,
    ws: &mut ContactWorkspace,
) -> Result<ContactReport, ContactError> {
    let g = model.gravity;
    ws.touching.clear();
    // Ballistic free motion of the balls.
    let v_free: Vec<Vector3<f64>> = balls.iter().map(|b| b.v + g * h).collect();
    let detected = detect_ball_rows(model, state, stepper.velocities(), balls, &v_free, opts, h);
    // the rows in the workspace's storage (floor rows come every step)
    let mut rows = std::mem::take(&mut ws.rows);
    rows.clear();
    rows.extend(detected);
    let mut report = ContactReport::default();
    // Balls' impact times (earliest per ball) for the position update.
    let mut toi_of: Vec<Option<f64>> = vec![None; balls.len()];
    for r in &rows {
        if let Some(i) = r.ball() {
            toi_of[i] = Some(toi_of[i].map_or(r.toi, |x: f64| x.min(r.toi)));
        }
    }
    for f in floor {
        rows.push(ContactRow {
            owner: Owner::Body(f.body),
            other: Touched::Ground,
            p: f.point,
            n: Vector3::y(),
            toi: 0.0,
            bias: floor_row_bias(f.gap, h),
            surface_velocity: f.surface_velocity,
            restitution: 0.0,
            friction: f.friction,
            id: f.id,
            expected_impulse: f.expected_impulse,
        });
        report.floor_contacts += 1;
    }
    if rows.is_empty() {
        for (i, b) in balls.iter_mut().enumerate() {
            b.v = v_free[i];
        }
    } else {
        solve_and_apply(
            model,
            state,
            stepper,
            balls,
            &v_free,
            &rows,
            opts,
            t,
            h,
            ws,
            &mut report,
        )?;
    }
    // Positions: to the impact point, then on with the new velocity.
    for (i, b) in balls.iter_mut().enumerate() {
        if !b.active {
            continue;
        }
        match toi_of[i] {
            Some(toi) => b.x += v_free[i] * toi + b.v * (h - toi),
            None => b.x += b.v * h,
        }
        // never rest inside the ground (resting contact within round-off)
        if let Some(y) = opts.ground_y
            && b.x.y < y + b.params.radius
        {
            b.x.y = y + b.params.radius;
        }
    }
    // drop zero-impulse records (touching without pushing)
    for b in balls.iter_mut() {
        b.hits.retain(|hh| hh.impulse.norm() > 0.0);
    }
    ws.rows = rows;
    Ok(report)
}
