//! Inverse dynamics: random-state round trip through the dense forward equations, the O(n)
//! sweep against a dense solve of the same square system, and FK derivatives against
//! finite differences.

mod common;

use common::{Rng, motion_at, random_model, random_motion};
use jostle::dynamics::dense::{assemble, dense_forward, dense_inverse, stack_accelerations};
use jostle::dynamics::{InverseWorkspace, JointTorques, inverse_dynamics};
use jostle::motion::kinematics::{BodyKinematics, forward_kinematics};
use nalgebra::DVector;

fn kinematics_at(
    model: &jostle::skeleton::Model,
    m: &common::RandomMotion,
    t: f64,
) -> Vec<BodyKinematics> {
    let (root, joints) = motion_at(model, m, t);
    let mut kin = vec![BodyKinematics::default(); model.bodies.len()];
    forward_kinematics(model, &root, &joints, &mut kin);
    kin
}

#[test]
fn random_state_round_trip_recovers_accelerations() {
    let mut rng = Rng(7);
    let mut worst: f64 = 0.0;
    for trial in 0..20 {
        let model = random_model(&mut rng, 4 + trial % 17);
        let motion = random_motion(&mut rng, &model);
        let kin = kinematics_at(&model, &motion, 0.0);
        let mut ws = InverseWorkspace::default();
        let mut out = JointTorques::default();
        inverse_dynamics(&model, &kin, None, &mut ws, &mut out);
        let sys = assemble(&model, &kin);
        let udot = stack_accelerations(&kin);
        // on the manifold: J u̇ + k = 0
        let resid = (&sys.j * &udot + &sys.k).amax();
        assert!(
            resid < 1e-9 * (1.0 + udot.amax()),
            "trial {trial}: J u̇ + k = {resid}"
        );
        let tau = DVector::from_column_slice(&out.tau);
        let root_acc = udot.rows(0, 6).into_owned();
        let udot2 = dense_forward(&sys, &tau, &root_acc).expect("KKT solvable");
        let rel = (&udot2 - &udot).amax() / udot.amax();
        worst = worst.max(rel);
        assert!(rel < 1e-9, "trial {trial}: relative error {rel}");
    }
    eprintln!("random-state round trip: worst relative error {worst:.2e}");
}

#[test]
fn sweep_agrees_with_dense_solve() {
    let mut rng = Rng(11);
    for trial in 0..10 {
        let model = random_model(&mut rng, 3 + 2 * trial);
        let motion = random_motion(&mut rng, &model);
        let kin = kinematics_at(&model, &motion, 0.0);
        let mut ws = InverseWorkspace::default();
        let mut out = JointTorques::default();
        inverse_dynamics(&model, &kin, None, &mut ws, &mut out);
        let sys = assemble(&model, &kin);
        let (_, tau, root) =
            dense_inverse(&sys, &stack_accelerations(&kin)).expect("square system solvable");
        let scale = 1.0 + tau.amax();
        for (i, (a, b)) in out.tau.iter().zip(tau.iter()).enumerate() {
            assert!(
                (a - b).abs() < 1e-9 * scale,
                "trial {trial} dof {i}: sweep {a} dense {b}"
            );
        }
        let sweep_root = out.root_wrench();
        assert!((sweep_root - &root).amax() < 1e-9 * (1.0 + root.amax()));
    }
}

