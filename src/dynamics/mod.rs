//! Dynamics: the per-step state, inverse dynamics (tree sweep), the linearly implicit
//! forward step with its O(n) block-tree KKT factorisation, numerical force gradients and
//! constraint-drift control, and the dense reference system used as a test oracle.

pub mod control;
pub mod dense;
pub mod gradient;
pub mod inverse;
pub mod kkt;
pub mod stabilize;
pub mod state;
pub mod step;
pub mod torque;

pub use gradient::{
    Dependence, GradientEstimator, GradientOptions, PairGradient, TorqueGradient, TorqueStructure,
};
pub use inverse::{InverseWorkspace, JointTorques, inertial_wrench, inverse_dynamics};
pub use kkt::{BlockTree, KktError, KktVector, joint_rows};
pub use stabilize::{Drift, PostStabilizationReport};
pub use state::{BodyState, State, rotation_from_vector, rotation_vector};
pub use step::{Root, RootSpring, RootTarget, StepError, StepOptions, StepReport, Stepper};
pub use torque::{JointTorque, NoTorque, SpringDamper};
