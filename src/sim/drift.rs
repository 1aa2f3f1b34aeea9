//! Constraint-drift scenarios (METHOD §10): the thesis' 6-link chain (§5.2.1) and Hong,
//! Welch & Choi's 5-link arm, run with every [`Drift`] method. `examples/chain_drift.rs`
//! prints these numbers; `tests/drift.rs` asserts them.

use crate::dynamics::{Drift, NoTorque, Root, RootTarget, State, StepError, StepOptions, Stepper};
use crate::motion::kinematics::{BodyKinematics, JointMotion, RootMotion, forward_kinematics};
use crate::skeleton::{JointSpec, JointType, Model, ModelBuilder};
use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use serde::Serialize;

/// Body-frame inertia (kg·m², about the COM) of a solid rod along x: length `len` m,
/// radius `r` m, mass `m` kg.
pub fn rod_inertia(m: f64, len: f64, r: f64) -> Matrix3<f64> {
    let axial = 0.5 * m * r * r;
    let perp = m * (3.0 * r * r + len * len) / 12.0;
    Matrix3::from_diagonal(&Vector3::new(axial, perp, perp))
}

/// A chain of `links` rods of length `len` m and mass `mass` kg hanging from a fixed root
/// body at the origin (body 0, to be pinned with zero twist), laid out horizontally along
/// +x; joints are `kind` (hinge/universal axes: world z, and x for universal's second).
/// Returns the model and its rest state (at rest, t = 0).
pub fn horizontal_chain(links: usize, len: f64, mass: f64, kind: JointType) -> (Model, State) {
    let mut mb = ModelBuilder::new();
    mb.add_body("anchor", None, 1.0, Matrix3::identity() * 0.01, None);
    for i in 0..links {
        let parent_anchor = if i == 0 {
            Vector3::zeros()
        } else {
            Vector3::new(0.5 * len, 0.0, 0.0)
        };
        let (axis_parent, axis_child) = match kind {
            JointType::Universal => (Vector3::z(), Vector3::x()),
            _ => (Vector3::z(), Vector3::z()),
        };
        mb.add_body(
            &format!("link{}", i + 1),
            Some(i),
            mass,
            rod_inertia(mass, len, 0.05 * len),
            Some(JointSpec {
                kind,
                parent_anchor,
                child_anchor: Vector3::new(-0.5 * len, 0.0, 0.0),
                axis_parent,
                axis_child,
                rest_rel: UnitQuaternion::identity(),
            }),
        );
    }
    let model = mb.build();
    let root = RootMotion {
        p: Vector3::zeros(),
        q: UnitQuaternion::identity(),
        v: Vector3::zeros(),
        w: Vector3::zeros(),
        a: Vector3::zeros(),
        dw: Vector3::zeros(),
    };
    let joints = vec![JointMotion::default(); model.bodies.len()];
    let mut kin = vec![BodyKinematics::default(); model.bodies.len()];
    forward_kinematics(&model, &root, &joints, &mut kin);
    let state = State::from_kinematics(&kin, 0.0);
    (model, state)
}

/// Constraint error of one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DriftRun {
    /// Drift control label ([`Drift::label`]), or the scheme's name.
    pub method: String,
    /// Time step, s.
    pub h: f64,
    /// Steps taken.
    pub steps: usize,
    /// Largest joint separation over the run (after stabilisation), mm.
    pub max_separation_mm: f64,
    /// Post-stabilisation only: largest separation before the projection, mm.
    pub max_separation_before_stabilization_mm: Option<f64>,
    /// Σ over steps and joints of the joint separation |(x_a + r_a) − (x_b + r_b)| — Hong
    /// et al.'s accumulated constraint error — in m.
    pub accumulated_separation_m: f64,
    /// Separation at the end, mm.
    pub final_separation_mm: f64,
    /// Total energy change over the run (kinetic + gravitational), J.
    pub energy_change_j: f64,
    /// If the run stopped early: the step error (the statistics cover the steps before).
    pub failure: Option<String>,
}

