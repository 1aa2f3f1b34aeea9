//! The Delassus matrix J K⁻¹ Jᵀ of a step's contact rows (METHOD §9), from impulse
//! responses through the step's own O(n) factorisation: each contacted body's answer to a
//! unit wrench, solved on the contacted bodies' ways to the root alone.

use super::rows::{FLOOR_COMPLIANCE, Owner, RowFrame, RowWrenches};
use super::{ContactError, ContactWorkspace};
use crate::dynamics::step::Stepper;
use crate::sim::balls::Touched;
use nalgebra::{DMatrix, Matrix6, Vector3, Vector6};

/// The contacted bodies' velocity responses to unit wrenches on each of them, solved with
/// the step's factorisation (eliminated on the pushed body's way to the root alone,
/// substituted on the bodies of `ws.path`), into `ws.responses`: block `(s, c)`, at
/// `s · m + c` for `m` contacted bodies, holds in its column `axis` the twist of the
/// `c`-th contacted body under a unit wrench along `axis` (force x, y, z, torque x, y, z
/// about its COM) on the `s`-th. Only these blocks are kept: a Delassus entry reads the
/// response at contacted bodies alone.
///
/// A body pushed at a single point (`levers[s]` = that point's lever arm from its COM,
/// m: a toe touching the floor at one capsule end) is pushed by forces there alone, so
/// three columns suffice, the unit forces along x, y, z at that point (wrench
/// [e; r × e]); its blocks' other columns are left as they were (never read), and a
/// row's impulse on it is read through its force (see `delassus_matrix`). Three path
/// solves instead of six.
pub(super) fn contacted_responses(
    stepper: &Stepper,
    ws: &mut ContactWorkspace,
    contacted: &[usize],
    levers: &[Option<Vector3<f64>>],
    n: usize,
    t: f64,
) -> Result<(), ContactError> {
    let m = contacted.len();
    // Not zeroed: every column read later is written below (all six of a body pushed at
    // several points; the first three, the unit forces, of one pushed at a single point).
    if ws.responses.len() < m * m {
        ws.responses.resize(m * m, Matrix6::zeros());
    }
    let rhs = super::rhs_buffer(&mut ws.rhs, n);
    for (s, &b) in contacted.iter().enumerate() {
        let columns = if levers[s].is_some() { 3 } else { 6 };
        for axis in 0..columns {
            for &i in &ws.path {
                rhs.body[i] = Vector6::zeros();
                rhs.rows[i] = Vector6::zeros();
            }
            match levers[s] {
                Some(r) => {
                    let e = Vector3::ith(axis, 1.0);
                    let tq = r.cross(&e);
                    rhs.body[b] = Vector6::new(e.x, e.y, e.z, tq.x, tq.y, tq.z);
                }
                None => rhs.body[b][axis] = 1.0,
            }
            stepper
                .kkt()
                .solve_on_path_from(rhs, b, &ws.path)
                .map_err(|e| ContactError::Lcp {
                    t,
                    message: e.to_string(),
                })?;
            for (c, &body) in contacted.iter().enumerate() {
                ws.responses[s * m + c].set_column(axis, &rhs.body[body]);
            }
        }
    }
    Ok(())
}

/// How a contacted body is pushed by a step's rows: nowhere yet, at a single point (its
/// lever arm from the COM, m), or at several.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pushed {
    Nowhere,
    Single(Vector3<f64>),
    Several,
}

/// The Delassus matrix's buffers, kept from step to step (a contact phase would otherwise
/// allocate a dozen small vectors), and what the matrix was built from.
#[derive(Clone, Debug, Default)]
pub(super) struct DelassusScratch {
    /// The character's bodies in the rows, sorted.
    contacted: Vec<usize>,
    /// Per contacted body: how the rows push it.
    pushed: Vec<Pushed>,
    /// Per contacted body: the lever arm of the one point all its rows push at, if one.
    levers: Vec<Option<Vector3<f64>>>,
    /// Per row: its unit wrenches on the character's bodies.
    pub(super) row_wrenches: Vec<RowWrenches>,
    /// Per row k and ball i, at `k · balls + i`: the ball's (velocity, spin) change from a
    /// unit impulse along row k.
    pub(super) ball_resp: Vec<(Vector3<f64>, Vector3<f64>)>,
    /// `row_wrenches` with each body's slot among the contacted.
    slotted: Vec<RowWrenches>,
    /// Per row: whether a ball is in it.
    on_balls: Vec<bool>,
    /// Per row: the earlier row it mirrors (see [`opposite_rows`]).
    mirror: Vec<Option<usize>>,
    /// The character's response by body (rows with a ball read it so).
    uc: Vec<Vector6<f64>>,
}

