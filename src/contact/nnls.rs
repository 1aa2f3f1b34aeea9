//! A non-negative least squares with six residuals, from a guess of its support.
//!
//! The ground-support split (METHOD §12.2, `sim::support`) fits a root wrench b ∈ ℝ⁶ by
//! non-negative weights z on the columns a_j of a 6 × n matrix A, each weight damped by
//! its own d_j > 0:
//!
//! ```text
//! min_z ½‖A z − b‖² + ½ Σ_j d_j z_j²,   z ≥ 0
//! ```
//!
//! Its normal equations are the LCP w = M z + q, M = AᵀA + D, q = −Aᵀb (M positive
//! definite, so the solution is unique). A dense solver of that LCP builds the n × n M and
//! factors its basic block every round: for n ≈ 40 pyramid edges that is most of the
//! split's cost. Here a round costs O(36 n): with B the basic set, the Woodbury identity
//! gives
//!
//! ```text
//! y = S⁻¹ b,  S = I + Σ_{j∈B} a_j a_jᵀ / d_j   (6 × 6, positive definite)
//! z_j = a_jᵀ y / d_j  (j ∈ B),   w_j = −a_jᵀ y  (j ∉ B)
//! ```
//!
//! (A z − b = −y, so a non-basic edge's w is the fit's residual along it.) The rounds are
//! block principal pivoting with Júdice & Pires' safeguard (shared with
//! [`solve_from_support`](super::lcp::solve_from_support)), every infeasible index, basic
//! or not, counting: for a positive definite M that is finite. The solution is unique, so
//! an accepted support gives Lemke's answer to round-off.

use super::lcp::PivotSafeguard;
use nalgebra::{Matrix6, Vector6};

/// Storage [`nnls6_from_support`] reuses from call to call: the weights of the last
/// solve and the round's flips.
#[derive(Clone, Debug, Default)]
pub struct Nnls6Scratch {
    /// The weights z of the last solve, one per column (meaningful when it returned true).
    pub z: Vec<f64>,
    flip: Vec<usize>,
}

