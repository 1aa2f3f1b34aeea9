//! Thrown balls and their contacts with the character, the ground and each other
//! (METHOD §9). Each step, after the character's velocities are solved without contacts:
//! continuous detection (swept sphere against moving capsules, the ground plane and other
//! balls, so a 40 m/s ball cannot tunnel through a forearm), then one LCP for all
//! contacts — Newton restitution and a polyhedral friction cone (Anitescu–Potra), solved
//! with Lemke — whose Delassus matrix J K⁻¹ Jᵀ comes from impulse responses through the
//! step's own O(n) factorisation. No penalty springs.

use crate::contact::collide::{
    Plane, Sphere, WorldCapsule, sweep_sphere_capsule, sweep_sphere_plane, sweep_sphere_sphere,
};
use crate::contact::impulse::{FrictionLayout, friction_lcp, tangent_directions};
use crate::contact::lcp::{LcpSolution, lemke, solve_from_support};
use crate::dynamics::kkt::KktVector;
use crate::dynamics::stabilize::Drift;
use crate::dynamics::state::State;
use crate::dynamics::step::Stepper;
use crate::skeleton::Model;
use nalgebra::{DMatrix, DVector, Vector3, Vector6};

/// Physical properties of a ball.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BallParams {
    /// Mass, kg.
    pub mass: f64,
    /// Radius, m.
    pub radius: f64,
    /// Newton restitution against the body (dimensionless).
    pub restitution: f64,
    /// Coulomb friction coefficient against the body.
    pub friction: f64,
}

impl Default for BallParams {
    /// A handball: 0.45 kg, 0.095 m.
    fn default() -> Self {
        BallParams {
            mass: 0.45,
            radius: 0.095,
            restitution: 0.5,
            friction: 0.5,
        }
    }
}

/// What a ball touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touched {
    /// A body of the character (index).
    Body(usize),
    /// The ground plane.
    Ground,
    /// Another ball (index).
    Ball(usize),
}

/// One contact impulse received by a ball.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Time of impact, s.
    pub t: f64,
    /// What it touched.
    pub other: Touched,
    /// Impulse on the ball (world, N·s), summed over the contact episode.
    pub impulse: Vector3<f64>,
    /// How long the contact lasted (0 for a single impact), s.
    pub duration: f64,
}

/// A thrown ball: a free rigid sphere with no controller.
#[derive(Clone, Debug, PartialEq)]
pub struct Ball {
    /// Properties.
    pub params: BallParams,
    /// Launch time, s.
    pub launch_t: f64,
    /// Launch point, m.
    pub launch_x: Vector3<f64>,
    /// Launch velocity, m/s.
    pub launch_v: Vector3<f64>,
    /// Centre, m (valid once launched).
    pub x: Vector3<f64>,
    /// Velocity, m/s.
    pub v: Vector3<f64>,
    /// Spin, rad/s.
    pub w: Vector3<f64>,
    /// In flight (launched).
    pub active: bool,
    /// Contact impulses received, in time order.
    pub hits: Vec<Hit>,
    /// The body the ball was aimed at (targeted throws), for the metrics.
    pub aimed_at: Option<usize>,
}

impl Ball {
    /// A ball launched at `t` (s) from `x` (m) with velocity `v` (m/s).
    pub fn new(params: BallParams, t: f64, x: Vector3<f64>, v: Vector3<f64>) -> Self {
        Ball {
            params,
            launch_t: t,
            launch_x: x,
            launch_v: v,
            x,
            v,
            w: Vector3::zeros(),
            active: false,
            hits: vec![],
            aimed_at: None,
        }
    }

    /// A handball-like ball (default restitution and friction) for a resolved launch.
    pub fn from_launch(l: &crate::sim::scenario::Launch) -> Self {
        let mut ball = Ball::new(
            BallParams {
                mass: l.mass,
                radius: l.radius,
                ..Default::default()
            },
            l.t,
            l.origin,
            l.velocity,
        );
        ball.aimed_at = l.aimed_at;
        ball
    }

