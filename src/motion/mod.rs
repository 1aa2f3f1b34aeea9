//! Filtering, C² spline fit and forward kinematics with derivatives → reference motion.

pub mod filter;
pub mod quat;
pub mod spline;
