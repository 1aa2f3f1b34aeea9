//! Simulation orchestration: running a clip under physics (feedforward + feedback,
//! recorded trajectory and errors), the drift-figure scenarios of METHOD §10, test models.

pub mod aim;
pub mod balance;
pub mod balls;
mod contact;
mod controller;
pub mod drift;
mod feedforward;
pub mod ground;
pub mod metrics;
pub mod models;
pub mod random_throws;
mod record;
pub mod reflex;
pub mod replay;
pub mod root;
pub mod run;
pub mod scenario;
pub mod support;
pub mod trajectory;

pub use root::{RootMode, SpringTuning};
pub use run::{
    Feedforward, Precompute, Projection, Record, SimError, SimOptions, Simulation, Snapshot,
};
pub use trajectory::{BallTrack, BodyPose, Trajectory};