    fn inv_inertia(&self) -> f64 {
        1.0 / (0.4 * self.params.mass * self.params.radius * self.params.radius)
    }
}

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

/// A capsule end of the character at (or near) the floor in a step (METHOD §12.3): the
/// simulation finds these; [`contact_phase_with_floor`] solves them in the same LCP as the
/// balls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloorRow {
    /// Body index.
    pub body: usize,
    /// The end sphere's lowest point at the start of the step (world, m).
    pub point: Vector3<f64>,
    /// Height of the point above the surface it must stay on, m (< 0: inside it).
    pub gap: f64,
    /// Velocity of that surface (world, m/s): zero for the floor, the reference's own
    /// contact-point velocity for a supporting point (see [`crate::sim::support`]).
    pub surface_velocity: Vector3<f64>,
    /// Coulomb friction coefficient.
    pub friction: f64,
    /// Which of the character's contact points this is (stable from step to step: the
    /// contact LCP matches rows across steps by it to start from the last active set).
    pub id: usize,
}

/// The object that receives +dir of a contact row's impulse.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Owner {
    Ball(usize),
    Body(usize),
}

#[derive(Clone, Copy, Debug)]
struct ContactRow {
    /// Receives +dir.
    owner: Owner,
    /// Receives −dir.
    other: Touched,
    /// Contact point, m.
    p: Vector3<f64>,
    /// Normal, from the other object toward the owner.
    n: Vector3<f64>,
    toi: f64,
    /// Added to the normal row's free velocity, m/s: the gap a step may close (> 0), or
    /// minus the rate that separates overlapping shapes.
    bias: f64,
    /// Velocity of the other object's surface when it is the ground, m/s.
    surface_velocity: Vector3<f64>,
    restitution: f64,
    friction: f64,
    /// Tells apart the rows of one pair of objects from step to step: the floor point, or
    /// the capsule a ball touches.
    id: usize,
}

impl ContactRow {
    fn ball(&self) -> Option<usize> {
        match self.owner {
            Owner::Ball(i) => Some(i),
            Owner::Body(_) => None,
        }
    }
}

/// Relative compliance added to the diagonal of the character's floor rows in the contact
/// LCP (see `solve_and_apply`).
const FLOOR_COMPLIANCE: f64 = 1e-3;

/// Separation bias of a capsule end found `depth` ≥ 0 below its surface: a tenth of it per
/// step, at most 0.2 m/s. Gentler than the balls' (which must not rest inside a limb): a
/// supported foot's surface is its reference height, and a perturbed foot a few mm below it
/// is a deviation the tracking returns, not an overlap to kick out.
fn floor_bias(depth: f64, h: f64) -> f64 {
    -(0.1 * depth / h).min(0.2)
}

/// Separation bias of a contact whose shapes overlap by `depth` ≥ 0: half the penetration
/// per step, at most 1 m/s.
fn overlap_bias(depth: f64, h: f64) -> f64 {
    -(0.5 * depth / h).min(1.0)
}

/// Scratch of the contact phase (reused between steps).
#[derive(Clone, Debug, Default)]
pub struct ContactWorkspace {
    rhs: Option<KktVector>,
    /// Per body: its velocity response to a unit wrench along each of the 6 axes (each
    /// body's twist), solved once per step when needed, on `path` only.
    responses: Vec<Option<Vec<Vec<Vector6<f64>>>>>,
    /// The contacted bodies' ways to the root.
    path: Vec<usize>,
    /// The last contact LCP's rows and active set, tried first in the next step.
    warm_start: Option<WarmStart>,
}

/// A contact row's unit wrench on each character body it pushes (owner side, other side:
/// body and (force, torque about its COM)).
type RowWrenches = [Option<(usize, Vector6<f64>)>; 2];

/// What identifies a contact row from one step to the next.
type RowKey = (Owner, Touched, usize);

