//! Lemke's complementary pivoting algorithm for the linear complementarity problem
//! (thesis §2.7.1, §4.8.1, §4.8.3; METHOD §9):
//!
//! ```text
//! find z, w ∈ Rⁿ:  w = M z + q,  w ≥ 0,  z ≥ 0,  wᵀz = 0
//! ```
//!
//! Dense, for the small LCPs left after the contact rows are Schur-complemented out of
//! the step (n up to ~60). The basis inverse is kept explicitly and updated by one
//! pivot per iteration (O(n²), the product-form update of thesis §4.8.1) and refactored
//! from scratch every [`LemkeOptions::refactor_every`] pivots; the final basis is solved
//! afresh by LU, so round-off from the updates does not reach the answer.
//!
//! Degeneracy (ties in the minimum ratio test, common in friction LCPs whose cone rows
//! have q = 0) is resolved by the lexicographic minimum ratio test, which provably
//! prevents cycling; ratios count as tied when they differ by round-off, and pivots
//! smaller than a relative ε are refused (the two numerical fixes of thesis §4.8.3).

use nalgebra::{DMatrix, DVector};

/// Why [`lemke`] found no solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LcpError {
    /// `M` is not square or `q` has a different length.
    #[error("LCP dimensions do not match: M must be n×n and q of length n")]
    Dimension,
    /// `M` or `q` holds NaN or ±∞ (or pivoting overflowed, for inputs near f64::MAX).
    #[error("LCP input holds a non-finite number, or pivoting overflowed")]
    NonFinite,
    /// Secondary ray: the entering column has no positive entry, so the path leaves along
    /// an unbounded edge. For copositive-plus M (which includes P-matrices and the
    /// Anitescu–Potra friction LCP) this proves the LCP has no solution.
    #[error("Lemke's algorithm ended on a secondary ray: no solution found")]
    RayTermination,
    /// The pivot limit was reached (cycling through round-off, or a very hard problem).
    #[error("Lemke's algorithm reached its pivot limit")]
    MaxPivots,
}

/// A solution of the LCP: `w = M z + q`, both ≥ 0 and complementary.
#[derive(Clone, Debug, PartialEq)]
pub struct LcpSolution {
    /// The z variables (for contacts: impulses, N·s, or cone slacks, m/s).
    pub z: DVector<f64>,
    /// The w = M z + q variables. Exactly one of `z[i]`, `w[i]` is basic, the other is
    /// exactly 0, so `zᵀw = 0` exactly; basic values can be round-off negative (~1e-16).
    pub w: DVector<f64>,
    /// Pivots performed (0 for the trivial solution q ≥ 0).
    pub pivots: usize,
}

/// Tolerances and limits of [`lemke_with`]. The defaults suit problems whose entries are
/// within a few orders of magnitude of each other.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LemkeOptions {
    /// Pivot limit; `None` means `50·n + 100`.
    pub max_pivots: Option<usize>,
    /// Ratio-test ε, relative to the entering column's largest entry: rows whose entry is
    /// at most `pivot_tol · max|d|` are not candidates (thesis §4.8.3: a tiny positive
    /// entry from round-off would otherwise win the ratio test with a meaningless ratio).
    pub pivot_tol: f64,
    /// Two rows tie in the ratio test when, at the minimum ratio, the other row's basic
    /// value is within `tie_tol · max|basic values|` of zero (i.e. they would reach zero
    /// together but for round-off). Ties go to z0, then to the lexicographic test.
    pub tie_tol: f64,
    /// Refactor the basis inverse from scratch every this many pivots (0 = never).
    pub refactor_every: usize,
}

impl Default for LemkeOptions {
    fn default() -> Self {
        LemkeOptions {
            max_pivots: None,
            pivot_tol: 1e-11,
            tie_tol: 1e-12,
            refactor_every: 32,
        }
    }
}

