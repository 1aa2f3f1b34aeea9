//! Contact impulses through the perturbed step (METHOD §8, §9): a free figure with PD
//! tracking on, struck by a ball, conserves linear and angular momentum across the impact
//! step; an impulse's response equals a dense solve of the step's KKT system built here
//! from the definitions.

mod common;

use jostle::dynamics::control::{Gains, Tracking};
use jostle::dynamics::dense::assemble;
use jostle::dynamics::{BodyState, Drift, KktVector, Root, State, StepOptions, Stepper};
use jostle::motion::kinematics::{
    BodyKinematics, JointMotion, RootMotion, forward_kinematics, joint_motion_from_angles,
};
use jostle::sim::balls::{
    Ball, BallParams, ContactOptions, ContactReport, ContactWorkspace, Touched, contact_phase,
    launch_balls,
};
use jostle::skeleton::{Capsule, JointSpec, JointType, Model, ModelBuilder};
use nalgebra::{DMatrix, DVector, Matrix3, UnitQuaternion, Vector3, Vector6};

/// Index of the forearm, the limb the balls hit.
const FOREARM: usize = 2;

/// A free four-body figure in zero gravity: a torso, an upper arm on a ball joint, a
/// forearm on a hinge (with a capsule to hit) and a leg on a universal joint; every inertia
/// anisotropic and turned off the body axes, so gyroscopic terms are not trivial.
fn figure() -> Model {
    let turned = |d: Vector3<f64>, axis: Vector3<f64>| {
        let r = UnitQuaternion::from_scaled_axis(axis).to_rotation_matrix();
        r.matrix() * Matrix3::from_diagonal(&d) * r.matrix().transpose()
    };
    let mut mb = ModelBuilder::new();
    mb.add_body(
        "torso",
        None,
        30.0,
        turned(Vector3::new(1.1, 0.4, 0.9), Vector3::new(0.2, -0.1, 0.3)),
        None,
    );
    mb.add_body(
        "upper_arm",
        Some(0),
        2.0,
        turned(
            Vector3::new(0.016, 0.003, 0.015),
            Vector3::new(-0.1, 0.2, 0.1),
        ),
        Some(JointSpec {
            kind: JointType::Ball,
            parent_anchor: Vector3::new(0.2, 0.25, 0.0),
            child_anchor: Vector3::new(0.0, 0.15, 0.0),
            axis_parent: Vector3::x(),
            axis_child: Vector3::y(),
            rest_rel: UnitQuaternion::identity(),
        }),
    );
    mb.add_body(
        "forearm",
        Some(1),
        1.3,
        turned(
            Vector3::new(0.02, 0.005, 0.018),
            Vector3::new(0.1, 0.0, -0.2),
        ),
        Some(JointSpec {
            kind: JointType::Hinge,
            parent_anchor: Vector3::new(0.0, -0.15, 0.0),
            child_anchor: Vector3::new(0.0, 0.13, 0.0),
            axis_parent: Vector3::z(),
            axis_child: Vector3::z(),
            rest_rel: UnitQuaternion::identity(),
        }),
    );
    mb.add_body(
        "leg",
        Some(0),
        9.0,
        turned(Vector3::new(0.15, 0.03, 0.14), Vector3::new(0.0, 0.3, 0.1)),
        Some(JointSpec {
            kind: JointType::Universal,
            parent_anchor: Vector3::new(0.1, -0.3, 0.0),
            child_anchor: Vector3::new(0.0, 0.22, 0.0),
            axis_parent: Vector3::x(),
            axis_child: Vector3::z(),
            rest_rel: UnitQuaternion::identity(),
        }),
    );
    let mut model = mb.build();
    model.gravity = Vector3::zeros();
    model.bodies[FOREARM].capsules = vec![Capsule {
        a: Vector3::new(0.0, -0.13, 0.0),
        b: Vector3::new(0.0, 0.13, 0.0),
        radius: 0.03,
    }];
    model
}