#[test]
fn forward_kinematics_derivatives_match_finite_differences() {
    let mut rng = Rng(3);
    let h = 1e-5;
    for _ in 0..5 {
        let model = random_model(&mut rng, 12);
        let motion = random_motion(&mut rng, &model);
        let k0 = kinematics_at(&model, &motion, 0.0);
        let kp = kinematics_at(&model, &motion, h);
        let km = kinematics_at(&model, &motion, -h);
        for b in 0..model.bodies.len() {
            let v_fd = (kp[b].x - km[b].x) / (2.0 * h);
            let w_fd = (kp[b].q * km[b].q.inverse()).scaled_axis() / (2.0 * h);
            let a_fd = (kp[b].v - km[b].v) / (2.0 * h);
            let dw_fd = (kp[b].w - km[b].w) / (2.0 * h);
            let tol = |x: f64| 1e-6 * (1.0 + x);
            assert!((v_fd - k0[b].v).norm() < tol(k0[b].v.norm()), "body {b} v");
            assert!((w_fd - k0[b].w).norm() < tol(k0[b].w.norm()), "body {b} w");
            assert!(
                (a_fd - k0[b].a).norm() < 1e-5 * (1.0 + k0[b].a.norm()),
                "body {b} a: fd {a_fd} fk {}",
                k0[b].a
            );
            assert!(
                (dw_fd - k0[b].dw).norm() < 1e-5 * (1.0 + k0[b].dw.norm()),
                "body {b} dw: fd {dw_fd} fk {}",
                k0[b].dw
            );
        }
    }
}

#[test]
fn a_steps_joint_frames_give_the_decomposition_at_its_pose_to_the_bit() {
    // The feedforward decomposes wrenches, and adds ψ's torques, in the joint frames the
    // step built its rows from (`Stepper::joint_frames`) instead of evaluating them again:
    // that must be the decomposition at the step's orientations, bit for bit, or an
    // unperturbed run would leave the feedforward's path.
    use jostle::dynamics::control::{feedforward_torque, feedforward_torque_in_frame};
    use jostle::dynamics::inverse::{wrench_to_joint_torques, wrench_to_joint_torques_in_frames};
    use jostle::dynamics::{NoTorque, Root, State};
    let mut rng = Rng(23);
    for trial in 0..10 {
        let model = random_model(&mut rng, 3 + 2 * trial);
        let motion = random_motion(&mut rng, &model);
        let kin = kinematics_at(&model, &motion, 0.3);
        let state = State::from_kinematics(&kin, 0.3);
        let mut stepper = common::stepper(&model, 1.0 / 240.0);
        stepper
            .prepare(&model, &state, &Root::Free, &NoTorque, None)
            .expect("prepares");
        let frames = stepper.joint_frames();
        let n = model.bodies.len();
        let wrenches: Vec<_> = (0..n).map(|_| (rng.vec3(10.0), rng.vec3(1.0))).collect();
        let qs: Vec<_> = state.bodies.iter().map(|s| s.q).collect();
        let (mut ws, mut a, mut b) = (
            InverseWorkspace::default(),
            JointTorques::default(),
            JointTorques::default(),
        );
        wrench_to_joint_torques(&model, &qs, &wrenches, &mut ws, &mut a);
        wrench_to_joint_torques_in_frames(&model, frames, &wrenches, &mut ws, &mut b);
        let bits = |t: &JointTorques| {
            let mut v: Vec<u64> = t.tau.iter().map(|x| x.to_bits()).collect();
            v.extend(
                [t.root_force, t.root_torque]
                    .iter()
                    .flat_map(|w| w.iter().map(|x| x.to_bits())),
            );
            v
        };
        assert_eq!(bits(&a), bits(&b), "trial {trial}: decomposition");
        assert!(
            a.tau.iter().any(|&x| x != 0.0),
            "trial {trial}: torques found"
        );
        for (k, body) in model.bodies.iter().enumerate() {
            let (Some(p), Some(j)) = (body.parent, body.joint.as_ref()) else {
                assert!(frames[k].is_none(), "trial {trial}: body {k} has no joint");
                continue;
            };
            let psi: Vec<f64> = (0..j.dof()).map(|_| rng.uniform(-5.0, 5.0)).collect();
            let direct = feedforward_torque(&model, k, &state.bodies[p], &state.bodies[k], &psi);
            let framed = feedforward_torque_in_frame(&frames[k].expect("a joint's frame"), &psi);
            assert_eq!(
                direct.map(f64::to_bits),
                framed.map(f64::to_bits),
                "trial {trial}: body {k}'s feedforward torque"
            );
        }
    }
}
