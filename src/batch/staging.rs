//! A clip's outputs appear all together or not at all.
//!
//! Every output is written and fsynced into a staging folder beside the clip's folder,
//! `PARENT/.NAME.staging.tmp-HOST-PID/` (the same file system, so renames are atomic).
//! Only when all of them, `job.json` included, are there do they move into the clip's
//! folder, one file at a time — never a whole folder: `a.bvh`'s outputs go to `OUT/a/` and
//! `a/b.bvh`'s to `OUT/a/b/`, inside it. The old `job.json` goes first, the outputs are
//! renamed over the old ones, old outputs the new run no longer makes are deleted, the
//! folder is fsynced, and the new `job.json` comes last (fsynced again). So a folder with a
//! `job.json` is always complete, and a complete earlier result stays untouched until its
//! replacement has been written in full. A failure before the move deletes the staging
//! folder; a failure during the move (a few renames: nothing to allocate but directory
//! entries) deletes the clip's outputs, since a folder without `job.json` must hold none.
//! A killed run's staging folder is a stale temporary
//! ([`crate::export::is_stale_temporary`]), deleted at the next start.

use super::OutputRecord;
use crate::export::{
    host_name, parent_dir, remove_temporary, sync_dir, track_temporary, untrack_temporary,
};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A write of a clip's outputs that failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct StageError {
    /// The file or folder.
    pub path: PathBuf,
    /// Cause.
    #[source]
    pub source: io::Error,
}

impl StageError {
    fn at(path: &Path) -> impl FnOnce(io::Error) -> StageError + '_ {
        move |source| StageError {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Whether the file system ran out of space (or of quota).
    pub fn out_of_space(&self) -> bool {
        is_out_of_space(&self.source)
    }
}

/// "No space left on device" or "disk quota exceeded".
pub fn is_out_of_space(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    ) || matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// The outputs of one clip on their way into its folder (see the module's notes).
#[derive(Debug)]
pub struct Staging {
    /// The clip's folder.
    dir: PathBuf,
    /// The staging folder beside it.
    tmp: PathBuf,
    /// The outputs written so far, in order.
    outputs: Vec<OutputRecord>,
    /// Bytes taken from the injected space limit (tests only), given back unless committed.
    charged: u64,
    /// Moved into place.
    committed: bool,
}

impl Staging {
    /// An empty staging folder for the clip folder `dir`.
    pub fn new(dir: &Path) -> Result<Self, StageError> {
        let parent = parent_dir(dir);
        let name = dir
            .file_name()
            .map_or_else(|| "clip".into(), |n| n.to_string_lossy().into_owned());
        let tmp = parent.join(format!(
            ".{name}.staging.tmp-{}-{}",
            host_name(),
            std::process::id()
        ));
        std::fs::create_dir_all(&parent).map_err(StageError::at(&parent))?;
        track_temporary(&tmp);
        let s = Staging {
            dir: dir.to_path_buf(),
            tmp,
            outputs: vec![],
            charged: 0,
            committed: false,
        };
        // A leftover of this very process (a clip of the same folder name) goes first.
        remove_temporary(&s.tmp);
        std::fs::create_dir(&s.tmp).map_err(StageError::at(&s.tmp))?;
        Ok(s)
    }

    /// Write one output (fsynced) into the staging folder; `job.json` will record it.
    pub fn write(&mut self, name: &str, data: &[u8]) -> Result<(), StageError> {
        self.put(name, data)?;
        self.outputs.push(OutputRecord::of(name, data));
        Ok(())
    }

    /// The outputs written so far.
    pub fn outputs(&self) -> &[OutputRecord] {
        &self.outputs
    }

    fn put(&mut self, name: &str, data: &[u8]) -> Result<(), StageError> {
        let p = self.tmp.join(name);
        let len = data.len() as u64;
        injected::take(len).map_err(StageError::at(&p))?;
        self.charged += len;
        let mut f = std::fs::File::create(&p).map_err(StageError::at(&p))?;
        f.write_all(data).map_err(StageError::at(&p))?;
        f.sync_all().map_err(StageError::at(&p))
    }

    /// Write `job.json` (the marker, `job`) and move everything into the clip's folder,
    /// `job.json` last. On failure the clip's folder holds none of its outputs.
    pub fn commit(mut self, job: &[u8]) -> Result<(), StageError> {
        self.put("job.json", job)?;
        // The earlier result's outputs, to delete those the new run no longer makes.
        let old: Vec<String> = super::read_job_marker(&self.dir, "")
            .ok()
            .flatten()
            .map(|m| m.outputs.into_iter().map(|o| o.name).collect())
            .unwrap_or_default();
        let old: Vec<&str> = old
            .iter()
            .map(String::as_str)
            .filter(|n| plain(n))
            .collect();
        let mut started = false;
        match self.move_into_place(&old, &mut started) {
            Ok(()) => {
                self.committed = true;
                Ok(())
            }
            // Nothing touched yet: the earlier result stays as it was.
            Err(e) if !started => Err(e),
            Err(e) => {
                let new: Vec<&str> = self.outputs.iter().map(|o| o.name.as_str()).collect();
                for name in new.iter().chain(&old).chain(&["job.json"]) {
                    let _ = std::fs::remove_file(self.dir.join(name));
                }
                // Gone if empty; a folder that holds nested clips' folders stays.
                let _ = std::fs::remove_dir(&self.dir);
                let _ = sync_dir(&self.dir);
                Err(e)
            }
        }
    }

