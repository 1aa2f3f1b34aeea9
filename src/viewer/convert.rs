//! The one boundary between jostle's nalgebra f64 maths and kiss3d's glam f32 types.

use kiss3d::prelude::{Quat, Vec3};
use nalgebra::{UnitQuaternion, Vector3};

/// A point or vector (m, m/s) for the renderer.
pub fn to_glam(v: &Vector3<f64>) -> Vec3 {
    Vec3::from(v.cast::<f32>())
}

/// An orientation for the renderer.
pub fn quat_to_glam(q: &UnitQuaternion<f64>) -> Quat {
    Quat::from(q.cast::<f32>())
}

/// A renderer vector back in jostle's f64 maths.
pub fn from_glam(v: Vec3) -> Vector3<f64> {
    Vector3::<f32>::from(v).cast::<f64>()
}
