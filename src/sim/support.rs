//! Ground support in the reference motion (METHOD §12.1–12.2): where the floor is, which
//! capsule ends carry the figure's weight at an instant, and the floor forces at them that
//! explain the root wrench the inverse dynamics found.
//!
//! The pinned root's rows supply everything the recorded motion needs from outside beyond
//! gravity (the "hand of god"): for a standing or walking clip about one body weight. A
//! small non-negative least squares in a friction pyramid finds floor forces f_j at the
//! support points whose wrench about the root matches it as well as the cone allows:
//!
//! ```text
//! min_β ‖W (λ_r − Σ_j [f_j ; (p_j − x_r) × f_j])‖² + Σ_j ε_j ‖β_j‖²   β ≥ 0,
//! f_j = Σ_k β_jk (n + μ t_k)
//! ```
//!
//! solved as the LCP of its normal equations (positive definite): from last step's support
//! through a 6 × 6 system per round ([`nnls6_from_support`]), else with Lemke's method. The
//! legs then carry the weight through their joint torques and the root keeps only the
//! residual (OpenSim's residual forces), whose size is the clip's dynamic inconsistency.
//! A point's ε_j grows as it nears the edge of the support tests, so forces fade in and
//! out over a centimetre of height instead of jumping when a foot lands or lifts.

use crate::contact::closest_point_on_segment;
use crate::contact::{LcpError, Nnls6Scratch, lemke, nnls6_from_support, tangent_directions};
use crate::motion::kinematics::BodyPose;
use crate::motion::reference::{Reference, ReferenceScratch};
use crate::skeleton::{Capsule, Model};
use nalgebra::{DMatrix, DVector, UnitQuaternion, Vector3, Vector6};

/// Coulomb friction coefficient between the character and the floor (shoe or skin on a
/// studio floor: 0.8–1.0).
pub const FLOOR_FRICTION: f64 = 1.0;

/// Settings of the support detection and the floor-force split.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SupportOptions {
    /// Friction coefficient the split may use (pyramid edges n + μ t_k): below the floor's
    /// own ([`FLOOR_FRICTION`]), so that a planted foot's force stays inside the cone with a
    /// margin and the simulation's contact sticks where the split assumed it (at the
    /// cone's edge, round-off made the toe slide and the ankle drift by degrees).
    pub friction: f64,
    /// A support point's bottom lies within this height of the sample's lowest point, m.
    pub near_lowest_m: f64,
    /// … and within this height of the floor, m.
    pub near_floor_m: f64,
    /// Both height tests fade out over this band past their limits, m.
    pub blend_m: f64,
    /// A point higher than this over the floor that descends faster than
    /// [`landing_speed`](Self::landing_speed) is landing, not standing, m: no support.
    pub landing_height_m: f64,
    /// Downward speed of a landing point, m/s (the test fades in over
    /// [`landing_speed_blend`](Self::landing_speed_blend) above it). Measured: a heel 7 cm
    /// up and still falling at 1.4 m/s as CMU 01_01 lands from its jump carried load in the
    /// split, and the simulation's floor under it, moving down with the reference, held
    /// the foot like a hand of god: any push that lifted the heel off that moving floor
    /// lost the force and slid the foot 4 cm (a 10 g ball did). Points low or slow carry
    /// 94–100 % of every shared clip's support load, so the test removes only landings.
    pub landing_speed: f64,
    /// Band over which the landing speed test fades in, m/s.
    pub landing_speed_blend: f64,
    /// Support needs the root's upward force to carry at least this fraction of the body
    /// weight (fading in from half of it).
    pub load_fraction: f64,
    /// Regularisation ε of a fully supported point (relative to the weight-normalised fit).
    pub regularization: f64,
    /// Lever that weighs the torque rows against the force rows, m (W = diag(1, 1/L)).
    pub torque_length_m: f64,
}

impl Default for SupportOptions {
    fn default() -> Self {
        SupportOptions {
            friction: 0.6,
            near_lowest_m: 0.03,
            near_floor_m: 0.10,
            blend_m: 0.01,
            landing_height_m: 0.02,
            landing_speed: 0.5,
            landing_speed_blend: 0.25,
            load_fraction: 0.2,
            regularization: 1e-6,
            torque_length_m: 1.0,
        }
    }
}

