//! BVH reader: text → [`Clip`].
//!
//! Line-oriented, whitespace-tokenised, strict about structure, lenient about layout:
//! CRLF / LF / CR line endings (also mixed), tabs, trailing whitespace and blank lines
//! anywhere, case-insensitive keywords, braces on the keyword's line or the next one,
//! `Frames:`/`Frame Time:` with any spacing. Every error names the 1-based line.
//!
//! Never panics and never allocates more than the input could fill.
use super::{BvhError, BvhJoint, Channel, Clip};
use nalgebra::Vector3;
use std::path::Path;
use std::str::SplitAsciiWhitespace;

/// The powers of ten an `f64` holds exactly: 10ᵏ = 2ᵏ·5ᵏ, and 5ᵏ < 2⁵³ up to k = 22.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `t` as `str::parse::<f64>` reads it, the same bits: a motion value as BVH files write
/// them (`-12.345678`: a sign, at most 19 digits, a point, no exponent) whose digits make
/// an integer m ≤ 2⁵³ with at most 22 after the point is m / 10ᵏ, one division of two
/// exact numbers and so the correctly rounded value (Clinger's fast path, which core's
/// parser also takes for these after its general scan); anything else goes to
/// `str::parse`. A clip is ~10⁵ numbers a second of motion; this halves their parse.
fn parse_f64(t: &str) -> Result<f64, std::num::ParseFloatError> {
    plain_decimal(t.as_bytes()).map_or_else(|| t.parse::<f64>(), Ok)
}

/// [`parse_f64`]'s fast path: `None` for what it does not take.
fn plain_decimal(text: &[u8]) -> Option<f64> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mut m, mut count, mut after_point, mut point) = (0u64, 0usize, 0usize, false);
    for &c in digits {
        match c {
            b'0'..=b'9' => {
                count += 1;
                if count > 19 {
                    return None;
                }
                m = m * 10 + u64::from(c - b'0');
                after_point += usize::from(point);
            }
            b'.' if !point => point = true,
            _ => return None,
        }
    }
    if count == 0 || m > 1 << 53 {
        return None;
    }
    let v = m as f64 / *EXACT_POWERS_OF_TEN.get(after_point)?;
    Some(if negative { -v } else { v })
}

/// Deepest joint nesting accepted (real skeletons are < 50 deep); bounds the stack and the
/// size of written files (indentation grows with depth).
const MAX_DEPTH: usize = 1000;

/// Parse BVH text. `file` names the source in error messages.
pub fn parse_bvh(text: &str, file: &str) -> Result<Clip, BvhError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Parser {
        file,
        tokens: Tokens::new(text),
    }
    .parse()
}

/// Read and parse a BVH file (bytes must be UTF-8 or ASCII text).
pub fn load_bvh(path: &Path) -> Result<Clip, BvhError> {
    let bytes = std::fs::read(path).map_err(|source| BvhError::Io {
        path: path.into(),
        source,
    })?;
    let name = path.display().to_string();
    match std::str::from_utf8(&bytes) {
        Ok(text) => parse_bvh(text, &name),
        Err(e) => {
            let at = e.valid_up_to();
            let head = bytes.get(..at).unwrap_or(&[]);
            let bad = bytes.get(at).copied().unwrap_or(0);
            Err(BvhError::Parse {
                file: name,
                line: count_line_breaks(head) + 1,
                message: format!(
                    "invalid UTF-8 (byte 0x{bad:02x} at byte offset {at}): a BVH file must be \
                     ASCII/UTF-8 text; re-save it as UTF-8 or check that it is a BVH file"
                ),
            })
        }
    }
}

/// Number of line breaks in `bytes`, counting `\r\n`, `\n` and a lone `\r` once each
/// (the same rule the reader uses for line numbers).
fn count_line_breaks(bytes: &[u8]) -> usize {
    let mut n = 0;
    let mut prev_cr = false;
    for &b in bytes {
        match b {
            b'\n' if prev_cr => {}
            b'\n' | b'\r' => n += 1,
            _ => {}
        }
        prev_cr = b == b'\r';
    }
    n
}

