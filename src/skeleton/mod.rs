//! Skeleton specs and Clip → [`Model`]: bodies, capsule shapes, mass, joints (METHOD §3–§4).

mod build;
mod builder;
pub mod joint;
mod model;
mod roles;
mod shape;
mod spec;
mod units;

pub use build::{ModelError, ModelOptions, build_model, mean_rotation, point_segment_distance};
pub use builder::{JointSpec, ModelBuilder};
pub use model::{Body, Capsule, FigureInfo, GRAVITY, Joint, Model};
pub use roles::{JointType, Role};
pub use shape::{BODY_DENSITY, MassAccumulator};
pub use spec::{BUILTIN_SPECS, SkeletonSpec, SpecError, base_name};
pub use units::{ClipFrames, FigureError, FrameOptions, PositionConvention};
