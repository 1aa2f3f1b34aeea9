//! Solving a step's contact LCP and applying its impulses (METHOD §9): the rows' free
//! velocities with Newton restitution, the warm start from the last step's active set,
//! Lemke, the reported fallback without restitution and friction, then the impulses into
//! the character (re-solving the step's own rows) and the balls.
//!
//! Before any of that, the character's floor rows try the impulses the inverse dynamics'
//! support split expects of them ([`accept_expected`]): on the unperturbed path (the
//! feedforward's run and every run's steps before a hit) they already solve the LCP, and
//! checking that costs one re-solve instead of the Delassus matrix (13 path solves and
//! its bookkeeping) and the LCP. The frictional LCP has other solutions too (a point
//! sliding along an edge of its pyramid or lifting off): solved from its warm start it
//! took those at some steps, and the feedforward then landed up to 0.027 m/s off its
//! target velocities (CMU 01_01); with the split's own impulses it lands within 1e-9.

use super::delassus::{DelassusScratch, delassus_matrix};
use super::rows::{ContactRow, FLOOR_COMPLIANCE, RowFrame, RowKey, row_directions};
use super::{ContactError, ContactOptions, ContactReport, ContactWorkspace, Owner};
use crate::contact::impulse::{FrictionLayout, friction_lcp_into};
use crate::contact::lcp::{SupportRules, SupportScratch, lemke, solve_from_support_in};
use crate::dynamics::stabilize::Drift;
use crate::dynamics::state::State;
use crate::dynamics::step::Stepper;
use crate::sim::balls::{Ball, Hit, Touched};
use crate::skeleton::Model;
use nalgebra::{DMatrix, DVector, Vector3, Vector6};

/// The rows of a step's contact LCP and which of its variables were positive: the guess
/// for the next step's (see [`crate::contact::lcp::solve_from_support`]). Part of a run's state, since it
/// decides the round-off of the next step's impulses.
#[derive(Clone, Debug, PartialEq)]
pub struct WarmStart {
    rows: Vec<RowKey>,
    directions: usize,
    support: Vec<bool>,
    /// Contact phases to go before the reference's expected impulses are tried again
    /// (see [`accept_expected`]): after a refusal the state has left the path they were
    /// split for, and a perturbed run would pay a refused re-solve every step.
    expected_pause: u32,
    /// The warm start of the LCP of the balls apart from the character, solved beside
    /// this one (see [`lcp_split_and_apply`]); kept in this one so that a snapshot or a
    /// replayed step carries both.
    apart: Option<Box<WarmStart>>,
}

/// Contact phases without trying the expected impulses after they were refused.
const EXPECTED_PAUSE: u32 = 64;

impl WarmStart {
    /// A warm start for the balls apart alone: the character's LCP finds none in it (no
    /// rows, and a pyramid no layout has) and starts as without one.
    fn only_apart(apart: WarmStart) -> Self {
        WarmStart {
            rows: Vec::new(),
            directions: usize::MAX,
            support: Vec::new(),
            expected_pause: 0,
            apart: Some(Box::new(apart)),
        }
    }

    /// The guessed support of an LCP whose rows are `rows` (in `layout`), into `out`: each
    /// row seen last step as it was then, a new row inactive (a new contact mostly opens).
    pub(super) fn support_for(&self, rows: &[RowKey], layout: FrictionLayout, out: &mut Vec<bool>) {
        let before = FrictionLayout {
            contacts: self.rows.len(),
            directions: self.directions,
        };
        out.clear();
        out.resize(layout.size(), false);
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
    }
}

/// Round-off allowed in an accepted warm start, relative to the LCP's scale.
const WARM_START_TOLERANCE: f64 = 1e-12;
/// Rounds of active-set changes tried from the last step's support before Lemke. 16: of
/// the 4710 LCPs after a chest hit on CMU 01_01, 224 were still unsolved after 8 rounds,
/// 123 after 16 and 110 after 48 (the block pivoting cycles), and a round costs a few
/// percent of a Lemke call (`scripts/speed_results.md`, stop 43).
const WARM_START_ROUNDS: usize = 16;

