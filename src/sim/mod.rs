//! Simulation orchestration: state, runs over a clip, recorded trajectories.

pub mod trajectory;

pub use trajectory::{BallTrack, BodyPose, Trajectory};
