//! Numerical gradients of joint-local forces for the linearly implicit step (METHOD §8,
//! thesis §2.7.4).
//!
//! A joint-local force acts on two bodies a and b and depends only on their states.
//! Its gradient is estimated by **central differences** along each body's twist
//! directions: position perturbations are twists (δx, δθ) with x ← x + δx and
//! R ← exp(\[δθ\]×) R (never quaternion components), velocity perturbations are (δv, δω).
//! Each of the up to 24 directions is evaluated at ±ε, so one joint costs at most 48
//! evaluations of its own force and the whole step stays O(n): the 6×6 blocks
//! (aa, ab, ba, bb) are scattered into ∇_p f and ∇_u f by the caller.
//!
//! Directions a force provably does not depend on may be skipped ([`Dependence`]); the
//! corresponding gradient columns are exactly zero. A pure joint torque computed from the
//! two orientations and angular velocities (PD control, feedforward in the parent frame)
//! depends on neither x nor v, so [`GradientEstimator::torque_gradient`] perturbs only
//! δθ and δω: 2 bodies × 6 directions × ±ε = 24 evaluations of the torque; one that is
//! affine in ω, depends on it only through ω_b − ω_a and is frame-indifferent (PD
//! control) needs only δθ_b at ±ε and δω_b at +ε
//! ([`GradientEstimator::torque_gradient_structured`], 9 evaluations).

use super::state::BodyState;
use nalgebra::{Matrix3, Matrix6, UnitQuaternion, Vector3, Vector6};

/// The wrenches (force N, torque N·m about the COM, world frame) a joint-local force puts
/// on its two bodies: `[on a, on b]`.
pub type WrenchPair = [Vector6<f64>; 2];

/// Step sizes of the central differences.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradientOptions {
    /// Translation step, m.
    pub eps_position: f64,
    /// Rotation step, rad.
    pub eps_rotation: f64,
    /// Linear-velocity step, m/s.
    pub eps_linear_velocity: f64,
    /// Angular-velocity step, rad/s.
    pub eps_angular_velocity: f64,
}

impl Default for GradientOptions {
    /// ε ≈ 1e-5: near the cube root of machine precision (the optimum for central
    /// differences of O(1)-scaled functions): truncation ~ε², round-off ~1e-16/ε.
    fn default() -> Self {
        GradientOptions {
            eps_position: 1e-5,
            eps_rotation: 1e-5,
            eps_linear_velocity: 1e-5,
            eps_angular_velocity: 1e-5,
        }
    }
}

/// Which parts of the two bodies' states a force depends on. Skipped directions get zero
/// gradient columns without evaluating the force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dependence {
    /// COM positions x.
    pub position: bool,
    /// Orientations R.
    pub orientation: bool,
    /// COM velocities v.
    pub linear_velocity: bool,
    /// Angular velocities ω.
    pub angular_velocity: bool,
}

impl Dependence {
    /// Depends on everything (24 directions).
    pub const ALL: Dependence = Dependence {
        position: true,
        orientation: true,
        linear_velocity: true,
        angular_velocity: true,
    };
    /// Depends on orientations and angular velocities only (a pure joint torque).
    pub const ROTATIONAL: Dependence = Dependence {
        position: false,
        orientation: true,
        linear_velocity: false,
        angular_velocity: true,
    };
}

/// Gradient of a wrench pair: `dp[i][j]` = ∂(wrench on body i)/∂(twist displacement
/// (δx, δθ) of body j) and `du[i][j]` = ∂(wrench on body i)/∂((v, ω) of body j), with
/// index 0 = a, 1 = b. Units: N/m, N, N·m/m, N·m/rad (dp); N·s/m, … (du).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairGradient {
    /// Position gradient blocks.
    pub dp: [[Matrix6<f64>; 2]; 2],
    /// Velocity gradient blocks.
    pub du: [[Matrix6<f64>; 2]; 2],
}

