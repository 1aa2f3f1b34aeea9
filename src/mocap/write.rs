//! BVH writer: [`Clip`] → standard BVH text (tab-indented, `\n` line endings).
//!
//! Numbers are written with Rust's `{}` for `f64` (shortest representation that reads back
//! to the same bits), so `parse_bvh(write_bvh_string(c))` reproduces `c` exactly.
use super::{BvhError, Clip};
use std::fmt::Write as _;
use std::path::Path;

/// BVH text of a clip.
///
/// Joints are written in `clip.joints` order (parents before children, depth-first, as
/// the reader produces them); a joint's `End Site` is written after its child joints.
/// `first_column` is not consulted: columns follow the joint order, as in any BVH file.
/// Only whole frames are written (`clip.num_frames()` lines).
pub fn write_bvh_string(clip: &Clip) -> String {
    let mut out = String::with_capacity(64 * clip.joints.len() + 10 * clip.values.len() + 64);
    out.push_str("HIERARCHY\n");
    // Open joints, innermost last.
    let mut stack: Vec<usize> = Vec::new();
    for (j, joint) in clip.joints.iter().enumerate() {
        while let Some(&top) = stack.last() {
            if Some(top) == joint.parent {
                break;
            }
            stack.pop();
            close_joint(&mut out, clip, top, stack.len());
        }
        let depth = stack.len();
        indent(&mut out, depth);
        out.push_str(if depth == 0 { "ROOT " } else { "JOINT " });
        out.push_str(&joint.name);
        out.push('\n');
        indent(&mut out, depth);
        out.push_str("{\n");
        indent(&mut out, depth + 1);
        let o = &joint.offset;
        let _ = writeln!(out, "OFFSET {} {} {}", o.x, o.y, o.z);
        indent(&mut out, depth + 1);
        let _ = write!(out, "CHANNELS {}", joint.channels.len());
        for c in &joint.channels {
            out.push(' ');
            out.push_str(c.keyword());
        }
        out.push('\n');
        stack.push(j);
    }
    while let Some(top) = stack.pop() {
        close_joint(&mut out, clip, top, stack.len());
    }

    let frames = clip.num_frames();
    out.push_str("MOTION\n");
    let _ = writeln!(out, "Frames: {frames}");
    let _ = writeln!(out, "Frame Time: {}", clip.frame_time);
    if clip.num_channels > 0 {
        for row in clip.values.chunks_exact(clip.num_channels) {
            let mut first = true;
            for v in row {
                if !first {
                    out.push(' ');
                }
                first = false;
                let _ = write!(out, "{v}");
            }
            out.push('\n');
        }
    }
    out
}

/// Write the End Site (if any) and the closing brace of joint `j` at `depth`.
fn close_joint(out: &mut String, clip: &Clip, j: usize, depth: usize) {
    if let Some(e) = clip.joints.get(j).and_then(|joint| joint.end_site) {
        indent(out, depth + 1);
        out.push_str("End Site\n");
        indent(out, depth + 1);
        out.push_str("{\n");
        indent(out, depth + 2);
        let _ = writeln!(out, "OFFSET {} {} {}", e.x, e.y, e.z);
        indent(out, depth + 1);
        out.push_str("}\n");
    }
    indent(out, depth);
    out.push_str("}\n");
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push('\t');
    }
}

/// Write a clip to a file atomically and durably with [`crate::export::write_atomic`]: a
/// temporary file in the same directory, flushed to the disk, renamed over `path`, and the
/// directory flushed. On failure the temporary file is removed and `path` is left as it was.
pub fn write_bvh(clip: &Clip, path: &Path) -> Result<(), BvhError> {
    if path.file_name().is_none() {
        return Err(BvhError::Io {
            path: path.into(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"),
        });
    }
    crate::export::write_atomic(path, write_bvh_string(clip).as_bytes()).map_err(|source| {
        BvhError::Io {
            path: path.into(),
            source,
        }
    })
}