/// Solves the LCP `w = M z + q ≥ 0, z ≥ 0, wᵀz = 0` by Lemke's method with default options.
///
/// Returns the trivial solution when `q ≥ 0`. Errors: [`LcpError::Dimension`],
/// [`LcpError::NonFinite`], [`LcpError::RayTermination`] (no solution found: for
/// P-matrices and copositive-plus matrices, none exists), [`LcpError::MaxPivots`].
pub fn lemke(m: &DMatrix<f64>, q: &DVector<f64>) -> Result<LcpSolution, LcpError> {
    lemke_with(m, q, &LemkeOptions::default())
}

/// The LCP's solution found from a guess of its support (which z are positive), without
/// Lemke's pivots: z_B = −M_BB⁻¹ q_B, z = 0 elsewhere; where that leaves some z_B < 0 or
/// some w = M z + q < 0 off B, those indices change sides (block principal pivoting,
/// Júdice & Pires 1994) and it tries again, at most `max_rounds` times. Accepted only when
/// z ≥ 0 and w ≥ 0 to round-off (`tol` relative to the largest |z| and |q|; tiny negative
/// z_B are set to 0, w_B to 0). `None` when no round succeeds or M_BB is singular.
///
/// A step's contacts mostly keep, or nearly keep, the previous step's active set (planted
/// feet stay stuck, a resting ball rests): starting from its support answers them with a
/// small LU or two instead of Lemke's pivots, and the answer is exact whenever accepted —
/// a z ≥ 0 with w ≥ 0 and zᵀw = 0 solves the LCP whichever way it was found.
///
/// `rules` says which supports a contact LCP can have (see [`SupportRules`]); the default
/// knows nothing of the structure.
pub fn solve_from_support(
    m: &DMatrix<f64>,
    q: &DVector<f64>,
    support: &[bool],
    rules: &SupportRules,
    tol: f64,
    max_rounds: usize,
) -> Option<LcpSolution> {
    let mut scratch = SupportScratch::default();
    let pivots = solve_from_support_in(m, q, support, rules, tol, max_rounds, &mut scratch)?;
    Some(LcpSolution {
        z: scratch.z,
        w: scratch.w,
        pivots,
    })
}

/// The buffers of [`solve_from_support_in`], kept between calls (a simulation's contact
/// phase solves one small LCP a step: its ~10 vectors would otherwise be allocated anew).
#[derive(Clone, Debug)]
pub struct SupportScratch {
    support: Vec<bool>,
    loose: Vec<usize>,
    basic: Vec<usize>,
    flip: Vec<usize>,
    changed: Vec<bool>,
    left: Vec<bool>,
    /// Each round's starting point, to see a cycle: its support and `left`, flattened
    /// (2n flags a round), and its safeguard's state.
    visited: Vec<bool>,
    visited_safeguard: Vec<(usize, usize)>,
    /// z of the solution the last call found (after a call that found none: its last
    /// round's, meaningless).
    pub z: DVector<f64>,
    /// w = M z + q of that solution.
    pub w: DVector<f64>,
}

impl Default for SupportScratch {
    fn default() -> Self {
        SupportScratch {
            support: Vec::new(),
            loose: Vec::new(),
            basic: Vec::new(),
            flip: Vec::new(),
            changed: Vec::new(),
            left: Vec::new(),
            visited: Vec::new(),
            visited_safeguard: Vec::new(),
            z: DVector::zeros(0),
            w: DVector::zeros(0),
        }
    }
}

