//! The first half of the pipeline in one value: a clip, its physical model and its fitted
//! reference motion (METHOD §1).

use crate::mocap::{BvhError, Clip, load_bvh};
use crate::motion::reference::{Reference, ReferenceError, ReferenceOptions};
use crate::skeleton::{ModelError, ModelOptions, Model, build_model};
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
}

impl Character {
    /// Load a BVH file, build its model and fit its reference motion.
    pub fn load(path: &Path, opts: &CharacterOptions) -> Result<Self, CharacterError> {
        let clip = load_bvh(path)?;
        Self::from_clip(clip, path, opts)
    }

    /// Build from an already parsed clip (`path` is used in messages).
    pub fn from_clip(clip: Clip, path: &Path, opts: &CharacterOptions) -> Result<Self, CharacterError> {
        let model = build_model(&clip, &opts.model)
            .map_err(|source| CharacterError::Model { path: path.into(), source })?;
        let reference = Reference::fit(&model, &clip, &opts.reference)
            .map_err(|source| CharacterError::Reference { path: path.into(), source })?;
        Ok(Character { path: path.into(), clip, model, reference })
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