impl Default for PairGradient {
    fn default() -> Self {
        PairGradient {
            dp: [[Matrix6::zeros(); 2]; 2],
            du: [[Matrix6::zeros(); 2]; 2],
        }
    }
}

/// Gradient of a pure joint torque τ (N·m, world) that acts on b (and −τ on a):
/// `d_theta[j]` = ∂τ/∂δθ_j (N·m/rad), `d_omega[j]` = ∂τ/∂ω_j (N·m·s/rad), j = 0 (a), 1 (b).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TorqueGradient {
    /// ∂τ/∂δθ of a and b.
    pub d_theta: [Matrix3<f64>; 2],
    /// ∂τ/∂ω of a and b.
    pub d_omega: [Matrix3<f64>; 2],
}

impl Default for TorqueGradient {
    fn default() -> Self {
        TorqueGradient {
            d_theta: [Matrix3::zeros(); 2],
            d_omega: [Matrix3::zeros(); 2],
        }
    }
}

/// Central-difference gradient estimator with precomputed rotation perturbations.
#[derive(Clone, Debug)]
pub struct GradientEstimator {
    opts: GradientOptions,
    /// exp(±ε e_k), k = x, y, z: [plus, minus].
    rot: [[UnitQuaternion<f64>; 3]; 2],
}

impl Default for GradientEstimator {
    fn default() -> Self {
        Self::new(GradientOptions::default())
    }
}

impl GradientEstimator {
    /// An estimator with the given step sizes.
    pub fn new(opts: GradientOptions) -> Self {
        let e = opts.eps_rotation;
        let r = |s: f64, k: usize| {
            let mut v = Vector3::zeros();
            v[k] = s * e;
            UnitQuaternion::from_scaled_axis(v)
        };
        GradientEstimator {
            opts,
            rot: [
                [r(1.0, 0), r(1.0, 1), r(1.0, 2)],
                [r(-1.0, 0), r(-1.0, 1), r(-1.0, 2)],
            ],
        }
    }

    /// The step sizes in use.
    pub fn options(&self) -> &GradientOptions {
        &self.opts
    }

    /// Perturb `s` along direction `d` (0..3 translation, 3..6 rotation, 6..9 linear
    /// velocity, 9..12 angular velocity) by +ε (`sign` 0) or −ε (`sign` 1).
    #[inline]
    fn perturbed(&self, s: &BodyState, d: usize, sign: usize) -> BodyState {
        let mut p = *s;
        let sg = if sign == 0 { 1.0 } else { -1.0 };
        match d {
            0..3 => p.x[d] += sg * self.opts.eps_position,
            3..6 => p.q = self.rot[sign][d - 3] * s.q,
            6..9 => p.v[d - 6] += sg * self.opts.eps_linear_velocity,
            _ => p.w[d - 9] += sg * self.opts.eps_angular_velocity,
        }
        p
    }

    #[inline]
    fn eps(&self, d: usize) -> f64 {
        match d {
            0..3 => self.opts.eps_position,
            3..6 => self.opts.eps_rotation,
            6..9 => self.opts.eps_linear_velocity,
            _ => self.opts.eps_angular_velocity,
        }
    }

    /// Gradient of a general joint-local wrench pair `f(a, b)` by central differences
    /// over the directions `deps` allows (skipped columns are zero). At most 48
    /// evaluations of `f`.
    pub fn pair_gradient<F>(
        &self,
        mut f: F,
        a: &BodyState,
        b: &BodyState,
        deps: Dependence,
        out: &mut PairGradient,
    ) where
        F: FnMut(&BodyState, &BodyState) -> WrenchPair,
    {
        *out = PairGradient::default();
        let enabled = [
            deps.position,
            deps.orientation,
            deps.linear_velocity,
            deps.angular_velocity,
        ];
        for j in 0..2 {
            for d in 0..12 {
                if !enabled[d / 3] {
                    continue;
                }
                let eval = |sign: usize, f: &mut F| {
                    if j == 0 {
                        f(&self.perturbed(a, d, sign), b)
                    } else {
                        f(a, &self.perturbed(b, d, sign))
                    }
                };
                let plus = eval(0, &mut f);
                let minus = eval(1, &mut f);
                let inv = 0.5 / self.eps(d);
                for i in 0..2 {
                    let col = (plus[i] - minus[i]) * inv;
                    if d < 6 {
                        out.dp[i][j].set_column(d, &col);
                    } else {
                        out.du[i][j].set_column(d - 6, &col);
                    }
                }
            }
        }
    }