/// The centre of a capsule's end sphere: a point that can touch the floor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// Body index.
    pub body: usize,
    /// Sphere centre, m, body frame relative to the COM.
    pub center: Vector3<f64>,
    /// Sphere radius, m.
    pub radius: f64,
}

/// Depth inside a capsule below which a point counts as inside it, m.
const INSIDE_TOLERANCE_M: f64 = 1e-3;

impl ContactPoint {
    /// The sphere's lowest point (world, m) for a body at `x`, `q`.
    pub fn bottom(&self, x: &Vector3<f64>, q: &UnitQuaternion<f64>) -> Vector3<f64> {
        x + q * self.center - Vector3::y() * self.radius
    }

    /// Whether the sphere's lowest point is on the surface of its body (orientation `q`,
    /// shapes `capsules`), not inside one of them: the upper end of a steep capsule and an
    /// end shared with a thicker capsule (a toe starting in the foot's ball) are not, and
    /// a floor force there would act on a point the floor cannot reach (measured: the foot
    /// and toe capsules' shared end gave two stacked points and a friction couple between
    /// them that no LCP reproduces).
    pub fn on_surface(&self, capsules: &[Capsule], q: &UnitQuaternion<f64>) -> bool {
        let p = self.center - (q.inverse() * Vector3::y()) * self.radius;
        capsules.iter().all(|c| {
            let (cp, _) = closest_point_on_segment(&p, &c.a, &c.b);
            (p - cp).norm() >= c.radius - INSIDE_TOLERANCE_M
        })
    }
}

/// Every capsule end of every body, in body order, each sphere once: capsules that start at
/// the same joint with the same radius (a pelvis' bones to the spine and both hips) share
/// an end, and two copies of one contact make two identical LCP rows, whose friction
/// problem Lemke's method can fail on (seen on a fallen dancer's pelvis).
pub fn contact_points(model: &Model) -> Vec<ContactPoint> {
    let mut out: Vec<ContactPoint> = Vec::new();
    for (b, body) in model.bodies.iter().enumerate() {
        let first = out.len();
        for c in &body.capsules {
            for center in [c.a, c.b] {
                let same = |p: &ContactPoint| {
                    (p.center - center).norm() <= 1e-9 && (p.radius - c.radius).abs() <= 1e-12
                };
                if !out[first..].iter().any(same) {
                    out.push(ContactPoint {
                        body: b,
                        center,
                        radius: c.radius,
                    });
                }
            }
        }
    }
    out
}

/// Every capsule end of a model ([`contact_points`]) with the shapes that decide whether its
/// bottom lies on the body's surface ([`ContactPoint::on_surface`]).
#[derive(Clone, Debug)]
pub struct FloorPoints {
    points: Vec<ContactPoint>,
    capsules: Vec<Vec<Capsule>>,
}

impl FloorPoints {
    /// The floor points of `model`.
    pub fn new(model: &Model) -> Self {
        FloorPoints {
            points: contact_points(model),
            capsules: model.bodies.iter().map(|b| b.capsules.clone()).collect(),
        }
    }

    /// The points, in body order.
    pub fn points(&self) -> &[ContactPoint] {
        &self.points
    }

    /// Whether point `i`'s bottom is on its body's surface with the body at orientation `q`.
    pub fn on_surface(&self, i: usize, q: &UnitQuaternion<f64>) -> bool {
        let p = &self.points[i];
        p.on_surface(&self.capsules[p.body], q)
    }
}

/// A clip's floor and the bodies that stand on it (METHOD §12.1), from one pass over its
/// reference every 20 ms.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipFloor {
    /// The 5th percentile of each sample's lowest capsule point, m. Not the global minimum,
    /// which on real clips is one stray frame up to 7 cm below the rest. 0 for a clip with
    /// no capsules.
    pub height: f64,
    /// Per body: whether it stands on the floor at some sample (a capsule end within the
    /// support height of the floor, [`SupportOptions::near_floor_m`]), or lies on the way
    /// from such a body up to the root (its joint carries the figure while it stands).
    pub standing: Vec<bool>,
}

