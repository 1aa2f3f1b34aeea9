//! Skeleton specs and Clip → [`Model`]: stature, bodies, capsule shapes, mass from
//! anthropometric tables, joints (METHOD §3–§4).

pub mod anthropometry;
mod build;
mod builder;
pub mod joint;
mod mass;
mod model;
mod roles;
mod shape;
mod spec;
mod stature;
#[cfg(test)]
mod tests;
mod units;

pub use build::{
    ClipWorldPoses, ModelError, ModelOptions, build_model, build_model_with_poses, mean_rotation,
    point_segment_distance,
};
pub use builder::{JointSpec, ModelBuilder};
pub use model::{Body, Capsule, FigureInfo, GRAVITY, Joint, Model, SegmentShare};
pub use roles::{JointType, Role};
pub use shape::{BODY_DENSITY, MassAccumulator};
pub use spec::{BUILTIN_SPECS, SkeletonSpec, SpecError, base_name};
pub use stature::{StatureEstimate, StatureSource, estimate_stature};
pub use units::{
    ClipFrames, FigureError, FrameOptions, PLAUSIBLE_STATURE_M, PositionConvention, stature_warning,
};
