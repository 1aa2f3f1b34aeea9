//! A run that starts just before its first ball (`Simulation::new_from`; `perturb` and
//! `batch` by default, on a grid of restarts): the frames before are the reference,
//! within the unperturbed path's tracking error of the run that began at the clip's first
//! frame, and from the start on the two are one run to round-off — for an unperturbed
//! run, for a hit, and on a real clip when the shared ones are there. (That variations
//! sharing a precompute stay what each would be alone, bit for bit, is
//! `batch::job::tests::variations_do_not_depend_on_each_other`.)

mod common;

use jostle::batch::job::{
    Outputs, RESTART_EVERY_S, START_LEAD_S, run_start_s, run_variations_with,
};
use jostle::motion::kinematics::BodyKinematics;
use jostle::motion::reference::ReferenceScratch;
use jostle::sim::balls::Ball;
use jostle::sim::scenario::{BallSpec, Scenario};
use jostle::sim::{BodyPose, SimOptions, Simulation};
use jostle::{Character, CharacterOptions};

fn load(path: &std::path::Path) -> Character {
    Character::load(path, &CharacterOptions::default()).expect("clip loads")
}

fn scenario(flags: &[&str]) -> Scenario {
    Scenario {
        balls: flags
            .iter()
            .map(|f| BallSpec::from_flag(f).expect("ball spec"))
            .collect(),
    }
}

/// Largest distance (m) and rotation (rad) between two runs' poses.
fn pose_gap(a: &[BodyPose], b: &[BodyPose]) -> (f64, f64) {
    a.iter().zip(b).fold((0.0, 0.0), |(dx, dq), (p, q)| {
        (
            f64::max(dx, (p.x - q.x).norm()),
            f64::max(dq, p.q.angle_to(&q.q)),
        )
    })
}

/// Run `c` with the balls of `flags` from the clip's start and from `start_s`; the two
/// records' largest pose gaps before and after the start, and the late run's first step.
fn compare(c: &Character, flags: &[&str], start_s: f64) -> ((f64, f64), (f64, f64), usize) {
    let launches = scenario(flags)
        .launches(&c.model, &c.reference, "test")
        .expect("launches");
    let run = |late: bool| {
        let opts = SimOptions::default();
        let mut sim = if late {
            Simulation::new_from(c, opts, start_s)
        } else {
            Simulation::new(c, opts)
        }
        .expect("feedforward");
        for l in &launches {
            sim.throw(Ball::from_launch(l));
        }
        sim.run().expect("runs");
        sim
    };
    let (early, late) = (run(false), run(true));
    let first = late.feedforward.first_step;
    assert_eq!(early.feedforward.first_step, 0);
    assert_eq!(
        late.record.times, early.record.times,
        "the same steps recorded"
    );
    assert_eq!(
        late.feedforward.computed_steps() + first,
        early.feedforward.computed_steps()
    );
    // before the start the record holds no poses, and the exported frames are the
    // reference's at their own times
    for k in 0..first {
        assert!(late.record.poses[k].is_empty(), "step {k}");
        assert_eq!(late.record.max_error_deg[k].0, 0.0);
    }
    let model = &c.model;
    let mut kin = vec![BodyKinematics::default(); model.num_bodies()];
    let mut scratch = ReferenceScratch::default();
    let (te, tl) = (early.trajectory(), late.trajectory());
    let h = SimOptions::default().step;
    let mut before = (0.0, 0.0);
    let mut frames_before = 0;
    for (f, (pe, pl)) in te.poses.iter().zip(&tl.poses).enumerate() {
        let t = f as f64 * te.frame_time;
        if t / h >= first as f64 {
            break;
        }
        c.reference.sample(model, t, &mut scratch, &mut kin);
        let reference: Vec<BodyPose> = kin.iter().map(|k| BodyPose { x: k.x, q: k.q }).collect();
        assert_eq!(pl, &reference, "frame {f}");
        let (x, q) = pose_gap(pe, pl);
        before = (f64::max(before.0, x), f64::max(before.1, q));
        frames_before += 1;
    }
    assert!(frames_before > 0 || first == 0);
    let n = early.record.poses.len();
    let after = (first..n).fold((0.0, 0.0), |(dx, dq), k| {
        let (x, q) = pose_gap(&early.record.poses[k], &late.record.poses[k]);
        (f64::max(dx, x), f64::max(dq, q))
    });
    // and the exported frames after it are the recorded run's
    let (mut dx, mut dq) = (0.0f64, 0.0f64);
    for (pe, pl) in te.poses.iter().zip(&tl.poses) {
        let (x, q) = pose_gap(pe, pl);
        (dx, dq) = (dx.max(x), dq.max(q));
    }
    assert!(dx <= before.0.max(after.0) + 1e-12 && dq <= before.1.max(after.1) + 1e-9);
    (before, after, first)
}

/// A run of the demo walk with the balls of `flags` started at `start_s` agrees with
/// the one from the clip's start: before the start as closely as the run from 0 tracks
/// the reference, after it to round-off (each step's feedforward lands the bodies on the
/// reference's next pose from wherever the step starts, so the first step takes the late
/// run onto the path the early one follows).
fn assert_late_run_is_the_run_from_the_start(
    flags: &[&str],
    start_s: f64,
    first_step: usize,
    label: &str,
) {
    let c = load(&common::repo_clip("demo_walk.bvh"));
    let (before, after, first) = compare(&c, flags, start_s);
    assert_eq!(
        first, first_step,
        "{label}: {start_s} s at 240 steps a second"
    );
    eprintln!("{label}: before the start {before:?}, after {after:?} (m, rad)");
    assert!(before.0 < 1e-5 && before.1 < 1e-5, "{label}: {before:?}");
    assert!(after.0 < 1e-9 && after.1 < 1e-9, "{label}: {after:?}");
}