/// The impulses of a contact phase's `rows`, applied to the character and balls: the
/// floor's expected ones when they solve the LCP ([`accept_expected`]), else (and for
/// balls apart from the character) the frictional LCP from its Delassus matrix (falling
/// back, reported, to no restitution and no friction).
#[allow(clippy::too_many_arguments)]
pub(super) fn solve_and_apply(
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
    let inputs = PhaseInputs {
        model,
        state,
        v_free,
        opts,
        t,
        h,
    };
    // the phase's buffers, back to the workspace at the end (lost on an error: then
    // allocated anew)
    let mut sc = std::mem::take(&mut ws.scratch);
    sc.u_free.clear();
    sc.u_free.extend_from_slice(stepper.velocities());
    let root_impulse = stepper.root_impulse();
    let paused = ws.warm_start.as_ref().map_or(0, |w| w.expected_pause);
    // The support's impulses the reference expects, when they already solve the LCP of
    // the character's floor rows (balls touching only the floor or each other are apart
    // from those: their own LCP follows).
    let try_expected = opts.expected_impulses
        && paused == 0
        && stepper.options().drift != Drift::ImprovedImplicit
        && rows.iter().any(|r| r.expected_impulse.is_some())
        && rows.iter().all(|r| on_floor(r) || !touches_character(r));
    if !try_expected {
        let start = LcpStart {
            sc,
            root_impulse,
            candidate_in_step: false,
            expected_pause: paused.saturating_sub(1),
        };
        return lcp_split_and_apply(&inputs, stepper, balls, rows, ws, report, start);
    }
    let split;
    let (floor, apart): (&[ContactRow], &[ContactRow]) = if rows.iter().all(on_floor) {
        (rows, &[])
    } else {
        split = rows.iter().partition::<Vec<ContactRow>, _>(|r| on_floor(r));
        (&split.0, &split.1)
    };
    if !accept_expected(model, state, stepper, floor, opts, &mut sc, t)? {
        let start = LcpStart {
            sc,
            root_impulse,
            candidate_in_step: true,
            expected_pause: EXPECTED_PAUSE,
        };
        return lcp_split_and_apply(&inputs, stepper, balls, rows, ws, report, start);
    }
    finish_expected(
        &inputs,
        stepper,
        balls,
        floor,
        &mut sc,
        root_impulse,
        ws,
        report,
    )?;
    // the character's LCP keeps no warm start after its expected impulses (its balls
    // apart keep theirs)
    let apart_warm = ws.warm_start.take().and_then(|w| w.apart).map(|w| *w);
    ws.scratch = sc;
    if apart.is_empty() {
        return Ok(());
    }
    let (pivots, warm_started) = (report.pivots, report.warm_started);
    let result = lcp_apart_and_apply(&inputs, stepper, balls, apart, apart_warm, ws, report);
    (report.pivots, report.warm_started) = (pivots, warm_started);
    result
}

/// The LCP of balls apart from the character (touching only the floor or each other) in
/// their own buffers (`ContactWorkspace::apart`) from their own warm start `warm` (taken
/// from `WarmStart::apart`), kept in the character's warm start for the next step (in one
/// that holds only theirs when the character has none). The character's warm start and
/// its pause before the expected impulses are tried again stay as they were: a step in
/// which only such balls touch anything is, for the character, one without contacts.
/// (Solved in the character's buffers, as before stop 61, the balls' warm start replaced
/// the character's, the pause ran down in steps the character touched nothing, and a
/// figure struck while a ball lay apart on the floor took another path, 1e-12 off, than
/// without that ball.)
fn lcp_apart_and_apply(
    inputs: &PhaseInputs,
    stepper: &mut Stepper,
    balls: &mut [Ball],
    rows: &[ContactRow],
    warm: Option<WarmStart>,
    ws: &mut ContactWorkspace,
    report: &mut ContactReport,
) -> Result<(), ContactError> {
    let mut sub = ws.apart.take().unwrap_or_default();
    sub.warm_start = warm;
    let start = LcpStart::after(std::mem::take(&mut sub.scratch), stepper);
    let result = lcp_and_apply(inputs, stepper, balls, rows, &mut sub, report, start);
    let warm = sub.warm_start.take().map(Box::new);
    match ws.warm_start.as_mut() {
        Some(w) => w.apart = warm,
        None => ws.warm_start = warm.map(|w| WarmStart::only_apart(*w)),
    }
    ws.apart = Some(sub);
    result
}

