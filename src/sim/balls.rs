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
use crate::contact::lcp::lemke;
use crate::dynamics::kkt::KktVector;
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

#[derive(Clone, Copy, Debug)]
struct ContactRow {
    ball: usize,
    other: Touched,
    /// Contact point, m.
    p: Vector3<f64>,
    /// Normal, from the other object toward the ball.
    n: Vector3<f64>,
    toi: f64,
    /// Penetration at the start of the step (m, ≥ 0).
    depth: f64,
    restitution: f64,
    friction: f64,
}

/// Scratch of the contact phase (reused between steps).
#[derive(Clone, Debug, Default)]
pub struct ContactWorkspace {
    rhs: Option<KktVector>,
}

/// Outcome of one contact phase.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactReport {
    /// Contacts in the LCP.
    pub contacts: usize,
    /// Lemke pivots.
    pub pivots: usize,
    /// Impulse the pinned root received from the contacts (world, N·s): what the
    /// "hand of god" absorbed.
    pub root_impulse: Vector3<f64>,
    /// Linear momentum change of the character from the contacts, N·s.
    pub character_momentum: Vector3<f64>,
    /// Linear momentum change of the balls from the contacts, N·s (ground contacts
    /// included: the ground absorbs those).
    pub ball_momentum: Vector3<f64>,
    /// The part of `ball_momentum` that came from the ground, N·s.
    pub ground_impulse: Vector3<f64>,
    /// The frictional LCP with restitution had no solution Lemke could find, and the
    /// step's contacts were solved without restitution and friction instead (METHOD §9:
    /// squeezed balls). Counted in the metrics, never silent.
    pub fallback: bool,
}

