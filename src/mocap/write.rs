//! BVH writer: [`Clip`] → standard BVH text (tab-indented, `\n` line endings).
//!
//! Numbers are written as Rust's `{}` writes an `f64` (the shortest representation that
//! reads back to the same bits, positional, no exponent), so `parse_bvh(write_bvh_string(c))`
//! reproduces `c` exactly. The motion's numbers take the shortest digits from Ryū (the
//! `ryu` crate, serde_json's float printer), ~3× faster than core's formatter, and lay them
//! out as `{}` does ([`push_f64`]): the same bytes.
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
        let mut digits = ryu::Buffer::new();
        for row in clip.values.chunks_exact(clip.num_channels) {
            let mut first = true;
            for v in row {
                if !first {
                    out.push(' ');
                }
                first = false;
                push_f64(&mut out, *v, &mut digits);
            }
            out.push('\n');
        }
    }
    out
}

/// Append `v` exactly as `write!(out, "{v}")` would (the shortest digits that read back as
/// `v`, written positionally: `-0`, `0.0000001`, `100000000000000000000`), taking the
/// digits from Ryū, whose shortest representation is the one core's formatter finds:
/// Ryū's `ddd.ddd` is taken as it is, its `d.ddde±x` re-laid here. A BVH export writes ~10⁵ numbers a
/// second of motion; core's `Display` spent ~900 instructions on each. Non-finite values
/// go through `Display` itself.
pub(crate) fn push_f64(out: &mut String, v: f64, buffer: &mut ryu::Buffer) {
    if !v.is_finite() || may_tie(v) {
        let _ = write!(out, "{v}");
        return;
    }
    let text = buffer.format_finite(v);
    // Ryū writes positionally from 1e-5 to 1e16 (`-ddd.ddd`, `0.000ddd`), as `{}` does (an
    // integer's `.0` aside, and integers went to `{}` above): most numbers are done here
    if !text.as_bytes().contains(&b'e') {
        out.push_str(text);
        return;
    }
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    // Ryū writes `int[.frac][e±x]`, ASCII
    let (mut dot, mut e) = (None, text.len());
    for (i, c) in text.bytes().enumerate() {
        match c {
            b'.' => dot = Some(i),
            b'e' => {
                e = i;
                break;
            }
            _ => {}
        }
    }
    let exponent = match text.get(e + 1..).filter(|x| !x.is_empty()) {
        None => 0,
        Some(x) => match x.parse::<i64>() {
            Ok(x) => x,
            Err(_) => {
                let _ = write!(out, "{v}");
                return;
            }
        },
    };
    let (int, frac) = match dot {
        Some(d) => (&text[..d], &text[d + 1..e]),
        None => (&text[..e], ""),
    };
    // the significant digits are `int` then `frac` without the zeros around them; the
    // decimal point falls after `point` of them (ASCII: byte counts are char counts)
    let leading = |d: &str| d.bytes().take_while(|&b| b == b'0').count();
    let trailing = |d: &str| d.bytes().rev().take_while(|&b| b == b'0').count();
    let lead = leading(int);
    let (int, frac, point) = if lead == int.len() {
        let skip = leading(frac);
        (&frac[skip..], "", exponent - skip as i64)
    } else {
        (&int[lead..], frac, exponent + (int.len() - lead) as i64)
    };
    let (int, frac) = match trailing(frac) {
        t if t == frac.len() => (&int[..int.len() - trailing(int)], ""),
        t => (int, &frac[..frac.len() - t]),
    };
    if negative {
        out.push('-');
    }
    let len = (int.len() + frac.len()) as i64;
    if len == 0 {
        out.push('0');
        return;
    }
    // digits [from, to) of int ++ frac
    let push_digits = |out: &mut String, from: usize, to: usize| {
        let n = int.len();
        if from < n {
            out.push_str(&int[from..to.min(n)]);
        }
        if to > n {
            out.push_str(&frac[from.max(n) - n..to - n]);
        }
    };
    let zeros = |out: &mut String, n: i64| out.extend(std::iter::repeat_n('0', n as usize));
    if point <= 0 {
        out.push_str("0.");
        zeros(out, -point);
        push_digits(out, 0, len as usize);
    } else if point >= len {
        push_digits(out, 0, len as usize);
        zeros(out, point - len);
    } else {
        push_digits(out, 0, point as usize);
        out.push('.');
        push_digits(out, point as usize, len as usize);
    }
}

/// Whether two shortest representations of `v` might be equally near it, where Ryū and
/// core's formatter break the tie differently (Ryū to even: 1414213562373095.25 is
/// `…095.2` to it, `…095.3` to `{}`). A tie puts `v` exactly halfway between two numbers
/// of L ≤ 17 significant digits, so `v`'s exact decimal expansion has L + 1 ≤ 18 digits:
/// with v = m / 2ᵏ (m odd) that is m·5ᵏ < 10¹⁸. Integers (k ≤ 0) count as possible ties
/// too. Computed angles and positions carry 30–50 fractional bits and never are.
fn may_tie(v: f64) -> bool {
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1 << 52) - 1);
    let (mantissa, exponent) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    if mantissa == 0 {
        return true;
    }
    let twos = mantissa.trailing_zeros();
    let (m, k) = (mantissa >> twos, -(exponent + i64::from(twos)));
    if k <= 0 {
        return true;
    }
    // m < 2⁵³ and 5ᵏ ≤ 5²⁷ < 2⁶³: the product fits in 128 bits
    k <= 27 && u128::from(m) * 5u128.pow(k as u32) < 10u128.pow(18)
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

#[cfg(test)]
mod tests {
    use super::push_f64;

    fn as_written(v: f64) -> String {
        let mut out = String::new();
        push_f64(&mut out, v, &mut ryu::Buffer::new());
        out
    }

    /// Ryū's digits laid out as `{}` lays them: the same text as `format!("{v}")` for the
    /// edges of the layout (zeros, powers of ten around Ryū's switches to exponents,
    /// subnormals, the extremes, non-finite values) and for a million numbers: random bit
    /// patterns (every exponent) and mocap-like values (angles and positions, some with
    /// few decimals).
    #[test]
    fn numbers_are_written_as_display_writes_them() {
        let mut edges = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            0.3,
            2.5,
            123.456,
            -90.0,
            180.0,
            1e-300,
            5e-324,
            -5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            9007199254740993.0,
            123456789012345680000.0,
        ];
        for e in -30..=30 {
            for m in [1.0, 1.5, 9.999999999999999, 2.0_f64.sqrt()] {
                edges.push(m * 10f64.powi(e));
                edges.push(-m * 10f64.powi(e));
            }
        }
        for v in edges {
            assert_eq!(as_written(v), format!("{v}"), "{v:e}");
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || super::super::random_bits(&mut seed);
        for _ in 0..1_000_000 {
            let r = next();
            let v = match r % 5 {
                0 => f64::from_bits(next()),
                // around 2⁵⁰–2⁵³, with few fractional bits: the ties
                4 => (next() >> 11) as f64 / 8.0 + (next() % 4) as f64 * 0.25,
                1 => (next() >> 11) as f64 / (1u64 << 53) as f64 * 720.0 - 360.0,
                2 => ((next() >> 11) as f64 / (1u64 << 53) as f64 * 2e5).round() / 1e4 - 10.0,
                _ => ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 1e-3,
            };
            if v.is_finite() {
                assert_eq!(as_written(v), format!("{v}"), "{:#x}", v.to_bits());
            }
        }
    }
}