/// [`lcp_and_apply`] on `rows`, as two LCPs when they fall apart: the character's floor
/// rows, and the rows of balls that touch only the floor or each other (a ball lying on
/// the floor after a hit, for the rest of the clip). No ball touches the character, so no
/// row couples the two, their Delassus matrix is block diagonal and each block's LCP is
/// solved alone, to the same impulses (to round-off): the character's without the ball's
/// rows in its matrix and its basic blocks, the balls' in their own buffers
/// (`ContactWorkspace::apart`) from their own warm start (`WarmStart::apart`). A chest
/// ball on CMU 01_01 lies on the floor through 4710 phases after the hit: 5 of their
/// ~24 rows, 5 % of the run's instructions in one LCP.
fn lcp_split_and_apply(
    inputs: &PhaseInputs,
    stepper: &mut Stepper,
    balls: &mut [Ball],
    rows: &[ContactRow],
    ws: &mut ContactWorkspace,
    report: &mut ContactReport,
    start: LcpStart,
) -> Result<(), ContactError> {
    // the balls' warm start, before the character's LCP replaces the one it is kept in
    let apart_warm = |ws: &mut ContactWorkspace| {
        ws.warm_start
            .as_mut()
            .and_then(|w| w.apart.take())
            .map(|w| *w)
    };
    if !rows.iter().any(touches_character) {
        ws.scratch = start.sc;
        let warm = apart_warm(ws);
        return lcp_apart_and_apply(inputs, stepper, balls, rows, warm, ws, report);
    }
    let on_the_floor = rows.iter().filter(|r| on_floor(r)).count();
    if on_the_floor == rows.len() || !rows.iter().all(|r| on_floor(r) || !touches_character(r)) {
        return lcp_and_apply(inputs, stepper, balls, rows, ws, report, start);
    }
    let (floor, apart): (Vec<ContactRow>, Vec<ContactRow>) =
        rows.iter().cloned().partition(on_floor);
    let warm = apart_warm(ws);
    lcp_and_apply(inputs, stepper, balls, &floor, ws, report, start)?;
    // the phase reports the character's LCP (its pivots, its warm start); a fallback of
    // either is reported
    let (pivots, warm_started) = (report.pivots, report.warm_started);
    let result = lcp_apart_and_apply(inputs, stepper, balls, &apart, warm, ws, report);
    (report.pivots, report.warm_started) = (pivots, warm_started);
    result
}

/// What every part of a contact phase reads: the figure at the step's start, the balls'
/// free velocities, the settings, the time and the step (s).
struct PhaseInputs<'a> {
    model: &'a Model,
    state: &'a State,
    v_free: &'a [Vector3<f64>],
    opts: &'a ContactOptions,
    t: f64,
    h: f64,
}

/// How a phase's LCP starts: its buffers (`sc.u_free`: the character's velocities before
/// any impulse of the phase), the root's impulse then, whether the refused candidate of
/// [`accept_expected`] (`sc.candidate`) is still in the step, to be taken back with the
/// LCP's impulses, and the pause before the next try, for the warm start.
struct LcpStart {
    sc: PhaseScratch,
    root_impulse: Vector6<f64>,
    candidate_in_step: bool,
    expected_pause: u32,
}

impl LcpStart {
    /// The start of an LCP after the character's impulses of the phase are in `stepper`
    /// (the balls apart from it): from the velocities and root impulse now, no candidate.
    fn after(mut sc: PhaseScratch, stepper: &Stepper) -> Self {
        sc.u_free.clear();
        sc.u_free.extend_from_slice(stepper.velocities());
        LcpStart {
            sc,
            root_impulse: stepper.root_impulse(),
            candidate_in_step: false,
            expected_pause: 0,
        }
    }
}

