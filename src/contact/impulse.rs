//! Contact rows, the closed-form single-contact impulse, and the layout of the frictional
//! contact LCP (METHOD §9; thesis eq. 2.46–2.49, 4.14–4.18; lecture notes "Impulse Forces").
//!
//! Velocities of a body pair are stacked as u = (v_a, ω_a, v_b, ω_b) (METHOD §2: linear
//! first, world frame, ω about the COM). `r_a`, `r_b` are the contact points relative to
//! each COM (m, world). The normal `n` points from A to B, as in [`super::Contact`], so the
//! separation velocity along n is n·(ṗ_b − ṗ_a) (m/s), negative when approaching, and a
//! normal impulse λ ≥ 0 pushes B along +n and A along −n.

use super::lcp::{ConeIndices, LcpError, SupportRules};
use nalgebra::{DMatrix, DVector, Matrix3, SVector, Vector3};

/// The 1×12 Jacobian row of the relative velocity along `dir` at a contact:
/// `row · (v_a, ω_a, v_b, ω_b) = dir · (ṗ_b − ṗ_a)` with ṗ = v + ω × r, i.e.
/// `[−dirᵀ, −(r_a × dir)ᵀ, dirᵀ, (r_b × dir)ᵀ]` (thesis eq. 4.14/4.17, our sign and order).
/// Its transpose times an impulse (N·s) is the pair of wrenches on A and B.
pub fn contact_row(r_a: &Vector3<f64>, r_b: &Vector3<f64>, dir: &Vector3<f64>) -> SVector<f64, 12> {
    let mut row = SVector::<f64, 12>::zeros();
    row.fixed_rows_mut::<3>(0).copy_from(&(-dir));
    row.fixed_rows_mut::<3>(3).copy_from(&(-r_a.cross(dir)));
    row.fixed_rows_mut::<3>(6).copy_from(dir);
    row.fixed_rows_mut::<3>(9).copy_from(&r_b.cross(dir));
    row
}

/// One body's share of the effective inverse mass: `1/m + (r×n)ᵀ I⁻¹ (r×n)` (1/kg).
/// `m = +∞` is a fixed body (0). `None` for invalid input.
fn body_inverse_mass(
    m: f64,
    inertia: &Matrix3<f64>,
    r: &Vector3<f64>,
    n: &Vector3<f64>,
) -> Option<f64> {
    if m == f64::INFINITY {
        return Some(0.0);
    }
    if !m.is_finite() || m <= 0.0 || inertia.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let rn = r.cross(n);
    // Inertia tensors are symmetric positive definite; Cholesky rejects anything else.
    let x = inertia.cholesky()?.solve(&rn);
    let v = 1.0 / m + rn.dot(&x);
    v.is_finite().then_some(v)
}

/// Effective inverse mass (1/kg) of a contact along unit normal `n` between body A (mass
/// `m_a`, kg; world inertia about its COM `i_a_world`, kg·m²; contact point `r_a` from the
/// COM, m) and body B likewise: `1/m_a + 1/m_b + (r_a×n)ᵀI_a⁻¹(r_a×n) + (r_b×n)ᵀI_b⁻¹(r_b×n)`,
/// which equals `J M⁻¹ Jᵀ` for the row J = [`contact_row`]`(r_a, r_b, n)`.
///
/// A fixed body (the ground) has `m = f64::INFINITY`; its inertia is then ignored. `None`
/// if a finite mass is not positive, an inertia is not finite and positive definite, or
/// anything is NaN.
#[allow(clippy::too_many_arguments)]
pub fn effective_inverse_mass(
    m_a: f64,
    i_a_world: &Matrix3<f64>,
    r_a: &Vector3<f64>,
    m_b: f64,
    i_b_world: &Matrix3<f64>,
    r_b: &Vector3<f64>,
    n: &Vector3<f64>,
) -> Option<f64> {
    if [r_a, r_b, n]
        .iter()
        .any(|v| v.iter().any(|x| !x.is_finite()))
    {
        return None;
    }
    Some(body_inverse_mass(m_a, i_a_world, r_a, n)? + body_inverse_mass(m_b, i_b_world, r_b, n)?)
}

