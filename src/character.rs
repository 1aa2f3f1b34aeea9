//! The first half of the pipeline in one value: a clip, its physical model and its fitted
//! reference motion (METHOD §1).

use crate::mocap::{BvhError, Clip, load_bvh};
use crate::motion::reference::{Reference, ReferenceError, ReferenceOptions};
use crate::skeleton::{ClipWorldPoses, Model, ModelError, ModelOptions, build_model_with_poses};
use std::path::{Path, PathBuf};

/// Everything that can go wrong turning a BVH file into a character.
#[derive(Debug, thiserror::Error)]
pub enum CharacterError {
    /// Reading or parsing the BVH file.
    #[error(transparent)]
    Bvh(#[from] BvhError),
    /// Building the model.
    #[error("{path}: {source}")]
    Model {
        /// The clip.
        path: PathBuf,
        /// Cause.
        source: ModelError,
    },
    /// Fitting the reference motion.
    #[error("{path}: {source}")]
    Reference {
        /// The clip.
        path: PathBuf,
        /// Cause.
        source: ReferenceError,
    },
}

/// Options for loading a character.
#[derive(Clone, Debug, Default)]
pub struct CharacterOptions {
    /// Model options (units, T-pose, skeleton spec).
    pub model: ModelOptions,
    /// Reference fit options (filter cut-off).
    pub reference: ReferenceOptions,
}

/// A clip turned into a physical character with a reference motion.
#[derive(Clone, Debug)]
pub struct Character {
    /// Where it came from.
    pub path: PathBuf,
    /// The parsed clip.
    pub clip: Clip,
    /// The immutable physical model.
    pub model: Model,
    /// The fitted reference motion.
    pub reference: Reference,
    /// World transforms (m, Y up) of every clip joint in every used frame, as the model's
    /// build computed them from the mocap: the exports pose the original animation, and
    /// the joints that ride on a body, from them instead of computing them again
    /// (≈ 56 bytes a joint a frame: 4.8 MB for CMU 01_01's 31 joints × 2751 frames).
    pub mocap_world: ClipWorldPoses,
}

impl Character {
    /// Load a BVH file, build its model and fit its reference motion.
    pub fn load(path: &Path, opts: &CharacterOptions) -> Result<Self, CharacterError> {
        let clip = load_bvh(path)?;
        Self::from_clip(clip, path, opts)
    }

    /// Build from an already parsed clip (`path` is used in messages).
    pub fn from_clip(
        clip: Clip,
        path: &Path,
        opts: &CharacterOptions,
    ) -> Result<Self, CharacterError> {
        let (model, poses) =
            build_model_with_poses(&clip, &opts.model).map_err(|source| CharacterError::Model {
                path: path.into(),
                source,
            })?;
        let reference = Reference::fit_with_poses(&model, &clip, &opts.reference, Some(&poses))
            .map_err(|source| CharacterError::Reference {
                path: path.into(),
                source,
            })?;
        Ok(Character {
            path: path.into(),
            clip,
            model,
            reference,
            mocap_world: poses,
        })
    }

    /// Column names of the joint DOF (`LeftLeg.hinge`, `LeftArm.x`, ...), in τ order.
    pub fn dof_names(&self) -> Vec<String> {
        let mut names = vec![];
        for b in &self.model.bodies {
            if let Some(j) = &b.joint {
                for a in j.axis_names() {
                    names.push(format!("{}.{}", b.name, a));
                }
            }
        }
        names
    }
}

/// Inverse dynamics sampled over a whole clip.
#[derive(Clone, Debug, Default)]
pub struct TorqueTable {
    /// Sample times, s.
    pub times: Vec<f64>,
    /// Per sample: joint torques τ (N·m, body-relative, order of [`Character::dof_names`]).
    pub tau: Vec<Vec<f64>>,
    /// Per sample: root force (N) and torque (N·m), world frame.
    pub root: Vec<[f64; 6]>,
    /// Wall time of the inverse dynamics alone (excluding reference sampling), µs per sample.
    pub us_per_sample: f64,
}

impl Character {
    /// Sample times from 0 to the clip's end every `step` seconds (last sample at the end).
    pub fn sample_times(&self, step: f64) -> Vec<f64> {
        let n = (self.reference.duration / step).floor() as usize;
        (0..=n).map(|k| k as f64 * step).collect()
    }

    /// Feedforward torques by inverse dynamics (METHOD §6) every `step` seconds.
    pub fn inverse_dynamics(&self, step: f64) -> TorqueTable {
        use crate::dynamics::{InverseWorkspace, JointTorques, inverse_dynamics};
        use crate::motion::kinematics::BodyKinematics;
        let times = self.sample_times(step);
        let mut kin = vec![BodyKinematics::default(); self.model.num_bodies()];
        let mut scratch = Default::default();
        let mut ws = InverseWorkspace::default();
        let mut out = JointTorques::default();
        let mut table = TorqueTable {
            times: times.clone(),
            ..Default::default()
        };
        let mut id_time = std::time::Duration::ZERO;
        for &t in &times {
            self.reference
                .sample(&self.model, t, &mut scratch, &mut kin);
            let t0 = std::time::Instant::now();
            inverse_dynamics(&self.model, &kin, None, &mut ws, &mut out);
            id_time += t0.elapsed();
            table.tau.push(out.tau.clone());
            let (f, m) = (out.root_force, out.root_torque);
            table.root.push([f.x, f.y, f.z, m.x, m.y, m.z]);
        }
        table.us_per_sample = id_time.as_secs_f64() * 1e6 / times.len().max(1) as f64;
        table
    }
}