impl ClipFloor {
    /// The floor of `reference` (posed by [`Reference::sample_pose`]: the floor reads the
    /// bodies' poses only, which are bit for bit those of a full
    /// [`Reference::sample`](crate::motion::reference::Reference::sample), at a third of
    /// its work).
    pub fn of(model: &Model, reference: &Reference) -> Self {
        let n = model.num_bodies();
        let points = contact_points(model);
        let (mut pose, mut scratch) = (vec![BodyPose::default(); n], ReferenceScratch::default());
        let duration = reference.duration;
        let samples = (duration / 0.02).ceil().max(0.0) as usize;
        // per sample, per body: its lowest capsule end's bottom
        let mut lowest_of_body: Vec<Vec<f64>> = Vec::with_capacity(samples + 1);
        for k in 0..=samples {
            let t = (k as f64 * 0.02).min(duration);
            reference.sample_pose(model, t, &mut scratch, &mut pose);
            let mut low = vec![f64::INFINITY; n];
            for p in &points {
                let y = p.bottom(&pose[p.body].x, &pose[p.body].q).y;
                low[p.body] = low[p.body].min(y);
            }
            lowest_of_body.push(low);
        }
        let mut lowest: Vec<f64> = lowest_of_body
            .iter()
            .map(|low| low.iter().copied().fold(f64::INFINITY, f64::min))
            .filter(|y| y.is_finite())
            .collect();
        lowest.sort_by(f64::total_cmp);
        let height = match lowest.len() {
            0 => 0.0,
            len => lowest[(0.05 * (len - 1) as f64).round() as usize],
        };
        let near = SupportOptions::default().near_floor_m;
        let mut standing: Vec<bool> = (0..n)
            .map(|b| lowest_of_body.iter().any(|low| low[b] - height < near))
            .collect();
        for b in (0..n).rev() {
            if standing[b]
                && let Some(p) = model.bodies[b].parent
            {
                standing[p] = true;
            }
        }
        ClipFloor { height, standing }
    }
}

/// Smooth step: 1 at or below `limit`, 0 at or above `limit + band`.
fn fade(value: f64, limit: f64, band: f64) -> f64 {
    if band <= 0.0 {
        return if value <= limit { 1.0 } else { 0.0 };
    }
    let s = ((limit + band - value) / band).clamp(0.0, 1.0);
    s * s * (3.0 - 2.0 * s)
}

/// How strongly a point `height` m above the floor that moves up at `vertical_velocity`
/// m/s still counts as a support (0–1): 0 for a point landing from above the contact height
/// ([`SupportOptions::landing_height_m`]), 1 for a point near the floor or moving slowly.
/// Multiplies [`support_weights`].
pub fn landing_weight(height: f64, vertical_velocity: f64, opts: &SupportOptions) -> f64 {
    let low = fade(height, opts.landing_height_m, opts.blend_m);
    let slow = fade(
        -vertical_velocity,
        opts.landing_speed,
        opts.landing_speed_blend,
    );
    1.0 - (1.0 - low) * (1.0 - slow)
}

/// How strongly each contact point counts as a support at one instant (0 = not at all,
/// 1 = fully): its bottom `bottoms[i]` (world, m) near the sample's lowest point and near
/// the floor, and the root carrying `root_load` body weights upward.
pub fn support_weights(
    bottoms: &[Vector3<f64>],
    floor_y: f64,
    root_load: f64,
    opts: &SupportOptions,
    out: &mut Vec<f64>,
) {
    out.clear();
    let lowest = bottoms.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let load = fade(-root_load, -opts.load_fraction, 0.5 * opts.load_fraction);
    for p in bottoms {
        let w = fade(p.y - lowest, opts.near_lowest_m, opts.blend_m)
            * fade(p.y - floor_y, opts.near_floor_m, opts.blend_m)
            * load;
        out.push(w);
    }
}

