//! One clip through the whole pipeline: the character's feedforward is computed once and
//! shared by every variation (a variation = one scenario of throws), each variation is
//! simulated and exported to bytes. Used by `jostle perturb` (one variation) and by the
//! batch runner (N variations per clip), so both produce the same bytes for the same inputs.

use crate::Character;
use crate::export::bvh::character_clip_with_trajectory;
use crate::export::gltf::{GltfError, GltfLayout, character_glb_bytes};
use crate::export::npz::{DatasetArrays, dataset_arrays, npz_bytes};
use crate::mocap::write_bvh_string;
use crate::sim::balls::Ball;
use crate::sim::metrics::{PerturbMetrics, perturb_metrics};
use crate::sim::scenario::{Launch, Scenario, ScenarioError};
use crate::sim::{Precompute, SimError, SimOptions, Simulation};
use serde_json::json;
use std::time::Instant;

/// Rate of the deviation series kept for plots, Hz.
pub const DEVIATION_SERIES_HZ: f64 = 20.0;

/// Why a clip's job failed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// Loading the clip (parse, model, reference fit).
    #[error(transparent)]
    Character(#[from] crate::CharacterError),
    /// A scenario that does not fit this clip (unknown target, bad launch).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The simulation blew up or the contact solver failed.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// glTF export.
    #[error("{path}: glTF export: {source}")]
    Gltf {
        /// The clip.
        path: String,
        /// Cause.
        source: GltfError,
    },
    /// Dataset arrays export.
    #[error("{path}: .npz export: {source}")]
    Npz {
        /// The clip.
        path: String,
        /// Cause.
        source: crate::export::npz::NpzError,
    },
}

/// What one variation produced.
#[derive(Clone, Debug)]
pub struct VariationOutput {
    /// The throws that were simulated.
    pub scenario: Scenario,
    /// The .glb bytes ("perturbed" and "original" animations).
    pub glb: Vec<u8>,
    /// The BVH text of the perturbed motion, when asked for.
    pub bvh: Option<String>,
    /// The dataset arrays (`.npz` bytes, see [`crate::export::npz`]), when asked for.
    pub npz: Option<Vec<u8>>,
    /// The dataset arrays themselves, when asked for ([`Outputs::arrays`]).
    pub arrays: Option<DatasetArrays>,
    /// The run's metrics.
    pub metrics: PerturbMetrics,
    /// Largest joint deviation from the reference (degrees), max over bins of
    /// 1/[`DEVIATION_SERIES_HZ`] s, rounded to 0.001°.
    pub deviation_series_deg: Vec<f64>,
    /// Wall time of the simulation, s.
    pub simulate_s: f64,
    /// Where the run started, s (see [`Outputs::from_clip_start`]).
    pub start_s: f64,
    /// Steps the run took (computed or replayed), from its start on.
    pub run_steps: usize,
    /// Steps copied from the feedforward's unperturbed path instead of computed
    /// ([`crate::sim::replay`]): those before the first ball is in the air.
    pub replayed_steps: usize,
    /// Wall time of the export, s.
    pub export_s: f64,
    /// Throws predicted to meet another body than their target (`ball N (t = … s): …`).
    pub aim_warnings: Vec<String>,
}

/// Wall times of the shared part of a job, s.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobTiming {
    /// Feedforward precompute (discrete-time inverse dynamics), s.
    pub inverse_s: f64,
    /// Where the shared feedforward precompute started, s (see
    /// [`Outputs::from_clip_start`]).
    pub start_s: f64,
    /// Steps the feedforward precompute computed (from the start on).
    pub feedforward_steps: usize,
}

/// Simulate and export every scenario on one character. The feedforward is computed once;
/// each variation starts from t = 0 with only its own balls, so its result does not depend
/// on the other variations. `clip_label` goes into the glTF extras (a relative path keeps
/// batch outputs independent of where the library sits). The .glb is skinned (the
/// default [`GltfLayout`]); `want_bvh` also writes the BVH text.
pub fn run_variations(
    character: &Character,
    opts: SimOptions,
    scenarios: &[Scenario],
    clip_label: &str,
    want_bvh: bool,
) -> Result<(JobTiming, Vec<VariationOutput>), JobError> {
    let outputs = Outputs {
        bvh: want_bvh,
        ..Outputs::default()
    };
    run_variations_with(character, opts, scenarios, clip_label, outputs)
}