/// Closed-form normal impulse (N·s) of a single frictionless contact with Newton
/// restitution (lecture notes): `j = −(1+e) v_rel / k` for an approaching contact
/// (`v_rel_normal < 0`, m/s, separation velocity as in [`contact_row`]), 0 otherwise
/// (a contact can only push). `inv_mass_eff` = k from [`effective_inverse_mass`] (1/kg).
/// Returns 0 for invalid input (k ≤ 0 or not finite, NaN velocity or restitution).
pub fn single_contact_impulse(v_rel_normal: f64, restitution: f64, inv_mass_eff: f64) -> f64 {
    if !inv_mass_eff.is_finite()
        || inv_mass_eff <= 0.0
        || !v_rel_normal.is_finite()
        || !restitution.is_finite()
        || v_rel_normal >= 0.0
    {
        return 0.0;
    }
    -(1.0 + restitution) * v_rel_normal / inv_mass_eff
}

/// `count` unit directions evenly spaced around the tangent plane of unit normal `n`
/// (angle 2πk/count from a fixed tangent): the edges of the polyhedral friction cone
/// (thesis eq. 2.46). Use an even count so that every direction has its opposite, as the
/// cone needs (impulses along them are ≥ 0). Empty for `count = 0` or a non-finite `n`.
pub fn tangent_directions(n: &Vector3<f64>, count: usize) -> Vec<Vector3<f64>> {
    tangent_directions_iter(n, count).collect()
}

/// [`tangent_directions`] one at a time, without collecting them (the step's contact
/// rows take them in its hot path).
pub fn tangent_directions_iter(
    n: &Vector3<f64>,
    count: usize,
) -> impl Iterator<Item = Vector3<f64>> + use<> {
    let frame = (n.iter().all(|x| x.is_finite()) && n.norm() != 0.0).then(|| {
        let n = n.normalize();
        // First tangent: cross with the axis least aligned with n (never near-parallel).
        let axis = if n.x.abs() <= n.y.abs() && n.x.abs() <= n.z.abs() {
            Vector3::x()
        } else if n.y.abs() <= n.z.abs() {
            Vector3::y()
        } else {
            Vector3::z()
        };
        let t1 = n.cross(&axis).normalize();
        (t1, n.cross(&t1))
    });
    let count = if frame.is_some() { count } else { 0 };
    let (t1, t2) = frame.unwrap_or_default();
    (0..count).map(move |k| {
        let a = std::f64::consts::TAU * k as f64 / count as f64;
        // Exact axes for multiples of 90° so that d = 4 gives ±t1, ±t2 to the bit.
        let (s, c) = match (4 * k) % count {
            0 => match (4 * k) / count {
                0 => (0.0, 1.0),
                1 => (1.0, 0.0),
                2 => (0.0, -1.0),
                _ => (-1.0, 0.0),
            },
            _ => a.sin_cos(),
        };
        t1 * c + t2 * s
    })
}

/// Index layout of the frictional contact LCP of `contacts` contacts with `directions`
/// friction directions each (thesis eq. 2.49 with u⁺ eliminated):
///
/// ```text
/// index            variable z            complementary w
/// i                λn_i  (N·s)           J_n,i u⁺ + e·min(0, J_n,i u)       (m/s)
/// nc + i·d + k     λf_ik (N·s)           J_f,ik u⁺ + γ_i                    (m/s)
/// nc(1+d) + i      γ_i   (m/s)           μ_i λn_i − Σ_k λf_ik               (N·s)
/// ```
///
/// The first `nc(1+d)` indices are also the row order of the contact Jacobian J expected
/// by [`friction_lcp`]: all normal rows, then each contact's tangent rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrictionLayout {
    /// Number of contacts, nc.
    pub contacts: usize,
    /// Friction directions per contact, d.
    pub directions: usize,
}

