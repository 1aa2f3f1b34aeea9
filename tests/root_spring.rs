//! A root held by a spring-damper (METHOD §12.3): the step's exact gradient reproduces the
//! analytic damped oscillator, the known impulse carries the weight, and on a clip an
//! unperturbed run follows the mocap while a push moves the pelvis.

mod common;

use jostle::dynamics::{
    BodyState, Drift, NoTorque, Root, RootSpring, RootTarget, State, StepOptions, Stepper,
};
use jostle::sim::metrics::PerturbMetrics;
use jostle::sim::root::FeetShift;
use jostle::sim::scenario::{BallSpec, Scenario};
use jostle::sim::support::SupportContact;
use jostle::sim::{RootMode, SimOptions, Simulation, SpringTuning};
use jostle::skeleton::{Model, ModelBuilder};
use jostle::{Character, CharacterOptions};
use nalgebra::{Matrix3, UnitQuaternion, Vector3, Vector6};

const MASS: f64 = 70.0;
const INERTIA: f64 = 12.0;

/// One body with a spherical inertia (no gyroscopic term), in zero gravity.
fn lone_body(gravity: Vector3<f64>) -> Model {
    let mut mb = ModelBuilder::new();
    mb.add_body("pelvis", None, MASS, Matrix3::identity() * INERTIA, None);
    let mut m = mb.build();
    m.gravity = gravity;
    m
}

fn spring(omega: f64, zeta: f64, impulse: Vector6<f64>) -> RootSpring {
    RootSpring {
        target: RootTarget::fixed(Vector3::zeros(), UnitQuaternion::identity()),
        k_linear: MASS * omega * omega,
        d_linear: 2.0 * zeta * MASS * omega,
        k_angular: INERTIA * omega * omega,
        d_angular: 2.0 * zeta * INERTIA * omega,
        impulse,
    }
}

/// x(t) of m ẍ + D ẋ + K x = 0 from (x0, 0), with ω² = K/m and D = 2ζmω.
fn damped(x0: f64, omega: f64, zeta: f64, t: f64) -> f64 {
    if (zeta - 1.0).abs() < 1e-12 {
        x0 * (1.0 + omega * t) * (-omega * t).exp()
    } else {
        let wd = omega * (1.0 - zeta * zeta).sqrt();
        x0 * (-zeta * omega * t).exp() * ((wd * t).cos() + zeta * omega / wd * (wd * t).sin())
    }
}

#[test]
fn a_displaced_root_rings_down_as_the_analytic_damped_oscillator() {
    let h = 1e-4;
    let omega = std::f64::consts::TAU * 1.0;
    for zeta in [1.0, 0.2] {
        let model = lone_body(Vector3::zeros());
        let (x0, a0) = (0.05, 0.2);
        let axis = Vector3::new(1.0, 2.0, -2.0).normalize();
        let mut state = State {
            bodies: vec![BodyState {
                x: Vector3::new(x0, 0.0, 0.0),
                q: UnitQuaternion::from_scaled_axis(axis * a0),
                v: Vector3::zeros(),
                w: Vector3::zeros(),
            }],
            t: 0.0,
        };
        let opts = StepOptions {
            h,
            drift: Drift::None,
            ..Default::default()
        };
        let mut stepper = Stepper::new(&model, opts).unwrap();
        let root = Root::Spring(spring(omega, zeta, Vector6::zeros()));
        let (mut worst_x, mut worst_a): (f64, f64) = (0.0, 0.0);
        for k in 1..=20_000 {
            stepper
                .step(&model, &mut state, &root, &NoTorque, None)
                .unwrap();
            let t = k as f64 * h;
            let s = &state.bodies[0];
            worst_x = worst_x.max((s.x.x - damped(x0, omega, zeta, t)).abs());
            let angle = s.q.scaled_axis().dot(&axis);
            worst_a = worst_a.max((angle - damped(a0, omega, zeta, t)).abs());
            assert!(s.x.y.abs() < 1e-15 && s.x.z.abs() < 1e-15);
        }
        // backward Euler's error is O(h ω) of the amplitude: 6e-4 here
        assert!(worst_x < 2e-3 * x0, "ζ = {zeta}: position error {worst_x}");
        assert!(worst_a < 2e-3 * a0, "ζ = {zeta}: angle error {worst_a}");
    }
}