/// The figure tumbling and flailing: the root translating and spinning, every joint moving.
fn moving_state(model: &Model) -> State {
    let root = RootMotion {
        p: Vector3::new(0.1, 1.0, -0.2),
        q: UnitQuaternion::from_scaled_axis(Vector3::new(0.1, 0.4, -0.2)),
        v: Vector3::new(0.4, -0.3, 0.2),
        w: Vector3::new(0.5, -1.2, 0.8),
        a: Vector3::zeros(),
        dw: Vector3::zeros(),
    };
    let joint = |b: usize| model.bodies[b].joint.as_ref().expect("joint");
    let joints = vec![
        JointMotion::default(),
        JointMotion {
            q_rel: UnitQuaternion::from_scaled_axis(Vector3::new(0.3, 0.2, -0.5)),
            w: Vector3::new(2.0, -1.5, 3.0),
            dw: Vector3::zeros(),
        },
        joint_motion_from_angles(joint(2), &[0.9], &[-6.0], &[0.0]),
        joint_motion_from_angles(joint(3), &[0.4, -0.3], &[1.5, -2.5], &[0.0, 0.0]),
    ];
    let mut kin = vec![BodyKinematics::default(); model.bodies.len()];
    forward_kinematics(model, &root, &joints, &mut kin);
    State::from_kinematics(&kin, 0.0)
}

/// PD tracking toward a pose away from the current one, stiff enough (N·m/rad) that the
/// step matrix's gradient terms h²K and hD are far above round-off.
fn tracking(model: &Model) -> Tracking {
    let gains = Gains {
        k_0: 400.0,
        damping_time: 0.05,
        ..Default::default()
    };
    let mut tr = Tracking::new(model, &gains);
    let joint = |b: usize| model.bodies[b].joint.as_ref().expect("joint");
    tr.set_target(
        1,
        &JointMotion {
            q_rel: UnitQuaternion::from_scaled_axis(Vector3::new(-0.2, 0.5, 0.1)),
            w: Vector3::new(-1.0, 0.5, 0.2),
            dw: Vector3::zeros(),
        },
    );
    tr.set_target(
        2,
        &joint_motion_from_angles(joint(2), &[0.2], &[1.0], &[0.0]),
    );
    tr.set_target(
        3,
        &joint_motion_from_angles(joint(3), &[-0.2, 0.4], &[0.0, 1.0], &[0.0, 0.0]),
    );
    tr.stiffness[1] = [400.0, 250.0, 300.0];
    tr
}

/// Linear momentum (kg·m/s) and angular momentum about `o` (kg·m²/s) of the figure and the
/// balls (each ball's spin included: a solid sphere, I = ⅖ m r²).
fn momenta(
    model: &Model,
    s: &State,
    balls: &[Ball],
    o: &Vector3<f64>,
) -> (Vector3<f64>, Vector3<f64>) {
    let (mut p, mut l) = (Vector3::zeros(), Vector3::zeros());
    for (body, b) in model.bodies.iter().zip(&s.bodies) {
        p += b.v * body.mass;
        l += (b.x - o).cross(&(b.v * body.mass)) + b.world_inertia(&body.inertia) * b.w;
    }
    for ball in balls.iter().filter(|b| b.active) {
        let m = ball.params.mass;
        let r = ball.params.radius;
        p += ball.v * m;
        l += (ball.x - o).cross(&(ball.v * m)) + ball.w * (0.4 * m * r * r);
    }
    (p, l)
}

/// The fixed world point the angular momentum is taken about, m.
fn pivot() -> Vector3<f64> {
    Vector3::new(0.7, -0.4, 0.3)
}

/// Step options for exact bookkeeping: no drift correction (post-stabilisation moves
/// bodies after the velocities are set, which is not a momentum exchange), gyroscopic rows
/// solved to round-off.
fn exact_step(h: f64) -> StepOptions {
    StepOptions {
        h,
        drift: Drift::None,
        gyroscopic_iterations: 50,
        gyroscopic_tolerance: 1e-15,
        max_angular_speed: 1e6,
        ..Default::default()
    }
}

/// Relative change of a momentum, against a scale `s` of its size.
fn rel(a: &Vector3<f64>, b: &Vector3<f64>, s: f64) -> f64 {
    (a - b).norm() / s
}

