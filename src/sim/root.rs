//! How the simulated character's root (pelvis) is held (METHOD §4, §12.3): pinned to its
//! mocap path by hard rows (the thesis), or by a spring-damper a push can overcome, whose
//! stiffness comes from the figure's mass, its inertia and a natural frequency.

use crate::dynamics::{RootSpring, RootTarget};
use crate::motion::kinematics::BodyKinematics;
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
        }
    }
}

impl SpringTuning {
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
        if !(self.damping_ratio.is_finite() && self.damping_ratio >= 0.0) {
            return Err(format!(
                "root spring damping ratio must be non-negative, got {}",
                self.damping_ratio
            ));
        }
        Ok(())
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
