//! A recorded animation of a model: every body's pose per frame, plus thrown balls.
//! Produced by the simulation (or from the reference motion, unperturbed); read by export.

use crate::motion::reference::{Reference, ReferenceScratch};
use crate::skeleton::Model;
use nalgebra::Vector3;

pub use crate::motion::kinematics::BodyPose;

/// A ball's path: its radius and, per frame, its centre (m) once it has been launched.
#[derive(Clone, Debug, PartialEq)]
pub struct BallTrack {
    /// Radius, m.
    pub radius: f64,
    /// Per frame: centre position, or `None` before launch.
    pub positions: Vec<Option<Vector3<f64>>>,
}

/// Body poses sampled at a fixed frame time (the clip's frame time for export).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Trajectory {
    /// Seconds between frames.
    pub frame_time: f64,
    /// Per frame: per body pose.
    pub poses: Vec<Vec<BodyPose>>,
    /// Balls, each with one entry per frame.
    pub balls: Vec<BallTrack>,
}

impl Trajectory {
    /// The unperturbed reference motion sampled every `frame_time` seconds over `frames` frames.
    pub fn from_reference(
        model: &Model,
        reference: &Reference,
        frame_time: f64,
        frames: usize,
    ) -> Self {
        let mut scratch = ReferenceScratch::default();
        let poses = (0..frames)
            .map(|f| {
                let mut pose = vec![BodyPose::default(); model.num_bodies()];
                reference.sample_pose(model, f as f64 * frame_time, &mut scratch, &mut pose);
                pose
            })
            .collect();
        Trajectory {
            frame_time,
            poses,
            balls: vec![],
        }
    }

    /// Number of frames.
    pub fn num_frames(&self) -> usize {
        self.poses.len()
    }
}
