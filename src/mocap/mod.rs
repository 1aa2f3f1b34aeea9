//! BVH text ⇄ [`Clip`]: hierarchy, channels, frames. Knows no physics.

mod clip;
mod error;
pub mod euler;
mod parse;
mod write;

pub use clip::{BvhJoint, Channel, Clip};
pub use error::BvhError;
pub use parse::{load_bvh, parse_bvh};
pub use write::{write_bvh, write_bvh_string};
