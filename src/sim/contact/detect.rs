//! Swept detection of the balls' contacts in a step (METHOD §9): each active ball's sphere
//! swept against the moving capsules of the character, the ground plane and the other
//! balls, so a 40 m/s ball cannot tunnel through a forearm.

use super::ContactOptions;
use super::rows::{ContactRow, Owner, overlap_bias};
use crate::contact::collide::{
    Plane, Sphere, WorldCapsule, sweep_sphere_capsule, sweep_sphere_plane, sweep_sphere_sphere,
};
use crate::dynamics::state::State;
use crate::sim::balls::{Ball, Touched};
use crate::skeleton::{Capsule, Model};
use nalgebra::{Vector3, Vector6};

/// Clearance (m) beyond which a capsule is not swept against a ball: far above the
/// sweep's own tolerance (`TOI_REL_TOL`, 1e-9 relative), so the skip never drops a contact.
const SWEEP_CLEARANCE_M: f64 = 1e-3;

/// A lower bound on the gap (m) between a ball and one of a body's capsules over a step
/// of `h` s: the ball's centre starts `distance` from the body's COM and its surface stays
/// within `ball_reach` of that start; every point of the capsule lies within
/// reach = max(|a|, |b|) + r of the COM, and the sweep moves its ends at most
/// h (|v| + |ω| max(|a|, |b|)) (`speed` |v| m/s, `spin` |ω| rad/s). Above
/// [`SWEEP_CLEARANCE_M`] the sweep cannot find a contact and is skipped.
fn capsule_clearance(
    distance: f64,
    ball_reach: f64,
    cap: &Capsule,
    speed: f64,
    spin: f64,
    h: f64,
) -> f64 {
    let reach = cap.a.norm().max(cap.b.norm()) + cap.radius;
    distance - ball_reach - reach - h * (speed + spin * reach)
}

/// The balls' contacts of the step: earliest impact per ball, plus those within a short
/// window of it (swept against the moving capsules, the ground and the other balls).
pub(super) fn detect_ball_rows(
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
        expected_impulse: None,
    };
    for (i, ball) in balls.iter().enumerate() {
        if !ball.active {
            continue;
        }
        let sphere = Sphere::new(ball.x, ball.params.radius);
        // how far the ball's surface can get from its centre's start in the step
        let ball_reach = ball.params.radius + h * v_free[i].norm();
        let mut cands: Vec<ContactRow> = vec![];
        for (b, body) in model.bodies.iter().enumerate() {
            let s = &state.bodies[b];
            let (v, w) = (
                Vector3::new(u_free[b][0], u_free[b][1], u_free[b][2]),
                Vector3::new(u_free[b][3], u_free[b][4], u_free[b][5]),
            );
            let (distance, speed, spin) = ((ball.x - s.x).norm(), v.norm(), w.norm());
            for (id, cap) in body.capsules.iter().enumerate() {
                // (a resting or departing ball is far from most capsules every step)
                if capsule_clearance(distance, ball_reach, cap, speed, spin, h) > SWEEP_CLEARANCE_M
                {
                    continue;
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::UnitQuaternion;

    /// Wherever the clearance bound is above [`SWEEP_CLEARANCE_M`], the full sweep finds no
    /// contact: random capsules on spinning, moving bodies against balls flying at them,
    /// near enough that many trials are swept and some of those hit.
    #[test]
    fn a_capsule_skipped_by_its_clearance_is_one_the_sweep_misses() {
        let mut rng = crate::sim::random_throws::SplitMix64(0x2545_f491_4f6c_dd1d);
        let mut vec3 = |scale: f64| {
            Vector3::new(
                rng.uniform(-1.0, 1.0),
                rng.uniform(-1.0, 1.0),
                rng.uniform(-1.0, 1.0),
            ) * scale
        };
        let h = 1.0 / 60.0; // a long step: large motions within it
        let (mut skipped, mut hits) = (0, 0);
        for trial in 0..20_000 {
            let cap = Capsule {
                a: vec3(0.3),
                b: vec3(0.3),
                radius: 0.02 + 0.05 * vec3(1.0).x.abs(),
            };
            let (x, v, w) = (vec3(0.5), vec3(3.0), vec3(20.0));
            let q = UnitQuaternion::from_scaled_axis(vec3(3.0));
            let radius = 0.03 + 0.1 * vec3(1.0).x.abs();
            let (ball_x, ball_v) = (x + vec3(0.8), vec3(25.0));
            let sphere = Sphere::new(ball_x, radius);
            let wc = WorldCapsule::from_body(&cap, &x, &q);
            let (va, vb) = WorldCapsule::endpoint_velocities(&cap, &q, &v, &w);
            let hit = sweep_sphere_capsule(&sphere, &ball_v, &wc, &va, &vb, h);
            hits += usize::from(hit.is_some());
            let ball_reach = radius + h * ball_v.norm();
            let c = capsule_clearance((ball_x - x).norm(), ball_reach, &cap, v.norm(), w.norm(), h);
            if c > SWEEP_CLEARANCE_M {
                skipped += 1;
                assert!(hit.is_none(), "trial {trial}: clearance {c} m, yet {hit:?}");
            }
        }
        assert!(
            skipped > 2_000 && skipped < 18_000,
            "both sides tried: {skipped} skipped"
        );
        // a spinning limb's end swings out beyond its reach at rest: the ball just outside
        // that reach is struck, and the bound must see it coming (its spin term)
        let cap = Capsule {
            a: Vector3::new(0.4, 0.0, 0.0),
            b: Vector3::new(-0.4, 0.0, 0.0),
            radius: 0.03,
        };
        let (x, w) = (Vector3::zeros(), Vector3::new(0.0, 0.0, 30.0));
        let q = UnitQuaternion::identity();
        let sphere = Sphere::new(Vector3::new(0.4, 0.26, 0.0), 0.04);
        let wc = WorldCapsule::from_body(&cap, &x, &q);
        let (va, vb) = WorldCapsule::endpoint_velocities(&cap, &q, &x, &w);
        let hit = sweep_sphere_capsule(&sphere, &x, &wc, &va, &vb, h);
        assert!(hit.is_some(), "the swinging end reaches the ball");
        let c = capsule_clearance(sphere.center.norm(), 0.04, &cap, 0.0, 30.0, h);
        assert!(
            c <= SWEEP_CLEARANCE_M,
            "clearance {c} m: the bound would skip a hit"
        );
        assert!(
            hits > 300,
            "the sweeps must hit too: {hits} ({skipped} skipped)"
        );
    }
}