/// The rows of a step's contact LCP and which of its variables were positive: the guess
/// for the next step's (see [`solve_with_support`]). Part of a run's state, since it
/// decides the round-off of the next step's impulses.
#[derive(Clone, Debug, PartialEq)]
pub struct WarmStart {
    rows: Vec<RowKey>,
    directions: usize,
    support: Vec<bool>,
}

impl WarmStart {
    /// The guessed support of an LCP whose rows are `rows` (in `layout`): each row seen
    /// last step as it was then, a new row inactive (a new contact mostly opens).
    fn support_for(&self, rows: &[RowKey], layout: FrictionLayout) -> Vec<bool> {
        let before = FrictionLayout {
            contacts: self.rows.len(),
            directions: self.directions,
        };
        let mut out = vec![false; layout.size()];
        for (c, key) in rows.iter().enumerate() {
            let Some(p) = self.rows.iter().position(|k| k == key) else {
                continue;
            };
            out[layout.normal(c)] = self.support[before.normal(p)];
            out[layout.slack(c)] = self.support[before.slack(p)];
            for k in 0..layout.directions {
                out[layout.tangent(c, k)] = self.support[before.tangent(p, k)];
            }
        }
        out
    }
}

impl ContactWorkspace {
    /// The active set the next contact phase tries first (`None`: straight to Lemke).
    pub fn warm_start(&self) -> Option<&WarmStart> {
        self.warm_start.as_ref()
    }

    /// Set what the next contact phase tries first (a snapshot's, or `None`).
    pub fn set_warm_start(&mut self, warm: Option<WarmStart>) {
        self.warm_start = warm;
    }
}

/// Round-off allowed in an accepted warm start, relative to the LCP's scale.
const WARM_START_TOLERANCE: f64 = 1e-12;
/// Rounds of active-set changes tried from the last step's support before Lemke.
const WARM_START_ROUNDS: usize = 4;

/// Outcome of one contact phase.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactReport {
    /// Contacts in the LCP.
    pub contacts: usize,
    /// Lemke pivots (or, when `warm_started`, rounds of active-set changes).
    pub pivots: usize,
    /// The LCP was solved from the previous step's active set, without Lemke.
    pub warm_started: bool,
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
    /// Floor contacts of the character in the LCP.
    pub floor_contacts: usize,
    /// The frictional LCP with restitution had no solution Lemke could find, and the
    /// step's contacts were solved without restitution and friction instead (METHOD §9:
    /// squeezed balls). Counted in the metrics, never silent.
    pub fallback: bool,
}

fn velocity_at(u: &Vector6<f64>, x: &Vector3<f64>, p: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(u[0], u[1], u[2]) + Vector3::new(u[3], u[4], u[5]).cross(&(p - x))
}

/// Activate balls launched within [t, t + h): their ballistic state at t.
pub fn launch_balls(balls: &mut [Ball], t: f64, h: f64, gravity: &Vector3<f64>) {
    for b in balls.iter_mut() {
        if !b.active && b.launch_t < t + h {
            let dt = t - b.launch_t;
            b.x = b.launch_x + b.launch_v * dt + gravity * (0.5 * dt * dt);
            b.v = b.launch_v + gravity * dt;
            b.active = true;
        }
    }
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
    // Ballistic free motion of the balls.
    let v_free: Vec<Vector3<f64>> = balls.iter().map(|b| b.v + g * h).collect();
    let mut rows = detect_ball_rows(model, state, stepper.velocities(), balls, &v_free, opts, h);
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
            bias: if f.gap >= 0.0 {
                f.gap / h
            } else {
                floor_bias(-f.gap, h)
            },
            surface_velocity: f.surface_velocity,
            restitution: 0.0,
            friction: f.friction,
            id: f.id,
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
    Ok(report)
}

