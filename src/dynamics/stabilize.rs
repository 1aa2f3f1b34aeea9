//! Constraint-drift control (METHOD §10; thesis ch. 3; Hong, Welch & Choi 2005).
//!
//! The step enforces the joints at the velocity level, `J(p) u⁺ = b`, so positions drift
//! off the constraint manifold g(p) = 0 by O(h²) per step. Four treatments, chosen per
//! run with [`Drift`]:
//!
//! * **None**: b = 0. The error accumulates (thesis §5.2.1: ≈ 20 mm after 600 steps of a
//!   6-link chain).
//! * **Baumgarte** (velocity level, as the thesis uses it): `J u⁺ = −β g(p)` with β in s⁻¹.
//!   Each step removes the fraction βh of the error, so it settles where the removal
//!   balances the O(h²) creation. β = 1/h is Hong et al.'s *first-order implicit*
//!   constraint enforcement (their eq. 2–4: the linearised position constraint at t + h,
//!   `g + h J u⁺ = 0`), available as [`Drift::first_order_implicit`].
//! * **Post-stabilisation** (default; Cline & Pai 2003, thesis §3.3): after the step,
//!   solve `[M −Jᵀ; J 0][δ; μ] = [0; −g(p⁺)]` with the same block-tree factorisation
//!   (A = M at p⁺, block diagonal; J at p⁺) and displace every body by the twist δ
//!   (x += δx, R ← exp(\[δθ\]×) R): the mass-weighted least-change projection onto the
//!   linearised manifold. A second pass reusing the factorisation (a chord Newton step)
//!   runs only if the error is still above the tolerance. A pinned root's rows join with
//!   the root's pose error relative to its target, so the root is put back on its path.
//!   Or (`StepOptions::post_stabilization_reuse`, the character simulation's default,
//!   `crate::sim::Projection::Step`) the same projection with the step's own
//!   factorisation, in the metric M̃ and with the rows at the step's start: chord steps,
//!   no second factorisation.
//! * **Improved implicit** (Hong, Welch & Choi 2005, §3), adapted to rigid bodies:
//!   1. *Half step with the constraint solved implicitly at t + h/2.* Solve the step's
//!      KKT system with h/2 in place of h (M̃ = M − (h/2)²∇_p f − (h/2)∇_u f, momentum
//!      rows `M u + (h/2) f̃`) and constraint rows `J(p) u_½ = −(2/h) g(p)` (their eq. 7:
//!      g + J (p_½ − p) = 0 with p_½ = p ⊕ (h/2) u_½; a pinned root's rows get
//!      `u_d − (2/h) g_root`). This yields the half-step velocity u_½ and multipliers
//!      λ_½ (impulses over h/2, i.e. forces λ_½/(h/2)).
//!   2. *Mid-point momentum step.* Evaluate the rows at the half-step pose
//!      p_½ = p ⊕ (h/2) u_½ and apply the half-step forces over the whole step:
//!      `M̃⁺ u⁺ = M u + h f̃ + 2 J(p_½)ᵀ λ_½` (their second stage:
//!      q̇(t+h) = q̇ − h M⁻¹ Φ_qᵀ(q_½) λ + h M⁻¹ F), with positions from the mid-point
//!      velocity: p⁺ = p ⊕ h u_½ (x⁺ = x + h v_½, R⁺ = exp(\[h ω_½\]×) R).
//!
//!   Since J(p)(p⁺ − p) = −2 g(p), the linearised error after a step is −g(p) plus the
//!   O(h²) curvature term c: the error alternates around c/2 instead of settling at c as
//!   with the first-order scheme — about half the accumulated error, which is what the
//!   paper reports ("approximately two times higher accuracy").
//!
//!   Adaptations:
//!   (a) positions are rigid-body poses, displaced by twists through the exponential
//!   map instead of added coordinates; the error g is the joint's (METHOD §4), so linear
//!   and forbidden-axis rotational rows are treated alike.
//!   (b) The stiff forces (PD torques) stay linearly implicit in both stages (the paper
//!   integrates applied forces explicitly, with Adams–Bashforth, which would lose the
//!   stability the PD control needs). Stage 2's rotational momentum rows use the inertia
//!   at the new orientation, `R⁺ Ī R⁺ᵀ ω⁺ − R Ī Rᵀ ω = …`, linear because R⁺ is known:
//!   momentum is conserved with no gyroscopic term.
//!   (c) *Velocity projection in stage 2.* Stage 2 as published leaves u⁺ with a
//!   constraint-normal component n whose recurrence n⁺ = 2t − n (t the half-step
//!   target) has a double eigenvalue −1: with alternating errors it grows linearly, and
//!   once J(p_½) ≠ J(p) the growing impulses leak into the motion. We measured a 5-link
//!   arm (1 m rods, h = 0.01 s) gaining 1.9·10⁵ J in 5 s. Stage 2 therefore also
//!   enforces `J(p⁺) u⁺ = 0` with a second set of multipliers on the same block tree (a
//!   mass-weighted, dissipative projection; a pinned root's rows keep u⁺_root = u_d).
//!   The position update — hence the drift behaviour — is unchanged.
//!   (d) *Damped reflection.* The error map g ↦ −g has eigenvalue −1, so the
//!   sign-alternating error mode is undamped; on the same arm nonlinear cross terms
//!   (tangential velocity × normal correction, O(h|v|κ) per step) grew it into a 3 cm
//!   alternating separation after 4.4 s, worse than the first-order scheme. The half-step
//!   rows are therefore `J u_½ = −((1 + α)/h) g` with α =
//!   [`StepOptions::improved_reflection`](super::step::StepOptions::improved_reflection)
//!   (default 0.9; 1 is the literal scheme): the mode decays by α per step, and the mean
//!   error c/(1 + α) keeps nearly all of the improvement (accumulated error on that arm:
//!   0.43 m against 0.81 m for first order; α = 1: 3.4 m).
//!
//!   **Stiff forces.** Stage 2 assembles its own M̃ with the torque gradients. An earlier
//!   version wrote the end-pose inertia over the diagonal blocks after adding them, so
//!   the joints' stiffness and damping were lost on the diagonal while their couplings
//!   stayed: the 20-body humanoid under k = 300 N·m/rad, d = 30 N·m·s/rad joint springs
//!   at h = 1 ms diverged within 5 steps, and the PD-tracked demo walk within 5 steps,
//!   which this note then blamed on the mid-point update not being L-stable. With the
//!   blocks in order, that humanoid runs 2 s as it does under post-stabilisation
//!   (`tests/drift.rs`), and the tracked characters run with their root pinned (CMU
//!   01_01: 0.022° RMS, joints apart ≤ 0.08 mm, where post-stabilisation gives 0.0002°
//!   and 1e-5 mm). The scheme's mid-point position update is still the less damped one
//!   for modes far stiffer than the step (k h²/I ≫ 1); the linearly implicit step with
//!   post-stabilisation (default) remains the one for PD-controlled characters, and a
//!   spring-held root needs it.

