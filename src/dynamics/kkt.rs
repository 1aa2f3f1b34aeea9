//! O(n) block-tree factorisation of the KKT system of one step (METHOD §8; Baraff 1996,
//! "Linear-time dynamics using Lagrange multipliers"):
//!
//! ```text
//!     [ A   −Jᵀ ] [u]   [r]
//!     [ J    0  ] [λ] = [b]
//! ```
//!
//! A (6n×6n, not necessarily symmetric) has a 6×6 block per body on its diagonal and
//! 6×6 blocks only between a body and its parent (a PD torque couples its joint's two
//! bodies). J holds, for every non-root body, the rows of the joint to its parent
//! (3 linear + 3 − dof rotational rows, touching that body and its parent) and, for a
//! root, optionally rows touching the root alone (a pinned root: J_r = I₆).
//!
//! **Super-nodes.** Node i gathers body i's 6 velocity unknowns and the multipliers of
//! the rows it owns (its parent joint's rows, or a root's own rows): at most 6 + 6 = 12
//! unknowns. A node touches its parent node only through the parent's 6 body unknowns,
//! so the nodes form the same tree as the bodies. With D_i the node's own block,
//! B_i its coupling to u_p (rows of node i) and C_i the parent's momentum rows' coupling
//! to node i, the leaf-to-root sweep
//!
//! ```text
//!     D̂_i = D_i − Σ_children (C_c D̂_c⁻¹ B_c on the body block),
//! ```
//!
//! factors each D̂_i by a small dense LU with partial pivoting (fixed 12×12 storage, no
//! heap allocation), and a solve is a leaf-to-root forward pass followed by a root-to-leaf
//! back-substitution. Work and storage are O(n); the factorisation can be reused for any
//! number of right-hand sides ([`BlockTree::solve`]), as stabilisation and contact Schur
//! complements need.
//!
//! **Null-space nodes.** A joint's rows `G = [−I K; 0 −Cᵀ]` (its point rows, then one
//! per constrained rotation axis) have the null space S = [K A; A], A the free rotation
//! axes: the velocities the joint allows. Such a node is eliminated there, as
//! Featherstone's articulated-body algorithm does in reduced coordinates: one F×F system
//! D = SᵀÂS (F = 3, 2 or 1 free axes) instead of inverting the 6×6 Â and then the rows'
//! Schur complement, the multipliers recovered from the momentum rows. Same solution (to
//! round-off), about half the work of a ball joint's node. The mass-metric projections
//! ([`BlockTree::factor_symmetric`]) keep their Cholesky block path, which is cheaper
//! still without couplings; the general block path and the pivoted LU remain for other
//! rows and for a D without a usable pivot.

// Small dense kernels (≤ 12×12) read best as index loops.
#![allow(clippy::needless_range_loop)]

use crate::skeleton::Joint;
use crate::skeleton::joint::JointFrame;
use nalgebra::{
    DMatrix, DVector, Matrix3, Matrix6, SMatrix, SVector, UnitQuaternion, Vector3, Vector6,
};

/// Largest super-node: 6 body unknowns + 6 multipliers.
const MAX_NODE: usize = 12;

/// Relative pivot size below which a super-node is reported singular.
const PIVOT_TOLERANCE: f64 = 1e-13;

/// Why a block-tree system could not be set up or factored.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum KktError {
    /// The super-node of `body` (its 6 velocity unknowns and its joint's multipliers) is
    /// singular after eliminating its subtree: e.g. a zero mass block, or redundant rows.
    #[error(
        "KKT block of body {body} is singular (pivot {pivot:.3e} against block scale {scale:.3e})"
    )]
    Singular {
        /// Body index whose super-node failed.
        body: usize,
        /// Largest available pivot.
        pivot: f64,
        /// Largest entry of the node block.
        scale: f64,
    },
    /// Bodies must be ordered parents first.
    #[error("body {body} has parent {parent}, which does not come before it")]
    NotParentFirst {
        /// Offending body.
        body: usize,
        /// Its parent.
        parent: usize,
    },
    /// A node owns at most 6 constraint rows.
    #[error("body {body} owns {rows} constraint rows; at most 6 are allowed")]
    TooManyRows {
        /// Offending body.
        body: usize,
        /// Rows requested.
        rows: usize,
    },
    /// A solve was requested before a successful factorisation.
    #[error("the KKT system has not been factored")]
    NotFactored,
}

/// A vector shaped like the KKT system: per body its 6 momentum/velocity entries
/// (force·time or m/s, rad/s) and the entries of the rows it owns (only the first
/// [`BlockTree::rows`] of each `rows` entry are used).
#[derive(Clone, Debug, PartialEq)]
pub struct KktVector {
    /// Per body: momentum rows (right-hand side) or (v, ω) (solution).
    pub body: Vec<Vector6<f64>>,
    /// Per body: constraint right-hand sides or multipliers (impulses) of its rows.
    pub rows: Vec<Vector6<f64>>,
}

impl KktVector {
    /// All zeros for `n` bodies.
    pub fn zeros(n: usize) -> Self {
        KktVector {
            body: vec![Vector6::zeros(); n],
            rows: vec![Vector6::zeros(); n],
        }
    }

    /// Set every entry to zero.
    pub fn fill_zero(&mut self) {
        self.body.iter_mut().for_each(|v| v.fill(0.0));
        self.rows.iter_mut().for_each(|v| v.fill(0.0));
    }
}

/// Small dense LU with partial pivoting, fixed storage.
#[derive(Clone, Copy, Debug)]
struct SmallLu {
    a: [[f64; MAX_NODE]; MAX_NODE],
    perm: [usize; MAX_NODE],
    n: usize,
}

impl Default for SmallLu {
    fn default() -> Self {
        SmallLu {
            a: [[0.0; MAX_NODE]; MAX_NODE],
            perm: [0; MAX_NODE],
            n: 0,
        }
    }
}

impl SmallLu {
    /// Factor in place; on failure returns (largest pivot, scale).
    fn factor(&mut self) -> Result<(), (f64, f64)> {
        let n = self.n;
        let mut scale: f64 = 0.0;
        for r in 0..n {
            for c in 0..n {
                scale = scale.max(self.a[r][c].abs());
            }
        }
        for (i, p) in self.perm.iter_mut().enumerate() {
            *p = i;
        }
        let tol = PIVOT_TOLERANCE * scale;
        for k in 0..n {
            let mut p = k;
            let mut best = self.a[k][k].abs();
            for r in k + 1..n {
                let v = self.a[r][k].abs();
                if v > best {
                    best = v;
                    p = r;
                }
            }
            if best <= tol || !best.is_finite() {
                return Err((best, scale));
            }
            if p != k {
                self.a.swap(p, k);
                self.perm.swap(p, k);
            }
            let inv = 1.0 / self.a[k][k];
            let (top, rest) = self.a.split_at_mut(k + 1);
            let pivot_row = &top[k];
            for row in rest.iter_mut().take(n - k - 1) {
                let l = row[k] * inv;
                row[k] = l;
                if l != 0.0 {
                    for c in k + 1..n {
                        row[c] -= l * pivot_row[c];
                    }
                }
            }
        }
        Ok(())
    }

    /// Solve in place (first `n` entries of `b`).
    #[inline]
    fn solve(&self, b: &mut [f64; MAX_NODE]) {
        let n = self.n;
        let mut y = [0.0; MAX_NODE];
        for i in 0..n {
            let mut s = b[self.perm[i]];
            for (j, yj) in y.iter().enumerate().take(i) {
                s -= self.a[i][j] * yj;
            }
            y[i] = s;
        }
        for i in (0..n).rev() {
            let mut s = y[i];
            for j in i + 1..n {
                s -= self.a[i][j] * b[j];
            }
            b[i] = s / self.a[i][i];
        }
    }
}

/// The block-tree KKT matrix `[A −Jᵀ; J 0]` and its O(n) factorisation.
///
/// Fill the blocks (`diag_mut`, `a_child_parent_mut`, `a_parent_child_mut`,
/// `j_self_mut`, `j_parent_mut`, `set_rows`), call [`factor`](Self::factor), then
/// [`solve`](Self::solve) as often as needed. Blocks stay as given (the factor is stored
/// apart), so [`apply`](Self::apply) multiplies by the original matrix.
#[derive(Clone, Debug)]
pub struct BlockTree {
    parent: Vec<Option<usize>>,
    rows: Vec<usize>,
    diag: Vec<Matrix6<f64>>,
    a_cp: Vec<Matrix6<f64>>,
    a_pc: Vec<Matrix6<f64>>,
    j_self: Vec<Matrix6<f64>>,
    j_parent: Vec<Matrix6<f64>>,
    lu: Vec<SmallLu>,
    nodes: Vec<NodeFactor>,
    update: Vec<Matrix6<f64>>,
    factored: bool,
}

/// The factor of one super-node D̂ = [Â −Gᵀ; G 0] (G = the node's own rows).
///
/// Block path (`block`): P = Â⁻¹, X = P Gᵀ, Y = G P, S⁻¹ = (G P Gᵀ)⁻¹ — Baraff's
/// body-then-rows elimination with fixed 6×6 kernels. If Â or S has no usable pivot the
/// node falls back to a pivoted LU of the whole (6 + c)-square block (`lu`).
/// Both paths store W = D̂⁻¹ B, split into its body rows `wx` and multiplier rows `wl`.
#[derive(Clone, Copy, Debug)]
struct NodeFactor {
    block: bool,
    coupled: bool,
    /// The coupling blocks fill only their rotational 3×3 parts (PD torques).
    rot_only: bool,
    /// Symmetric positive definite node held as Cholesky factors (see
    /// [`factor_block_spd`]): `p` holds L, `x` holds Z, `sinv` holds L_S.
    sym: bool,
    /// Node solved in its joint's null space: a ball joint (see [`factor_ball_null`]:
    /// `p` holds Â, `x` K, `sinv` D⁻¹) or, with `free` < 3, a hinge or universal joint
    /// (see [`factor_axes_null`]: `p` holds Â, `x` S, `y` K (top-left) and the
    /// constrained axes (bottom-left), `sinv` D⁻¹).
    null: bool,
    /// Rotational degrees of freedom of a null-space node's joint.
    free: usize,
    /// A ball null-space node's K has a zero diagonal (a cross-product matrix, see
    /// [`skew_sum`]).
    skew: bool,
    p: Matrix6<f64>,
    x: Matrix6<f64>,
    y: Matrix6<f64>,
    sinv: Matrix6<f64>,
    wx: Matrix6<f64>,
    wl: Matrix6<f64>,
}