/// Scales for "relative": Σ|m v| and Σ|x × m v| + |I ω| of figure and balls.
fn scales(model: &Model, s: &State, balls: &[Ball], o: &Vector3<f64>) -> (f64, f64) {
    let (mut sp, mut sl) = (0.0, 0.0);
    for (body, b) in model.bodies.iter().zip(&s.bodies) {
        sp += (b.v * body.mass).norm();
        sl += (b.x - o).cross(&(b.v * body.mass)).norm()
            + (b.world_inertia(&body.inertia) * b.w).norm();
    }
    for ball in balls {
        sp += (ball.v * ball.params.mass).norm();
        sl += (ball.x - o).cross(&(ball.v * ball.params.mass)).norm();
    }
    (sp, sl)
}

/// A ball that reaches the forearm's capsule within the first step, off its centre, while
/// the forearm swings: launched from 1.2 cm off the surface at 15 m/s toward it.
fn ball_at_forearm(state: &State, h: f64) -> Ball {
    let s = &state.bodies[FOREARM];
    let along = s.q * Vector3::y();
    let side = (s.q * Vector3::x() + s.q * Vector3::z() * 0.4).normalize();
    let radius = 0.095;
    let x = s.x + along * 0.08 + side * (0.03 + radius + 0.012);
    let params = BallParams {
        mass: 0.45,
        radius,
        restitution: 0.5,
        friction: 0.5,
    };
    let mut ball = Ball::new(params, 0.0, x, -side * 15.0 + along * 2.0);
    launch_balls(std::slice::from_mut(&mut ball), 0.0, h, &Vector3::zeros());
    ball
}

/// The step's velocities from `state` (free root, PD tracking `tr`) with the balls'
/// contacts applied, before the position update; also the change of angular momentum
/// (kg·m²/s, a couple: the same about every point) the contacts must leave behind: the step moves every body with
/// its new velocity from the start of the step (x⁺ = x + h v⁺) while the ball is struck at
/// the time of impact, so an impulse P on a body whose COM moves at v (its free velocity)
/// is applied, as the step sees it, v·toi behind the impact point: Σ −toi v × P.
fn solve_with_contacts(
    model: &Model,
    state: &State,
    stepper: &mut Stepper,
    tr: &Tracking,
    balls: &mut [Ball],
    ws: &mut ContactWorkspace,
) -> (ContactReport, Vector3<f64>) {
    let h = stepper.options().h;
    stepper
        .prepare(model, state, &Root::Free, tr, None)
        .expect("prepare");
    stepper.solve(model, state, &Root::Free).expect("solve");
    let v_free: Vec<Vector3<f64>> = stepper
        .velocities()
        .iter()
        .map(|u| u.fixed_rows::<3>(0).into_owned())
        .collect();
    let before: Vec<(Vector3<f64>, usize)> = balls.iter().map(|b| (b.v, b.hits.len())).collect();
    let opts = ContactOptions::default();
    let report =
        contact_phase(model, state, stepper, balls, &opts, state.t, h, ws).expect("contacts");
    let mut shift = Vector3::zeros();
    for (ball, (v0, n0)) in balls.iter().zip(before) {
        // one body hit per ball here: the ball's momentum change is minus the body's impulse
        for hit in &ball.hits[n0..] {
            let Touched::Body(b) = hit.other else {
                panic!("only body hits expected, got {:?}", hit.other)
            };
            let on_body = -(ball.v - v0) * ball.params.mass;
            shift -= v_free[b].cross(&on_body) * (hit.t - state.t);
        }
    }
    (report, shift)
}

/// One impact step from `state` (drift control off, so the finished state is exactly the
/// step's x⁺ = x + h v⁺, R⁺ = exp(h ω⁺) R): the relative change of linear momentum of
/// figure + ball, that of angular momentum beyond the step's toi couple (see
/// [`solve_with_contacts`]), and the impulse (N·s).
fn impact_step(opts: StepOptions) -> (f64, f64, f64) {
    let model = figure();
    let h = opts.h;
    let mut state = moving_state(&model);
    let tr = tracking(&model);
    let mut stepper = Stepper::new(&model, opts).expect("stepper");
    let root = Root::Free;
    let o = pivot();
    let mut balls = vec![ball_at_forearm(&state, h)];
    let (p0, l0) = momenta(&model, &state, &balls, &o);
    let (sp, sl) = scales(&model, &state, &balls, &o);
    let (report, shift) = solve_with_contacts(
        &model,
        &state,
        &mut stepper,
        &tr,
        &mut balls,
        &mut ContactWorkspace::default(),
    );
    stepper.finish(&model, &mut state, &root).expect("finish");
    assert_eq!(report.contacts, 1, "one contact: the forearm");
    let hit = balls[0].hits.first().expect("the ball hit");
    assert_eq!(hit.other, Touched::Body(FOREARM));
    let (p1, l1) = momenta(&model, &state, &balls, &o);
    eprintln!(
        "impact: |ΔL| {:.2e} relative, of which the step's toi shift {:.2e}",
        rel(&l1, &l0, sl),
        shift.norm() / sl
    );
    (
        rel(&p1, &p0, sp),
        rel(&l1, &(l0 + shift), sl),
        hit.impulse.norm(),
    )
}