use super::kkt::{BlockTree, KktError, KktVector, joint_rows};
use super::state::{BodyState, rotation_vector};
use super::step::RootTarget;
use crate::skeleton::joint::perpendicular;
use crate::skeleton::{Joint, JointType, Model};
use nalgebra::{Matrix3, Matrix6, UnitQuaternion, Vector3, Vector6};

/// How constraint drift is controlled (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Drift {
    /// No stabilisation: J u⁺ = 0.
    None,
    /// Velocity-level Baumgarte: J u⁺ = −β g, β in s⁻¹ (the thesis figures use 50 and
    /// 200 s⁻¹ at h = 1 ms). Stable for βh ≤ 1; βh = 1 is Hong et al.'s first-order
    /// implicit scheme.
    Baumgarte {
        /// Feedback rate β, 1/s.
        beta: f64,
    },
    /// Post-stabilisation projection after each step (default).
    #[default]
    PostStabilization,
    /// Hong, Welch & Choi's improved implicit scheme (half-step multipliers, mid-point
    /// momentum step). Less damped than post-stabilisation for very stiff modes, and only
    /// with a free or pinned root (see the module documentation).
    ImprovedImplicit,
}

impl Drift {
    /// Hong et al.'s first-order implicit constraint enforcement: Baumgarte with β = 1/h
    /// (`h` in s).
    pub fn first_order_implicit(h: f64) -> Drift {
        Drift::Baumgarte { beta: 1.0 / h }
    }