/// [`solve_from_support`] in `scratch`'s buffers: the number of rounds it took, the
/// solution in `scratch.z` and `scratch.w` (the same numbers to the bit).
#[allow(clippy::too_many_arguments)]
pub fn solve_from_support_in(
    m: &DMatrix<f64>,
    q: &DVector<f64>,
    support: &[bool],
    rules: &SupportRules,
    tol: f64,
    max_rounds: usize,
    scratch: &mut SupportScratch,
) -> Option<usize> {
    let n = q.len();
    let partner = &rules.partner[..];
    if m.nrows() != n
        || m.ncols() != n
        || support.len() != n
        || !(partner.is_empty() || partner.len() == n)
        || rules.cones.iter().any(|c| {
            c.normal >= n || c.slack >= n || c.tangents.end > n || c.tangents.start > c.tangents.end
        })
    {
        return None;
    }
    let scale = q.amax().max(f64::MIN_POSITIVE);
    let SupportScratch {
        support: support_now,
        loose,
        basic,
        flip,
        changed,
        left,
        visited,
        visited_safeguard,
        z,
        w,
    } = scratch;
    support_now.clear();
    support_now.extend_from_slice(support);
    let support = support_now;
    let mut safeguard = PivotSafeguard::new();
    if z.len() != n {
        *z = DVector::zeros(n);
        *w = DVector::zeros(n);
    }
    changed.clear();
    changed.resize(n, false);
    // the variables that left the support in the last round
    left.clear();
    left.resize(n, false);
    visited.clear();
    visited_safeguard.clear();
    for round in 0..max_rounds.max(1) {
        // A round's outcome depends on its support, `left` and the safeguard alone (z and
        // w are computed afresh): a starting point seen before is a cycle, which no later
        // round leaves, so the answer is None now rather than after `max_rounds` (some of
        // the fallbacks after a hit do; the others wander through new supports).
        let state = (safeguard.best_infeasible, safeguard.tries_left);
        let seen = visited_safeguard.iter().enumerate().any(|(k, s)| {
            *s == state
                && visited[2 * n * k..2 * n * k + n] == support[..]
                && visited[2 * n * k + n..2 * n * (k + 1)] == left[..]
        });
        if seen {
            return None;
        }
        visited_safeguard.push(state);
        visited.extend_from_slice(support);
        visited.extend_from_slice(left);
        // A contact whose normal impulse is out carries no friction: its tangents go out
        // and its sliding slack in (loose, below: it only keeps the tangents' w ≥ 0).
        for c in &rules.cones {
            if !support[c.normal] {
                for t in c.tangents.clone() {
                    support[t] = false;
                }
                support[c.slack] = true;
            }
        }
        // A basic variable whose column is zero on the basic rows (its own row included)
        // makes M_BB singular, but it is not undetermined: it changes no basic w, so it
        // is whatever keeps the others' w ≥ 0, at least. The friction LCP has one for every
        // contact that carries no load: its sliding-speed slack λ may be positive (the
        // point slides while it barely touches), a common case for the floor points of a
        // lifting foot, where Lemke returns λ > 0 and the exact support was singular.
        loose.clear();
        basic.clear();
        for j in 0..n {
            if !support[j] {
                continue;
            }
            let column = m.column(j);
            if (0..n).all(|i| !support[i] || column[i] == 0.0) {
                loose.push(j);
            } else {
                basic.push(j);
            }
        }
        z.fill(0.0);
        flip.clear();
        if !basic.is_empty() {
            let nb = basic.len();
            let mbb = DMatrix::from_fn(nb, nb, |i, j| m[(basic[i], basic[j])]);
            let mut zb = DVector::from_fn(nb, |i, _| -q[basic[i]]);
            if !mbb.lu().solve_mut(&mut zb) {
                return None;
            }
            let zscale = zb.amax().max(f64::MIN_POSITIVE);
            for (k, &i) in basic.iter().enumerate() {
                let v = zb[k];
                if !v.is_finite() {
                    return None;
                }
                if v < -tol * zscale {
                    flip.push(i);
                }
                z[i] = v.max(0.0);
            }
        }
        // While some basic z is negative, only those change sides: the w off the support
        // are computed with them clamped to 0 and mislead (a friction force past its
        // pyramid's edge, set to 0, made every other point of the foot look as if it
        // slid, and flipping all of them cycled).
        let primal_only = !flip.is_empty();
        // w = M z + q over z's non-zero columns only (the basic ones): in the order of a
        // dense product, so the same bits, at |B| columns instead of n
        w.fill(0.0);
        for &j in basic.iter() {
            if z[j] != 0.0 {
                w.axpy(z[j], &m.column(j), 1.0);
            }
        }
        *w += q;
        for &j in loose.iter() {
            // its own w must vanish (it is basic); then the least value that keeps the
            // non-basic rows it enters with a positive coefficient at w ≥ 0
            if w[j].abs() > tol * scale {
                flip.push(j);
                continue;
            }
            let column = m.column(j);
            let mut v: f64 = 0.0;
            for i in 0..n {
                if !support[i] && column[i] > 0.0 && w[i] < 0.0 {
                    v = v.max(-w[i] / column[i]);
                }
            }
            if v > 0.0 {
                z[j] = v;
                w.axpy(v, &column, 1.0);
            }
        }
        for i in 0..n {
            if support[i] {
                w[i] = 0.0;
            } else if w[i].is_nan() || (w[i] < -tol * scale && !primal_only) {
                flip.push(i);
            }
        }
        if flip.is_empty() {
            return Some(round);
        }
        safeguard.restrict(flip);
        changed.fill(false);
        for &i in flip.iter() {
            if changed[i] {
                continue;
            }
            support[i] = !support[i];
            changed[i] = true;
            // ... but a partner that left in the last round does not come back with it:
            // two opposite friction edges that both come out negative (the force wants
            // neither) otherwise trade places every round, a 2-cycle that sent 2 % of
            // CMU 01_01's contact steps to Lemke (182 of 9270 calls; 78 with this rule)
            if let Some(p) = partner.get(i).copied().flatten()
                && !changed[p]
                && support[p] == support[i]
                && (support[p] || !left[p])
            {
                support[p] = !support[p];
                changed[p] = true;
            }
        }
        for (l, (&c, &s)) in left.iter_mut().zip(changed.iter().zip(support.iter())) {
            *l = c && !s;
        }
    }
    None
}

