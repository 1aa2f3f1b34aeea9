//! How the simulated character's root (pelvis) is held (METHOD §4, §12.3): pinned to its
//! mocap path by hard rows (the thesis), or by a spring-damper a push can overcome, whose
//! stiffness comes from the figure's mass, its inertia and a natural frequency.

use crate::dynamics::{RootSpring, RootTarget};
use crate::motion::kinematics::BodyKinematics;
use crate::sim::support::SupportContact;
use crate::skeleton::Model;
use nalgebra::{Matrix3, Vector3, Vector6};

/// How the root is held.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RootMode {
    /// Pinned to the mocap path (hard rows, thesis §5.1.2): hits on the trunk barely show.
    Pinned,
    /// Held by a 6-DOF spring-damper toward the mocap path, on top of the inverse
    /// dynamics' root wrench (so an unperturbed run still follows the mocap).
    Spring(SpringTuning),
}

impl Default for RootMode {
    /// Spring-held (METHOD §12.3): a push moves the whole figure.
    fn default() -> Self {
        RootMode::Spring(SpringTuning::default())
    }
}

/// Natural frequencies and damping ratio of the root spring: K = m ω², D = 2ζ m ω
/// (translation, m the whole figure's mass) and K = I ω², D = 2ζ I ω (rotation, I the
/// mean principal moment of the whole figure about its centre of mass).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringTuning {
    /// Translational natural frequency, Hz.
    pub linear_hz: f64,
    /// Rotational natural frequency, Hz.
    pub angular_hz: f64,
    /// Damping ratio (1: critically damped).
    pub damping_ratio: f64,
    /// Balance feedback (experimental, SIMBICON-style; 0 = off): once a ball has touched
    /// the standing character, the stance ankles' PD targets tilt the shins by
    /// −(c_d·Δd + c_v·Δv) rad toward the reference COM, Δd, Δv the horizontal COM
    /// position (m) and velocity (m/s) changes from the reference at the step's start.
    /// c_d, rad/m.
    pub balance_cd: f64,
    /// c_v, rad/(m/s) (see `balance_cd`).
    pub balance_cv: f64,
    /// Experimental soft zone (0 = off): while the root is within `soft_zone_m` of its
    /// target at a step's start, the spring's frequencies are scaled by `soft_scale`;
    /// beyond 2 × `soft_zone_m` they are the full ones, in between blended linearly
    /// (chosen once per step, so the step stays linear in the state).
    pub soft_zone_m: f64,
    /// Frequency factor inside the soft zone, in (0, 1].
    pub soft_scale: f64,
    /// After a ball has touched the figure, the spring's target moves with where the feet
    /// stand: toward the load-weighted mean horizontal offset of the planted feet from
    /// their mocap marks, low-pass filtered with this time constant, s (0 = off: the
    /// target stays on the mocap path). See [`FeetShift`].
    pub follow_feet_s: f64,
    /// Largest horizontal shift of the target by [`Self::follow_feet_s`], m.
    pub follow_feet_max_m: f64,
}

impl Default for SpringTuning {
    /// 0.5 Hz translation and 1 Hz rotation, critically damped (METHOD §12.3's starting
    /// points): a handball's 8 N·s to a 70 kg figure then moves the pelvis ≈ 1.3 cm and
    /// the figure is back on its path within about a second.
    fn default() -> Self {
        SpringTuning {
            linear_hz: 0.5,
            angular_hz: 1.0,
            damping_ratio: 1.0,
            balance_cd: 0.0,
            balance_cv: 0.0,
            soft_zone_m: 0.0,
            soft_scale: 1.0,
            follow_feet_s: 0.1,
            follow_feet_max_m: 0.03,
        }
    }
}

impl SpringTuning {
    /// The tuning for a step that starts with the root `offset_m` from its target (see
    /// `soft_zone_m`).
    pub fn at_offset(&self, offset_m: f64) -> SpringTuning {
        if self.soft_zone_m <= 0.0 || self.soft_scale >= 1.0 {
            return *self;
        }
        let s = ((offset_m - self.soft_zone_m) / self.soft_zone_m).clamp(0.0, 1.0);
        let f = self.soft_scale + (1.0 - self.soft_scale) * s;
        SpringTuning {
            linear_hz: self.linear_hz * f,
            angular_hz: self.angular_hz * f,
            ..*self
        }
    }