/// Floor forces (or impulses: the split is linear) at `points` (world, m; with their
/// support weights in (0, 1]) whose wrench about `root_x` best matches `wrench` (world;
/// force, then torque about `root_x`), each inside the friction pyramid. `scale` is the
/// size of a typical force (the body weight, or its impulse over a step), to which the
/// fit is normalised. Returns one vector per point, in the units of `wrench`.
pub fn split_root_wrench(
    root_x: &Vector3<f64>,
    wrench: &Vector6<f64>,
    points: &[(Vector3<f64>, f64)],
    scale: f64,
    opts: &SupportOptions,
) -> Result<Vec<Vector3<f64>>, LcpError> {
    let mut scratch = SplitScratch::default();
    split_root_wrench_from(root_x, wrench, points, scale, opts, None, &mut scratch)?;
    Ok(scratch.forces)
}

/// Friction-pyramid edges per support point in [`split_root_wrench`].
const PYRAMID_EDGES: usize = 4;
/// Round-off (relative) within which a guessed support's solution is accepted.
const WARM_START_TOLERANCE: f64 = 1e-12;
/// Block principal pivoting rounds before a guess gives way to Lemke.
const WARM_START_ROUNDS: usize = 8;

/// Storage [`split_root_wrench_from`] reuses from call to call (the feedforward splits the
/// root's support at every step): the pyramid's edges, the fit's columns and damping, the
/// weights and the forces of the last split.
#[derive(Clone, Debug, Default)]
pub struct SplitScratch {
    /// The floor forces of the last split, one per point (the units of its `wrench`).
    pub forces: Vec<Vector3<f64>>,
    /// The pyramid's edges and the friction they were built for.
    edges: Vec<Vector3<f64>>,
    edges_friction: Option<f64>,
    columns: Vec<Vector6<f64>>,
    damping: Vec<f64>,
    nnls: Nnls6Scratch,
}

/// [`split_root_wrench`] trying first a guess of which pyramid edges carry force (per
/// point, `PYRAMID_EDGES` entries; e.g. the last step's), updated in place to the
/// solution's. The LCP's matrix is positive definite (the fit's normal matrix plus the
/// regularisation), so its solution is unique: a guess that is accepted gives Lemke's
/// answer to round-off, with a 6 × 6 solve per round ([`nnls6_from_support`]) instead of
/// Lemke's pivots on the dense LCP.
///
/// The forces go into `scratch.forces`; no allocation once `scratch` has held a split of
/// this size.
pub fn split_root_wrench_from(
    root_x: &Vector3<f64>,
    wrench: &Vector6<f64>,
    points: &[(Vector3<f64>, f64)],
    scale: f64,
    opts: &SupportOptions,
    guess: Option<&mut [bool]>,
    scratch: &mut SplitScratch,
) -> Result<(), LcpError> {
    let np = points.len();
    scratch.forces.clear();
    if np == 0 || scale.is_nan() || scale <= 0.0 {
        scratch.forces.resize(np, Vector3::zeros());
        return Ok(());
    }
    if scratch.edges_friction != Some(opts.friction) {
        let n = Vector3::y();
        scratch.edges.clear();
        scratch.edges.extend(
            tangent_directions(&n, PYRAMID_EDGES)
                .into_iter()
                .map(|t| n + t * opts.friction),
        );
        scratch.edges_friction = Some(opts.friction);
    }
    let SplitScratch {
        forces,
        edges,
        columns,
        damping,
        nnls,
        ..
    } = scratch;
    let ne = edges.len();
    let cols = np * ne;
    let inv_l = 1.0 / opts.torque_length_m;
    // A's columns: the weighted wrench of a unit β along each edge of each point; and each
    // β's damping (a weak support is expensive: its force fades with its weight)
    columns.clear();
    damping.clear();
    for (p, w) in points {
        let r = p - root_x;
        let eps = opts.regularization / w.max(1e-3).powi(2);
        for g in edges.iter() {
            let t = r.cross(g) * inv_l;
            columns.push(Vector6::new(g.x, g.y, g.z, t.x, t.y, t.z));
            damping.push(eps);
        }
    }
    let mut b = Vector6::zeros();
    for i in 0..3 {
        b[i] = wrench[i] / scale;
        b[3 + i] = wrench[3 + i] * inv_l / scale;
    }
    // a guess of another size (not these points') is ignored
    let mut guess = guess.filter(|g| g.len() == cols);
    let warm = match guess.as_deref_mut() {
        Some(g) => nnls6_from_support(
            columns,
            damping,
            &b,
            g,
            WARM_START_TOLERANCE,
            WARM_START_ROUNDS,
            nnls,
        ),
        None => false,
    };
    if !warm {
        nnls.z = dense_split_lcp(columns, damping, &b)?;
    }
    let z = &nnls.z;
    if let Some(g) = guess {
        for (gi, z) in g.iter_mut().zip(z) {
            *gi = *z > 0.0;
        }
    }
    forces.extend((0..np).map(|j| {
        (0..ne)
            .map(|k| edges[k] * z[j * ne + k].max(0.0))
            .sum::<Vector3<f64>>()
            * scale
    }));
    Ok(())
}