#[test]
fn the_known_impulse_carries_the_weight_and_the_spring_stays_slack() {
    let g = Vector3::new(0.0, -9.81, 0.0);
    let model = lone_body(g);
    let h = 1.0 / 240.0;
    let mut state = State {
        bodies: vec![BodyState {
            x: Vector3::zeros(),
            q: UnitQuaternion::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }],
        t: 0.0,
    };
    let mut stepper = Stepper::new(
        &model,
        StepOptions {
            h,
            ..Default::default()
        },
    )
    .unwrap();
    let up = -g * MASS * h;
    let root = Root::Spring(spring(
        3.0,
        1.0,
        Vector6::new(up.x, up.y, up.z, 0.0, 0.0, 0.0),
    ));
    for _ in 0..2400 {
        stepper
            .step(&model, &mut state, &root, &NoTorque, None)
            .unwrap();
    }
    let s = &state.bodies[0];
    assert!(s.x.norm() < 1e-12 && s.v.norm() < 1e-12, "{s:?}");
    // without the impulse the spring alone holds it, sagging by m g / K
    let root = Root::Spring(spring(3.0, 1.0, Vector6::zeros()));
    for _ in 0..4800 {
        stepper
            .step(&model, &mut state, &root, &NoTorque, None)
            .unwrap();
    }
    let sag = 9.81 / 9.0;
    assert!((state.bodies[0].x.y + sag).abs() < 1e-6 * sag);
}

fn walk() -> Character {
    Character::load(
        &common::repo_clip("demo_walk.bvh"),
        &CharacterOptions::default(),
    )
    .unwrap()
}

/// The spring alone, carrying the whole figure (no floor).
fn spring_opts() -> SimOptions {
    SimOptions {
        root: RootMode::Spring(SpringTuning::default()),
        ground: false,
        ..Default::default()
    }
}

#[test]
fn an_unperturbed_spring_held_walk_follows_the_mocap() {
    let c = walk();
    let mut sim = Simulation::new(&c, spring_opts()).unwrap();
    sim.run().unwrap();
    let r = &sim.record;
    let rms = (r.rms_error_deg.iter().map(|x| x * x).sum::<f64>() / r.times.len() as f64).sqrt();
    let root = r.root_offset_m.iter().copied().fold(0.0, f64::max);
    let tilt = r.root_tilt_deg.iter().copied().fold(0.0, f64::max);
    // measured: 0.0018° RMS, root within 7 µm and 0.001° (the feedforward is the
    // spring-held figure's own discrete inverse dynamics, its root target re-taken from
    // where the root is each step; from the pinned figure's it was 0.034° and 0.75 mm)
    assert!(rms < 0.01, "RMS {rms}°");
    assert!(root < 1e-4 && tilt < 0.05, "root {root} m, {tilt}°");
}

/// The metrics of a run of `c` with `opts` and one ball (`--ball` spec).
fn one_ball(c: &Character, opts: SimOptions, ball: &str) -> PerturbMetrics {
    let scenario = Scenario {
        balls: vec![BallSpec::from_flag(ball).unwrap()],
    };
    let (_, mut out) =
        jostle::batch::job::run_variations(c, opts, std::slice::from_ref(&scenario), "clip", false)
            .unwrap();
    out.pop().unwrap().metrics
}

#[test]
fn a_pelvis_hit_moves_a_spring_held_root_and_it_returns() {
    let c = walk();
    let run = |opts: SimOptions| one_ball(&c, opts, "t=1.5,target=pelvis,speed=12");
    let pinned = run(SimOptions {
        root: RootMode::Pinned,
        ..Default::default()
    });
    let sprung = run(spring_opts());
    for m in [&pinned, &sprung] {
        assert_eq!(m.balls[0].body.as_deref(), Some("Hips"), "{m:?}");
    }
    // pinned: the pelvis does not move at all; spring: 8 N·s on ~73 kg moves it ≈ 1 cm
    // (critically damped at 0.5 Hz: peak ≈ Δv / (ω e) = 0.12 / (3.14 · 2.72) m)
    assert!(pinned.root_peak_displacement_m < 1e-4, "{pinned:?}");
    assert!(
        (0.008..0.03).contains(&sprung.root_peak_displacement_m),
        "{sprung:?}"
    );
    assert!(
        sprung.recovery_time_s.is_some_and(|t| t < 2.0),
        "{sprung:?}"
    );
}

