//! A standing figure pushed by a known impulse (issue #13; METHOD §8, §9, §12.3): the
//! repo's demo walk, standing on the floor with the default settings (spring-held root,
//! floor contacts, PD tracking, feedforward), is stepped once from the same snapshot
//! 1.5 s in, a foot on the floor, twice — (a) unperturbed, (b) pushed from the front by an
//! impulse P at a point p on the surface of its trunk — and what the push changed is
//! compared with Newton's laws for the whole figure, with every number computed here from
//! the bodies' masses, inertias, positions and velocities:
//!
//! - linear momentum: Σ mᵢvᵢ changes by P plus what the floor and the root spring answered,
//!   `Δp = P + ΔF_floor + ΔF_spring`, so the centre of mass moves by that over m in
//!   velocity and by h times that in position (x⁺ = x + h v⁺; post-stabilisation only
//!   projects positions onto the joints and leaves the COM where it is);
//! - angular momentum about the COM: it changes by (p − c) × P plus the floor's and the
//!   spring's moments (about a fixed point, with the step's own x⁺ = x + h v⁺ and
//!   R⁺ = exp(hω⁺)R);
//! - the first step's answer of the floor and the spring is a small part of P (≈ 1–2 %),
//!   so the COM's velocity changes by P/m and its position by hP/m to within it (the
//!   stated bounds).
//!
//! The root spring's answer is predicted here, not read back: backward Euler on
//! F = K(x_d − x⁺) + D(v_d − v⁺) gives a reaction −(hD + h²K)Δv⁺ to any change of the
//! root's end-of-step velocity, with K = mω², D = 2ζmω (and the rotational analogue with
//! the figure's mean principal inertia at t = 0) from the tuning's frequencies. The floor's
//! impulse and its moment about the origin are the contact report's.
//!
//! Two pushes: a direct external impulse on the chest (P known beforehand) and a handball
//! touching the abdomen at the start of the step, so the step applies it at a known point
//! (P read from the ball's own momentum change; the contact goes through the LCP, its
//! Delassus matrix and the re-solve beside the floor's rows). For the ball the
//! normal separation speed after the step is also checked against Newton restitution of the
//! approach at the start of the step: the LCP's prediction of the velocities through the
//! Delassus matrix must be what the step then does.
//!
//! It fails when a step loses or invents momentum: a contact impulse applied at the wrong
//! lever arm (angular balance), a response or Delassus matrix that does not match the step
//! (ball's separation speed; linear balance when the applied impulse differs from the one
//! the ball lost), a floor or root-spring impulse missing from the books or applied twice,
//! or a spring gain in the step other than hD + h²K. Checked by hand on mutants of the
//! step: the floor rows' lever arms 2 % short (angular, 1.8e-5 of the push's moment), the
//! ball's impulse applied 0.1 % short (separation 3e-4 m/s off), the ball row's lever arm
//! 2 % short (angular ≈ 1e-3), the spring's implicit linear gain 1 % low (linear 9e-5 and
//! 4e-4 of |P|), the Delassus matrix 1 % high (separation 0.18 m/s off) all fail, while
//! the tolerances sit 14× (separation) to 10⁶× (linear) above the correct step's
//! residuals, which the test prints.

mod common;

use jostle::Character;
use jostle::CharacterOptions;
use jostle::dynamics::State;
use jostle::sim::balls::{Ball, BallParams, ContactReport, Touched};
use jostle::sim::{SimOptions, Simulation, Snapshot, SpringTuning};
use jostle::skeleton::{Model, Role};
use nalgebra::{Matrix3, UnitQuaternion, Vector3};

/// Time of the push, s: the demo walk with a foot on the floor.
const T0: f64 = 1.5;
/// Size of the push, N·s: a handball's (0.45 kg at ≈ 12 m/s, stopped and bounced back).
const PUSH: f64 = 8.0;

fn walk() -> Character {
    Character::load(
        &common::repo_clip("demo_walk.bvh"),
        &CharacterOptions::default(),
    )
    .expect("demo walk loads")
}

/// Σ mᵢ vᵢ, kg·m/s.
fn momentum(model: &Model, s: &State) -> Vector3<f64> {
    model
        .bodies
        .iter()
        .zip(&s.bodies)
        .map(|(b, x)| x.v * b.mass)
        .sum()
}

/// Centre of mass, m.
fn com(model: &Model, s: &State) -> Vector3<f64> {
    model
        .bodies
        .iter()
        .zip(&s.bodies)
        .map(|(b, x)| x.x * b.mass)
        .sum::<Vector3<f64>>()
        / model.total_mass()
}