    /// Gradient of a pure joint torque `tau(a, b)` (N·m on b, −τ on a). Perturbs only
    /// orientations and angular velocities — a torque computed from R and ω does not
    /// depend on x or v — so it costs 24 evaluations of `tau`.
    pub fn torque_gradient<F>(&self, tau: F, a: &BodyState, b: &BodyState) -> TorqueGradient
    where
        F: FnMut(&BodyState, &BodyState) -> Vector3<f64>,
    {
        self.torque_gradient_impl(tau, a, b, None, false, false)
    }

    /// [`torque_gradient`](Self::torque_gradient) using what is known about τ
    /// ([`TorqueStructure`]); `tau0` = τ(a, b), N·m. Affine: forward differences from
    /// `tau0` on the ω-columns (exact for an affine τ up to round-off). Relative: only ω_b
    /// is perturbed and ∂τ/∂ω_a = −∂τ/∂ω_b. Frame-indifferent: only R_b is perturbed and
    /// ∂τ/∂δθ_a follows from the identity below. All three: 6 + 3 = 9 evaluations instead
    /// of 24.
    ///
    /// Frame indifference: turning both bodies and their angular velocities by one
    /// rotation G turns τ by G. Differentiating at G = exp(\[δ\]×) (δθ_a = δθ_b = δ,
    /// δω = δ × ω, δτ = δ × τ) gives
    /// `∂τ/∂δθ_a = −[τ]× − ∂τ/∂δθ_b + ∂τ/∂ω_a [ω_a]× + ∂τ/∂ω_b [ω_b]×`.
    pub fn torque_gradient_structured<F>(
        &self,
        tau: F,
        a: &BodyState,
        b: &BodyState,
        tau0: &Vector3<f64>,
        structure: TorqueStructure,
    ) -> TorqueGradient
    where
        F: FnMut(&BodyState, &BodyState) -> Vector3<f64>,
    {
        let mut out = self.torque_gradient_impl(
            tau,
            a,
            b,
            structure.affine.then_some(tau0),
            structure.relative,
            structure.frame_indifferent,
        );
        if structure.frame_indifferent {
            out.d_theta[0] = parent_orientation_columns(&out, a, b, tau0);
        }
        out
    }

    /// The rotation step of direction `axis` (0 = x, 1 = y, 2 = z): exp(±ε e_axis) for
    /// `sign` 0 (+ε) or 1 (−ε). A body's orientation is perturbed as R ← exp(\[δθ\]×) R.
    pub fn rotation_step(&self, sign: usize, axis: usize) -> &UnitQuaternion<f64> {
        &self.rot[sign][axis]
    }

    /// The gradient of a PD-like torque ([`TorqueStructure::PD`]: affine in ω, relative ω
    /// only, frame-indifferent) from its child-side columns, estimated by the provider
    /// itself along this estimator's steps ([`rotation_step`](Self::rotation_step) and
    /// [`options`](Self::options)): ∂τ/∂δθ_b (`d_theta_b`, N·m/rad) and ∂τ/∂ω_b
    /// (`d_omega_b`, N·m·s/rad). The parent's columns follow as in
    /// [`torque_gradient_structured`](Self::torque_gradient_structured); `tau0` = τ(a, b).
    /// Written into `out` (every block): the step keeps one per joint, and a 288-byte
    /// gradient returned by value was copied twice on its way there (memcpy calls).
    pub fn pd_gradient_from_child(
        &self,
        a: &BodyState,
        b: &BodyState,
        tau0: &Vector3<f64>,
        d_theta_b: &Matrix3<f64>,
        d_omega_b: &Matrix3<f64>,
        out: &mut TorqueGradient,
    ) {
        out.d_theta[1] = *d_theta_b;
        out.d_omega = [-d_omega_b, *d_omega_b];
        out.d_theta[0] = parent_orientation_columns(out, a, b, tau0);
    }