#[test]
fn a_ball_hitting_a_swinging_forearm_conserves_linear_and_angular_momentum() {
    let h = 1e-3;
    let default_rows = StepOptions {
        drift: Drift::None,
        max_angular_speed: 1e6,
        h,
        ..Default::default()
    };
    for (what, opts) in [
        ("rows to round-off", exact_step(h)),
        ("default iterations", default_rows),
    ] {
        let (dp, dl, impulse) = impact_step(opts);
        eprintln!(
            "impact ({what}): impulse {impulse:.4} N·s; |ΔP| {dp:.2e}, |ΔL| {dl:.2e} (relative)"
        );
        assert!(impulse > 1.0, "a real hit: {impulse} N·s");
        assert!(
            dp < 1e-9,
            "{what}: linear momentum changed by {dp:e} (relative)"
        );
        assert!(
            dl < 1e-9,
            "{what}: angular momentum changed by {dl:e} (relative)"
        );
    }
}

/// The end state a step's velocities give before any drift correction: x + h v⁺,
/// exp(h ω⁺) R.
fn end_of_step(s: &State, u: &[Vector6<f64>], h: f64) -> State {
    let bodies = s
        .bodies
        .iter()
        .zip(u)
        .map(|(b, u)| {
            let (v, w) = (
                u.fixed_rows::<3>(0).into_owned(),
                u.fixed_rows::<3>(3).into_owned(),
            );
            BodyState {
                x: b.x + v * h,
                q: UnitQuaternion::from_scaled_axis(w * h) * b.q,
                v,
                w,
            }
        })
        .collect();
    State { bodies, t: s.t + h }
}

#[test]
fn every_step_around_an_impact_conserves_momentum_with_pd_tracking_on() {
    // Post-stabilisation keeps the joints closed (an open joint's impulse has a moment
    // g × λ); each step's velocity update, contacts included, is what is checked.
    let model = figure();
    let h = 1e-3;
    let opts = StepOptions {
        drift: Drift::PostStabilization,
        post_stabilization_passes: 6,
        post_stabilization_tolerance: 1e-14,
        ..exact_step(h)
    };
    let mut state = moving_state(&model);
    let tr = tracking(&model);
    let mut stepper = Stepper::new(&model, opts).expect("stepper");
    let root = Root::Free;
    let o = pivot();
    let mut balls: Vec<Ball> = vec![];
    let mut ws = ContactWorkspace::default();
    let (mut worst_p, mut worst_l): (f64, f64) = (0.0, 0.0);
    let mut contacts = 0;
    for k in 0..12 {
        if k == 6 {
            let mut ball = ball_at_forearm(&state, h);
            ball.launch_t = state.t;
            launch_balls(std::slice::from_mut(&mut ball), state.t, h, &model.gravity);
            balls.push(ball);
        }
        let (p0, l0) = momenta(&model, &state, &balls, &o);
        let (sp, sl) = scales(&model, &state, &balls, &o);
        let (report, shift) =
            solve_with_contacts(&model, &state, &mut stepper, &tr, &mut balls, &mut ws);
        contacts += report.contacts;
        let end = end_of_step(&state, stepper.velocities(), h);
        let (p1, l1) = momenta(&model, &end, &balls, &o);
        let (dp, dl) = (rel(&p1, &p0, sp), rel(&l1, &(l0 + shift), sl));
        eprintln!(
            "step {k}: {} contacts, |ΔP| {dp:.2e}, |ΔL| {dl:.2e}",
            report.contacts
        );
        worst_p = worst_p.max(dp);
        worst_l = worst_l.max(dl);
        stepper.finish(&model, &mut state, &root).expect("finish");
    }
    assert!(contacts >= 1, "the ball hit");
    assert!(worst_p < 1e-9, "ΔP {worst_p:e} (relative)");
    assert!(worst_l < 1e-9, "ΔL {worst_l:e} (relative)");
}

