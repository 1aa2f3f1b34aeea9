//! Dynamics: inverse dynamics (tree sweep), and the dense reference system used as a test oracle.

pub mod dense;
pub mod inverse;

pub use inverse::{InverseWorkspace, JointTorques, inertial_wrench, inverse_dynamics};
