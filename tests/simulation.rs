//! Forward simulation of the repo's demo clips and the real clips of ../shared/mocap
//! (skipped when absent) (METHOD §6–§8, §11): the unperturbed character tracks its mocap;
//! the discrete-time feedforward alone reproduces it; blow-ups are errors.

mod common;

use jostle::sim::{Projection, RootMode, SimOptions, Simulation};
use jostle::{Character, CharacterOptions};
use nalgebra::Vector3;

/// The repo's clips, then the shared ones when they are there.
fn clips() -> Vec<std::path::PathBuf> {
    common::repo_and_shared_clips()
}

/// The demo walk, then `file` from the shared clips when they are there.
fn demo_walk_and(file: &str) -> Vec<Character> {
    let mut paths = vec![common::repo_clip("demo_walk.bvh")];
    if let Some(d) = common::shared_dir_or_skip_part(file) {
        paths.push(d.join(file));
    }
    paths
        .iter()
        .map(|p| Character::load(p, &CharacterOptions::default()).expect("loads"))
        .collect()
}

fn rms(x: &[f64]) -> f64 {
    (x.iter().map(|v| v * v).sum::<f64>() / x.len().max(1) as f64).sqrt()
}

#[test]
fn every_clip_tracks_its_mocap_with_feedforward_and_feedback() {
    for path in clips() {
        let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
        let mut sim = Simulation::new(&c, SimOptions::default()).expect("feedforward");
        sim.run().unwrap_or_else(|e| panic!("{e}"));
        let r = rms(&sim.record.rms_error_deg);
        let max = sim
            .record
            .max_error_deg
            .iter()
            .map(|x| x.0)
            .fold(0.0, f64::max);
        let cons = sim
            .record
            .constraint_error_m
            .iter()
            .cloned()
            .fold(0.0, f64::max);
        eprintln!(
            "{:45} rms {r:.5}° max {max:.4}° joints {:.1e} mm",
            path.file_name().unwrap().to_string_lossy(),
            cons * 1e3
        );
        assert!(r < 1.0, "{}: RMS error {r}°", path.display());
        // Standing on the floor (the default), the Bandai dance's spins on one foot pass
        // 1° for moments (2.8° at a thigh; its RMS is 0.02°): the planted foot turns with
        // the reference's contact point only as far as floor friction lets it.
        let max_limit = if path.to_string_lossy().contains("dance_short") {
            3.0
        } else {
            1.0
        };
        assert!(max < max_limit, "{}: max error {max}°", path.display());
        assert!(cons < 1e-3, "{}: joint separation {cons} m", path.display());
        if path.starts_with(common::repo_clip("")) {
            // The smooth synthetic demo clips track far closer than the 1° allowed for noisy
            // real mocap (measured: max 0.0005° walk, 0.0052° wave; joints 1e-5 mm): a
            // regression hiding under the real clips' bound still shows here.
            assert!(max < 0.05, "{}: max error {max}°", path.display());
            assert!(cons < 1e-6, "{}: joint separation {cons} m", path.display());
        }
    }
}

#[test]
fn discrete_feedforward_alone_keeps_the_first_second_within_a_tenth_of_a_degree() {
    for path in clips() {
        let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
        // The thesis' setting (root pinned): open loop, standing on the floor amplifies the
        // contact solver's round-off (0.26° in the demo walk's first second) as nothing
        // but the feedback would correct it.
        let opts = SimOptions {
            feedback: false,
            root: RootMode::Pinned,
            ..Default::default()
        };
        let mut sim = Simulation::new(&c, opts).expect("feedforward");
        let one_second = (1.0 / opts.step) as usize;
        for _ in 0..one_second.min(sim.num_steps()) {
            sim.step(None).unwrap_or_else(|e| panic!("{e}"));
        }
        let max = sim
            .record
            .max_error_deg
            .iter()
            .map(|x| x.0)
            .fold(0.0, f64::max);
        assert!(max < 0.1, "{}: {max}° in the first second", path.display());
        assert!(
            sim.feedforward.max_landing_error < 1e-6,
            "{}: landing {}",
            path.display(),
            sim.feedforward.max_landing_error
        );
    }
}

#[test]
fn stable_at_a_coarser_step() {
    for c in demo_walk_and("cmu_01_01_jumps_turn.bvh") {
        stable_at_h_120(&c);
    }
}

fn stable_at_h_120(c: &Character) {
    let mut sim = Simulation::new(
        c,
        SimOptions {
            step: 1.0 / 120.0,
            ..Default::default()
        },
    )
    .expect("ff");
    sim.run().expect("runs at 1/120 s");
    let max = sim
        .record
        .max_error_deg
        .iter()
        .map(|x| x.0)
        .fold(0.0, f64::max);
    assert!(max < 1.0, "max error {max}° at h = 1/120");
}