/// The split's LCP (normal equations M = AᵀA + D, q = −Aᵀb of the fit; `columns` are
/// A's) by Lemke's method: the fallback when no guess is given or the guess's rounds fail.
fn dense_split_lcp(
    columns: &[Vector6<f64>],
    damping: &[f64],
    b: &Vector6<f64>,
) -> Result<Vec<f64>, LcpError> {
    let n = columns.len();
    let a = DMatrix::from_fn(6, n, |r, c| columns[c][r]);
    let mut m = a.transpose() * &a;
    for (j, d) in damping.iter().enumerate() {
        m[(j, j)] += d;
    }
    let q = -(a.transpose() * DVector::from_column_slice(b.as_slice()));
    Ok(lemke(&m, &q)?.z.iter().copied().collect())
}

/// The wrench (force, then torque about `root_x`) of forces `f` at `points`.
pub fn wrench_about(
    root_x: &Vector3<f64>,
    points: &[(Vector3<f64>, f64)],
    f: &[Vector3<f64>],
) -> Vector6<f64> {
    let mut w = Vector6::zeros();
    for ((p, _), f) in points.iter().zip(f) {
        let t = (p - root_x).cross(f);
        for i in 0..3 {
            w[i] += f[i];
            w[3 + i] += t[i];
        }
    }
    w
}

/// A floor contact of the reference at one step (METHOD §12.2): what the floor gives a
/// planted capsule end when the figure follows its reference exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SupportContact {
    /// Index into [`contact_points`] of the model.
    pub point: usize,
    /// The floor's impulse on it over the step (world, N·s).
    pub impulse: Vector3<f64>,
    /// The velocity of the point in the reference's step (world, m/s): the floor under a
    /// supporting point moves with it (a foot that rolls or slides in the data keeps
    /// doing so), so an unperturbed run meets its contacts exactly.
    pub velocity: Vector3<f64>,
    /// The point's position at the start of the step on the reference (world, m).
    pub position: Vector3<f64>,
}

/// The velocity of a point at `r` m from a body's COM (world) for the body's twist `u`
/// (linear, then angular; world), m/s.
fn point_velocity(u: &Vector6<f64>, r: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(u[0], u[1], u[2]) + Vector3::new(u[3], u[4], u[5]).cross(r)
}

/// The root's support before and after the floor takes its part (OpenSim's residuals).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SupportSplit {
    /// The clip's floor height, m (METHOD §12.1).
    pub floor_height_m: f64,
    /// RMS over steps of the pinned root's force ("hand of god"), % of body weight.
    pub hand_of_god_rms_pct_bw: f64,
    /// RMS over steps of the root force the floor cannot explain, % of body weight.
    pub residual_force_rms_pct_bw: f64,
    /// RMS over steps of the root torque the floor cannot explain, N·m.
    pub residual_torque_rms_nm: f64,
}

/// The split of the root's support over a run of the discrete-time inverse dynamics: the
/// support points and floor impulses of each step, and the RMS of what the root keeps.
pub struct FloorSplit {
    points: FloorPoints,
    floor_y: f64,
    h: f64,
    weight: f64,
    opts: SupportOptions,
    bottoms: Vec<Vector3<f64>>,
    weights: Vec<f64>,
    /// Per body: the floor's wrench of the last [`FloorSplit::at`] (world; N, N·m about the
    /// COM).
    pub wrenches: Vec<(Vector3<f64>, Vector3<f64>)>,
    steps: usize,
    hand_of_god_sq: f64,
    residual_sq: f64,
    residual_torque_sq: f64,
    last_predicted: Vector6<f64>,
    /// Per floor point and pyramid edge: whether it carried force in the last split (the
    /// next split's first guess).
    carried: Vec<bool>,
    /// Scratch: `carried` of the chosen points, in their order.
    guess: Vec<bool>,
    /// Scratch: the points that support (indices, then bottoms and weights), and the
    /// split's storage.
    chosen: Vec<usize>,
    pts: Vec<(Vector3<f64>, f64)>,
    split: SplitScratch,
}

