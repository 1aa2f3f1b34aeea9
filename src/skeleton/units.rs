//! Reading a clip in jostle's world: metres, Y up, the T-pose frame dropped, and the
//! position-channel convention of each joint resolved (METHOD §3).

use crate::mocap::Clip;
use nalgebra::{UnitQuaternion, Vector3};

/// How a joint's position channels combine with its OFFSET.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PositionConvention {
    /// Position channels replace the OFFSET (CMU root, Bandai, PyMO root).
    Absolute,
    /// Position channels are added to the OFFSET (iClone `CC_Base_Hip` variant).
    RelativeToOffset,
}

/// Joint centres lie inside the body: the soles are below the lowest foot joint and the
/// skull top above the head's End Site. Stature ≈ 1.06 × the joints' vertical extent
/// (measured on the CMU walks against the subjects' 1.7–1.8 m).
pub const STATURE_PER_JOINT_EXTENT: f64 = 1.06;

/// Number of leading clip joints that are static carriers: a root with a single child is
/// not part of the figure (Bandai `joint_Root`, iClone `RL_BoneRoot`).
pub fn carrier_count(clip: &Clip) -> usize {
    let mut j = 0;
    let mut n = 0;
    loop {
        let mut ch = clip.children(j);
        match (ch.next(), ch.next()) {
            (Some(c), None) => {
                j = c;
                n += 1;
            }
            _ => return n,
        }
    }
}

/// Candidate file units, metres per unit, tried in this order.
const UNIT_CANDIDATES: [(&str, f64); 5] = [
    ("m", 1.0),
    ("cm", 0.01),
    ("in", 0.0254),
    ("CMU unit (5.64 cm)", 0.0254 / 0.45),
    ("mm", 0.001),
];

/// The clip as jostle reads it: which frames, which scale, which way is up.
#[derive(Clone, Debug)]
pub struct ClipFrames<'a> {
    /// The parsed file.
    pub clip: &'a Clip,
    /// Index of the first frame used (1 when a leading T-pose frame is dropped).
    pub first_frame: usize,
    /// Metres per file unit.
    pub scale: f64,
    /// Name of the unit chosen (`cm`, `in`, ...), or `fitted` when no unit gave a human height.
    pub unit: String,
    /// Rotation from file coordinates to jostle's Y-up world.
    pub to_world: UnitQuaternion<f64>,
    /// Per joint, how position channels combine with the OFFSET.
    pub position_convention: Vec<PositionConvention>,
    /// Figure height in metres (median standing extent along up).
    pub height_m: f64,
    /// What was detected, for the user.
    pub notes: Vec<String>,
}

/// Options for reading a clip.
#[derive(Clone, Debug, Default)]
pub struct FrameOptions {
    /// Metres per file unit; `None` detects it from the figure's stature.
    pub scale: Option<f64>,
    /// Stature to rescale the figure to, m (`--height`): the scale becomes this over the
    /// stature measured in file units. Excludes `scale`.
    pub height_m: Option<f64>,
    /// Keep a leading T-pose frame instead of dropping it.
    pub keep_first_frame: bool,
}

