//! Simulation orchestration: state, runs over a clip, recorded trajectories.

pub mod run;
pub mod trajectory;

pub use run::{Feedforward, Record, SimError, SimOptions, Simulation};
pub use trajectory::{BallTrack, BodyPose, Trajectory};