impl Default for NodeFactor {
    fn default() -> Self {
        NodeFactor {
            block: false,
            coupled: false,
            rot_only: false,
            sym: false,
            null: false,
            free: 3,
            skew: false,
            p: Matrix6::zeros(),
            x: Matrix6::zeros(),
            y: Matrix6::zeros(),
            sinv: Matrix6::zeros(),
            wx: Matrix6::zeros(),
            wl: Matrix6::zeros(),
        }
    }
}

/// Relative pivot below which the block path gives way to the pivoted LU.
const BLOCK_PIVOT_TOLERANCE: f64 = 1e-9;

/// Inverse of a fixed-size square matrix by Gauss–Jordan with partial pivoting; `None`
/// if a pivot is ≤ `rel_tol` × the largest entry (the pivots are searched among M's
/// columns: see below).
///
/// In place (Numerical Recipes' `gaussj` with row pivoting only): step k turns column k
/// into that of the inverse, so each step updates N − 1 rows of N entries — N³
/// multiply-adds, half of eliminating on [A | I] side by side. The row swaps come back
/// as column swaps at the end.
#[inline]
fn invert<const N: usize>(m: &SMatrix<f64, N, N>, rel_tol: f64) -> Option<SMatrix<f64, N, N>> {
    // Work on Mᵀ, whose rows are M's (column-major) columns: copies in and out are
    // plain moves, and (Mᵀ)⁻¹ read column-major is M⁻¹. Pivoting on Mᵀ's rows is
    // pivoting on M's columns.
    let mut a = [[0.0f64; N]; N];
    for (row, col) in a.iter_mut().zip(m.as_slice().chunks_exact(N)) {
        row.copy_from_slice(col);
    }
    let scale = m.as_slice().iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let tol = rel_tol * scale;
    let mut swapped = [0usize; N];
    for k in 0..N {
        let mut p = k;
        let mut best = a[k][k].abs();
        for r in k + 1..N {
            if a[r][k].abs() > best {
                best = a[r][k].abs();
                p = r;
            }
        }
        if best <= tol || !best.is_finite() {
            return None;
        }
        a.swap(p, k);
        swapped[k] = p;
        let d = 1.0 / a[k][k];
        a[k][k] = 1.0;
        for c in 0..N {
            a[k][c] *= d;
        }
        let ak = a[k];
        for (r, row) in a.iter_mut().enumerate() {
            if r == k {
                continue;
            }
            let f = row[k];
            row[k] = 0.0;
            for c in 0..N {
                row[c] -= f * ak[c];
            }
        }
    }
    for k in (0..N).rev() {
        let p = swapped[k];
        if p != k {
            for row in a.iter_mut() {
                row.swap(p, k);
            }
        }
    }
    Some(SMatrix::from_fn(|r, c| a[c][r]))
}

/// Lower Cholesky factor L of a symmetric positive definite matrix (A = L Lᵀ), reading
/// only A's lower triangle; `None` if a squared pivot is ≤ `rel_tol` × the largest
/// diagonal entry (not positive definite to working precision). The strict upper
/// triangle of the result is zero.
#[inline]
fn cholesky<const N: usize>(m: &SMatrix<f64, N, N>, rel_tol: f64) -> Option<SMatrix<f64, N, N>> {
    let scale = (0..N).fold(0.0f64, |s, i| s.max(m[(i, i)].abs()));
    let tol = rel_tol * scale;
    let mut l = SMatrix::<f64, N, N>::zeros();
    for j in 0..N {
        let mut d = m[(j, j)];
        for k in 0..j {
            d -= l[(j, k)] * l[(j, k)];
        }
        if !(d > tol && d.is_finite()) {
            return None;
        }
        let ljj = d.sqrt();
        l[(j, j)] = ljj;
        let inv = 1.0 / ljj;
        for i in j + 1..N {
            let mut v = m[(i, j)];
            for k in 0..j {
                v -= l[(i, k)] * l[(j, k)];
            }
            l[(i, j)] = v * inv;
        }
    }
    Some(l)
}

/// L⁻¹ B for lower triangular L (forward substitution, column by column).
#[inline]
fn lower_solve<const N: usize, const M: usize>(
    l: &SMatrix<f64, N, N>,
    b: &SMatrix<f64, N, M>,
) -> SMatrix<f64, N, M> {
    let mut x = *b;
    for c in 0..M {
        for i in 0..N {
            let mut v = x[(i, c)];
            for k in 0..i {
                v -= l[(i, k)] * x[(k, c)];
            }
            x[(i, c)] = v / l[(i, i)];
        }
    }
    x
}

/// L⁻ᵀ B for lower triangular L (back substitution with Lᵀ, column by column).
#[inline]
fn lower_transpose_solve<const N: usize, const M: usize>(
    l: &SMatrix<f64, N, N>,
    b: &SMatrix<f64, N, M>,
) -> SMatrix<f64, N, M> {
    let mut x = *b;
    for c in 0..M {
        for i in (0..N).rev() {
            let mut v = x[(i, c)];
            for k in i + 1..N {
                v -= l[(k, i)] * x[(k, c)];
            }
            x[(i, c)] = v / l[(i, i)];
        }
    }
    x
}

/// `$f::<C>(args…)` with the node's row count `$c` (0..=6) as the constant C: the
/// kernels then work on C-row blocks instead of zero-padded 6×6 ones.
macro_rules! with_rows {
    ($c:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        match $c {
            0 => $f::<0>($($arg),*),
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            _ => $f::<6>($($arg),*),
        }
    };
}

/// The top-left R×C block of `m` as a fixed-size copy. The kernels below copy blocks in
/// and out of the 6×6 storage with these plain loops: nalgebra's strided view iterators
/// (`fixed_rows(…).into_owned()`, `copy_from` on a view) cost several times the copy
/// itself here, ~15 % of a factorisation.
#[inline(always)]
fn block<const R: usize, const C: usize>(m: &Matrix6<f64>) -> SMatrix<f64, R, C> {
    SMatrix::from_fn(|r, c| m[(r, c)])
}

/// The top-left R×C block of `m` set to `b` (see [`block`]).
#[inline(always)]
fn set_block<const R: usize, const C: usize>(m: &mut Matrix6<f64>, b: &SMatrix<f64, R, C>) {
    for c in 0..C {
        for r in 0..R {
            m[(r, c)] = b[(r, c)];
        }
    }
}

/// The first C entries of `v`.
#[inline(always)]
fn head<const C: usize>(v: &Vector6<f64>) -> SVector<f64, C> {
    SVector::from_fn(|r, _| v[r])
}

/// The first C entries of `v` set to `h`.
#[inline(always)]
fn set_head<const C: usize>(v: &mut Vector6<f64>, h: &SVector<f64, C>) {
    for r in 0..C {
        v[r] = h[r];
    }
}

/// Block-path solve of a node with `C` rows: (u, λ) ← D̂⁻¹ (u, λ) with
/// λ_C = S⁻¹(λ − Y u), u = P u + X λ_C. Entries of λ beyond C stay as given (zero).
#[inline]
fn node_solve_block<const C: usize>(
    node: &NodeFactor,
    u: &mut Vector6<f64>,
    lam: &mut Vector6<f64>,
) {
    let pu = node.p * *u;
    if C == 0 {
        *u = pu;
        return;
    }
    let r: SVector<f64, C> = head::<C>(lam) - block::<C, 6>(&node.y) * *u;
    let yl: SVector<f64, C> = block::<C, C>(&node.sinv) * r;
    *u = pu + block::<6, C>(&node.x) * yl;
    set_head(lam, &yl);
}

/// Forward step of a block-path node `i` with `C` rows (see [`BlockTree::eliminate`]):
/// (u, λ) ← D̂⁻¹(u, λ) in place, then the parent's momentum rows lose C (u, λ), with
/// C = [A_{p,i}, −J_parentᵀ]. A PD coupling touches only the rotational 3×3 blocks, and
/// is multiplied as such.
#[inline]
fn eliminate_block<const C: usize>(
    node: &NodeFactor,
    jp: &Matrix6<f64>,
    apc: &Matrix6<f64>,
    parent: Option<usize>,
    i: usize,
    x: &mut KktVector,
) {
    let mut u = x.body[i];
    let lam = &mut x.rows[i];
    if node.sym {
        node_solve_spd::<C>(node, &mut u, lam);
    } else if node.null {
        node_solve_null(node, &mut u, lam);
    } else {
        node_solve_block::<C>(node, &mut u, lam);
    }
    for k in C..6 {
        lam[k] = 0.0;
    }
    x.body[i] = u;
    let Some(p) = parent else {
        return;
    };
    // r̂_p −= C y with C = [A_{p,i}, −J_parentᵀ]
    let mut cy = parent_rows_transpose::<C>(jp, &x.rows[i]);
    if node.rot_only {
        let w: Vector3<f64> = apc.fixed_view::<3, 3>(3, 3) * u.fixed_rows::<3>(3);
        for k in 0..3 {
            cy[3 + k] -= w[k];
        }
    } else if node.coupled {
        cy -= apc * u;
    }
    x.body[p] += cy;
}

/// `J_parentᵀ λ` of a node with `C` rows: the multipliers' pull on the parent's body
/// (its push is the negative; written without negating, which nalgebra does element by
/// element through an iterator).
#[inline]
fn parent_rows_transpose<const C: usize>(jp: &Matrix6<f64>, lam: &Vector6<f64>) -> Vector6<f64> {
    block::<C, 6>(jp).tr_mul(&head::<C>(lam))
}

