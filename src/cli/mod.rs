//! clap commands. Errors are reported with their full context chain, exit code 1.

mod batch;
mod info;
mod inverse;
mod perturb;
mod simulate;
#[cfg(feature = "viewer")]
mod view;

use clap::{Args, Parser, Subcommand, ValueEnum};
use jostle::character::CharacterOptions;
use jostle::export::gltf::GltfLayout;
use jostle::motion::reference::ReferenceOptions;
use jostle::skeleton::{FrameOptions, ModelOptions, SkeletonSpec};
use std::path::PathBuf;

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

/// How the .glb lays out the figure (`--gltf-layout`).
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum GltfLayoutArg {
    /// One armature: the clip joints are a skin, the capsules a skinned mesh (Blender
    /// imports one armature with both animations as its actions; three.js a SkinnedMesh).
    #[default]
    Skinned,
    /// Plain nodes: a mesh node per body under its joint node, no skin (the layout of
    /// earlier versions).
    Nodes,
}

impl From<GltfLayoutArg> for GltfLayout {
    fn from(a: GltfLayoutArg) -> Self {
        match a {
            GltfLayoutArg::Skinned => GltfLayout::Skinned,
            GltfLayoutArg::Nodes => GltfLayout::Nodes,
        }
    }
}

/// Options shared by every command that loads a clip.
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// Metres per file unit (default: detected from the figure's stature).
    #[arg(long, conflicts_with = "height")]
    pub scale: Option<f64>,
    /// Rescale the figure to this stature, m (like --scale, in metres of stature).
    // Hyphen values reach the range check, whose message names the option.
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub height: Option<f64>,
    /// Total body mass, kg (default: a body-mass index of 23 kg/m² × stature²); the
    /// segments get their shares of it from de Leva's table.
    #[arg(long, value_name = "KG", allow_hyphen_values = true)]
    pub mass: Option<f64>,
    /// Keep a leading T-pose frame (dropped by default when detected).
    #[arg(long)]
    pub keep_first_frame: bool,
    /// Skeleton spec TOML (default: a built-in spec chosen by joint names).
    #[arg(long, value_name = "SPEC.toml")]
    pub skeleton: Option<PathBuf>,
    /// Low-pass cut-off of the reference fit, Hz (Butterworth, zero phase).
    #[arg(long, default_value_t = 8.0)]
    pub cutoff: f64,
}

impl LoadArgs {
    /// Turn the flags into library options, reading the spec file if one is given.
    pub fn options(&self) -> anyhow::Result<CharacterOptions> {
        if let Some(s) = self.scale {
            anyhow::ensure!(
                s.is_finite() && s > 0.0,
                "--scale must be a positive number of metres per file unit, got {s}"
            );
        }
        if let Some(h) = self.height {
            anyhow::ensure!(
                h.is_finite() && h > 0.0,
                "--height must be a positive stature in metres, got {h}"
            );
        }
        if let Some(m) = self.mass {
            anyhow::ensure!(
                m.is_finite() && m > 0.0,
                "--mass must be a positive body mass in kilograms, got {m}"
            );
        }
        anyhow::ensure!(
            self.cutoff > 0.0,
            "--cutoff must be positive (Hz), got {}",
            self.cutoff
        );
        let spec = match &self.skeleton {
            None => None,
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
                Some(SkeletonSpec::from_toml(&text, &p.display().to_string())?)
            }
        };
        Ok(CharacterOptions {
            model: ModelOptions {
                frames: FrameOptions {
                    scale: self.scale,
                    height_m: self.height,
                    keep_first_frame: self.keep_first_frame,
                },
                spec,
                mass_kg: self.mass,
            },
            reference: ReferenceOptions {
                cutoff_hz: self.cutoff,
            },
        })
    }
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
