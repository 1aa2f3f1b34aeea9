//! The full (dense) METHOD §4/§6 system, assembled explicitly. Test oracle only: the
//! library's hot paths never form these matrices.

use crate::motion::kinematics::BodyKinematics;
use crate::skeleton::Model;
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};

/// Dense M, f, J (joint constraint rows), k, H (muscle rows) and J_r (root rows) at a state.
#[derive(Clone, Debug)]
pub struct DenseSystem {
    /// Mass matrix, 6n×6n.
    pub m: DMatrix<f64>,
    /// Applied forces (gravity, gyroscopic), 6n.
    pub f: DVector<f64>,
    /// Joint constraint rows.
    pub j: DMatrix<f64>,
    /// Velocity bias of the constraint rows (J u̇ + k = 0).
    pub k: DVector<f64>,
    /// Muscle rows (f_m = Hᵀτ).
    pub h: DMatrix<f64>,
    /// Root rows (6 × 6n).
    pub jr: DMatrix<f64>,
}

fn skew(v: &Vector3<f64>) -> Matrix3<f64> {
    v.cross_matrix()
}

/// Assemble the dense system at the poses and velocities of `kin`.
pub fn assemble(model: &Model, kin: &[BodyKinematics]) -> DenseSystem {
    let n = model.bodies.len();
    let nc: usize = model
        .bodies
        .iter()
        .filter_map(|b| b.joint.as_ref())
        .map(|j| 6 - j.dof())
        .sum();
    let nm = model.joint_dofs();
    let mut m = DMatrix::zeros(6 * n, 6 * n);
    let mut f = DVector::zeros(6 * n);
    for (b, body) in model.bodies.iter().enumerate() {
        let r = kin[b].q.to_rotation_matrix();
        let iw = r.matrix() * body.inertia * r.matrix().transpose();
        for i in 0..3 {
            m[(6 * b + i, 6 * b + i)] = body.mass;
        }
        m.view_mut((6 * b + 3, 6 * b + 3), (3, 3)).copy_from(&iw);
        f.rows_mut(6 * b, 3).copy_from(&(model.gravity * body.mass));
        f.rows_mut(6 * b + 3, 3)
            .copy_from(&(-kin[b].w.cross(&(iw * kin[b].w))));
    }
    let mut j = DMatrix::zeros(nc, 6 * n);
    let mut k = DVector::zeros(nc);
    let mut h = DMatrix::zeros(nm, 6 * n);
    let (mut row, mut hrow) = (0, 0);
    for (b, body) in model.bodies.iter().enumerate() {
        let (Some(a), Some(joint)) = (body.parent, body.joint.as_ref()) else {
            continue;
        };
        let jf = joint.frame(&kin[a].q, &kin[b].q);
        let (k_lin, k_rot) = joint.bias(&jf, &kin[a].q, &kin[b].q, &kin[a].w, &kin[b].w);
        j.view_mut((row, 6 * a), (3, 3))
            .copy_from(&Matrix3::identity());
        j.view_mut((row, 6 * a + 3), (3, 3))
            .copy_from(&(-skew(&jf.r_a)));
        j.view_mut((row, 6 * b), (3, 3))
            .copy_from(&(-Matrix3::identity()));
        j.view_mut((row, 6 * b + 3), (3, 3))
            .copy_from(&skew(&jf.r_b));
        k.rows_mut(row, 3).copy_from(&k_lin);
        row += 3;
        for i in jf.dof..3 {
            let e = jf.axes.column(i).transpose();
            j.view_mut((row, 6 * a + 3), (1, 3)).copy_from(&e);
            j.view_mut((row, 6 * b + 3), (1, 3)).copy_from(&(-e));
            k[row] = k_rot[i - jf.dof];
            row += 1;
        }
        for i in 0..jf.dof {
            let e = jf.axes.column(i).transpose();
            h.view_mut((hrow, 6 * a + 3), (1, 3)).copy_from(&(-e));
            h.view_mut((hrow, 6 * b + 3), (1, 3)).copy_from(&e);
            hrow += 1;
        }
    }
    let mut jr = DMatrix::zeros(6, 6 * n);
    jr.view_mut((0, 0), (6, 6)).fill_with_identity();
    DenseSystem { m, f, j, k, h, jr }
}

/// Stack body accelerations (a, α) into u̇ (6n).
pub fn stack_accelerations(kin: &[BodyKinematics]) -> DVector<f64> {
    let mut u = DVector::zeros(6 * kin.len());
    for (b, k) in kin.iter().enumerate() {
        u.rows_mut(6 * b, 3).copy_from(&k.a);
        u.rows_mut(6 * b + 3, 3).copy_from(&k.dw);
    }
    u
}

/// Dense inverse dynamics: solve `[Jᵀ Hᵀ J_rᵀ] (λ, τ, λ_r) = M u̇ − f` (square, 6n×6n).
/// Returns (λ, τ, λ_r) or `None` if singular.
pub fn dense_inverse(
    sys: &DenseSystem,
    udot: &DVector<f64>,
) -> Option<(DVector<f64>, DVector<f64>, DVector<f64>)> {
    let (nc, nm) = (sys.j.nrows(), sys.h.nrows());
    let n6 = sys.m.nrows();
    let mut a = DMatrix::zeros(n6, n6);
    a.columns_mut(0, nc).copy_from(&sys.j.transpose());
    a.columns_mut(nc, nm).copy_from(&sys.h.transpose());
    a.columns_mut(nc + nm, 6).copy_from(&sys.jr.transpose());
    let rhs = &sys.m * udot - &sys.f;
    let x = a.lu().solve(&rhs)?;
    Some((
        x.rows(0, nc).into_owned(),
        x.rows(nc, nm).into_owned(),
        x.rows(nc + nm, 6).into_owned(),
    ))
}

/// Dense forward dynamics with muscle torques τ and a prescribed root acceleration:
/// solve `[M −Jᵀ −J_rᵀ; J 0 0; J_r 0 0] (u̇, λ, λ_r) = (f + Hᵀτ, −k, root_acc)`.
pub fn dense_forward(
    sys: &DenseSystem,
    tau: &DVector<f64>,
    root_acc: &DVector<f64>,
) -> Option<DVector<f64>> {
    let n6 = sys.m.nrows();
    let nc = sys.j.nrows();
    let size = n6 + nc + 6;
    let mut a = DMatrix::zeros(size, size);
    a.view_mut((0, 0), (n6, n6)).copy_from(&sys.m);
    a.view_mut((0, n6), (n6, nc))
        .copy_from(&(-sys.j.transpose()));
    a.view_mut((0, n6 + nc), (n6, 6))
        .copy_from(&(-sys.jr.transpose()));
    a.view_mut((n6, 0), (nc, n6)).copy_from(&sys.j);
    a.view_mut((n6 + nc, 0), (6, n6)).copy_from(&sys.jr);
    let mut rhs = DVector::zeros(size);
    rhs.rows_mut(0, n6)
        .copy_from(&(&sys.f + sys.h.transpose() * tau));
    rhs.rows_mut(n6, nc).copy_from(&(-&sys.k));
    rhs.rows_mut(n6 + nc, 6).copy_from(root_acc);
    let x = a.lu().solve(&rhs)?;
    Some(x.rows(0, n6).into_owned())
}
