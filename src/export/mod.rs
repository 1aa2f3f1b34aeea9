//! Writing results: atomic file writes, BVH and glTF of trajectories, reports.

pub mod bvh;
pub mod gltf;
pub mod npz;
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

/// Write `bytes` to `path` atomically and durably: a temporary file in the same directory,
/// flushed to the disk (`fsync`), renamed over `path`, then the directory flushed so the
/// rename itself survives a power cut (what git and SQLite do). A reader, a killed run or a
/// crashed machine sees the old file or the whole new one, never a partial or empty file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        host_name(),
        std::process::id()
    ));
    track_temporary(&tmp);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.flush()?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    untrack_temporary(&tmp);
    result?;
    sync_dir(&dir)
}

/// The folder a file goes into (`.` for a bare name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Flush a directory's entries to the disk (after a rename or a new file in it). File
/// systems that cannot sync a directory (`EINVAL`, `ENOTSUP`: some network and FUSE file
/// systems) are left to their own guarantees; other errors (`EIO`) are returned.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    let result = std::fs::File::open(dir).and_then(|d| d.sync_all());
    match result {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOTSUP)) => Ok(()),
        other => other,
    }
}

/// This machine's host name as it goes into temporary file names (letters, digits, `.`
/// and `-` only), so that runs on several machines sharing one output folder (a Slurm
/// array on a network file system) can tell their own temporaries from the others'.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates on success.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name: String = String::from_utf8_lossy(&buf[..if ok { len } else { 0 }])
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
        .collect();
    if name.is_empty() { "host".into() } else { name }
}

/// The writer of one of [`write_atomic`]'s temporary files (`.NAME.tmp-HOST-PID`, or
/// `.NAME.tmp-PID` as older versions wrote them): host (if named) and process id.
pub fn temporary_writer(path: &Path) -> Option<(Option<String>, u32)> {
    let (_, tail) = path
        .file_name()?
        .to_str()?
        .strip_prefix('.')?
        .rsplit_once(".tmp-")?;
    let (host, pid) = match tail.rsplit_once('-') {
        Some((h, p)) if !h.is_empty() => (Some(h.to_string()), p),
        Some(_) => return None,
        None => (None, tail),
    };
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((host, pid.parse().ok()?))
}

/// Whether `path` is one of [`write_atomic`]'s temporary files.
pub fn is_temporary(path: &Path) -> bool {
    temporary_writer(path).is_some()
}

/// Age past which another machine's temporary file counts as abandoned: one write takes
/// well under a second, so an hour-old temporary has no writer left.
pub const FOREIGN_TEMPORARY_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// Whether a temporary file was abandoned by its writer: written on this machine by a
/// process that no longer runs, or on another machine more than
/// [`FOREIGN_TEMPORARY_AGE`] ago. A temporary of a live writer (another shard of the
/// same batch writing into the same folder) is never stale.
pub fn is_stale_temporary(path: &Path) -> bool {
    let Some((host, pid)) = temporary_writer(path) else {
        return false;
    };
    let here = host.as_deref().is_none_or(|h| h == host_name());
    if here {
        return !process_is_alive(pid);
    }
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > FOREIGN_TEMPORARY_AGE)
}

/// Whether a process with this id runs on this machine (signal 0 probes without sending).
fn process_is_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Register a temporary file or folder (a batch clip's staging folder) as in progress, so
/// that [`remove_pending_temporaries`] deletes it if the process is interrupted. Its name
/// must follow [`write_atomic`]'s pattern (`.NAME.tmp-HOST-PID`) so that a run killed
/// with SIGKILL leaves something [`is_stale_temporary`] recognises.
pub fn track_temporary(path: &Path) {
    pending().push(path.to_path_buf());
}

/// The temporary is finished with (renamed into place or deleted).
pub fn untrack_temporary(path: &Path) {
    pending().retain(|p| p != path);
}

/// Delete a temporary file, or a temporary folder with what it holds (a few tries: a
/// worker thread may still be adding a file to it).
pub fn remove_temporary(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            for _ in 0..3 {
                if std::fs::remove_dir_all(path).is_ok() || !path.exists() {
                    return;
                }
            }
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Delete the temporary files (and staging folders) of the writes in progress and return
/// the lock on their list: while the guard lives no new write can start, so a process that
/// is being interrupted calls this and exits holding it, leaving no partial file behind.
pub fn remove_pending_temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    let guard = pending();
    for p in guard.iter() {
        remove_temporary(p);
    }
    guard
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporaries_are_recognised_and_removed() {
        assert!(is_temporary(Path::new("/a/.v01.glb.tmp-1234")));
        assert!(is_temporary(Path::new(
            "/a/.v01.glb.tmp-node-07.cluster-1234"
        )));
        assert_eq!(
            temporary_writer(Path::new("/a/.v01.glb.tmp-node-07-99")),
            Some((Some("node-07".into()), 99))
        );
        assert!(!is_temporary(Path::new("/a/.v01.glb.tmp--12")));
        assert!(!is_temporary(Path::new("/a/v01.glb")));
        assert!(!is_temporary(Path::new("/a/.v01.glb.tmp-")));
        assert!(!is_temporary(Path::new("/a/x.tmp-12")));
        let dir = std::env::temp_dir().join(format!("jostle-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("a.txt");
        write_atomic(&out, b"hello").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"hello");
        let a_tmp = dir.join(format!(".a.txt.tmp-{}-{}", host_name(), std::process::id()));
        assert!(
            !pending().contains(&a_tmp),
            "finished writes leave the list"
        );
        assert!(!a_tmp.exists());
        // A write in progress (simulated) is listed and deleted by the cleanup. Only this
        // test's entry is cleaned here: remove_pending_temporaries() would also delete the
        // staging folders of the tests running beside this one in the same process (it
        // did: a staging test lost its job.json). The whole cleanup runs in
        // tests/batch.rs's interrupted batch, in a process of its own.
        let tmp = dir.join(format!(".b.txt.tmp-{}", std::process::id()));
        std::fs::write(&tmp, b"partial").unwrap();
        track_temporary(&tmp);
        {
            let g = pending();
            assert!(g.contains(&tmp), "a write in progress is listed");
            for p in g.iter().filter(|p| **p == tmp) {
                remove_temporary(p);
            }
        }
        assert!(!tmp.exists());
        untrack_temporary(&tmp);
        assert!(!pending().contains(&tmp));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_abandoned_temporaries_are_stale() {
        let dir = std::env::temp_dir().join(format!("jostle-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let me = std::process::id();
        // a live writer here (this process), in both name forms: not stale
        let live = dir.join(format!(".a.glb.tmp-{}-{me}", host_name()));
        let live_old_form = dir.join(format!(".b.glb.tmp-{me}"));
        // a writer here that has exited: a child process we waited for
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = child.id();
        child.wait().unwrap();
        let dead = dir.join(format!(".c.glb.tmp-{}-{dead_pid}", host_name()));
        // another machine's fresh temporary: its writer may be running there
        let foreign = dir.join(format!(".d.glb.tmp-{}x-{dead_pid}", host_name()));
        for p in [&live, &live_old_form, &dead, &foreign] {
            std::fs::write(p, b"partial").unwrap();
        }
        assert!(!is_stale_temporary(&live));
        assert!(!is_stale_temporary(&live_old_form));
        assert!(is_stale_temporary(&dead));
        assert!(!is_stale_temporary(&foreign));
        assert!(!is_stale_temporary(&dir.join("v01.glb")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