/// What the supports of a contact LCP obey, for [`solve_from_support`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SupportRules {
    /// `partner[i]`, where given, is a variable that is never positive together with z_i
    /// (a friction impulse along −t for one along +t): a change of side takes it out as i
    /// comes in and brings it in as i goes out, so a friction force that turns past an edge
    /// of its pyramid is followed in one round instead of cycling; a partner that left in
    /// the round before is not brought back (two opposite edges would trade places).
    /// Empty: no partners.
    pub partner: Vec<Option<usize>>,
    /// The friction cones: a contact whose normal impulse is zero has zero friction
    /// impulses, whatever the guess said, and its sliding slack is then only bounded below.
    pub cones: Vec<ConeIndices>,
}

/// One contact's variables in a friction LCP (see [`SupportRules`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ConeIndices {
    /// Its normal impulse.
    pub normal: usize,
    /// Its friction impulses along the pyramid's edges.
    pub tangents: std::ops::Range<usize>,
    /// Its cone slack (≈ sliding speed).
    pub slack: usize,
}

/// Rounds of whole-set flips without fewer infeasible indices before
/// [`solve_from_support`] changes one index at a time.
const BLOCK_TRIES: usize = 2;

/// Júdice & Pires' safeguard for block principal pivoting: flipping every infeasible index
/// at once can cycle (it did, between two supports, on a foot's redundant floor points),
/// so while the count of infeasible indices does not fall below its best, after a few
/// tries only the largest infeasible index changes sides (Murty's rule, finite for
/// P-matrices).
pub(crate) struct PivotSafeguard {
    best_infeasible: usize,
    tries_left: usize,
}

impl PivotSafeguard {
    pub(crate) fn new() -> Self {
        PivotSafeguard {
            best_infeasible: usize::MAX,
            tries_left: BLOCK_TRIES,
        }
    }

    /// Sorts and dedups a round's infeasible indices `flip`, and cuts them to the largest
    /// one when the rounds stopped making progress.
    pub(crate) fn restrict(&mut self, flip: &mut Vec<usize>) {
        flip.sort_unstable();
        flip.dedup();
        if flip.len() < self.best_infeasible {
            self.best_infeasible = flip.len();
            self.tries_left = BLOCK_TRIES;
        } else if self.tries_left > 0 {
            self.tries_left -= 1;
        } else if let Some(&last) = flip.last() {
            flip.clear();
            flip.push(last);
        }
    }
}

