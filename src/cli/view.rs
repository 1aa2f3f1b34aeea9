//! `jostle view`: the interactive viewer, its headless screenshot and its benchmark.

use super::perturb::scenario_from;
use super::simulate::SimArgs;
use super::{LoadArgs, write_output_bytes};
use clap::Args;
use jostle::sim::scenario::BallSpec;
use jostle::viewer::headless::{bench, screenshot};
use jostle::viewer::playback::{Playback, Throw};
use jostle::viewer::{ViewerOptions, run_window};
use std::path::PathBuf;

/// Arguments of `jostle view`.
#[derive(Args, Debug)]
pub struct ViewArgs {
    /// The BVH clip.
    pub clip: PathBuf,
    /// Pre-load a throw (same SPEC as `perturb --ball`). Repeatable.
    #[arg(long = "ball", value_name = "SPEC")]
    pub balls: Vec<String>,
    /// Pre-load the throws of a scenario file (TOML `[[ball]]` tables).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Playback speed, × real time (0.1..2).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Start with the mocap ghost hidden (G toggles it).
    #[arg(long)]
    pub no_ghost: bool,
    /// Hide the text overlay.
    #[arg(long)]
    pub no_hud: bool,
    /// No shadows (software rendering draws about a third faster).
    #[arg(long)]
    pub no_shadows: bool,
    /// Wait for vertical sync (off by default: software rendering is slow enough).
    #[arg(long)]
    pub vsync: bool,
    /// Samples per pixel: 1 (default, fastest in software) or 4.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub msaa: u32,
    /// Window or image size in pixels, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH", default_value = "800x600")]
    pub size: String,
    /// Render one frame with no window (no display needed) to this PNG, then exit.
    #[arg(long, value_name = "OUT.png", requires = "at")]
    pub screenshot: Option<PathBuf>,
    /// Time of the --screenshot frame, s.
    #[arg(long, value_name = "SECONDS")]
    pub at: Option<f64>,
    /// Where S saves the session's throws (default: CLIP-STEM.scenario.toml here).
    #[arg(long, value_name = "FILE")]
    pub save_scenario: Option<PathBuf>,
    /// Headless: play the whole clip (with the given throws, or one at the chest halfway
    /// through) and print the viewer's work per displayed frame and the render rate.
    #[arg(long, conflicts_with = "screenshot")]
    pub bench: bool,
    /// With --bench: print JSON.
    #[arg(long, requires = "bench")]
    pub json: bool,
    #[command(flatten)]
    pub sim: SimArgs,
    #[command(flatten)]
    pub load: LoadArgs,
}

fn parse_size(s: &str) -> anyhow::Result<(u32, u32)> {
    let parsed = s
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
    parsed.ok_or_else(|| anyhow::anyhow!("--size `{s}`: expected WIDTHxHEIGHT, e.g. 800x600"))
}

/// Run `jostle view`.
pub fn run(a: &ViewArgs) -> anyhow::Result<()> {
    quiet_wayland_probe();
    let sim_opts = a.sim.options()?;
    let (width, height) = parse_size(&a.size)?;
    let stem = a
        .clip
        .file_stem()
        .map_or("session".into(), |s| s.to_string_lossy().into_owned());
    let opts = ViewerOptions {
        width,
        height,
        vsync: a.vsync,
        msaa: a.msaa,
        ghost: !a.no_ghost,
        speed: a.speed,
        hud: !a.no_hud,
        shadows: !a.no_shadows,
        scenario_path: a
            .save_scenario
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("{stem}.scenario.toml"))),
    };
    opts.validate()?;
    let mut scenario = scenario_from(a.scenario.as_deref(), &a.balls)?;
    let c = super::load_character(&a.clip, &a.load)?;
    if a.bench && scenario.balls.is_empty() {
        scenario.balls.push(BallSpec::from_flag(&format!(
            "t={:.3},target=chest",
            c.reference.duration / 2.0
        ))?);
    }
    let launches = scenario.launches(&c.model, &c.reference, &c.path.display().to_string())?;
    let throws = scenario
        .balls
        .into_iter()
        .zip(launches)
        .map(|(spec, launch)| Throw { spec, launch })
        .collect();
    let playback = Playback::new(&c, sim_opts, throws)?;
    if let Some(out) = &a.screenshot {
        let at = a.at.unwrap_or(0.0);
        let png = screenshot(playback, &opts, at)?;
        write_output_bytes(out, &png)?;
        println!(
            "{}: frame at {at} s ({width}x{height}) -> {}",
            c.path.display(),
            out.display()
        );
    } else if a.bench {
        let r = bench(playback, &opts)?;
        if a.json {
            println!("{}", serde_json::to_string_pretty(&r)?);
        } else {
            println!(
                "{}: {} frames at 60 fps of clip time, {} steps\n  viewer work per frame: mean {:.3} ms, p95 {:.3} ms, max {:.3} ms\n  offscreen render {}x{}: {:.1} fps (1 sample), {:.1} fps (4x MSAA)",
                c.path.display(),
                r.frames,
                r.steps,
                r.mean_ms,
                r.p95_ms,
                r.max_ms,
                width,
                height,
                r.render_fps_1x,
                r.render_fps_4x
            );
        }
    } else {
        run_window(playback, &opts)?;
    }
    Ok(())
}

/// wgpu probes every backend; without `XDG_RUNTIME_DIR` (CI, ssh, cron, Xvfb) Mesa's
/// Wayland probe prints "error: XDG_RUNTIME_DIR is invalid or not set" although nothing is
/// wrong. Point the variable at a private directory (0700, ours) so the output stays clean.
fn quiet_wayland_probe() {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    if std::env::var_os("XDG_RUNTIME_DIR").is_some() {
        return;
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = std::env::temp_dir().join(format!("jostle-runtime-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let private = std::fs::symlink_metadata(&dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o077 == 0);
    if private {
        // SAFETY: `view` calls this first, before any thread exists (the batch command's
        // signal handler and rayon pool are not started on this path).
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    }
}
