//! Unit-quaternion trajectory helpers: sign continuity, exact angular velocity and
//! acceleration of a normalised quaternion spline, and swing–twist decomposition.
//!
//! Conventions (nalgebra): `Quaternion::coords` is `[i, j, k, w]`; a unit quaternion q
//! rotates a vector as `v ↦ q v q̄` (Hamilton product), so `R(q₁ ⊗ q₂) = R(q₁) R(q₂)`.

use nalgebra::{Quaternion, Unit, UnitQuaternion, Vector3, Vector4};
use std::f64::consts::PI;

/// Flips quaternion signs in place so that consecutive quaternions have a non-negative
/// dot product (q and −q are the same rotation). Component-wise splines of the result
/// then follow the short way between samples instead of swinging through the origin.
pub fn make_sign_continuous(q: &mut [Quaternion<f64>]) {
    for k in 1..q.len() {
        if q[k].coords.dot(&q[k - 1].coords) < 0.0 {
            q[k] = -q[k];
        }
    }
}

/// Orientation, body-frame angular velocity and body-frame angular acceleration of the
/// normalised curve `q(t) = p(t) / |p(t)|`.
///
/// * `p`, `dp`, `ddp` — a non-unit quaternion curve and its first and second time
///   derivatives (e.g. from splines of the four components), in `Quaternion::coords`
///   order `[i, j, k, w]`; units 1, 1/s, 1/s².
///
/// Returns `(q, ω, α)` with ω in rad/s and α = dω/dt in rad/s², both expressed **in the
/// rotated (body) frame**: for `R(t)` the rotation of `q(t)`, `[ω]× = Rᵀ Ṙ`. (The
/// world-frame rates are `R ω` and `R α`, since d(Rω)/dt = R ω̇ + R (ω × ω) = R α.)
///
/// Uses the exact derivatives of the normalisation, with `r = |p|`, `s = q·ṗ = ṙ`:
/// `q̇ = (ṗ − s q) / r`, `q̈ = (p̈ − 2 s q̇ − ṡ q) / r` where `ṡ = q̇·ṗ + q·p̈`; then
/// `ω = 2 vec(q̄ ⊗ q̇)` and `α = 2 vec(q̄ ⊗ q̈)` (the term `q̄̇ ⊗ q̇ = |q̇|²` is real).
///
/// If `|p|` is zero or not finite there is no orientation: returns the identity and
/// zero rates rather than NaN.
pub fn normalized_quaternion_derivatives(
    p: &Vector4<f64>,
    dp: &Vector4<f64>,
    ddp: &Vector4<f64>,
) -> (UnitQuaternion<f64>, Vector3<f64>, Vector3<f64>) {
    let Some((q, inv_r)) = unit_part(p) else {
        return (
            UnitQuaternion::identity(),
            Vector3::zeros(),
            Vector3::zeros(),
        );
    };
    let s = q.dot(dp);
    let dq = (dp - q * s) * inv_r;
    let ds = dq.dot(dp) + q.dot(ddp);
    let ddq = (ddp - dq * (2.0 * s) - q * ds) * inv_r;

    let qc = Quaternion::from(q).conjugate();
    let omega = (qc * Quaternion::from(dq)).vector() * 2.0;
    let alpha = (qc * Quaternion::from(ddq)).vector() * 2.0;
    (
        UnitQuaternion::new_unchecked(Quaternion::from(q)),
        omega.into_owned(),
        alpha.into_owned(),
    )
}

/// `p / |p|` and `1 / |p|`, or `None` if `|p|` is zero or not finite: the one
/// normalisation both [`normalized_quaternion`] and [`normalized_quaternion_derivatives`]
/// use, so their orientations agree to the bit.
#[inline]
fn unit_part(p: &Vector4<f64>) -> Option<(Vector4<f64>, f64)> {
    let r = p.norm();
    if !(r.is_finite() && r > f64::MIN_POSITIVE) {
        return None;
    }
    let inv_r = 1.0 / r;
    Some((p * inv_r, inv_r))
}

/// The orientation of [`normalized_quaternion_derivatives`] without its rates (bit for
/// bit the same): `p / |p|`, or the identity if `|p|` is zero or not finite.
#[inline]
pub fn normalized_quaternion(p: &Vector4<f64>) -> UnitQuaternion<f64> {
    match unit_part(p) {
        Some((q, _)) => UnitQuaternion::new_unchecked(Quaternion::from(q)),
        None => UnitQuaternion::identity(),
    }
}