/// Errors reading a clip as a figure.
#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    /// The clip has no usable frames or a degenerate figure.
    #[error("{0}")]
    Degenerate(String),
    /// An option is out of its range (names the command-line flag).
    #[error("{option}: {message}")]
    InvalidOption {
        /// The flag (`--height`).
        option: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// Statures a common unit must give for the figure (m): adults' range, with room on both
/// sides for the estimate's error. A figure that no unit puts in it is fitted to 1.75 m
/// (`cmusl_60_12`, metres rescaled to a 1.36 m figure, is one).
const HUMAN_STATURE_M: std::ops::RangeInclusive<f64> = 1.45..=2.1;

/// The common unit that makes a figure `height_file` file units tall a person's stature
/// (in [`HUMAN_STATURE_M`], the closest to 1.75 m): its name, metres per unit and the
/// stature it gives, m.
fn common_unit(height_file: f64) -> Option<(&'static str, f64, f64)> {
    UNIT_CANDIDATES
        .iter()
        .map(|&(name, s)| (name, s, height_file * s))
        .filter(|(_, _, h)| HUMAN_STATURE_M.contains(h))
        .min_by(|a, b| (a.2 - 1.75).abs().total_cmp(&(b.2 - 1.75).abs()))
}

/// Statures people have, m (small children to the tallest adults): a `--scale` or
/// `--height` that makes a figure any other size has most likely read the clip in the
/// wrong unit.
pub const PLAUSIBLE_STATURE_M: std::ops::RangeInclusive<f64> = 0.9..=2.5;

/// A warning for a figure that the user's `--scale` or `--height` made taller or shorter
/// than any person ([`PLAUSIBLE_STATURE_M`]), with the unit that would make it one (for
/// `--scale`); `None` for a plausible figure or a unit jostle chose (a person's stature
/// by construction). The simulation still runs: the balance margins scale with the
/// figure, but the balls, the floor contacts' millimetre tolerances and the clip's
/// timing are a person's.
pub fn stature_warning(figure: &crate::skeleton::FigureInfo) -> Option<String> {
    let h = figure.height_m;
    if PLAUSIBLE_STATURE_M.contains(&h) || !(h.is_finite() && h > 0.0) {
        return None;
    }
    let (low, high) = (PLAUSIBLE_STATURE_M.start(), PLAUSIBLE_STATURE_M.end());
    let size = format!("the figure {h:.2} m tall, outside a person's {low}-{high} m");
    match figure.unit.as_str() {
        "--scale" => {
            let hint = common_unit(h / figure.scale)
                .map(|(name, s, x)| {
                    format!(
                        "; read in {name} (--scale {s}, or without --scale) it is {x:.2} m tall"
                    )
                })
                .unwrap_or_default();
            Some(format!(
                "--scale {} m per file unit makes {size}{hint}",
                figure.scale
            ))
        }
        "--height" => Some(format!("--height makes {size}")),
        _ => None,
    }
}

impl FrameOptions {
    /// Check the user's scale and stature: positive, finite, not both.
    pub fn validate(&self) -> Result<(), FigureError> {
        if let Some(s) = self.scale
            && !(s.is_finite() && s > 0.0)
        {
            return Err(FigureError::InvalidOption {
                option: "--scale",
                message: format!("must be a positive number of metres per file unit, got {s}"),
            });
        }
        if let Some(h) = self.height_m
            && !(h.is_finite() && h > 0.0)
        {
            return Err(FigureError::InvalidOption {
                option: "--height",
                message: format!("must be a positive stature in metres, got {h}"),
            });
        }
        if self.scale.is_some() && self.height_m.is_some() {
            return Err(FigureError::InvalidOption {
                option: "--height",
                message: "give a scale (--scale) or a stature (--height), not both".into(),
            });
        }
        Ok(())
    }
}

impl<'a> ClipFrames<'a> {
    /// Detect conventions, T-pose, up axis and units of a clip.
    pub fn new(clip: &'a Clip, opts: &FrameOptions) -> Result<Self, FigureError> {
        let n = clip.num_frames();
        if n == 0 || clip.joints.is_empty() {
            return Err(FigureError::Degenerate(
                "clip has no frames or no joints".into(),
            ));
        }
        let mut notes = Vec::new();
        let position_convention = detect_position_conventions(clip);
        for (j, c) in position_convention.iter().enumerate() {
            if *c == PositionConvention::RelativeToOffset
                && clip.joints[j].channels.iter().any(|c| !c.is_rotation())
                && clip.joints[j].offset.norm() > 0.0
            {
                notes.push(format!(
                    "position channels of `{}` are read relative to its OFFSET",
                    clip.joints[j].name
                ));
            }
        }
        let mut first_frame = 0;
        let outliers = leading_outlier_frames(clip);
        if outliers > 0 {
            if opts.keep_first_frame {
                notes.push(format!(
                    "the first {outliers} frame(s) look like a T-pose or outliers; kept (--keep-first-frame)"
                ));
            } else {
                first_frame = outliers;
                notes.push(format!(
                    "the first {outliers} frame(s) are a T-pose or outliers (joint angles jump to the next frame); dropped (--keep-first-frame keeps them)"
                ));
            }
        }
        let mut frames = ClipFrames {
            clip,
            first_frame,
            scale: 1.0,
            unit: String::new(),
            to_world: UnitQuaternion::identity(),
            position_convention,
            height_m: 0.0,
            notes,
        };
        frames.detect_up();
        let height_file = frames.median_height_file();
        frames.set_units(height_file, opts)?;
        Ok(frames)
    }

    /// Choose the unit (or apply the user's scale or stature) from the figure's stature in
    /// file units.
    pub fn set_units(&mut self, height_file: f64, opts: &FrameOptions) -> Result<(), FigureError> {
        opts.validate()?;
        let frames = self;
        if !(height_file.is_finite() && height_file > 0.0) {
            return Err(FigureError::Degenerate(
                "the figure has zero height (all joints at one point?)".into(),
            ));
        }
        frames.notes.retain(|n| !n.starts_with("no common unit"));
        match (opts.scale, opts.height_m) {
            (Some(s), _) => {
                frames.scale = s;
                frames.unit = "--scale".into();
            }
            (None, Some(h)) => {
                frames.scale = h / height_file;
                frames.unit = "--height".into();
            }
            (None, None) => match common_unit(height_file) {
                Some((name, s, _)) => {
                    frames.scale = s;
                    frames.unit = name.to_string();
                }
                None => {
                    frames.scale = 1.75 / height_file;
                    frames.unit = "fitted".into();
                    frames.notes.push(format!(
                            "no common unit makes the figure ({height_file:.3} file units tall) \
                             {:.2}-{:.2} m tall; scaled it to 1.75 m (--scale or --height override)",
                            HUMAN_STATURE_M.start(),
                            HUMAN_STATURE_M.end()
                        ));
                }
            },
        }
        frames.height_m = height_file * frames.scale;
        Ok(())
    }

    /// Re-read a clip the way a model was built from it (same units, up axis, frames).
    pub fn from_figure(clip: &'a Clip, figure: &crate::skeleton::FigureInfo) -> Self {
        ClipFrames {
            clip,
            first_frame: figure.first_frame.min(clip.num_frames()),
            scale: figure.scale,
            unit: figure.unit.clone(),
            to_world: figure.to_world,
            position_convention: figure
                .absolute_positions
                .iter()
                .map(|a| {
                    if *a {
                        PositionConvention::Absolute
                    } else {
                        PositionConvention::RelativeToOffset
                    }
                })
                .collect(),
            height_m: figure.height_m,
            notes: vec![],
        }
    }

    /// Number of frames used.
    pub fn num_frames(&self) -> usize {
        self.clip.num_frames() - self.first_frame
    }

    /// Seconds per frame.
    pub fn frame_time(&self) -> f64 {
        self.clip.frame_time
    }

    /// Local transform of joint `j` in used frame `f`: translation (metres) and rotation.
    pub fn local(&self, j: usize, f: usize) -> (Vector3<f64>, UnitQuaternion<f64>) {
        let joint = &self.clip.joints[j];
        let (p, q) = self.clip.channel_motion(j, f + self.first_frame);
        let has_pos = joint.channels.iter().any(|c| !c.is_rotation());
        let t = if has_pos && self.position_convention[j] == PositionConvention::Absolute {
            p
        } else {
            joint.offset + p
        };
        (t * self.scale, q)
    }

    /// World transforms (metres, Y up) of every joint in used frame `f`.
    pub fn world(&self, f: usize) -> Vec<(Vector3<f64>, UnitQuaternion<f64>)> {
        let mut out: Vec<(Vector3<f64>, UnitQuaternion<f64>)> =
            Vec::with_capacity(self.clip.joints.len());
        for j in 0..self.clip.joints.len() {
            let (t, q) = self.local(j, f);
            let w = match self.clip.joints[j].parent {
                None => (self.to_world * t, self.to_world * q),
                Some(p) => {
                    let (pp, pq) = out[p];
                    (pp + pq * t, pq * q)
                }
            };
            out.push(w);
        }
        out
    }

    /// All points of the figure (joints and End Sites) in world frame `f`, file units
    /// before scaling is applied — used for height detection.
    fn points(&self, f: usize) -> Vec<Vector3<f64>> {
        let w = self.world(f);
        let carriers = carrier_count(self.clip);
        let mut pts: Vec<Vector3<f64>> = w.iter().skip(carriers).map(|(p, _)| *p).collect();
        for (j, joint) in self.clip.joints.iter().enumerate().skip(carriers) {
            if let Some(e) = joint.end_site {
                pts.push(w[j].0 + w[j].1 * (e * self.scale));
            }
        }
        pts
    }

    /// A sample of frame indices (at most ~200) spread over the clip.
    fn sample_frames(&self) -> Vec<usize> {
        let n = self.num_frames();
        let step = (n / 200).max(1);
        (0..n).step_by(step).collect()
    }

    /// Choose the world up axis: most clips are Y-up already; otherwise the axis of the
    /// largest median extent, signed so the head (if named) is above the root.
    fn detect_up(&mut self) {
        let frames = self.sample_frames();
        let mut extents: [Vec<f64>; 3] = [vec![], vec![], vec![]];
        for &f in &frames {
            let pts = self.points(f);
            for (a, e) in extents.iter_mut().enumerate() {
                let lo = pts.iter().map(|p| p[a]).fold(f64::INFINITY, f64::min);
                let hi = pts.iter().map(|p| p[a]).fold(f64::NEG_INFINITY, f64::max);
                e.push(hi - lo);
            }
        }
        let med: Vec<f64> = extents.iter_mut().map(|e| median(e)).collect();
        let axis = (0..3)
            .max_by(|&a, &b| med[a].total_cmp(&med[b]))
            .unwrap_or(1);
        if axis == 1 {
            return;
        }
        let head = self
            .clip
            .joints
            .iter()
            .position(|j| j.name.to_ascii_lowercase().contains("head"));
        let mut sign = 1.0;
        if let Some(h) = head {
            let f0 = frames.first().copied().unwrap_or(0);
            let w = self.world(f0);
            if w[h].0[axis] < w[0].0[axis] {
                sign = -1.0;
            }
        }
        let mut from = Vector3::zeros();
        from[axis] = sign;
        if let Some(r) = UnitQuaternion::rotation_between(&from, &Vector3::y()) {
            self.to_world = r;
        } else {
            self.to_world =
                UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI);
        }
        self.notes.push(format!(
            "up axis is {}{} in the file (rotated to +Y)",
            if sign > 0.0 { "+" } else { "-" },
            ["X", "Y", "Z"][axis]
        ));
    }

    /// Stature in file units: the 95th percentile over frames of the vertical extent of the
    /// figure's joints and End Sites (robust to frames with arms overhead, crouching or
    /// sitting), times [`STATURE_PER_JOINT_EXTENT`].
    fn median_height_file(&self) -> f64 {
        let mut hs: Vec<f64> = self
            .sample_frames()
            .into_iter()
            .map(|f| {
                let pts = self.points(f);
                let lo = pts.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
                let hi = pts.iter().map(|p| p.y).fold(f64::NEG_INFINITY, f64::max);
                (hi - lo) / self.scale
            })
            .collect();
        percentile(&mut hs, 0.95) * STATURE_PER_JOINT_EXTENT
    }
}

