//! Replaying the feedforward's unperturbed path (`sim::replay`): a run that copies its
//! untouched steps from the precompute gives the same record, bit for bit, as one that
//! computes every step — for a standing and a pinned figure, for a ball that hits and
//! for a knock-down, and on a real clip when the shared ones are there.

mod common;

use jostle::sim::balls::Ball;
use jostle::sim::metrics::perturb_metrics;
use jostle::sim::scenario::{BallSpec, Scenario};
use jostle::sim::{Precompute, RootMode, SimOptions, Simulation};
use jostle::{Character, CharacterOptions};

/// The simulation's record fields that every output is made from, and its balls: Debug
/// output prints every f64 exactly (shortest round trip), so equal strings are equal bits.
fn record_of(sim: &Simulation) -> String {
    let r = &sim.record;
    format!(
        "{:?}",
        (
            &r.times,
            &r.poses,
            &r.rms_error_deg,
            &r.max_error_deg,
            &r.constraint_error_m,
            &r.root_offset_m,
            &r.root_tilt_deg,
            &r.balls,
            (&r.contacts, &r.contact_bodies),
            &r.ground_penetration_m,
            &r.support_offsets,
            &sim.balls,
        )
    )
}

/// Run `c` with the throws of `flags`, copying untouched steps from the precompute or not.
/// Returns the simulation's record fields that every output is made from, the metrics
/// JSON and the number of replayed steps.
fn run(c: &Character, opts: SimOptions, flags: &[&str], replay: bool) -> (String, String, usize) {
    let scenario = Scenario {
        balls: flags
            .iter()
            .map(|f| BallSpec::from_flag(f).expect("ball spec"))
            .collect(),
    };
    let launches = scenario
        .launches(&c.model, &c.reference, "test")
        .expect("launches");
    let mut sim = Simulation::new(c, opts).expect("feedforward");
    sim.replay_unperturbed = replay;
    for l in &launches {
        sim.throw(Ball::from_launch(l));
    }
    sim.run().expect("runs");
    let record = record_of(&sim);
    let metrics = serde_json::to_string(&perturb_metrics(&sim)).expect("metrics");
    (record, metrics, sim.replayed_steps)
}

fn assert_replay_is_exact(c: &Character, opts: SimOptions, flags: &[&str], label: &str) -> usize {
    let (computed, computed_metrics, none) = run(c, opts, flags, false);
    let (replayed, replayed_metrics, replayed_steps) = run(c, opts, flags, true);
    assert_eq!(none, 0, "{label}: replay off replays nothing");
    assert!(
        computed == replayed,
        "{label}: the replayed run's record differs from the computed one"
    );
    assert_eq!(computed_metrics, replayed_metrics, "{label}: metrics");
    eprintln!("{label}: {replayed_steps} steps replayed, record identical");
    replayed_steps
}

fn demo_walk() -> Character {
    Character::load(
        &common::repo_clip("demo_walk.bvh"),
        &CharacterOptions::default(),
    )
    .expect("demo walk loads")
}

#[test]
fn a_standing_run_with_a_hit_is_the_same_replayed_or_computed() {
    let c = demo_walk();
    let h = SimOptions::default().step;
    let replayed = assert_replay_is_exact(
        &c,
        SimOptions::default(),
        &["t=1.5,target=right_forearm,speed=12"],
        "demo walk, standing, forearm hit",
    );
    // the ball arrives at 1.5 s from 3 m away at 12 m/s: launched about 0.25 s before,
    // and every step up to its launch is replayed
    let launch_steps = ((1.5 - 3.0 / 12.0) / h) as usize;
    assert!(
        replayed + 12 >= launch_steps && replayed <= launch_steps + 1,
        "replayed {replayed} steps, the ball is launched near step {launch_steps}"
    );
}

#[test]
fn a_pinned_run_and_a_knock_down_are_the_same_replayed_or_computed() {
    let c = demo_walk();
    let pinned = SimOptions {
        root: RootMode::Pinned,
        ..Default::default()
    };
    let n = assert_replay_is_exact(
        &c,
        pinned,
        &["t=1.0,target=head,speed=10"],
        "demo walk, pinned, head hit",
    );
    assert!(n > 100, "pinned: {n} steps replayed");
    // a 5 kg ball to the chest knocks the standing figure down (tests/falls.rs)
    assert_replay_is_exact(
        &c,
        SimOptions::default(),
        &["t=1.2,target=chest,speed=15,mass=5,radius=0.11"],
        "demo walk, knocked down",
    );
}