/// Back step of a node with `C` rows: u −= W_x u_p, λ_C −= W_λ u_p.
#[inline]
fn substitute_rows<const C: usize>(
    node: &NodeFactor,
    up: &Vector6<f64>,
    u: &mut Vector6<f64>,
    lam: &mut Vector6<f64>,
) {
    *u -= node.wx * up;
    if C > 0 {
        let d: SVector<f64, C> = block::<C, 6>(&node.wl) * up;
        set_head(lam, &(head::<C>(lam) - d));
    }
}

/// Factor of a symmetric positive definite node with `C` rows and no coupling blocks (a
/// mass-metric projection `[M −Jᵀ; J 0]`), kept as Cholesky factors instead of inverses:
/// Â = L Lᵀ, Z = L⁻¹Gᵀ, S = G Â⁻¹ Gᵀ = ZᵀZ = L_S L_Sᵀ. The parent update is
/// C D̂⁻¹ B = −B_λᵀ S⁻¹ B_λ = −KᵀK with K = L_S⁻¹ B_λ; no W = D̂⁻¹B is stored (the back
/// step solves with the factors, [`substitute_spd`]). About a third of the work of
/// inverting Â and S, for the few solves a projection needs. `None` if Â or S is not
/// positive definite to working precision.
#[inline]
fn factor_block_spd<const C: usize>(
    ahat: &Matrix6<f64>,
    j_self: &Matrix6<f64>,
    j_parent: &Matrix6<f64>,
    has_parent: bool,
    node: &mut NodeFactor,
) -> Option<Matrix6<f64>> {
    let l = cholesky::<6>(ahat, BLOCK_PIVOT_TOLERANCE)?;
    node.p = l;
    if C == 0 {
        return Some(Matrix6::zeros());
    }
    let gt: SMatrix<f64, 6, C> = block::<C, 6>(j_self).transpose();
    let z = lower_solve::<6, C>(&l, &gt);
    let ls = cholesky::<C>(&(z.transpose() * z), BLOCK_PIVOT_TOLERANCE)?;
    set_block(&mut node.x, &z);
    set_block(&mut node.sinv, &ls);
    if !has_parent {
        return Some(Matrix6::zeros());
    }
    let bl: SMatrix<f64, C, 6> = block::<C, 6>(j_parent);
    let k = lower_solve::<C, 6>(&ls, &bl);
    Some(Matrix6::zeros() - k.tr_mul(&k))
}

/// Node solve with [`factor_block_spd`]'s factors: (u, λ) ← D̂⁻¹(u, λ), from
/// y = Â⁻¹u, λ = S⁻¹(λ − G y), u = y + Â⁻¹Gᵀλ (Â⁻¹Gᵀ = L⁻ᵀZ).
#[inline]
fn node_solve_spd<const C: usize>(node: &NodeFactor, u: &mut Vector6<f64>, lam: &mut Vector6<f64>) {
    let l = &node.p;
    let w = lower_solve::<6, 1>(l, u);
    if C == 0 {
        *u = lower_transpose_solve::<6, 1>(l, &w);
        return;
    }
    let z = block::<6, C>(&node.x);
    let ls = block::<C, C>(&node.sinv);
    // G y = Zᵀ L⁻¹ u = Zᵀ w
    let r: SVector<f64, C> = head::<C>(lam) - z.transpose() * w;
    let yl = lower_transpose_solve::<C, 1>(&ls, &lower_solve::<C, 1>(&ls, &r));
    *u = lower_transpose_solve::<6, 1>(l, &(w + z * yl));
    set_head(lam, &yl);
}

/// Back step of a [`factor_block_spd`] node: W u_p = D̂⁻¹(0, B_λ u_p), i.e.
/// λ' = S⁻¹ B_λ u_p and u' = L⁻ᵀ Z λ'; then u −= u', λ −= λ'.
#[inline]
fn substitute_spd<const C: usize>(
    node: &NodeFactor,
    jp: &Matrix6<f64>,
    up: &Vector6<f64>,
    u: &mut Vector6<f64>,
    lam: &mut Vector6<f64>,
) {
    if C == 0 {
        return;
    }
    let ls = block::<C, C>(&node.sinv);
    let b: SVector<f64, C> = block::<C, 6>(jp) * up;
    let dl = lower_transpose_solve::<C, 1>(&ls, &lower_solve::<C, 1>(&ls, &b));
    let du = lower_transpose_solve::<6, 1>(&node.p, &(block::<6, C>(&node.x) * dl));
    *u -= du;
    set_head(lam, &(head::<C>(lam) - dl));
}

/// Block-path factor of a node with `C` rows (see [`NodeFactor`]): fills `node` and
/// returns the parent update C D̂⁻¹ B, or `None` if Â or S has no usable pivot.
#[allow(clippy::too_many_arguments)]
#[inline]
fn factor_block<const C: usize>(
    ahat: &Matrix6<f64>,
    j_self: &Matrix6<f64>,
    j_parent: &Matrix6<f64>,
    a_cp: &Matrix6<f64>,
    a_pc: &Matrix6<f64>,
    has_parent: bool,
    coupled: bool,
    node: &mut NodeFactor,
) -> Option<Matrix6<f64>> {
    let p = invert::<6>(ahat, BLOCK_PIVOT_TOLERANCE)?;
    node.p = p;
    // a pure-torque coupling (PD control) fills only the rotational 3×3 blocks
    let rot_only = node.rot_only;
    let p_bu = |p: &Matrix6<f64>| -> Matrix6<f64> {
        if rot_only {
            let mut m = Matrix6::zeros();
            let b = a_cp.fixed_view::<3, 3>(3, 3);
            m.fixed_columns_mut::<3>(3)
                .copy_from(&(p.fixed_columns::<3>(3) * b));
            m
        } else {
            p * a_cp
        }
    };
    let apc_w = |w: &Matrix6<f64>| -> Matrix6<f64> {
        if rot_only {
            let mut m = Matrix6::zeros();
            let a = a_pc.fixed_view::<3, 3>(3, 3);
            m.fixed_rows_mut::<3>(3)
                .copy_from(&(a * w.fixed_rows::<3>(3)));
            m
        } else {
            a_pc * w
        }
    };
    if C == 0 {
        return Some(if has_parent && coupled {
            let wx = p_bu(&p);
            node.wx = wx;
            apc_w(&wx)
        } else {
            node.wx.fill(0.0);
            Matrix6::zeros()
        });
    }
    // only the node's C rows (columns of X) are stored and ever read: no zero padding
    let g: SMatrix<f64, C, 6> = block::<C, 6>(j_self);
    let x: SMatrix<f64, 6, C> = p * g.transpose();
    let (sinv, y): (SMatrix<f64, C, C>, SMatrix<f64, C, 6>) =
        (invert::<C>(&(g * x), BLOCK_PIVOT_TOLERANCE)?, g * p);
    set_block(&mut node.x, &x);
    set_block(&mut node.y, &y);
    set_block(&mut node.sinv, &sinv);
    if !has_parent {
        return Some(Matrix6::zeros());
    }
    // W = D̂⁻¹ B: multiplier rows S⁻¹(B_λ − Y B_u), body rows P B_u + X W_λ
    let bl: SMatrix<f64, C, 6> = block::<C, 6>(j_parent);
    let v = if rot_only {
        let mut v = bl;
        let b = a_cp.fixed_view::<3, 3>(3, 3);
        let yb: SMatrix<f64, C, 3> = y.fixed_columns::<3>(3) * b;
        let mut vc = v.fixed_columns_mut::<3>(3);
        vc -= yb;
        v
    } else if coupled {
        bl - y * a_cp
    } else {
        bl
    };
    let wl: SMatrix<f64, C, 6> = sinv * v;
    let mut wx: Matrix6<f64> = x * wl;
    if coupled {
        wx += p_bu(&p);
    }
    set_block(&mut node.wl, &wl);
    node.wx = wx;
    // C W with C = [A_{p,i}, −J_parentᵀ]
    let mut cw: Matrix6<f64> = Matrix6::zeros() - bl.tr_mul(&wl);
    if coupled {
        cw += apc_w(&wx);
    }
    Some(cw)
}

/// True if a node's `rows` rows start with a joint's point rows, `[−I | K]` (the child's point
/// velocity v − r × ω matched to the parent's; see [`joint_rows`]): exactly −I on the
/// linear part, and no linear part in the rows below (a hinge's or universal joint's
/// rotational rows).
#[inline]
fn ball_rows(g: &Matrix6<f64>, rows: usize) -> bool {
    let mut ok = true;
    for r in 0..rows {
        for c in 0..3 {
            ok &= g[(r, c)] == if r == c { -1.0 } else { 0.0 };
        }
    }
    ok
}

/// The two indices of 0..3 other than `i`, in increasing order: the terms a sum over a
/// skew-symmetric matrix's row or column keeps (its diagonal is zero).
#[inline]
fn others(i: usize) -> [usize; 2] {
    match i {
        0 => [1, 2],
        1 => [0, 2],
        _ => [0, 1],
    }
}

/// v + Σ_l term(l) over l = 0, 1, 2 in that order, for a sum v + Σ_l K[l, i]·x_l (or
/// K[i, l]·x_l) over a 3×3 matrix K; with `skew` (K's diagonal exactly zero, as a
/// joint's cross-product block [r]× is), over the two `l` other than `i`. Such a sum here
/// starts from a nonzero-or-any value v, and v + a·0 differs from v only when v is −0
/// (−0 + 0 = +0): the same number, so the products are the full ones' values (the bits,
/// up to the sign of an exact zero).
#[inline(always)]
fn skew_sum(v: f64, i: usize, skew: bool, term: impl Fn(usize) -> f64) -> f64 {
    if skew {
        let [a, b] = others(i);
        v + term(a) + term(b)
    } else {
        v + term(0) + term(1) + term(2)
    }
}

