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
    /// Unit world axes: columns `0..dof` are muscle axes, `dof..3` forbidden axes.
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

    /// Position error g (METHOD §4/§10): linear (x_a + r_a) − (x_b + r_b), and the rotation
    /// angles about the forbidden axes of the change of relative rotation since Q0, signed
    /// so that ġ = J u.
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
        if self.kind != JointType::Ball {
            // deviation of the relative rotation, expressed in world: R_b Q0⁻¹ R_a⁻¹
            let dev_world = (rb * self.rest_rel.inverse() * ra.inverse()).scaled_axis();
            for (i, g) in g_rot.iter_mut().enumerate().take(3 - jf.dof) {
                let e = jf.axes.column(jf.dof + i).into_owned();
                *g = -dev_world.dot(&e);
            }
        }
        (g_lin, g_rot)
    }
}