/// The experimental soft zone (issue #13): off by default; inside the zone the frequencies
/// are scaled, beyond twice it they are the full ones, blended linearly in between; the
/// damping ratio and the balance gains are kept.
#[test]
fn soft_zone_scales_the_frequencies_near_the_path_only() {
    let full = SpringTuning::default();
    assert_eq!(full.at_offset(0.0), full);
    assert_eq!(full.at_offset(1.0), full);
    let soft = SpringTuning {
        soft_zone_m: 0.02,
        soft_scale: 0.5,
        ..SpringTuning::default()
    };
    assert!(soft.validate().is_ok());
    for (offset, factor) in [
        (0.0, 0.5),
        (0.02, 0.5),
        (0.03, 0.75),
        (0.04, 1.0),
        (0.5, 1.0),
    ] {
        let t = soft.at_offset(offset);
        assert!(
            (t.linear_hz - full.linear_hz * factor).abs() < 1e-12,
            "{offset}"
        );
        assert!(
            (t.angular_hz - full.angular_hz * factor).abs() < 1e-12,
            "{offset}"
        );
        assert_eq!(t.damping_ratio, full.damping_ratio);
    }
    for bad in [
        SpringTuning {
            soft_scale: 0.0,
            ..soft
        },
        SpringTuning {
            soft_scale: 1.5,
            ..soft
        },
        SpringTuning {
            soft_zone_m: -0.1,
            ..soft
        },
        SpringTuning {
            balance_cd: -1.0,
            ..soft
        },
        SpringTuning {
            balance_cv: f64::NAN,
            ..soft
        },
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
}

/// The root spring's target follows the planted feet after a hit (issue #13): toward the
/// mean of their horizontal offsets from the mocap, each weighted by the load the mocap
/// puts on it, through a first-order filter of time constant `follow_feet_s`, never
/// farther than `follow_feet_max_m`; unchanged with nothing loaded on the floor or the
/// following off.
#[test]
fn the_root_target_follows_the_loaded_feet_within_its_limit() {
    let contact = |point, load: f64| SupportContact {
        point,
        impulse: Vector3::new(0.3 * load, load, -0.2 * load),
        velocity: Vector3::zeros(),
        position: Vector3::zeros(),
    };
    let support = [contact(4, 3.0), contact(7, 1.0), contact(9, 0.0)];
    // point 9 is planted but carries nothing; point 2 is no support point of the step
    let offsets = [
        (4, [0.01, 0.0]),
        (7, [0.0, 0.02]),
        (9, [0.5, 0.5]),
        (2, [0.3, -0.3]),
    ];
    let mean = Vector3::new(0.0075, 0.0, 0.005);
    let tuning = SpringTuning::default();
    assert_eq!(
        (tuning.follow_feet_s, tuning.follow_feet_max_m),
        (0.1, 0.03)
    );
    let h = 0.01;
    let mut shift = FeetShift::default();
    shift.update(&tuning, &offsets, &support, h);
    assert!((shift.offset - mean * 0.1).norm() < 1e-15, "{shift:?}");
    for _ in 0..2000 {
        shift.update(&tuning, &offsets, &support, h);
    }
    assert!((shift.offset - mean).norm() < 1e-12, "{shift:?}");
    // a foot 0.5 m off is followed up to the limit, in its direction
    for _ in 0..2000 {
        shift.update(&tuning, &[(4, [0.3, 0.4])], &support, h);
    }
    assert!(
        (shift.offset - Vector3::new(0.018, 0.0, 0.024)).norm() < 1e-12,
        "{shift:?}"
    );
    let before = shift;
    shift.update(&tuning, &[(9, [0.5, 0.5])], &support, h);
    shift.update(&tuning, &[], &support, h);
    let off = SpringTuning {
        follow_feet_s: 0.0,
        ..tuning
    };
    shift.update(&off, &offsets, &support, h);
    assert_eq!(shift, before);
    assert!(off.validate().is_ok());
    for bad in [
        SpringTuning {
            follow_feet_s: -0.1,
            ..tuning
        },
        SpringTuning {
            follow_feet_s: f64::NAN,
            ..tuning
        },
        SpringTuning {
            follow_feet_max_m: -0.01,
            ..tuning
        },
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
}

/// The Bandai kick struck on the chest at 1.2 s (issue #13's handball sweep): its planted
/// foot slides under the blow and its kicking foot lands 3 cm off its mark. With the
/// root spring's target on the mocap path, the pelvis pulled back to it and the feet left
/// where they were held the legs more than 2° off their recorded angles for 1.3 s (to the
/// clip's end, 10 s later, before stop 61); with the target following the feet every joint
/// is back within 2° in 0.6 s, the pelvis moved, the trunk bent and the feet in place (the
/// criterion).
#[test]
fn a_kick_struck_mid_stance_recovers_when_the_root_target_follows_the_feet() {
    let Some(path) = common::shared_clip("bandai1_kick_normal_001.bvh") else {
        return;
    };
    let c = Character::load(&path, &CharacterOptions::default()).unwrap();
    let run = |tuning: SpringTuning| {
        let opts = SimOptions {
            root: RootMode::Spring(tuning),
            ..Default::default()
        };
        one_ball(&c, opts, "t=1.2,target=chest,speed=12")
    };
    let follow = run(SpringTuning::default());
    let on_path = run(SpringTuning {
        follow_feet_s: 0.0,
        ..SpringTuning::default()
    });
    for m in [&follow, &on_path] {
        assert_eq!(m.balls[0].body.as_deref(), Some("Chest"), "{m:?}");
        assert!(!m.fell, "{m:?}");
    }
    // (before a supported foot a few mm above its surface stood on it, stop 61, the
    // figure held on its path was never back within 2°; now in 1.31 s, against 0.60 s)
    assert!(
        on_path.recovery_time_s.is_none_or(|t| t > 1.0),
        "{on_path:?}"
    );
    assert!(
        follow.recovery_time_s.is_some_and(|t| t < 1.0),
        "{follow:?}"
    );
    assert!(follow.root_peak_displacement_m >= 0.01, "{follow:?}");
    assert!(follow.peak_deviation_deg >= 3.0, "{follow:?}");
    assert!(follow.foot_slip_mm <= 20.0, "{follow:?}");
}