/// Lines of the text with 1-based numbers. `\r\n`, `\n` and `\r` all end a line; no
/// empty line is produced after a final line break (like `str::lines`).
struct Lines<'a> {
    rest: &'a str,
    /// Number of the line returned last (0 before the first).
    line: usize,
}

impl<'a> Lines<'a> {
    fn next_line(&mut self) -> Option<(usize, &'a str)> {
        if self.rest.is_empty() {
            return None;
        }
        let bytes = self.rest.as_bytes();
        let (end, skip) = match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) => {
                let crlf = bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) == Some(&b'\n');
                (i, if crlf { 2 } else { 1 })
            }
            None => (bytes.len(), 0),
        };
        // `end` and `end + skip` sit next to ASCII bytes, so they are char boundaries.
        let line = self.rest.get(..end).unwrap_or("");
        self.rest = self.rest.get(end + skip..).unwrap_or("");
        self.line += 1;
        Some((self.line, line))
    }
}

/// Whitespace-separated tokens that know their line.
struct Tokens<'a> {
    lines: Lines<'a>,
    cur: SplitAsciiWhitespace<'a>,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Self {
        Tokens {
            lines: Lines {
                rest: text,
                line: 0,
            },
            cur: "".split_ascii_whitespace(),
        }
    }

    /// Current line number (the line of the token returned last; at least 1).
    fn line(&self) -> usize {
        self.lines.line.max(1)
    }

    /// Next token, on this line or a later one.
    fn next(&mut self) -> Option<(usize, &'a str)> {
        loop {
            if let Some(t) = self.cur.next() {
                return Some((self.lines.line, t));
            }
            let (_, l) = self.lines.next_line()?;
            self.cur = l.split_ascii_whitespace();
        }
    }

    /// Next token on the current line only.
    fn next_on_line(&mut self) -> Option<&'a str> {
        self.cur.next()
    }
}

/// An open `{ ... }` block of the hierarchy.
enum Block {
    Joint {
        index: usize,
        has_offset: bool,
        has_channels: bool,
        has_child: bool,
    },
    EndSite {
        owner: usize,
        line: usize,
        offset: Option<Vector3<f64>>,
    },
}

struct Parser<'a, 'f> {
    file: &'f str,
    tokens: Tokens<'a>,
}

fn is(tok: &str, keyword: &str) -> bool {
    tok.eq_ignore_ascii_case(keyword)
}

