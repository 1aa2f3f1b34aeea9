//! BVH writer (stub, being written).
use super::{BvhError, Clip};
use std::path::Path;

/// BVH text of a clip.
pub fn write_bvh_string(_clip: &Clip) -> String {
    String::new()
}

/// Write a clip to a file atomically.
pub fn write_bvh(clip: &Clip, path: &Path) -> Result<(), BvhError> {
    std::fs::write(path, write_bvh_string(clip)).map_err(|source| BvhError::Io {
        path: path.into(),
        source,
    })
}