/// M̃ of the step at `s`, dense, from the definitions (METHOD §8 with the momentum-form
/// rotational rows of `dynamics::step`): per body diag(m I₃, I_w + N'(ω)) with
/// N(ω) = exp(\[hω\]×) I_w ω − I_w ω, minus h² ∂f/∂p + h ∂f/∂u of the PD torques (τ on
/// the child, −τ on the parent), every derivative by central differences here (ε = 1e-6,
/// the step uses 1e-5), along twists: x ← x + δx, R ← exp(\[δθ\]×) R, v ← v + δv, ω ← ω + δω.
fn dense_step_matrix(model: &Model, s: &State, tr: &Tracking, h: f64) -> DMatrix<f64> {
    let n = model.bodies.len();
    let eps = 1e-6;
    let mut m = DMatrix::zeros(6 * n, 6 * n);
    for (b, body) in model.bodies.iter().enumerate() {
        let st = &s.bodies[b];
        let iw = st.world_inertia(&body.inertia);
        let big_n = |w: Vector3<f64>| UnitQuaternion::from_scaled_axis(w * h) * (iw * w) - iw * w;
        for i in 0..3 {
            m[(6 * b + i, 6 * b + i)] = body.mass;
            let mut e = Vector3::zeros();
            e[i] = eps;
            let col = (big_n(st.w + e) - big_n(st.w - e)) / (2.0 * eps);
            for r in 0..3 {
                m[(6 * b + 3 + r, 6 * b + 3 + i)] = iw[(r, i)] + col[r];
            }
        }
    }
    for (b, body) in model.bodies.iter().enumerate() {
        let Some(a) = body.parent else { continue };
        for (c, which) in [(a, 0), (b, 1)] {
            for d in 0..12 {
                let shifted = |sign: f64| {
                    let mut pair = [s.bodies[a], s.bodies[b]];
                    let p = &mut pair[which];
                    let mut e = Vector3::zeros();
                    e[d % 3] = sign * eps;
                    match d / 3 {
                        0 => p.x += e,
                        1 => p.q = UnitQuaternion::from_scaled_axis(e) * p.q,
                        2 => p.v += e,
                        _ => p.w += e,
                    }
                    tr.feedback(b, &pair[0], &pair[1])
                };
                let dtau = (shifted(1.0) - shifted(-1.0)) / (2.0 * eps);
                // a position twist moves p⁺ = p + h u⁺: weight h²; a velocity, h
                let w = if d < 6 { h * h } else { h };
                let col = 6 * c + d % 6;
                for r in 0..3 {
                    m[(6 * b + 3 + r, col)] -= w * dtau[r];
                    m[(6 * a + 3 + r, col)] += w * dtau[r];
                }
            }
        }
    }
    m
}

