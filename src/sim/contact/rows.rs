//! Contact rows of the balls' and the character's contacts (part of the simulation's
//! contact phase, [`crate::sim::contact`]; not the geometric collision and LCP building
//! blocks of [`crate::contact`]): who receives a row's impulse, the floor rows the
//! simulation hands in, the separation biases, the rows' directions (normals, then
//! friction tangents) and the relative velocity along them.

use crate::contact::impulse::tangent_directions_iter;
use crate::dynamics::state::State;
use crate::sim::balls::{Ball, Touched};
use nalgebra::{Vector3, Vector6};

/// A capsule end of the character at (or near) the floor in a step (METHOD §12.3): the
/// simulation finds these; [`contact_phase_with_floor`] solves them in the same LCP as the
/// balls.
///
/// [`contact_phase_with_floor`]: crate::sim::balls::contact_phase_with_floor
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
    /// The floor's impulse over the step that the reference expects at a supporting point
    /// (world, N·s; [`SupportContact::impulse`](crate::sim::support::SupportContact)),
    /// `None` elsewhere: taken as they are where they solve the contact LCP (see
    /// `accept_expected`), else its first guess of which of the row's variables carry (see
    /// `solve_lcp`).
    pub expected_impulse: Option<Vector3<f64>>,
    /// Which of the character's contact points this is (stable from step to step: the
    /// contact LCP matches rows across steps by it to start from the last active set).
    pub id: usize,
}

/// The object that receives +dir of a contact row's impulse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Owner {
    Ball(usize),
    Body(usize),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct ContactRow {
    /// Receives +dir.
    pub(super) owner: Owner,
    /// Receives −dir.
    pub(super) other: Touched,
    /// Contact point, m.
    pub(super) p: Vector3<f64>,
    /// Normal, from the other object toward the owner.
    pub(super) n: Vector3<f64>,
    pub(super) toi: f64,
    /// Added to the normal row's free velocity, m/s: the gap a step may close (> 0), or
    /// minus the rate that separates overlapping shapes.
    pub(super) bias: f64,
    /// Velocity of the other object's surface when it is the ground, m/s.
    pub(super) surface_velocity: Vector3<f64>,
    pub(super) restitution: f64,
    pub(super) friction: f64,
    /// Tells apart the rows of one pair of objects from step to step: the floor point, or
    /// the capsule a ball touches.
    pub(super) id: usize,
    /// A floor row's [`FloorRow::expected_impulse`] (world, N·s).
    pub(super) expected_impulse: Option<Vector3<f64>>,
}

impl ContactRow {
    pub(super) fn ball(&self) -> Option<usize> {
        match self.owner {
            Owner::Ball(i) => Some(i),
            Owner::Body(_) => None,
        }
    }
}

/// Relative compliance added to the diagonal of the character's floor rows in the contact
/// LCP (see `delassus_matrix` and `solve_and_apply`).
pub(super) const FLOOR_COMPLIANCE: f64 = 1e-3;

/// Separation bias of a capsule end found `depth` ≥ 0 below its surface: a tenth of it per
/// step, at most 0.2 m/s. Gentler than the balls' (which must not rest inside a limb): a
/// supported foot's surface is its reference height, and a perturbed foot a few mm below it
/// is a deviation the tracking returns, not an overlap to kick out.
pub(super) fn floor_bias(depth: f64, h: f64) -> f64 {
    -(0.1 * depth / h).min(0.2)
}

/// The bias of a floor row whose point lies `gap` m above its surface (< 0: below it),
/// m/s: the point may approach the surface by at most `gap` in the step (`gap / h`), and
/// one below it is pushed out by [`floor_bias`]. The row's point then moves along the
/// normal at no less than the surface's speed minus this.
pub(crate) fn floor_row_bias(gap: f64, h: f64) -> f64 {
    if gap >= 0.0 {
        gap / h
    } else {
        floor_bias(-gap, h)
    }
}

/// Separation bias of a contact whose shapes overlap by `depth` ≥ 0: half the penetration
/// per step, at most 1 m/s.
pub(super) fn overlap_bias(depth: f64, h: f64) -> f64 {
    -(0.5 * depth / h).min(1.0)
}

/// A contact row's unit wrench on each character body it pushes (owner side, other side:
/// body and (force, torque about its COM)).
pub(super) type RowWrenches = [Option<(usize, Vector6<f64>)>; 2];

/// What identifies a contact row from one step to the next.
pub(crate) type RowKey = (Owner, Touched, usize);

/// Velocity at `p` of a body moving with twist `u` about its COM `x`.
pub(super) fn velocity_at(u: &Vector6<f64>, x: &Vector3<f64>, p: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(u[0], u[1], u[2]) + Vector3::new(u[3], u[4], u[5]).cross(&(p - x))
}

/// The direction of every row of `rows`: the normals, then each contact's `d` friction
/// tangents (each with its contact's index), into `dirs`.
pub(super) fn row_directions(rows: &[ContactRow], d: usize, dirs: &mut Vec<(usize, Vector3<f64>)>) {
    dirs.clear();
    dirs.reserve(rows.len() * (1 + d));
    // directions of every row: normals, then each contact's tangents
    for (c, r) in rows.iter().enumerate() {
        dirs.push((c, r.n));
    }
    for (c, r) in rows.iter().enumerate() {
        for tdir in tangent_directions_iter(&r.n, d) {
            dirs.push((c, tdir));
        }
    }
}

/// Where a step's contact rows act: the rows, their directions, and the balls and bodies
/// at the rows' times of impact (moving with their free velocities).
pub(super) struct RowFrame<'a> {
    pub(super) rows: &'a [ContactRow],
    pub(super) dirs: &'a [(usize, Vector3<f64>)],
    pub(super) balls: &'a [Ball],
    pub(super) v_free: &'a [Vector3<f64>],
    pub(super) state: &'a State,
    pub(super) u_free: &'a [Vector6<f64>],
}

impl RowFrame<'_> {
    /// Ball `i`'s centre at row `r`'s time of impact.
    pub(super) fn ball_at(&self, i: usize, r: &ContactRow) -> Vector3<f64> {
        self.balls[i].x + self.v_free[i] * r.toi
    }

    /// A body's COM at the row's time of impact, moving with its free velocity (as the
    /// sweep moved its capsules): the lever arm to the contact point is taken from there.
    pub(super) fn com_at(&self, b: usize, r: &ContactRow) -> Vector3<f64> {
        let u_free = self.u_free;
        self.state.bodies[b].x + Vector3::new(u_free[b][0], u_free[b][1], u_free[b][2]) * r.toi
    }

    /// Relative velocity (owner minus other) along row k for given velocities.
    pub(super) fn velocity(
        &self,
        k: usize,
        uc: &[Vector6<f64>],
        ub: &[(Vector3<f64>, Vector3<f64>)],
    ) -> f64 {
        let (c, dir) = self.dirs[k];
        let r = &self.rows[c];
        let vo = match r.owner {
            Owner::Ball(i) => ub[i].0 + ub[i].1.cross(&(r.p - self.ball_at(i, r))),
            Owner::Body(b) => velocity_at(&uc[b], &self.com_at(b, r), &r.p),
        };
        let vb = match r.other {
            Touched::Body(b) => velocity_at(&uc[b], &self.com_at(b, r), &r.p),
            Touched::Ground => Vector3::zeros(),
            Touched::Ball(j) => ub[j].0 + ub[j].1.cross(&(r.p - self.ball_at(j, r))),
        };
        (vo - vb).dot(&dir)
    }
}
