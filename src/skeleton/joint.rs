//! Joint rows in world terms (METHOD §4): anchors r_a, r_b, the rotational basis split into
//! muscle axes (rows of H) and forbidden axes (rotational rows of J), the velocity bias k
//! and the position error g, for ball, hinge and universal joints.
//!
//! Every joint has 6 rows in all: 3 linear constraint rows (the ball part), `dof` muscle
//! rows and `3 − dof` rotational constraint rows. Together they span every equal-and-
//! opposite wrench between the two bodies (rank 6).

use super::model::Joint;
use super::roles::JointType;
use nalgebra::{Matrix3, UnitQuaternion, Vector3};

/// A joint evaluated at the current poses of its parent `a` and child `b`.
#[derive(Clone, Copy, Debug)]
pub struct JointFrame {
    /// World vector from the parent's COM to the joint point, m.
    pub r_a: Vector3<f64>,
    /// World vector from the child's COM to the joint point, m.
    pub r_b: Vector3<f64>,
    /// Unit world axes: columns `0..dof` are muscle axes, `dof..3` forbidden axes (a ball
    /// joint's, 3 DOF: the parent's rotation matrix, orthonormal).
    pub axes: Matrix3<f64>,
    /// Rotational DOF.
    pub dof: usize,
}

/// A fixed unit vector perpendicular to `n` (deterministic).
pub fn perpendicular(n: &Vector3<f64>) -> Vector3<f64> {
    let t = if n.x.abs() < 0.6 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    (t - n * n.dot(&t)).normalize()
}

impl Joint {
    /// Evaluate anchors and axes at parent rotation `ra` and child rotation `rb`.
    #[inline]
    pub fn frame(&self, ra: &UnitQuaternion<f64>, rb: &UnitQuaternion<f64>) -> JointFrame {
        let r_a = ra * self.parent_anchor;
        let r_b = rb * self.child_anchor;
        let axes = match self.kind {
            // Ball: muscle torques along the parent's axes, so ψ is body-relative directly.
            JointType::Ball => *ra.to_rotation_matrix().matrix(),
            JointType::Hinge => {
                let n = self.axis_parent;
                let e1 = perpendicular(&n);
                let e2 = n.cross(&e1);
                let rm = ra.to_rotation_matrix();
                Matrix3::from_columns(&[rm * n, rm * e1, rm * e2])
            }
            JointType::Universal => {
                let n1 = ra * self.axis_parent;
                let n2 = rb * self.axis_child;
                let c = n1.cross(&n2);
                let m = c.try_normalize(1e-12).unwrap_or_else(|| perpendicular(&n1));
                Matrix3::from_columns(&[n1, n2, m])
            }
        };
        JointFrame {
            r_a,
            r_b,
            axes,
            dof: self.kind.dof(),
        }
    }

    /// Velocity bias k of the constraint rows: `J u̇ + k = 0` on the manifold.
    /// Returns the 3 linear entries and the rotational entries (one per forbidden axis).
    #[inline]
    pub fn bias(
        &self,
        jf: &JointFrame,
        ra: &UnitQuaternion<f64>,
        rb: &UnitQuaternion<f64>,
        wa: &Vector3<f64>,
        wb: &Vector3<f64>,
    ) -> (Vector3<f64>, [f64; 2]) {
        let k_lin = wa.cross(&wa.cross(&jf.r_a)) - wb.cross(&wb.cross(&jf.r_b));
        let mut k_rot = [0.0; 2];
        let dw = wa - wb;
        match self.kind {
            JointType::Ball => {}
            JointType::Hinge => {
                for (i, k) in k_rot.iter_mut().enumerate() {
                    let e = jf.axes.column(1 + i).into_owned();
                    *k = wa.cross(&e).dot(&dw);
                }
            }
            JointType::Universal => {
                let n1 = ra * self.axis_parent;
                let n2 = rb * self.axis_child;
                let c = n1.cross(&n2);
                let cn = c.norm();
                if cn > 1e-12 {
                    let m = c / cn;
                    let cdot = wa.cross(&n1).cross(&n2) + n1.cross(&wb.cross(&n2));
                    let mdot = (cdot - m * m.dot(&cdot)) / cn;
                    k_rot[0] = dw.dot(&mdot);
                }
            }
        }
        (k_lin, k_rot)
    }

    /// Position error g (METHOD §4/§10): linear (x_a + r_a) − (x_b + r_b), and one
    /// rotational entry per forbidden axis, signed so that ġ = J u.
    ///
    /// Hinge: (n_b × n_a)·e for the two forbidden axes e, with n_a = R_a n̄_a and
    /// n_b = R_b n̄_b the hinge axis as carried by each body — the sine of their
    /// misalignment, valid at any hinge angle (the log of the relative rotation would mix
    /// twist into the forbidden axes once the hinge turns past ~90° from Q0, and
    /// stabilisation would then diverge). Universal: (n₁·n₂ − c₀)/|n₁ × n₂| with c₀ the rest
    /// value of n₁·n₂.
    pub fn position_error(
        &self,
        xa: &Vector3<f64>,
        ra: &UnitQuaternion<f64>,
        xb: &Vector3<f64>,
        rb: &UnitQuaternion<f64>,
    ) -> (Vector3<f64>, [f64; 2]) {
        let jf = self.frame(ra, rb);
        let g_lin = (xa + jf.r_a) - (xb + jf.r_b);
        let mut g_rot = [0.0; 2];
        match self.kind {
            JointType::Ball => {}
            JointType::Hinge => {
                let na = ra * self.axis_parent;
                let nb = rb * self.axis_child;
                let c = nb.cross(&na);
                for (i, g) in g_rot.iter_mut().enumerate() {
                    *g = c.dot(&jf.axes.column(1 + i));
                }
            }
            JointType::Universal => {
                let n1 = ra * self.axis_parent;
                let n2 = rb * self.axis_child;
                let c0 = (self.rest_rel.inverse() * self.axis_parent).dot(&self.axis_child);
                let cn = n1.cross(&n2).norm().max(1e-9);
                g_rot[0] = (n1.dot(&n2) - c0) / cn;
            }
        }
        (g_lin, g_rot)
    }
}
