//! The in-memory form of a BVH file: hierarchy, channels and frames, in f64 file units.

use nalgebra::{UnitQuaternion, Vector3};

/// One animation channel of a BVH joint, in the order the file lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channel {
    /// Translation along X, file units.
    Xposition,
    /// Translation along Y, file units.
    Yposition,
    /// Translation along Z, file units.
    Zposition,
    /// Rotation about X, degrees.
    Xrotation,
    /// Rotation about Y, degrees.
    Yrotation,
    /// Rotation about Z, degrees.
    Zrotation,
}

impl Channel {
    /// The keyword as written in a BVH file (`Xrotation`, ...).
    pub fn keyword(self) -> &'static str {
        match self {
            Channel::Xposition => "Xposition",
            Channel::Yposition => "Yposition",
            Channel::Zposition => "Zposition",
            Channel::Xrotation => "Xrotation",
            Channel::Yrotation => "Yrotation",
            Channel::Zrotation => "Zrotation",
        }
    }

    /// Parse a channel keyword (case-insensitive, as some exporters vary the case).
    pub fn from_keyword(s: &str) -> Option<Channel> {
        match s.to_ascii_lowercase().as_str() {
            "xposition" => Some(Channel::Xposition),
            "yposition" => Some(Channel::Yposition),
            "zposition" => Some(Channel::Zposition),
            "xrotation" => Some(Channel::Xrotation),
            "yrotation" => Some(Channel::Yrotation),
            "zrotation" => Some(Channel::Zrotation),
            _ => None,
        }
    }

    /// Unit axis of this channel (X, Y or Z).
    pub fn axis(self) -> Vector3<f64> {
        match self {
            Channel::Xposition | Channel::Xrotation => Vector3::x(),
            Channel::Yposition | Channel::Yrotation => Vector3::y(),
            Channel::Zposition | Channel::Zrotation => Vector3::z(),
        }
    }

    /// True for the three rotation channels.
    pub fn is_rotation(self) -> bool {
        matches!(
            self,
            Channel::Xrotation | Channel::Yrotation | Channel::Zrotation
        )
    }
}

/// A `ROOT` or `JOINT` of the hierarchy.
#[derive(Clone, Debug, PartialEq)]
pub struct BvhJoint {
    /// Name as written (may contain `:`, e.g. `mixamorig:Hips`).
    pub name: String,
    /// Index of the parent joint in [`Clip::joints`]; `None` for the root.
    /// Parents always come before their children.
    pub parent: Option<usize>,
    /// `OFFSET` from the parent joint, file units, parent's frame.
    pub offset: Vector3<f64>,
    /// Channels in file order.
    pub channels: Vec<Channel>,
    /// Column of this joint's first channel within a frame.
    pub first_column: usize,
    /// `End Site` offset, if the joint has one (file units, this joint's frame).
    pub end_site: Option<Vector3<f64>>,
    /// 1-based line of the `ROOT`/`JOINT` keyword in the source text.
    pub line: usize,
}

/// A parsed BVH clip: hierarchy plus motion, all values f64 in file units / degrees.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// Joints in file (depth-first) order; index 0 is the root.
    pub joints: Vec<BvhJoint>,
    /// Seconds per frame (`Frame Time`), > 0.
    pub frame_time: f64,
    /// Number of channels (columns) per frame.
    pub num_channels: usize,
    /// Motion values, row-major: frame `f`, column `c` at `f * num_channels + c`.
    pub values: Vec<f64>,
}

impl Clip {
    /// Number of frames.
    pub fn num_frames(&self) -> usize {
        self.values
            .len()
            .checked_div(self.num_channels)
            .unwrap_or(0)
    }

    /// Duration in seconds (frames × frame time).
    pub fn duration(&self) -> f64 {
        self.num_frames() as f64 * self.frame_time
    }

    /// The channel values of frame `f` (panics if `f` is out of range, like slice indexing).
    pub fn frame(&self, f: usize) -> &[f64] {
        &self.values[f * self.num_channels..(f + 1) * self.num_channels]
    }

    /// Index of the joint with this exact name.
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }

    /// Indices of the children of joint `j`, in file order.
    pub fn children(&self, j: usize) -> impl Iterator<Item = usize> + '_ {
        self.joints
            .iter()
            .enumerate()
            .filter(move |(_, c)| c.parent == Some(j))
            .map(|(i, _)| i)
    }

    /// Local transform of joint `j` at frame `f`: translation (file units) and rotation.
    ///
    /// Translation = OFFSET + position channels (position channels are added to the
    /// offset, which is how most tools read non-root position channels).
    /// Rotation = product of the rotation channels in file order, each an intrinsic
    /// rotation: `Zrotation Xrotation Yrotation` gives Rz(α)·Rx(β)·Ry(γ) (METHOD §3).
    pub fn local_transform(&self, j: usize, f: usize) -> (Vector3<f64>, UnitQuaternion<f64>) {
        let (p, q) = self.channel_motion(j, f);
        (self.joints[j].offset + p, q)
    }

    /// The motion carried by joint `j`'s channels in frame `f`: the sum of its position
    /// channels (file units) and the product of its rotation channels in file order, each
    /// an intrinsic rotation (METHOD §3). How the position combines with the OFFSET is the
    /// caller's choice (BVH files disagree).
    pub fn channel_motion(&self, j: usize, f: usize) -> (Vector3<f64>, UnitQuaternion<f64>) {
        let joint = &self.joints[j];
        let row = self.frame(f);
        let mut t = Vector3::zeros();
        let mut q = UnitQuaternion::identity();
        for (k, ch) in joint.channels.iter().enumerate() {
            let v = row[joint.first_column + k];
            if ch.is_rotation() {
                q *= UnitQuaternion::from_axis_angle(
                    &nalgebra::Unit::new_unchecked(ch.axis()),
                    v.to_radians(),
                );
            } else {
                t += ch.axis() * v;
            }
        }
        (t, q)
    }

    /// World transforms of every joint at frame `f` (file units): (position, rotation).
    pub fn world_transforms(&self, f: usize) -> Vec<(Vector3<f64>, UnitQuaternion<f64>)> {
        let mut out: Vec<(Vector3<f64>, UnitQuaternion<f64>)> =
            Vec::with_capacity(self.joints.len());
        for j in 0..self.joints.len() {
            let (t, q) = self.local_transform(j, f);
            let w = match self.joints[j].parent {
                None => (t, q),
                Some(p) => {
                    let (pp, pq) = out[p];
                    (pp + pq * t, pq * q)
                }
            };
            out.push(w);
        }
        out
    }
}