#[test]
fn without_balls_the_whole_run_is_replayed_and_equal() {
    let c = demo_walk();
    let n = assert_replay_is_exact(&c, SimOptions::default(), &[], "demo walk, no balls");
    let steps = Simulation::new(&c, SimOptions::default())
        .expect("feedforward")
        .num_steps();
    assert_eq!(n, steps, "every step of an untouched run is replayed");
}

#[test]
fn settings_changed_after_the_precompute_are_not_replayed() {
    let c = demo_walk();
    let mut sim = Simulation::new(&c, SimOptions::default()).expect("feedforward");
    sim.contact.ground_friction *= 0.5;
    sim.run().expect("runs");
    assert_eq!(
        sim.replayed_steps, 0,
        "another ground friction than the path's"
    );
    sim.contact.ground_friction *= 2.0;
    sim.reset();
    sim.run().expect("runs");
    assert_eq!(
        sim.replayed_steps,
        sim.num_steps(),
        "the path's settings again"
    );
}

#[test]
fn a_real_clip_is_the_same_replayed_or_computed() {
    let Some(path) = common::shared_clip("cmu_01_01_jumps_turn.bvh") else {
        return;
    };
    let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
    assert_replay_is_exact(
        &c,
        SimOptions::default(),
        &[
            "t=4.0,target=chest,speed=12",
            "t=9.0,target=left_thigh,speed=12",
        ],
        "CMU 01_01, two hits",
    );
}

/// A run of a precompute that keeps only some stretches of its path: its record, bit
/// for bit, and how many steps it replayed.
fn run_keeping(
    c: &Character,
    windows: Option<Vec<(f64, f64)>>,
    start_s: f64,
    flags: &[&str],
) -> (String, usize) {
    let precompute = Precompute {
        start_s,
        restart_every_s: 0.5,
        replay_windows: windows,
    };
    let mut sim =
        Simulation::new_from_cancellable(c, SimOptions::default(), &precompute, &mut || false)
            .expect("feedforward");
    for f in flags {
        let spec = BallSpec::from_flag(f).expect("ball spec");
        let scenario = Scenario { balls: vec![spec] };
        for l in scenario
            .launches(&c.model, &c.reference, "test")
            .expect("launch")
        {
            sim.throw(Ball::from_launch(&l));
        }
    }
    sim.run().expect("runs");
    let record = record_of(&sim);
    (record, sim.replayed_steps)
}

#[test]
fn a_path_kept_in_stretches_gives_the_same_run() {
    let c = demo_walk();
    let h = SimOptions::default().step;
    // a chest hit sets the reflex delay off, whose hold follows the unperturbed path
    // after the hit: kept apart from the states, whatever stretches are kept
    let flags = ["t=1.5,target=chest,speed=12"];
    let (all, replayed_all) = run_keeping(&c, None, 1.0, &flags);
    // the run replays from its start to the launch (~0.25 s before the arrival)
    let launch = 1.5 - 3.0 / 12.0;
    let (window, replayed_window) = run_keeping(&c, Some(vec![(1.0, launch)]), 1.0, &flags);
    let (none, replayed_none) = run_keeping(&c, Some(vec![]), 1.0, &flags);
    let (elsewhere, replayed_elsewhere) =
        run_keeping(&c, Some(vec![(0.0, 0.4), (2.0, 3.0)]), 1.0, &flags);
    assert!(
        replayed_all > 0 && replayed_all as f64 <= (launch - 1.0) / h + 1.0,
        "all kept: {replayed_all} steps replayed"
    );
    assert_eq!(
        replayed_window, replayed_all,
        "the window holds every replayed step"
    );
    assert_eq!(replayed_none, 0, "nothing kept, nothing replayed");
    assert_eq!(
        replayed_elsewhere, 0,
        "stretches the run does not replay in"
    );
    assert!(window == all, "kept in its window: the record differs");
    assert!(none == all, "nothing kept: the record differs");
    assert!(elsewhere == all, "kept elsewhere: the record differs");
}

#[test]
fn a_replay_window_outside_the_clip_is_an_error() {
    let c = demo_walk();
    for w in [(-1.0, 1.0), (2.0, 1.0), (f64::NAN, 1.0)] {
        let precompute = Precompute {
            replay_windows: Some(vec![w]),
            ..Default::default()
        };
        let e =
            Simulation::new_from_cancellable(&c, SimOptions::default(), &precompute, &mut || false)
                .err()
                .unwrap_or_else(|| panic!("window {w:?} accepted"));
        assert!(e.to_string().contains("replay window"), "{e}");
    }
}
