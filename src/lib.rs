//! # jostle: motion capture that reacts to physics
//!
//! The pipeline (METHOD §1), one module per stage:
//!
//! ```text
//! BVH file ──mocap──▶ Clip (hierarchy, offsets, channels, frames)
//! Clip + skeleton spec ──skeleton──▶ Model (bodies, capsules, mass, ball/hinge/universal joints)
//! Clip + Model ──motion──▶ Reference (filtered C² splines; pose, twist, acceleration at any t)
//! Reference + Model ──dynamics::inverse──▶ feedforward torques ψ(t), root wrench
//! Model + Reference + ψ + balls ──dynamics (step), contact, sim──▶ simulated states
//! states ──export──▶ glTF, BVH, metrics
//! ```
//!
//! [`character::Character`] runs the first three stages for a BVH file.
//! Units are SI throughout; the world is Y-up with gravity (0, −9.81, 0).

pub mod batch;
pub mod character;
pub mod contact;
pub mod dynamics;
pub mod export;
pub mod info;
pub mod mocap;
pub mod motion;
pub mod options;
pub mod sim;
pub mod skeleton;
#[cfg(feature = "viewer")]
pub mod viewer;

pub use character::{Character, CharacterError, CharacterOptions};
pub use mocap::Clip;
pub use skeleton::Model;