/// Which outputs a variation writes, and how.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outputs {
    /// The .glb's layout (a skinned armature by default).
    pub layout: GltfLayout,
    /// The perturbed motion as BVH.
    pub bvh: bool,
    /// The dataset arrays as `.npz`.
    pub npz: bool,
    /// The dataset arrays as arrays (what the `.npz` would hold, not encoded).
    pub arrays: bool,
    /// Simulate every variation from the clip's first frame. By default each variation's
    /// run starts at the last multiple of [`RESTART_EVERY_S`] at least [`START_LEAD_S`]
    /// before its first ball's launch, from the reference's state there: nothing earlier
    /// can differ from the unperturbed run, which tracks the reference to ~1e-4°, so the
    /// frames before are the reference's, and the shared feedforward is computed from the
    /// earliest variation's start on. Its unperturbed path restarts from the reference
    /// at each multiple ([`Feedforward::restart_steps`](crate::sim::Feedforward::restart_steps)),
    /// so a variation's output is what a job of its own would give, to the bit. With the
    /// dataset arrays (`npz`, `arrays`) every frame is simulated: their contact labels
    /// come from the run.
    pub from_clip_start: bool,
}

/// The grid of the runs' starts and of the feedforward's restarts, s (see
/// [`Outputs::from_clip_start`]): finer saves more of a clip before its first ball, and
/// restarts the unperturbed path more often.
pub const RESTART_EVERY_S: f64 = 0.5;

/// How long before the first ball's launch a run starts at the latest, s (see
/// [`Outputs::from_clip_start`]): unperturbed steps replayed before the ball is in the
/// air.
pub const START_LEAD_S: f64 = 0.25;

/// Where a run with the balls of `launches` may start, s: [`START_LEAD_S`] before the
/// earliest launch, not before the clip's start; 0 with no ball at all. (The simulation
/// rounds it down to its grid of restarts.)
pub fn run_start_s(launches: &[Launch]) -> f64 {
    first_launch_s(launches).map_or(0.0, |t| (t - START_LEAD_S).max(0.0))
}

/// The earliest launch of `launches`, s; `None` with no ball.
fn first_launch_s(launches: &[Launch]) -> Option<f64> {
    launches.iter().map(|l| l.t).reduce(f64::min)
}

/// [`run_variations`] with the `outputs` chosen.
pub fn run_variations_with(
    character: &Character,
    opts: SimOptions,
    scenarios: &[Scenario],
    clip_label: &str,
    outputs: Outputs,
) -> Result<(JobTiming, Vec<VariationOutput>), JobError> {
    run_variations_cancellable(character, opts, scenarios, clip_label, outputs, &mut || {
        false
    })
}

