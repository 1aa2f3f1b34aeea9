//! Per-step simulation data (METHOD §1, §2): every body's pose and twist at one instant,
//! kept apart from the immutable [`Model`] (the split MuJoCo makes between mjModel and
//! mjData). A step turns one [`State`] into the next.

use crate::motion::kinematics::BodyKinematics;
use crate::skeleton::Model;
use nalgebra::{UnitQuaternion, Vector3, Vector6};

/// Pose and twist of one rigid body (world frame, COM).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    /// COM position, m.
    pub x: Vector3<f64>,
    /// Orientation R (body → world).
    pub q: UnitQuaternion<f64>,
    /// COM velocity, m/s.
    pub v: Vector3<f64>,
    /// Angular velocity, world frame, rad/s.
    pub w: Vector3<f64>,
}

impl Default for BodyState {
    fn default() -> Self {
        BodyState {
            x: Vector3::zeros(),
            q: UnitQuaternion::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }
}

impl From<&BodyKinematics> for BodyState {
    fn from(k: &BodyKinematics) -> Self {
        BodyState {
            x: k.x,
            q: k.q,
            v: k.v,
            w: k.w,
        }
    }
}

impl From<BodyKinematics> for BodyState {
    fn from(k: BodyKinematics) -> Self {
        (&k).into()
    }
}

impl BodyState {
    /// The generalised velocity (v, ω) of this body: m/s, rad/s.
    #[inline]
    pub fn twist(&self) -> Vector6<f64> {
        Vector6::new(self.v.x, self.v.y, self.v.z, self.w.x, self.w.y, self.w.z)
    }

    /// Set (v, ω) from a 6-vector (m/s, rad/s).
    #[inline]
    pub fn set_twist(&mut self, u: &Vector6<f64>) {
        self.v = u.fixed_rows::<3>(0).into_owned();
        self.w = u.fixed_rows::<3>(3).into_owned();
    }

    /// Displace the pose by a twist (δx in m, δθ in rad, world frame, METHOD §2):
    /// x ← x + δx, R ← exp(\[δθ\]×) R.
    #[inline]
    pub fn displace(&mut self, dx: &Vector3<f64>, dtheta: &Vector3<f64>) {
        self.x += dx;
        self.q = renormalize(rotation_from_vector(dtheta) * self.q);
    }

