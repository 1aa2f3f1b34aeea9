//! Thrown balls (METHOD §9): their properties, state and the impulses they received, and
//! their launch. Their contacts with the character, the ground and each other are solved
//! by the simulation's contact phase, `sim::contact` (re-exported here, where its
//! public items have always lived): each step, after the character's velocities are solved
//! without contacts, continuous detection (swept sphere against moving capsules, the ground
//! plane and other balls, so a 40 m/s ball cannot tunnel through a forearm), then one LCP
//! for all contacts — Newton restitution and a polyhedral friction cone (Anitescu–Potra),
//! solved with Lemke — whose Delassus matrix J K⁻¹ Jᵀ comes from impulse responses through
//! the step's own O(n) factorisation. No penalty springs.

pub use crate::sim::contact::{
    ContactError, ContactOptions, ContactReport, ContactWorkspace, FloorRow, WarmStart,
    contact_phase, contact_phase_with_floor,
};
use nalgebra::Vector3;

/// Physical properties of a ball.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BallParams {
    /// Mass, kg.
    pub mass: f64,
    /// Radius, m.
    pub radius: f64,
    /// Newton restitution against the body (dimensionless).
    pub restitution: f64,
    /// Coulomb friction coefficient against the body.
    pub friction: f64,
}

impl Default for BallParams {
    /// A handball: 0.45 kg, 0.095 m.
    fn default() -> Self {
        BallParams {
            mass: 0.45,
            radius: 0.095,
            restitution: 0.5,
            friction: 0.5,
        }
    }
}

/// What a ball touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touched {
    /// A body of the character (index).
    Body(usize),
    /// The ground plane.
    Ground,
    /// Another ball (index).
    Ball(usize),
}

/// One contact impulse received by a ball.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Time of impact, s.
    pub t: f64,
    /// What it touched.
    pub other: Touched,
    /// Impulse on the ball (world, N·s), summed over the contact episode.
    pub impulse: Vector3<f64>,
    /// How long the contact lasted (0 for a single impact), s.
    pub duration: f64,
}

/// A thrown ball: a free rigid sphere with no controller.
#[derive(Clone, Debug, PartialEq)]
pub struct Ball {
    /// Properties.
    pub params: BallParams,
    /// Launch time, s.
    pub launch_t: f64,
    /// Launch point, m.
    pub launch_x: Vector3<f64>,
    /// Launch velocity, m/s.
    pub launch_v: Vector3<f64>,
    /// Centre, m (valid once launched).
    pub x: Vector3<f64>,
    /// Velocity, m/s.
    pub v: Vector3<f64>,
    /// Spin, rad/s.
    pub w: Vector3<f64>,
    /// In flight (launched).
    pub active: bool,
    /// Contact impulses received, in time order.
    pub hits: Vec<Hit>,
    /// The body the ball was aimed at (targeted throws), for the metrics.
    pub aimed_at: Option<usize>,
}

impl Ball {
    /// A ball launched at `t` (s) from `x` (m) with velocity `v` (m/s).
    pub fn new(params: BallParams, t: f64, x: Vector3<f64>, v: Vector3<f64>) -> Self {
        Ball {
            params,
            launch_t: t,
            launch_x: x,
            launch_v: v,
            x,
            v,
            w: Vector3::zeros(),
            active: false,
            hits: vec![],
            aimed_at: None,
        }
    }

    /// A handball-like ball (default restitution and friction) for a resolved launch.
    pub fn from_launch(l: &crate::sim::scenario::Launch) -> Self {
        let mut ball = Ball::new(
            BallParams {
                mass: l.mass,
                radius: l.radius,
                ..Default::default()
            },
            l.t,
            l.origin,
            l.velocity,
        );
        ball.aimed_at = l.aimed_at;
        ball
    }

    /// Inverse moment of inertia of the solid sphere, 1/(kg·m²).
    pub(crate) fn inv_inertia(&self) -> f64 {
        1.0 / (0.4 * self.params.mass * self.params.radius * self.params.radius)
    }
}

/// Activate balls launched within [t, t + h): their ballistic state at t.
pub fn launch_balls(balls: &mut [Ball], t: f64, h: f64, gravity: &Vector3<f64>) {
    for b in balls.iter_mut() {
        if !b.active && b.launch_t < t + h {
            let dt = t - b.launch_t;
            b.x = b.launch_x + b.launch_v * dt + gravity * (0.5 * dt * dt);
            b.v = b.launch_v + gravity * dt;
            b.active = true;
        }
    }
}