impl<'a> Parser<'a, '_> {
    fn err(&self, line: usize, message: impl Into<String>) -> BvhError {
        BvhError::Parse {
            file: self.file.to_string(),
            line: line.max(1),
            message: message.into(),
        }
    }

    fn parse(mut self) -> Result<Clip, BvhError> {
        let (joints, num_channels) = self.hierarchy()?;
        let motion_line = self.tokens.line();
        if num_channels == 0 {
            return Err(self.err(
                motion_line,
                "the hierarchy declares no CHANNELS at all, so there is no motion to read",
            ));
        }
        let mut lines = Lines {
            rest: self.tokens.lines.rest,
            line: self.tokens.lines.line,
        };
        let (frames, frame_time, frames_line) = self.motion_header(&mut lines, motion_line)?;
        let values = self.frames(&mut lines, frames, frames_line, num_channels)?;
        Ok(Clip {
            joints,
            frame_time,
            num_channels,
            values,
        })
    }

    // ----------------------------------------------------------------- hierarchy

    /// Parse up to and including the `MOTION` line. Returns joints and total channels.
    fn hierarchy(&mut self) -> Result<(Vec<BvhJoint>, usize), BvhError> {
        match self.tokens.next() {
            None => {
                return Err(self.err(
                    1,
                    "file is empty: expected a BVH file starting with HIERARCHY",
                ));
            }
            Some((_, t)) if is(t, "HIERARCHY") => {}
            Some((line, t)) => {
                return Err(self.err(
                    line,
                    format!(
                        "expected HIERARCHY at the start of a BVH file, found '{}'",
                        shorten(t)
                    ),
                ));
            }
        }
        if let Some(t) = self.tokens.next_on_line() {
            return Err(self.err(
                self.tokens.line(),
                format!("unexpected '{}' after HIERARCHY", shorten(t)),
            ));
        }

        let mut joints: Vec<BvhJoint> = Vec::new();
        let mut stack: Vec<Block> = Vec::new();
        let mut columns = 0usize;
        let mut root_line: Option<usize> = None;

        loop {
            let Some((line, tok)) = self.tokens.next() else {
                let at = self.tokens.line();
                return Err(match (root_line, stack.len()) {
                    (None, _) => self.err(at, "file ends before ROOT: no skeleton found"),
                    (Some(_), 0) => self.err(
                        at,
                        "file ends after the hierarchy: MOTION section missing (truncated?)",
                    ),
                    (Some(_), n) => self.err(
                        at,
                        format!("file ends inside the hierarchy ({n} '}}' missing): truncated?"),
                    ),
                });
            };

            if is(tok, "ROOT") || is(tok, "JOINT") {
                let is_root = is(tok, "ROOT");
                let parent = match stack.last_mut() {
                    Some(Block::Joint {
                        index, has_child, ..
                    }) => {
                        *has_child = true;
                        Some(*index)
                    }
                    Some(Block::EndSite { .. }) => {
                        return Err(self.err(
                            line,
                            format!("{tok} inside an End Site block: End Site takes only OFFSET"),
                        ));
                    }
                    None => None,
                };
                if is_root {
                    if let Some(first) = root_line {
                        return Err(self.err(
                            line,
                            format!(
                                "second ROOT (the first is on line {first}): only one skeleton \
                                 per file is supported"
                            ),
                        ));
                    }
                    if parent.is_some() {
                        return Err(self.err(line, "ROOT inside a joint: use JOINT for children"));
                    }
                    root_line = Some(line);
                } else if parent.is_none() {
                    return Err(self.err(
                        line,
                        match root_line {
                            None => "JOINT before ROOT: the hierarchy must start with ROOT",
                            Some(_) => "JOINT after the ROOT block was closed (extra '}' above?)",
                        },
                    ));
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(self.err(
                        line,
                        format!(
                            "joints nested more than {MAX_DEPTH} deep: not a skeleton \
                             (missing '}}'?)"
                        ),
                    ));
                }
                let name = self.joint_name(line, tok)?;
                joints.push(BvhJoint {
                    name,
                    parent,
                    offset: Vector3::zeros(),
                    channels: Vec::new(),
                    first_column: columns,
                    end_site: None,
                    line,
                });
                stack.push(Block::Joint {
                    index: joints.len() - 1,
                    has_offset: false,
                    has_channels: false,
                    has_child: false,
                });
            } else if is(tok, "End") {
                match self.tokens.next_on_line() {
                    Some(s) if is(s, "Site") => {}
                    Some(s) => {
                        return Err(self.err(
                            line,
                            format!("unknown keyword 'End {}': expected 'End Site'", shorten(s)),
                        ));
                    }
                    None => return Err(self.err(line, "'End' without 'Site': expected 'End Site'")),
                }
                let owner = match stack.last() {
                    Some(Block::Joint { index, .. }) => *index,
                    Some(Block::EndSite { .. }) => {
                        return Err(self.err(line, "End Site inside an End Site block"));
                    }
                    None => {
                        return Err(self.err(line, "End Site outside of any joint"));
                    }
                };
                if joints.get(owner).is_some_and(|j| j.end_site.is_some()) {
                    return Err(self.err(
                        line,
                        "second End Site in one joint: a joint can have at most one",
                    ));
                }
                self.open_brace(line, "End Site")?;
                stack.push(Block::EndSite {
                    owner,
                    line,
                    offset: None,
                });
            } else if is(tok, "OFFSET") {
                let v = self.offset(line)?;
                match stack.last_mut() {
                    Some(Block::Joint {
                        index, has_offset, ..
                    }) => {
                        if *has_offset {
                            return Err(self.err(line, "second OFFSET in one joint"));
                        }
                        *has_offset = true;
                        if let Some(j) = joints.get_mut(*index) {
                            j.offset = v;
                        }
                    }
                    Some(Block::EndSite { offset, .. }) => {
                        if offset.is_some() {
                            return Err(self.err(line, "second OFFSET in one End Site"));
                        }
                        *offset = Some(v);
                    }
                    None => return Err(self.err(line, "OFFSET outside of any joint")),
                }
            } else if is(tok, "CHANNELS") {
                let channels = self.channels(line)?;
                match stack.last_mut() {
                    Some(Block::Joint {
                        index,
                        has_channels,
                        has_child,
                        ..
                    }) => {
                        if *has_channels {
                            return Err(self.err(line, "second CHANNELS in one joint"));
                        }
                        if *has_child {
                            return Err(self.err(
                                line,
                                "CHANNELS after a child JOINT: a joint's CHANNELS must come \
                                 before its children (the column order depends on it)",
                            ));
                        }
                        *has_channels = true;
                        columns = columns.saturating_add(channels.len());
                        if let Some(j) = joints.get_mut(*index) {
                            j.channels = channels;
                        }
                    }
                    Some(Block::EndSite { .. }) => {
                        return Err(
                            self.err(line, "CHANNELS inside End Site: End Sites have no channels")
                        );
                    }
                    None => return Err(self.err(line, "CHANNELS outside of any joint")),
                }
            } else if tok == "}" {
                match stack.pop() {
                    Some(Block::Joint {
                        index, has_offset, ..
                    }) => {
                        if !has_offset {
                            let (name, jl) = joints
                                .get(index)
                                .map(|j| (j.name.as_str(), j.line))
                                .unwrap_or(("?", line));
                            return Err(
                                self.err(line, format!("joint '{name}' (line {jl}) has no OFFSET"))
                            );
                        }
                    }
                    Some(Block::EndSite {
                        owner,
                        line: l,
                        offset,
                    }) => {
                        let Some(o) = offset else {
                            return Err(
                                self.err(line, format!("End Site (line {l}) has no OFFSET"))
                            );
                        };
                        if let Some(j) = joints.get_mut(owner) {
                            j.end_site = Some(o);
                        }
                    }
                    None => {
                        return Err(self.err(
                            line,
                            if root_line.is_none() {
                                "unexpected '}' before ROOT"
                            } else {
                                "unexpected '}': more '}' than '{' in the hierarchy"
                            },
                        ));
                    }
                }
            } else if tok == "{" {
                return Err(self.err(
                    line,
                    "unexpected '{': a '{' must follow ROOT/JOINT <name> or End Site",
                ));
            } else if is(tok, "MOTION") {
                if root_line.is_none() {
                    return Err(self.err(line, "MOTION before any ROOT: the hierarchy is empty"));
                }
                if !stack.is_empty() {
                    return Err(self.err(
                        line,
                        format!(
                            "MOTION inside the hierarchy: {} '}}' missing before it",
                            stack.len()
                        ),
                    ));
                }
                if let Some(t) = self.tokens.next_on_line() {
                    return Err(self.err(
                        line,
                        format!(
                            "unexpected '{}' after MOTION: 'Frames:' goes on its own line",
                            shorten(t)
                        ),
                    ));
                }
                return Ok((joints, columns));
            } else if is(tok, "HIERARCHY") {
                return Err(self.err(
                    line,
                    "second HIERARCHY: only one skeleton per file is supported",
                ));
            } else if tok.len() >= 5
                && tok
                    .as_bytes()
                    .get(..5)
                    .is_some_and(|p| p.eq_ignore_ascii_case(b"frame"))
            {
                return Err(self.err(
                    line,
                    format!(
                        "'{}' in the hierarchy: the MOTION line is missing before the frame header",
                        shorten(tok)
                    ),
                ));
            } else {
                return Err(self.err(
                    line,
                    format!(
                        "unknown keyword '{}' (expected ROOT, JOINT, End Site, OFFSET, CHANNELS, \
                         '{{', '}}' or MOTION)",
                        shorten(tok)
                    ),
                ));
            }
        }
    }

    /// Name after ROOT/JOINT: the rest of the line up to an optional `{` (tokens joined by
    /// one space). The `{` may also be the first token of a later line.
    fn joint_name(&mut self, line: usize, keyword: &str) -> Result<String, BvhError> {
        let mut name = String::new();
        let mut brace = false;
        while let Some(t) = self.tokens.next_on_line() {
            if t == "{" {
                brace = true;
                break;
            }
            if !name.is_empty() {
                name.push(' ');
            }
            name.push_str(t);
        }
        if name.is_empty() {
            return Err(self.err(
                line,
                format!(
                    "{} without a name: write '{} <name>'",
                    keyword.to_ascii_uppercase(),
                    keyword.to_ascii_uppercase()
                ),
            ));
        }
        if !brace {
            self.open_brace(line, &name)?;
        }
        Ok(name)
    }

    /// Expect `{` as the next token (any line).
    fn open_brace(&mut self, line: usize, what: &str) -> Result<(), BvhError> {
        match self.tokens.next() {
            Some((_, "{")) => Ok(()),
            Some((l, t)) => Err(self.err(
                l,
                format!(
                    "expected '{{' after '{}' (line {line}), found '{}'",
                    shorten(what),
                    shorten(t)
                ),
            )),
            None => Err(self.err(
                self.tokens.line(),
                format!(
                    "file ends after '{}': expected '{{' (truncated?)",
                    shorten(what)
                ),
            )),
        }
    }

    /// The three numbers of an OFFSET, on the same line.
    fn offset(&mut self, line: usize) -> Result<Vector3<f64>, BvhError> {
        let mut v = [0.0f64; 3];
        for (k, slot) in v.iter_mut().enumerate() {
            let Some(t) = self.tokens.next_on_line() else {
                return Err(self.err(line, format!("OFFSET needs 3 numbers, found {k}")));
            };
            *slot = self.number(line, t, "OFFSET")?;
        }
        // A fourth number is an error; anything else (e.g. `}`) continues the stream.
        if let Some(t) = self.tokens.cur.clone().next()
            && t.parse::<f64>().is_ok()
        {
            return Err(self.err(line, "OFFSET needs exactly 3 numbers, found more"));
        }
        Ok(Vector3::new(v[0], v[1], v[2]))
    }

    fn number(&self, line: usize, t: &str, what: &str) -> Result<f64, BvhError> {
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            Ok(v) => Err(self.err(
                line,
                format!("{} is not a valid {what} value", nonfinite(v)),
            )),
            Err(_) => Err(self.err(line, not_a_number(t, what))),
        }
    }

    /// `CHANNELS n name...`: exactly n channel names on the same line.
    fn channels(&mut self, line: usize) -> Result<Vec<Channel>, BvhError> {
        let Some(t) = self.tokens.next_on_line() else {
            return Err(self.err(
                line,
                "CHANNELS without a count: write 'CHANNELS n name1 ... namen'",
            ));
        };
        let Ok(n) = t.parse::<usize>() else {
            return Err(self.err(
                line,
                format!(
                    "CHANNELS count '{}' is not a non-negative integer",
                    shorten(t)
                ),
            ));
        };
        let mut channels = Vec::new();
        while let Some(t) = self.tokens.next_on_line() {
            let Some(c) = Channel::from_keyword(t) else {
                return Err(self.err(
                    line,
                    format!(
                        "'{}' is not a channel name (expected Xposition, Yposition, Zposition, \
                         Xrotation, Yrotation or Zrotation)",
                        shorten(t)
                    ),
                ));
            };
            channels.push(c);
        }
        if channels.len() != n {
            return Err(self.err(
                line,
                format!(
                    "CHANNELS declares {n} channels but lists {} names: fix the count or the names",
                    channels.len()
                ),
            ));
        }
        Ok(channels)
    }

    // ------------------------------------------------------------------- motion

    /// `Frames: N` and `Frame Time: T` (either order, blank lines allowed).
    /// Returns (frames, frame time, line of the Frames header).
    fn motion_header(
        &self,
        lines: &mut Lines<'a>,
        motion_line: usize,
    ) -> Result<(usize, f64, usize), BvhError> {
        let mut frames: Option<(usize, usize)> = None;
        let mut frame_time: Option<f64> = None;
        while frames.is_none() || frame_time.is_none() {
            let Some((line, text)) = lines.next_line() else {
                let what = if frames.is_none() {
                    "Frames:"
                } else {
                    "Frame Time:"
                };
                return Err(self.err(
                    lines.line.max(motion_line),
                    format!("file ends before '{what}' in the MOTION section (truncated?)"),
                ));
            };
            let text = text.trim_ascii();
            if text.is_empty() {
                continue;
            }
            match header_key(text) {
                Some((Header::Frames, value)) => {
                    if frames.is_some() {
                        return Err(self.err(line, "second 'Frames:' line"));
                    }
                    let n = match value.parse::<u64>() {
                        Ok(n) => n,
                        Err(e) => {
                            use std::num::IntErrorKind::*;
                            let why = match e.kind() {
                                PosOverflow => "is too large".to_string(),
                                Empty => "is missing".to_string(),
                                _ if value.starts_with('-') => "is negative".to_string(),
                                _ => "is not a whole number".to_string(),
                            };
                            return Err(self.err(
                                line,
                                format!(
                                    "frame count '{}' {why}: expected 'Frames: N' with N a \
                                     non-negative integer",
                                    shorten(value)
                                ),
                            ));
                        }
                    };
                    if n == 0 {
                        return Err(self.err(line, "clip has no frames (Frames: 0)"));
                    }
                    let Ok(n) = usize::try_from(n) else {
                        return Err(self.err(line, format!("frame count {n} is too large")));
                    };
                    frames = Some((n, line));
                }
                Some((Header::FrameTime, value)) => {
                    if frame_time.is_some() {
                        return Err(self.err(line, "second 'Frame Time:' line"));
                    }
                    let t = match value.parse::<f64>() {
                        Ok(t) if t.is_finite() && t > 0.0 => t,
                        _ => {
                            return Err(self.err(
                                line,
                                format!(
                                    "Frame Time '{}' is not valid: it must be a positive number \
                                     of seconds per frame (e.g. 0.0083333 for 120 Hz)",
                                    shorten(value)
                                ),
                            ));
                        }
                    };
                    frame_time = Some(t);
                }
                None => {
                    let want = if frames.is_none() {
                        "Frames: N"
                    } else {
                        "Frame Time: T"
                    };
                    return Err(self.err(
                        line,
                        format!(
                            "expected '{want}' in the MOTION header, found '{}'",
                            shorten(text)
                        ),
                    ));
                }
            }
        }
        match (frames, frame_time) {
            (Some((n, l)), Some(t)) => Ok((n, t, l)),
            _ => Err(self.err(motion_line, "incomplete MOTION header")),
        }
    }

    /// Exactly `frames` non-empty lines of `nc` numbers each, then only blank lines.
    fn frames(
        &self,
        lines: &mut Lines<'a>,
        frames: usize,
        frames_line: usize,
        nc: usize,
    ) -> Result<Vec<f64>, BvhError> {
        // Each value takes at least 2 bytes ("0 "), so the text bounds the allocation.
        let cap = frames.saturating_mul(nc).min(lines.rest.len() / 2 + 1);
        let mut values: Vec<f64> = Vec::with_capacity(cap);
        let mut done = 0usize;
        while done < frames {
            let Some((line, text)) = lines.next_line() else {
                return Err(self.err(
                    lines.line,
                    format!(
                        "file ends after {done} of {frames} frames: truncated? ('Frames: \
                         {frames}' is on line {frames_line})"
                    ),
                ));
            };
            let mut count = 0usize;
            let mut toks = text.split_ascii_whitespace();
            while let Some(t) = toks.next() {
                if count == nc {
                    let found = nc + 1 + toks.count();
                    return Err(self.err(
                        line,
                        format!(
                            "expected {nc} values, found {found} (frame {}): the frame line is \
                             longer than the CHANNELS declare",
                            done + 1
                        ),
                    ));
                }
                match parse_f64(t) {
                    Ok(v) if v.is_finite() => values.push(v),
                    Ok(v) => {
                        return Err(self.err(
                            line,
                            format!(
                                "{} is not a valid motion value (frame {}, column {})",
                                nonfinite(v),
                                done + 1,
                                count + 1
                            ),
                        ));
                    }
                    Err(_) => {
                        return Err(self.err(
                            line,
                            format!(
                                "{} (frame {}, column {})",
                                not_a_number(t, "motion"),
                                done + 1,
                                count + 1
                            ),
                        ));
                    }
                }
                count += 1;
            }
            if count == 0 {
                continue;
            }
            if count < nc {
                return Err(self.err(
                    line,
                    format!(
                        "expected {nc} values, found {count} (frame {}): the frame line is \
                         shorter than the CHANNELS declare (truncated?)",
                        done + 1
                    ),
                ));
            }
            done += 1;
        }
        while let Some((line, text)) = lines.next_line() {
            if !text.trim_ascii().is_empty() {
                return Err(self.err(
                    line,
                    format!(
                        "extra data after the last frame: 'Frames: {frames}' (line {frames_line}) \
                         promises {frames} frames; fix the count"
                    ),
                ));
            }
        }
        Ok(values)
    }
}

