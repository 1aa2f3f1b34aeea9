//! Mass properties of capsule-built bodies at a uniform density (METHOD §3).

use nalgebra::{Matrix3, Vector3};

/// Density the accumulator fills shapes with, kg/m³: the capsules' density
/// ([`super::anthropometry::SHAPE_DENSITY`]). Bodies whose inertia comes from their
/// capsules rescale it to the mass the anthropometric tables give them.
pub const BODY_DENSITY: f64 = super::anthropometry::SHAPE_DENSITY;

/// Accumulates point-like mass pieces (each with its own inertia about its centroid).
#[derive(Default, Clone, Debug)]
pub struct MassAccumulator {
    pieces: Vec<(f64, Vector3<f64>, Matrix3<f64>)>,
}

impl MassAccumulator {
    /// Solid cylinder of radius `r` between `a` and `b` (m), density ρ.
    pub fn add_cylinder(&mut self, a: Vector3<f64>, b: Vector3<f64>, r: f64) {
        let d = b - a;
        let len = d.norm();
        if len < 1e-9 {
            return;
        }
        let m = BODY_DENSITY * std::f64::consts::PI * r * r * len;
        let u = d / len;
        let axial = 0.5 * m * r * r;
        let perp = m * (3.0 * r * r + len * len) / 12.0;
        let uu = u * u.transpose();
        let inertia = uu * axial + (Matrix3::identity() - uu) * perp;
        self.pieces.push((m, (a + b) * 0.5, inertia));
    }

    /// Solid sphere of radius `r` at `c`, scaled by `fraction` of its volume
    /// (0.5 for an end cap).
    pub fn add_sphere(&mut self, c: Vector3<f64>, r: f64, fraction: f64) {
        let m = BODY_DENSITY * fraction * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        self.pieces
            .push((m, c, Matrix3::identity() * (0.4 * m * r * r)));
    }

    /// Total mass (kg), COM, and inertia about the COM (kg·m²).
    pub fn finish(&self) -> (f64, Vector3<f64>, Matrix3<f64>) {
        let m: f64 = self.pieces.iter().map(|p| p.0).sum();
        if m <= 0.0 {
            return (0.0, Vector3::zeros(), Matrix3::zeros());
        }
        let com = self.pieces.iter().map(|p| p.1 * p.0).sum::<Vector3<f64>>() / m;
        let mut inertia = Matrix3::zeros();
        for (mi, ci, ii) in &self.pieces {
            let d = ci - com;
            inertia += ii + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * *mi;
        }
        (m, com, inertia)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cylinder_matches_textbook_inertia() {
        let mut acc = MassAccumulator::default();
        acc.add_cylinder(
            Vector3::new(0.0, -0.5, 0.0),
            Vector3::new(0.0, 0.5, 0.0),
            0.1,
        );
        let (m, com, i) = acc.finish();
        let m_exp = BODY_DENSITY * std::f64::consts::PI * 0.01;
        assert!((m - m_exp).abs() < 1e-9);
        assert!(com.norm() < 1e-12);
        assert!((i[(1, 1)] - 0.5 * m_exp * 0.01).abs() < 1e-9);
        assert!((i[(0, 0)] - m_exp * (0.03 + 1.0) / 12.0).abs() < 1e-9);
    }

    #[test]
    fn parallel_axis_for_two_spheres() {
        let mut acc = MassAccumulator::default();
        acc.add_sphere(Vector3::new(1.0, 0.0, 0.0), 0.1, 1.0);
        acc.add_sphere(Vector3::new(-1.0, 0.0, 0.0), 0.1, 1.0);
        let (m, com, i) = acc.finish();
        assert!(com.norm() < 1e-12);
        // about y: 2·(2/5 m r²) + 2·(m/2)·1²
        let ms = m / 2.0;
        assert!((i[(1, 1)] - (2.0 * 0.4 * ms * 0.01 + m)).abs() < 1e-9);
        assert!((i[(0, 0)] - 2.0 * 0.4 * ms * 0.01).abs() < 1e-9);
    }
}