/// Splits `q` into `q = swing ⊗ twist`, where `twist` is a rotation about `axis` (a unit
/// vector in the local frame, i.e. the twist is applied first) and `swing` has no
/// component about `axis` (its rotation axis is perpendicular to `axis`).
///
/// Returns `(swing, twist_angle)` with the twist angle in rad, in (−π, π]; the twist is
/// `UnitQuaternion::from_axis_angle(axis, twist_angle)`. Hinge joints keep the twist; the
/// swing is the clip's inconsistency with the hinge.
///
/// Found by projecting the quaternion's vector part onto the axis:
/// `angle = 2·atan2(v·axis, w)`. If that projection and w both vanish (q is a half-turn
/// about an axis perpendicular to `axis`) the twist is undefined; the angle is then 0
/// and `swing = q`. Never returns NaN for a finite unit q.
pub fn swing_twist(
    q: &UnitQuaternion<f64>,
    axis: &Unit<Vector3<f64>>,
) -> (UnitQuaternion<f64>, f64) {
    let proj = q.imag().dot(axis);
    let w = q.w;
    let angle = if proj.hypot(w) < 1e-12 {
        0.0
    } else {
        // 2·atan2 lies in [−2π, 2π]; q and −q differ by 2π here, so wrap to (−π, π].
        let a = 2.0 * proj.atan2(w);
        if a > PI {
            a - 2.0 * PI
        } else if a <= -PI {
            a + 2.0 * PI
        } else {
            a
        }
    };
    let twist = UnitQuaternion::from_axis_angle(axis, angle);
    // swing = q ⊗ twist⁻¹, so swing ⊗ twist reproduces q (same sign, not only rotation).
    (q * twist.inverse(), angle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Matrix3;

    fn pure(v: &Vector3<f64>) -> Quaternion<f64> {
        Quaternion::from_imag(*v)
    }

    /// Scaled analytic curve p(t) = s(t)·exp(t a/2) ⊗ exp(t² b/2), s = 1 + 0.3 sin t, with
    /// exact first and second derivatives. exp(t a/2) is the rotation by angle t|a|
    /// about a, so the curve is `from_scaled_axis(t a) * from_scaled_axis(t² b)`.
    fn curve(t: f64) -> (Vector4<f64>, Vector4<f64>, Vector4<f64>) {
        let a = Vector3::new(0.7, -0.4, 1.1);
        let b = Vector3::new(-0.5, 0.9, 0.3);
        let ea = UnitQuaternion::from_scaled_axis(a * t).into_inner();
        let eb = UnitQuaternion::from_scaled_axis(b * (t * t)).into_inner();
        let (ha, hb) = (pure(&(a * 0.5)), pure(&b));
        // d/dt exp(t a/2) = exp ⊗ a/2; d/dt exp(t² b/2) = exp ⊗ (t b).
        let dea = ea * ha;
        let ddea = ea * ha * ha;
        let deb = eb * (hb * t);
        let ddeb = eb * (hb * t) * (hb * t) + eb * hb;
        let q = ea * eb;
        let dq = dea * eb + ea * deb;
        let ddq = ddea * eb + dea * deb * 2.0 + ea * ddeb;
        let (s, ds, dds) = (1.0 + 0.3 * t.sin(), 0.3 * t.cos(), -0.3 * t.sin());
        let p = q * s;
        let dp = q * ds + dq * s;
        let ddp = q * dds + dq * (2.0 * ds) + ddq * s;
        (p.coords, dp.coords, ddp.coords)
    }

    fn rot(t: f64) -> Matrix3<f64> {
        let p = curve(t).0;
        UnitQuaternion::from_quaternion(Quaternion::from(p))
            .to_rotation_matrix()
            .into_inner()
    }

    /// Body angular velocity by central differences of R: vee(Rᵀ (R(t+h) − R(t−h)) / 2h).
    fn omega_fd(t: f64) -> Vector3<f64> {
        let h = 1e-5;
        let w = rot(t).transpose() * (rot(t + h) - rot(t - h)) / (2.0 * h);
        // Average the two off-diagonal estimates (w is skew up to O(h²)).
        Vector3::new(
            w[(2, 1)] - w[(1, 2)],
            w[(0, 2)] - w[(2, 0)],
            w[(1, 0)] - w[(0, 1)],
        ) * 0.5
    }

    #[test]
    fn rates_match_finite_differences_of_rotation() {
        for &t in &[-1.3, 0.0, 0.4, 1.7, 2.9] {
            let (p, dp, ddp) = curve(t);
            let (q, w, a) = normalized_quaternion_derivatives(&p, &dp, &ddp);
            assert!((q.to_rotation_matrix().into_inner() - rot(t)).norm() < 1e-12);
            let w_fd = omega_fd(t);
            let h = 1e-4;
            let a_fd = (omega_fd(t + h) - omega_fd(t - h)) / (2.0 * h);
            let (ew, ea) = ((w - w_fd).norm() / w.norm(), (a - a_fd).norm() / a.norm());
            assert!(ew < 1e-6, "t {t}: omega {w} vs {w_fd} (rel {ew:e})");
            assert!(ea < 1e-6, "t {t}: alpha {a} vs {a_fd} (rel {ea:e})");
        }
    }

    #[test]
    fn fixed_axis_rotation_gives_theta_dot_times_axis() {
        let n = Vector3::new(1.0, 2.0, -2.0) / 3.0;
        for &t in &[0.0_f64, 0.5, 2.0] {
            // θ = 0.8 t + 0.6 t², unnormalised by a factor 2 + t.
            let (th, dth, ddth) = (0.8 * t + 0.6 * t * t, 0.8 + 1.2 * t, 1.2);
            let (c, s) = ((0.5 * th).cos(), (0.5 * th).sin());
            let qv = |sv: f64, cv: f64| Vector4::new(sv * n.x, sv * n.y, sv * n.z, cv);
            let q = qv(s, c);
            let dq = qv(c, -s) * (0.5 * dth);
            let ddq = qv(c, -s) * (0.5 * ddth) + qv(-s, -c) * (0.25 * dth * dth);
            let (f, df) = (2.0 + t, 1.0);
            let (p, dp, ddp) = (q * f, dq * f + q * df, ddq * f + dq * (2.0 * df));
            let (uq, w, a) = normalized_quaternion_derivatives(&p, &dp, &ddp);
            assert!(
                uq.angle_to(&UnitQuaternion::from_axis_angle(
                    &Unit::new_unchecked(n),
                    th
                )) < 1e-12
            );
            assert!((w - n * dth).norm() < 1e-12, "{w} vs {}", n * dth);
            assert!((a - n * ddth).norm() < 1e-12, "{a} vs {}", n * ddth);
        }
    }

    #[test]
    fn degenerate_quaternion_curve_gives_identity() {
        let z = Vector4::zeros();
        let (q, w, a) = normalized_quaternion_derivatives(&z, &Vector4::x(), &Vector4::y());
        assert_eq!(q, UnitQuaternion::identity());
        assert_eq!((w, a), (Vector3::zeros(), Vector3::zeros()));
    }

    #[test]
    fn sign_continuity() {
        let a = UnitQuaternion::from_scaled_axis(Vector3::new(0.0, 0.0, 3.0)).into_inner();
        let b = UnitQuaternion::from_scaled_axis(Vector3::new(0.0, 0.0, -3.0)).into_inner();
        let mut qs = vec![a, b, -b, a];
        make_sign_continuous(&mut qs);
        for k in 1..qs.len() {
            assert!(qs[k].coords.dot(&qs[k - 1].coords) >= 0.0);
        }
        assert_eq!(qs[0], a);
        make_sign_continuous(&mut []);
    }

    fn unit_close(a: &UnitQuaternion<f64>, b: &UnitQuaternion<f64>) -> bool {
        (a.coords - b.coords).norm() < 1e-12
    }

    #[test]
    fn swing_twist_recomposes_and_swing_has_no_axial_part() {
        let axis = Unit::new_normalize(Vector3::new(0.3, -1.0, 0.5));
        let mut seed = 0.37_f64;
        let mut rnd = || {
            seed = (seed * 9301.0 + 49297.0) % 233280.0;
            seed / 233280.0 * 2.0 - 1.0
        };
        for _ in 0..200 {
            let v = Vector3::new(rnd(), rnd(), rnd()) * 3.0;
            let q = UnitQuaternion::from_scaled_axis(v);
            for q in [q, UnitQuaternion::new_unchecked(-q.into_inner())] {
                let (swing, angle) = swing_twist(&q, &axis);
                assert!(angle > -PI && angle <= PI);
                let twist = UnitQuaternion::from_axis_angle(&axis, angle);
                assert!(unit_close(&(swing * twist), &q));
                assert!(swing.imag().dot(&axis).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn swing_twist_special_cases() {
        let axis = Vector3::y_axis();
        // Pure twist: identity swing, angle recovered (including the half-turn).
        for angle in [0.0, 0.4, -2.5, PI] {
            let q = UnitQuaternion::from_axis_angle(&axis, angle);
            let (swing, a) = swing_twist(&q, &axis);
            assert!(swing.angle() < 1e-12, "swing {swing}");
            assert!((a - angle).abs() < 1e-12, "{a} vs {angle}");
        }
        // Pure swing about an axis ⟂ y: zero twist, swing = q; also the half-turn
        // (projection and w both 0) gives no NaN.
        let perp = Unit::new_normalize(Vector3::new(1.0, 0.0, -2.0));
        for angle in [0.7, -1.9, PI] {
            let q = UnitQuaternion::from_axis_angle(&perp, angle);
            let (swing, a) = swing_twist(&q, &axis);
            assert!(a.abs() < 1e-12, "twist {a}");
            assert!(unit_close(&swing, &q) && swing.coords.iter().all(|c| c.is_finite()));
        }
    }
}