enum Header {
    Frames,
    FrameTime,
}

/// Recognise `Frames:` / `Frame Time:` (any case, any spacing around the words and colon,
/// including none). Returns the key and the trimmed value text after the colon.
fn header_key(text: &str) -> Option<(Header, &str)> {
    fn word<'t>(s: &'t str, w: &str) -> Option<&'t str> {
        let head = s.get(..w.len())?;
        head.eq_ignore_ascii_case(w)
            .then(|| s.get(w.len()..))
            .flatten()
            .map(str::trim_ascii_start)
    }
    fn colon(s: &str) -> Option<&str> {
        s.strip_prefix(':').map(str::trim_ascii)
    }
    if let Some(v) = word(text, "frames").and_then(colon) {
        return Some((Header::Frames, v));
    }
    let v = word(text, "frame")
        .and_then(|s| word(s, "time"))
        .and_then(colon)?;
    Some((Header::FrameTime, v))
}

fn nonfinite(v: f64) -> &'static str {
    if v.is_nan() {
        "NaN"
    } else if v > 0.0 {
        "infinity"
    } else {
        "-infinity"
    }
}

fn not_a_number(t: &str, what: &str) -> String {
    let hint = if t.contains(',') {
        ": use '.' as the decimal separator (values are separated by spaces)"
    } else {
        ""
    };
    format!(
        "'{}' is not a number ({what} values must be numbers){hint}",
        shorten(t)
    )
}