/// Angular momentum about the fixed point `o` (kg·m²/s) at the end of the step that went
/// from `before` to the velocities of `after`, as the step moved the bodies: x⁺ = x + h v⁺
/// (so (x⁺ − o) × v⁺ = (x − o) × v⁺) and R⁺ = exp(h ω⁺) R. Post-stabilisation then
/// projects the positions onto the joints' constraints, which is not a momentum exchange
/// and is left out.
fn angular_momentum(
    model: &Model,
    before: &State,
    after: &State,
    o: &Vector3<f64>,
    h: f64,
) -> Vector3<f64> {
    model
        .bodies
        .iter()
        .zip(before.bodies.iter().zip(&after.bodies))
        .map(|(b, (s0, s1))| {
            let spun = UnitQuaternion::from_scaled_axis(s1.w * h) * s0.q;
            let r = spun.to_rotation_matrix();
            let iw = r.matrix() * b.inertia * r.matrix().transpose();
            (s0.x - o).cross(&(s1.v * b.mass)) + iw * s1.w
        })
        .sum()
}

/// The root spring's implicit gains h D + h² K (linear, kg; angular, kg·m²) of the
/// default tuning, from the figure posed at t = 0 (METHOD §12.3: K = m ω², D = 2ζ m ω;
/// K = I ω², D = 2ζ I ω with I the mean principal moment about the COM).
fn spring_gains(model: &Model, rest: &State, h: f64) -> (f64, f64) {
    let tuning = SpringTuning::default();
    let m = model.total_mass();
    let c = com(model, rest);
    let mut inertia = Matrix3::zeros();
    for (b, s) in model.bodies.iter().zip(&rest.bodies) {
        let d = s.x - c;
        inertia += s.world_inertia(&b.inertia)
            + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * b.mass;
    }
    let i = inertia.trace() / 3.0;
    let gain = |mass: f64, hz: f64| {
        let w = std::f64::consts::TAU * hz;
        h * 2.0 * tuning.damping_ratio * mass * w + h * h * mass * w * w
    };
    (gain(m, tuning.linear_hz), gain(i, tuning.angular_hz))
}

/// After one step from the snapshot: the state, the step's contact report and the balls.
struct Stepped {
    after: State,
    report: ContactReport,
    balls: Vec<Ball>,
}

/// One step from `snap`, with an optional external wrench on one body (body; world force
/// N, torque about its COM N·m) and an optional ball.
fn step_from(
    sim: &mut Simulation,
    snap: &Snapshot,
    push: Option<(usize, Vector3<f64>, Vector3<f64>)>,
    ball: Option<Ball>,
) -> Stepped {
    sim.restore(snap);
    sim.balls.clear();
    if let Some(b) = ball {
        sim.throw(b);
    }
    let n = sim.character.model.num_bodies();
    let extra = push.map(|(body, f, tq)| {
        let mut e = vec![(Vector3::zeros(), Vector3::zeros()); n];
        e[body] = (f, tq);
        e
    });
    sim.step(extra.as_deref()).expect("the step");
    Stepped {
        after: sim.state.clone(),
        report: *sim.record.contacts.last().expect("the step's report"),
        balls: sim.balls.clone(),
    }
}

/// The set-up: the walk standing on the floor, run to T0, its snapshot, and the push's
/// direction: horizontal, against the walking direction (a push from the front).
struct Scene<'c> {
    sim: Simulation<'c>,
    snap: Snapshot,
    dir: Vector3<f64>,
    gains: (f64, f64),
}

fn scene(c: &Character) -> Scene<'_> {
    let mut sim = Simulation::new(c, SimOptions::default()).expect("standing walk");
    let h = sim.opts.step;
    let gains = spring_gains(&c.model, &sim.state, h);
    let k0 = (T0 / h).round() as usize;
    while sim.k < k0 {
        sim.step(None).expect("unperturbed walk");
    }
    let snap = sim.snapshot();
    let v_root = snap.state.bodies[0].v;
    let walking = Vector3::new(v_root.x, 0.0, v_root.z).normalize();
    Scene {
        sim,
        snap,
        dir: -walking,
        gains,
    }
}

/// Where the push lands: the trunk body of `role`, the point p on the front of its first
/// capsule (half-way along it, facing the pusher) and the capsule's outward normal there.
struct Target {
    body: usize,
    point: Vector3<f64>,
    normal: Vector3<f64>,
}