#[test]
fn an_impulse_on_the_forearm_moves_the_figure_as_a_dense_solve_of_the_step_says() {
    let model = figure();
    let h = 1e-3;
    let state = moving_state(&model);
    let tr = tracking(&model);
    let mut stepper = Stepper::new(&model, exact_step(h)).expect("stepper");
    stepper
        .prepare(&model, &state, &Root::Free, &tr, None)
        .expect("prepare");
    stepper.solve(&model, &state, &Root::Free).expect("solve");
    // 1 N·s at a point on the forearm's surface, off its COM and axis
    let f = &state.bodies[FOREARM];
    let p = f.x + f.q * Vector3::new(0.03, 0.09, 0.01);
    let dir = Vector3::new(-0.6, 0.3, 0.74).normalize();
    let torque = (p - f.x).cross(&dir);
    let wrench = Vector6::new(dir.x, dir.y, dir.z, torque.x, torque.y, torque.z);
    let n = model.bodies.len();
    let mut x = KktVector::zeros(n);
    x.body[FOREARM] = wrench;
    stepper.kkt().solve(&mut x).expect("kkt solve");

    // dense [M̃ −Jᵀ; J 0] [Δu; λ] = [impulse; 0], J the joint rows at the state
    let kin: Vec<BodyKinematics> = state
        .bodies
        .iter()
        .map(|b| BodyKinematics {
            x: b.x,
            q: b.q,
            v: b.v,
            w: b.w,
            ..Default::default()
        })
        .collect();
    let j = assemble(&model, &kin).j;
    let mt = dense_step_matrix(&model, &state, &tr, h);
    let (nu, nc) = (6 * n, j.nrows());
    let mut k = DMatrix::zeros(nu + nc, nu + nc);
    k.view_mut((0, 0), (nu, nu)).copy_from(&mt);
    k.view_mut((0, nu), (nu, nc)).copy_from(&(-j.transpose()));
    k.view_mut((nu, 0), (nc, nu)).copy_from(&j);
    let mut rhs = DVector::zeros(nu + nc);
    rhs.rows_mut(6 * FOREARM, 6).copy_from(&wrench);
    let sol = k.clone().lu().solve(&rhs).expect("dense KKT solvable");
    let mut worst: f64 = 0.0;
    let mut scale: f64 = 0.0;
    for b in 0..n {
        let dense = sol.fixed_rows::<6>(6 * b).into_owned();
        worst = worst.max((x.body[b] - dense).amax());
        scale = scale.max(dense.amax());
    }
    // the PD gradient terms are a visible part of the answer: without them (M̃ = M + the
    // gyroscopic part) the response differs far beyond the tolerance
    let mut limp = tr.clone();
    limp.enabled = false;
    limp.stiffness.iter_mut().for_each(|k| *k = [0.0; 3]);
    k.view_mut((0, 0), (nu, nu))
        .copy_from(&dense_step_matrix(&model, &state, &limp, h));
    let sol_limp = k.lu().solve(&rhs).expect("dense KKT solvable");
    let pd_effect = (sol_limp.rows(0, nu) - sol.rows(0, nu)).amax();
    eprintln!(
        "impulse response vs dense solve: max |Δu| error {:.2e} of {scale:.3} (relative {:.2e}); PD terms change it by {:.2e}",
        worst,
        worst / scale,
        pd_effect / scale
    );
    assert!(pd_effect > 1e-3 * scale, "the PD gradient must matter here");
    assert!(worst < 1e-9 * scale, "response off by {worst:e} of {scale}");
}

/// The step of a lone free limb (no joint torques, `external` wrenches: N, N·m about the
/// COM) with the balls' contacts applied, before the position update; asserts that there
/// was exactly one contact.
fn lone_limb_hit(
    model: &Model,
    state: &State,
    balls: &mut [Ball],
    h: f64,
    external: Option<&[(Vector3<f64>, Vector3<f64>)]>,
) -> Stepper {
    let mut stepper = Stepper::new(model, exact_step(h)).expect("stepper");
    let free = Root::Free;
    let no_torque = jostle::dynamics::NoTorque;
    stepper
        .prepare(model, state, &free, &no_torque, external)
        .expect("prepare");
    stepper.solve(model, state, &free).expect("solve");
    let opts = ContactOptions::default();
    let mut ws = ContactWorkspace::default();
    let report =
        contact_phase(model, state, &mut stepper, balls, &opts, 0.0, h, &mut ws).expect("contacts");
    assert_eq!(report.contacts, 1, "one contact");
    stepper
}