#[test]
fn an_unperturbed_run_started_late_is_the_run_from_the_start() {
    assert_late_run_is_the_run_from_the_start(&[], 1.0, 240, "unperturbed");
}

#[test]
fn a_hit_in_a_run_started_late_is_the_hit_from_the_start() {
    // the blow bends the arm by ~10°: the two runs' hit agrees to round-off
    let flags = ["t=1.6,target=right_forearm,speed=12"];
    assert_late_run_is_the_run_from_the_start(&flags, 1.2, 288, "forearm hit");
}

#[test]
fn a_job_starts_each_run_on_the_grid_before_its_first_ball_unless_asked_not_to() {
    let c = load(&common::repo_clip("demo_walk.bvh"));
    let flags = ["t=1.6,target=chest,speed=12"];
    let s = scenario(&flags);
    let launches = s
        .launches(&c.model, &c.reference, "test")
        .expect("launches");
    let launch = launches[0].t;
    assert!(
        launch > 1.0 && launch < 1.6,
        "aimed: launched before it arrives"
    );
    assert!((run_start_s(&launches) - (launch - START_LEAD_S)).abs() < 1e-12);
    assert_eq!(run_start_s(&[]), 0.0, "no ball: from the start");
    let early_launch = scenario(&["t=0.45,target=chest,speed=12"])
        .launches(&c.model, &c.reference, "test")
        .expect("launches");
    assert_eq!(run_start_s(&[launches.clone(), early_launch].concat()), 0.0);
    let job = |from_clip_start: bool| {
        let outputs = Outputs {
            from_clip_start,
            ..Outputs::default()
        };
        let (timing, mut runs) = run_variations_with(
            &c,
            SimOptions::default(),
            std::slice::from_ref(&s),
            "demo",
            outputs,
        )
        .expect("runs");
        (timing, runs.pop().expect("one run"))
    };
    let ((t_late, late), (t_early, early)) = (job(false), job(true));
    let h = SimOptions::default().step;
    // the run starts on the grid of restarts, at its last point before the lead
    let (start, latest) = (late.start_s, launch - START_LEAD_S);
    assert!(
        start <= latest && start > latest - RESTART_EVERY_S,
        "{start} {latest}"
    );
    assert!(((start / RESTART_EVERY_S) - (start / RESTART_EVERY_S).round()).abs() < 1e-9);
    assert_eq!(
        t_late.start_s, start,
        "one variation: the precompute starts with it"
    );
    assert_eq!((t_early.start_s, early.start_s), (0.0, 0.0));
    assert_eq!(
        late.run_steps + (start / h).round() as usize,
        early.run_steps
    );
    assert_eq!(t_late.feedforward_steps, late.run_steps);
    let (a, b) = (&late.metrics, &early.metrics);
    eprintln!(
        "chest ball: peak {:.6}° / {:.6}°, root {:.7} / {:.7} m, slip {:.4} / {:.4} mm, \
         back in {:?} / {:?} s",
        a.peak_deviation_deg,
        b.peak_deviation_deg,
        a.root_peak_displacement_m,
        b.root_peak_displacement_m,
        a.foot_slip_mm,
        b.foot_slip_mm,
        a.recovery_time_s,
        b.recovery_time_s
    );
    // The job's precompute restarts its unperturbed path from the reference every
    // RESTART_EVERY_S (so that variations starting at different grid points share it);
    // the ball, in the air across the restart at 1.5 s, meets a feedforward that differs
    // there for a step or two (0.47 N·m for one step: the restart's velocities are
    // projected in the mass metric, the path's in the step's). Without the restarts'
    // velocities set as the path arrives (the reference's own), it was 1 % off.
    assert_eq!(a.fell, b.fell);
    assert!((a.peak_deviation_deg - b.peak_deviation_deg).abs() < 0.01);
    assert!((a.root_peak_displacement_m - b.root_peak_displacement_m).abs() < 1e-5);
    assert!((a.foot_slip_mm - b.foot_slip_mm).abs() < 0.1);
    assert_eq!(a.recovery_time_s.is_some(), b.recovery_time_s.is_some());
    assert!((a.recovery_time_s.unwrap_or(0.0) - b.recovery_time_s.unwrap_or(0.0)).abs() < 0.02);
}

#[test]
fn a_start_outside_the_clip_is_an_error_or_its_last_step() {
    let c = load(&common::repo_clip("demo_walk.bvh"));
    for bad in [-0.5, f64::NAN, f64::INFINITY] {
        let e = Simulation::new_from(&c, SimOptions::default(), bad)
            .err()
            .expect("an error");
        assert!(e.to_string().contains("start"), "{e}");
    }
    let mut sim = Simulation::new_from(&c, SimOptions::default(), 1e3).expect("clamped");
    assert_eq!(sim.feedforward.first_step + 1, sim.num_steps());
    sim.run().expect("the last step");
    assert_eq!(sim.record.times.len(), sim.num_steps());
}

#[test]
fn a_real_clip_started_late_is_the_run_from_the_start() {
    let Some(path) = common::shared_clip("cmu_01_01_jumps_turn.bvh") else {
        return;
    };
    let c = load(&path);
    // the chest ball of the speed notes, the run starting in the middle of a jump sequence
    let (before, after, _) = compare(&c, &["t=3,target=chest,speed=12"], 2.5);
    eprintln!("CMU 01_01 chest ball: before the start {before:?}, after {after:?} (m, rad)");
    assert!(before.0 < 1e-5 && before.1 < 1e-5, "{before:?}");
    assert!(after.0 < 1e-8 && after.1 < 1e-8, "{after:?}");
}