fn target(sc: &Scene, role: Role) -> Target {
    let model = &sc.sim.character.model;
    let body = model
        .bodies
        .iter()
        .position(|b| b.role == Some(role))
        .unwrap_or_else(|| panic!("no {role:?}"));
    let s = &sc.snap.state.bodies[body];
    let cap = &model.bodies[body].capsules[0];
    let (a, b) = (s.x + s.q * cap.a, s.x + s.q * cap.b);
    let axis = (b - a).normalize();
    let normal = (-sc.dir + axis * axis.dot(&sc.dir)).normalize();
    let point = (a + b) * 0.5 + normal * cap.radius;
    eprintln!(
        "t0 = {:.4} s: push on `{}` ({:.2} kg of {:.2} kg; capsule radius {:.3} m) along {:.4?}",
        sc.snap.k as f64 * sc.sim.opts.step,
        model.bodies[body].name,
        model.bodies[body].mass,
        model.total_mass(),
        cap.radius,
        sc.dir,
    );
    Target {
        body,
        point,
        normal,
    }
}

/// What the push changed beyond the unperturbed step, against Newton's laws for it.
struct Books {
    /// |Δp − (P + ΔF_floor + ΔF_spring)| / |P|.
    linear: f64,
    /// |Δc − h Δp/m| / (h |P|/m): the COM moved by the step's own velocity change.
    position: f64,
    /// |ΔL_c − ((p − c) × P + floor + spring moments)| / |(p − c) × P|.
    angular: f64,
    /// |m Δv_c − P| / |P| and |Δc − h P/m| / (h |P|/m) (the same number): how far the
    /// floor and the spring kept the COM from P/m in the first step.
    reaction: f64,
    /// |ΔF_floor| / |P| and |ΔF_spring| / |P|: both must be far above the tolerance, or
    /// the books would balance without them.
    floor: f64,
    spring: f64,
}

/// The books of step `b` (pushed by `push` at `at.point`) against step `a` (unpushed),
/// both from the scene's snapshot.
fn books(
    sc: &Scene,
    at: &Target,
    a: &Stepped,
    b: &Stepped,
    push: &Vector3<f64>,
    what: &str,
) -> Books {
    let model = &sc.sim.character.model;
    let h = sc.sim.opts.step;
    let m = model.total_mass();
    let before = &sc.snap.state;
    let (lin, ang) = sc.gains;
    let c0 = com(model, before);
    let x_root = before.bodies[0].x;
    // linear momentum, and the COM's velocity and position
    let dp = momentum(model, &b.after) - momentum(model, &a.after);
    let floor = b.report.floor_impulse - a.report.floor_impulse;
    let spring = -(b.after.bodies[0].v - a.after.bodies[0].v) * lin;
    let want = push + floor + spring;
    let dvc = dp / m;
    let dc = com(model, &b.after) - com(model, &a.after);
    // angular momentum about the COM at the start of the step (a fixed point)
    let dl = angular_momentum(model, before, &b.after, &c0, h)
        - angular_momentum(model, before, &a.after, &c0, h);
    let lever = (at.point - c0).cross(push);
    let floor_moment = (b.report.floor_moment - a.report.floor_moment) - c0.cross(&floor);
    let spring_moment =
        (x_root - c0).cross(&spring) - (b.after.bodies[0].w - a.after.bodies[0].w) * ang;
    let want_l = lever + floor_moment + spring_moment;
    let out = Books {
        linear: (dp - want).norm() / push.norm(),
        position: (dc - dvc * h).norm() / (h * push.norm() / m),
        angular: (dl - want_l).norm() / lever.norm(),
        reaction: (dp - push).norm() / push.norm(),
        floor: floor.norm() / push.norm(),
        spring: spring.norm() / push.norm(),
    };
    eprintln!(
        "{what}: P {push:.5?} N·s at p {:.4?} m, COM c {c0:.4?} m, m {m:.3} kg, h {h:.6} s\n  \
         Δp {dp:.6?} N·s = P + floor {floor:.6?} + spring {spring:.6?} + residual {:.2e} (relative {:.2e})\n  \
         P/m {:.6} m/s, Δv_c {dvc:.6?} m/s: m Δv_c − P = {:.6?} N·s ({:.3} % of |P|)\n  \
         COM moved {:.6?} mm, h Δp/m {:.6?} mm (relative error {:.2e}), h P/m {:.6?} mm\n  \
         ΔL_c {dl:.6?} = (p − c)×P {lever:.6?} + floor {floor_moment:.6?} + spring {spring_moment:.6?} + residual {:.2e} N·m·s (relative {:.2e})",
        at.point,
        (dp - want).norm(),
        out.linear,
        push.norm() / m,
        dp - push,
        100.0 * out.reaction,
        dc * 1e3,
        dvc * h * 1e3,
        out.position,
        push * (h / m) * 1e3,
        (dl - want_l).norm(),
        out.angular,
    );
    out
}