/// Velocity change of every character body (and the root's multiplier) per unit impulse.
type ImpulseResponse = (Vec<Vector6<f64>>, Vector3<f64>);

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
    let g = model.gravity;
    let n = model.num_bodies();
    let u_free: Vec<Vector6<f64>> = stepper.velocities().to_vec();
    // Ballistic free motion of the balls.
    let v_free: Vec<Vector3<f64>> = balls.iter().map(|b| b.v + g * h).collect();
    // ---- detection: earliest impact per ball, plus those within a quarter step of it
    let mut rows: Vec<ContactRow> = vec![];
    let ground = opts.ground_y.map(Plane::ground);
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
            for cap in &body.capsules {
                let wc = WorldCapsule::from_body(cap, &s.x, &s.q);
                let (va, vb) = WorldCapsule::endpoint_velocities(cap, &s.q, &v, &w);
                if let Some(hit) = sweep_sphere_capsule(&sphere, &v_free[i], &wc, &va, &vb, h) {
                    cands.push(ContactRow {
                        ball: i,
                        other: Touched::Body(b),
                        p: hit.contact.point_a,
                        n: -hit.contact.normal,
                        toi: hit.toi,
                        depth: hit.contact.depth.max(0.0),
                        restitution: ball.params.restitution,
                        friction: ball.params.friction,
                    });
                }
            }
        }
        if let Some(plane) = &ground
            && let Some(hit) = sweep_sphere_plane(&sphere, &v_free[i], plane, h)
        {
            cands.push(ContactRow {
                ball: i,
                other: Touched::Ground,
                p: hit.contact.point_a,
                n: plane.normal,
                toi: hit.toi,
                depth: hit.contact.depth.max(0.0),
                restitution: opts.ground_restitution,
                friction: opts.ground_friction,
            });
        }
        for (j, other) in balls.iter().enumerate() {
            if j == i || !other.active {
                continue;
            }
            let so = Sphere::new(other.x, other.params.radius);
            if let Some(hit) = sweep_sphere_sphere(&sphere, &v_free[i], &so, &v_free[j], h) {
                // one row per pair: keep it on the lower index
                if i < j {
                    cands.push(ContactRow {
                        ball: i,
                        other: Touched::Ball(j),
                        p: hit.contact.point_a,
                        n: -hit.contact.normal,
                        toi: hit.toi,
                        depth: hit.contact.depth.max(0.0),
                        restitution: opts.ball_restitution,
                        friction: 0.3,
                    });
                }
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
    let mut report = ContactReport::default();
    // Balls' impact times (earliest per ball) for the position update.
    let mut toi_of: Vec<Option<f64>> = vec![None; balls.len()];
    for r in &rows {
        toi_of[r.ball] = Some(toi_of[r.ball].map_or(r.toi, |x: f64| x.min(r.toi)));
    }
    if !rows.is_empty() {
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
        // Relative velocity (ball minus other) along row k for given velocities.
        let ball_pre: Vec<(Vector3<f64>, Vector3<f64>)> = balls
            .iter()
            .enumerate()
            .map(|(i, b)| (v_free[i], b.w))
            .collect();
        let row_velocity =
            |k: usize, uc: &[Vector6<f64>], ub: &[(Vector3<f64>, Vector3<f64>)]| -> f64 {
                let (c, dir) = dirs[k];
                let r = &rows[c];
                let bx = balls[r.ball].x + v_free[r.ball] * r.toi;
                let vb = ub[r.ball].0 + ub[r.ball].1.cross(&(r.p - bx));
                let vo = match r.other {
                    Touched::Body(b) => velocity_at(&uc[b], &state.bodies[b].x, &r.p),
                    Touched::Ground => Vector3::zeros(),
                    Touched::Ball(j) => {
                        let jx = balls[j].x + v_free[j] * r.toi;
                        ub[j].0 + ub[j].1.cross(&(r.p - jx))
                    }
                };
                (vb - vo).dot(&dir)
            };
        // Free contact velocities, with Newton restitution on the normal rows.
        let mut free = DVector::zeros(nr);
        for k in 0..nr {
            free[k] = row_velocity(k, &u_free, &ball_pre);
        }
        for (c, r) in rows.iter().enumerate() {
            let vn = free[c];
            if vn < -opts.restitution_threshold {
                free[c] += r.restitution * vn;
            }
            // separate overlapping shapes: half the penetration per step, at most 1 m/s
            free[c] -= (0.5 * r.depth / h).min(1.0);
        }
        // Impulse responses, one column per row: a unit impulse +dir on the ball at p and
        // −dir on the other object.
        let rhs = ws.rhs.get_or_insert_with(|| KktVector::zeros(n));
        if rhs.body.len() != n {
            *rhs = KktVector::zeros(n);
        }
        let mut char_resp: Vec<Option<ImpulseResponse>> = Vec::with_capacity(nr);
        let mut ball_resp: Vec<Vec<(Vector3<f64>, Vector3<f64>)>> = Vec::with_capacity(nr);
        let mut delassus = DMatrix::zeros(nr, nr);
        for k in 0..nr {
            let (c, dir) = dirs[k];
            let r = &rows[c];
            let mut bresp = vec![(Vector3::zeros(), Vector3::zeros()); balls.len()];
            let bx = balls[r.ball].x + v_free[r.ball] * r.toi;
            let bb = &balls[r.ball];
            bresp[r.ball] = (
                dir / bb.params.mass,
                (r.p - bx).cross(&dir) * bb.inv_inertia(),
            );
            let cresp = match r.other {
                Touched::Body(b) => {
                    rhs.fill_zero();
                    let lever = r.p - state.bodies[b].x;
                    let imp = -dir;
                    rhs.body[b] = Vector6::new(imp.x, imp.y, imp.z, 0.0, 0.0, 0.0);
                    let tq = lever.cross(&imp);
                    rhs.body[b][3] = tq.x;
                    rhs.body[b][4] = tq.y;
                    rhs.body[b][5] = tq.z;
                    stepper.kkt().solve(rhs).map_err(|e| ContactError::Lcp {
                        t,
                        message: e.to_string(),
                    })?;
                    let root = Vector3::new(rhs.rows[0][0], rhs.rows[0][1], rhs.rows[0][2]);
                    Some((rhs.body.clone(), root))
                }
                Touched::Ball(j) => {
                    let jx = balls[j].x + v_free[j] * r.toi;
                    bresp[j] = (
                        -dir / balls[j].params.mass,
                        (r.p - jx).cross(&(-dir)) * balls[j].inv_inertia(),
                    );
                    None
                }
                Touched::Ground => None,
            };
            let zero_c = vec![Vector6::zeros(); n];
            let uc: &[Vector6<f64>] = cresp.as_ref().map_or(&zero_c, |x| &x.0);
            for row in 0..nr {
                delassus[(row, k)] = row_velocity(row, uc, &bresp);
            }
            char_resp.push(cresp);
            ball_resp.push(bresp);
        }
        let mu: Vec<f64> = rows.iter().map(|r| r.friction).collect();
        let solve = |free: &DVector<f64>, mu: &[f64]| -> Result<DVector<f64>, String> {
            let (m, q) = friction_lcp(layout, &delassus, free, mu).map_err(|e| e.to_string())?;
            let sol = lemke(&m, &q).map_err(|e| e.to_string())?;
            Ok(sol.z)
        };
        let z = match solve(&free, &mu) {
            Ok(z) => z,
            Err(_) => {
                // Fallback (METHOD §9: squeezed balls can make the frictional LCP
                // unsolvable): no restitution, no friction — reported.
                report.fallback = true;
                let mut f0 = DVector::zeros(nr);
                for k in 0..nr {
                    f0[k] = row_velocity(k, &u_free, &ball_pre);
                }
                solve(&f0, &vec![0.0; nc]).map_err(|message| ContactError::Lcp { t, message })?
            }
        };
        report.contacts = nc;
        // Apply.
        let mut du = vec![Vector6::zeros(); n];
        let mut ball_dv = vec![(Vector3::zeros(), Vector3::zeros()); balls.len()];
        for k in 0..nr {
            let lam = z[k];
            if lam == 0.0 {
                continue;
            }
            if let Some((resp, root)) = &char_resp[k] {
                for b in 0..n {
                    du[b] += resp[b] * lam;
                }
                report.root_impulse += root * lam;
            }
            for (i, r) in ball_resp[k].iter().enumerate() {
                ball_dv[i].0 += r.0 * lam;
                ball_dv[i].1 += r.1 * lam;
            }
            let (c, dir) = dirs[k];
            let r = &rows[c];
            // one record per contact episode: continuing contact (e.g. resting on the
            // ground) accumulates into the last record of the same pair
            if let Some(hit) = balls[r.ball]
                .hits
                .iter_mut()
                .rev()
                .find(|x| x.other == r.other && x.t + x.duration >= t - 1.5 * h)
            {
                hit.impulse += dir * lam;
                hit.duration = (t + h - hit.t).max(hit.duration);
            } else {
                balls[r.ball].hits.push(Hit {
                    t: t + r.toi,
                    other: r.other,
                    impulse: dir * lam,
                    duration: 0.0,
                });
            }
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
        for k in 0..nr {
            let (c, dir) = dirs[k];
            if rows[c].other == Touched::Ground {
                report.ground_impulse += dir * z[k];
            }
        }
        stepper.add_velocities(&du);
        for (i, b) in balls.iter_mut().enumerate() {
            b.w += ball_dv[i].1;
            // keep the received velocity change for the position update below
            b.v = v_free[i] + ball_dv[i].0;
        }
    } else {
        for (i, b) in balls.iter_mut().enumerate() {
            b.v = v_free[i];
        }
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
