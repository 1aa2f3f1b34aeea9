//! `jostle simulate`: run a clip under physics with no balls and report how closely the
//! simulated character tracks its mocap.

use super::LoadArgs;
use clap::Args;
pub use jostle::options::SimArgs;
use jostle::sim::{Precompute, Simulation};
use serde_json::json;
use std::path::PathBuf;

/// Arguments of `jostle simulate`.
#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// The BVH clip.
    pub clip: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sim: SimArgs,
    #[command(flatten)]
    pub load: LoadArgs,
}

/// Run `jostle simulate`.
pub fn run(a: &SimulateArgs) -> anyhow::Result<()> {
    let opts = a.sim.options()?;
    let c = super::load_character(&a.clip, &a.load)?;
    let t0 = std::time::Instant::now();
    // `simulate` times and checks the step itself: every step is computed, none copied
    // from the feedforward's path (which an untouched run would repeat bit for bit), so
    // the precompute keeps none of it.
    let precompute = Precompute {
        replay_windows: Some(Vec::new()),
        ..Default::default()
    };
    let mut sim = Simulation::new_from_cancellable(&c, opts, &precompute, &mut || false)
        .map_err(|e| super::with_hint(e, &opts))?;
    sim.replay_unperturbed = false;
    sim.keep_frame_poses_only();
    let precompute = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    sim.run().map_err(|e| super::with_hint(e, &opts))?;
    let wall = t1.elapsed().as_secs_f64();
    let rec = &sim.record;
    let steps = rec.times.len();
    let rms = (rec.rms_error_deg.iter().map(|x| x * x).sum::<f64>() / steps.max(1) as f64).sqrt();
    let (kmax, max, body) = rec.peak_error();
    let cons = rec.constraint_error_m.iter().cloned().fold(0.0, f64::max) * 1e3;
    let root_offset = rec.root_offset_m.iter().cloned().fold(0.0, f64::max);
    let root_tilt = rec.root_tilt_deg.iter().cloned().fold(0.0, f64::max);
    let split = sim.feedforward.support_split;
    let summary = json!({
        "file": c.path.display().to_string(),
        "steps": steps,
        "step_s": opts.step,
        "duration_s": steps as f64 * opts.step,
        "rms_error_deg": rms,
        "max_error_deg": max,
        "max_error_joint": c.model.bodies[body].name,
        "max_error_time_s": (kmax + 1) as f64 * opts.step,
        "reference_vs_mocap_rms_deg": c.reference.mocap_rms_deg,
        "max_constraint_error_mm": cons,
        "root": if matches!(opts.root, jostle::sim::RootMode::Pinned) { "pinned" } else { "spring" },
        "root_peak_displacement_m": root_offset,
        "root_peak_tilt_deg": root_tilt,
        "max_ground_penetration_mm": rec.max_ground_penetration_m() * 1e3,
        "foot_slip_mm": rec.foot_slip_m() * 1e3,
        "loaded_foot_slip_mm": rec.loaded_foot_slip_m() * 1e3,
        "fell": sim.fall_time().is_some(),
        "fall_time_s": sim.fall_time(),
        "contact_fallback_steps": rec.contacts.iter().filter(|c| c.fallback).count(),
        "feedforward": {
            "max_landing_error": sim.feedforward.max_landing_error,
            "projections_factored": sim.feedforward.projections_factored,
        },
        "floor_height_m": split.floor_height_m,
        "hand_of_god_rms_pct_bw": split.hand_of_god_rms_pct_bw,
        "residual_force_rms_pct_bw": split.residual_force_rms_pct_bw,
        "residual_torque_rms_nm": split.residual_torque_rms_nm,
        "timing": {
            "us_per_step": wall * 1e6 / steps.max(1) as f64,
            "simulate_s": wall,
            "feedforward_s": precompute,
            "feedforward_us_per_step": precompute * 1e6 / steps.max(1) as f64,
            "realtime_factor": steps as f64 * opts.step / wall.max(1e-9),
        },
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "{}: {steps} steps of {:.5} s ({:.2} s)",
            c.path.display(),
            opts.step,
            steps as f64 * opts.step
        );
        println!(
            "  tracking error   {rms:.4}° RMS, {max:.3}° max ({} at {:.2} s)",
            c.model.bodies[body].name,
            (kmax + 1) as f64 * opts.step
        );
        println!(
            "  reference        {:.2}° RMS from the raw mocap (filter + joint projection)",
            c.reference.mocap_rms_deg
        );
        println!("  constraints      {cons:.2e} mm max joint separation");
        println!(
            "  root             {:.2} mm, {root_tilt:.3}° at most from its mocap path",
            root_offset * 1e3
        );
        println!(
            "  timing           {:.1} µs/step, {:.0}× real time (+ {precompute:.2} s feedforward)",
            wall * 1e6 / steps.max(1) as f64,
            steps as f64 * opts.step / wall.max(1e-9)
        );
    }
    Ok(())
}
