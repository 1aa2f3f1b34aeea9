//! The O(n) block-tree KKT factorisation against a dense LU of the same system, on
//! random trees with mixed joints (rows from `dense.rs`, the oracle) and random
//! non-symmetric A blocks, with the root pinned (6 rows) or free.

mod common;

use common::{Rng, motion_at, random_model, random_motion};
use jostle::dynamics::dense::assemble;
use jostle::dynamics::{BlockTree, KktError, KktVector, joint_rows};
use jostle::motion::kinematics::{BodyKinematics, forward_kinematics};
use nalgebra::{DMatrix, DVector, Matrix6, Vector6};

fn random_block(rng: &mut Rng, s: f64) -> Matrix6<f64> {
    Matrix6::from_fn(|_, _| rng.uniform(-s, s))
}

#[test]
fn block_tree_matches_dense_lu_on_random_trees() {
    let mut rng = Rng(5);
    let mut worst: f64 = 0.0;
    // ball, hinge, universal joints met (each must be, for the null-space paths)
    let mut kinds_seen = [0usize; 3];
    for trial in 0..24 {
        let n = 2 + trial;
        let pinned = trial % 2 == 0;
        let model = random_model(&mut rng, n);
        let motion = random_motion(&mut rng, &model);
        let (root, joints) = motion_at(&model, &motion, 0.0);
        let mut kin = vec![BodyKinematics::default(); n];
        forward_kinematics(&model, &root, &joints, &mut kin);
        let sys = assemble(&model, &kin);

        let parents: Vec<_> = model.bodies.iter().map(|b| b.parent).collect();
        let mut kkt = BlockTree::new(&parents).unwrap();
        // rows: the sparse joint rows must equal the oracle's dense J
        let mut jdense = DMatrix::zeros(sys.j.nrows(), 6 * n);
        let mut row = 0;
        for (b, body) in model.bodies.iter().enumerate() {
            match (body.parent, body.joint.as_ref()) {
                (Some(a), Some(joint)) => {
                    let (mut jp, mut jc) = (Matrix6::zeros(), Matrix6::zeros());
                    let (c, _) = joint_rows(joint, &kin[a].q, &kin[b].q, &mut jp, &mut jc);
                    kkt.set_rows(b, c).unwrap();
                    *kkt.j_parent_mut(b) = jp;
                    *kkt.j_self_mut(b) = jc;
                    jdense
                        .view_mut((row, 6 * a), (c, 6))
                        .copy_from(&jp.rows(0, c));
                    jdense
                        .view_mut((row, 6 * b), (c, 6))
                        .copy_from(&jc.rows(0, c));
                    row += c;
                }
                _ => {
                    kkt.set_rows(b, if pinned { 6 } else { 0 }).unwrap();
                    *kkt.j_self_mut(b) = Matrix6::identity();
                }
            }
        }
        assert!(
            (&jdense - &sys.j).amax() < 1e-14,
            "trial {trial}: rows differ from oracle"
        );
        // A: oracle mass blocks plus random non-symmetric perturbations and couplings:
        // full 6×6 couplings, or (every third trial) torque-only ones as PD feedback gives
        let torque_only = trial % 3 == 1;
        let coupling = |rng: &mut Rng| {
            let mut m = random_block(rng, 0.3);
            if torque_only {
                m.fixed_columns_mut::<3>(0).fill(0.0);
                m.fixed_rows_mut::<3>(0).fill(0.0);
            }
            m
        };
        for b in 0..n {
            let mb = sys.m.fixed_view::<6, 6>(6 * b, 6 * b).into_owned();
            *kkt.diag_mut(b) = mb + random_block(&mut rng, 0.2);
            if model.bodies[b].parent.is_some() {
                *kkt.a_child_parent_mut(b) = coupling(&mut rng);
                *kkt.a_parent_child_mut(b) = coupling(&mut rng);
            }
        }
        kkt.factor().unwrap();
        // every joint is eliminated in its null space (the reduced path)
        let joints = model.bodies.iter().filter(|b| b.joint.is_some()).count();
        assert_eq!(kkt.null_space_nodes(), joints, "trial {trial}");
        for b in &model.bodies {
            if let Some(j) = &b.joint {
                kinds_seen[j.kind as usize] += 1;
            }
        }

        // dense system in flatten order: [A −Jᵀ; J 0] with the root's rows first if pinned
        let dense = kkt.to_dense();
        let nr = sys.j.nrows() + if pinned { 6 } else { 0 };
        assert_eq!(dense.nrows(), 6 * n + nr);
        let lu = dense.clone().lu();
        // several right-hand sides through one factorisation
        for _ in 0..3 {
            let rhs = DVector::from_fn(6 * n + nr, |_, _| rng.uniform(-1.0, 1.0));
            let want = lu.solve(&rhs).expect("dense solvable");
            let mut x = KktVector::zeros(n);
            kkt.unflatten(&rhs, &mut x);
            kkt.solve(&mut x).unwrap();
            let got = kkt.flatten(&x);
            let rel = (&got - &want).amax() / want.amax();
            worst = worst.max(rel);
            assert!(
                rel < 1e-10,
                "trial {trial} (n = {n}, pinned {pinned}): rel. error {rel:e}"
            );
        }
        // A wrench on one body, answered on the ways to the root of it and of another
        // body only (a contact's Delassus entries): the dense solution there.
        let pick = |rng: &mut Rng| (rng.uniform(0.0, n as f64) as usize).min(n - 1);
        let (src, other) = (pick(&mut rng), pick(&mut rng));
        let mut path = vec![];
        kkt.path_to_root([src, other], &mut path);
        let mut rhs = DVector::zeros(6 * n + nr);
        for k in 0..6 {
            rhs[6 * src + k] = rng.uniform(-1.0, 1.0);
        }
        let want = lu.solve(&rhs).expect("dense solvable");
        let mut full = KktVector::zeros(n);
        kkt.unflatten(&rhs, &mut full);
        let mut x = full.clone();
        // what lies off the path must be neither read nor written
        for b in (0..n).filter(|b| !path.contains(b)) {
            x.body[b] = Vector6::repeat(f64::NAN);
        }
        let mut from = x.clone();
        kkt.solve_on_path(&mut x, &path).unwrap();
        // eliminated on the source's own way to the root only: the same numbers
        kkt.solve_on_path_from(&mut from, src, &path).unwrap();
        assert_same_on(&from, &x, &path, &format!("trial {trial}: from {src}"));
        kkt.solve(&mut full).unwrap();
        let got = kkt.flatten(&full);
        assert!((&got - &want).amax() / want.amax() < 1e-10, "trial {trial}");
        for b in 0..n {
            if path.contains(&b) {
                assert_eq!(x.body[b], full.body[b], "trial {trial}: body {b}");
                assert_eq!(x.rows[b], full.rows[b], "trial {trial}: rows of {b}");
            } else {
                assert!(x.body[b].iter().all(|v| v.is_nan()), "trial {trial}: {b}");
            }
        }
        // Wrenches on both bodies (contact impulses on two feet), eliminated on their
        // ways to the root alone and substituted everywhere: the whole solve's numbers.
        let mut sparse = KktVector::zeros(n);
        for b in [src, other] {
            sparse.body[b] = Vector6::from_fn(|_, _| rng.uniform(-1.0, 1.0));
        }
        let mut whole = sparse.clone();
        kkt.solve_sparse(&mut sparse, &path).unwrap();
        kkt.solve(&mut whole).unwrap();
        let every: Vec<usize> = (0..n).collect();
        assert_same_on(&sparse, &whole, &every, &format!("trial {trial}: sparse"));
        assert!(
            whole.body.iter().filter(|u| u.amax() > 0.0).count() > path.len().min(n - 1),
            "trial {trial}: the answer reaches off the path"
        );
        for (b, &p) in path.iter().enumerate().skip(1) {
            assert!(p > path[b - 1], "the path is increasing");
            let parent = model.bodies[p].parent.expect("only the root has no parent");
            assert!(path.contains(&parent), "the path is closed under parents");
        }
        // the dense matrix really is built from the oracle blocks
        let jblock = dense.view(
            (6 * n + if pinned { 6 } else { 0 }, 0),
            (sys.j.nrows(), 6 * n),
        );
        assert!((jblock - &sys.j).amax() < 1e-14);
    }
    eprintln!("block tree vs dense LU: worst relative error {worst:.2e}");
    assert!(
        kinds_seen.iter().all(|&k| k > 5),
        "joints (ball, hinge, universal): {kinds_seen:?}"
    );
}