    /// `started` becomes true once the folder's `job.json` is gone (from then on a failure
    /// leaves old and new outputs mixed, to be deleted).
    fn move_into_place(&self, old: &[&str], started: &mut bool) -> Result<(), StageError> {
        let dir = &self.dir;
        let at = StageError::at;
        if !dir.is_dir() {
            std::fs::create_dir_all(dir).map_err(at(dir))?;
            let parent = parent_dir(dir);
            sync_dir(&parent).map_err(at(&parent))?;
        }
        // No job.json while old and new outputs are mixed.
        let job = dir.join("job.json");
        match std::fs::remove_file(&job) {
            Ok(()) => {
                *started = true;
                sync_dir(dir).map_err(at(dir))?
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => *started = true,
            Err(e) => return Err(at(&job)(e)),
        }
        for o in &self.outputs {
            let to = dir.join(&o.name);
            std::fs::rename(self.tmp.join(&o.name), &to).map_err(at(&to))?;
        }
        for name in old {
            if !self.outputs.iter().any(|o| o.name == *name) {
                let p = dir.join(name);
                match std::fs::remove_file(&p) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(at(&p)(e)),
                    _ => {}
                }
            }
        }
        sync_dir(dir).map_err(at(dir))?;
        std::fs::rename(self.tmp.join("job.json"), &job).map_err(at(&job))?;
        sync_dir(dir).map_err(at(dir))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.committed {
            let _ = std::fs::remove_dir(&self.tmp);
        } else {
            remove_temporary(&self.tmp);
            injected::give_back(self.charged);
        }
        untrack_temporary(&self.tmp);
    }
}

/// A bare file name (what `job.json` may name for deletion: nothing outside the folder).
fn plain(name: &str) -> bool {
    !name.is_empty() && name != "job.json" && Path::new(name).file_name().is_some_and(|n| n == name)
}

/// Test hook, not an interface: with `JOSTLE_TEST_DISK_BYTES=N` in the environment, the
/// batch's staged writes behave as if the output folder's file system had `N` bytes free
/// (a write that does not fit fails with ENOSPC before creating its file; a failed clip's
/// bytes are given back, as deleting its files would free them). `tests/batch.rs` uses it
/// where it cannot mount a small tmpfs; nothing else reads it.
mod injected {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn free() -> Option<&'static AtomicU64> {
        static FREE: OnceLock<Option<AtomicU64>> = OnceLock::new();
        FREE.get_or_init(|| {
            let n = std::env::var("JOSTLE_TEST_DISK_BYTES").ok()?;
            n.trim().parse().ok().map(AtomicU64::new)
        })
        .as_ref()
    }

    pub(super) fn take(n: u64) -> std::io::Result<()> {
        match free() {
            None => Ok(()),
            Some(f) => f
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |x| x.checked_sub(n))
                .map(|_| ())
                .map_err(|_| std::io::Error::from_raw_os_error(libc::ENOSPC)),
        }
    }

    pub(super) fn give_back(n: u64) {
        if let Some(f) = free() {
            f.fetch_add(n, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("jostle-staging-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn outputs_move_in_together_and_replace_the_old_ones() {
        let out = fresh("commit");
        let dir = out.join("a");
        // An earlier result with three outputs, and a nested clip's folder inside it.
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("b/job.json"), b"nested").unwrap();
        for n in ["v01.glb", "v02.glb"] {
            std::fs::write(dir.join(n), b"old").unwrap();
        }
        let old = r#"{"input_sha256":"","options_sha256":"","outputs":[
            {"name":"v01.glb","bytes":3,"sha256":""},{"name":"v02.glb","bytes":3,"sha256":""},
            {"name":"../escape","bytes":0,"sha256":""}],
            "timing":{"load_s":0,"inverse_s":0,"simulate_s":0,"export_s":0,"total_s":0}}"#;
        std::fs::write(dir.join("job.json"), old).unwrap();
        std::fs::write(out.join("escape"), b"must stay").unwrap();
        let mut s = Staging::new(&dir).unwrap();
        s.write("v01.glb", b"new").unwrap();
        // Until the commit the old result is untouched.
        assert_eq!(std::fs::read(dir.join("v01.glb")).unwrap(), b"old");
        assert_eq!(std::fs::read_to_string(dir.join("job.json")).unwrap(), old);
        assert_eq!(s.outputs().len(), 1);
        s.commit(b"{}").unwrap();
        assert_eq!(names(&dir), ["b", "job.json", "v01.glb"]);
        assert_eq!(std::fs::read(dir.join("v01.glb")).unwrap(), b"new");
        assert_eq!(std::fs::read(dir.join("job.json")).unwrap(), b"{}");
        assert_eq!(std::fs::read(dir.join("b/job.json")).unwrap(), b"nested");
        assert_eq!(std::fs::read(out.join("escape")).unwrap(), b"must stay");
        assert_eq!(names(&out), ["a", "escape"], "no staging folder left");
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn an_abandoned_staging_leaves_nothing() {
        let out = fresh("drop");
        let dir = out.join("c");
        let mut s = Staging::new(&dir).unwrap();
        s.write("v01.glb", b"partial").unwrap();
        assert_eq!(names(&out).len(), 1, "the staging folder");
        assert!(crate::export::is_temporary(&out.join(&names(&out)[0])));
        drop(s);
        assert!(names(&out).is_empty());
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn out_of_space_is_recognised() {
        assert!(is_out_of_space(&io::Error::from_raw_os_error(libc::ENOSPC)));
        assert!(is_out_of_space(&io::Error::from_raw_os_error(libc::EDQUOT)));
        assert!(!is_out_of_space(&io::Error::from_raw_os_error(
            libc::EACCES
        )));
    }
}