/// [`run_variations_with`] that asks `cancelled` every few steps of the feedforward
/// precompute and of each simulation (a Python caller checks for Ctrl-C there) and stops
/// with [`SimError::Cancelled`] when it says so.
pub fn run_variations_cancellable(
    character: &Character,
    opts: SimOptions,
    scenarios: &[Scenario],
    clip_label: &str,
    outputs: Outputs,
    cancelled: &mut dyn FnMut() -> bool,
) -> Result<(JobTiming, Vec<VariationOutput>), JobError> {
    let path = character.path.display().to_string();
    // Resolve every throw first: a bad target fails before the feedforward precompute.
    let launches = scenarios
        .iter()
        .map(|s| s.launches(&character.model, &character.reference, &path))
        .collect::<Result<Vec<_>, _>>()?;
    // each variation's own start; the shared precompute from the earliest. The dataset
    // arrays need every frame simulated: their contact labels (the feet on the floor)
    // come from the run, which records none before its start.
    let from_clip_start = outputs.from_clip_start || outputs.npz || outputs.arrays;
    let starts: Vec<f64> = launches
        .iter()
        .map(|l| if from_clip_start { 0.0 } else { run_start_s(l) })
        .collect();
    let first_start = starts.iter().copied().reduce(f64::min).unwrap_or(0.0);
    let restart_every_s = if from_clip_start {
        0.0
    } else {
        RESTART_EVERY_S
    };
    let t_inv = Instant::now();
    // each run replays the unperturbed path from its start to its first launch
    let replay_windows = starts
        .iter()
        .zip(&launches)
        .map(|(&start, l)| (start, first_launch_s(l).unwrap_or(f64::INFINITY).max(start)))
        .collect();
    let precompute = Precompute {
        start_s: first_start,
        restart_every_s,
        replay_windows: Some(replay_windows),
    };
    let mut sim = Simulation::new_from_cancellable(character, opts, &precompute, &mut *cancelled)?;
    // the outputs read the poses at the clip's frames only
    sim.keep_frame_poses_only();
    let timing = JobTiming {
        inverse_s: t_inv.elapsed().as_secs_f64(),
        start_s: sim.feedforward.first_step as f64 * opts.step,
        feedforward_steps: sim.feedforward.computed_steps(),
    };
    let wanted = outputs;
    let mut outputs = Vec::with_capacity(scenarios.len());
    for ((scenario, launches), start_s) in scenarios.iter().zip(&launches).zip(&starts) {
        sim.balls.clear();
        sim.reset_from(*start_s);
        for l in launches {
            sim.throw(Ball::from_launch(l));
        }
        let t_sim = Instant::now();
        sim.run_cancellable(&mut *cancelled)?;
        let simulate_s = t_sim.elapsed().as_secs_f64();
        let replayed_steps = sim.replayed_steps;
        let run_steps = sim.num_steps() - sim.start_step;
        let run_start_s = sim.start_step as f64 * opts.step;
        let t_exp = Instant::now();
        let traj = sim.trajectory();
        let extras = json!({
            "tool": format!("jostle {}", env!("CARGO_PKG_VERSION")),
            "clip": clip_label,
            "scenario": scenario.to_toml(),
            "step_s": opts.step,
        });
        let (glb, _) =
            character_glb_bytes(character, &traj, &extras, wanted.layout).map_err(|source| {
                JobError::Gltf {
                    path: path.clone(),
                    source,
                }
            })?;
        let bvh = wanted
            .bvh
            .then(|| write_bvh_string(&character_clip_with_trajectory(character, Some(&traj))));
        let metrics = perturb_metrics(&sim);
        let npz_error = |source| JobError::Npz {
            path: path.clone(),
            source,
        };
        let arrays = if wanted.npz || wanted.arrays {
            Some(dataset_arrays(&sim, &traj, &metrics).map_err(npz_error)?)
        } else {
            None
        };
        let npz = match (&arrays, wanted.npz) {
            (Some(a), true) => Some(npz_bytes(a).map_err(npz_error)?),
            _ => None,
        };
        let arrays = arrays.filter(|_| wanted.arrays);
        let export_s = t_exp.elapsed().as_secs_f64();
        outputs.push(VariationOutput {
            scenario: scenario.clone(),
            glb,
            bvh,
            npz,
            arrays,
            metrics,
            deviation_series_deg: deviation_series(&sim),
            simulate_s,
            start_s: run_start_s,
            run_steps,
            replayed_steps,
            export_s,
            aim_warnings: scenario
                .balls
                .iter()
                .zip(launches)
                .enumerate()
                .filter_map(|(i, (b, l))| {
                    let w = l.aim_warning(&character.model)?;
                    Some(format!("ball {} (t = {} s): {w}", i + 1, b.t))
                })
                .collect(),
        });
    }
    Ok((timing, outputs))
}

/// The metrics JSON of a `perturb` run on `character`: the [`PerturbMetrics`] plus the
/// clip, the figure's `mass_kg` and `height_m` (the command line adds its `timing` and `out`).
pub fn metrics_json(
    character: &Character,
    metrics: &PerturbMetrics,
) -> Result<serde_json::Value, serde_json::Error> {
    let mut value = serde_json::to_value(metrics)?;
    value["clip"] = json!(character.path.display().to_string());
    value["mass_kg"] = json!(character.model.total_mass());
    value["height_m"] = json!(character.model.figure.height_m);
    Ok(value)
}

