//! Simulation orchestration: running a clip under physics (feedforward + feedback,
//! recorded trajectory and errors), the drift-figure scenarios of METHOD §10, test models.

pub mod drift;
pub mod models;
pub mod run;
pub mod trajectory;

pub use run::{Feedforward, Record, SimError, SimOptions, Simulation};
pub use trajectory::{BallTrack, BodyPose, Trajectory};