/// The assertions both pushes share: the books balance, the floor and the spring both
/// answered (so they are in the books for real), and together they kept the COM within
/// `reaction_limit` of P/m.
fn assert_books(r: &Books, reaction_limit: f64, what: &str) {
    // measured on both pushes: linear 2e-15, position 9e-13, angular 1.5e-10
    assert!(
        r.linear < 1e-9,
        "{what}: linear momentum off by {:e} of |P| (floor {:e}, spring {:e} of |P|)",
        r.linear,
        r.floor,
        r.spring
    );
    assert!(
        r.position < 1e-9,
        "{what}: the COM moved {:e} (relative) away from h Δp/m",
        r.position
    );
    // the rotational rows are solved by chord iterations to a relative 1e-12 of the step's
    // momenta, not to round-off
    assert!(
        r.angular < 1e-8,
        "{what}: angular momentum about the COM off by {:e} of |(p − c) × P|",
        r.angular
    );
    assert!(
        r.floor > 1e-4 && r.spring > 1e-4,
        "{what}: the floor ({:e}) and the spring ({:e}) must answer visibly for the books to test them",
        r.floor,
        r.spring
    );
    assert!(
        r.reaction < reaction_limit,
        "{what}: the floor and the spring took {:.3} % of the push in its first step (limit {:.1} %)",
        100.0 * r.reaction,
        100.0 * reaction_limit
    );
}

#[test]
fn a_standing_figure_pushed_on_the_chest_moves_its_com_by_the_impulse_over_its_mass() {
    let c = walk();
    let mut sc = scene(&c);
    let at = target(&sc, Role::Chest);
    let p = sc.dir * PUSH;
    let h = sc.sim.opts.step;
    let x = sc.snap.state.bodies[at.body].x;
    // P over one step at p: a force P/h on the chest and its moment about the chest's COM
    let wrench = (at.body, p / h, (at.point - x).cross(&(p / h)));
    let snap = sc.snap.clone();
    let a = step_from(&mut sc.sim, &snap, None, None);
    let b = step_from(&mut sc.sim, &snap, Some(wrench), None);
    assert!(
        a.report.floor_contacts > 0 && b.report.floor_contacts > 0,
        "standing: {:?} {:?}",
        a.report,
        b.report
    );
    let r = books(&sc, &at, &a, &b, &p, "push on the chest");
    // measured: 0.84 %
    assert_books(&r, 0.02, "push on the chest");
}

#[test]
fn a_standing_figure_hit_on_the_abdomen_by_a_ball_moves_its_com_by_the_impulse_over_its_mass() {
    let c = walk();
    let mut sc = scene(&c);
    let at = target(&sc, Role::Abdomen);
    let h = sc.sim.opts.step;
    let params = BallParams::default();
    let body0 = sc.snap.state.bodies[at.body];
    // touching the capsule at p at the start of the step, flying into it at 12 m/s relative
    // to the body's own velocity there
    let v_point = body0.v + body0.w.cross(&(at.point - body0.x));
    let v = v_point + sc.dir * 12.0;
    let ball = Ball::new(params, T0, at.point + at.normal * params.radius, v);
    let snap = sc.snap.clone();
    let a = step_from(&mut sc.sim, &snap, None, None);
    let b = step_from(&mut sc.sim, &snap, None, Some(ball));
    let g = sc.sim.character.model.gravity;
    let after = &b.balls[0];
    let hits: Vec<_> = after.hits.iter().map(|x| (x.other, x.t)).collect();
    eprintln!(
        "ball: hits {hits:?}; {} contacts ({} floor)",
        b.report.contacts, b.report.floor_contacts
    );
    assert!(
        hits.len() == 1 && hits[0].0 == Touched::Body(at.body) && hits[0].1 == T0,
        "one hit, on the abdomen, at the start of the step: {hits:?}"
    );
    assert_eq!(
        b.report.contacts,
        b.report.floor_contacts + 1,
        "one ball contact row: {:?}",
        b.report
    );
    // the impulse on the figure: what the ball lost beyond gravity's pull over the step
    let p = -(after.v - (v + g * h)) * params.mass;
    // Newton restitution of the approach at the start of the step, along the normal: the
    // LCP chose the impulse with the Delassus matrix's prediction of the step's answer
    let body1 = b.after.bodies[at.body];
    let approach = (v - v_point).dot(&at.normal);
    let separation = (after.v - (body1.v + body1.w.cross(&(at.point - body0.x)))).dot(&at.normal);
    let want = -params.restitution * approach;
    eprintln!(
        "ball: approach {approach:.6} m/s, separation {separation:.9} m/s, −e·approach {want:.9} m/s (error {:.2e})",
        separation - want
    );
    let r = books(&sc, &at, &a, &b, &p, "ball on the abdomen");
    assert!(p.norm() > 5.0, "a handball's hit: {p:?} N·s");
    assert!(
        (separation - want).abs() < 1e-7 * approach.abs(),
        "separation {separation} m/s vs −e·approach {want} m/s"
    );
    // measured: 2.07 %
    assert_books(&r, 0.04, "ball on the abdomen");
}