/// The `timing` object of a `perturb` run's metrics JSON (wall times, s): loading the
/// clip `load_s`, the feedforward precompute `inverse_s` (and per step it computed,
/// `feedforward_us_per_step`, µs), the run's simulation and export, µs per step the run
/// took (`us_per_step`), where the run started (`start_s`; the frames before are the
/// reference's, see [`Outputs::from_clip_start`]), the steps it took and those replayed
/// from the unperturbed path ([`crate::sim::replay`]).
pub fn timing_json(load_s: f64, job: &JobTiming, run: &VariationOutput) -> serde_json::Value {
    json!({
        "load_s": load_s,
        "inverse_s": job.inverse_s,
        "simulate_s": run.simulate_s,
        "export_s": run.export_s,
        "us_per_step": run.simulate_s * 1e6 / run.run_steps.max(1) as f64,
        "feedforward_us_per_step": job.inverse_s * 1e6 / job.feedforward_steps.max(1) as f64,
        "start_s": run.start_s,
        "run_steps": run.run_steps,
        "replayed_steps": run.replayed_steps,
    })
}

/// The run's per-step largest joint deviation, reduced to the max over
/// 1/[`DEVIATION_SERIES_HZ`] s bins (what a plot needs, a few kB per minute of clip).
fn deviation_series(sim: &Simulation) -> Vec<f64> {
    let rec = &sim.record;
    let bin = 1.0 / DEVIATION_SERIES_HZ;
    let mut out: Vec<f64> = vec![];
    for (t, (deg, _)) in rec.times.iter().zip(&rec.max_error_deg) {
        let i = ((t - 1e-9) / bin).floor().max(0.0) as usize;
        if out.len() <= i {
            out.resize(i + 1, 0.0);
        }
        out[i] = out[i].max(*deg);
    }
    out.iter().map(|x| (x * 1000.0).round() / 1000.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::scenario::BallSpec;

    fn demo() -> Character {
        let p = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/mocap/demo_walk.bvh"));
        Character::load(p, &Default::default()).expect("demo clip loads")
    }

    #[test]
    fn variations_do_not_depend_on_each_other() {
        let c = demo();
        let a = Scenario {
            balls: vec![BallSpec::from_flag("t=1.0,target=left_forearm,speed=14").unwrap()],
        };
        let b = Scenario {
            balls: vec![BallSpec::from_flag("t=1.5,target=right_forearm,speed=12").unwrap()],
        };
        let opts = SimOptions::default();
        let (_, both) = run_variations(&c, opts, &[a, b.clone()], "demo", true).unwrap();
        let (_, alone) = run_variations(&c, opts, &[b], "demo", true).unwrap();
        assert!(both[0].metrics.balls[0].hit && both[1].metrics.balls[0].hit);
        assert_eq!(
            both[1].glb, alone[0].glb,
            "second variation differs from a fresh run"
        );
        assert_eq!(both[1].bvh, alone[0].bvh);
        assert_eq!(both[1].metrics, alone[0].metrics);
        assert_ne!(both[0].glb, both[1].glb);
    }

    #[test]
    fn deviation_series_is_binned_max() {
        let c = demo();
        let b = Scenario {
            balls: vec![BallSpec::from_flag("t=1.5,target=right_forearm,speed=12").unwrap()],
        };
        let (_, out) = run_variations(&c, SimOptions::default(), &[b], "demo", false).unwrap();
        let v = &out[0];
        let expected_bins = (c.reference.duration * DEVIATION_SERIES_HZ).ceil() as usize;
        assert!(v.deviation_series_deg.len().abs_diff(expected_bins) <= 1);
        let peak = v.deviation_series_deg.iter().cloned().fold(0.0, f64::max);
        assert!((peak - v.metrics.peak_deviation_deg).abs() < 1e-3);
        // The peak bin lies at the peak time.
        let i = v
            .deviation_series_deg
            .iter()
            .position(|&x| x == peak)
            .unwrap();
        let bin = 1.0 / DEVIATION_SERIES_HZ;
        assert!(
            (i as f64 * bin - 1e-9..=(i + 1) as f64 * bin + 1e-9).contains(&v.metrics.peak_time_s)
        );
    }
}