/// The weights z ≥ 0 (one per column of `columns`, in their order) minimising
/// ½‖Σ_j a_j z_j − b‖² + ½ Σ_j d_j z_j², into `scratch.z`, starting from the support
/// `support` (`true`: the weight is guessed positive) and updating it in place to the
/// solution's. `tol` is the relative round-off within which a support is accepted. False
/// when no round of `max_rounds` succeeds, or when the input is unusable (lengths differ,
/// a d_j not positive and finite, a non-finite value): the caller then solves the dense
/// LCP. No allocation once `scratch` has held a problem of this size (the ground-support
/// split runs it at every step of the feedforward).
pub fn nnls6_from_support(
    columns: &[Vector6<f64>],
    damping: &[f64],
    b: &Vector6<f64>,
    support: &mut [bool],
    tol: f64,
    max_rounds: usize,
    scratch: &mut Nnls6Scratch,
) -> bool {
    let n = columns.len();
    if damping.len() != n
        || support.len() != n
        || damping.iter().any(|d| !(d.is_finite() && *d > 0.0))
    {
        return false;
    }
    // |q|_max, the scale of a non-basic w's round-off
    let scale = columns
        .iter()
        .map(|a| a.dot(b).abs())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    if !scale.is_finite() {
        return false;
    }
    let Nnls6Scratch { z, flip } = scratch;
    z.clear();
    z.resize(n, 0.0);
    flip.clear();
    let mut safeguard = PivotSafeguard::new();
    for _ in 0..max_rounds.max(1) {
        let mut s = Matrix6::identity();
        for ((a, d), _) in columns
            .iter()
            .zip(damping)
            .zip(support.iter())
            .filter(|(_, on)| **on)
        {
            // symmetric rank-one update, lower triangle (the Cholesky reads only it)
            for c in 0..6 {
                let ac = a[c] / d;
                for r in c..6 {
                    s[(r, c)] += a[r] * ac;
                }
            }
        }
        let Some(chol) = s.cholesky() else {
            return false;
        };
        let y = chol.solve(b);
        if !y.iter().all(|v| v.is_finite()) {
            return false;
        }
        flip.clear();
        let mut zscale = f64::MIN_POSITIVE;
        for j in 0..n {
            z[j] = if support[j] {
                columns[j].dot(&y) / damping[j]
            } else {
                0.0
            };
            zscale = zscale.max(z[j].abs());
        }
        // Every infeasible index, basic or not: the non-basic w are exact for the
        // unclamped basic solution here, so Murty's rule below sees the whole set and is
        // finite (a primal-only rule, as the dense solver's, cycled on random problems).
        for j in 0..n {
            let infeasible = if support[j] {
                z[j] < -tol * zscale
            } else {
                -columns[j].dot(&y) < -tol * scale
            };
            if infeasible {
                flip.push(j);
            }
        }
        if flip.is_empty() {
            for v in z.iter_mut() {
                *v = v.max(0.0);
            }
            return true;
        }
        safeguard.restrict(flip);
        for &j in flip.iter() {
            support[j] = !support[j];
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::lemke;
    use nalgebra::{DMatrix, DVector};

    /// [`nnls6_from_support`]'s weights at a 1e-12 tolerance after at most `rounds`
    /// rounds, `None` when it fails.
    fn solve(
        (columns, damping): (&[Vector6<f64>], &[f64]),
        b: &Vector6<f64>,
        support: &mut [bool],
        rounds: usize,
    ) -> Option<Vec<f64>> {
        let mut scratch = Nnls6Scratch::default();
        nnls6_from_support(columns, damping, b, support, 1e-12, rounds, &mut scratch)
            .then_some(scratch.z)
    }

    /// A deterministic pseudo-random number in [−1, 1) (a 64-bit LCG; no dependency).
    fn noise(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn dense_lcp(columns: &[Vector6<f64>], d: &[f64], b: &Vector6<f64>) -> Vec<f64> {
        let n = columns.len();
        let a = DMatrix::from_fn(6, n, |r, c| columns[c][r]);
        let mut m = a.transpose() * &a;
        for j in 0..n {
            m[(j, j)] += d[j];
        }
        let bv = DVector::from_column_slice(b.as_slice());
        let q = -(a.transpose() * bv);
        lemke(&m, &q)
            .expect("positive definite LCP")
            .z
            .iter()
            .copied()
            .collect()
    }

    #[test]
    fn equals_lemke_on_the_dense_lcp_from_any_guess() {
        let mut state = 7u64;
        let mut from_wrong_guess = 0;
        for case in 0..200 {
            let n = 4 + case % 37;
            let columns: Vec<Vector6<f64>> = (0..n)
                .map(|_| Vector6::from_fn(|_, _| noise(&mut state)))
                .collect();
            let d: Vec<f64> = (0..n)
                .map(|_| 10f64.powf(-6.0 + 4.0 * noise(&mut state).abs()))
                .collect();
            let b = Vector6::from_fn(|_, _| 3.0 * noise(&mut state));
            let expected = dense_lcp(&columns, &d, &b);
            let mut support: Vec<bool> = (0..n).map(|_| noise(&mut state) > 0.0).collect();
            let guessed = support.clone();
            // from a random guess Murty's single flips can take many rounds (67 here)
            let z = solve((&columns, &d), &b, &mut support, 500)
                .expect("finite for a positive definite M");
            let zmax = expected.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            for j in 0..n {
                assert!(
                    (z[j] - expected[j]).abs() <= 1e-8 * zmax,
                    "case {case}, weight {j}: {} vs Lemke's {}",
                    z[j],
                    expected[j]
                );
                assert_eq!(support[j], z[j] > 0.0, "case {case}: support out of date");
            }
            if guessed != support {
                from_wrong_guess += 1;
            }
        }
        // the test must exercise the pivoting, not only accept right guesses
        assert!(from_wrong_guess > 150, "{from_wrong_guess} wrong guesses");
    }

    #[test]
    fn the_solution_support_is_accepted_in_one_round() {
        let mut state = 3u64;
        let n = 24;
        let columns: Vec<Vector6<f64>> = (0..n)
            .map(|_| Vector6::from_fn(|_, _| noise(&mut state)))
            .collect();
        let d = vec![1e-6; n];
        let b = Vector6::from_fn(|_, _| noise(&mut state));
        let mut support = vec![false; n];
        let z = solve((&columns, &d), &b, &mut support, 50).expect("solves");
        let mut again = support.clone();
        let z1 = solve((&columns, &d), &b, &mut again, 1).expect("one round");
        assert_eq!(z, z1);
        assert_eq!(support, again);
    }

    #[test]
    fn unusable_input_is_refused() {
        let columns = vec![Vector6::repeat(1.0); 2];
        let b = Vector6::repeat(1.0);
        let mut support = vec![true; 2];
        assert!(solve((&columns, &[1.0, 0.0]), &b, &mut support, 5).is_none());
        assert!(solve((&columns, &[1.0]), &b, &mut support, 5).is_none());
        let nan = Vector6::repeat(f64::NAN);
        assert!(solve((&columns, &[1.0, 1.0]), &nan, &mut support, 5).is_none());
        assert_eq!(solve((&[], &[]), &b, &mut [], 5), Some(vec![]));
    }
}
