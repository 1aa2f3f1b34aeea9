//! Finding a library's clips, assigning them to shards, naming their outputs, hashing inputs.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// One clip of the library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClipFile {
    /// Path relative to the library root, with `/` separators (the clip's id everywhere:
    /// summaries, shard assignment, output layout).
    pub rel: String,
    /// Full path.
    pub path: PathBuf,
    /// File size, bytes (largest clips are started first).
    pub bytes: u64,
}

/// Every `.bvh` file (any case) under `root`, recursively, sorted by relative path;
/// `exclude` (the output folder, when it sits inside the library) is skipped. Symbolic
/// links to folders are not followed (no cycles).
pub fn discover_clips(root: &Path, exclude: Option<&Path>) -> std::io::Result<Vec<ClipFile>> {
    let exclude = exclude.and_then(|e| e.canonicalize().ok());
    let mut out = vec![];
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if exclude
            .as_ref()
            .is_some_and(|e| dir.canonicalize().is_ok_and(|d| &d == e))
        {
            continue;
        }
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        for entry in entries {
            let entry = entry?;
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("bvh"))
            {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                out.push(ClipFile { rel, path, bytes });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// A shard `i/N`: this process handles clip `c` iff `shard_of(c.rel, N) == i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Index, 0-based.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("shard must be I/N with 0 <= I < N (e.g. 0/4), got `{s}`");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The shard a clip belongs to: a hash of its relative path, so the assignment is the same
/// on every machine and does not move when other clips are added to the library.
pub fn shard_of(rel: &str, count: usize) -> usize {
    let d = Sha256::digest(rel.as_bytes());
    let mut x = [0u8; 8];
    x.copy_from_slice(&d[..8]);
    (u64::from_le_bytes(x) % count.max(1) as u64) as usize
}

/// Lower-case hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Size and lower-case hex SHA-256 of a file, read in 1 MiB pieces (never whole).
pub fn file_sha256_hex(path: &Path) -> std::io::Result<(u64, String)> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        h.update(&buf[..n]);
        len += n as u64;
    }
    Ok((len, hex(&h.finalize())))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a clip's outputs go: `OUT/<relative path without .bvh>/` (mirrors the library).
pub fn clip_out_dir(out: &Path, rel: &str) -> PathBuf {
    let stem = rel
        .strip_suffix(".bvh")
        .or_else(|| rel.strip_suffix(".BVH"))
        .unwrap_or(rel);
    let mut p = out.to_path_buf();
    for part in stem.split('/') {
        p.push(part);
    }
    p
}

/// File name of variation `v` (0-based) with extension `ext`: `v01.glb`, `v01.bvh`, ….
pub fn variation_file(v: usize, ext: &str) -> String {
    format!("v{:02}.{ext}", v + 1)
}

/// Delete temporary files that a killed earlier run left under `dir` (the
/// `.NAME.tmp-HOST-PID` files of [`crate::export::write_atomic`] and the clips' staging
/// folders, `.NAME.staging.tmp-HOST-PID`, with what they hold); returns how many.
/// Only abandoned ones ([`crate::export::is_stale_temporary`]): the shards of a Slurm
/// array write into one folder, and a shard that starts late must not delete the files
/// another shard is writing.
pub fn remove_stale_temporaries(dir: &Path) -> usize {
    let mut removed = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if crate::export::is_stale_temporary(&path) {
                crate::export::remove_temporary(&path);
                removed += usize::from(!path.exists());
            } else if is_dir {
                stack.push(path);
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_and_parse() {
        let names: Vec<String> = (0..500)
            .map(|i| format!("lib/sub{}/clip{i}.bvh", i % 7))
            .collect();
        for n in 1..6 {
            let mut counts = vec![0; n];
            for r in &names {
                counts[shard_of(r, n)] += 1;
            }
            assert_eq!(counts.iter().sum::<usize>(), names.len());
            // Roughly even: every shard within 35 % of the mean.
            let mean = names.len() as f64 / n as f64;
            assert!(
                counts
                    .iter()
                    .all(|&c| (c as f64 - mean).abs() < 0.35 * mean),
                "{counts:?}"
            );
        }
        assert_eq!(
            "1/3".parse::<Shard>().unwrap(),
            Shard { index: 1, count: 3 }
        );
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn output_layout_mirrors_the_library() {
        let p = clip_out_dir(Path::new("/o"), "cmu/01/01_01.bvh");
        assert_eq!(p, Path::new("/o/cmu/01/01_01"));
        assert_eq!(variation_file(0, "glb"), "v01.glb");
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