impl FloorSplit {
    /// A split for `model` over steps of `h` s on a floor at `floor_y` m.
    pub fn new(model: &Model, floor_y: f64, h: f64) -> Self {
        FloorSplit {
            points: FloorPoints::new(model),
            floor_y,
            h,
            weight: model.total_mass() * model.gravity.norm(),
            opts: SupportOptions::default(),
            bottoms: vec![],
            weights: vec![],
            wrenches: vec![(Vector3::zeros(), Vector3::zeros()); model.num_bodies()],
            steps: 0,
            hand_of_god_sq: 0.0,
            residual_sq: 0.0,
            residual_torque_sq: 0.0,
            last_predicted: Vector6::zeros(),
            carried: vec![],
            guess: vec![],
            chosen: vec![],
            pts: vec![],
            split: SplitScratch::default(),
        }
    }

    /// The floor contacts of one step from `start` (body poses at t_k) with the step's
    /// target velocities `u_star`, given the pinned root's impulse over the step
    /// `root_impulse` (world; N·s, N·m·s about the root COM). Fills
    /// [`wrenches`](Self::wrenches).
    pub fn at(
        &mut self,
        start: &[(Vector3<f64>, UnitQuaternion<f64>)],
        u_star: &[Vector6<f64>],
        root_impulse: &Vector6<f64>,
    ) -> Result<Vec<SupportContact>, LcpError> {
        self.bottoms.clear();
        for p in self.points.points() {
            let (x, q) = &start[p.body];
            self.bottoms.push(p.bottom(x, q));
        }
        let impulse_scale = self.weight * self.h;
        let load = root_impulse[1] / impulse_scale;
        support_weights(
            &self.bottoms,
            self.floor_y,
            load,
            &self.opts,
            &mut self.weights,
        );
        for (i, w) in self.weights.iter_mut().enumerate() {
            if *w == 0.0 {
                continue;
            }
            let body = self.points.points()[i].body;
            if !self.points.on_surface(i, &start[body].1) {
                *w = 0.0;
                continue;
            }
            let v = point_velocity(&u_star[body], &(self.bottoms[i] - start[body].0));
            *w *= landing_weight(self.bottoms[i].y - self.floor_y, v.y, &self.opts);
        }
        let (chosen, pts) = (&mut self.chosen, &mut self.pts);
        chosen.clear();
        chosen.extend((0..self.points.points().len()).filter(|&i| self.weights[i] > 0.0));
        pts.clear();
        pts.extend(chosen.iter().map(|&i| (self.bottoms[i], self.weights[i])));
        let root_x = start[0].0;
        let e = PYRAMID_EDGES;
        self.carried.resize(self.points.points().len() * e, false);
        self.guess.clear();
        for &i in chosen.iter() {
            self.guess
                .extend_from_slice(&self.carried[i * e..(i + 1) * e]);
        }
        split_root_wrench_from(
            &root_x,
            root_impulse,
            pts,
            impulse_scale,
            &self.opts,
            Some(&mut self.guess),
            &mut self.split,
        )?;
        let impulses = &self.split.forces;
        self.carried.fill(false);
        for (k, &i) in chosen.iter().enumerate() {
            self.carried[i * e..(i + 1) * e].copy_from_slice(&self.guess[k * e..(k + 1) * e]);
        }
        self.last_predicted = root_impulse - wrench_about(&root_x, pts, impulses);
        for w in self.wrenches.iter_mut() {
            *w = (Vector3::zeros(), Vector3::zeros());
        }
        let mut out = Vec::with_capacity(chosen.len());
        for (&i, j) in chosen.iter().zip(impulses) {
            if j.norm() == 0.0 {
                continue;
            }
            let p = &self.points.points()[i];
            let (x, _) = &start[p.body];
            let pos = self.bottoms[i];
            let f = j / self.h;
            self.wrenches[p.body].0 += f;
            self.wrenches[p.body].1 += (pos - x).cross(&f);
            let velocity = point_velocity(&u_star[p.body], &(pos - x));
            out.push(SupportContact {
                point: i,
                impulse: *j,
                velocity,
                position: pos,
            });
        }
        Ok(out)
    }