/// Variable numbering: `w_i = i`, `z_i = n + i`, `z0 = 2n`.
struct Tableau<'a> {
    n: usize,
    m: &'a DMatrix<f64>,
    q: &'a DVector<f64>,
    /// Basic variable of each row.
    basis: Vec<usize>,
    /// Inverse of the basis matrix (columns of `[I, −M, −e]` of the basic variables).
    binv: DMatrix<f64>,
    /// Values of the basic variables, `B⁻¹ q`.
    x: DVector<f64>,
}

impl Tableau<'_> {
    fn z0(&self) -> usize {
        2 * self.n
    }

    /// `B⁻¹ ·` the column of variable `var` in `I w − M z − e z0 = q`.
    fn transformed_column(&self, var: usize) -> DVector<f64> {
        let n = self.n;
        if var < n {
            self.binv.column(var).into_owned()
        } else if var < 2 * n {
            -(&self.binv * self.m.column(var - n))
        } else {
            -self.binv.column_sum()
        }
    }

    /// Makes `entering` basic in row `r`, given its transformed column `d` (`d[r] ≠ 0`).
    fn pivot(&mut self, r: usize, entering: usize, d: &DVector<f64>) {
        let n = self.n;
        let piv = d[r];
        let xr = self.x[r] / piv;
        let d = &d.as_slice()[..n];
        // row r is overwritten after each loop: the loops have no branch and vectorise
        for (x, di) in self.x.as_mut_slice().iter_mut().zip(d) {
            *x -= di * xr;
        }
        self.x[r] = xr;
        // Column-major: walk each column once, contiguous inner loop.
        for j in 0..n {
            let brj = self.binv[(r, j)] / piv;
            if brj == 0.0 {
                continue;
            }
            let col = &mut self.binv.as_mut_slice()[j * n..(j + 1) * n];
            for (c, di) in col.iter_mut().zip(d) {
                *c -= di * brj;
            }
            col[r] = brj;
        }
        self.basis[r] = entering;
    }

    /// The basis matrix reduced to its dense block, factored: B's columns of basic w's
    /// are unit vectors, so with W the rows of basic w's and N the others (as many as the
    /// basic z's and z0, S), `B x = q` splits into `B_NS x_S = q_N` and
    /// `x_W = q_W − B_WS x_S`. Returns N (rows, in order), the basis positions of S and
    /// the LU of B_NS: an |S|³ factorisation instead of n³ (a contact LCP's basis holds
    /// a dozen z's of ~50 variables).
    fn reduced_basis(
        &self,
    ) -> (
        Vec<usize>,
        Vec<usize>,
        nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>,
    ) {
        let n = self.n;
        let mut w_basic = vec![false; n];
        let mut dense = Vec::new();
        for (k, &var) in self.basis.iter().enumerate() {
            if var < n {
                w_basic[var] = true;
            } else {
                dense.push(k);
            }
        }
        let rows: Vec<usize> = (0..n).filter(|&i| !w_basic[i]).collect();
        let bns = DMatrix::from_fn(rows.len(), dense.len(), |a, b| {
            self.entry(rows[a], self.basis[dense[b]])
        });
        (rows, dense, bns.lu())
    }

    /// Row `i` of the column of variable `var` in `I w − M z − e z0 = q`.
    fn entry(&self, i: usize, var: usize) -> f64 {
        let n = self.n;
        if var < n {
            if var == i { 1.0 } else { 0.0 }
        } else if var < 2 * n {
            -self.m[(i, var - n)]
        } else {
            -1.0
        }
    }

    /// `B⁻¹ q` from the reduced basis (see [`Self::reduced_basis`]); `None` if B_NS is
    /// singular or the answer not finite.
    fn solve_reduced(
        &self,
        rows: &[usize],
        dense: &[usize],
        lu: &nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>,
    ) -> Option<DVector<f64>> {
        let n = self.n;
        // (square whenever the basis' variables are distinct, as pivoting keeps them)
        if rows.len() != dense.len() {
            return None;
        }
        // (an all-w basis is the identity: nothing to factor)
        let xs = if rows.is_empty() {
            DVector::zeros(0)
        } else {
            lu.solve(&DVector::from_fn(rows.len(), |a, _| self.q[rows[a]]))?
        };
        let mut x = DVector::zeros(n);
        for (b, &k) in dense.iter().enumerate() {
            x[k] = xs[b];
        }
        for (k, &var) in self.basis.iter().enumerate() {
            if var < n {
                let mut v = self.q[var];
                for (b, &kd) in dense.iter().enumerate() {
                    v -= self.entry(var, self.basis[kd]) * xs[b];
                }
                x[k] = v;
            }
        }
        x.iter().all(|v| v.is_finite()).then_some(x)
    }

    /// Recomputes `B⁻¹` and `B⁻¹ q` from the basis (reduced to its dense block, see
    /// [`Self::reduced_basis`]); keeps the updated ones if the basis is numerically
    /// singular (it cannot be in exact arithmetic).
    fn refactor(&mut self) {
        let n = self.n;
        let (rows, dense, lu) = self.reduced_basis();
        let Some(x) = self.solve_reduced(&rows, &dense, &lu) else {
            return;
        };
        let bns_inv = if rows.is_empty() {
            DMatrix::zeros(0, 0)
        } else {
            let Some(inv) = lu.try_inverse() else {
                return;
            };
            inv
        };
        // B⁻¹ by blocks: the S positions read q_N through B_NS⁻¹; a basic w_i reads q_i
        // less B_WS B_NS⁻¹ q_N
        let mut inv = DMatrix::zeros(n, n);
        for (b, &k) in dense.iter().enumerate() {
            for (a, &i) in rows.iter().enumerate() {
                inv[(k, i)] = bns_inv[(b, a)];
            }
        }
        let mut bws = Vec::with_capacity(dense.len());
        for (k, &var) in self.basis.iter().enumerate() {
            if var >= n {
                continue;
            }
            inv[(k, var)] = 1.0;
            // row `var` of B_WS, read once for all of N's columns
            bws.clear();
            bws.extend(dense.iter().map(|&kd| self.entry(var, self.basis[kd])));
            for (a, &i) in rows.iter().enumerate() {
                let mut v = 0.0;
                for (b, e) in bws.iter().enumerate() {
                    v -= e * bns_inv[(b, a)];
                }
                inv[(k, i)] = v;
            }
        }
        if inv.iter().all(|v| v.is_finite()) {
            self.binv = inv;
            self.x = x;
        }
    }

    /// Recomputes only `B⁻¹ q` (the answer) by one solve of the final basis.
    fn resolve(&mut self) {
        let (rows, dense, lu) = self.reduced_basis();
        if let Some(x) = self.solve_reduced(&rows, &dense, &lu) {
            self.x = x;
        }
    }

    /// Row leaving the basis when the variable with transformed column `d` enters:
    /// minimum ratio test with ε, z0 preferred on ties, lexicographic tie-break.
    /// `None` means no row limits the entering variable (ray).
    fn leaving_row(&self, d: &DVector<f64>, opts: &LemkeOptions) -> Option<usize> {
        let n = self.n;
        let dmax = d.amax();
        let eps = opts.pivot_tol * dmax;
        let cand: Vec<usize> = (0..n).filter(|&i| d[i] > eps).collect();
        if cand.is_empty() {
            return None;
        }
        // Basic values are ≥ 0 in exact arithmetic; clip round-off negatives so that no
        // ratio comes out negative.
        let xi = |i: usize| self.x[i].max(0.0);
        let rmin = cand
            .iter()
            .map(|&i| xi(i) / d[i])
            .fold(f64::INFINITY, f64::min);
        let xscale = self.x.amax().max(f64::MIN_POSITIVE);
        let mut ties: Vec<usize> = cand
            .into_iter()
            .filter(|&i| xi(i) - rmin * d[i] <= opts.tie_tol * xscale)
            .collect();
        if ties.len() == 1 {
            return Some(ties[0]);
        }
        // z0 leaving ends the algorithm with a solution: always take it when it ties.
        if let Some(&r) = ties.iter().find(|&&i| self.basis[i] == self.z0()) {
            return Some(r);
        }
        // Lexicographic minimum ratio test (Murty §2.2.8; thesis §2.7.1): compare the rows
        // of B⁻¹ divided by d_i, column by column, until one row is smallest. Rows of B⁻¹
        // are independent, so exact ties cannot survive all n columns.
        let bscale = self.binv.amax().max(f64::MIN_POSITIVE);
        for k in 0..n {
            if ties.len() <= 1 {
                break;
            }
            let vmin = ties
                .iter()
                .map(|&i| self.binv[(i, k)] / d[i])
                .fold(f64::INFINITY, f64::min);
            let kept: Vec<usize> = ties
                .iter()
                .copied()
                .filter(|&i| self.binv[(i, k)] - vmin * d[i] <= opts.tie_tol * bscale)
                .collect();
            // The minimiser always passes its own test; the guard only matters for NaN.
            if !kept.is_empty() {
                ties = kept;
            }
        }
        // Round-off left several rows indistinguishable: take the largest pivot (stablest).
        ties.into_iter().max_by(|&i, &j| d[i].total_cmp(&d[j]))
    }

    fn solution(&self, pivots: usize) -> LcpSolution {
        let n = self.n;
        let mut z = DVector::zeros(n);
        let mut w = DVector::zeros(n);
        for (r, &var) in self.basis.iter().enumerate() {
            if var < n {
                w[var] = self.x[r];
            } else if var < 2 * n {
                z[var - n] = self.x[r];
            }
        }
        LcpSolution { z, w, pivots }
    }
}

