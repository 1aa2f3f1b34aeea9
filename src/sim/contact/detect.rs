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
use crate::skeleton::Model;
use nalgebra::{Vector3, Vector6};

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