/// The balls' contacts of the step: earliest impact per ball, plus those within a short
/// window of it (swept against the moving capsules, the ground and the other balls).
fn detect_ball_rows(
    model: &Model,
    state: &State,
    u_free: &[Vector6<f64>],
    balls: &[Ball],
    v_free: &[Vector3<f64>],
    opts: &ContactOptions,
    h: f64,
) -> Vec<ContactRow> {
    let mut rows: Vec<ContactRow> = vec![];
    let ground = opts.ground_y.map(Plane::ground);
    let row = |ball: usize, other, p, n, toi, depth: f64, restitution, friction, id| ContactRow {
        owner: Owner::Ball(ball),
        other,
        p,
        n,
        toi,
        bias: overlap_bias(depth.max(0.0), h),
        surface_velocity: Vector3::zeros(),
        restitution,
        friction,
        id,
    };
    for (i, ball) in balls.iter().enumerate() {
        if !ball.active {
            continue;
        }
        let sphere = Sphere::new(ball.x, ball.params.radius);
        let mut cands: Vec<ContactRow> = vec![];
        for (b, body) in model.bodies.iter().enumerate() {
            let s = &state.bodies[b];
            let (v, w) = (
                Vector3::new(u_free[b][0], u_free[b][1], u_free[b][2]),
                Vector3::new(u_free[b][3], u_free[b][4], u_free[b][5]),
            );
            for (id, cap) in body.capsules.iter().enumerate() {
                let wc = WorldCapsule::from_body(cap, &s.x, &s.q);
                let (va, vb) = WorldCapsule::endpoint_velocities(cap, &s.q, &v, &w);
                if let Some(hit) = sweep_sphere_capsule(&sphere, &v_free[i], &wc, &va, &vb, h) {
                    cands.push(row(
                        i,
                        Touched::Body(b),
                        hit.contact.point_a,
                        -hit.contact.normal,
                        hit.toi,
                        hit.contact.depth,
                        ball.params.restitution,
                        ball.params.friction,
                        id,
                    ));
                }
            }
        }
        if let Some(plane) = &ground
            && let Some(hit) = sweep_sphere_plane(&sphere, &v_free[i], plane, h)
        {
            cands.push(row(
                i,
                Touched::Ground,
                hit.contact.point_a,
                plane.normal,
                hit.toi,
                hit.contact.depth,
                opts.ground_restitution,
                opts.ground_friction,
                0,
            ));
        }
        for (j, other) in balls.iter().enumerate() {
            // one row per pair: keep it on the lower index
            if j <= i || !other.active {
                continue;
            }
            let so = Sphere::new(other.x, other.params.radius);
            if let Some(hit) = sweep_sphere_sphere(&sphere, &v_free[i], &so, &v_free[j], h) {
                cands.push(row(
                    i,
                    Touched::Ball(j),
                    hit.contact.point_a,
                    -hit.contact.normal,
                    hit.toi,
                    hit.contact.depth,
                    opts.ball_restitution,
                    0.3,
                    0,
                ));
            }
        }
        let Some(first) = cands.iter().map(|c| c.toi).reduce(f64::min) else {
            continue;
        };
        // Contacts count as simultaneous within 2 mm of ball travel (at most a quarter
        // step): a fast ball must not push a second limb it would only reach later.
        let window = (0.002 / v_free[i].norm().max(1e-9)).min(0.25 * h);
        rows.extend(cands.into_iter().filter(|c| c.toi <= first + window));
    }
    rows
}

/// The character's velocity response to a unit wrench on body `b` along each of the 6
/// axes (force x, y, z, torque x, y, z about its COM), solved with the step's
/// factorisation once per body and step, on the bodies of `ws.path` only (elsewhere the
/// entries are meaningless).
fn body_responses<'w>(
    stepper: &Stepper,
    ws: &'w mut ContactWorkspace,
    b: usize,
    n: usize,
    t: f64,
) -> Result<&'w [Vec<Vector6<f64>>], ContactError> {
    if ws.responses.len() != n {
        ws.responses = vec![None; n];
    }
    if ws.responses[b].is_none() {
        let rhs = ws.rhs.get_or_insert_with(|| KktVector::zeros(n));
        if rhs.body.len() != n {
            *rhs = KktVector::zeros(n);
        }
        let mut out = Vec::with_capacity(6);
        for axis in 0..6 {
            for &i in &ws.path {
                rhs.body[i] = Vector6::zeros();
                rhs.rows[i] = Vector6::zeros();
            }
            rhs.body[b][axis] = 1.0;
            stepper
                .kkt()
                .solve_on_path(rhs, &ws.path)
                .map_err(|e| ContactError::Lcp {
                    t,
                    message: e.to_string(),
                })?;
            out.push(rhs.body.clone());
        }
        ws.responses[b] = Some(out);
    }
    Ok(ws.responses[b].as_deref().unwrap_or(&[]))
}