/// A token for an error message: control characters escaped, cut to a readable length.
fn shorten(t: &str) -> String {
    const MAX: usize = 40;
    let mut s = String::new();
    for (i, c) in t.chars().enumerate() {
        if i == MAX {
            s.push('…');
            break;
        }
        if c.is_control() {
            s.extend(c.escape_default());
        } else {
            s.push(c);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::parse_f64;

    /// The fast path reads what `str::parse` reads, to the bit, and refuses what it refuses:
    /// edge cases (signs, lone points, zeros, 2⁵³ ± 1, 19 and 20 digits, 22 and 23 after the
    /// point, exponents, words) and half a million random decimals of 1–24 digits.
    #[test]
    fn motion_values_parse_as_str_parse_reads_them() {
        let same = |t: &str| {
            let (a, b) = (parse_f64(t), t.parse::<f64>());
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a.to_bits(), b.to_bits(), "{t}"),
                (Err(_), Err(_)) => {}
                (a, b) => panic!("{t}: {a:?} against {b:?}"),
            }
        };
        for t in [
            "0",
            "-0",
            "+0",
            "0.0",
            "-0.0",
            ".5",
            "5.",
            "-.5",
            "+.5",
            ".",
            "-",
            "+",
            "",
            "-.",
            "1.2.3",
            "--1",
            "+-1",
            "0x10",
            "1e5",
            "1E-3",
            "inf",
            "-inf",
            "NaN",
            "nan",
            " 1",
            "1 ",
            "12.345678",
            "-179.999999",
            "00012.3400",
            "9007199254740992",
            "9007199254740993",
            "9007199254740994",
            "900719925474099.3",
            "1234567890123456789",
            "12345678901234567890",
            "0.0000000000000000000001",
            "0.00000000000000000000001",
            "123456789.0123456789",
            "1_000",
            "١٢",
        ] {
            same(t);
        }
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || super::super::random_bits(&mut seed);
        let mut t = String::new();
        for _ in 0..500_000 {
            t.clear();
            match next() % 3 {
                0 => t.push('-'),
                1 if next() % 8 == 0 => t.push('+'),
                _ => {}
            }
            let n = 1 + (next() % 24) as usize;
            let point = (next() % (n as u64 + 2)) as usize;
            for i in 0..n {
                if i == point {
                    t.push('.');
                }
                t.push(char::from(b'0' + (next() % 10) as u8));
            }
            same(&t);
        }
    }
}