/// A character's point on the floor.
fn on_floor(r: &ContactRow) -> bool {
    matches!(r.owner, Owner::Body(_)) && r.other == Touched::Ground
}

/// A row that pushes a body of the character.
fn touches_character(r: &ContactRow) -> bool {
    matches!(r.owner, Owner::Body(_)) || matches!(r.other, Touched::Body(_))
}

/// Solve the frictional LCP of `rows` and apply its impulses, from `start`.
fn lcp_and_apply(
    inputs: &PhaseInputs,
    stepper: &mut Stepper,
    balls: &mut [Ball],
    rows: &[ContactRow],
    ws: &mut ContactWorkspace,
    report: &mut ContactReport,
    start: LcpStart,
) -> Result<(), ContactError> {
    let &PhaseInputs {
        model,
        state,
        v_free,
        opts,
        t,
        h,
    } = inputs;
    let mut sc = start.sc;
    let n = model.num_bodies();
    let nc = rows.len();
    let d = opts.directions;
    let layout = FrictionLayout {
        contacts: nc,
        directions: d,
    };
    let nr = layout.rows();
    row_directions(rows, d, &mut sc.dirs);
    let frame = RowFrame {
        rows,
        dirs: &sc.dirs,
        balls,
        v_free,
        state,
        u_free: &sc.u_free,
    };
    free_velocities(&frame, opts, &mut sc.u_start, &mut sc.free, &mut sc.plain);
    let delassus = delassus_matrix(&frame, stepper, ws, &mut sc.delassus, n, t)?;
    solve_lcp(rows, layout, &delassus, ws, &mut sc, report, t)?;
    if let Some(w) = ws.warm_start.as_mut() {
        w.expected_pause = start.expected_pause;
    }
    // the matrix's storage back to the workspace for the next step
    ws.delassus = delassus;
    report.contacts += nc;
    // Apply: the impulses gathered per character body, then re-solved into the step.
    // (the body rows only: the constraint rows are zeroed where a solve reads them)
    let rhs = super::rhs_buffer(&mut ws.rhs, n);
    rhs.body.fill(Vector6::zeros());
    // a candidate tried and refused is still in the step: taken back with these
    let mut pushed = false;
    if start.candidate_in_step {
        for (r, c) in rhs.body.iter_mut().zip(&sc.candidate) {
            *r -= c;
        }
        pushed = true;
    }
    let mut ball_dv = vec![(Vector3::zeros(), Vector3::zeros()); balls.len()];
    let (z, dirs) = (&sc.z, &sc.dirs);
    let (row_wrenches, ball_resp) = (&sc.delassus.row_wrenches, &sc.delassus.ball_resp);
    let nb = balls.len();
    for k in 0..nr {
        let lam = z[k];
        if lam == 0.0 {
            continue;
        }
        for (b, w) in row_wrenches[k].iter().flatten() {
            rhs.body[*b] += w * lam;
            pushed = true;
            if let Err(at) = ws.touching.binary_search(b) {
                ws.touching.insert(at, *b);
            }
        }
        for (i, r) in ball_resp[k * nb..(k + 1) * nb].iter().enumerate() {
            ball_dv[i].0 += r.0 * lam;
            ball_dv[i].1 += r.1 * lam;
        }
        let (c, dir) = dirs[k];
        let r = &rows[c];
        let Some(ball) = r.ball() else {
            report.floor_impulse += dir * lam;
            report.floor_moment += r.p.cross(&(dir * lam));
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
    let du = &mut sc.du;
    du.clear();
    du.resize(n, Vector6::zeros());
    let mut root_rows = None;
    if pushed {
        root_rows = Some(if stepper.options().drift == Drift::ImprovedImplicit {
            rhs.rows.fill(Vector6::zeros());
            stepper.kkt().solve(rhs).map_err(|e| ContactError::Lcp {
                t,
                message: e.to_string(),
            })?;
            du.copy_from_slice(&rhs.body);
            stepper.add_velocities(du);
            rhs.rows[0]
        } else {
            stepper
                .resolve_with_impulses(&rhs.body)
                .map_err(|e| ContactError::Lcp {
                    t,
                    message: e.to_string(),
                })?;
            for (d, (a, b)) in du
                .iter_mut()
                .zip(stepper.velocities().iter().zip(&sc.u_free))
            {
                *d = a - b;
            }
            stepper.root_impulse() - start.root_impulse
        });
    }
    report_character_response(model, stepper, du, root_rows, report, t)?;
    for (i, b) in balls.iter().enumerate() {
        report.ball_momentum += ball_dv[i].0 * b.params.mass;
    }
    for (i, b) in balls.iter_mut().enumerate() {
        b.w += ball_dv[i].1;
        // keep the received velocity change for the position update
        b.v = v_free[i] + ball_dv[i].0;
    }
    ws.scratch = sc;
    Ok(())
}

/// How fast a supported point may still move relative to its surface (or another point
/// close on the floor) under the expected impulses for them to count as the LCP's
/// solution, m/s. Measured on CMU 01_01's feedforward: the accepted candidates' largest
/// such velocity is 1e-11 m/s (the re-solve's round-off); 1e-9 m/s is 4e-12 m over a
/// step at 1/240 s, far below anything the contact could show.
const EXPECTED_TOLERANCE_M_S: f64 = 1e-9;

/// Try the reference's expected impulses (the inverse dynamics' support split, on the
/// floor rows of the points it supports) as the LCP's solution: each inside its friction
/// pyramid (tested against the pyramid's inscribed cone), applied by re-solving the step
/// with them; true when every supported point then moves with its surface and no other
/// point closes on the floor, within `EXPECTED_TOLERANCE_M_S` — the LCP's conditions, so
/// the impulses are one of its solutions, the one the feedforward planned for. False
/// leaves them in the step (`sc.candidate`, for [`lcp_and_apply`] to take back).
#[allow(clippy::too_many_arguments)]
fn accept_expected(
    model: &Model,
    state: &State,
    stepper: &mut Stepper,
    rows: &[ContactRow],
    opts: &ContactOptions,
    sc: &mut PhaseScratch,
    t: f64,
) -> Result<bool, ContactError> {
    let cone = (std::f64::consts::PI / opts.directions.max(3) as f64).cos();
    let n = model.num_bodies();
    sc.candidate.clear();
    sc.candidate.resize(n, Vector6::zeros());
    for r in rows {
        let (Some(f), Owner::Body(b)) = (r.expected_impulse, r.owner) else {
            continue;
        };
        let normal = f.dot(&r.n);
        if normal < 0.0 || (f - r.n * normal).norm() > r.friction * normal * cone {
            return Ok(false);
        }
        let tq = (r.p - state.bodies[b].x).cross(&f);
        sc.candidate[b] += Vector6::new(f.x, f.y, f.z, tq.x, tq.y, tq.z);
    }
    stepper
        .resolve_with_impulses(&sc.candidate)
        .map_err(|e| ContactError::Lcp {
            t,
            message: e.to_string(),
        })?;
    let tol = EXPECTED_TOLERANCE_M_S;
    let u = stepper.velocities();
    let mut ok = true;
    for r in rows {
        let Owner::Body(b) = r.owner else { continue };
        let ub = &u[b];
        let v = Vector3::new(ub[0], ub[1], ub[2])
            + Vector3::new(ub[3], ub[4], ub[5]).cross(&(r.p - state.bodies[b].x))
            - r.surface_velocity;
        match r.expected_impulse {
            // carrying: sticks to the surface under it
            Some(f) if f.dot(&r.n) > 0.0 => ok &= v.norm() <= tol,
            // free: does not close on the floor
            _ => ok &= v.dot(&r.n) + r.bias >= -tol,
        }
    }
    Ok(ok)
}

/// The contact phase's report and the balls' velocities after [`accept_expected`]
/// (`sc.du`: the character's velocity change, written here).
#[allow(clippy::too_many_arguments)]
fn finish_expected(
    inputs: &PhaseInputs,
    stepper: &Stepper,
    balls: &mut [Ball],
    rows: &[ContactRow],
    sc: &mut PhaseScratch,
    root_start: Vector6<f64>,
    ws: &mut ContactWorkspace,
    report: &mut ContactReport,
) -> Result<(), ContactError> {
    let (model, v_free, t) = (inputs.model, inputs.v_free, inputs.t);
    report.contacts += rows.len();
    report.warm_started = true;
    report.expected = true;
    for r in rows {
        let (Some(f), Owner::Body(b)) = (r.expected_impulse, r.owner) else {
            continue;
        };
        if f == Vector3::zeros() {
            continue;
        }
        report.floor_impulse += f;
        report.floor_moment += r.p.cross(&f);
        if let Err(at) = ws.touching.binary_search(&b) {
            ws.touching.insert(at, b);
        }
    }
    sc.du.clear();
    sc.du.extend(
        stepper
            .velocities()
            .iter()
            .zip(&sc.u_free)
            .map(|(a, b)| a - b),
    );
    let root_rows = stepper.root_impulse() - root_start;
    report_character_response(model, stepper, &sc.du, Some(root_rows), report, t)?;
    for (i, b) in balls.iter_mut().enumerate() {
        b.v = v_free[i];
    }
    Ok(())
}

/// What a contact phase's impulses did to the character, into `report`: the momentum of
/// its velocity change `du` (per body, linear then angular) and, when it was pushed, what
/// held its root — the root rows' impulse change `root_rows` (a pinned root's) plus the
/// implicit spring's reaction to the root's velocity change, so the momentum balance
/// closes with either. A non-finite `du` is an error.
fn report_character_response(
    model: &Model,
    stepper: &Stepper,
    du: &[Vector6<f64>],
    root_rows: Option<Vector6<f64>>,
    report: &mut ContactReport,
    t: f64,
) -> Result<(), ContactError> {
    if let Some(r) = root_rows {
        let spring = stepper.root_spring_reaction(&du[0]);
        report.root_impulse +=
            Vector3::new(r[0], r[1], r[2]) + Vector3::new(spring[0], spring[1], spring[2]);
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
    Ok(())
}

/// The rows' free velocities relative to the surfaces (after the free step), with Newton
/// restitution and the gap bias on the normal rows, into `free`; and the same without
/// either into `plain` (for the fallback). `u_start` is scratch.
fn free_velocities(
    frame: &RowFrame,
    opts: &ContactOptions,
    u_start: &mut Vec<Vector6<f64>>,
    free: &mut DVector<f64>,
    plain: &mut DVector<f64>,
) {
    let (rows, dirs, balls, v_free, state, u_free) = (
        frame.rows,
        frame.dirs,
        frame.balls,
        frame.v_free,
        frame.state,
        frame.u_free,
    );
    // Balls' (velocity, spin) after the free step and at the start of the step; the
    // character's at the start of the step.
    let ball_free: Vec<(Vector3<f64>, Vector3<f64>)> = balls
        .iter()
        .enumerate()
        .map(|(i, b)| (v_free[i], b.w))
        .collect();
    let ball_start: Vec<(Vector3<f64>, Vector3<f64>)> = balls.iter().map(|b| (b.v, b.w)).collect();
    u_start.clear();
    u_start.extend(state.bodies.iter().map(|s| s.twist()));
    // Free contact velocities relative to the surfaces, with Newton restitution and the
    // gap bias on the normal rows.
    let nr = dirs.len();
    if free.len() != nr {
        *free = DVector::zeros(nr);
        *plain = DVector::zeros(nr);
    }
    for k in 0..nr {
        let (c, dir) = dirs[k];
        free[k] = frame.velocity(k, u_free, &ball_free) - rows[c].surface_velocity.dot(&dir);
    }
    plain.copy_from(free);
    for (c, r) in rows.iter().enumerate() {
        // Restitution from the approach velocity at the start of the step (METHOD §9:
        // w = J u⁺ + e·min(0, J u_k)), not after the free step: the step's own forces
        // (gravity on a limb, PD torques, a pinned root's motion) must not change the
        // bounce.
        let vn = frame.velocity(c, u_start, &ball_start) - r.surface_velocity.dot(&r.n);
        if vn < -opts.restitution_threshold {
            free[c] += r.restitution * vn;
        }
        free[c] += r.bias;
    }
}

/// The guessed support of the contact LCP, in `guess`: the last step's (when `warm`, the
/// support `guess` holds), with every row that carries an expected impulse (a point the
/// reference supports) guessed from it instead: normal active, the friction edges on
/// either side of its tangential part active (those within the edges' spacing 2π/d of it,
/// read from the rows' directions `dirs`), not sliding. The frictional LCP can have
/// several solutions: measured on CMU 01_01, a heel that became a support as it landed
/// was guessed open (a new row), and the open solution (heel lifting off while the other
/// foot took the whole load) was accepted, so the unperturbed run left the feedforward's
/// path by 1.6 m/s. False when there is neither.
fn guess_expected(
    rows: &[ContactRow],
    dirs: &[(usize, Vector3<f64>)],
    layout: FrictionLayout,
    warm: bool,
    guess: &mut Vec<bool>,
) -> bool {
    if rows.iter().all(|r| r.expected_impulse.is_none()) {
        return warm;
    }
    if !warm {
        guess.clear();
        guess.resize(layout.size(), false);
    }
    // an edge carries force when the force is closer to it than to the next edge
    let spacing = (std::f64::consts::TAU / layout.directions.max(1) as f64)
        .cos()
        .max(0.0);
    for (c, r) in rows.iter().enumerate() {
        let Some(f) = r.expected_impulse else {
            continue;
        };
        let normal = f.dot(&r.n);
        // the warm start's normal is on only for a row that carried last step (a new
        // row is guessed off)
        let was_on = guess[layout.normal(c)];
        guess[layout.normal(c)] = normal > 0.0;
        if was_on && normal > 0.0 {
            // carrying last step and now: its friction edges and slack as they were
            continue;
        }
        guess[layout.slack(c)] = false;
        let tangential = f - r.n * normal;
        let threshold = spacing * tangential.norm() + 1e-9 * normal;
        for k in 0..layout.directions {
            let edge = layout.tangent(c, k);
            guess[edge] = normal > 0.0 && dirs[edge].1.dot(&tangential) > threshold;
        }
    }
    true
}

/// Solve the frictional LCP of `rows` (Delassus matrix `delassus`, free velocities
/// `sc.free`, `sc.plain` without restitution, directions `sc.dirs`): from the last step's
/// active set, else with Lemke, else (reported) without restitution and friction. The
/// impulses, in `layout`'s order, into `sc.z`.
fn solve_lcp(
    rows: &[ContactRow],
    layout: FrictionLayout,
    delassus: &DMatrix<f64>,
    ws: &mut ContactWorkspace,
    sc: &mut PhaseScratch,
    report: &mut ContactReport,
    t: f64,
) -> Result<(), ContactError> {
    let nc = layout.contacts;
    let d = layout.directions;
    sc.mu.clear();
    sc.mu.extend(rows.iter().map(|r| r.friction));
    // The previous step's active set first (the same rows: planted feet, a resting ball),
    // then Lemke.
    let mut key = std::mem::take(&mut sc.key);
    key.clear();
    key.extend(rows.iter().map(|r| (r.owner, r.other, r.id)));
    let last = ws.warm_start.take();
    let warm = match &last {
        Some(w) if w.directions == d => {
            w.support_for(&key, layout, &mut sc.guess);
            true
        }
        _ => false,
    };
    let guessed = guess_expected(rows, &sc.dirs, layout, warm, &mut sc.guess);
    // the support rules depend on the layout alone
    if sc.rules_layout != Some(layout) {
        sc.rules = layout.support_rules();
        sc.rules_layout = Some(layout);
    }
    // the LCP in the workspace's buffers (the same size step after step while feet stand)
    let built = friction_lcp_into(
        layout,
        delassus,
        &sc.free,
        &sc.mu,
        &mut ws.lcp_m,
        &mut ws.lcp_q,
    );
    let (m, q) = (&ws.lcp_m, &ws.lcp_q);
    let solved = match built {
        Err(e) => Err(e.to_string()),
        Ok(_) => {
            let rounds = if guessed {
                solve_from_support_in(
                    m,
                    q,
                    &sc.guess,
                    &sc.rules,
                    WARM_START_TOLERANCE,
                    WARM_START_ROUNDS,
                    &mut sc.lcp,
                )
            } else {
                None
            };
            match rounds {
                Some(rounds) => {
                    if sc.z.len() != sc.lcp.z.len() {
                        sc.z = DVector::zeros(sc.lcp.z.len());
                    }
                    sc.z.copy_from(&sc.lcp.z);
                    Ok((rounds, true))
                }
                None => lemke(m, q).map_err(|e| e.to_string()).map(|sol| {
                    sc.z = sol.z;
                    (sol.pivots, false)
                }),
            }
        }
    };
    match solved {
        Ok((pivots, warm)) => {
            report.pivots = pivots;
            report.warm_started = warm;
            // the next step's warm start, in the storage of this step's
            let (mut support, spare) = match last {
                Some(w) => (w.support, w.rows),
                None => (Vec::new(), Vec::new()),
            };
            support.clear();
            support.extend(sc.z.iter().map(|&v| v > 0.0));
            sc.key = spare;
            ws.warm_start = Some(WarmStart {
                rows: key,
                directions: d,
                support,
                expected_pause: 0,
                apart: None,
            });
        }
        Err(_) => {
            // Fallback (METHOD §9: squeezed balls can make the frictional LCP unsolvable):
            // no restitution, no friction — reported. The normal rows alone, the ball rows
            // with the floor rows' relative compliance too: the matrix is then positive
            // definite and its LCP always has a solution (the frictional LCP with μ = 0,
            // tried before, still ended on a secondary ray for a fallen dancer).
            report.fallback = true;
            let mut f0 = sc.plain.rows(0, nc).into_owned();
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
            sc.z = z;
        }
    }
    Ok(())
}

/// The contact phase's buffers, kept from step to step in its workspace (a phase would
/// otherwise allocate some thirty small vectors a step).
#[derive(Clone, Debug)]
pub(super) struct PhaseScratch {
    /// The character's velocities after the free step.
    u_free: Vec<Vector6<f64>>,
    /// The character's velocities at the start of the step.
    u_start: Vec<Vector6<f64>>,
    /// Every row's direction and contact.
    dirs: Vec<(usize, Vector3<f64>)>,
    /// The rows' free velocities with restitution and bias, and without.
    free: DVector<f64>,
    plain: DVector<f64>,
    /// The Delassus matrix's buffers.
    delassus: DelassusScratch,
    /// Friction coefficient per contact.
    mu: Vec<f64>,
    /// Storage for the next warm start's row keys.
    key: Vec<RowKey>,
    /// The LCP's guessed support.
    guess: Vec<bool>,
    /// The support rules of `rules_layout`.
    rules: SupportRules,
    rules_layout: Option<FrictionLayout>,
    /// The warm start's buffers.
    lcp: SupportScratch,
    /// The LCP's solution.
    z: DVector<f64>,
    /// The character's velocity change from the impulses.
    du: Vec<Vector6<f64>>,
    /// The expected impulses tried as the LCP's solution, per body.
    candidate: Vec<Vector6<f64>>,
}

impl Default for PhaseScratch {
    fn default() -> Self {
        PhaseScratch {
            u_free: Vec::new(),
            u_start: Vec::new(),
            dirs: Vec::new(),
            free: DVector::zeros(0),
            plain: DVector::zeros(0),
            delassus: DelassusScratch::default(),
            mu: Vec::new(),
            key: Vec::new(),
            guess: Vec::new(),
            rules: SupportRules::default(),
            rules_layout: None,
            lcp: SupportScratch::default(),
            z: DVector::zeros(0),
            du: Vec::new(),
            candidate: Vec::new(),
        }
    }
}