#[test]
fn a_late_hit_on_a_fast_limb_turns_it_about_its_com_at_the_time_of_impact() {
    // A free forearm (capsule along y, r = 0.03 m) sliding along its axis at 6 m/s; a ball
    // flying along −x at height y_b meets it 80 % into a 1/240 s step, when the COM has
    // moved v·toi = 2.7 cm. The angular impulse about the COM must be (p − x(t+toi)) × P,
    // not (p − x(t)) × P.
    let mut model = common::forearm_model();
    model.gravity = Vector3::zeros();
    let h = 1.0 / 240.0;
    let v_limb = 6.0;
    let mut state = State {
        bodies: vec![BodyState {
            v: Vector3::new(0.0, v_limb, 0.0),
            ..Default::default()
        }],
        t: 0.0,
    };
    let (radius, speed, y_ball) = (0.095, 12.0, 0.09);
    let toi = 0.8 * h;
    let touching = 0.03 + radius;
    let params = BallParams {
        mass: 0.45,
        radius,
        restitution: 0.5,
        friction: 0.0,
    };
    let x0 = Vector3::new(touching + speed * toi, y_ball, 0.0);
    let mut balls = vec![Ball::new(params, 0.0, x0, Vector3::new(-speed, 0.0, 0.0))];
    launch_balls(&mut balls, 0.0, h, &model.gravity);
    let spin0 = state.bodies[0].world_inertia(&model.bodies[0].inertia) * state.bodies[0].w;
    let v_ball0 = balls[0].v;
    let mut stepper = lone_limb_hit(&model, &state, &mut balls, h, None);
    stepper
        .finish(&model, &mut state, &Root::Free)
        .expect("finish");
    let hit = balls[0].hits.first().expect("hit");
    assert!((hit.t - toi).abs() < 1e-9 * h, "toi {} vs {toi}", hit.t);
    // the impulse on the limb, from the ball's momentum change
    let on_limb = -(balls[0].v - v_ball0) * params.mass;
    let spin1 = state.bodies[0].world_inertia(&model.bodies[0].inertia) * state.bodies[0].w;
    let angular_impulse = spin1 - spin0;
    let p = Vector3::new(0.03, y_ball, 0.0);
    let com_at_impact = Vector3::new(0.0, v_limb * toi, 0.0);
    let want = (p - com_at_impact).cross(&on_limb);
    let at_start = p.cross(&on_limb);
    let err = (angular_impulse - want).norm() / want.norm();
    eprintln!(
        "angular impulse about the COM {:.5} N·m·s, (p − x(t+toi)) × P = {:.5}, (p − x(t)) × P = {:.5}; error {err:.2e}",
        angular_impulse.z, want.z, at_start.z
    );
    assert!(on_limb.norm() > 1.0, "a real hit: {on_limb:?}");
    assert!(
        err < 1e-9,
        "angular impulse {angular_impulse:?} vs {want:?}"
    );
}

#[test]
fn a_ball_bounces_off_a_pushed_limb_with_restitution_of_the_pre_step_approach() {
    // A free forearm at rest, pushed toward an oncoming ball by 800 N during the step
    // (its free-step velocity 2.56 m/s), the ball at 5 m/s along −x: Newton restitution
    // is of the approach at the start of the step (METHOD §9, e·min(0, J u_k)), so the
    // contact separates at e·5 m/s, not e·7.56 m/s.
    let mut model = common::forearm_model();
    model.gravity = Vector3::zeros();
    let h = 1.0 / 240.0;
    let state = State {
        bodies: vec![BodyState::default()],
        t: 0.0,
    };
    let push = Vector3::new(800.0, 0.0, 0.0);
    let (radius, speed, y_ball, e) = (0.095, 5.0, 0.05, 0.5);
    let params = BallParams {
        mass: 0.45,
        radius,
        restitution: e,
        friction: 0.0,
    };
    let v_limb_free = push.x / 1.3 * h;
    // meets the pushed limb half-way through the step
    let x0 = Vector3::new(0.03 + radius + (speed + v_limb_free) * 0.5 * h, y_ball, 0.0);
    let mut balls = vec![Ball::new(params, 0.0, x0, Vector3::new(-speed, 0.0, 0.0))];
    launch_balls(&mut balls, 0.0, h, &model.gravity);
    let external = [(push, Vector3::zeros())];
    let stepper = lone_limb_hit(&model, &state, &mut balls, h, Some(&external));
    // the limb's velocity after the step at the contact point, its lever arm r from the
    // COM (the capsule's surface facing +x, at the ball's height)
    let u = stepper.velocities()[0];
    let (v, w) = (
        u.fixed_rows::<3>(0).into_owned(),
        u.fixed_rows::<3>(3).into_owned(),
    );
    let r = Vector3::new(0.03, y_ball, 0.0);
    let separation = (balls[0].v - (v + w.cross(&r))).x;
    let approach_at_start = -speed;
    let approach_free = -speed - v_limb_free;
    eprintln!(
        "separation {separation:.6} m/s; −e·(approach at the start) = {:.6}, −e·(after the free step) = {:.6}",
        -e * approach_at_start,
        -e * approach_free
    );
    assert!(
        (separation + e * approach_at_start).abs() < 1e-9,
        "separation {separation} m/s vs {}",
        -e * approach_at_start
    );
}