/// The Delassus matrix of the rows of `frame` (the character has `n` bodies), floor rows'
/// relative compliance included; its storage is the workspace's `delassus`, to be handed
/// back after use. What it was built from (each row's unit wrenches on the character and
/// its velocity change of every ball) is left in `sc`.
pub(super) fn delassus_matrix(
    frame: &RowFrame,
    stepper: &Stepper,
    ws: &mut ContactWorkspace,
    sc: &mut DelassusScratch,
    n: usize,
    t: f64,
) -> Result<DMatrix<f64>, ContactError> {
    let rows = frame.rows;
    let dirs = frame.dirs;
    let nr = dirs.len();
    let nb = frame.balls.len();
    let DelassusScratch {
        contacted,
        pushed,
        levers,
        row_wrenches,
        ball_resp,
        slotted,
        on_balls,
        mirror,
        uc,
    } = sc;
    // Impulse responses, one column per row: a unit impulse +dir on the owner at p and
    // −dir on the other object. The character's answer is needed only at its bodies in the
    // rows (the Delassus entries): each unit wrench is solved on their ways to the root
    // alone (O(depth), not O(n)), and the impulses found are applied by one full solve.
    contacted.clear();
    contacted.extend(rows.iter().flat_map(|r| {
        let owner = match r.owner {
            Owner::Body(b) => Some(b),
            Owner::Ball(_) => None,
        };
        let other = match r.other {
            Touched::Body(b) => Some(b),
            _ => None,
        };
        owner.into_iter().chain(other)
    }));
    contacted.sort_unstable();
    contacted.dedup();
    stepper
        .kkt()
        .path_to_root(contacted.iter().copied(), &mut ws.path);
    let m = contacted.len();
    let slot = |b: usize| contacted.binary_search(&b).unwrap_or(0);
    // per contacted body: the lever arm of the one point all its rows push at, if one
    // (`Single`), else `Several`
    pushed.clear();
    pushed.resize(m, Pushed::Nowhere);
    row_wrenches.clear();
    ball_resp.clear();
    ball_resp.resize(nr * nb, (Vector3::zeros(), Vector3::zeros()));
    // the last step's storage when it has this size: every entry is written below
    let mut delassus = std::mem::take(&mut ws.delassus);
    if delassus.shape() != (nr, nr) {
        delassus = DMatrix::zeros(nr, nr);
    }
    for (k, &(c, dir)) in dirs.iter().enumerate() {
        let r = &rows[c];
        let bresp = &mut ball_resp[k * nb..(k + 1) * nb];
        let mut wrenches: RowWrenches = [None, None];
        let mut push =
            |side: usize, side_dir: Vector3<f64>, target: Result<usize, usize>| match target {
                Ok(i) => {
                    let bx = frame.ball_at(i, r);
                    bresp[i] = (
                        side_dir / frame.balls[i].params.mass,
                        (r.p - bx).cross(&side_dir) * frame.balls[i].inv_inertia(),
                    );
                }
                Err(b) => {
                    let lever = r.p - frame.com_at(b, r);
                    let at = &mut pushed[slot(b)];
                    *at = match *at {
                        Pushed::Nowhere => Pushed::Single(lever),
                        Pushed::Single(l) if l == lever => Pushed::Single(l),
                        _ => Pushed::Several,
                    };
                    let tq = lever.cross(&side_dir);
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
    }
    levers.clear();
    levers.extend(pushed.iter().map(|p| match p {
        Pushed::Single(l) => Some(*l),
        _ => None,
    }));
    contacted_responses(stepper, ws, contacted, levers, n, t)?;
    // Each row's wrenches with their bodies' slots among the contacted.
    slotted.clear();
    slotted.extend(
        row_wrenches
            .iter()
            .map(|ws| ws.map(|w| w.map(|(b, w)| (slot(b), w)))),
    );
    // A row between character bodies and the ground reads the response as its wrench's
    // power: the relative velocity along dir is Σ_sides w·u (the other side's wrench
    // carries −dir).
    on_balls.clear();
    on_balls.extend(
        dirs.iter()
            .map(|(c, _)| rows[*c].ball().is_some() || matches!(rows[*c].other, Touched::Ball(_))),
    );
    // The character's velocity response to each row's unit impulse at its contacted
    // bodies, row k's at `k · m + slot`: Σ over the row's sides of the response block
    // times the side's wrench (its force, for a body pushed at a single point).
    let any_ball = on_balls.iter().any(|&b| b);
    // Rows whose response and entries are the negatives of an earlier row's (d = 4's
    // friction edges ±t on the character): not computed but copied with their sign
    // flipped. (Rows with a ball read the balls' responses instead: never mirrored.)
    mirror.clear();
    opposite_rows(dirs, slotted, on_balls, mirror);
    let at = &mut ws.row_responses;
    at.resize(nr * m, Vector6::zeros());
    for (k, sides) in slotted.iter().enumerate() {
        if let Some(j) = mirror[k] {
            let (done, out) = at.split_at_mut(k * m);
            for (u, r) in out[..m].iter_mut().zip(&done[j * m..(j + 1) * m]) {
                *u = -r;
            }
            continue;
        }
        let out = &mut at[k * m..(k + 1) * m];
        out.fill(Vector6::zeros());
        for &(s, w) in sides.iter().flatten() {
            let blocks = &ws.responses[s * m..(s + 1) * m];
            if levers[s].is_some() {
                // a body pushed at a single point: its columns are unit forces there, so
                // the row's force alone multiplies them (its torque is the lever's moment
                // of that force, already in the columns)
                let f = Vector3::new(w[0], w[1], w[2]);
                for (u, r) in out.iter_mut().zip(blocks) {
                    *u += r.fixed_columns::<3>(0) * f;
                }
            } else {
                for (u, r) in out.iter_mut().zip(blocks) {
                    *u += r * w;
                }
            }
        }
    }
    // the rows with a ball read the character's response by body (others unused)
    uc.clear();
    if any_ball {
        uc.resize(n, Vector6::zeros());
    }
    let entries = delassus.as_mut_slice();
    for k in 0..nr {
        if let Some(j) = mirror[k] {
            let (done, column) = entries.split_at_mut(k * nr);
            for (entry, e) in column[..nr].iter_mut().zip(&done[j * nr..(j + 1) * nr]) {
                *entry = -e;
            }
            continue;
        }
        let us = &at[k * m..(k + 1) * m];
        if any_ball {
            for (&b, u) in contacted.iter().zip(us) {
                uc[b] = *u;
            }
        }
        // column k of the (column-major) matrix
        let column = &mut entries[k * nr..(k + 1) * nr];
        for row in 0..nr {
            if let Some(j) = mirror[row] {
                column[row] = -column[j];
                continue;
            }
            let sides = &slotted[row];
            column[row] = if on_balls[row] {
                // a ball apart from the character (on the ground, on another ball) feels
                // nothing of a row without a ball: its velocity change is zero
                if !on_balls[k] && sides == &[None, None] {
                    0.0
                } else {
                    frame.velocity(row, uc, &ball_resp[k * nb..(k + 1) * nb])
                }
            } else {
                match sides {
                    [Some((s, w)), None] | [None, Some((s, w))] => w.dot(&us[*s]),
                    [Some((s0, w0)), Some((s1, w1))] => w0.dot(&us[*s0]) + w1.dot(&us[*s1]),
                    [None, None] => 0.0,
                }
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
    Ok(delassus)
}

/// Per row, an earlier row of the same contact whose unit wrenches are its own negated,
/// if any: a friction pyramid's opposite edges ±t (d = 4 makes them exact), among the
/// rows without a ball (`on_balls` false: a ball's response is not in its wrenches).
/// Such a row's impulse response and Delassus entries are the earlier row's negated:
/// negation commutes with every rounding, so they are the same numbers but for the sign
/// of an exact zero.
fn opposite_rows(
    dirs: &[(usize, Vector3<f64>)],
    slotted: &[RowWrenches],
    on_balls: &[bool],
    out: &mut Vec<Option<usize>>,
) {
    let opposite = |k: usize, j: usize| {
        slotted[k]
            .iter()
            .zip(&slotted[j])
            .all(|(a, b)| match (a, b) {
                (Some((sa, wa)), Some((sb, wb))) => sa == sb && *wa == -wb,
                (None, None) => true,
                _ => false,
            })
    };
    out.extend((0..dirs.len()).map(|k| {
        if on_balls[k] {
            return None;
        }
        let c = dirs[k].0;
        (0..k)
            .rev()
            .take_while(|&j| dirs[j].0 == c)
            .find(|&j| !on_balls[j] && opposite(k, j))
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::tangent_directions;

    /// [`opposite_rows`] into a new vector.
    fn mirrored(dirs: &[(usize, Vector3<f64>)], slotted: &[RowWrenches]) -> Vec<Option<usize>> {
        let mut out = Vec::new();
        opposite_rows(dirs, slotted, &vec![false; dirs.len()], &mut out);
        out
    }

    /// The rows of floor contacts at `points` (lever arms from one body's COM, m; the
    /// body in slot 0), as `delassus_matrix` lays them out: the normals, then each
    /// contact's `d` tangents.
    fn floor_rows(
        points: &[Vector3<f64>],
        d: usize,
    ) -> (Vec<(usize, Vector3<f64>)>, Vec<RowWrenches>) {
        let up = Vector3::y();
        let mut dirs: Vec<(usize, Vector3<f64>)> = (0..points.len()).map(|c| (c, up)).collect();
        for c in 0..points.len() {
            dirs.extend(tangent_directions(&up, d).into_iter().map(|t| (c, t)));
        }
        let wrenches = dirs
            .iter()
            .map(|&(c, dir)| {
                let tq = points[c].cross(&dir);
                [
                    Some((0, Vector6::new(dir.x, dir.y, dir.z, tq.x, tq.y, tq.z))),
                    None,
                ]
            })
            .collect();
        (dirs, wrenches)
    }

    #[test]
    fn a_four_edged_pyramids_opposite_edges_are_mirrored_and_nothing_else() {
        let points = [
            Vector3::new(0.1, -0.9, 0.05),
            Vector3::new(-0.03, -0.92, 0.2),
        ];
        let (dirs, slotted) = floor_rows(&points, 4);
        let mirror = mirrored(&dirs, &slotted);
        // normals 0, 1; contact 0's edges 2..6, contact 1's 6..10: t₂ = −t₀, t₃ = −t₁
        let want = [
            None,
            None,
            None,
            None,
            Some(2),
            Some(3),
            None,
            None,
            Some(6),
            Some(7),
        ];
        assert_eq!(mirror, want);
        for (k, j) in mirror.iter().enumerate() {
            if let Some(j) = *j {
                let (a, b) = (slotted[k][0].unwrap().1, slotted[j][0].unwrap().1);
                assert_eq!(a, -b, "row {k} is row {j} negated");
            }
        }
        // an odd pyramid has no opposite edges; one body's rows never mirror another's
        let (dirs, slotted) = floor_rows(&points, 3);
        assert!(mirrored(&dirs, &slotted).iter().all(Option::is_none));
        let (dirs, mut slotted) = floor_rows(&points, 4);
        for w in &mut slotted[4..6] {
            w[0] = w[0].map(|(_, w)| (1, w));
        }
        let mirror = mirrored(&dirs, &slotted);
        assert_eq!(mirror[4], None);
        assert_eq!(mirror[5], None);
        assert_eq!(mirror[8], Some(6));
        // a ball's rows (no wrench on the character: both sides empty) never mirror, nor
        // are they mirrored, and the character's rows beside them still are
        let (dirs, mut slotted) = floor_rows(&points, 4);
        let mut on_balls = vec![false; dirs.len()];
        for k in [1, 6, 7, 8, 9] {
            slotted[k] = [None, None];
            on_balls[k] = true;
        }
        let mut mirror = Vec::new();
        opposite_rows(&dirs, &slotted, &on_balls, &mut mirror);
        // contact 0's edges as before; contact 1's (6..10, the ball's) none
        let mut want = vec![None; dirs.len()];
        (want[4], want[5]) = (Some(2), Some(3));
        assert_eq!(mirror, want);
    }
}
