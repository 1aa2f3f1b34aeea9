//! Contact primitives (METHOD §9): collision detection between balls, limbs and the ground,
//! continuous over a step, and Lemke's algorithm for the contact LCP.
//!
//! - [`collide`]: spheres (balls), world-space capsules (limbs) and planes (the ground);
//!   static contact queries with a margin, and swept queries that return the earliest
//!   time of impact within a step. A 40 m/s ball moves 0.33 m per 1/120 s step, far more
//!   than a forearm is thick, so the sweeps are continuous: sphere–sphere and
//!   sphere–plane in closed form, sphere–capsule by conservative advancement with a
//!   rigorous bound on how fast the gap can close, so no hit is skipped.
//! - [`lcp`]: Lemke's complementary pivoting method with the lexicographic minimum ratio
//!   test and an ε in the ratio test (thesis §2.7.1, §4.8.3).
//! - [`nnls`]: the ground-support split's non-negative least squares (six residuals), by
//!   block principal pivoting on a 6 × 6 system per round.
//! - [`impulse`]: contact Jacobian rows, the closed-form single-contact impulse (the check
//!   for the LCP) and the layout of the frictional contact LCP (thesis eq. 2.46–2.49).
//!
//! Everything is f64 and written here rather than taken from parry3d: parry3d is f32 on
//! glam (the simulation is f64 on nalgebra), and its nonlinear cast missed a rotating-limb
//! hit in our trials (CRATE-NOTES §5). The shapes needed are few and their geometry short.
//! Units: SI (m, s, kg, N·s); world frame, Y up.

pub mod collide;
pub mod impulse;
pub mod lcp;
pub mod nnls;

pub use collide::{
    Contact, Plane, Sphere, SweepHit, SweepStatus, WorldCapsule, capsule_capsule,
    closest_point_on_segment, closest_points_segments, sphere_capsule, sphere_plane, sphere_sphere,
    sweep_sphere_capsule, sweep_sphere_plane, sweep_sphere_sphere,
};
pub use impulse::{
    FrictionLayout, contact_row, effective_inverse_mass, friction_lcp, friction_lcp_into,
    single_contact_impulse, tangent_directions, tangent_directions_iter,
};
pub use lcp::{
    ConeIndices, LcpError, LcpSolution, LemkeOptions, SupportRules, SupportScratch, lemke,
    lemke_with, solve_from_support, solve_from_support_in,
};
pub use nnls::{Nnls6Scratch, nnls6_from_support};
