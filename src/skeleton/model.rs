//! The immutable physical model: rigid bodies, capsule shapes, mass, joints (METHOD §3–§4).

use super::anthropometry::SegmentSlot;
use super::roles::{JointType, Role};
use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use serde::Serialize;

/// Gravity, m/s², world frame (Y up).
pub const GRAVITY: Vector3<f64> = Vector3::new(0.0, -9.81, 0.0);

/// A capsule: the segment from `a` to `b` swept by a sphere of `radius` (metres,
/// body frame, relative to the body's COM).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Capsule {
    /// First end, m, body frame relative to the COM.
    pub a: Vector3<f64>,
    /// Second end, m, body frame relative to the COM.
    pub b: Vector3<f64>,
    /// Radius, m.
    pub radius: f64,
}

/// The joint that connects a body to its parent.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// Ball, hinge or universal.
    pub kind: JointType,
    /// r̄_a: from the parent's COM to the joint point, parent body frame, m.
    pub parent_anchor: Vector3<f64>,
    /// r̄_b: from this body's COM to the joint point, this body's frame, m.
    pub child_anchor: Vector3<f64>,
    /// Q0 = R_a⁻¹R_b in the reference posture (mean over the clip); hinge/universal angles
    /// are measured from it.
    pub rest_rel: UnitQuaternion<f64>,
    /// Hinge: the axis n in the parent frame. Universal: n₁ in the parent frame.
    /// Unused for ball joints.
    pub axis_parent: Vector3<f64>,
    /// Hinge: the same axis n in the child frame. Universal: n₂ in the child frame.
    pub axis_child: Vector3<f64>,
}

impl Joint {
    /// Rotational degrees of freedom.
    pub fn dof(&self) -> usize {
        self.kind.dof()
    }

    /// Names of this joint's DOF axes, for CSV columns (`x,y,z` / `hinge` / `u1,u2`).
    pub fn axis_names(&self) -> &'static [&'static str] {
        match self.kind {
            JointType::Ball => &["x", "y", "z"],
            JointType::Hinge => &["hinge"],
            JointType::Universal => &["u1", "u2"],
        }
    }
}

/// A body's share of one de Leva segment's mass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentShare {
    /// The segment (and side).
    pub slot: SegmentSlot,
    /// Fraction of that segment's mass this body carries, 0–1.
    pub fraction: f64,
}

/// One rigid body of the skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// Name of the clip joint this body starts at.
    pub name: String,
    /// Semantic role, if the skeleton spec gives one.
    pub role: Option<Role>,
    /// Parent body index; `None` for the root. Parents come before children.
    pub parent: Option<usize>,
    /// Child body indices.
    pub children: Vec<usize>,
    /// Index of the clip joint whose frame is this body's frame.
    pub bvh_joint: usize,
    /// Other clip joints rigidly attached to this body (merged).
    pub merged: Vec<usize>,
    /// Mass, kg.
    pub mass: f64,
    /// Inertia about the COM in the body frame, kg·m².
    pub inertia: Matrix3<f64>,
    /// COM relative to the joint point, body frame, m.
    pub com: Vector3<f64>,
    /// Collision and display shapes.
    pub capsules: Vec<Capsule>,
    /// Joint to the parent (`None` for the root).
    pub joint: Option<Joint>,
    /// The de Leva segments whose mass this body carries; empty when its mass came from
    /// its shapes' volume (no role, no role above it).
    pub segments: Vec<SegmentShare>,
}

/// How the clip was read (units, up axis, frames), kept so the same frames can be
/// re-read for the reference motion and export.
#[derive(Clone, Debug, PartialEq)]
pub struct FigureInfo {
    /// Metres per file unit.
    pub scale: f64,
    /// Unit name chosen (`cm`, `in`, `CMU unit (5.64 cm)`, `fitted`, `--scale`).
    pub unit: String,
    /// File → world rotation (Y up).
    pub to_world: UnitQuaternion<f64>,
    /// First clip frame used (1 when a T-pose frame was dropped).
    pub first_frame: usize,
    /// Per clip joint: position channels absolute (true) or added to the OFFSET.
    pub absolute_positions: Vec<bool>,
    /// Figure height (stature, sole to vertex), m.
    pub height_m: f64,
    /// How the stature was estimated: `whole_chain`, `legs_bound`, `legs`,
    /// `joint_extent`, or `--height` / `fitted` when the user's stature or the fallback
    /// of 1.75 m set the scale.
    pub stature_source: String,
    /// The estimate's parts, in words (for `info`).
    pub stature_detail: String,
}