    /// World-frame inertia about the COM, R Ī Rᵀ (kg·m²) for body-frame inertia `inertia`.
    #[inline]
    pub fn world_inertia(&self, inertia: &nalgebra::Matrix3<f64>) -> nalgebra::Matrix3<f64> {
        let r = self.q.to_rotation_matrix();
        r.matrix() * inertia * r.matrix().transpose()
    }
}

/// Rotation vector (axis × angle, rad, angle in [0, π]) of a unit quaternion: the log
/// map, equal to `UnitQuaternion::scaled_axis` to round-off at a fraction of its cost
/// (which takes two norms, atan2 and a division). With q = (w, v), θ/|v| =
/// 2·atan(x)/(x·|w|), x = |v|/|w|: for x ≤ 1/8 (θ ≤ 14.3°, the tracking controller's
/// usual error) atan(x)/x is its alternating series in y = x² = |v|²/w² to 10 terms
/// (truncation below 3e-18), which needs neither a square root nor atan2; larger
/// rotations take one square root and atan2.
#[inline]
pub fn rotation_vector(q: &UnitQuaternion<f64>) -> Vector3<f64> {
    let (w, v) = (q.w, q.imag());
    let s2 = v.norm_squared();
    // shortest rotation: the hemisphere with w ≥ 0
    let (aw, sign) = if w < 0.0 { (-w, -1.0) } else { (w, 1.0) };
    if s2 <= aw * aw * (1.0 / 64.0) {
        if s2 < 1e-300 {
            return Vector3::zeros();
        }
        let f = atan_ratio(s2 / (aw * aw));
        return v * (sign * 2.0 * f / aw);
    }
    let s = s2.sqrt();
    v * (sign * 2.0 * s.atan2(aw) / s)
}

/// Rotation angle (rad, in [0, π]) of a unit quaternion: `UnitQuaternion::angle` to
/// round-off, without its atan2 for angles up to 2·atan(1/8) (14.3°; a joint's tracking
/// error, recorded every step): 2·atan(x), x = |v|/|w|, by `atan_ratio`'s series.
#[inline]
pub fn rotation_angle(q: &UnitQuaternion<f64>) -> f64 {
    let s2 = q.imag().norm_squared();
    let aw = q.w.abs();
    if s2 <= aw * aw * (1.0 / 64.0) {
        if s2 < 1e-300 {
            return 0.0;
        }
        let x = s2.sqrt() / aw;
        return 2.0 * x * atan_ratio(x * x);
    }
    2.0 * s2.sqrt().atan2(aw)
}

/// atan(x)/x from y = x² ≤ 1/64: its alternating series 1 − y/3 + y²/5 − … − y⁹/19 by
/// Horner from the smallest term (truncation below 3e-18).
#[inline]
fn atan_ratio(y: f64) -> f64 {
    const C: [f64; 10] = [
        1.0,
        -1.0 / 3.0,
        1.0 / 5.0,
        -1.0 / 7.0,
        1.0 / 9.0,
        -1.0 / 11.0,
        1.0 / 13.0,
        -1.0 / 15.0,
        1.0 / 17.0,
        -1.0 / 19.0,
    ];
    let mut f = C[9];
    for c in C[..9].iter().rev() {
        f = f * y + c;
    }
    f
}

/// `y.atan2(x)` (rad), by `atan_ratio`'s series when the angle is within atan(1/8) of 0
/// (x > 0, |y| ≤ x/8; equal to round-off, without atan2's cost), else by atan2: for
/// the small angle differences of a numerical gradient's turns.
#[inline]
pub fn atan2_near_zero(y: f64, x: f64) -> f64 {
    if x > 0.0 && y.abs() <= x * 0.125 {
        let t = y / x;
        return t * atan_ratio(t * t);
    }
    y.atan2(x)
}

/// The rotation of a rotation vector φ (axis × angle, rad): the exp map, equal to
/// `UnitQuaternion::from_scaled_axis` to round-off at a fraction of its cost below
/// 0.25 rad (which takes a norm and sincos). With x = |φ|/2, q = (cos x, φ·sin(x)/(2x)):
/// for |φ| ≤ 0.25 (x² ≤ 1/64; a step's turn h·ω and the projections' corrections) both
/// are their series in y = x² to 5 terms (truncation below 3e-16), with no square root;
/// larger angles go to `from_scaled_axis`.
#[inline]
pub fn rotation_from_vector(phi: &Vector3<f64>) -> UnitQuaternion<f64> {
    let t2 = phi.norm_squared();
    if t2 > 0.0625 {
        return UnitQuaternion::from_scaled_axis(*phi);
    }
    let y = 0.25 * t2;
    // cos x = 1 − y/2 + y²/24 − y³/720 + y⁴/40320; sin(x)/x = 1 − y/6 + y²/120 − y³/5040
    // + y⁴/362880, by Horner from the smallest term
    let c = 1.0 + y * (-0.5 + y * (1.0 / 24.0 + y * (-1.0 / 720.0 + y * (1.0 / 40320.0))));
    let sx =
        1.0 + y * (-1.0 / 6.0 + y * (1.0 / 120.0 + y * (-1.0 / 5040.0 + y * (1.0 / 362880.0))));
    let v = phi * (0.5 * sx);
    UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(c, v.x, v.y, v.z))
}

/// Renormalise a unit quaternion whose norm has drifted by round-off.
#[inline]
pub(crate) fn renormalize(q: UnitQuaternion<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::new_normalize(q.into_inner())
}

/// The state of every body at time `t` (bodies in model order, parents first).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    /// One entry per model body.
    pub bodies: Vec<BodyState>,
    /// Time, s.
    pub t: f64,
}

impl State {
    /// A state from forward-kinematics output (accelerations are dropped).
    pub fn from_kinematics(kin: &[BodyKinematics], t: f64) -> State {
        State {
            bodies: kin.iter().map(BodyState::from).collect(),
            t,
        }
    }

    /// Kinetic energy Σ ½ m|v|² + ½ ωᵀ(R Ī Rᵀ)ω, J.
    pub fn kinetic_energy(&self, model: &Model) -> f64 {
        model
            .bodies
            .iter()
            .zip(&self.bodies)
            .map(|(b, s)| {
                0.5 * b.mass * s.v.norm_squared()
                    + 0.5 * s.w.dot(&(s.world_inertia(&b.inertia) * s.w))
            })
            .sum()
    }

