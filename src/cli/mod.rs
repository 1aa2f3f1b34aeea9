//! clap commands. Errors are reported with their full context chain, exit code 1.

mod batch;
mod info;
mod inverse;
mod perturb;
mod simulate;
#[cfg(feature = "viewer")]
mod view;

use clap::{Parser, Subcommand};
pub use jostle::options::{GltfLayoutArg, LoadArgs};

/// jostle: motion capture that reacts to physics.
///
/// Loads a BVH clip, builds a rigid-body model of the figure (stature from its bones,
/// segment masses and inertia from de Leva's anthropometric tables, capsule shapes; ball,
/// hinge and universal joints from a skeleton spec), fits a filtered C² reference motion
/// and computes the joint torques that reproduce it (inverse dynamics).
#[derive(Parser, Debug)]
#[command(name = "jostle", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise a clip and the physical model built from it.
    Info(info::InfoArgs),
    /// Compute feedforward joint torques (inverse dynamics) over a clip and write them as CSV.
    Inverse(inverse::InverseArgs),
    /// Simulate a clip under physics (no balls) and report how closely it tracks the mocap.
    Simulate(simulate::SimulateArgs),
    /// Throw balls at the character: simulate, write glTF (+ BVH) and the metrics JSON.
    Perturb(perturb::PerturbArgs),
    /// Perturbed variations of every clip in a folder tree: parallel, resumable, shardable,
    /// with summary.csv/json and an HTML report.
    Batch(batch::BatchArgs),
    /// Watch the character play its clip under physics and throw balls at it with the
    /// mouse; `--screenshot` renders one frame with no display, `--bench` times it.
    #[cfg(feature = "viewer")]
    #[command(after_help = format!("Controls (window):\n{}", jostle::viewer::input::CONTROLS))]
    View(view::ViewArgs),
    /// (Not in this build: jostle was compiled without the `viewer` feature.)
    #[cfg(not(feature = "viewer"))]
    View {
        /// Ignored.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// Load `clip` as the commands do, warning on stderr of what the user should know before
/// trusting the run (a `--scale` that made the figure taller than any person).
fn load_character(clip: &std::path::Path, load: &LoadArgs) -> anyhow::Result<jostle::Character> {
    let c = jostle::Character::load(clip, &load.options()?)?;
    if let Some(w) = jostle::skeleton::stature_warning(&c.model.figure) {
        eprintln!("warning: {}: {w}", clip.display());
    }
    Ok(c)
}

/// A simulation's error, with what to do about it when the settings explain it: a step
/// that failed (a body blew up, a non-finite state) while the figure ran open loop
/// (`--no-feedback`: only ψ holds it to its path, and any push or drift grows until a
/// light body spins away).
fn with_hint(e: jostle::sim::SimError, opts: &jostle::sim::SimOptions) -> anyhow::Error {
    if opts.feedback || !matches!(e, jostle::sim::SimError::Step { .. }) {
        return e.into();
    }
    anyhow::anyhow!(
        "{e}\nhint: --no-feedback runs the figure open loop (the feedforward torques alone): \
         a hit, or the drift of a long clip, grows until a light body spins away; without \
         --no-feedback the PD feedback holds it to its path"
    )
}

/// Parse the command line and run; print errors with their causes.
pub fn run() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(a) => info::run(&a),
        Command::Inverse(a) => inverse::run(&a),
        Command::Simulate(a) => simulate::run(&a),
        Command::Perturb(a) => perturb::run(&a),
        Command::Batch(a) => batch::run(&a),
        #[cfg(feature = "viewer")]
        Command::View(a) => view::run(&a),
        #[cfg(not(feature = "viewer"))]
        Command::View { .. } => Err(anyhow::anyhow!(
            "this jostle was built without the `viewer` feature; rebuild with `cargo build --release` (default features) or `--features viewer`"
        )),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // Our error messages already embed their causes; `{:#}` would repeat them.
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Write text atomically, naming the file in the error.
pub fn write_output(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    write_output_bytes(path, text.as_bytes())
}

/// Write bytes atomically (creating the folder), naming the file in the error.
pub fn write_output_bytes(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    }
    jostle::export::write_atomic(path, bytes)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}
