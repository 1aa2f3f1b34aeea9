//! Aiming a targeted ball so that it reaches the body it names: the ball's free flight is
//! checked against the character's capsules posed by the reference motion (before the
//! first contact the simulated figure follows the reference to ~0.001°, so this is the
//! figure the ball will meet), and when another body is in the way the ball is thrown
//! from another direction around the figure.

use crate::contact::collide::{Sphere, WorldCapsule, sphere_capsule};
use crate::motion::kinematics::BodyPose;
use crate::motion::reference::{Reference, ReferenceScratch};
use crate::skeleton::{Body, Model};
use nalgebra::{UnitQuaternion, Vector3};

/// The largest angle (degrees) between a ball's flight and the normal of its first contact
/// with the target for the hit to count as head-on: an aimed ball prefers an approach that
/// meets its target this squarely. A ball aimed at the centre of mass from the first clear
/// direction could meet another capsule of the same body first, at its side (a CMU chest's
/// shoulder capsule, 50° off): it then passed on half its impulse (5.2 N·s instead of
/// 8) and turned the chest rather than pushing the figure. 30° keeps ≥ 87 % of the
/// normal impulse.
pub const HEAD_ON_DEG: f64 = 30.0;

/// How much closer than touching (m) a body other than the target may come to the ball
/// along an approach for it to count as clear: the ball's path is checked on the
/// reference pose, and a near-graze could turn into a hit after the step's rounding of
/// the impact time.
pub const CLEARANCE_M: f64 = 0.015;

/// Approach directions tried after the default one, as (azimuth about the vertical,
/// elevation above the horizontal) in degrees relative to the default direction: all
/// around the figure at the target's height first, nearest to the default first, then
/// the same from above, then from a little below, in front and behind (a kicked ball:
/// a pelvis that the abdomen's capsule and the hanging arms shield at its own height is
/// met from under the abdomen; never from under the floor, see `BallSpec::launch`).
/// Deterministic, so the same ball gets the same launch.
pub const APPROACHES_DEG: [(f64, f64); 30] = [
    (0.0, 0.0),
    (30.0, 0.0),
    (-30.0, 0.0),
    (60.0, 0.0),
    (-60.0, 0.0),
    (90.0, 0.0),
    (-90.0, 0.0),
    (120.0, 0.0),
    (-120.0, 0.0),
    (150.0, 0.0),
    (-150.0, 0.0),
    (180.0, 0.0),
    (0.0, 40.0),
    (45.0, 40.0),
    (-45.0, 40.0),
    (90.0, 40.0),
    (-90.0, 40.0),
    (135.0, 40.0),
    (-135.0, 40.0),
    (180.0, 40.0),
    (0.0, 70.0),
    (90.0, 70.0),
    (-90.0, 70.0),
    (180.0, 70.0),
    (0.0, -15.0),
    (30.0, -15.0),
    (-30.0, -15.0),
    (180.0, -15.0),
    (150.0, -15.0),
    (-150.0, -15.0),
];

/// The unit approach vector (from the target toward the launch point) for an entry of
/// [`APPROACHES_DEG`]: `facing` turned by the azimuth about `up`, then raised by the
/// elevation.
pub fn approach_direction(
    facing: &Vector3<f64>,
    up: &Vector3<f64>,
    azimuth_deg: f64,
    elevation_deg: f64,
) -> Vector3<f64> {
    let turned = UnitQuaternion::from_axis_angle(
        &nalgebra::Unit::new_normalize(*up),
        azimuth_deg.to_radians(),
    ) * facing;
    let e = elevation_deg.to_radians();
    (turned * e.cos() + up * e.sin()).normalize()
}