    /// Gravitational potential energy −Σ m g·x (zero at the world origin), J.
    pub fn potential_energy(&self, model: &Model) -> f64 {
        model
            .bodies
            .iter()
            .zip(&self.bodies)
            .map(|(b, s)| -b.mass * model.gravity.dot(&s.x))
            .sum()
    }

    /// Total linear momentum Σ m v, kg·m/s.
    pub fn linear_momentum(&self, model: &Model) -> Vector3<f64> {
        model
            .bodies
            .iter()
            .zip(&self.bodies)
            .map(|(b, s)| s.v * b.mass)
            .sum()
    }

    /// Total angular momentum about the world origin, Σ (x × m v + R Ī Rᵀ ω), kg·m²/s.
    pub fn angular_momentum(&self, model: &Model) -> Vector3<f64> {
        model
            .bodies
            .iter()
            .zip(&self.bodies)
            .map(|(b, s)| s.x.cross(&(s.v * b.mass)) + s.world_inertia(&b.inertia) * s.w)
            .sum()
    }

    /// Largest joint separation |(x_a + r_a) − (x_b + r_b)| over all joints, m (the
    /// thesis' measure of constraint drift, §5.2.1).
    pub fn max_joint_separation(&self, model: &Model) -> f64 {
        self.joint_errors(model).0
    }

