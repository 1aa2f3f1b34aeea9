//! jostle: motion capture that reacts to physics.
pub mod mocap;
pub mod motion;