/// Whether a node's first 3 parent rows are a joint's point rows `[I, −[r]×]` (the unit
/// block exactly, the cross-product block with a zero diagonal) and its further `rows`
/// (forbidden axes, `[0, eᵀ]`) are zero on the parent's linear part: then the products
/// with them skip their known zeros and ones. A term a·0 or a·1 added to a sum that
/// starts at 0.0 leaves the same bits as skipping it or adding a alone (0.0 + x is never
/// −0), so the structured products give the general ones' numbers.
#[inline]
fn point_rows(j_parent: &Matrix6<f64>, rows: usize) -> bool {
    let mut ok = (0..3).all(|i| j_parent[(i, 3 + i)] == 0.0);
    for r in 0..rows {
        for c in 0..3 {
            ok &= j_parent[(r, c)] == if r == c { 1.0 } else { 0.0 };
        }
    }
    ok
}

/// Factor of a ball-joint node in the joint's null space (the reduced-coordinate
/// elimination of Featherstone's articulated bodies, kept in this tree's terms): with
/// `G = [−I | K]`, every velocity that satisfies G u = c is u = E c + S s with
/// E = [−I; 0] and S = [K; I] (G S = 0), and Sᵀ Gᵀ = 0 takes the multipliers out of the
/// momentum rows, leaving the 3×3 system D s = Sᵀ(r − Â E c), D = Sᵀ Â S. The multipliers
/// follow from the momentum rows' linear part, λ = (r − Â u)_top. The node's response to
/// its parent, W = D̂⁻¹ [A_{i,p}; J_parent], is built the same way, and the parent update
/// is C W as on the block path. Work: one 3×3 inverse and products with the 3×3 K instead
/// of a 6×6 inverse and the 3×6 row products, about half the multiply-adds. `None` if D
/// has no usable pivot (the caller then takes the block path).
#[allow(clippy::too_many_arguments)]
#[inline]
fn factor_ball_null(
    ahat: &Matrix6<f64>,
    j_self: &Matrix6<f64>,
    j_parent: &Matrix6<f64>,
    a_cp: &Matrix6<f64>,
    a_pc: &Matrix6<f64>,
    has_parent: bool,
    coupled: bool,
    node: &mut NodeFactor,
) -> Option<Matrix6<f64>> {
    let k: Matrix3<f64> = Matrix3::from_fn(|r, c| j_self[(r, 3 + c)]);
    // K is the joint's [r]×: its diagonal's terms are skipped
    let skew = (0..3).all(|i| k[(i, i)] == 0.0);
    // Â S = Â[:, :3] K + Â[:, 3:]
    let mut a_s = [[0.0f64; 3]; 6];
    for c in 0..3 {
        for r in 0..6 {
            a_s[r][c] = skew_sum(ahat[(r, 3 + c)], c, skew, |l| ahat[(r, l)] * k[(l, c)]);
        }
    }
    // D = Sᵀ Â S = Kᵀ (Â S)_top + (Â S)_bottom
    let d = Matrix3::from_fn(|r, c| skew_sum(a_s[3 + r][c], r, skew, |l| k[(l, r)] * a_s[l][c]));
    let dinv = invert::<3>(&d, BLOCK_PIVOT_TOLERANCE)?;
    node.p = *ahat;
    node.skew = skew;
    set_block(&mut node.x, &k);
    set_block(&mut node.sinv, &dinv);
    if !has_parent {
        return Some(Matrix6::zeros());
    }
    let rot_only = node.rot_only;
    // R = A_{i,p} − Â E B_λ = A_{i,p} + Â[:, :3] B_λ (B_λ: the parent's 3 rows)
    let point = point_rows(j_parent, 3);
    let mut rr = Matrix6::zeros();
    if point {
        // B_λ = [I, −[r]×]: Â[:, :3] itself, then products with a zero-diagonal block
        for c in 0..3 {
            for r in 0..6 {
                rr[(r, c)] = 0.0 + ahat[(r, c)];
            }
        }
        for c in 3..6 {
            let [l0, l1] = others(c - 3);
            for r in 0..6 {
                rr[(r, c)] =
                    0.0 + ahat[(r, l0)] * j_parent[(l0, c)] + ahat[(r, l1)] * j_parent[(l1, c)];
            }
        }
    } else {
        for c in 0..6 {
            for r in 0..6 {
                let mut v = 0.0;
                for l in 0..3 {
                    v += ahat[(r, l)] * j_parent[(l, c)];
                }
                rr[(r, c)] = v;
            }
        }
    }
    if coupled {
        if rot_only {
            for c in 3..6 {
                for r in 3..6 {
                    rr[(r, c)] += a_cp[(r, c)];
                }
            }
        } else {
            rr += a_cp;
        }
    }
    // Σ = D⁻¹ Sᵀ R, then W_x = E B_λ + S Σ = [−B_λ + K Σ; Σ]
    let t = SMatrix::<f64, 3, 6>::from_fn(|r, c| {
        skew_sum(rr[(3 + r, c)], r, skew, |l| k[(l, r)] * rr[(l, c)])
    });
    let sigma: SMatrix<f64, 3, 6> = dinv * t;
    let mut wx = Matrix6::zeros();
    for c in 0..6 {
        for r in 0..3 {
            let v = skew_sum(-j_parent[(r, c)], r, skew, |l| k[(r, l)] * sigma[(l, c)]);
            wx[(r, c)] = v;
            wx[(3 + r, c)] = sigma[(r, c)];
        }
    }
    // W_λ = (A_{i,p} − Â W_x)_top
    let mut wl = Matrix6::zeros();
    for c in 0..6 {
        for r in 0..3 {
            let mut v = if coupled && !rot_only {
                a_cp[(r, c)]
            } else {
                0.0
            };
            for l in 0..6 {
                v -= ahat[(r, l)] * wx[(l, c)];
            }
            wl[(r, c)] = v;
        }
    }
    Some(null_parent_update::<3>(
        j_parent, point, a_pc, coupled, wx, wl, node,
    ))
}

/// The parent update C W = A_{p,i} W_x − B_λᵀ W_λ of a null-space node with `C` rows
/// (B_λ: its rows' parent part; `point`: they are point rows, see [`point_rows`]), storing
/// W_x and W_λ in `node` for the back-substitution.
#[inline]
fn null_parent_update<const C: usize>(
    j_parent: &Matrix6<f64>,
    point: bool,
    a_pc: &Matrix6<f64>,
    coupled: bool,
    wx: Matrix6<f64>,
    wl: Matrix6<f64>,
    node: &mut NodeFactor,
) -> Matrix6<f64> {
    let mut cw = Matrix6::zeros();
    if point {
        // B_λᵀ's linear rows hold the unit block and zeros; its angular rows the point
        // rows' zero-diagonal block, then the axes' rows
        for c in 0..6 {
            for r in 0..3 {
                cw[(r, c)] = 0.0 - wl[(r, c)];
            }
            for r in 3..6 {
                let [l0, l1] = others(r - 3);
                let mut v = 0.0 - j_parent[(l0, r)] * wl[(l0, c)] - j_parent[(l1, r)] * wl[(l1, c)];
                for l in 3..C {
                    v -= j_parent[(l, r)] * wl[(l, c)];
                }
                cw[(r, c)] = v;
            }
        }
    } else {
        for c in 0..6 {
            for r in 0..6 {
                let mut v = 0.0;
                for l in 0..C {
                    v -= j_parent[(l, r)] * wl[(l, c)];
                }
                cw[(r, c)] = v;
            }
        }
    }
    if coupled {
        if node.rot_only {
            for c in 0..6 {
                for r in 3..6 {
                    let mut v = 0.0;
                    for l in 3..6 {
                        v += a_pc[(r, l)] * wx[(l, c)];
                    }
                    cw[(r, c)] += v;
                }
            }
        } else {
            cw += a_pc * wx;
        }
    }
    node.wx = wx;
    node.wl = wl;
    cw
}

/// Node solve with [`factor_ball_null`]'s factors: (u, λ) ← D̂⁻¹(u, λ), from
/// s = D⁻¹ Sᵀ(r − Â E c), u = E c + S s, λ = (r − Â u)_top.
#[inline]
fn node_solve_ball_null(node: &NodeFactor, u: &mut Vector6<f64>, lam: &mut Vector6<f64>) {
    let ahat = &node.p;
    let r = *u;
    let c = [lam[0], lam[1], lam[2]];
    // z = r − Â E c = r + Â[:, :3] c
    let mut z = r;
    for l in 0..3 {
        for i in 0..6 {
            z[i] += ahat[(i, l)] * c[l];
        }
    }
    // s = D⁻¹ (Kᵀ z_top + z_bottom)
    let mut t = [0.0; 3];
    for (j, tj) in t.iter_mut().enumerate() {
        *tj = skew_sum(z[3 + j], j, node.skew, |l| node.x[(l, j)] * z[l]);
    }
    let mut sv = [0.0; 3];
    for (j, sj) in sv.iter_mut().enumerate() {
        let mut v = 0.0;
        for l in 0..3 {
            v += node.sinv[(j, l)] * t[l];
        }
        *sj = v;
    }
    // u = [−c + K s; s]
    for j in 0..3 {
        let v = skew_sum(-c[j], j, node.skew, |l| node.x[(j, l)] * sv[l]);
        u[j] = v;
        u[3 + j] = sv[j];
    }
    // λ = (r − Â u)_top
    for j in 0..3 {
        let mut v = r[j];
        for l in 0..6 {
            v -= ahat[(j, l)] * u[l];
        }
        lam[j] = v;
    }
}

/// Node solve of a null-space node (see [`NodeFactor::null`]).
#[inline]
fn node_solve_null(node: &NodeFactor, u: &mut Vector6<f64>, lam: &mut Vector6<f64>) {
    match node.free {
        3 => node_solve_ball_null(node, u, lam),
        2 => node_solve_axes_null::<2, 1>(node, u, lam),
        _ => node_solve_axes_null::<1, 2>(node, u, lam),
    }
}