    /// Largest joint separation (m) and largest forbidden-axis rotation error (rad), by
    /// [`joint_error`](super::stabilize::joint_error).
    pub fn joint_errors(&self, model: &Model) -> (f64, f64) {
        let mut lin: f64 = 0.0;
        let mut rot: f64 = 0.0;
        for (b, body) in model.bodies.iter().enumerate() {
            let (Some(a), Some(j)) = (body.parent, body.joint.as_ref()) else {
                continue;
            };
            let (sa, sb) = (&self.bodies[a], &self.bodies[b]);
            let (gl, gr) = super::stabilize::joint_error(j, &sa.x, &sa.q, &sb.x, &sb.q);
            lin = lin.max(gl.norm());
            for g in gr.iter().take(3 - j.dof()) {
                rot = rot.max(g.abs());
            }
        }
        (lin, rot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atan2_near_zero_is_atan2() {
        // both sides of the series' bound (|y| = x/8), tiny angles, and the quadrants
        // atan2 alone answers
        for (y, x) in [
            (0.0, 1.0),
            (1e-7, 0.9),
            (-3e-4, 0.7),
            (0.1249, 1.0),
            (-0.125, 1.0),
            (0.1251, 1.0),
            (0.5, 0.3),
            (1e-3, -1.0),
            (-1.0, -1e-3),
            (2.0, 0.0),
        ] {
            let (got, want): (f64, f64) = (atan2_near_zero(y, x), y.atan2(x));
            assert!(
                (got - want).abs() <= 4e-16 * want.abs().max(1e-300),
                "({y}, {x}): {got} vs {want}"
            );
        }
    }

    #[test]
    fn rotation_angle_is_nalgebras_angle() {
        // both branches (series up to 14.3°, atan2 above), both hemispheres, tiny angles
        let mut rng = crate::sim::random_throws::SplitMix64(7);
        for k in 0..20_000 {
            let mut u = || rng.uniform(-0.5, 0.5);
            let axis = Vector3::new(u(), u(), u());
            let angle = match k % 4 {
                0 => rng.uniform(0.0, 1e-6),
                1 => rng.uniform(0.0, 0.3),
                2 => rng.uniform(0.0, std::f64::consts::PI),
                _ => rng.uniform(0.2495, 0.2505),
            };
            let q = UnitQuaternion::from_scaled_axis(axis.normalize() * angle);
            let flipped = UnitQuaternion::new_unchecked(-q.into_inner());
            for q in [q, flipped] {
                let (got, want) = (rotation_angle(&q), q.angle());
                assert!(
                    (got - want).abs() <= 4e-16 * want.max(1e-300) + 1e-300,
                    "{angle}: {got} vs {want}"
                );
            }
        }
        assert_eq!(rotation_angle(&UnitQuaternion::identity()), 0.0);
    }

    #[test]
    fn rotation_vector_matches_scaled_axis() {
        for v in [
            Vector3::new(0.3, -0.2, 0.1),
            Vector3::new(3.0, 0.1, -0.2),
            Vector3::new(1e-9, 0.0, 2e-9),
            Vector3::zeros(),
        ] {
            let q = UnitQuaternion::from_scaled_axis(v);
            assert!((rotation_vector(&q) - q.scaled_axis()).norm() < 1e-14);
            let neg = UnitQuaternion::new_unchecked(-q.into_inner());
            assert!((rotation_vector(&neg) - q.scaled_axis()).norm() < 1e-14);
        }
    }

    #[test]
    fn displace_rotates_in_world_frame() {
        let mut s = BodyState {
            q: UnitQuaternion::from_scaled_axis(Vector3::new(0.0, 0.0, 0.5)),
            ..Default::default()
        };
        s.displace(&Vector3::new(1.0, 0.0, 0.0), &Vector3::new(0.0, 0.0, 0.25));
        assert_eq!(s.x, Vector3::new(1.0, 0.0, 0.0));
        assert!((s.q.scaled_axis() - Vector3::new(0.0, 0.0, 0.75)).norm() < 1e-15);
        let mut u = Vector6::zeros();
        u[4] = 2.0;
        s.set_twist(&u);
        assert_eq!(s.twist(), u);
    }

    /// Uniform numbers in [−1, 1) from a linear congruential generator seeded with `seed`.
    fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64) / ((1u64 << 53) as f64) * 2.0 - 1.0
        }
    }

    #[test]
    fn rotation_from_vector_is_from_scaled_axis_to_round_off() {
        // angles across the series' range, its switch-over (0.25 rad) and beyond, random
        // axes: the same rotation to a few ulp, and a unit quaternion
        let mut rnd = uniform(777);
        let mut worst: f64 = 0.0;
        for k in 0..4000 {
            let axis = Vector3::new(rnd(), rnd(), rnd()).normalize();
            let angle = match k % 4 {
                0 => 1e-9 * rnd().abs(),
                1 => 0.25 * (1.0 + 1e-6 * rnd()),
                2 => 0.25 * rnd().abs(),
                _ => std::f64::consts::PI * rnd().abs(),
            };
            let phi = axis * angle;
            let (fast, exact) = (
                rotation_from_vector(&phi),
                UnitQuaternion::from_scaled_axis(phi),
            );
            worst = worst.max((fast.coords - exact.coords).amax());
            assert!((fast.coords.norm() - 1.0).abs() < 4e-16, "{phi:?}");
        }
        assert!(worst < 4e-16, "differs by {worst:e}");
        assert_eq!(
            rotation_from_vector(&Vector3::zeros()),
            UnitQuaternion::identity()
        );
    }

    #[test]
    fn rotation_vector_is_scaled_axis_to_round_off() {
        // angles across the series' range, its switch-over (θ = 2 atan(1/8)) and beyond,
        // both signs of w, random axes
        let mut rnd = uniform(12345);
        let switch = 2.0 * (0.125f64).atan();
        let mut worst: f64 = 0.0;
        for k in 0..4000 {
            let axis = Vector3::new(rnd(), rnd(), rnd()).normalize();
            let angle = match k % 4 {
                0 => 1e-9 * rnd().abs(),
                1 => switch * (1.0 + 1e-6 * rnd()),
                2 => switch * rnd().abs(),
                _ => std::f64::consts::PI * rnd().abs(),
            };
            let q = UnitQuaternion::from_scaled_axis(axis * angle);
            for q in [q, UnitQuaternion::new_unchecked(-q.into_inner())] {
                let want = q.scaled_axis();
                let got = rotation_vector(&q);
                let err = (got - want).norm() / want.norm().max(1e-300);
                worst = worst.max(err);
            }
        }
        assert!(worst < 4e-16, "relative error {worst:e}");
        assert_eq!(
            rotation_vector(&UnitQuaternion::identity()),
            Vector3::zeros()
        );
        // a half turn (w = 0) is π about the axis
        let half = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI);
        assert!(
            (rotation_vector(&half) - Vector3::new(0.0, 0.0, std::f64::consts::PI)).norm() < 1e-15
        );
    }
}