    /// A short label for reports (`none`, `baumgarte(50/s)`, `post-stabilization`,
    /// `improved-implicit`).
    pub fn label(&self) -> String {
        match self {
            Drift::None => "none".into(),
            Drift::Baumgarte { beta } => format!("baumgarte({beta}/s)"),
            Drift::PostStabilization => "post-stabilization".into(),
            Drift::ImprovedImplicit => "improved-implicit".into(),
        }
    }
}

/// Pose error of a pinned root relative to its target, ordered like its rows J_r = I:
/// (x − x_d in m, rotation vector of R R_d⁻¹ in rad), so that ġ = u − u_d.
#[inline]
pub fn root_error(s: &BodyState, target: &RootTarget) -> Vector6<f64> {
    let dx = s.x - target.x;
    let dr = rotation_vector(&(s.q * target.q.inverse()));
    Vector6::new(dx.x, dx.y, dx.z, dr.x, dr.y, dr.z)
}

/// Position error g of one joint, ordered like its rows (METHOD §4/§10): the linear
/// error (x_a + r_a) − (x_b + r_b) (m) and one rotational entry per forbidden axis (rad),
/// signed so that ġ = J u — exactly on the manifold, at any joint angle.
///
/// This deliberately differs from [`Joint::position_error`] (METHOD §4's "angles about
/// the forbidden axes of the relative-rotation change"), whose rotational entries are
/// only first-order: for a hinge turned by θ, the rotation vector of the change mixes
/// its off-axis components through J_l⁻¹(θn) (scaled by (θ/2)cot(θ/2), rotated by
/// ≈ θ/2), so its rate is not J u and stabilisation converges slowly and pushes in a
/// rotated direction; for a universal joint it reads ≈ θ₁θ₂/2 on the exact manifold, so
/// post-stabilisation would drag every moving universal joint off its true motion.
/// Here:
/// * hinge (axis n_a fixed in a, n_b in b, forbidden axes e_i fixed in a):
///   g_i = e_i · (n_b × n_a) (≈ the tilt angle of n_b off n_a about e_i);
/// * universal (n₁ fixed in a, n₂ in b): g = asin(n₁·n₂) − asin(n₁·n₂)_rest, whose rate
///   is mᵀ(ω_a − ω_b) with m = n₁×n₂/|n₁×n₂|.
#[inline]
pub fn joint_error(
    joint: &Joint,
    xa: &Vector3<f64>,
    qa: &UnitQuaternion<f64>,
    xb: &Vector3<f64>,
    qb: &UnitQuaternion<f64>,
) -> (Vector3<f64>, [f64; 2]) {
    let g_lin = (xa + qa * joint.parent_anchor) - (xb + qb * joint.child_anchor);
    let mut g_rot = [0.0; 2];
    match joint.kind {
        JointType::Ball => {}
        JointType::Hinge => {
            let na = qa * joint.axis_parent;
            let nb = qb * joint.axis_child;
            let e1 = perpendicular(&joint.axis_parent);
            let e2 = joint.axis_parent.cross(&e1);
            let c = nb.cross(&na);
            g_rot = [(qa * e1).dot(&c), (qa * e2).dot(&c)];
        }
        JointType::Universal => {
            let n1 = qa * joint.axis_parent;
            let n2 = qb * joint.axis_child;
            let rest = joint.axis_parent.dot(&(joint.rest_rel * joint.axis_child));
            g_rot[0] = n1.dot(&n2).clamp(-1.0, 1.0).asin() - rest.clamp(-1.0, 1.0).asin();
        }
    }
    (g_lin, g_rot)
}

