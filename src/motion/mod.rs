//! Filtering, C² spline fit and forward kinematics with derivatives → reference motion.

pub mod filter;
pub mod kinematics;
pub mod quat;
pub mod reference;
pub mod spline;