impl FrictionLayout {
    /// Rows of J: nc (1 + d).
    pub fn rows(&self) -> usize {
        self.contacts * (1 + self.directions)
    }
    /// LCP size: nc (2 + d).
    pub fn size(&self) -> usize {
        self.contacts * (2 + self.directions)
    }
    /// Index of contact i's normal impulse.
    pub fn normal(&self, i: usize) -> usize {
        i
    }
    /// Index of contact i's friction impulse along direction k.
    pub fn tangent(&self, i: usize, k: usize) -> usize {
        self.contacts + i * self.directions + k
    }
    /// Index of contact i's cone slack γ_i (≈ sliding speed).
    pub fn slack(&self, i: usize) -> usize {
        self.rows() + i
    }
    /// What this LCP's supports obey (for a warm start,
    /// [`solve_from_support`](super::lcp::solve_from_support)): each contact's cone, and
    /// with an even number of directions the opposite directions t_k, t_(k+d/2) = −t_k as
    /// partners, never both positive.
    pub fn support_rules(&self) -> SupportRules {
        let (nc, d) = (self.contacts, self.directions);
        let mut partner = vec![None; self.size()];
        if d.is_multiple_of(2) {
            for c in 0..nc {
                for k in 0..d {
                    partner[self.tangent(c, k)] = Some(self.tangent(c, (k + d / 2) % d));
                }
            }
        }
        SupportRules {
            partner,
            cones: (0..nc)
                .map(|c| ConeIndices {
                    normal: self.normal(c),
                    tangents: self.tangent(c, 0)..self.tangent(c, 0) + d,
                    slack: self.slack(c),
                })
                .collect(),
        }
    }
}

/// Builds the frictional contact LCP `(M, q)` in [`FrictionLayout`] order from
///
/// - `delassus` = J M̃⁻¹ Jᵀ (1/kg), `rows × rows`, where J stacks the contact rows
///   ([`contact_row`] along each normal, then along each contact's tangent directions),
/// - `free` = J u_free (m/s), the contact velocities the step would produce with no contact
///   impulse, plus `e·min(0, J_n u)` on the normal rows (Newton restitution, METHOD §9),
/// - `mu`, one friction coefficient per contact.
///
/// ```text
/// M = [ J M̃⁻¹ Jᵀ   [0; E] ]      q = [ free ]      E = blockdiag(1_d), one column per contact
///     [ μ  −Eᵀ       0    ]          [  0   ]
/// ```
pub fn friction_lcp(
    layout: FrictionLayout,
    delassus: &DMatrix<f64>,
    free: &DVector<f64>,
    mu: &[f64],
) -> Result<(DMatrix<f64>, DVector<f64>), LcpError> {
    let (mut m, mut q) = (DMatrix::zeros(0, 0), DVector::zeros(0));
    friction_lcp_into(layout, delassus, free, mu, &mut m, &mut q)?;
    Ok((m, q))
}