/// Run `steps` steps of `model` from `state` (root pinned in place, no joint torques)
/// with `drift` and step `h` s, recording the joint separation after every step. A step
/// error ends the run early and is recorded in [`DriftRun::failure`]; only an invalid
/// setup is an `Err`.
pub fn run_drift(
    model: &Model,
    mut state: State,
    drift: Drift,
    h: f64,
    steps: usize,
    method: &str,
) -> Result<DriftRun, StepError> {
    let opts = StepOptions {
        h,
        drift,
        ..Default::default()
    };
    let mut stepper = Stepper::new(model, opts)?;
    let s0 = state.bodies[0];
    let root = Root::Pinned(RootTarget::fixed(s0.x, s0.q));
    let e0 = state.kinetic_energy(model) + state.potential_energy(model);
    let (mut max_sep, mut max_before, mut acc, mut last): (f64, Option<f64>, f64, f64) =
        (0.0, None, 0.0, 0.0);
    let mut failure = None;
    let mut taken = 0;
    for _ in 0..steps {
        let rep = match stepper.step(model, &mut state, &root, &NoTorque, None) {
            Ok(r) => r,
            Err(e) => {
                failure = Some(e.to_string());
                break;
            }
        };
        taken += 1;
        if let Some(ps) = rep.stabilization {
            max_before = Some(max_before.unwrap_or(0.0).max(ps.separation_before));
        }
        let mut worst: f64 = 0.0;
        for (b, body) in model.bodies.iter().enumerate() {
            let (Some(a), Some(j)) = (body.parent, body.joint.as_ref()) else {
                continue;
            };
            let (sa, sb) = (&state.bodies[a], &state.bodies[b]);
            let d = (sa.x + sa.q * j.parent_anchor - sb.x - sb.q * j.child_anchor).norm();
            acc += d;
            worst = worst.max(d);
        }
        max_sep = max_sep.max(worst);
        last = worst;
    }
    let e1 = state.kinetic_energy(model) + state.potential_energy(model);
    Ok(DriftRun {
        method: method.to_string(),
        h,
        steps: taken,
        max_separation_mm: max_sep * 1e3,
        max_separation_before_stabilization_mm: max_before.map(|m| m * 1e3),
        accumulated_separation_m: acc,
        final_separation_mm: last * 1e3,
        energy_change_j: e1 - e0,
        failure,
    })
}

/// Thesis §5.2.1: a 6-link chain of 100 mm, 0.1 kg rods with ball joints hanging from a
/// fixed point, released from horizontal, h = 1 ms, `steps` steps (600 in the thesis).
pub fn chain_drift(drift: Drift, steps: usize) -> Result<DriftRun, StepError> {
    let (model, state) = horizontal_chain(6, 0.1, 0.1, JointType::Ball);
    run_drift(&model, state, drift, 1e-3, steps, &drift.label())
}

/// The drift methods of the chain figure: none, Baumgarte 50 s⁻¹ and 200 s⁻¹,
/// post-stabilisation, improved implicit.
pub fn chain_methods() -> Vec<Drift> {
    vec![
        Drift::None,
        Drift::Baumgarte { beta: 50.0 },
        Drift::Baumgarte { beta: 200.0 },
        Drift::PostStabilization,
        Drift::ImprovedImplicit,
    ]
}

/// Hong, Welch & Choi's experiment: a 5-link arm of 1 m rods with hinge (revolute)
/// joints, fixed at one end, falling from horizontal for `duration` s with step `h`;
/// each link weighs `mass` kg. Schemes: first-order implicit (Baumgarte β = 1/h),
/// improved implicit, and Baumgarte with βh = 0.5 (the thesis' β = 50 s⁻¹ at
/// h = 0.01 s), plus none and post-stabilisation for reference.
pub fn hong_arm(h: f64, mass: f64, duration: f64) -> Result<Vec<DriftRun>, StepError> {
    let (model, state) = horizontal_chain(5, 1.0, mass, JointType::Hinge);
    let steps = (duration / h).round() as usize;
    let schemes = [
        ("first-order-implicit", Drift::first_order_implicit(h)),
        ("improved-implicit", Drift::ImprovedImplicit),
        ("baumgarte(beta*h=0.5)", Drift::Baumgarte { beta: 0.5 / h }),
        ("none", Drift::None),
        ("post-stabilization", Drift::PostStabilization),
    ];
    schemes
        .iter()
        .map(|(name, d)| run_drift(&model, state.clone(), *d, h, steps, name))
        .collect()
}

/// One Hong-arm configuration and its runs.
#[derive(Clone, Debug, Serialize)]
pub struct HongCase {
    /// Time step, s.
    pub h: f64,
    /// Link mass, kg.
    pub mass: f64,
    /// Simulated time, s.
    pub duration: f64,
    /// One run per scheme (see [`hong_arm`]).
    pub runs: Vec<DriftRun>,
}

/// Everything `examples/chain_drift.rs` prints.
#[derive(Clone, Debug, Serialize)]
pub struct DriftReport {
    /// Thesis §5.2.1 chain, 600 steps at 1 ms, per method.
    pub chain: Vec<DriftRun>,
    /// Hong et al.'s arm for h ∈ {0.01, 0.1} s and link mass ∈ {1, 50} kg.
    pub hong_arm: Vec<HongCase>,
}

/// Run both experiments (chain: 600 steps; arm: `arm_duration` s).
pub fn drift_report(arm_duration: f64) -> Result<DriftReport, StepError> {
    let chain = chain_methods()
        .into_iter()
        .map(|d| chain_drift(d, 600))
        .collect::<Result<Vec<_>, _>>()?;
    let mut hong = Vec::new();
    for h in [0.01, 0.1] {
        for mass in [1.0, 50.0] {
            hong.push(HongCase {
                h,
                mass,
                duration: arm_duration,
                runs: hong_arm(h, mass, arm_duration)?,
            });
        }
    }
    Ok(DriftReport {
        chain,
        hong_arm: hong,
    })
}