#[test]
fn a_blow_up_is_an_error_naming_the_time_and_body() {
    for c in demo_walk_and("cmu_walk_bvhmatlab.bvh") {
        blow_up_is_an_error(&c);
    }
}

fn blow_up_is_an_error(c: &Character) {
    let mut sim = Simulation::new(c, SimOptions::default()).expect("ff");
    let n = c.model.num_bodies();
    let hand = c.model.find_body("right_hand").expect("hand");
    let mut kick = vec![(Vector3::zeros(), Vector3::zeros()); n];
    kick[hand].1 = Vector3::new(1e9, 0.0, 0.0);
    let mut err = None;
    for _ in 0..10 {
        if let Err(e) = sim.step(Some(&kick)) {
            err = Some(e.to_string());
            break;
        }
    }
    let msg = err.expect("an absurd torque must stop the run");
    eprintln!("{msg}");
    assert!(msg.contains("t = "), "names the time: {msg}");
    assert!(
        c.model
            .bodies
            .iter()
            .any(|b| msg.contains(&format!("body `{}`", b.name))),
        "names the body: {msg}"
    );
    assert!(
        sim.state
            .bodies
            .iter()
            .all(|b| b.x.iter().all(|v| v.is_finite())),
        "state stays finite"
    );
}

#[test]
fn nan_in_an_external_wrench_is_an_error_not_a_nan_state() {
    for c in demo_walk_and("xia_depressed_18_000_punch.bvh") {
        nan_wrench_is_an_error(&c);
    }
}

fn nan_wrench_is_an_error(c: &Character) {
    let mut sim = Simulation::new(c, SimOptions::default()).expect("ff");
    let mut w = vec![(Vector3::zeros(), Vector3::zeros()); c.model.num_bodies()];
    w[3].0.x = f64::NAN;
    assert!(sim.step(Some(&w)).is_err());
    assert!(
        sim.state
            .bodies
            .iter()
            .all(|b| b.x.iter().all(|v| v.is_finite()))
    );
}

#[test]
fn the_feedforward_and_the_drift_correction_project_in_one_metric_and_land() {
    // Each step lands on u*, the reference displacement projected onto the joint rows; the
    // post-stabilisation then removes the drift along the same metric's constraint
    // directions, which undoes the projection's own change: the pose lands on the
    // reference to second order. By default (`Projection::Step`) both use the step's own
    // factorisation, so no projection is factored at all; the thesis' mass metric
    // (`Projection::Mass`) reuses the previous step's post-stabilisation factorisation for
    // u* (one more factorisation per step). Measured with the root pinned, RMS: demo walk
    // 2.3e-6° (step) vs 1.1e-4° (mass), CMU 01_01 3.0e-5° vs 2.1e-4°; the metrics mixed
    // (u* in M, the correction in M̃) track at ~5e-3°.
    for c in demo_walk_and("cmu_01_01_jumps_turn.bvh") {
        for root in [RootMode::Pinned, SimOptions::default().root] {
            let run = |projection| {
                let opts = SimOptions {
                    root,
                    projection,
                    ..Default::default()
                };
                let mut sim = Simulation::new(&c, opts).expect("feedforward");
                sim.run().expect("run");
                let rec = &sim.record;
                let rms = (rec.rms_error_deg.iter().map(|x| x * x).sum::<f64>()
                    / rec.rms_error_deg.len() as f64)
                    .sqrt();
                let drift = rec.constraint_error_m.iter().cloned().fold(0.0, f64::max);
                (sim.num_steps(), sim.feedforward, rms, drift)
            };
            let (steps, ff_step, rms_step, drift_step) = run(Projection::Step);
            let (_, ff_mass, rms_mass, drift_mass) = run(Projection::Mass);
            assert_eq!(ff_step.projections_factored, 0, "{root:?}");
            assert!(
                ff_mass.projections_factored * 20 <= steps,
                "{root:?}: {} of {steps} projections factored in the mass metric",
                ff_mass.projections_factored
            );
            if root == RootMode::Pinned {
                for (what, ff) in [("step", &ff_step), ("mass", &ff_mass)] {
                    let landing = ff.max_landing_error;
                    assert!(landing < 1e-8, "{what}: lands {landing:e} from u*");
                }
                assert!(
                    rms_step < 1e-4,
                    "pinned, step metric: RMS {rms_step:e}° (mixed metrics: ~5e-3°)"
                );
            }
            assert!(
                rms_step < rms_mass,
                "{root:?}: RMS {rms_step:e}° in the step's metric, {rms_mass:e}° in the mass metric"
            );
            // both keep the joints together (thesis figure: < 0.01 mm)
            for (what, d) in [("step", drift_step), ("mass", drift_mass)] {
                assert!(d < 1e-7, "{root:?}, {what}: joint separation {d:e} m");
            }
        }
    }
}