/// [`friction_lcp`] into `m` and `q`, reusing their storage when they already have the
/// LCP's size (a step's contact phase builds one per step): every entry is written once,
/// the Delassus block copied column by column and the rest zero or the cone's ±1, μ.
pub fn friction_lcp_into(
    layout: FrictionLayout,
    delassus: &DMatrix<f64>,
    free: &DVector<f64>,
    mu: &[f64],
    m: &mut DMatrix<f64>,
    q: &mut DVector<f64>,
) -> Result<(), LcpError> {
    let (nc, d) = (layout.contacts, layout.directions);
    let rows = layout.rows();
    if delassus.nrows() != rows || delassus.ncols() != rows || free.len() != rows || mu.len() != nc
    {
        return Err(LcpError::Dimension);
    }
    let size = layout.size();
    if m.shape() != (size, size) {
        *m = DMatrix::zeros(size, size);
    }
    if q.len() != size {
        *q = DVector::zeros(size);
    }
    // column by column as slices (both column-major): a view's `copy_from` goes element
    // by element through nalgebra's strided iterators, several times the copy
    for (j, to) in m.as_mut_slice().chunks_exact_mut(size.max(1)).enumerate() {
        if j < rows {
            to[..rows].copy_from_slice(&delassus.as_slice()[j * rows..(j + 1) * rows]);
            to[rows..].fill(0.0);
        } else {
            to.fill(0.0);
        }
    }
    q.as_mut_slice()[..rows].copy_from_slice(free.as_slice());
    q.as_mut_slice()[rows..].fill(0.0);
    for (i, &mu_i) in mu.iter().enumerate() {
        let g = layout.slack(i);
        m[(g, layout.normal(i))] = mu_i;
        for k in 0..d {
            let t = layout.tangent(i, k);
            m[(t, g)] = 1.0;
            m[(g, t)] = -1.0;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_gives_separation_velocity() {
        let r_a = Vector3::new(0.1, 0.2, -0.3);
        let r_b = Vector3::new(-0.2, 0.05, 0.1);
        let n = Vector3::new(0.0, 0.6, 0.8);
        let (va, wa, vb, wb) = (
            Vector3::new(1.0, -2.0, 0.5),
            Vector3::new(0.3, 0.1, -0.7),
            Vector3::new(-0.4, 0.9, 1.1),
            Vector3::new(2.0, -1.0, 0.2),
        );
        let pa = va + wa.cross(&r_a);
        let pb = vb + wb.cross(&r_b);
        let mut u = SVector::<f64, 12>::zeros();
        u.fixed_rows_mut::<3>(0).copy_from(&va);
        u.fixed_rows_mut::<3>(3).copy_from(&wa);
        u.fixed_rows_mut::<3>(6).copy_from(&vb);
        u.fixed_rows_mut::<3>(9).copy_from(&wb);
        let row = contact_row(&r_a, &r_b, &n);
        assert!((row.dot(&u) - n.dot(&(pb - pa))).abs() < 1e-14);
    }

    #[test]
    fn four_directions_are_exact_axes() {
        let n = Vector3::y();
        let d = tangent_directions(&n, 4);
        assert_eq!(d.len(), 4);
        assert_eq!(d[0], -d[2]);
        assert_eq!(d[1], -d[3]);
        for t in &d {
            assert!(t.dot(&n).abs() < 1e-15 && (t.norm() - 1.0).abs() < 1e-15);
        }
        assert!(d[0].dot(&d[1]).abs() < 1e-15);
        let d6 = tangent_directions(&Vector3::new(1.0, 2.0, 3.0).normalize(), 6);
        let sum: Vector3<f64> = d6.iter().sum();
        assert!(sum.norm() < 1e-14);
    }

    #[test]
    fn impulse_invalid_and_separating_is_zero() {
        assert_eq!(single_contact_impulse(1.0, 0.5, 1.0), 0.0);
        assert_eq!(single_contact_impulse(-1.0, 0.5, 0.0), 0.0);
        assert_eq!(single_contact_impulse(f64::NAN, 0.5, 1.0), 0.0);
        assert_eq!(single_contact_impulse(-2.0, 0.5, 0.5), 6.0);
        let i = Matrix3::identity();
        assert!(
            effective_inverse_mass(
                -1.0,
                &i,
                &Vector3::x(),
                1.0,
                &i,
                &Vector3::x(),
                &Vector3::y()
            )
            .is_none()
        );
        assert_eq!(
            effective_inverse_mass(
                2.0,
                &i,
                &Vector3::zeros(),
                f64::INFINITY,
                &i,
                &Vector3::x(),
                &Vector3::y()
            ),
            Some(0.5)
        );
    }
}
