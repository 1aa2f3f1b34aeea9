//! Building a [`Model`] by hand (analytic tests, the drift example), rapier-style.

use super::model::{Body, FigureInfo, GRAVITY, Joint, Model};
use super::roles::JointType;
use nalgebra::{Matrix3, UnitQuaternion, Vector3};

/// Builds a model body by body; bodies must be added parents first.
#[derive(Clone, Debug, Default)]
pub struct ModelBuilder {
    bodies: Vec<Body>,
}

/// A joint for [`ModelBuilder::add_body`]. Axes are unit vectors in the parent frame
/// (`axis_parent`) and the child frame (`axis_child`); see [`Joint`].
#[derive(Clone, Debug)]
pub struct JointSpec {
    /// Joint type.
    pub kind: JointType,
    /// Parent COM → joint point, parent frame, m.
    pub parent_anchor: Vector3<f64>,
    /// Child COM → joint point, child frame, m.
    pub child_anchor: Vector3<f64>,
    /// Hinge axis / universal n₁, parent frame.
    pub axis_parent: Vector3<f64>,
    /// Hinge axis / universal n₂, child frame.
    pub axis_child: Vector3<f64>,
    /// Relative rotation where hinge/universal angles are zero.
    pub rest_rel: UnitQuaternion<f64>,
}

impl ModelBuilder {
    /// An empty model.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a body of `mass` kg with body-frame `inertia` (kg·m², about the COM); returns
    /// its index. `joint` must be `Some` exactly when `parent` is.
    pub fn add_body(
        &mut self,
        name: &str,
        parent: Option<usize>,
        mass: f64,
        inertia: Matrix3<f64>,
        joint: Option<JointSpec>,
    ) -> usize {
        let idx = self.bodies.len();
        if let Some(p) = parent {
            self.bodies[p].children.push(idx);
        }
        self.bodies.push(Body {
            name: name.into(),
            role: None,
            parent,
            children: vec![],
            bvh_joint: idx,
            merged: vec![],
            mass,
            inertia,
            com: joint.as_ref().map_or(Vector3::zeros(), |j| -j.child_anchor),
            capsules: vec![],
            joint: joint.map(|j| Joint {
                kind: j.kind,
                parent_anchor: j.parent_anchor,
                child_anchor: j.child_anchor,
                rest_rel: j.rest_rel,
                axis_parent: j.axis_parent.normalize(),
                axis_child: j.axis_child.normalize(),
            }),
            segments: vec![],
        });
        idx
    }

    /// Finish: a model with gravity (0, −9.81, 0).
    pub fn build(self) -> Model {
        let n = self.bodies.len();
        Model {
            bodies: self.bodies,
            gravity: GRAVITY,
            spec_name: "built".into(),
            figure: FigureInfo {
                scale: 1.0,
                unit: "m".into(),
                to_world: UnitQuaternion::identity(),
                first_frame: 0,
                absolute_positions: vec![true; n],
                height_m: 0.0,
                stature_source: "none".into(),
                stature_detail: String::new(),
            },
            owner: (0..n).map(Some).collect(),
            frozen: vec![None; n],
            clip_joint_names: (0..n).map(|i| format!("body{i}")).collect(),
            mass_source: "given per body".into(),
            notes: vec![],
        }
    }
}
