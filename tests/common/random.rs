//! A deterministic RNG and random models/motions for the dynamics tests.
#![allow(dead_code)]

use jostle::motion::kinematics::{JointMotion, RootMotion, joint_motion_from_angles};
use jostle::skeleton::{JointSpec, JointType, Model, ModelBuilder};
use nalgebra::{Matrix3, Unit, UnitQuaternion, Vector3};

/// SplitMix64: tiny, deterministic, good enough for test inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn vec3(&mut self, s: f64) -> Vector3<f64> {
        Vector3::new(
            self.uniform(-s, s),
            self.uniform(-s, s),
            self.uniform(-s, s),
        )
    }
    pub fn unit(&mut self) -> Vector3<f64> {
        loop {
            let v = self.vec3(1.0);
            let n = v.norm();
            if n > 0.1 && n < 1.0 {
                return v / n;
            }
        }
    }
    pub fn rotation(&mut self) -> UnitQuaternion<f64> {
        let axis = self.unit();
        UnitQuaternion::from_axis_angle(&Unit::new_normalize(axis), self.uniform(-3.0, 3.0))
    }
}

/// A random tree of `n` bodies with joints cycling ball / hinge / universal.
pub fn random_model(rng: &mut Rng, n: usize) -> Model {
    let mut mb = ModelBuilder::new();
    for i in 0..n {
        let mass = rng.uniform(0.5, 10.0);
        let r = rng.rotation().to_rotation_matrix();
        let d = Matrix3::from_diagonal(&Vector3::new(
            rng.uniform(0.01, 0.2),
            rng.uniform(0.01, 0.2),
            rng.uniform(0.01, 0.2),
        ));
        let inertia = r.matrix() * d * r.matrix().transpose();
        if i == 0 {
            mb.add_body("root", None, mass, inertia, None);
            continue;
        }
        let parent = (rng.next_u64() % i as u64) as usize;
        let kind = [JointType::Ball, JointType::Hinge, JointType::Universal][i % 3];
        let rest = rng.rotation();
        let n1 = rng.unit();
        let n2 = {
            let t = rng.unit();
            (t - n1 * n1.dot(&t)).normalize()
        };
        let (axis_parent, axis_child) = match kind {
            JointType::Hinge => (rest * n1, n1),
            _ => (rest * n1, n2),
        };
        mb.add_body(
            &format!("b{i}"),
            Some(parent),
            mass,
            inertia,
            Some(JointSpec {
                kind,
                parent_anchor: rng.vec3(0.3),
                child_anchor: rng.vec3(0.3),
                axis_parent,
                axis_child,
                rest_rel: rest,
            }),
        );
    }
    mb.build()
}

/// Generalised coordinates of a random motion: per body, either a ball joint's
/// (rotation vector φ₀, φ̇, φ̈) or a hinge/universal joint's (angles, rates, accelerations).
pub struct RandomMotion {
    pub root_p: Vector3<f64>,
    pub root_q: UnitQuaternion<f64>,
    pub root_v: Vector3<f64>,
    pub root_w: Vector3<f64>,
    pub root_a: Vector3<f64>,
    pub root_dw: Vector3<f64>,
    /// per body: (q0 for ball, φ̇, φ̈) as vectors, or angles in x,y with rates/accs
    pub q0: Vec<UnitQuaternion<f64>>,
    pub c0: Vec<Vector3<f64>>,
    pub c1: Vec<Vector3<f64>>,
    pub c2: Vec<Vector3<f64>>,
}

pub fn random_motion(rng: &mut Rng, model: &Model) -> RandomMotion {
    let n = model.bodies.len();
    RandomMotion {
        root_p: rng.vec3(1.0),
        root_q: rng.rotation(),
        root_v: rng.vec3(2.0),
        root_w: rng.vec3(3.0),
        root_a: rng.vec3(5.0),
        root_dw: rng.vec3(10.0),
        q0: (0..n).map(|_| rng.rotation()).collect(),
        c0: (0..n).map(|_| rng.vec3(1.5)).collect(),
        c1: (0..n).map(|_| rng.vec3(3.0)).collect(),
        c2: (0..n).map(|_| rng.vec3(10.0)).collect(),
    }
}

/// Right Jacobian of SO(3): body angular velocity of exp(φ(t)) is J_r(φ) φ̇.
pub fn right_jacobian(phi: &Vector3<f64>) -> Matrix3<f64> {
    let th = phi.norm();
    let k = phi.cross_matrix();
    if th < 1e-6 {
        return Matrix3::identity() - k * 0.5 + k * k / 6.0;
    }
    Matrix3::identity() - k * ((1.0 - th.cos()) / (th * th))
        + k * k * ((th - th.sin()) / (th * th * th))
}

/// The motion at time t (quadratic in t in generalised coordinates); exact derivatives at t = 0.
pub fn motion_at(model: &Model, m: &RandomMotion, t: f64) -> (RootMotion, Vec<JointMotion>) {
    let phi = m.root_w * t + m.root_dw * (0.5 * t * t);
    let root = RootMotion {
        p: m.root_p + m.root_v * t + m.root_a * (0.5 * t * t),
        q: UnitQuaternion::from_scaled_axis(phi) * m.root_q,
        v: m.root_v + m.root_a * t,
        // world-frame rate of exp(φ(t)): left Jacobian = J_r(−φ)
        w: right_jacobian(&(-phi)) * (m.root_w + m.root_dw * t),
        a: m.root_a,
        dw: m.root_dw, // exact at t = 0 only
    };
    let joints = model
        .bodies
        .iter()
        .enumerate()
        .map(|(b, body)| match body.joint.as_ref() {
            None => JointMotion::default(),
            Some(j) if j.kind == JointType::Ball => {
                let phi = m.c1[b] * t + m.c2[b] * (0.5 * t * t);
                JointMotion {
                    q_rel: m.q0[b] * UnitQuaternion::from_scaled_axis(phi),
                    w: right_jacobian(&phi) * (m.c1[b] + m.c2[b] * t),
                    dw: m.c2[b], // exact at t = 0 only
                }
            }
            Some(j) => {
                let ang = m.c0[b] + m.c1[b] * t + m.c2[b] * (0.5 * t * t);
                let rate = m.c1[b] + m.c2[b] * t;
                joint_motion_from_angles(j, ang.as_slice(), rate.as_slice(), m.c2[b].as_slice())
            }
        })
        .collect();
    (root, joints)
}
