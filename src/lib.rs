//! jostle: motion capture that reacts to physics.
pub mod dynamics;
pub mod mocap;
pub mod motion;
pub mod sim;
pub mod skeleton;