/// Factor of a hinge (`F` = 1 free axis, `N` = 2 constrained) or universal (`F` = 2,
/// `N` = 1) joint's node in its null space, as [`factor_ball_null`] does for ball joints.
/// The rows are `G = [−I K; 0 −Cᵀ]` (point rows, then the constrained axes C, 3×N,
/// orthonormal); with free axes A (3×F, orthonormal, ⟂ C) the null space is
/// S = [K A; A] and E = [−I −K C; 0 −C] is a right inverse (G E = I). Then
/// u = E c + S s, D s = Sᵀ(r − Â E c) with D = Sᵀ Â S (F×F), and the multipliers
/// λ_point = q_top, λ_axes = Cᵀ(Kᵀ λ_point + q_bottom) with q = r − Â u. `None` if the
/// constrained axes are not orthonormal or D has no usable pivot.
#[allow(clippy::too_many_arguments)]
#[inline]
fn factor_axes_null<const F: usize, const N: usize>(
    ahat: &Matrix6<f64>,
    j_self: &Matrix6<f64>,
    j_parent: &Matrix6<f64>,
    a_cp: &Matrix6<f64>,
    a_pc: &Matrix6<f64>,
    has_parent: bool,
    coupled: bool,
    node: &mut NodeFactor,
) -> Option<Matrix6<f64>> {
    let k: Matrix3<f64> = Matrix3::from_fn(|r, c| j_self[(r, 3 + c)]);
    let cc: SMatrix<f64, 3, N> = SMatrix::from_fn(|r, c| -j_self[(3 + c, 3 + r)]);
    if (cc.tr_mul(&cc) - SMatrix::<f64, N, N>::identity()).amax() > 1e-12 {
        return None;
    }
    let a: SMatrix<f64, 3, F> = free_axes(&cc);
    let mut sm = SMatrix::<f64, 6, F>::zeros();
    sm.fixed_view_mut::<3, F>(0, 0).copy_from(&(k * a));
    sm.fixed_view_mut::<3, F>(3, 0).copy_from(&a);
    let a_s: SMatrix<f64, 6, F> = ahat * sm;
    let dinv = invert::<F>(&sm.tr_mul(&a_s), BLOCK_PIVOT_TOLERANCE)?;
    node.p = *ahat;
    node.free = F;
    set_block(&mut node.x, &sm);
    set_block(&mut node.y, &k);
    for r in 0..3 {
        for c in 0..N {
            node.y[(3 + r, c)] = cc[(r, c)];
        }
    }
    set_block(&mut node.sinv, &dinv);
    if !has_parent {
        return Some(Matrix6::zeros());
    }
    // W = D̂⁻¹ [A_{i,p}; B]: the node solve with the 6 columns as right-hand sides
    let mut wx = Matrix6::zeros();
    let mut wl = Matrix6::zeros();
    for col in 0..6 {
        let mut u: Vector6<f64> = if coupled {
            a_cp.column(col).into_owned()
        } else {
            Vector6::zeros()
        };
        let mut lam = Vector6::zeros();
        for r in 0..3 + N {
            lam[r] = j_parent[(r, col)];
        }
        node_solve_axes_null::<F, N>(node, &mut u, &mut lam);
        wx.set_column(col, &u);
        wl.set_column(col, &lam);
    }
    // C = 3 + N rows (const generics cannot be added on stable Rust): 4 or 5
    let point = point_rows(j_parent, 3 + N);
    Some(if N == 1 {
        null_parent_update::<4>(j_parent, point, a_pc, coupled, wx, wl, node)
    } else {
        null_parent_update::<5>(j_parent, point, a_pc, coupled, wx, wl, node)
    })
}

/// An orthonormal basis (3×F) of the rotations a joint leaves free, orthogonal to its
/// orthonormal constrained axes `cc` (3×N, N = 3 − F).
#[inline]
fn free_axes<const F: usize, const N: usize>(cc: &SMatrix<f64, 3, N>) -> SMatrix<f64, 3, F> {
    let mut a = SMatrix::<f64, 3, F>::zeros();
    if N == 2 {
        a.set_column(0, &cc.column(0).cross(&cc.column(1)));
    } else {
        let c: Vector3<f64> = cc.column(0).into_owned();
        let p = crate::skeleton::joint::perpendicular(&c);
        a.set_column(0, &p);
        a.set_column(1, &c.cross(&p));
    }
    a
}

/// Node solve with [`factor_axes_null`]'s factors: u = E c + S s, λ from q = r − Â u.
#[inline]
fn node_solve_axes_null<const F: usize, const N: usize>(
    node: &NodeFactor,
    u: &mut Vector6<f64>,
    lam: &mut Vector6<f64>,
) {
    let ahat = &node.p;
    let k: Matrix3<f64> = block::<3, 3>(&node.y);
    let cc: SMatrix<f64, 3, N> = SMatrix::from_fn(|r, c| node.y[(3 + r, c)]);
    let sm: SMatrix<f64, 6, F> = block::<6, F>(&node.x);
    let dinv: SMatrix<f64, F, F> = block::<F, F>(&node.sinv);
    let r = *u;
    let c_point = Vector3::new(lam[0], lam[1], lam[2]);
    let c_axes: SVector<f64, N> = SVector::from_fn(|i, _| lam[3 + i]);
    // y = E c = [−c_point − K C c_axes; −C c_axes]
    let w: Vector3<f64> = cc * c_axes;
    let y_top = -c_point - k * w;
    let y = Vector6::new(y_top.x, y_top.y, y_top.z, -w.x, -w.y, -w.z);
    let s: SVector<f64, F> = dinv * sm.tr_mul(&(r - ahat * y));
    let un = y + sm * s;
    let q = r - ahat * un;
    let l_point = Vector3::new(q[0], q[1], q[2]);
    let l_axes: SVector<f64, N> = cc.tr_mul(&(k.tr_mul(&l_point) + Vector3::new(q[3], q[4], q[5])));
    *u = un;
    for i in 0..3 {
        lam[i] = l_point[i];
    }
    for i in 0..N {
        lam[3 + i] = l_axes[i];
    }
}

/// True if only the lower-right (rotational) 3×3 block of `m` is nonzero.
#[inline]
fn rotational_only(m: &Matrix6<f64>) -> bool {
    // column-major: columns 0..3 whole, then rows 0..3 of columns 3..6. A branch-free
    // reduction (NaN counts as nonzero): element-wise early exits mispredicted enough
    // to cost ~10 % of a factorisation.
    let s = m.as_slice();
    let mut nz = any_nonzero(&s[..18]);
    for c in 3..6 {
        nz |= any_nonzero(&s[6 * c..6 * c + 3]);
    }
    !nz
}

/// True if any entry is nonzero or NaN, without data-dependent branches.
#[inline]
fn any_nonzero(s: &[f64]) -> bool {
    s.iter().fold(false, |acc, v| acc | (*v != 0.0))
}

/// `m` with its rows from `c` on set to zero.
#[inline]
fn leading_rows(m: &Matrix6<f64>, c: usize) -> Matrix6<f64> {
    let mut out = *m;
    for r in c..6 {
        for k in 0..6 {
            out[(r, k)] = 0.0;
        }
    }
    out
}

impl BlockTree {
    /// An all-zero system on the tree given by `parent` (bodies parents first; `None`
    /// marks a root). Every node starts with 0 rows.
    pub fn new(parent: &[Option<usize>]) -> Result<Self, KktError> {
        for (b, p) in parent.iter().enumerate() {
            if let Some(p) = *p
                && p >= b
            {
                return Err(KktError::NotParentFirst { body: b, parent: p });
            }
        }
        let n = parent.len();
        Ok(BlockTree {
            parent: parent.to_vec(),
            rows: vec![0; n],
            diag: vec![Matrix6::zeros(); n],
            a_cp: vec![Matrix6::zeros(); n],
            a_pc: vec![Matrix6::zeros(); n],
            j_self: vec![Matrix6::zeros(); n],
            j_parent: vec![Matrix6::zeros(); n],
            lu: vec![SmallLu::default(); n],
            nodes: vec![NodeFactor::default(); n],
            update: vec![Matrix6::zeros(); n],
            factored: false,
        })
    }

    /// Number of bodies (nodes).
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// True for a system without bodies.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Parent of node `i`.
    pub fn parent(&self, i: usize) -> Option<usize> {
        self.parent[i]
    }

    /// Number of constraint rows owned by node `i`.
    pub fn rows(&self, i: usize) -> usize {
        self.rows[i]
    }

    /// Total number of constraint rows.
    pub fn total_rows(&self) -> usize {
        self.rows.iter().sum()
    }

    /// Set the number of rows node `i` owns (0..=6): its parent joint's rows, or a root's
    /// own rows (which must then not touch a parent).
    pub fn set_rows(&mut self, i: usize, rows: usize) -> Result<(), KktError> {
        if rows > 6 {
            return Err(KktError::TooManyRows { body: i, rows });
        }
        self.rows[i] = rows;
        self.factored = false;
        Ok(())
    }

    /// Zero every block (row counts are kept).
    pub fn clear(&mut self) {
        for v in [
            &mut self.diag,
            &mut self.a_cp,
            &mut self.a_pc,
            &mut self.j_self,
            &mut self.j_parent,
        ] {
            v.iter_mut().for_each(|m| m.fill(0.0));
        }
        self.factored = false;
    }

    /// A_ii: the diagonal block of body i.
    pub fn diag_mut(&mut self, i: usize) -> &mut Matrix6<f64> {
        self.factored = false;
        &mut self.diag[i]
    }

    /// A_{i,p(i)}: rows of body i, columns of its parent.
    pub fn a_child_parent_mut(&mut self, i: usize) -> &mut Matrix6<f64> {
        self.factored = false;
        &mut self.a_cp[i]
    }

    /// A_{p(i),i}: rows of i's parent, columns of body i.
    pub fn a_parent_child_mut(&mut self, i: usize) -> &mut Matrix6<f64> {
        self.factored = false;
        &mut self.a_pc[i]
    }

    /// The block of node i's rows on body i (first `rows(i)` rows used).
    pub fn j_self_mut(&mut self, i: usize) -> &mut Matrix6<f64> {
        self.factored = false;
        &mut self.j_self[i]
    }

