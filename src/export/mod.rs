//! Writing results: atomic file writes, BVH and glTF of trajectories, reports.

pub mod bvh;
pub mod gltf;
pub mod pose;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Temporary files of writes in progress, so an interrupted process can delete them.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic elsewhere while the list was locked leaves it consistent (push/retain only).
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory, then a
/// rename, so a reader (or a killed run) never sees a partial file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    pending().push(tmp.clone());
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.flush()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    pending().retain(|p| p != &tmp);
    result
}

/// Whether `path` is one of [`write_atomic`]'s temporary files (`.NAME.tmp-PID`).
pub fn is_temporary(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix('.'))
        .and_then(|n| n.rsplit_once(".tmp-"))
        .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Delete the temporary files of the writes in progress and return the lock on their list:
/// while the guard lives no new write can start, so a process that is being interrupted
/// calls this and exits holding it, leaving no partial file behind.
pub fn remove_pending_temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    let guard = pending();
    for p in guard.iter() {
        let _ = std::fs::remove_file(p);
    }
    guard
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporaries_are_recognised_and_removed() {
        assert!(is_temporary(Path::new("/a/.v01.glb.tmp-1234")));
        assert!(!is_temporary(Path::new("/a/v01.glb")));
        assert!(!is_temporary(Path::new("/a/.v01.glb.tmp-")));
        assert!(!is_temporary(Path::new("/a/x.tmp-12")));
        let dir = std::env::temp_dir().join(format!("jostle-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("a.txt");
        write_atomic(&out, b"hello").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"hello");
        let a_tmp = dir.join(format!(".a.txt.tmp-{}", std::process::id()));
        assert!(
            !pending().contains(&a_tmp),
            "finished writes leave the list"
        );
        assert!(!a_tmp.exists());
        // A write in progress (simulated) is deleted by the cleanup.
        let tmp = dir.join(format!(".b.txt.tmp-{}", std::process::id()));
        std::fs::write(&tmp, b"partial").unwrap();
        pending().push(tmp.clone());
        {
            let g = remove_pending_temporaries();
            assert!(!tmp.exists());
            drop(g);
        }
        pending().retain(|p| p != &tmp);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