    /// Forget the last split (its guess for the next one), as a new split starts: a
    /// feedforward restarted from the reference mid-clip splits its steps as one begun
    /// there does, to the bit.
    pub fn restart(&mut self) {
        self.carried.fill(false);
        self.last_predicted = Vector6::zeros();
    }

    /// Count one step: the root impulse before the split and, when the split was
    /// `applied`, after it (else the residual [`at`](Self::at) predicted).
    pub fn record(&mut self, before: &Vector6<f64>, after: &Vector6<f64>, applied: bool) {
        let residual = if applied { *after } else { self.last_predicted };
        let s = self.weight * self.h;
        let f = |w: &Vector6<f64>| Vector3::new(w[0], w[1], w[2]).norm();
        self.steps += 1;
        self.hand_of_god_sq += (f(before) / s).powi(2);
        self.residual_sq += (f(&residual) / s).powi(2);
        self.residual_torque_sq +=
            (Vector3::new(residual[3], residual[4], residual[5]).norm() / self.h).powi(2);
    }

    /// The RMS sizes over the recorded steps.
    pub fn summary(&self) -> SupportSplit {
        let n = self.steps.max(1) as f64;
        SupportSplit {
            floor_height_m: self.floor_y,
            hand_of_god_rms_pct_bw: 100.0 * (self.hand_of_god_sq / n).sqrt(),
            residual_force_rms_pct_bw: 100.0 * (self.residual_sq / n).sqrt(),
            residual_torque_rms_nm: (self.residual_torque_sq / n).sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_cone(f: &Vector3<f64>, mu: f64) -> bool {
        // the pyramid's edges ±x, ±z: |f_x| + |f_z| ≤ μ f_y
        f.y >= -1e-12 && f.x.abs() + f.z.abs() <= mu * f.y * (1.0 + 1e-9) + 1e-12
    }

    #[test]
    fn standing_weight_splits_onto_the_feet_and_balances() {
        let opts = SupportOptions::default();
        let root = Vector3::new(0.0, 1.0, 0.0);
        // two feet, heel and toe each, COM above the middle
        let pts: Vec<(Vector3<f64>, f64)> =
            [(-0.1, -0.05), (-0.1, 0.15), (0.1, -0.05), (0.1, 0.15)]
                .iter()
                .map(|&(x, z)| (Vector3::new(x, 0.0, z), 1.0))
                .collect();
        let weight = 700.0;
        // vertical force through the root, and the torque that puts its line of action at
        // z = 0.05 (between heels and toes): τ = r × f with r = (0, -1, 0.05)
        let f = Vector3::new(0.0, weight, 0.0);
        let tq = Vector3::new(0.0, -1.0, 0.05).cross(&f);
        let wrench = Vector6::new(f.x, f.y, f.z, tq.x, tq.y, tq.z);
        let forces = split_root_wrench(&root, &wrench, &pts, weight, &opts).unwrap();
        let got = wrench_about(&root, &pts, &forces);
        assert!((got - wrench).norm() < 1e-3 * weight, "{got} vs {wrench}");
        for fj in &forces {
            assert!(in_cone(fj, opts.friction), "{fj} outside the cone");
        }
        // symmetric left/right
        assert!((forces[0] + forces[1] - forces[2] - forces[3]).norm() < 1e-3 * weight);
    }

    #[test]
    fn a_wrench_beyond_the_cone_leaves_a_residual_and_stays_in_the_cone() {
        let opts = SupportOptions::default();
        let root = Vector3::new(0.0, 1.0, 0.0);
        let pts = vec![(Vector3::new(0.0, 0.0, 0.0), 1.0)];
        // sideways force twice the vertical: no floor can give it
        let wrench = Vector6::new(1400.0, 700.0, 0.0, 0.0, 0.0, 0.0);
        let forces = split_root_wrench(&root, &wrench, &pts, 700.0, &opts).unwrap();
        assert!(in_cone(&forces[0], opts.friction));
        assert!(forces[0].y > 100.0, "carries weight: {}", forces[0]);
        // a pull (negative vertical) gets no force at all
        let pull = Vector6::new(0.0, -700.0, 0.0, 0.0, 0.0, 0.0);
        let none = split_root_wrench(&root, &pull, &pts, 700.0, &opts).unwrap();
        assert!(none[0].norm() < 1e-9, "{}", none[0]);
    }

    #[test]
    fn a_guessed_support_gives_lemkes_split() {
        let opts = SupportOptions::default();
        let root = Vector3::new(0.0, 1.0, 0.0);
        let pts: Vec<(Vector3<f64>, f64)> = [
            (-0.1, -0.05, 1.0),
            (-0.1, 0.15, 0.6),
            (0.1, -0.05, 1.0),
            (0.1, 0.15, 0.3),
        ]
        .iter()
        .map(|&(x, z, w)| (Vector3::new(x, 0.0, z), w))
        .collect();
        let n = pts.len() * PYRAMID_EDGES;
        // a sequence of wrenches as steps give them, the guess carried along; then guesses
        // that are all wrong (everything on, nothing on)
        let mut guess = vec![false; n];
        for k in 0..20 {
            let s = k as f64 / 20.0;
            let wrench = Vector6::new(
                80.0 * s,
                700.0,
                -40.0 * s,
                30.0 - 60.0 * s,
                5.0 * s,
                -35.0 + 20.0 * s,
            );
            let want = split_root_wrench(&root, &wrench, &pts, 700.0, &opts).unwrap();
            for g in [&mut guess, &mut vec![true; n], &mut vec![false; n]] {
                let mut scratch = SplitScratch::default();
                split_root_wrench_from(&root, &wrench, &pts, 700.0, &opts, Some(g), &mut scratch)
                    .unwrap();
                let got = scratch.forces;
                for (a, b) in got.iter().zip(&want) {
                    assert!((a - b).norm() < 1e-9 * 700.0, "step {k}: {a} vs {b}");
                }
            }
            assert!(guess.iter().any(|&c| c), "the guess follows the solution");
        }
    }

    #[test]
    fn support_weights_fade_with_height_and_load() {
        let opts = SupportOptions::default();
        let bottoms = [
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(0.0, 0.035, 0.0),
            Vector3::new(0.0, 0.5, 0.0),
        ];
        let mut w = vec![];
        support_weights(&bottoms, 0.0, 1.0, &opts, &mut w);
        assert_eq!(w[0], 1.0);
        assert!(w[1] > 0.0 && w[1] < 1.0, "{}", w[1]);
        assert_eq!(w[2], 0.0);
        support_weights(&bottoms, 0.0, 0.05, &opts, &mut w);
        assert_eq!(w[0], 0.0, "no load, no support");
        // a floating clip: lowest point 0.2 m above the floor supports nothing
        let high = [Vector3::new(0.0, 0.2, 0.0)];
        support_weights(&high, 0.0, 1.0, &opts, &mut w);
        assert_eq!(w[0], 0.0);
    }

    #[test]
    fn a_landing_point_carries_nothing_until_it_is_down_or_slow() {
        let opts = SupportOptions::default();
        // CMU 01_01's heel at touchdown: 7 cm up, falling at 1.4 m/s
        assert_eq!(landing_weight(0.07, -1.4, &opts), 0.0);
        // on the floor, however fast (a foot that slides or rolls in the data)
        assert_eq!(landing_weight(0.005, -1.4, &opts), 1.0);
        assert_eq!(landing_weight(0.005, 2.0, &opts), 1.0);
        // floating a few cm in the data but still: a support
        assert_eq!(landing_weight(0.06, -0.1, &opts), 1.0);
        // lifting off is not landing
        assert_eq!(landing_weight(0.06, 1.4, &opts), 1.0);
        // fades in between, monotonically in both height and speed
        let mid = landing_weight(0.025, -0.6, &opts);
        assert!(mid > 0.0 && mid < 1.0, "{mid}");
        assert!(landing_weight(0.028, -0.6, &opts) < mid);
        assert!(landing_weight(0.025, -0.7, &opts) < mid);
    }
}
