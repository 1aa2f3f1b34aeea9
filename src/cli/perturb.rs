//! `jostle perturb`: throw balls at a clip's character, simulate, export glTF/BVH and the
//! metrics JSON.

use super::simulate::SimArgs;
use super::{GltfLayoutArg, LoadArgs, write_output, write_output_bytes};
use clap::Args;
use jostle::Character;
use jostle::batch::job::{Outputs, metrics_json, run_variations_with, timing_json};
use jostle::sim::metrics::{RECOVERY_WINDOW_S, Recovery};
use jostle::sim::random_throws::random_scenario;
use jostle::sim::scenario::{BallSpec, Scenario};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `jostle perturb`.
#[derive(Args, Debug)]
pub struct PerturbArgs {
    /// The BVH clip.
    pub clip: PathBuf,
    /// A ball: `t=1.2,target=right_forearm,speed=12[,from=x,y,z][,mass=0.45][,radius=0.095]`
    /// (aimed at the target body's centre, arriving at t; launched 3 m in front of the
    /// figure by default), or `t=…,from=x,y,z,velocity=vx,vy,vz` (launched at t).
    /// Targets: the clip's joint names or head, chest, pelvis, left_/right_ + upper_arm,
    /// forearm, hand, thigh, shin, foot. Repeatable.
    #[arg(long = "ball", value_name = "SPEC")]
    pub balls: Vec<String>,
    /// A scenario file (TOML, `[[ball]]` tables with the same keys as --ball).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Add N random throws (deterministic for a given --seed).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub random_balls: usize,
    /// Seed of the random throws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output glTF binary (.glb) with the "perturbed" and "original" animations.
    #[arg(long, value_name = "FILE.glb")]
    pub out: PathBuf,
    /// Layout of the .glb: `skinned` (one armature: the joints a skin, the capsules a
    /// skinned mesh) or `nodes` (a plain node tree, no skin).
    #[arg(long, value_enum, value_name = "LAYOUT", default_value_t = GltfLayoutArg::Skinned)]
    pub gltf_layout: GltfLayoutArg,
    /// Also write the perturbed motion as BVH in the input's hierarchy and channel orders.
    #[arg(long, value_name = "FILE.bvh")]
    pub bvh: Option<PathBuf>,
    /// Also write the run's dataset arrays as NumPy .npz: the perturbed and original motion
    /// per frame and joint, the balls, hits, contacts and deviation (see the README's
    /// "Dataset arrays").
    #[arg(long, value_name = "FILE.npz")]
    pub npz: Option<PathBuf>,
    /// Simulate from the clip's first frame. By default the run starts at the last half
    /// second at least 0.25 s before the first ball is launched, and the frames before
    /// are the mocap (which the unperturbed simulation tracks to ~1e-4°): the time before
    /// the first ball costs nothing. `timing.start_s` in the metrics says where the run
    /// started. With --npz every frame is simulated (the arrays' contact labels come from
    /// the run).
    #[arg(long)]
    pub from_clip_start: bool,
    /// Write the metrics JSON here (also printed with --json).
    #[arg(long, value_name = "FILE.json")]
    pub metrics: Option<PathBuf>,
    /// Print the metrics JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sim: SimArgs,
    #[command(flatten)]
    pub load: LoadArgs,
}

/// The throws of a scenario file (if any) followed by those of `--ball` flags.
pub fn scenario_from(file: Option<&std::path::Path>, flags: &[String]) -> anyhow::Result<Scenario> {
    let mut scenario = match file {
        Some(p) => Scenario::load(p)?,
        None => Scenario::default(),
    };
    for f in flags {
        scenario.balls.push(BallSpec::from_flag(f)?);
    }
    Ok(scenario)
}

/// The scenario of a run: file, flags and random throws together.
pub fn collect_scenario(a: &PerturbArgs, c: &Character) -> anyhow::Result<Scenario> {
    let mut scenario = scenario_from(a.scenario.as_deref(), &a.balls)?;
    if a.random_balls > 0 {
        scenario
            .balls
            .extend(random_scenario(&c.model, c.reference.duration, a.random_balls, a.seed).balls);
    }
    Ok(scenario)
}