    /// Central differences, or forward differences from `tau0` on the ω-columns; with
    /// `relative` ω_a's columns are −ω_b's; with `skip_theta_a` δθ_a is not perturbed
    /// (its columns stay zero).
    #[inline]
    fn torque_gradient_impl<F>(
        &self,
        mut tau: F,
        a: &BodyState,
        b: &BodyState,
        tau0: Option<&Vector3<f64>>,
        relative: bool,
        skip_theta_a: bool,
    ) -> TorqueGradient
    where
        F: FnMut(&BodyState, &BodyState) -> Vector3<f64>,
    {
        let mut out = TorqueGradient::default();
        for j in 0..2 {
            for d in [3, 4, 5, 9, 10, 11] {
                if j == 0 && ((relative && d >= 9) || (skip_theta_a && d < 6)) {
                    continue;
                }
                let mut eval = |sign: usize| {
                    if j == 0 {
                        tau(&self.perturbed(a, d, sign), b)
                    } else {
                        tau(a, &self.perturbed(b, d, sign))
                    }
                };
                let col = match tau0 {
                    Some(t0) if d >= 9 => (eval(0) - t0) * (1.0 / self.eps(d)),
                    _ => (eval(0) - eval(1)) * (0.5 / self.eps(d)),
                };
                if d < 6 {
                    out.d_theta[j].set_column(d - 3, &col);
                } else {
                    out.d_omega[j].set_column(d - 9, &col);
                }
            }
        }
        if relative {
            out.d_omega[0] = -out.d_omega[1];
        }
        out
    }
}

/// ∂τ/∂δθ_a of a frame-indifferent joint torque from its other columns (see
/// [`GradientEstimator::torque_gradient_structured`]).
#[inline]
fn parent_orientation_columns(
    g: &TorqueGradient,
    a: &BodyState,
    b: &BodyState,
    tau0: &Vector3<f64>,
) -> Matrix3<f64> {
    -tau0.cross_matrix() - g.d_theta[1]
        + g.d_omega[0] * a.w.cross_matrix()
        + g.d_omega[1] * b.w.cross_matrix()
}

/// What is known about a joint torque, for a cheaper gradient estimate
/// ([`GradientEstimator::torque_gradient_structured`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TorqueStructure {
    /// τ is affine in (ω_a, ω_b) at fixed orientations (PD damping).
    pub affine: bool,
    /// τ depends on ω_a, ω_b only through ω_b − ω_a (a joint torque from the relative
    /// motion).
    pub relative: bool,
    /// τ is frame-indifferent: τ(G R_a, G R_b, G ω_a, G ω_b) = G τ(R_a, R_b, ω_a, ω_b) for
    /// every rotation G (it depends on the two bodies' relative state only, with no fixed
    /// world direction such as gravity).
    pub frame_indifferent: bool,
}

impl TorqueStructure {
    /// No known structure: plain central differences.
    pub const GENERAL: TorqueStructure = TorqueStructure {
        affine: false,
        relative: false,
        frame_indifferent: false,
    };
    /// All three properties (PD control, spring-dampers).
    pub const PD: TorqueStructure = TorqueStructure {
        affine: true,
        relative: true,
        frame_indifferent: true,
    };
}