    /// Node i's rows on its parent and on itself (first `rows(i)` rows used), both at
    /// once: [`joint_rows`] writes them in place.
    pub fn joint_blocks_mut(&mut self, i: usize) -> (&mut Matrix6<f64>, &mut Matrix6<f64>) {
        self.factored = false;
        (&mut self.j_parent[i], &mut self.j_self[i])
    }

    /// The block of node i's rows on its parent (first `rows(i)` rows used).
    pub fn j_parent_mut(&mut self, i: usize) -> &mut Matrix6<f64> {
        self.factored = false;
        &mut self.j_parent[i]
    }

    /// A_ii.
    pub fn diag(&self, i: usize) -> &Matrix6<f64> {
        &self.diag[i]
    }

    /// Node i's rows on body i.
    pub fn j_self(&self, i: usize) -> &Matrix6<f64> {
        &self.j_self[i]
    }

    /// Node i's rows on its parent.
    pub fn j_parent(&self, i: usize) -> &Matrix6<f64> {
        &self.j_parent[i]
    }

    /// Factor leaf to root. Fails with [`KktError::Singular`] naming the first body whose
    /// super-node has no usable pivot.
    pub fn factor(&mut self) -> Result<(), KktError> {
        self.factor_with(false)
    }

    /// [`factor`](Self::factor) for a symmetric positive definite A with no coupling
    /// blocks (A block diagonal, e.g. the mass matrix of a projection `[M −Jᵀ; J 0]`): the
    /// body blocks and row Schur complements are inverted by Cholesky and Y = Xᵀ, about
    /// 30 % less work. Only the lower triangles of the diagonal blocks are read; a system
    /// that is not of this kind (a coupling block is set, or a diagonal block is not
    /// symmetric) gets the general factorisation.
    pub fn factor_symmetric(&mut self) -> Result<(), KktError> {
        let symmetric = (0..self.len()).all(|i| {
            let d = &self.diag[i];
            !any_nonzero(self.a_cp[i].as_slice())
                && !any_nonzero(self.a_pc[i].as_slice())
                && (0..6).all(|r| (0..r).all(|c| d[(r, c)] == d[(c, r)]))
        });
        self.factor_with(symmetric)
    }

    fn factor_with(&mut self, spd: bool) -> Result<(), KktError> {
        self.factored = false;
        let result = self.factor_nodes(spd);
        if result.is_err() {
            // the nodes not reached keep their children's updates
            self.update.iter_mut().for_each(|m| m.fill(0.0));
        }
        result
    }

    /// The leaf-to-root sweep of [`factor_with`](Self::factor_with). Every `update` is
    /// zero on entry and left zero: each is read once, by its own node, and cleared
    /// there, which spares a pass zeroing them all.
    fn factor_nodes(&mut self, spd: bool) -> Result<(), KktError> {
        let n = self.len();
        for i in (0..n).rev() {
            let c = self.rows[i];
            let ahat = self.diag[i] - self.update[i];
            self.update[i] = Matrix6::zeros();
            let parent = self.parent[i];
            let (bu, apc) = (&self.a_cp[i], &self.a_pc[i]);
            let coupled =
                parent.is_some() && (any_nonzero(bu.as_slice()) || any_nonzero(apc.as_slice()));
            let node = &mut self.nodes[i];
            node.coupled = coupled;
            node.rot_only = coupled && rotational_only(bu) && rotational_only(apc);
            let (js, jp) = (&self.j_self[i], &self.j_parent[i]);
            let has_parent = parent.is_some();
            // symmetric positive definite (a mass-metric projection, no coupling blocks):
            // Cholesky factors; else (or if that fails) inverses
            node.sym = false;
            node.null = false;
            let mut cw = None;
            if spd && !coupled {
                cw = with_rows!(c, factor_block_spd(&ahat, js, jp, has_parent, node));
                node.sym = cw.is_some();
            }
            node.free = 3;
            if cw.is_none() && (3..6).contains(&c) && ball_rows(js, c) {
                cw = match c {
                    3 => factor_ball_null(&ahat, js, jp, bu, apc, has_parent, coupled, node),
                    4 => {
                        factor_axes_null::<2, 1>(&ahat, js, jp, bu, apc, has_parent, coupled, node)
                    }
                    _ => {
                        factor_axes_null::<1, 2>(&ahat, js, jp, bu, apc, has_parent, coupled, node)
                    }
                };
                node.null = cw.is_some();
            }
            if cw.is_none() {
                cw = with_rows!(
                    c,
                    factor_block(&ahat, js, jp, bu, apc, has_parent, coupled, node)
                );
            }
            node.block = cw.is_some();
            let cw = match cw {
                Some(cw) => cw,
                None => {
                    self.general_node(i, &ahat)?;
                    let node = &self.nodes[i];
                    let bl = leading_rows(&self.j_parent[i], c);
                    let mut cw = -(bl.transpose() * node.wl);
                    if node.coupled {
                        cw += self.a_pc[i] * node.wx;
                    }
                    cw
                }
            };
            if let Some(p) = parent {
                self.update[p] += cw;
            }
        }
        self.factored = true;
        Ok(())
    }

    /// Fallback: pivoted LU of node i's whole block and W = D̂⁻¹ B by column solves.
    fn general_node(&mut self, i: usize, ahat: &Matrix6<f64>) -> Result<(), KktError> {
        let c = self.rows[i];
        let s = 6 + c;
        let lu = &mut self.lu[i];
        lu.n = s;
        let js = &self.j_self[i];
        for r in 0..MAX_NODE {
            lu.a[r] = [0.0; MAX_NODE];
        }
        for r in 0..6 {
            for col in 0..6 {
                lu.a[r][col] = ahat[(r, col)];
            }
            for k in 0..c {
                lu.a[r][6 + k] = -js[(k, r)];
                lu.a[6 + k][r] = js[(k, r)];
            }
        }
        lu.factor().map_err(|(pivot, scale)| KktError::Singular {
            body: i,
            pivot,
            scale,
        })?;
        if self.parent[i].is_none() {
            return Ok(());
        }
        let (acp, jp) = (&self.a_cp[i], &self.j_parent[i]);
        let node = &mut self.nodes[i];
        node.wx.fill(0.0);
        node.wl.fill(0.0);
        for col in 0..6 {
            let mut b = [0.0; MAX_NODE];
            for r in 0..6 {
                b[r] = acp[(r, col)];
            }
            for k in 0..c {
                b[6 + k] = jp[(k, col)];
            }
            self.lu[i].solve(&mut b);
            for r in 0..6 {
                node.wx[(r, col)] = b[r];
            }
            for k in 0..c {
                node.wl[(k, col)] = b[6 + k];
            }
        }
        Ok(())
    }

    /// Solve node i's own block in place: (u, λ) ← D̂_i⁻¹ (u, λ).
    #[inline]
    fn node_solve(&self, i: usize, u: &mut Vector6<f64>, lam: &mut Vector6<f64>) {
        let node = &self.nodes[i];
        let c = self.rows[i];
        if node.sym {
            with_rows!(c, node_solve_spd(node, u, lam));
            return;
        }
        if node.null {
            node_solve_null(node, u, lam);
            return;
        }
        if node.block {
            with_rows!(c, node_solve_block(node, u, lam));
            return;
        }
        let mut b = [0.0; MAX_NODE];
        for r in 0..6 {
            b[r] = u[r];
        }
        for k in 0..c {
            b[6 + k] = lam[k];
        }
        self.lu[i].solve(&mut b);
        for r in 0..6 {
            u[r] = b[r];
        }
        lam.fill(0.0);
        for k in 0..c {
            lam[k] = b[6 + k];
        }
    }

    /// How many nodes the last factorisation eliminated in their joint's null space (see
    /// the module's notes); the others took the block path, Cholesky or the pivoted
    /// LU. A diagnostic for tests and benchmarks.
    pub fn null_space_nodes(&self) -> usize {
        if !self.factored {
            return 0;
        }
        self.nodes.iter().filter(|n| n.null).count()
    }

    /// Solve in place: on entry `x` holds (r, b), on return (u, λ).
    pub fn solve(&self, x: &mut KktVector) -> Result<(), KktError> {
        if !self.factored {
            return Err(KktError::NotFactored);
        }
        let n = self.len();
        for i in (0..n).rev() {
            self.eliminate(i, x);
        }
        for i in 0..n {
            self.substitute(i, x);
        }
        Ok(())
    }

    /// Forward step at node i: y_i = D̂_i⁻¹ r̂_i, then r̂_p −= C_i y_i.
    fn eliminate(&self, i: usize, x: &mut KktVector) {
        let c = self.rows[i];
        let node = &self.nodes[i];
        if node.block {
            let parent = self.parent[i];
            let (jp, apc) = (&self.j_parent[i], &self.a_pc[i]);
            with_rows!(c, eliminate_block(node, jp, apc, parent, i, x));
            return;
        }
        let mut u = x.body[i];
        let mut lam = x.rows[i];
        for k in c..6 {
            lam[k] = 0.0;
        }
        self.node_solve(i, &mut u, &mut lam);
        x.body[i] = u;
        x.rows[i] = lam;
        if let Some(p) = self.parent[i] {
            let mut cy = with_rows!(c, parent_rows_transpose(&self.j_parent[i], &lam));
            if node.coupled {
                cy -= self.a_pc[i] * u;
            }
            x.body[p] += cy;
        }
    }

    /// Back step at node i: z_i = y_i − W_i u_p.
    fn substitute(&self, i: usize, x: &mut KktVector) {
        let Some(p) = self.parent[i] else {
            return;
        };
        let up = x.body[p];
        let node = &self.nodes[i];
        if node.sym {
            let jp = &self.j_parent[i];
            with_rows!(
                self.rows[i],
                substitute_spd(node, jp, &up, &mut x.body[i], &mut x.rows[i])
            );
            return;
        }
        with_rows!(
            self.rows[i],
            substitute_rows(node, &up, &mut x.body[i], &mut x.rows[i])
        );
    }