/// Run `jostle perturb`.
pub fn run(a: &PerturbArgs) -> anyhow::Result<()> {
    let opts = a.sim.options()?;
    let t_load = Instant::now();
    let c = super::load_character(&a.clip, &a.load)?;
    let scenario = collect_scenario(a, &c)?;
    let load_s = t_load.elapsed().as_secs_f64();
    let label = c.path.display().to_string();
    let wanted = Outputs {
        layout: a.gltf_layout.into(),
        bvh: a.bvh.is_some(),
        npz: a.npz.is_some(),
        from_clip_start: a.from_clip_start,
        ..Outputs::default()
    };
    let (timing, mut runs) =
        run_variations_with(&c, opts, std::slice::from_ref(&scenario), &label, wanted).map_err(
            |e| match e {
                jostle::batch::job::JobError::Sim(e) => super::with_hint(e, &opts),
                e => e.into(),
            },
        )?;
    let run = runs.pop().ok_or_else(|| anyhow::anyhow!("no run"))?;
    for w in &run.aim_warnings {
        eprintln!("warning: {}: {w}", c.path.display());
    }
    write_output_bytes(&a.out, &run.glb)?;
    if let (Some(p), Some(text)) = (&a.bvh, &run.bvh) {
        write_output(p, text)?;
    }
    if let (Some(p), Some(bytes)) = (&a.npz, &run.npz) {
        write_output_bytes(p, bytes)?;
    }
    let (inverse_s, simulate_s, export_s) = (timing.inverse_s, run.simulate_s, run.export_s);
    let launches = &scenario.balls;
    let mut value = metrics_json(&c, &run.metrics)?;
    value["timing"] = timing_json(load_s, &timing, &run);
    let m = run.metrics;
    value["out"] = json!(a.out.display().to_string());
    let text = serde_json::to_string_pretty(&value)?;
    if let Some(p) = &a.metrics {
        write_output(p, &text)?;
    }
    if a.json {
        println!("{text}");
    } else {
        println!(
            "{}: {} ball(s), {} steps of {:.5} s -> {}",
            c.path.display(),
            launches.len(),
            m.steps,
            opts.step,
            a.out.display()
        );
        for (i, b) in m.balls.iter().enumerate() {
            let aimed = match &b.aimed_at {
                Some(a) if b.body.as_ref() != Some(a) => format!(" (aimed at {a})"),
                _ => String::new(),
            };
            match (&b.body, b.first_contact_s) {
                (Some(body), Some(t)) => println!(
                    "  ball {}: hit {body} at {t:.3} s, impulse {:.2} N·s{aimed}",
                    i + 1,
                    b.impulse_ns
                ),
                _ => println!("  ball {}: missed{aimed}", i + 1),
            }
        }
        println!(
            "  peak deviation {:.1}° ({} at {:.2} s)",
            m.peak_deviation_deg, m.peak_joint, m.peak_time_s
        );
        if m.contact_fallback_steps > 0 {
            println!(
                "  warning: in {} step(s) the contacts were solved without restitution and friction (the full LCP had no solution)",
                m.contact_fallback_steps
            );
        }
        let left = m.after_last_hit_s.unwrap_or(0.0);
        match m.recovery {
            Recovery::Fell => println!(
                "  knocked down: let go of the mocap at {:.2} s (root moved up to {:.2} m, tilted {:.0}°)",
                m.fall_time_s.unwrap_or(0.0),
                m.root_peak_displacement_m,
                m.root_peak_tilt_deg
            ),
            Recovery::Recovered => println!(
                "  back within 2° of the mocap {:.2} s after the last impact",
                m.recovery_time_s.unwrap_or(0.0)
            ),
            Recovery::NoHit => {
                println!("  no ball touched the character: nothing to recover from")
            }
            Recovery::ClipEnded => println!(
                "  the clip ends {left:.2} s after the last impact, before every joint is back within 2° of the mocap: too soon to tell (recoveries are judged over {RECOVERY_WINDOW_S:.0} s)"
            ),
            Recovery::NotRecovered => println!(
                "  not back within 2° of the mocap by the end of the clip, {left:.2} s after the last impact"
            ),
        }
        println!(
            "  timing: inverse {inverse_s:.2} s, simulate {simulate_s:.2} s ({:.1} µs/step), export {export_s:.3} s",
            simulate_s * 1e6 / m.steps.max(1) as f64
        );
    }
    Ok(())
}