/// Position channels whose mean lies nearer the OFFSET than zero are absolute; those
/// that hover around zero while the OFFSET is not zero are added to it.
fn detect_position_conventions(clip: &Clip) -> Vec<PositionConvention> {
    let n = clip.num_frames().max(1) as f64;
    clip.joints
        .iter()
        .map(|j| {
            let mut mean = Vector3::zeros();
            for (k, ch) in j.channels.iter().enumerate() {
                if !ch.is_rotation() {
                    let s: f64 = (0..clip.num_frames())
                        .map(|f| clip.frame(f)[j.first_column + k])
                        .sum();
                    mean += ch.axis() * (s / n);
                }
            }
            if mean.norm() < (mean - j.offset).norm() {
                PositionConvention::RelativeToOffset
            } else {
                PositionConvention::Absolute
            }
        })
        .collect()
}

/// Leading frames that are not part of the motion: cgspeed CMU files start with a T-pose
/// (round, integer-degree joint angles); other exporters leave outlier frames (OptiTrack:
/// occluded joints at exactly zero). Returns how many leading frames to drop (up to 10):
/// a T-pose frame 0, then every frame whose step to the next exceeds max(5°, 6 × the
/// median frame-to-frame step), steps being the largest joint rotation between frames.
fn leading_outlier_frames(clip: &Clip) -> usize {
    let root_cols = clip.joints.first().map_or(0, |j| j.channels.len());
    let rot_cols: Vec<usize> = clip
        .joints
        .iter()
        .flat_map(|j| {
            j.channels
                .iter()
                .enumerate()
                .filter(|(_, c)| c.is_rotation())
                .map(move |(k, _)| j.first_column + k)
        })
        .filter(|&c| c >= root_cols)
        .collect();
    if rot_cols.len() < 6 || clip.num_frames() < 3 {
        return 0;
    }
    // Largest rotation (degrees) of any non-root joint between frames f and f + 1, from
    // the composed local rotations (Euler-channel differences mislead near gimbal lock).
    let rotating: Vec<usize> = (1..clip.joints.len())
        .filter(|&j| clip.joints[j].channels.iter().any(|c| c.is_rotation()))
        .collect();
    let step = |f: usize| {
        rotating
            .iter()
            .map(|&j| {
                let (_, qa) = clip.local_transform(j, f);
                let (_, qb) = clip.local_transform(j, f + 1);
                qa.angle_to(&qb).to_degrees()
            })
            .fold(0.0, f64::max)
    };
    let f0 = clip.frame(0);
    let integers = rot_cols
        .iter()
        .all(|&c| (f0[c] - f0[c].round()).abs() < 1e-9);
    let mut later: Vec<f64> = (1..clip.num_frames().saturating_sub(1).min(61))
        .map(step)
        .collect();
    let typical = median(&mut later);
    let outlier = |k: usize| step(k) > 5.0_f64.max(6.0 * typical);
    let mut n = 0;
    if integers && step(0) > 2.0 {
        n = 1;
    }
    while n < 10 && n + 2 < clip.num_frames() && outlier(n) {
        n += 1;
    }
    n
}

fn median(v: &mut [f64]) -> f64 {
    percentile(v, 0.5)
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let k = ((v.len() - 1) as f64 * p).round() as usize;
    v[k.min(v.len() - 1)]
}
