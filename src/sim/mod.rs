//! Orchestration of the dynamics: scenario runs built from the step (METHOD §10 drift
//! figures; later: running a clip, balls, recording, metrics).

pub mod drift;
pub mod models;