/// Write the position error g(p) of every row into `g.rows` (KKT layout: body b's entry
/// holds its parent joint's rows — 3 linear, then one per forbidden axis — and a pinned
/// root's entry its [`root_error`]). Returns (largest |linear g| in m, largest
/// |rotational g| in rad); a joint's linear error counts by its norm, the separation.
pub fn constraint_error(
    model: &Model,
    bodies: &[BodyState],
    root: Option<&RootTarget>,
    g: &mut KktVector,
) -> (f64, f64) {
    let (_, lin, rot) = constraint_error_with_joints(model, bodies, root, g);
    (lin, rot)
}

/// [`constraint_error`], and first the largest separation of the joints alone (m: without
/// a pinned root's error, as [`State::joint_errors`](super::state::State::joint_errors)
/// gives it, to the bit).
fn constraint_error_with_joints(
    model: &Model,
    bodies: &[BodyState],
    root: Option<&RootTarget>,
    g: &mut KktVector,
) -> (f64, f64, f64) {
    let (mut lin, mut rot): (f64, f64) = (0.0, 0.0);
    for (b, body) in model.bodies.iter().enumerate() {
        let (Some(a), Some(joint)) = (body.parent, body.joint.as_ref()) else {
            g.rows[b].fill(0.0);
            continue;
        };
        let (sa, sb) = (&bodies[a], &bodies[b]);
        let (gl, gr) = joint_error(joint, &sa.x, &sa.q, &sb.x, &sb.q);
        let row = &mut g.rows[b];
        row.fill(0.0);
        row.fixed_rows_mut::<3>(0).copy_from(&gl);
        lin = lin.max(gl.norm());
        for k in 0..3 - joint.dof() {
            row[3 + k] = gr[k];
            rot = rot.max(gr[k].abs());
        }
    }
    let joints = lin;
    if let Some(target) = root {
        let e = root_error(&bodies[0], target);
        g.rows[0] = e;
        lin = lin.max(e.fixed_rows::<3>(0).norm());
        rot = rot.max(e.fixed_rows::<3>(3).amax());
    }
    (joints, lin, rot)
}

/// Fill `kkt` with the post-stabilisation matrix `[M −Jᵀ; J 0]` at the poses `bodies`:
/// block-diagonal mass, the joints' rows and (if `root` is pinned) J_r = I on body 0.
pub fn assemble_projection(
    model: &Model,
    bodies: &[BodyState],
    root: Option<&RootTarget>,
    kkt: &mut BlockTree,
) -> Result<(), KktError> {
    for (b, body) in model.bodies.iter().enumerate() {
        let s = &bodies[b];
        let mut m = Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Matrix3::identity() * body.mass));
        // R I Rᵀ is symmetric only to round-off; made exactly so for the symmetric
        // factorisation
        let iw = s.world_inertia(&body.inertia);
        m.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&((iw + iw.transpose()) * 0.5));
        *kkt.diag_mut(b) = m;
        kkt.a_child_parent_mut(b).fill(0.0);
        kkt.a_parent_child_mut(b).fill(0.0);
        match (body.parent, body.joint.as_ref()) {
            (Some(a), Some(joint)) => {
                let (jp, jc) = kkt.joint_blocks_mut(b);
                let (c, _) = joint_rows(joint, &bodies[a].q, &s.q, jp, jc);
                kkt.set_rows(b, c)?;
            }
            _ => {
                let pinned = b == 0 && root.is_some();
                kkt.set_rows(b, if pinned { 6 } else { 0 })?;
                *kkt.j_self_mut(b) = if pinned {
                    Matrix6::identity()
                } else {
                    Matrix6::zeros()
                };
                kkt.j_parent_mut(b).fill(0.0);
            }
        }
    }
    Ok(())
}