    /// [`solve`](Self::solve) for a right-hand side whose body and row entries are zero
    /// outside `path` (a set of bodies closed under taking parents, in increasing order,
    /// e.g. from [`path_to_root`](Self::path_to_root)), which `x` must hold there: the
    /// elimination runs on `path` only, since a subtree with a zero right-hand side
    /// eliminates to zero, and the substitution over every node (the root's answer reaches
    /// them all). The same numbers as `solve`'s, at |path| eliminations instead of n:
    /// contact impulses on the feet re-solved after the step's own solve.
    pub fn solve_sparse(&self, x: &mut KktVector, path: &[usize]) -> Result<(), KktError> {
        if !self.factored {
            return Err(KktError::NotFactored);
        }
        for &i in path.iter().rev() {
            self.eliminate(i, x);
        }
        for i in 0..self.len() {
            self.substitute(i, x);
        }
        Ok(())
    }

    /// Solve in place for a right-hand side that is zero outside `path`, a set of bodies
    /// closed under taking parents, in increasing order; only the entries on `path` are
    /// read and written (the rest of `x` is left as it is), and they are the solution's
    /// there. O(|path|) instead of O(n): a unit wrench on one body, answered at a few
    /// others (a contact's Delassus entries), touches only their ways to the root, since
    /// a subtree with a zero right-hand side contributes nothing to the elimination.
    pub fn solve_on_path(&self, x: &mut KktVector, path: &[usize]) -> Result<(), KktError> {
        if !self.factored {
            return Err(KktError::NotFactored);
        }
        for &i in path.iter().rev() {
            self.eliminate(i, x);
        }
        for &i in path {
            self.substitute(i, x);
        }
        Ok(())
    }

    /// [`solve_on_path`](Self::solve_on_path) for a right-hand side that is zero on
    /// `path` except at body `source` (a unit wrench on one contacted body): the
    /// elimination runs on `source`'s own way to the root only, since every other subtree
    /// eliminates to zero, and the substitution over all of `path`. The caller zeroes the
    /// entries on `path` other than `source`'s; the result equals `solve_on_path`'s.
    pub fn solve_on_path_from(
        &self,
        x: &mut KktVector,
        source: usize,
        path: &[usize],
    ) -> Result<(), KktError> {
        if !self.factored {
            return Err(KktError::NotFactored);
        }
        let mut i = Some(source);
        while let Some(j) = i {
            self.eliminate(j, x);
            i = self.parent[j];
        }
        for &i in path {
            self.substitute(i, x);
        }
        Ok(())
    }

    /// The bodies on the ways from `bodies` to the root, each once, in increasing order
    /// (a `path` for [`solve_on_path`](Self::solve_on_path)), into `out`.
    pub fn path_to_root(&self, bodies: impl IntoIterator<Item = usize>, out: &mut Vec<usize>) {
        out.clear();
        for b in bodies {
            let mut i = Some(b);
            while let Some(j) = i {
                if out.contains(&j) {
                    break;
                }
                out.push(j);
                i = self.parent[j];
            }
        }
        out.sort_unstable();
    }

    /// out = [A −Jᵀ; J 0] x, with the blocks as given (not the factor). O(n).
    pub fn apply(&self, x: &KktVector, out: &mut KktVector) {
        self.momentum_rows(&x.body, &mut out.body);
        self.constraint_rows(&x.body, &mut out.rows);
        for i in 0..self.len() {
            let c = self.rows[i];
            let lam = x.rows[i];
            for r in 0..6 {
                for k in 0..c {
                    out.body[i][r] -= self.j_self[i][(k, r)] * lam[k];
                }
            }
            if let Some(p) = self.parent[i] {
                for r in 0..6 {
                    for k in 0..c {
                        out.body[p][r] -= self.j_parent[i][(k, r)] * lam[k];
                    }
                }
            }
        }
    }

    /// out = A u: the momentum rows of [`apply`](Self::apply) for multipliers λ = 0
    /// (per body; N·s from m/s and rad/s). Half the work of `apply` where λ is known to be
    /// zero (the feedforward's F(u*) − F(u₀)).
    pub fn momentum_rows(&self, u: &[Vector6<f64>], out: &mut [Vector6<f64>]) {
        for i in 0..self.len() {
            out[i] = self.diag[i] * u[i];
        }
        for i in 0..self.len() {
            if let Some(p) = self.parent[i] {
                out[i] += self.a_cp[i] * u[p];
                out[p] += self.a_pc[i] * u[i];
            }
        }
    }

    /// out = J u: each node's constraint rows applied to the velocities (entries beyond
    /// [`rows`](Self::rows) are zero; m/s or rad/s).
    pub fn constraint_rows(&self, u: &[Vector6<f64>], out: &mut [Vector6<f64>]) {
        for i in 0..self.len() {
            let c = self.rows[i];
            out[i].fill(0.0);
            for k in 0..c {
                let mut s = 0.0;
                for r in 0..6 {
                    s += self.j_self[i][(k, r)] * u[i][r];
                }
                out[i][k] = s;
            }
            if let Some(p) = self.parent[i] {
                for k in 0..c {
                    let mut s = 0.0;
                    for r in 0..6 {
                        s += self.j_parent[i][(k, r)] * u[p][r];
                    }
                    out[i][k] += s;
                }
            }
        }
    }

    /// Flatten a [`KktVector`] as (u₀, …, u_{n−1}, rows of node 0, rows of node 1, …).
    pub fn flatten(&self, x: &KktVector) -> DVector<f64> {
        let n = self.len();
        let mut out = DVector::zeros(6 * n + self.total_rows());
        let mut k = 6 * n;
        for i in 0..n {
            out.fixed_rows_mut::<6>(6 * i).copy_from(&x.body[i]);
            for r in 0..self.rows[i] {
                out[k] = x.rows[i][r];
                k += 1;
            }
        }
        out
    }

    /// Inverse of [`flatten`](Self::flatten).
    pub fn unflatten(&self, v: &DVector<f64>, x: &mut KktVector) {
        let n = self.len();
        let mut k = 6 * n;
        for i in 0..n {
            x.body[i] = v.fixed_rows::<6>(6 * i).into_owned();
            x.rows[i].fill(0.0);
            for r in 0..self.rows[i] {
                x.rows[i][r] = v[k];
                k += 1;
            }
        }
    }

    /// The whole matrix, dense, in [`flatten`](Self::flatten) order. Test oracle only
    /// (O(n²) memory); the solver never forms it.
    pub fn to_dense(&self) -> DMatrix<f64> {
        let n = self.len();
        let nr = self.total_rows();
        let size = 6 * n + nr;
        let mut m = DMatrix::zeros(size, size);
        let mut row0 = vec![0; n];
        let mut k = 6 * n;
        for (i, r0) in row0.iter_mut().enumerate() {
            *r0 = k;
            k += self.rows[i];
        }
        for i in 0..n {
            m.view_mut((6 * i, 6 * i), (6, 6)).copy_from(&self.diag[i]);
            let c = self.rows[i];
            let js = self.j_self[i].rows(0, c);
            m.view_mut((row0[i], 6 * i), (c, 6)).copy_from(&js);
            m.view_mut((6 * i, row0[i]), (6, c))
                .copy_from(&(-js.transpose()));
            if let Some(p) = self.parent[i] {
                m.view_mut((6 * i, 6 * p), (6, 6)).copy_from(&self.a_cp[i]);
                m.view_mut((6 * p, 6 * i), (6, 6)).copy_from(&self.a_pc[i]);
                let jp = self.j_parent[i].rows(0, c);
                m.view_mut((row0[i], 6 * p), (c, 6)).copy_from(&jp);
                m.view_mut((6 * p, row0[i]), (6, c))
                    .copy_from(&(-jp.transpose()));
            }
        }
        m
    }
}

