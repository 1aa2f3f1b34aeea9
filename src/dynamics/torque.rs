//! Joint torque providers: where feedforward + PD muscle torques (METHOD §7) plug into
//! the step. A provider returns, per joint, the torque the joint applies to its child
//! body; the parent receives the equal and opposite torque. Its gradients are estimated
//! numerically by [`GradientEstimator::torque_gradient`](super::gradient::GradientEstimator::torque_gradient).

use super::gradient::{GradientEstimator, TorqueGradient};
use super::state::{BodyState, rotation_vector};
use crate::skeleton::Model;
use nalgebra::{UnitQuaternion, Vector3};

/// A per-joint torque. Implementations must depend only on the two bodies' orientations
/// and angular velocities (and time): the gradient estimator does not perturb positions
/// or linear velocities (a pure torque computed from R and ω provably does not depend on
/// them), so any such dependence would be missing from the implicit step.
pub trait JointTorque {
    /// Torque (N·m, world frame) that the joint between `body` and its parent applies to
    /// `body` (the child); the parent receives −τ. `t` is the time at the start of the
    /// step, s.
    fn torque(&self, body: usize, parent: &BodyState, child: &BodyState, t: f64) -> Vector3<f64>;

    /// False if joint `body` never produces torque (the step then skips its evaluation
    /// and its gradient).
    fn is_active(&self, _body: usize) -> bool {
        true
    }

    /// True if, at fixed orientations, every joint's torque is an affine function of the
    /// two angular velocities (τ = A(R_a, R_b) ω_a + B(R_a, R_b) ω_b + c(R_a, R_b, t), as
    /// for PD damping). The step then estimates ∂τ/∂ω by forward differences from the
    /// unperturbed torque (exact for such τ up to round-off) instead of central ones.
    /// Claiming it for a torque that is not affine in ω makes ∂τ/∂ω first-order accurate
    /// only. Default: false.
    fn affine_in_angular_velocity(&self) -> bool {
        false
    }

    /// True if every joint's torque depends on the angular velocities only through the
    /// relative one, ω_child − ω_parent (rad/s): the step then perturbs only the child's
    /// ω and takes ∂τ/∂ω_parent = −∂τ/∂ω_child. Claiming it wrongly drops the torque's
    /// own dependence on ω_parent from the implicit step. Default: false.
    fn relative_angular_velocity_only(&self) -> bool {
        false
    }

    /// True if every joint's torque is frame-indifferent: turning both bodies and their
    /// angular velocities by any rotation G turns the torque by G (it reads only the
    /// bodies' relative state, no fixed world direction). The step then perturbs only
    /// the child's orientation and obtains ∂τ/∂δθ_parent from that identity
    /// ([`GradientEstimator::torque_gradient_structured`](super::gradient::GradientEstimator::torque_gradient_structured)).
    /// Claiming it wrongly gives a wrong ∂τ/∂δθ_parent. Default: false.
    fn frame_indifferent(&self) -> bool {
        false
    }

    /// The torque and its gradient estimated by the provider itself, along the same
    /// perturbations as `est` (its rotation steps and ε), when it can evaluate the
    /// perturbed torques for less than a full [`torque`](Self::torque) each (e.g. reusing
    /// what does not depend on the perturbed body): the torque, N·m, with the gradient
    /// written into `gradient` (every block; left as it was when `None`). `None` (the
    /// default): the step estimates the gradient from [`torque`](Self::torque)
    /// evaluations.
    fn torque_and_gradient(
        &self,
        _body: usize,
        _parent: &BodyState,
        _child: &BodyState,
        _t: f64,
        _est: &GradientEstimator,
        _gradient: &mut TorqueGradient,
    ) -> Option<Vector3<f64>> {
        None
    }
}

/// No joint torques: a passive ragdoll.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTorque;

impl JointTorque for NoTorque {
    fn torque(&self, _: usize, _: &BodyState, _: &BodyState, _: f64) -> Vector3<f64> {
        Vector3::zeros()
    }
    fn is_active(&self, _: usize) -> bool {
        false
    }
}

/// Any `Fn(body, parent, child, t) -> τ` is a provider (active on every joint).
impl<F> JointTorque for F
where
    F: Fn(usize, &BodyState, &BodyState, f64) -> Vector3<f64>,
{
    fn torque(&self, body: usize, parent: &BodyState, child: &BodyState, t: f64) -> Vector3<f64> {
        self(body, parent, child, t)
    }
}

/// A rotational spring-damper on every joint, pulling each joint back to its rest
/// relative rotation Q0: τ = −k φ − d (ω_b − ω_a), with φ the rotation vector (world) of
/// R_b Q0⁻¹ R_a⁻¹. A stand-in for PD control in tests and benchmarks.
#[derive(Clone, Debug)]
pub struct SpringDamper {
    /// Stiffness k, N·m/rad.
    pub stiffness: f64,
    /// Damping d, N·m·s/rad.
    pub damping: f64,
    /// Per body: Q0⁻¹ of its joint (identity for roots).
    rest_inv: Vec<UnitQuaternion<f64>>,
}

impl SpringDamper {
    /// Spring-dampers with the same gains on every joint of `model`.
    pub fn new(model: &Model, stiffness: f64, damping: f64) -> Self {
        SpringDamper {
            stiffness,
            damping,
            rest_inv: model
                .bodies
                .iter()
                .map(|b| {
                    b.joint
                        .as_ref()
                        .map_or(UnitQuaternion::identity(), |j| j.rest_rel.inverse())
                })
                .collect(),
        }
    }
}

impl JointTorque for SpringDamper {
    #[inline]
    fn torque(&self, body: usize, parent: &BodyState, child: &BodyState, _t: f64) -> Vector3<f64> {
        let dev = child.q * self.rest_inv[body] * parent.q.inverse();
        -rotation_vector(&dev) * self.stiffness - (child.w - parent.w) * self.damping
    }
    fn is_active(&self, _body: usize) -> bool {
        self.stiffness != 0.0 || self.damping != 0.0
    }
    /// −d (ω_b − ω_a) is linear in ω …
    fn affine_in_angular_velocity(&self) -> bool {
        true
    }
    /// … and relative.
    fn relative_angular_velocity_only(&self) -> bool {
        true
    }
    /// The world rotation vector of R_b Q0⁻¹ R_a⁻¹ turns with the bodies.
    fn frame_indifferent(&self) -> bool {
        true
    }
}