/// How far any point of the figure's capsules can be from the root joint (m), whatever
/// the pose: the root body's centre of mass lies |com| from it, each child's |parent
/// anchor| + |child anchor| from its parent's, and a capsule's points within its farther
/// end plus its radius from its body's centre (by convexity). Infinite for a model whose
/// forward kinematics leaves a body unplaced (a non-root body without a joint).
pub fn reach_from_root(model: &Model) -> f64 {
    let mut centre = vec![0.0; model.num_bodies()];
    let mut reach: f64 = 0.0;
    for (b, body) in model.bodies.iter().enumerate() {
        centre[b] = match (b, body.parent, body.joint.as_ref()) {
            (0, _, _) => body.com.norm(),
            (_, Some(p), Some(j)) if p < b => {
                centre[p] + j.parent_anchor.norm() + j.child_anchor.norm()
            }
            _ => return f64::INFINITY,
        };
        if let Some(r) = capsules_reach(body) {
            reach = reach.max(centre[b] + r);
        }
    }
    reach
}

/// How far any point of a body's capsules can be from its frame's origin (m), whatever
/// its orientation: a capsule's points lie within its farther end plus its radius (by
/// convexity). `None` for a body without capsules.
fn capsules_reach(body: &Body) -> Option<f64> {
    body.capsules
        .iter()
        .map(|c| c.a.norm().max(c.b.norm()) + c.radius)
        .reduce(f64::max)
}

/// The first body the ball touches along its free flight (launched at `t0` from `origin`
/// with `velocity`, radius `radius`, under `gravity`) until `until` (s), against the
/// reference pose at each instant, and when: `None` if it touches none. Bodies other than
/// `target` count as touched [`CLEARANCE_M`] before they really touch.
///
/// The flight is sampled at the launch and then at the instants `until − k·dt` of
/// [`flight_sample_times`]: dt is the largest power of two within a quarter of the ball's
/// radius of travel (≈ 1 ms at 12 m/s for a handball), fine enough that a ball cannot pass
/// through a capsule between samples, and the grid is anchored at the arrival so that the
/// flights of one ball from different directions sample the same instants (see
/// [`FlightPoses`]). A sample where the ball is farther from the root joint than
/// [`reach_from_root`] plus its radius and the clearance cannot touch anything, and poses no
/// body (most of a flight from [`DEFAULT_DISTANCE`](super::scenario::DEFAULT_DISTANCE)); the
/// others pose the bodies without their rates ([`Reference::sample_pose`]), and a body
/// farther from the ball than its capsules reach is not tested. These give the answer of
/// posing every sample in full and testing every capsule, to the bit (tested).
///
/// `poses` keeps the reference's poses for the next flight arriving at the same time (a
/// kept pose is the one `sample_pose` gives at that instant: the same answer).
#[allow(clippy::too_many_arguments)]
pub fn first_body_on_flight(
    model: &Model,
    reference: &Reference,
    t0: f64,
    origin: &Vector3<f64>,
    velocity: &Vector3<f64>,
    radius: f64,
    until: f64,
    target: Option<usize>,
    poses: &mut FlightPoses,
) -> Option<FlightContact> {
    let dt = flight_step(model, velocity, radius, t0, until);
    poses.start(model, radius, until, dt);
    for (k, t) in flight_sample_times(t0, until, dt) {
        let s = t - t0;
        let center = origin + velocity * s + 0.5 * model.gravity * s * s;
        let tr = t.clamp(0.0, reference.duration);
        if (center - poses.root_at(k, reference, tr)).norm() > poses.far {
            continue;
        }
        let ball = Sphere::new(center, radius);
        let (pose, bounds) = poses.at(k, model, reference, tr);
        if let Some((body, normal)) = first_touched(model, &ball, pose, bounds, target) {
            let v = velocity + model.gravity * s;
            let cos = normal.dot(&v) / v.norm().max(f64::MIN_POSITIVE);
            return Some(FlightContact {
                body,
                t,
                obliquity_deg: cos.clamp(-1.0, 1.0).acos().to_degrees(),
            });
        }
    }
    None
}