/// Shift every body's displacement `delta` (per body: δx m, δθ rad) by one translation so
/// that the whole figure's centre of mass does not move. A correction made by joint
/// impulses alone leaves it in place (they cancel in pairs), and so does one weighted by M;
/// one weighted by the step's M̃ does not when M̃ holds a root spring (its h D + h² K
/// resist the root's share as an external impulse would). A common translation changes no
/// joint's error, so the projection still closes the joints.
fn keep_centre_of_mass(model: &Model, delta: &mut [Vector6<f64>]) {
    let (mut moment, mut mass) = (Vector3::zeros(), 0.0);
    for (body, d) in model.bodies.iter().zip(delta.iter()) {
        moment += d.fixed_rows::<3>(0) * body.mass;
        mass += body.mass;
    }
    if mass > 0.0 {
        let shift = moment / mass;
        for d in delta.iter_mut() {
            for k in 0..3 {
                d[k] -= shift[k];
            }
        }
    }
}

/// Outcome of one post-stabilisation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PostStabilizationReport {
    /// Largest joint separation before, m.
    pub separation_before: f64,
    /// Largest forbidden-axis rotation error before, rad.
    pub rotation_before: f64,
    /// Largest joint separation after, m.
    pub separation_after: f64,
    /// Largest forbidden-axis rotation error after, rad.
    pub rotation_after: f64,
    /// Largest separation of the joints alone after (without a pinned root's error), m.
    pub joint_separation_after: f64,
    /// Projection passes applied (0 if the error was already below the tolerance).
    pub passes: usize,
}

/// Post-stabilise `bodies` in place: up to `max_passes` projections
/// `[M −Jᵀ; J 0][δ; μ] = [0; −g]`, stopping as soon as both the separation (m) and the
/// rotation error (rad) are ≤ `tolerance`.
///
/// With `assemble` the matrix is built and factored once at the incoming poses (A = M
/// there, block diagonal; J there) and reused for later passes. Without it, `kkt` must
/// already hold a factorisation with the same rows (e.g. the step's `[M̃ −J(p)ᵀ; J(p) 0]`)
/// and every pass is a chord step with it: each pass then shrinks the error by a factor
/// of order h|ω| instead of converging quadratically, and the correction is weighted by
/// M̃ (mass plus the implicit stiffness terms) rather than M; without root rows the
/// correction then gets one common translation that keeps the centre of mass in place
/// (see `keep_centre_of_mass`).
#[allow(clippy::too_many_arguments)]
pub fn post_stabilize(
    model: &Model,
    bodies: &mut [BodyState],
    root: Option<&RootTarget>,
    kkt: &mut BlockTree,
    work: &mut KktVector,
    max_passes: usize,
    tolerance: f64,
    assemble: bool,
) -> Result<PostStabilizationReport, KktError> {
    let (joints, lin, rot) = constraint_error_with_joints(model, bodies, root, work);
    let mut rep = PostStabilizationReport {
        separation_before: lin,
        rotation_before: rot,
        separation_after: lin,
        rotation_after: rot,
        joint_separation_after: joints,
        passes: 0,
    };
    while rep.passes < max_passes && rep.separation_after.max(rep.rotation_after) > tolerance {
        if rep.passes == 0 && assemble {
            assemble_projection(model, bodies, root, kkt)?;
            kkt.factor_symmetric()?;
        }
        for (bv, rv) in work.body.iter_mut().zip(work.rows.iter_mut()) {
            bv.fill(0.0);
            *rv = -*rv;
        }
        kkt.solve(work)?;
        if !assemble && root.is_none() {
            keep_centre_of_mass(model, &mut work.body);
        }
        for (s, d) in bodies.iter_mut().zip(&work.body) {
            let dx: Vector3<f64> = d.fixed_rows::<3>(0).into_owned();
            let dth: Vector3<f64> = d.fixed_rows::<3>(3).into_owned();
            s.displace(&dx, &dth);
        }
        rep.passes += 1;
        let (joints, lin, rot) = constraint_error_with_joints(model, bodies, root, work);
        rep.separation_after = lin;
        rep.rotation_after = rot;
        rep.joint_separation_after = joints;
    }
    Ok(rep)
}
