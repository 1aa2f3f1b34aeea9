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

/// The next of the reader's and writer's tests' deterministic pseudo-random bits
/// (xorshift64; no `rand` dependency): `seed` is the state, never 0.
#[cfg(test)]
fn random_bits(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}
