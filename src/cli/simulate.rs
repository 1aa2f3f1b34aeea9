//! `jostle simulate`: run a clip under physics with no balls and report how closely the
//! simulated character tracks its mocap.

use super::LoadArgs;
use clap::{Args, ValueEnum};
use jostle::Character;
use jostle::dynamics::control::Gains;
use jostle::dynamics::stabilize::Drift;
use jostle::sim::balance::FallOptions;
use jostle::sim::{RootMode, SimOptions, Simulation, SpringTuning};
use serde_json::json;
use std::path::PathBuf;

/// Constraint-drift control (METHOD §10).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DriftArg {
    /// No correction (drift grows).
    None,
    /// Baumgarte feedback J u⁺ = −β g (see --beta).
    Baumgarte,
    /// Projection after every step (default).
    Post,
    /// Hong, Welch & Choi's improved implicit scheme.
    Improved,
}

/// How the root (pelvis) is held.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum RootArg {
    /// Pinned to its mocap path by hard constraints (the thesis): trunk hits barely show.
    Pinned,
    /// Held to its mocap path by a critically damped spring (see --root-hz): a push moves
    /// the pelvis. With --ground the feet stand on the floor; without, the whole figure
    /// sways.
    Spring,
}

/// Arguments shared by the commands that simulate.
#[derive(Args, Debug, Clone)]
pub struct SimArgs {
    /// Simulation step, s (1/240 by default; 1/120 is also stable at the default gains).
    #[arg(long, default_value_t = 1.0 / 240.0)]
    pub step: f64,
    /// Constraint-drift control.
    #[arg(long, value_enum, default_value_t = DriftArg::Post)]
    pub drift: DriftArg,
    /// Baumgarte β, 1/s (with --drift baumgarte).
    #[arg(long, default_value_t = 200.0)]
    pub beta: f64,
    /// Feedback stiffness per N·m of feedforward torque, 1/rad.
    #[arg(long, default_value_t = Gains::default().k_s)]
    pub k_s: f64,
    /// Feedback stiffness floor, N·m/rad.
    #[arg(long, default_value_t = Gains::default().k_0)]
    pub k_0: f64,
    /// Stiffness floor per N·m/rad of the carried subtree's gravitational stiffness m·g·l.
    #[arg(long, default_value_t = Gains::default().k_g)]
    pub k_g: f64,
    /// Feedback damping time constant, s (k_d = this × stiffness).
    #[arg(long, default_value_t = Gains::default().damping_time)]
    pub damping_time: f64,
    /// Run without the PD feedback (feedforward only).
    #[arg(long)]
    pub no_feedback: bool,
    /// Run without the feedforward torques (feedback only).
    #[arg(long)]
    pub no_feedforward: bool,
    /// How the root (pelvis) is held: by a `spring` toward its mocap path (a push moves the
    /// whole figure; standing on the floor unless --no-ground), or `pinned` to it (the
    /// thesis: trunk and pelvis hits barely show, nobody falls).
    #[arg(long, value_enum, default_value_t = RootArg::Spring)]
    pub root: RootArg,
    /// Natural frequency of the root spring's translation, Hz (stiffness = mass × ω²,
    /// critically damped); rotation uses twice this frequency with the figure's inertia.
    #[arg(long, default_value_t = SpringTuning::default().linear_hz)]
    pub root_hz: f64,
    /// With --root spring, the character stands on the floor by default: the feet carry
    /// the weight the mocap implies (floor forces split from the root's support by the
    /// inverse dynamics), every body stays above the floor, and the root spring keeps only
    /// the residual; the joints from the feet up get feedback stiff enough to hold the
    /// figure above them. Unperturbed runs follow the mocap to 0.0002–0.03° RMS; a push
    /// sways the figure on planted feet, and a hit it cannot absorb without a step knocks
    /// it down (see --no-falls). --no-ground leaves the floor out: the root spring then
    /// carries the whole weight and the figure sways in the air.
    #[arg(long)]
    pub no_ground: bool,
    /// Keep the character up whatever hits it. By default, standing on the floor, it lets go
    /// of the mocap and falls when a hit moves its extrapolated centre of mass more than
    /// 10 cm from the mocap's, or the root spring pulls with more than half its weight,
    /// for 50 ms, within 1 s of a ball's last contact.
    #[arg(long)]
    pub no_falls: bool,
}

impl SimArgs {
    /// Library options from the flags.
    pub fn options(&self) -> anyhow::Result<SimOptions> {
        anyhow::ensure!(
            self.step.is_finite() && self.step > 0.0 && self.step <= 0.05,
            "--step must be in (0, 0.05] s, got {}",
            self.step
        );
        for (name, v) in [
            ("--k-s", self.k_s),
            ("--k-0", self.k_0),
            ("--k-g", self.k_g),
            ("--damping-time", self.damping_time),
            ("--beta", self.beta),
        ] {
            anyhow::ensure!(
                v.is_finite() && v >= 0.0,
                "{name} must be a non-negative number, got {v}"
            );
        }

        Ok(SimOptions {
            step: self.step,
            gains: Gains {
                k_s: self.k_s,
                k_0: self.k_0,
                damping_time: self.damping_time,
                k_g: self.k_g,
            },
            drift: match self.drift {
                DriftArg::None => Drift::None,
                DriftArg::Baumgarte => Drift::Baumgarte { beta: self.beta },
                DriftArg::Post => Drift::PostStabilization,
                DriftArg::Improved => Drift::ImprovedImplicit,
            },
            feedforward: !self.no_feedforward,
            feedback: !self.no_feedback,
            ground: !self.no_ground && self.root == RootArg::Spring,
            falls: FallOptions {
                allowed: !self.no_falls,
                ..FallOptions::default()
            },
            root: match self.root {
                RootArg::Pinned => RootMode::Pinned,
                RootArg::Spring => {
                    let tuning = SpringTuning {
                        linear_hz: self.root_hz,
                        angular_hz: 2.0 * self.root_hz,
                        ..SpringTuning::default()
                    };
                    tuning
                        .validate()
                        .map_err(|e| anyhow::anyhow!("--root-hz: {e}"))?;
                    RootMode::Spring(tuning)
                }
            },
        })
    }
}

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
    let c = Character::load(&a.clip, &a.load.options()?)?;
    let t0 = std::time::Instant::now();
    let mut sim = Simulation::new(&c, opts)?;
    // `simulate` times and checks the step itself: every step is computed, none copied
    // from the feedforward's path (which an untouched run would repeat bit for bit).
    sim.replay_unperturbed = false;
    let precompute = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    sim.run()?;
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
        "fell": sim.fall_time().is_some(),
        "fall_time_s": sim.fall_time(),
        "contact_fallback_steps": rec.contacts.iter().filter(|c| c.fallback).count(),
        "feedforward": {"max_landing_error": sim.feedforward.max_landing_error},
        "floor_height_m": split.floor_height_m,
        "hand_of_god_rms_pct_bw": split.hand_of_god_rms_pct_bw,
        "residual_force_rms_pct_bw": split.residual_force_rms_pct_bw,
        "residual_torque_rms_nm": split.residual_torque_rms_nm,
        "timing": {
            "us_per_step": wall * 1e6 / steps.max(1) as f64,
            "simulate_s": wall,
            "feedforward_s": precompute,
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