#[test]
fn singular_node_is_reported_with_its_body() {
    let mut rng = Rng(9);
    let model = random_model(&mut rng, 6);
    let parents: Vec<_> = model.bodies.iter().map(|b| b.parent).collect();
    let mut kkt = BlockTree::new(&parents).unwrap();
    for b in 0..6 {
        *kkt.diag_mut(b) = Matrix6::identity();
    }
    // two identical rows on body 4: rank-deficient J
    kkt.set_rows(4, 2).unwrap();
    let mut j = Matrix6::zeros();
    j.set_row(0, &Vector6::new(1.0, 2.0, 0.0, 0.0, 1.0, 0.0).transpose());
    j.set_row(1, &Vector6::new(1.0, 2.0, 0.0, 0.0, 1.0, 0.0).transpose());
    *kkt.j_self_mut(4) = j;
    match kkt.factor() {
        Err(KktError::Singular { body, .. }) => assert_eq!(body, 4),
        other => panic!("expected singular body 4, got {other:?}"),
    }
}

/// `a` and `b` hold the same numbers at `bodies` (body and row entries), exactly.
fn assert_same_on(a: &KktVector, b: &KktVector, bodies: &[usize], what: &str) {
    for &i in bodies {
        assert_eq!(a.body[i], b.body[i], "{what}, body {i}");
        assert_eq!(a.rows[i], b.rows[i], "{what}, rows {i}");
    }
}