/// The sampling step (s) of a flight from `t0` to `until` with launch `velocity` and ball
/// `radius`: the largest power of two within a quarter of the radius of travel at the
/// flight's top speed (the launch speed plus what gravity adds), between 1e-4 and 0.01 s
/// before rounding down. A power of two, so that flights of one ball whose speeds differ a
/// little share it.
pub fn flight_step(
    model: &Model,
    velocity: &Vector3<f64>,
    radius: f64,
    t0: f64,
    until: f64,
) -> f64 {
    let speed = velocity.norm() + model.gravity.norm() * (until - t0).max(0.0);
    let bound = (0.25 * radius / speed.max(1e-3)).clamp(1e-4, 0.01);
    // the sign and exponent bits alone: 2^e ≤ bound for a positive normal number
    f64::from_bits(bound.to_bits() & 0xFFF0_0000_0000_0000)
}

/// The instants (s) a flight from `t0` to `until` is checked at, in order, each with its
/// grid index: the launch (index `None`, when not on the grid), then `until − k·dt` for
/// k = n, …, 0 with n the largest k whose instant is not before the launch.
pub fn flight_sample_times(
    t0: f64,
    until: f64,
    dt: f64,
) -> impl Iterator<Item = (Option<usize>, f64)> {
    let n = ((until - t0) / dt).floor().max(0.0) as usize;
    let first = until - n as f64 * dt;
    let launch = (first > t0).then_some((None, t0));
    launch.into_iter().chain((0..=n).rev().map(move |k| {
        let t = until - k as f64 * dt;
        // (an instant rounded to before the launch is the launch, off the grid)
        if t < t0 { (None, t0) } else { (Some(k), t) }
    }))
}

/// The reference's poses at a flight grid's instants ([`flight_sample_times`]), kept for
/// the next flight that arrives at the same time with the same step: the approaches an
/// aimed ball tries all arrive at its time, and pose the figure at the same instants near
/// it.
#[derive(Default)]
pub struct FlightPoses {
    until: f64,
    dt: f64,
    /// By grid index k: what is known of the instant `until − k·dt`.
    grid: Vec<GridSample>,
    /// The launch instant's pose (off the grid, not kept).
    launch: Vec<BodyPose>,
    scratch: ReferenceScratch,
    /// The ball radius (m, as bits) `far` and `bounds` were found for, if any.
    radius_bits: Option<u64>,
    /// Beyond this from the root joint (m) no capsule is within the clearance of the ball.
    far: f64,
    /// Per body, [`body_bounds`] for the ball's radius.
    bounds: Vec<f64>,
}

/// One instant of a flight grid: the root joint's position (m) and the bodies' poses,
/// each once asked for.
#[derive(Clone, Default)]
struct GridSample {
    root: Option<Vector3<f64>>,
    pose: Option<Vec<BodyPose>>,
}

impl FlightPoses {
    /// Ready for a flight of a ball of `radius` (m) arriving at `until` (s) sampled every
    /// `dt` (s): the kept poses stay if both are those of the kept grid (to the bit), the
    /// bodies' reach if the radius is the same. One `FlightPoses` serves one model and
    /// reference.
    fn start(&mut self, model: &Model, radius: f64, until: f64, dt: f64) {
        if until.to_bits() != self.until.to_bits() || dt.to_bits() != self.dt.to_bits() {
            self.grid.clear();
            (self.until, self.dt) = (until, dt);
        }
        self.launch.resize(model.num_bodies(), BodyPose::default());
        if self.radius_bits != Some(radius.to_bits()) {
            // beyond this from the root joint no capsule is within the clearance (1 µm of
            // slack for rounding)
            self.far = reach_from_root(model) + radius + CLEARANCE_M + 1e-6;
            self.bounds = body_bounds(model, radius);
            self.radius_bits = Some(radius.to_bits());
        }
    }

    /// Grid index `k`'s sample, grown to it.
    fn sample(&mut self, k: usize) -> &mut GridSample {
        if self.grid.len() <= k {
            self.grid.resize(k + 1, GridSample::default());
        }
        &mut self.grid[k]
    }

    /// The root joint's position (m, [`Reference::root_position`]) at grid index `k` (or at
    /// the launch, `None`), instant `tr` (s, in the clip).
    fn root_at(&mut self, k: Option<usize>, reference: &Reference, tr: f64) -> Vector3<f64> {
        let Some(k) = k else {
            return reference.root_position(tr);
        };
        *self
            .sample(k)
            .root
            .get_or_insert_with(|| reference.root_position(tr))
    }