/// Build the Delassus matrix of `rows`, solve the frictional LCP (falling back, reported,
/// to no restitution and no friction) and apply the impulses to the character and balls.
#[allow(clippy::too_many_arguments)]
fn solve_and_apply(
    model: &Model,
    state: &State,
    stepper: &mut Stepper,
    balls: &mut [Ball],
    v_free: &[Vector3<f64>],
    rows: &[ContactRow],
    opts: &ContactOptions,
    t: f64,
    h: f64,
    ws: &mut ContactWorkspace,
    report: &mut ContactReport,
) -> Result<(), ContactError> {
    let n = model.num_bodies();
    let u_free: Vec<Vector6<f64>> = stepper.velocities().to_vec();
    let nc = rows.len();
    let d = opts.directions;
    let layout = FrictionLayout {
        contacts: nc,
        directions: d,
    };
    let nr = layout.rows();
    // directions of every row: normals, then each contact's tangents
    let mut dirs: Vec<(usize, Vector3<f64>)> = Vec::with_capacity(nr);
    for (c, r) in rows.iter().enumerate() {
        dirs.push((c, r.n));
    }
    for (c, r) in rows.iter().enumerate() {
        for tdir in tangent_directions(&r.n, d) {
            dirs.push((c, tdir));
        }
    }
    let ball_at = |i: usize, r: &ContactRow| balls[i].x + v_free[i] * r.toi;
    // A body's COM at the row's time of impact, moving with its free velocity (as the
    // sweep moved its capsules): the lever arm to the contact point is taken from there.
    let com_at = |b: usize, r: &ContactRow| {
        state.bodies[b].x + Vector3::new(u_free[b][0], u_free[b][1], u_free[b][2]) * r.toi
    };
    // Balls' (velocity, spin) after the free step and at the start of the step; the
    // character's at the start of the step.
    let ball_free: Vec<(Vector3<f64>, Vector3<f64>)> = balls
        .iter()
        .enumerate()
        .map(|(i, b)| (v_free[i], b.w))
        .collect();
    let ball_start: Vec<(Vector3<f64>, Vector3<f64>)> = balls.iter().map(|b| (b.v, b.w)).collect();
    let u_start: Vec<Vector6<f64>> = state.bodies.iter().map(|s| s.twist()).collect();
    // Relative velocity (owner minus other) along row k for given velocities.
    let row_velocity = |k: usize, uc: &[Vector6<f64>], ub: &[(Vector3<f64>, Vector3<f64>)]| {
        let (c, dir) = dirs[k];
        let r = &rows[c];
        let vo = match r.owner {
            Owner::Ball(i) => ub[i].0 + ub[i].1.cross(&(r.p - ball_at(i, r))),
            Owner::Body(b) => velocity_at(&uc[b], &com_at(b, r), &r.p),
        };
        let vb = match r.other {
            Touched::Body(b) => velocity_at(&uc[b], &com_at(b, r), &r.p),
            Touched::Ground => Vector3::zeros(),
            Touched::Ball(j) => ub[j].0 + ub[j].1.cross(&(r.p - ball_at(j, r))),
        };
        (vo - vb).dot(&dir)
    };
    // Free contact velocities relative to the surfaces, with Newton restitution and the
    // gap bias on the normal rows.
    let mut free = DVector::zeros(nr);
    for k in 0..nr {
        let (c, dir) = dirs[k];
        free[k] = row_velocity(k, &u_free, &ball_free) - rows[c].surface_velocity.dot(&dir);
    }
    let plain = free.clone();
    for (c, r) in rows.iter().enumerate() {
        // Restitution from the approach velocity at the start of the step (METHOD §9:
        // w = J u⁺ + e·min(0, J u_k)), not after the free step: the step's own forces
        // (gravity on a limb, PD torques, a pinned root's motion) must not change the
        // bounce.
        let vn = row_velocity(c, &u_start, &ball_start) - r.surface_velocity.dot(&r.n);
        if vn < -opts.restitution_threshold {
            free[c] += r.restitution * vn;
        }
        free[c] += r.bias;
    }
    // Impulse responses, one column per row: a unit impulse +dir on the owner at p and
    // −dir on the other object. The character's answer is needed only at its bodies in the
    // rows (the Delassus entries): each unit wrench is solved on their ways to the root
    // alone (O(depth), not O(n)), and the impulses found are applied by one full solve.
    let mut contacted: Vec<usize> = rows
        .iter()
        .flat_map(|r| {
            let owner = match r.owner {
                Owner::Body(b) => Some(b),
                Owner::Ball(_) => None,
            };
            let other = match r.other {
                Touched::Body(b) => Some(b),
                _ => None,
            };
            owner.into_iter().chain(other)
        })
        .collect();
    contacted.sort_unstable();
    contacted.dedup();
    stepper
        .kkt()
        .path_to_root(contacted.iter().copied(), &mut ws.path);
    for x in ws.responses.iter_mut() {
        *x = None;
    }
    let mut row_wrenches: Vec<RowWrenches> = Vec::with_capacity(nr);
    let mut ball_resp: Vec<Vec<(Vector3<f64>, Vector3<f64>)>> = Vec::with_capacity(nr);
    let mut delassus = DMatrix::zeros(nr, nr);
    // the character's velocity response at its contacted bodies (others unused)
    let mut uc = vec![Vector6::zeros(); n];
    for &(c, dir) in &dirs {
        let r = &rows[c];
        let mut bresp = vec![(Vector3::zeros(), Vector3::zeros()); balls.len()];
        let mut wrenches: RowWrenches = [None, None];
        let mut push =
            |side: usize, side_dir: Vector3<f64>, target: Result<usize, usize>| match target {
                Ok(i) => {
                    let bx = ball_at(i, r);
                    bresp[i] = (
                        side_dir / balls[i].params.mass,
                        (r.p - bx).cross(&side_dir) * balls[i].inv_inertia(),
                    );
                }
                Err(b) => {
                    let tq = (r.p - com_at(b, r)).cross(&side_dir);
                    wrenches[side] = Some((
                        b,
                        Vector6::new(side_dir.x, side_dir.y, side_dir.z, tq.x, tq.y, tq.z),
                    ));
                }
            };
        match r.owner {
            Owner::Ball(i) => push(0, dir, Ok(i)),
            Owner::Body(b) => push(0, dir, Err(b)),
        }
        match r.other {
            Touched::Ball(j) => push(1, -dir, Ok(j)),
            Touched::Body(b) => push(1, -dir, Err(b)),
            Touched::Ground => {}
        }
        row_wrenches.push(wrenches);
        ball_resp.push(bresp);
    }
    // A row between character bodies and the ground reads the response as its wrench's
    // power: the relative velocity along dir is Σ_sides w·u (the other side's wrench
    // carries −dir).
    let on_balls: Vec<bool> = dirs
        .iter()
        .map(|(c, _)| rows[*c].ball().is_some() || matches!(rows[*c].other, Touched::Ball(_)))
        .collect();
    for k in 0..nr {
        for &b in &contacted {
            uc[b] = Vector6::zeros();
        }
        for (b, w) in row_wrenches[k].iter().flatten() {
            let resp = body_responses(stepper, ws, *b, n, t)?;
            for (axis, ru) in resp.iter().enumerate() {
                if w[axis] == 0.0 {
                    continue;
                }
                for &c in &contacted {
                    uc[c] += ru[c] * w[axis];
                }
            }
        }
        for row in 0..nr {
            delassus[(row, k)] = if on_balls[row] {
                row_velocity(row, &uc, &ball_resp[k])
            } else {
                row_wrenches[row]
                    .iter()
                    .flatten()
                    .map(|(b, w)| w.dot(&uc[*b]))
                    .sum()
            };
        }
    }
    // The character's floor rows are redundant (two or three points of one rigid foot,
    // friction couples along the line through them): their LCP has many solutions, and
    // Lemke picked a different one from step to step, a chatter that a 1 g tap grew into
    // a 1° wobble of the feet. A relative compliance on their diagonal (ODE's constraint
    // force mixing) makes the solution unique and continuous in the data; it changes an
    // unperturbed standing walk by 0.0005° RMS (and takes a Xia walk from 0.11° to 0.003°).
    for k in 0..nr {
        if rows[dirs[k].0].ball().is_none() {
            delassus[(k, k)] += FLOOR_COMPLIANCE * delassus[(k, k)].abs();
        }
    }
    let mu: Vec<f64> = rows.iter().map(|r| r.friction).collect();
    // The previous step's active set first (the same rows: planted feet, a resting ball),
    // then Lemke.
    let key: Vec<RowKey> = rows.iter().map(|r| (r.owner, r.other, r.id)).collect();
    let guess = ws
        .warm_start
        .take()
        .filter(|w| w.directions == d)
        .map(|w| w.support_for(&key, layout));
    // opposite friction directions (d even: t_k and t_(k+d/2) = −t_k) are never both on
    let mut partner = vec![None; layout.size()];
    if d.is_multiple_of(2) {
        for c in 0..nc {
            for k in 0..d {
                partner[layout.tangent(c, k)] = Some(layout.tangent(c, (k + d / 2) % d));
            }
        }
    }
    let solve = || -> Result<(LcpSolution, bool), String> {
        let (m, q) = friction_lcp(layout, &delassus, &free, &mu).map_err(|e| e.to_string())?;
        if let Some(sol) = guess.as_ref().and_then(|g| {
            solve_from_support(&m, &q, g, &partner, WARM_START_TOLERANCE, WARM_START_ROUNDS)
        }) {
            return Ok((sol, true));
        }
        Ok((lemke(&m, &q).map_err(|e| e.to_string())?, false))
    };
    let z = match solve() {
        Ok((sol, warm)) => {
            report.pivots = sol.pivots;
            report.warm_started = warm;
            ws.warm_start = Some(WarmStart {
                rows: key,
                directions: d,
                support: sol.z.iter().map(|&v| v > 0.0).collect(),
            });
            sol.z
        }
        Err(_) => {
            // Fallback (METHOD §9: squeezed balls can make the frictional LCP unsolvable):
            // no restitution, no friction — reported. The normal rows alone, the ball rows
            // with the floor rows' relative compliance too: the matrix is then positive
            // definite and its LCP always has a solution (the frictional LCP with μ = 0,
            // tried before, still ended on a secondary ray for a fallen dancer).
            report.fallback = true;
            let mut f0 = plain.rows(0, nc).into_owned();
            for (c, r) in rows.iter().enumerate() {
                f0[c] += r.bias;
            }
            let mut normal = delassus.view((0, 0), (nc, nc)).into_owned();
            for (c, r) in rows.iter().enumerate() {
                if r.ball().is_some() {
                    normal[(c, c)] += FLOOR_COMPLIANCE * normal[(c, c)].abs();
                }
            }
            let sol = lemke(&normal, &f0).map_err(|e| ContactError::Lcp {
                t,
                message: e.to_string(),
            })?;
            let mut z = DVector::zeros(layout.size());
            z.rows_mut(0, nc).copy_from(&sol.z);
            z
        }
    };
    report.contacts = nc;
    // Apply: the impulses on the character's bodies, then one solve for its answer.
    let rhs = ws.rhs.get_or_insert_with(|| KktVector::zeros(n));
    if rhs.body.len() != n {
        *rhs = KktVector::zeros(n);
    }
    rhs.fill_zero();
    let mut ball_dv = vec![(Vector3::zeros(), Vector3::zeros()); balls.len()];
    let mut pushed = false;
    for k in 0..nr {
        let lam = z[k];
        if lam == 0.0 {
            continue;
        }
        for (b, w) in row_wrenches[k].iter().flatten() {
            rhs.body[*b] += w * lam;
            pushed = true;
        }
        for (i, r) in ball_resp[k].iter().enumerate() {
            ball_dv[i].0 += r.0 * lam;
            ball_dv[i].1 += r.1 * lam;
        }
        let (c, dir) = dirs[k];
        let r = &rows[c];
        let Some(ball) = r.ball() else {
            report.floor_impulse += dir * lam;
            continue;
        };
        if r.other == Touched::Ground {
            report.ground_impulse += dir * lam;
        }
        // one record per contact episode: continuing contact (e.g. resting on the
        // ground) accumulates into the last record of the same pair
        if let Some(hit) = balls[ball]
            .hits
            .iter_mut()
            .rev()
            .find(|x| x.other == r.other && x.t + x.duration >= t - 1.5 * h)
        {
            hit.impulse += dir * lam;
            hit.duration = (t + h - hit.t).max(hit.duration);
        } else {
            balls[ball].hits.push(Hit {
                t: t + r.toi,
                other: r.other,
                impulse: dir * lam,
                duration: 0.0,
            });
        }
    }
    // The impulses into the step: re-solving its own (nonlinear, momentum-form) rows with
    // them, as the linear response alone leaves the gyroscopic rows unbalanced by
    // O(h I |Δω|²), an angular momentum error of the whole figure; with the improved
    // implicit scheme, whose second stage has no single factorisation to re-solve with,
    // the linear response as the LCP saw it.
    let mut du = vec![Vector6::zeros(); n];
    if pushed {
        let root_rows = if stepper.options().drift == Drift::ImprovedImplicit {
            stepper.kkt().solve(rhs).map_err(|e| ContactError::Lcp {
                t,
                message: e.to_string(),
            })?;
            du.copy_from_slice(&rhs.body);
            stepper.add_velocities(&du);
            rhs.rows[0]
        } else {
            let before = stepper.velocities().to_vec();
            let root_before = stepper.root_impulse();
            stepper
                .resolve_with_impulses(&rhs.body)
                .map_err(|e| ContactError::Lcp {
                    t,
                    message: e.to_string(),
                })?;
            for (d, (a, b)) in du.iter_mut().zip(stepper.velocities().iter().zip(&before)) {
                *d = a - b;
            }
            stepper.root_impulse() - root_before
        };
        // what holds the root answers too: a pinned root's rows, or the implicit spring's
        // reaction (so the momentum balance closes with either)
        let spring = stepper.root_spring_reaction(&du[0]);
        report.root_impulse += Vector3::new(root_rows[0], root_rows[1], root_rows[2])
            + Vector3::new(spring[0], spring[1], spring[2]);
    }
    if !du.iter().all(|x| x.iter().all(|v| v.is_finite())) {
        return Err(ContactError::Lcp {
            t,
            message: "non-finite impulse response".into(),
        });
    }
    for (b, body) in model.bodies.iter().enumerate() {
        report.character_momentum += Vector3::new(du[b][0], du[b][1], du[b][2]) * body.mass;
    }
    for (i, b) in balls.iter().enumerate() {
        report.ball_momentum += ball_dv[i].0 * b.params.mass;
    }
    for (i, b) in balls.iter_mut().enumerate() {
        b.w += ball_dv[i].1;
        // keep the received velocity change for the position update
        b.v = v_free[i] + ball_dv[i].0;
    }
    Ok(())
}