impl TorqueGradient {
    /// The same gradient as a [`PairGradient`] of the wrench pair ((0, −τ), (0, τ)).
    pub fn to_pair(&self) -> PairGradient {
        let mut g = PairGradient::default();
        for j in 0..2 {
            g.dp[1][j]
                .fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&self.d_theta[j]);
            g.dp[0][j]
                .fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&(-self.d_theta[j]));
            g.du[1][j]
                .fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&self.d_omega[j]);
            g.du[0][j]
                .fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&(-self.d_omega[j]));
        }
        g
    }
}

/// Helper for wrench construction: (force, torque) → 6-vector.
#[inline]
pub fn wrench(force: &Vector3<f64>, torque: &Vector3<f64>) -> Vector6<f64> {
    Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inverse of the left Jacobian of SO(3): log(exp(δ) exp(φ)) ≈ φ + J_l⁻¹(φ) δ.
    fn left_jacobian_inv(phi: &Vector3<f64>) -> Matrix3<f64> {
        let th = phi.norm();
        let k = phi.cross_matrix();
        let c = 1.0 / (th * th) - (1.0 + th.cos()) / (2.0 * th * th.sin());
        Matrix3::identity() - k * 0.5 + k * k * c
    }

    fn states() -> (BodyState, BodyState) {
        let a = BodyState {
            x: Vector3::new(0.1, 0.2, -0.3),
            q: UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -0.2, 0.5)),
            v: Vector3::new(0.5, -1.0, 0.2),
            w: Vector3::new(1.0, 2.0, -0.5),
        };
        let b = BodyState {
            x: Vector3::new(0.4, -0.1, 0.2),
            q: UnitQuaternion::from_scaled_axis(Vector3::new(-0.4, 0.6, 0.1)),
            v: Vector3::new(-0.3, 0.4, 0.9),
            w: Vector3::new(-1.5, 0.3, 0.7),
        };
        (a, b)
    }

    const K: f64 = 40.0;
    const D: f64 = 3.0;

    /// Rotational spring-damper: τ = −K log(R_b R_a⁻¹) − D (ω_b − ω_a) on b.
    fn spring_damper(a: &BodyState, b: &BodyState) -> Vector3<f64> {
        -(b.q * a.q.inverse()).scaled_axis() * K - (b.w - a.w) * D
    }

    #[test]
    fn torque_gradient_matches_analytic_and_converges_quadratically() {
        let (a, b) = states();
        let phi = (b.q * a.q.inverse()).scaled_axis();
        // ∂φ/∂δθ_b = J_l⁻¹(φ), ∂φ/∂δθ_a = −J_r⁻¹(φ) = −J_l⁻¹(−φ)
        let want_b = -left_jacobian_inv(&phi) * K;
        let want_a = left_jacobian_inv(&(-phi)) * K;
        let err = |eps: f64| {
            let est = GradientEstimator::new(GradientOptions {
                eps_rotation: eps,
                eps_angular_velocity: eps,
                ..Default::default()
            });
            let g = est.torque_gradient(spring_damper, &a, &b);
            assert!((g.d_omega[0] - Matrix3::identity() * D).amax() < 1e-8);
            assert!((g.d_omega[1] + Matrix3::identity() * D).amax() < 1e-8);
            (g.d_theta[0] - want_a)
                .amax()
                .max((g.d_theta[1] - want_b).amax())
        };
        let (e1, e2) = (err(2e-2), err(1e-2));
        let order = (e1 / e2).log2();
        assert!((order - 2.0).abs() < 0.1, "order {order} ({e1:e}, {e2:e})");
        assert!(err(1e-5) < 1e-7 * K);
        // at rest, small angle: the textbook ∓K I
        let b0 = BodyState { q: a.q, ..b };
        let g = GradientEstimator::default().torque_gradient(spring_damper, &a, &b0);
        assert!((g.d_theta[1] + Matrix3::identity() * K).amax() < 1e-7);
        assert!((g.d_theta[0] - Matrix3::identity() * K).amax() < 1e-7);
    }

    const KS: f64 = 200.0;
    const CS: f64 = 5.0;
    fn anchors() -> (Vector3<f64>, Vector3<f64>) {
        (Vector3::new(0.2, 0.05, 0.0), Vector3::new(-0.1, 0.15, 0.05))
    }

    /// A linear spring between anchor points plus a damper on the COM velocities.
    fn point_spring(a: &BodyState, b: &BodyState) -> WrenchPair {
        let (ra0, rb0) = anchors();
        let (ra, rb) = (a.q * ra0, b.q * rb0);
        let fb = ((a.x + ra) - (b.x + rb)) * KS + (a.v - b.v) * CS;
        [wrench(&-fb, &ra.cross(&-fb)), wrench(&fb, &rb.cross(&fb))]
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn pair_gradient_matches_analytic_point_spring() {
        let (a, b) = states();
        let (ra0, rb0) = anchors();
        let (ra, rb) = (a.q * ra0, b.q * rb0);
        let fb = point_spring(&a, &b)[1].fixed_rows::<3>(0).into_owned();
        let (sra, srb, sf) = (ra.cross_matrix(), rb.cross_matrix(), fb.cross_matrix());
        let eye = Matrix3::identity();
        // dF_b/d(δx_a, δθ_a, δx_b, δθ_b)
        let dfb = [[eye * KS, -sra * KS], [-eye * KS, srb * KS]];
        let mut want = PairGradient::default();
        for j in 0..2 {
            for k in 0..2 {
                let dfb_jk = dfb[j][k];
                // on b: (dF, dr_b × F + r_b × dF); on a: negatives with r_a
                let mut tb = srb * dfb_jk;
                let mut ta = -(sra * dfb_jk);
                if k == 1 && j == 1 {
                    tb += sf * srb;
                }
                if k == 1 && j == 0 {
                    ta -= sf * sra;
                }
                let c = 3 * k;
                want.dp[1][j]
                    .fixed_view_mut::<3, 3>(0, c)
                    .copy_from(&dfb_jk);
                want.dp[1][j].fixed_view_mut::<3, 3>(3, c).copy_from(&tb);
                want.dp[0][j]
                    .fixed_view_mut::<3, 3>(0, c)
                    .copy_from(&(-dfb_jk));
                want.dp[0][j].fixed_view_mut::<3, 3>(3, c).copy_from(&ta);
            }
            let s = if j == 0 { CS } else { -CS };
            want.du[1][j]
                .fixed_view_mut::<3, 3>(0, 0)
                .copy_from(&(eye * s));
            want.du[1][j]
                .fixed_view_mut::<3, 3>(3, 0)
                .copy_from(&(srb * s));
            want.du[0][j]
                .fixed_view_mut::<3, 3>(0, 0)
                .copy_from(&(-eye * s));
            want.du[0][j]
                .fixed_view_mut::<3, 3>(3, 0)
                .copy_from(&(-sra * s));
        }
        let err = |eps: f64| {
            let est = GradientEstimator::new(GradientOptions {
                eps_position: eps,
                eps_rotation: eps,
                eps_linear_velocity: eps,
                eps_angular_velocity: eps,
            });
            let mut g = PairGradient::default();
            est.pair_gradient(point_spring, &a, &b, Dependence::ALL, &mut g);
            let mut e: f64 = 0.0;
            for i in 0..2 {
                for j in 0..2 {
                    e = e.max((g.dp[i][j] - want.dp[i][j]).amax());
                    e = e.max((g.du[i][j] - want.du[i][j]).amax());
                }
            }
            e
        };
        let (e1, e2) = (err(2e-2), err(1e-2));
        let order = (e1 / e2).log2();
        assert!((order - 2.0).abs() < 0.15, "order {order} ({e1:e}, {e2:e})");
        assert!(err(1e-5) < 1e-6 * KS, "{}", err(1e-5));
    }

    #[test]
    fn structured_fast_paths_match_central_differences() {
        let (a, b) = states();
        let est = GradientEstimator::default();
        let central = est.torque_gradient(spring_damper, &a, &b);
        let tau0 = spring_damper(&a, &b);
        for bits in 1..8 {
            let s = TorqueStructure {
                affine: bits & 1 != 0,
                relative: bits & 2 != 0,
                frame_indifferent: bits & 4 != 0,
            };
            let fast = est.torque_gradient_structured(spring_damper, &a, &b, &tau0, s);
            assert_eq!(fast.d_theta[1], central.d_theta[1]);
            for j in 0..2 {
                let scale = central.d_theta[j].amax();
                assert!(
                    (fast.d_theta[j] - central.d_theta[j]).amax() < 1e-9 * scale,
                    "{s:?}"
                );
                assert!(
                    (fast.d_omega[j] - central.d_omega[j]).amax() < 1e-9,
                    "{s:?}"
                );
            }
        }
        let general =
            est.torque_gradient_structured(spring_damper, &a, &b, &tau0, TorqueStructure::GENERAL);
        assert_eq!(general, central);
        // the comparisons can fail: a torque quadratic in ω makes the forward differences
        // off by ~ε (the central ones are exact for it), one that depends on ω_a alone
        // breaks ∂τ/∂ω_a = −∂τ/∂ω_b, one pulling toward a fixed world direction breaks
        // frame indifference
        let quadratic = |a: &BodyState, b: &BodyState| {
            let dw = b.w - a.w;
            spring_damper(a, b) - dw * dw.norm() * 50.0
        };
        let central = est.torque_gradient(quadratic, &a, &b);
        let s = TorqueStructure {
            affine: true,
            ..TorqueStructure::GENERAL
        };
        let fast = est.torque_gradient_structured(quadratic, &a, &b, &quadratic(&a, &b), s);
        assert!((fast.d_omega[1] - central.d_omega[1]).amax() > 1e-4);
        let absolute = |a: &BodyState, b: &BodyState| spring_damper(a, b) - a.w * 7.0;
        let central = est.torque_gradient(absolute, &a, &b);
        let s = TorqueStructure {
            relative: true,
            ..TorqueStructure::GENERAL
        };
        let fast = est.torque_gradient_structured(absolute, &a, &b, &absolute(&a, &b), s);
        assert!((fast.d_omega[0] - central.d_omega[0]).amax() > 1.0);
        let world = |a: &BodyState, b: &BodyState| {
            spring_damper(a, b) + (a.q * Vector3::y()).cross(&Vector3::y()) * 30.0
        };
        let central = est.torque_gradient(world, &a, &b);
        let s = TorqueStructure {
            frame_indifferent: true,
            ..TorqueStructure::GENERAL
        };
        let fast = est.torque_gradient_structured(world, &a, &b, &world(&a, &b), s);
        assert!((fast.d_theta[0] - central.d_theta[0]).amax() > 1.0);
    }

    #[test]
    fn skipping_directions_matches_full_differencing_for_a_pure_torque() {
        let (a, b) = states();
        let est = GradientEstimator::default();
        let pair = |a: &BodyState, b: &BodyState| {
            let t = spring_damper(a, b);
            [
                wrench(&Vector3::zeros(), &-t),
                wrench(&Vector3::zeros(), &t),
            ]
        };
        let mut full = PairGradient::default();
        est.pair_gradient(pair, &a, &b, Dependence::ALL, &mut full);
        let reduced = est.torque_gradient(spring_damper, &a, &b).to_pair();
        for i in 0..2 {
            for j in 0..2 {
                assert!((full.dp[i][j] - reduced.dp[i][j]).amax() < 1e-9);
                assert!((full.du[i][j] - reduced.du[i][j]).amax() < 1e-9);
            }
        }
    }
}