/// The immutable physical model of a clip's figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Bodies, parents first; body 0 is the root.
    pub bodies: Vec<Body>,
    /// Gravity, m/s².
    pub gravity: Vector3<f64>,
    /// Name of the skeleton spec used (`auto` if none matched).
    pub spec_name: String,
    /// How the clip was read.
    pub figure: FigureInfo,
    /// Per clip joint: the body it belongs to (`None` for static carriers above the root).
    pub owner: Vec<Option<usize>>,
    /// Per clip joint: the fixed local transform (translation m, rotation) of a merged joint
    /// that lies between two bodies (CMU's clavicles, zero-length hip joints): the model is
    /// rigid there, so the joint is frozen at its mean over the clip. `None` elsewhere.
    pub frozen: Vec<Option<(Vector3<f64>, UnitQuaternion<f64>)>>,
    /// Names of the clip joints (same indexing as `owner`).
    pub clip_joint_names: Vec<String>,
    /// Where the total mass came from (`--mass` or the default body-mass index).
    pub mass_source: String,
    /// Things the user should know (merges, conventions, dropped frames).
    pub notes: Vec<String>,
}

impl Model {
    /// Number of bodies.
    pub fn num_bodies(&self) -> usize {
        self.bodies.len()
    }

    /// Total mass, kg.
    pub fn total_mass(&self) -> f64 {
        self.bodies.iter().map(|b| b.mass).sum()
    }

    /// Body-mass index, kg/m² (NaN for a model without a stature).
    pub fn bmi(&self) -> f64 {
        let h = self.figure.height_m;
        if h > 0.0 {
            self.total_mass() / (h * h)
        } else {
            f64::NAN
        }
    }

    /// Mass the bodies carry of one de Leva segment, kg: Σ over bodies of their fraction of
    /// that segment × their mass, split among a body's segments by their table masses.
    pub fn segment_mass(&self, slot: SegmentSlot) -> f64 {
        use super::anthropometry::averaged;
        self.bodies
            .iter()
            .map(|b| {
                let table = |s: &SegmentShare| s.fraction * averaged(s.slot.segment).mass_fraction;
                let all: f64 = b.segments.iter().map(table).sum();
                let mine: f64 = b
                    .segments
                    .iter()
                    .filter(|s| s.slot == slot)
                    .map(table)
                    .sum();
                if all > 0.0 { b.mass * mine / all } else { 0.0 }
            })
            .sum()
    }

    /// Degrees of freedom: 6 for the root plus each joint's rotational DOF.
    pub fn dof(&self) -> usize {
        6 + self.joint_dofs()
    }

    /// Rotational joint DOF (excluding the root's 6).
    pub fn joint_dofs(&self) -> usize {
        self.bodies
            .iter()
            .filter_map(|b| b.joint.as_ref())
            .map(|j| j.dof())
            .sum()
    }

    /// Offset of each body's joint DOF in a stacked joint-DOF vector (root: its joint has none).
    pub fn dof_offsets(&self) -> Vec<usize> {
        let mut off = Vec::with_capacity(self.bodies.len());
        let mut k = 0;
        for b in &self.bodies {
            off.push(k);
            k += b.joint.as_ref().map_or(0, |j| j.dof());
        }
        off
    }

    /// Index of the body named `name` (clip joint name) or playing role `name`.
    pub fn find_body(&self, name: &str) -> Option<usize> {
        self.bodies
            .iter()
            .position(|b| b.name == name)
            .or_else(|| {
                let role = Role::from_name(name)?;
                self.bodies.iter().position(|b| b.role == Some(role))
            })
            .or_else(|| {
                // a merged clip joint resolves to the body it is attached to
                let j = self.clip_joint_names.iter().position(|n| n == name)?;
                self.owner[j]
            })
    }

    /// Count of joints of each type: (ball, hinge, universal).
    pub fn joint_type_counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for j in self.bodies.iter().filter_map(|b| b.joint.as_ref()) {
            match j.kind {
                JointType::Ball => c.0 += 1,
                JointType::Hinge => c.1 += 1,
                JointType::Universal => c.2 += 1,
            }
        }
        c
    }
}