/// [`lemke`] with explicit options.
pub fn lemke_with(
    m: &DMatrix<f64>,
    q: &DVector<f64>,
    opts: &LemkeOptions,
) -> Result<LcpSolution, LcpError> {
    let n = q.len();
    if m.nrows() != n || m.ncols() != n {
        return Err(LcpError::Dimension);
    }
    if m.iter().chain(q.iter()).any(|v| !v.is_finite()) {
        return Err(LcpError::NonFinite);
    }
    if q.iter().all(|&v| v >= 0.0) {
        return Ok(LcpSolution {
            z: DVector::zeros(n),
            w: q.clone(),
            pivots: 0,
        });
    }
    let max_pivots = opts.max_pivots.unwrap_or(50 * n + 100);
    let mut tab = Tableau {
        n,
        m,
        q,
        basis: (0..n).collect(),
        binv: DMatrix::identity(n, n),
        x: q.clone(),
    };

    // First pivot: z0 enters at the value −min q, replacing the w of the most negative q.
    // Among equal minima take the LAST index: after the pivot, row i of [B⁻¹q | B⁻¹] is
    // (q_i − q_t, e_i − e_t), which is lexicographically positive for tied i only if i < t.
    // That lexicographic positivity is what the later lexicographic ratio tests maintain.
    let qmin = q.min();
    let t = (0..n).rev().find(|&i| q[i] == qmin).unwrap_or(0);
    let d = tab.transformed_column(tab.z0());
    tab.pivot(t, tab.z0(), &d);
    let mut pivots = 1;
    let mut entering = n + t; // z_t, the complement of the w_t that left

    loop {
        if pivots >= max_pivots {
            return Err(LcpError::MaxPivots);
        }
        let d = tab.transformed_column(entering);
        if d.iter().chain(tab.x.iter()).any(|v| !v.is_finite()) {
            return Err(LcpError::NonFinite);
        }
        let Some(r) = tab.leaving_row(&d, opts) else {
            return Err(LcpError::RayTermination);
        };
        let leaving = tab.basis[r];
        tab.pivot(r, entering, &d);
        pivots += 1;
        if leaving == tab.z0() {
            // Solution basis: solve it afresh so the answer carries one solve's round-off,
            // not that of every update since the last refactorization.
            tab.resolve();
            return Ok(tab.solution(pivots));
        }
        if opts.refactor_every > 0 && pivots % opts.refactor_every == 0 {
            tab.refactor();
        }
        // Complementary pivot rule: the complement of the leaving variable enters.
        entering = if leaving < n {
            leaving + n
        } else {
            leaving - n
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(m: &DMatrix<f64>, q: &DVector<f64>, s: &LcpSolution) {
        let r = m * &s.z + q - &s.w;
        assert!(r.amax() < 1e-12, "residual {}", r.amax());
        assert!(s.z.min() >= -1e-12 && s.w.min() >= -1e-12);
        assert!(s.z.dot(&s.w).abs() < 1e-12);
    }

    #[test]
    fn a_cycling_support_is_given_up_when_it_comes_back() {
        // No solution (every support leaves a negative z or w); block pivoting goes
        // {} → {0, 1} → {} → …, then Murty's single flips cycle between {0} and {0, 1}.
        let m = DMatrix::from_row_slice(2, 2, &[1.0, -2.0, -2.0, 1.0]);
        let q = DVector::from_vec(vec![-1.0, -1.0]);
        let rules = SupportRules::default();
        let mut scratch = SupportScratch::default();
        let rounds = 1000;
        let found =
            solve_from_support_in(&m, &q, &[false, false], &rules, 1e-12, rounds, &mut scratch);
        assert_eq!(found, None);
        // given up at the first repeat, not after all its rounds
        let tried = scratch.visited_safeguard.len();
        assert!(tried < 10, "{tried} rounds tried");
        // and Lemke agrees there is none
        assert_eq!(lemke(&m, &q).unwrap_err(), LcpError::RayTermination);
    }

    #[test]
    fn trivial_when_q_nonnegative() {
        let m = DMatrix::identity(3, 3);
        let q = DVector::from_vec(vec![1.0, 0.0, 2.0]);
        let s = lemke(&m, &q).unwrap();
        assert_eq!(s.pivots, 0);
        assert_eq!(s.w, q);
        assert_eq!(s.z, DVector::zeros(3));
    }

    #[test]
    fn one_by_one() {
        let m = DMatrix::from_element(1, 1, 2.0);
        let q = DVector::from_element(1, -3.0);
        let s = lemke(&m, &q).unwrap();
        assert!((s.z[0] - 1.5).abs() < 1e-15);
        assert_eq!(s.w[0], 0.0);
        check(&m, &q, &s);
    }

    #[test]
    fn identity_gives_minus_q() {
        let m = DMatrix::identity(4, 4);
        let q = DVector::from_vec(vec![-1.0, 2.0, -3.0, -1.0]);
        let s = lemke(&m, &q).unwrap();
        check(&m, &q, &s);
        assert_eq!(s.z, DVector::from_vec(vec![1.0, 0.0, 3.0, 1.0]));
    }

    #[test]
    fn errors_on_bad_input() {
        let m = DMatrix::identity(2, 2);
        assert_eq!(
            lemke(&m, &DVector::from_vec(vec![1.0])),
            Err(LcpError::Dimension)
        );
        assert_eq!(
            lemke(&m, &DVector::from_vec(vec![f64::NAN, -1.0])),
            Err(LcpError::NonFinite)
        );
        let mut mi = m.clone();
        mi[(0, 1)] = f64::INFINITY;
        assert_eq!(
            lemke(&mi, &DVector::from_vec(vec![-1.0, -1.0])),
            Err(LcpError::NonFinite)
        );
    }

    #[test]
    fn extreme_magnitudes_do_not_panic() {
        for big in [1e300, f64::MAX, 1e-300, f64::MIN_POSITIVE] {
            let m =
                DMatrix::from_row_slice(3, 3, &[big, -big, big, big, big, -big, -big, big, big]);
            let q = DVector::from_vec(vec![-big, -1.0, big]);
            if let Ok(s) = lemke(&m, &q) {
                assert!(s.z.iter().chain(s.w.iter()).all(|v| v.is_finite()));
            }
        }
    }

    #[test]
    fn empty_problem() {
        let s = lemke(&DMatrix::zeros(0, 0), &DVector::zeros(0)).unwrap();
        assert_eq!(s.z.len(), 0);
    }
}