    /// The pose at grid index `k` (or at the launch, `None`), instant `tr` (s, in the clip),
    /// with the bodies' bounds for the flight's ball ([`body_bounds`]).
    fn at(
        &mut self,
        k: Option<usize>,
        model: &Model,
        reference: &Reference,
        tr: f64,
    ) -> (&[BodyPose], &[f64]) {
        let Some(k) = k else {
            reference.sample_pose(model, tr, &mut self.scratch, &mut self.launch);
            return (&self.launch, &self.bounds);
        };
        self.sample(k);
        let scratch = &mut self.scratch;
        let pose = self.grid[k].pose.get_or_insert_with(|| {
            let mut pose = vec![BodyPose::default(); model.num_bodies()];
            reference.sample_pose(model, tr, scratch, &mut pose);
            pose
        });
        (pose, &self.bounds)
    }
}

/// Where a ball's free flight first meets the figure ([`first_body_on_flight`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlightContact {
    /// The body touched.
    pub body: usize,
    /// When, s (to the flight's sampling step).
    pub t: f64,
    /// Angle between the ball's velocity and the contact normal there, degrees: 0 for a
    /// head-on hit, near 90 for a graze.
    pub obliquity_deg: f64,
}

/// Per body, the squared distance (m²) from its frame's origin beyond which a ball of
/// `radius` is more than [`CLEARANCE_M`] from all of its capsules ([`capsules_reach`]),
/// with 1 µm of slack for rounding; a body without capsules is never tested anyway.
fn body_bounds(model: &Model, radius: f64) -> Vec<f64> {
    model
        .bodies
        .iter()
        .map(|body| {
            let r = capsules_reach(body).unwrap_or(0.0) + radius + CLEARANCE_M + 1e-6;
            r * r
        })
        .collect()
}

/// The body `ball` touches at `pose` (others than `target` within [`CLEARANCE_M`]) and the
/// contact's unit normal from the ball into it; the one with the smallest gap when several
/// do. A body farther from the ball than its bound ([`body_bounds`]) is not tested: most
/// are, at a flight's samples near the figure, and a capsule test costs two rotations.
fn first_touched(
    model: &Model,
    ball: &Sphere,
    pose: &[BodyPose],
    bounds: &[f64],
    target: Option<usize>,
) -> Option<(usize, Vector3<f64>)> {
    let mut best: Option<(usize, f64, Vector3<f64>)> = None;
    for (b, body) in model.bodies.iter().enumerate() {
        if (ball.center - pose[b].x).norm_squared() > bounds[b] {
            continue;
        }
        let margin = if Some(b) == target { 0.0 } else { CLEARANCE_M };
        for cap in &body.capsules {
            let world = WorldCapsule::from_body(cap, &pose[b].x, &pose[b].q);
            if let Some(c) = sphere_capsule(ball, &world, margin) {
                let gap = -c.depth - margin;
                if best.is_none_or(|(_, g, _)| gap < g) {
                    best = Some((b, gap, c.normal));
                }
            }
        }
    }
    best.map(|(b, _, n)| (b, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approaches_are_unit_and_the_first_is_the_default() {
        let (f, up) = (Vector3::z(), Vector3::y());
        assert!((approach_direction(&f, &up, 0.0, 0.0) - f).norm() < 1e-15);
        let side = approach_direction(&f, &up, 90.0, 0.0);
        assert!((side - Vector3::x()).norm() < 1e-12, "{side}");
        for (a, e) in APPROACHES_DEG {
            let d = approach_direction(&f, &up, a, e);
            assert!((d.norm() - 1.0).abs() < 1e-12);
            assert!((d.dot(&up) - e.to_radians().sin()).abs() < 1e-12);
        }
        // no direction twice
        for (i, p) in APPROACHES_DEG.iter().enumerate() {
            assert!(!APPROACHES_DEG[..i].contains(p), "{p:?} twice");
        }
    }
}
