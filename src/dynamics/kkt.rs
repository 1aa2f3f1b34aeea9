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

// Small dense kernels (≤ 12×12) read best as index loops.
#![allow(clippy::needless_range_loop)]

use crate::skeleton::Joint;
use crate::skeleton::joint::JointFrame;
use nalgebra::{DMatrix, DVector, Matrix3, Matrix6, UnitQuaternion, Vector6};

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
    w: Vec<[[f64; 6]; MAX_NODE]>,
    update: Vec<Matrix6<f64>>,
    factored: bool,
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
            w: vec![[[0.0; 6]; MAX_NODE]; n],
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
        self.factored = false;
        let n = self.len();
        self.update.iter_mut().for_each(|m| m.fill(0.0));
        for i in (0..n).rev() {
            let c = self.rows[i];
            let s = 6 + c;
            let lu = &mut self.lu[i];
            lu.n = s;
            let d = self.diag[i] - self.update[i];
            let js = &self.j_self[i];
            for r in 0..6 {
                for col in 0..6 {
                    lu.a[r][col] = d[(r, col)];
                }
                for k in 0..c {
                    lu.a[r][6 + k] = -js[(k, r)];
                    lu.a[6 + k][r] = js[(k, r)];
                }
            }
            for k in 0..c {
                for l in 0..c {
                    lu.a[6 + k][6 + l] = 0.0;
                }
            }
            lu.factor().map_err(|(pivot, scale)| KktError::Singular {
                body: i,
                pivot,
                scale,
            })?;
            let Some(p) = self.parent[i] else {
                continue;
            };
            // W = D̂⁻¹ B with B = [A_{i,p}; J_parent]
            let (acp, jp) = (&self.a_cp[i], &self.j_parent[i]);
            let w = &mut self.w[i];
            for col in 0..6 {
                let mut b = [0.0; MAX_NODE];
                for r in 0..6 {
                    b[r] = acp[(r, col)];
                }
                for k in 0..c {
                    b[6 + k] = jp[(k, col)];
                }
                self.lu[i].solve(&mut b);
                for r in 0..s {
                    w[r][col] = b[r];
                }
            }
            // update_p += C W with C = [A_{p,i}, −J_parentᵀ]
            let apc = &self.a_pc[i];
            let mut cw = Matrix6::zeros();
            for r in 0..6 {
                for col in 0..6 {
                    let mut sum = 0.0;
                    for k in 0..6 {
                        sum += apc[(r, k)] * w[k][col];
                    }
                    for k in 0..c {
                        sum -= jp[(k, r)] * w[6 + k][col];
                    }
                    cw[(r, col)] = sum;
                }
            }
            self.update[p] += cw;
        }
        self.factored = true;
        Ok(())
    }

    /// Solve in place: on entry `x` holds (r, b), on return (u, λ).
    pub fn solve(&self, x: &mut KktVector) -> Result<(), KktError> {
        if !self.factored {
            return Err(KktError::NotFactored);
        }
        let n = self.len();
        // forward: y_i = D̂_i⁻¹ r̂_i, r̂_p −= C_i y_i
        for i in (0..n).rev() {
            let c = self.rows[i];
            let mut b = [0.0; MAX_NODE];
            for r in 0..6 {
                b[r] = x.body[i][r];
            }
            for k in 0..c {
                b[6 + k] = x.rows[i][k];
            }
            self.lu[i].solve(&mut b);
            for r in 0..6 {
                x.body[i][r] = b[r];
            }
            for k in 0..c {
                x.rows[i][k] = b[6 + k];
            }
            if let Some(p) = self.parent[i] {
                let (apc, jp) = (&self.a_pc[i], &self.j_parent[i]);
                for r in 0..6 {
                    let mut sum = 0.0;
                    for k in 0..6 {
                        sum += apc[(r, k)] * b[k];
                    }
                    for k in 0..c {
                        sum -= jp[(k, r)] * b[6 + k];
                    }
                    x.body[p][r] -= sum;
                }
            }
        }
        // back: z_i = y_i − W_i u_p
        for i in 0..n {
            let Some(p) = self.parent[i] else {
                continue;
            };
            let c = self.rows[i];
            let up = x.body[p];
            let w = &self.w[i];
            for r in 0..6 {
                let mut sum = 0.0;
                for k in 0..6 {
                    sum += w[r][k] * up[k];
                }
                x.body[i][r] -= sum;
            }
            for k in 0..c {
                let mut sum = 0.0;
                for l in 0..6 {
                    sum += w[6 + k][l] * up[l];
                }
                x.rows[i][k] -= sum;
            }
        }
        Ok(())
    }

    /// out = [A −Jᵀ; J 0] x, with the blocks as given (not the factor). O(n).
    pub fn apply(&self, x: &KktVector, out: &mut KktVector) {
        let n = self.len();
        for i in 0..n {
            out.body[i] = self.diag[i] * x.body[i];
            out.rows[i].fill(0.0);
        }
        for i in 0..n {
            let c = self.rows[i];
            let lam = x.rows[i];
            for r in 0..6 {
                let mut s = 0.0;
                for k in 0..c {
                    s += self.j_self[i][(k, r)] * lam[k];
                }
                out.body[i][r] -= s;
            }
            for k in 0..c {
                let mut s = 0.0;
                for r in 0..6 {
                    s += self.j_self[i][(k, r)] * x.body[i][r];
                }
                out.rows[i][k] = s;
            }
            if let Some(p) = self.parent[i] {
                out.body[i] += self.a_cp[i] * x.body[p];
                out.body[p] += self.a_pc[i] * x.body[i];
                for r in 0..6 {
                    let mut s = 0.0;
                    for k in 0..c {
                        s += self.j_parent[i][(k, r)] * lam[k];
                    }
                    out.body[p][r] -= s;
                }
                for k in 0..c {
                    let mut s = 0.0;
                    for r in 0..6 {
                        s += self.j_parent[i][(k, r)] * x.body[p][r];
                    }
                    out.rows[i][k] += s;
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
/// zeroed): linear rows `[I, −[r_a]×]` on the parent and `[−I, [r_b]×]` on the child;
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
        assert!((kkt.flatten(&back) - rhs).amax() < 1e-11);

        // a leaf with a zero mass block and a ball joint's 3 rows is singular
        *kkt.diag_mut(4) = Matrix6::zeros();
        *kkt.a_child_parent_mut(4) = Matrix6::zeros();
        *kkt.a_parent_child_mut(4) = Matrix6::zeros();
        match kkt.factor() {
            Err(KktError::Singular { body, .. }) => assert_eq!(body, 4),
            other => panic!("expected singular node 4, got {other:?}"),
        }
        assert_eq!(kkt.solve(&mut x), Err(KktError::NotFactored));
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