    /// Check the numbers (finite, positive frequencies, non-negative damping).
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("linear frequency", self.linear_hz),
            ("angular frequency", self.angular_hz),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("root spring {name} must be positive, got {v} Hz"));
            }
        }
        for (name, v) in [("c_d", self.balance_cd), ("c_v", self.balance_cv)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "balance feedback {name} must be non-negative, got {v}"
                ));
            }
        }
        if !(self.soft_zone_m.is_finite() && self.soft_zone_m >= 0.0) {
            return Err(format!(
                "soft zone must be non-negative, got {} m",
                self.soft_zone_m
            ));
        }
        if !(self.soft_scale > 0.0 && self.soft_scale <= 1.0) {
            return Err(format!(
                "soft scale must be in (0, 1], got {}",
                self.soft_scale
            ));
        }
        for (name, v) in [
            ("feet-following time constant (s)", self.follow_feet_s),
            ("feet-following limit (m)", self.follow_feet_max_m),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("root spring {name} must be non-negative, got {v}"));
            }
        }
        if !(self.damping_ratio.is_finite() && self.damping_ratio >= 0.0) {
            return Err(format!(
                "root spring damping ratio must be non-negative, got {}",
                self.damping_ratio
            ));
        }
        Ok(())
    }
}

/// How far the root spring's target stands off the mocap path, horizontally, because the
/// feet do (METHOD §12.3): after a hit a planted foot may have slid and a swinging one
/// landed off its mark, and a target left on the mocap path then holds the pelvis off the
/// feet for as long as they stay there: the legs stand between the two, more than 2° off
/// their recorded angles, and the next steps land off their marks again (a displaced
/// pelvis swings a foot off its mark; a foot off its mark holds the pelvis off its path).
/// The handball sweep's Bandai kick stayed so to the clip's end, 10 s after the hit. The
/// target follows the planted feet's offsets from their marks instead, weighted by the
/// load the inverse dynamics put on each (a lightly loaded foot that shuffles aside, as
/// the Bandai dance's does, carries little of it: unweighted, the figure followed it
/// away), low-pass filtered ([`SpringTuning::follow_feet_s`]) and at most
/// [`SpringTuning::follow_feet_max_m`] (uncapped, a ball that knocked a foot aside
/// pulled the figure after it into a fall). Zero until a ball touches the figure, so an
/// unperturbed run is unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FeetShift {
    /// The target's shift from the mocap path (world, horizontal), m.
    pub offset: Vector3<f64>,
}

impl FeetShift {
    /// After a step of `h` s: move the shift toward the load-weighted mean of `offsets`
    /// (per supported point on the floor, its horizontal offset from its mocap position,
    /// x and z, m; see [`Ground::measure`](crate::sim::ground::Ground::measure)), each
    /// weighted by the vertical impulse `support` planned for it. Unchanged when no
    /// planted point is on the floor or `tuning` has the following off.
    pub fn update(
        &mut self,
        tuning: &SpringTuning,
        offsets: &[(usize, [f64; 2])],
        support: &[SupportContact],
        h: f64,
    ) {
        if tuning.follow_feet_s <= 0.0 {
            return;
        }
        let (mut sum, mut load) = (Vector3::zeros(), 0.0);
        for (point, o) in offsets {
            let w = support
                .iter()
                .find(|c| c.point == *point)
                .map_or(0.0, |c| c.impulse.y.max(0.0));
            sum += Vector3::new(o[0], 0.0, o[1]) * w;
            load += w;
        }
        if load <= 0.0 {
            return;
        }
        let a = (h / tuning.follow_feet_s).min(1.0);
        self.offset += (sum / load - self.offset) * a;
        let n = self.offset.norm();
        if n > tuning.follow_feet_max_m {
            self.offset *= tuning.follow_feet_max_m / n;
        }
    }
}

/// The figure's constants a root spring is scaled by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringScale {
    /// Total mass, kg.
    pub mass: f64,
    /// Mean principal moment of inertia about the whole-body COM, kg·m².
    pub inertia: f64,
}

impl SpringScale {
    /// Mass and mean principal inertia of the figure posed at `kin` (world poses).
    pub fn of(model: &Model, kin: &[BodyKinematics]) -> Self {
        let mass = model.total_mass();
        let com: Vector3<f64> = model
            .bodies
            .iter()
            .zip(kin)
            .map(|(b, k)| k.x * b.mass)
            .sum::<Vector3<f64>>()
            / mass;
        let mut inertia = Matrix3::zeros();
        for (b, k) in model.bodies.iter().zip(kin) {
            let r = k.q.to_rotation_matrix();
            let d = k.x - com;
            inertia += r.matrix() * b.inertia * r.matrix().transpose()
                + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * b.mass;
        }
        SpringScale {
            mass,
            inertia: inertia.trace() / 3.0,
        }
    }

    /// The root spring toward `target`, with `impulse` (N·s, N·m·s) over the step.
    pub fn spring(
        &self,
        tuning: &SpringTuning,
        target: RootTarget,
        impulse: Vector6<f64>,
    ) -> RootSpring {
        let wl = std::f64::consts::TAU * tuning.linear_hz;
        let wa = std::f64::consts::TAU * tuning.angular_hz;
        let z = tuning.damping_ratio;
        RootSpring {
            target,
            k_linear: self.mass * wl * wl,
            d_linear: 2.0 * z * self.mass * wl,
            k_angular: self.inertia * wa * wa,
            d_angular: 2.0 * z * self.inertia * wa,
            impulse,
        }
    }
}
