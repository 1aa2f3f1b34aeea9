//! Errors of the BVH reader/writer.
use std::path::PathBuf;

/// A BVH file could not be read or written. Messages name the file and line.
#[derive(Debug, thiserror::Error)]
pub enum BvhError {
    /// The file could not be opened, read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The text is not valid BVH.
    #[error("{file}:{line}: {message}")]
    Parse {
        /// File name (or `<memory>`).
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
}
