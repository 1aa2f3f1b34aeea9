//! BVH reader (stub, being written).
use super::{BvhError, Clip};
use std::path::Path;

/// Parse BVH text. `file` names the source in error messages.
pub fn parse_bvh(_text: &str, file: &str) -> Result<Clip, BvhError> {
    Err(BvhError::Parse {
        file: file.into(),
        line: 1,
        message: "not implemented".into(),
    })
}

/// Read and parse a BVH file.
pub fn load_bvh(path: &Path) -> Result<Clip, BvhError> {
    let text = std::fs::read_to_string(path).map_err(|source| BvhError::Io {
        path: path.into(),
        source,
    })?;
    parse_bvh(&text, &path.display().to_string())
}
