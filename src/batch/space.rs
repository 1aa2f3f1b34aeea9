//! Out of space: when a few clips in a row fail with "no space left on device", a batch
//! stops scheduling clips and says which volume is full and roughly how much the clips left
//! to do need.

use std::path::{Path, PathBuf};

/// Clips in a row failing for lack of space after which a run schedules no more (a clip
/// that succeeds in between starts the count again; bad input files do not count).
pub const OUT_OF_SPACE_STOP: usize = 3;

/// The mount point of the file system holding `path` (the last ancestor on the same
/// device) and its free space for unprivileged users, bytes (`None` if unknown).
pub fn volume_of(path: &Path) -> (PathBuf, Option<u64>) {
    use std::os::unix::fs::MetadataExt;
    let start = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut mount = start.clone();
    if let Ok(dev) = std::fs::metadata(&start).map(|m| m.dev()) {
        while let Some(parent) = mount.parent() {
            if std::fs::metadata(parent).map(|m| m.dev()).ok() != Some(dev) {
                break;
            }
            mount = parent.to_path_buf();
        }
    }
    (mount, free_bytes(&start))
}

fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a NUL-terminated path and a buffer of the right type; read only on success.
    if unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled the buffer.
    let st = unsafe { st.assume_init() };
    // u64 on 64-bit Linux, narrower elsewhere.
    #[allow(clippy::unnecessary_cast)]
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Bytes for people: `950 B`, `12.3 kB`, `4.6 MB`, `1.2 GB` (powers of 1000).
pub fn human_bytes(n: u64) -> String {
    let units = ["kB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut x = n as f64 / 1000.0;
    let mut unit = units[0];
    for u in &units[1..] {
        if x < 1000.0 {
            break;
        }
        x /= 1000.0;
        unit = u;
    }
    format!("{x:.1} {unit}")
}

/// The message of a run that stopped for lack of space. `measured`: (input bytes, output
/// bytes) of every clip whose outputs' size is known (finished in this run, recorded in
/// their `job.json`, or held in memory by a clip that failed writing them); `failed`: the
/// outputs' sizes of the clips that failed for lack of space; `not_run`: the input sizes of
/// the clips not attempted, whose outputs are estimated from the measured clips' output per
/// input byte (a long clip makes long outputs), "unknown" when there are none.
pub fn stop_message(
    out: &Path,
    measured: &[(u64, u64)],
    failed: &[u64],
    not_run: &[u64],
) -> String {
    let (mount, free) = volume_of(out);
    let free = free.map_or_else(
        || "free space unknown".into(),
        |f| {
            format!(
                "{} free once the failed clips' files were deleted",
                human_bytes(f)
            )
        },
    );
    let (inputs, outputs) = measured
        .iter()
        .fold((0u64, 0u64), |(i, o), d| (i + d.0, o + d.1));
    let known: u64 = failed.iter().sum();
    let need = if not_run.is_empty() {
        format!("{} (measured)", human_bytes(known))
    } else if inputs == 0 || outputs == 0 {
        "an unknown amount (no clip's outputs to measure)".to_string()
    } else {
        let ratio = outputs as f64 / inputs as f64;
        let guess = not_run.iter().sum::<u64>() as f64 * ratio;
        format!(
            "roughly {} ({} measured for the failed ones, the others scaled by their BVH size \
             at {ratio:.1} bytes of output per byte of BVH)",
            human_bytes(known + guess.round() as u64),
            human_bytes(known),
        )
    };
    let left = failed.len() + not_run.len();
    format!(
        "out of space: {OUT_OF_SPACE_STOP} clips in a row failed with \"no space left on device\" \
         writing into {} (the volume mounted at {}, {free}); the run stopped scheduling clips \
         ({} not run). The {left} clip{} left to do need {need}; free that much there (or give \
         another --out) and run the same command again to resume",
        out.display(),
        mount.display(),
        not_run.len(),
        if left == 1 { "" } else { "s" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_well_and_the_estimate_scales_with_the_inputs() {
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(12_345), "12.3 kB");
        assert_eq!(human_bytes(4_600_000), "4.6 MB");
        assert_eq!(human_bytes(1_230_000_000), "1.2 GB");
        let here = std::env::temp_dir();
        let m = stop_message(&here, &[(100, 1000), (300, 3000)], &[3000], &[50, 150]);
        assert!(m.contains("need roughly 5.0 kB (3.0 kB measured"), "{m}");
        assert!(m.contains("at 10.0 bytes of output per byte of BVH"), "{m}");
        assert!(m.contains("The 3 clips left to do"), "{m}");
        assert!(m.contains("(2 not run)"), "{m}");
        let m = stop_message(&here, &[], &[], &[50]);
        assert!(m.contains("an unknown amount"), "{m}");
        let m = stop_message(&here, &[(1, 1000)], &[1000], &[]);
        assert!(
            m.contains("The 1 clip left to do need 1.0 kB (measured)"),
            "{m}"
        );
        let (mount, free) = volume_of(&here);
        assert!(here.canonicalize().unwrap().starts_with(&mount));
        assert!(free.is_some());
    }
}