/// The constraint rows of `joint` at parent orientation `qa` and child orientation `qb`
/// (METHOD §4), written into `j_parent` and `j_child` (first `6 − dof` rows; the rest are
/// zeroed): linear rows `[I, −\[r_a\]×]` on the parent and `[−I, \[r_b\]×]` on the child;
/// one row per forbidden axis e, `[0, eᵀ]` on the parent and `[0, −eᵀ]` on the child.
/// Returns the number of rows and the evaluated joint frame.
pub fn joint_rows(
    joint: &Joint,
    qa: &UnitQuaternion<f64>,
    qb: &UnitQuaternion<f64>,
    j_parent: &mut Matrix6<f64>,
    j_child: &mut Matrix6<f64>,
) -> (usize, JointFrame) {
    let jf = joint.frame(qa, qb);
    j_parent.fill(0.0);
    j_child.fill(0.0);
    let eye = Matrix3::identity();
    j_parent.fixed_view_mut::<3, 3>(0, 0).copy_from(&eye);
    j_parent
        .fixed_view_mut::<3, 3>(0, 3)
        .copy_from(&(-jf.r_a.cross_matrix()));
    j_child.fixed_view_mut::<3, 3>(0, 0).copy_from(&(-eye));
    j_child
        .fixed_view_mut::<3, 3>(0, 3)
        .copy_from(&jf.r_b.cross_matrix());
    let c = 6 - jf.dof;
    for k in 0..3 - jf.dof {
        let e = jf.axes.column(jf.dof + k);
        for l in 0..3 {
            j_parent[(3 + k, 3 + l)] = e[l];
            j_child[(3 + k, 3 + l)] = -e[l];
        }
    }
    (c, jf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    #[test]
    fn small_lu_solves_with_pivoting() {
        let mut lu = SmallLu {
            n: 3,
            ..Default::default()
        };
        // needs pivoting: zero leading entry
        let a = [[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]];
        for r in 0..3 {
            lu.a[r][..3].copy_from_slice(&a[r]);
        }
        lu.factor().unwrap();
        let x = [1.0, -2.0, 0.5];
        let mut b = [0.0; MAX_NODE];
        for r in 0..3 {
            b[r] = (0..3).map(|c| a[r][c] * x[c]).sum();
        }
        lu.solve(&mut b);
        for r in 0..3 {
            assert!((b[r] - x[r]).abs() < 1e-14);
        }
    }

    #[test]
    fn chain_matches_dense_and_reports_singular_node() {
        let mut seed = 3;
        let parent = [None, Some(0), Some(1), Some(1), Some(3)];
        let mut kkt = BlockTree::new(&parent).unwrap();
        let rows = [6, 3, 5, 4, 3];
        for (i, &r) in rows.iter().enumerate() {
            kkt.set_rows(i, r).unwrap();
            let mut d = Matrix6::from_fn(|_, _| 0.3 * lcg(&mut seed));
            d += Matrix6::identity() * 3.0;
            *kkt.diag_mut(i) = d;
            *kkt.j_self_mut(i) = Matrix6::from_fn(|_, _| lcg(&mut seed));
            if i > 0 {
                *kkt.j_parent_mut(i) = Matrix6::from_fn(|_, _| lcg(&mut seed));
                *kkt.a_child_parent_mut(i) = Matrix6::from_fn(|_, _| 0.2 * lcg(&mut seed));
                *kkt.a_parent_child_mut(i) = Matrix6::from_fn(|_, _| 0.2 * lcg(&mut seed));
            }
        }
        kkt.factor().unwrap();
        let dense = kkt.to_dense();
        let mut x = KktVector::zeros(5);
        for i in 0..5 {
            x.body[i] = Vector6::from_fn(|_, _| lcg(&mut seed));
            x.rows[i] = Vector6::from_fn(|_, _| lcg(&mut seed));
        }
        let rhs = kkt.flatten(&x);
        let want = dense.clone().lu().solve(&rhs).unwrap();
        kkt.solve(&mut x).unwrap();
        let got = kkt.flatten(&x);
        assert!((&got - &want).amax() < 1e-11 * want.amax());
        // apply() reproduces the right-hand side
        let mut back = KktVector::zeros(5);
        kkt.apply(&x, &mut back);
        assert!((kkt.flatten(&back) - &rhs).amax() < 1e-11);

        // a leaf with a zero mass block and a ball joint's 3 rows is singular
        *kkt.diag_mut(4) = Matrix6::zeros();
        *kkt.a_child_parent_mut(4) = Matrix6::zeros();
        *kkt.a_parent_child_mut(4) = Matrix6::zeros();
        match kkt.factor() {
            Err(KktError::Singular { body, .. }) => assert_eq!(body, 4),
            other => panic!("expected singular node 4, got {other:?}"),
        }
        assert_eq!(kkt.solve(&mut x), Err(KktError::NotFactored));
        // mended, it factors as a fresh system would (nothing left over from the failure)
        *kkt.diag_mut(4) = Matrix6::identity() * 3.0;
        kkt.factor().unwrap();
        let dense = kkt.to_dense();
        let want = dense.lu().solve(&rhs).unwrap();
        kkt.unflatten(&rhs, &mut x);
        kkt.solve(&mut x).unwrap();
        assert!((kkt.flatten(&x) - &want).amax() < 1e-11 * want.amax());
        // node 2 fails after its sibling 3 has already sent its update to their parent 1:
        // mended, the next factorisation must not count that update twice
        let kept = (*kkt.diag(2), kkt.a_cp[2], kkt.a_pc[2]);
        *kkt.diag_mut(2) = Matrix6::zeros();
        *kkt.a_child_parent_mut(2) = Matrix6::zeros();
        *kkt.a_parent_child_mut(2) = Matrix6::zeros();
        assert!(matches!(
            kkt.factor(),
            Err(KktError::Singular { body: 2, .. })
        ));
        (
            *kkt.diag_mut(2),
            *kkt.a_child_parent_mut(2),
            *kkt.a_parent_child_mut(2),
        ) = kept;
        kkt.factor().unwrap();
        kkt.unflatten(&rhs, &mut x);
        kkt.solve(&mut x).unwrap();
        assert!((kkt.flatten(&x) - &want).amax() < 1e-11 * want.amax());
    }

    #[test]
    fn invert_matches_lu_inverse_and_rejects_singular() {
        let mut seed = 7;
        for trial in 0..50 {
            let mut m = Matrix6::from_fn(|_, _| lcg(&mut seed));
            if trial % 3 == 0 {
                // needs row exchanges: a zero leading pivot
                m[(0, 0)] = 0.0;
                m.swap_rows(1, 4);
            }
            let want = m.try_inverse().unwrap();
            let got = invert::<6>(&m, BLOCK_PIVOT_TOLERANCE).unwrap();
            assert!((got - want).amax() < 1e-9 * want.amax(), "trial {trial}");
            assert!((got * m - Matrix6::identity()).amax() < 1e-10);
            let m3: Matrix3<f64> = m.fixed_view::<3, 3>(1, 2).into_owned();
            let got3 = invert::<3>(&m3, BLOCK_PIVOT_TOLERANCE).unwrap();
            assert!((got3 * m3 - Matrix3::identity()).amax() < 1e-10);
        }
        let mut m = Matrix6::identity();
        m[(5, 5)] = 0.0;
        assert!(invert::<6>(&m, BLOCK_PIVOT_TOLERANCE).is_none());
    }

    #[test]
    fn cholesky_factor_and_triangular_solves_match_lu_and_reject_indefinite() {
        let mut seed = 11;
        for trial in 0..50 {
            let b = Matrix6::from_fn(|_, _| lcg(&mut seed));
            let m = b * b.transpose() + Matrix6::identity() * 0.1 * (1 + trial % 4) as f64;
            let l = cholesky::<6>(&m, BLOCK_PIVOT_TOLERANCE).unwrap();
            assert_eq!(
                l.upper_triangle() - Matrix6::from_diagonal(&l.diagonal()),
                Matrix6::zeros()
            );
            assert!(
                (l * l.transpose() - m).amax() < 1e-12 * m.amax(),
                "trial {trial}"
            );
            // A⁻¹ B = L⁻ᵀ L⁻¹ B against LU
            let rhs = SMatrix::<f64, 6, 2>::from_fn(|_, _| lcg(&mut seed));
            let want = m.lu().solve(&rhs).unwrap();
            let got = lower_transpose_solve::<6, 2>(&l, &lower_solve::<6, 2>(&l, &rhs));
            assert!((got - want).amax() < 1e-9 * want.amax(), "trial {trial}");
            let m2: SMatrix<f64, 2, 2> = m.fixed_view::<2, 2>(2, 2).into_owned();
            let l2 = cholesky::<2>(&m2, BLOCK_PIVOT_TOLERANCE).unwrap();
            assert!((l2 * l2.transpose() - m2).amax() < 1e-12 * m2.amax());
        }
        // indefinite (a negative pivot) and singular: no Cholesky factor
        let mut m = Matrix6::identity();
        m[(3, 3)] = -1.0;
        assert!(cholesky::<6>(&m, BLOCK_PIVOT_TOLERANCE).is_none());
        m[(3, 3)] = 0.0;
        assert!(cholesky::<6>(&m, BLOCK_PIVOT_TOLERANCE).is_none());
    }

    /// A projection-shaped system: SPD block-diagonal A, random rows on a branching tree.
    fn projection_tree(seed: &mut u64) -> BlockTree {
        let parent = [None, Some(0), Some(1), Some(1), Some(3), Some(0)];
        let rows = [6, 3, 5, 4, 3, 1];
        let mut kkt = BlockTree::new(&parent).unwrap();
        for (i, &r) in rows.iter().enumerate() {
            kkt.set_rows(i, r).unwrap();
            let b = Matrix6::from_fn(|_, _| lcg(seed));
            *kkt.diag_mut(i) = b * b.transpose() + Matrix6::identity();
            *kkt.j_self_mut(i) = Matrix6::from_fn(|_, _| lcg(seed));
            if i > 0 {
                *kkt.j_parent_mut(i) = Matrix6::from_fn(|_, _| lcg(seed));
            }
        }
        kkt
    }

    #[test]
    fn symmetric_factor_solves_like_the_dense_system_and_falls_back_when_coupled() {
        let mut seed = 5;
        let mut kkt = projection_tree(&mut seed);
        let n = kkt.len();
        let mut x = KktVector::zeros(n);
        for i in 0..n {
            x.body[i] = Vector6::from_fn(|_, _| lcg(&mut seed));
            x.rows[i] = Vector6::from_fn(|_, _| lcg(&mut seed));
        }
        let rhs = kkt.flatten(&x);
        let want = kkt.to_dense().lu().solve(&rhs).unwrap();
        let solve = |kkt: &BlockTree, x: &KktVector| {
            let mut y = x.clone();
            kkt.solve(&mut y).unwrap();
            kkt.flatten(&y)
        };
        kkt.factor_symmetric().unwrap();
        assert!(kkt.nodes.iter().all(|n| n.block));
        let got = solve(&kkt, &x);
        assert!((&got - &want).amax() < 1e-11 * want.amax());
        // the same system by the general factorisation agrees to round-off
        kkt.factor().unwrap();
        let diff = (solve(&kkt, &x) - &got).amax() / want.amax();
        assert!(diff < 1e-11, "general vs symmetric: {diff:e}");
        // a coupling block, or a diagonal block that is not symmetric: the general path
        for coupled in [true, false] {
            let mut seed = 5;
            let mut kkt = projection_tree(&mut seed);
            if coupled {
                *kkt.a_child_parent_mut(2) = Matrix6::from_fn(|_, _| 0.2 * lcg(&mut seed));
            } else {
                kkt.diag_mut(4)[(0, 5)] += 0.3;
            }
            let want = kkt.to_dense().lu().solve(&rhs).unwrap();
            kkt.factor_symmetric().unwrap();
            let got = solve(&kkt, &x);
            assert!(
                (&got - &want).amax() < 1e-11 * want.amax(),
                "coupled {coupled}: {:e}",
                (&got - &want).amax() / want.amax()
            );
        }
    }

    #[test]
    fn rejects_bad_trees() {
        assert!(matches!(
            BlockTree::new(&[Some(1), None]),
            Err(KktError::NotParentFirst { body: 0, parent: 1 })
        ));
        let mut k = BlockTree::new(&[None]).unwrap();
        assert!(k.set_rows(0, 7).is_err());
    }
}
