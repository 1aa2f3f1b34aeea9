//! The options of the commands that load and simulate a clip, as clap argument groups
//! shared by the `jostle` command line and the Python package (which turns its keyword
//! arguments into these flags), so both accept the same names and give the same errors.

use crate::character::CharacterOptions;
use crate::dynamics::control::Gains;
use crate::dynamics::stabilize::Drift;
use crate::export::gltf::GltfLayout;
use crate::motion::reference::ReferenceOptions;
use crate::sim::balance::FallOptions;
use crate::sim::reflex::ImpactReflex;
use crate::sim::{Projection, RootMode, SimOptions, SpringTuning};
use crate::skeleton::{FrameOptions, ModelOptions, SkeletonSpec, SpecError};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// An option the flags cannot turn into library options.
#[derive(Debug, thiserror::Error)]
pub enum OptionsError {
    /// A value out of range; the message names the flag.
    #[error("{message}")]
    Invalid {
        /// The flag, as on the command line (`--k-s`).
        option: &'static str,
        /// What is wrong, naming the flag and the value.
        message: String,
    },
    /// The skeleton spec file cannot be read.
    #[error("{}: {source}", path.display())]
    SkeletonFile {
        /// The file given to `--skeleton`.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The skeleton spec file does not parse.
    #[error(transparent)]
    SkeletonSpec(#[from] SpecError),
}

/// [`ensure`] that `v` is a finite number ≥ 0, naming `option` in the error.
fn ensure_non_negative(option: &'static str, v: f64) -> Result<(), OptionsError> {
    ensure(v.is_finite() && v >= 0.0, option, || {
        format!("{option} must be a non-negative number, got {v}")
    })
}

/// Fail with [`OptionsError::Invalid`] for `option` unless `ok`.
fn ensure(
    ok: bool,
    option: &'static str,
    message: impl FnOnce() -> String,
) -> Result<(), OptionsError> {
    if ok {
        Ok(())
    } else {
        Err(OptionsError::Invalid {
            option,
            message: message(),
        })
    }
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
    pub fn options(&self) -> Result<CharacterOptions, OptionsError> {
        if let Some(s) = self.scale {
            ensure(s.is_finite() && s > 0.0, "--scale", || {
                format!("--scale must be a positive number of metres per file unit, got {s}")
            })?;
        }
        if let Some(h) = self.height {
            ensure(h.is_finite() && h > 0.0, "--height", || {
                format!("--height must be a positive stature in metres, got {h}")
            })?;
        }
        if let Some(m) = self.mass {
            ensure(m.is_finite() && m > 0.0, "--mass", || {
                format!("--mass must be a positive body mass in kilograms, got {m}")
            })?;
        }
        ensure(self.cutoff > 0.0, "--cutoff", || {
            format!("--cutoff must be positive (Hz), got {}", self.cutoff)
        })?;
        let spec = match &self.skeleton {
            None => None,
            Some(p) => {
                let text =
                    std::fs::read_to_string(p).map_err(|source| OptionsError::SkeletonFile {
                        path: p.clone(),
                        source,
                    })?;
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

/// The metric of post-stabilisation and of the feedforward's target velocities.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ProjectionArg {
    /// The step's own factorisation (M̃: mass plus the implicit PD stiffness): no extra
    /// factorisation per step, and the closest tracking (default).
    Step,
    /// The thesis' mass metric [M −Jᵀ; J 0], factored afresh after every step: about 25 %
    /// slower.
    Mass,
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
    /// With --drift post: the metric in which the drift is projected away after each step,
    /// and the feedforward's target velocities onto the joints (the two must agree).
    #[arg(long, value_enum, default_value_t = ProjectionArg::Step)]
    pub projection: ProjectionArg,
    /// Feedback stiffness per N·m of feedforward torque, 1/rad.
    #[arg(long, default_value_t = Gains::default().k_s)]
    pub k_s: f64,
    /// Feedback stiffness floor, N·m/rad.
    #[arg(long, default_value_t = Gains::default().k_0)]
    pub k_0: f64,
    /// Stiffness floor per N·m/rad of the carried subtree's gravitational stiffness m·g·l.
    #[arg(long, default_value_t = Gains::default().k_g)]
    pub k_g: f64,
    /// Standing on the floor: stiffness floor of the joints that hold the figure up (a
    /// stance leg's ankle, knee, hip) per N·m/rad of the m·g·l they hold (an inverted
    /// pendulum: above 1 to hold it).
    #[arg(long, default_value_t = Gains::default().k_stance)]
    pub k_stance: f64,
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
    /// Below 0.5 Hz the spring is weaker than gravity topples a figure standing on one
    /// foot (√(g/l)/2π for a centre of mass l ≈ 1 m up; a foot's contacts lie along its
    /// length, so it rolls sideways freely): after a hit such figures drift away and slide
    /// (a handball at 1 s to the chest or pelvis of the 20 shared clips: the pelvis more
    /// than 10 cm off in 2 runs of 40 at 0.5 Hz, the salsa's two falls; 3 at 0.45 Hz, 6 at
    /// 0.4 Hz, 16 at 0.3 Hz).
    #[arg(long, default_value_t = SpringTuning::default().linear_hz)]
    pub root_hz: f64,
    /// Damping ratio of the root spring (1: critically damped).
    #[arg(long, default_value_t = SpringTuning::default().damping_ratio)]
    pub root_zeta: f64,
    /// Experimental balance feedback (0: off): after a hit, the stance ankles' targets
    /// tilt the legs by −(c_d·Δd + c_v·Δv) toward the reference COM; c_d in rad/m.
    #[arg(long, default_value_t = 0.0)]
    pub balance_cd: f64,
    /// Balance feedback c_v, rad/(m/s) (see --balance-cd).
    #[arg(long, default_value_t = 0.0)]
    pub balance_cv: f64,
    /// Experimental soft zone of the root spring, m (0: off): within it the spring's
    /// frequencies are scaled by --root-soft-scale, beyond twice it they are the full ones.
    #[arg(long, default_value_t = 0.0)]
    pub root_soft_zone: f64,
    /// Frequency factor of the root spring inside --root-soft-zone, in (0, 1].
    #[arg(long, default_value_t = 1.0)]
    pub root_soft_scale: f64,
    /// After a ball has touched the figure, the root spring's target follows the planted
    /// feet: it moves toward their mean horizontal offset from their mocap marks (each
    /// foot weighted by the load the mocap puts on it) with this time constant, s, by at
    /// most --root-follow-max. A foot that slid under the blow or landed off its mark then
    /// no longer holds the legs off their recorded angles against a pelvis pulled back to
    /// its path (a kick clip stayed so for 10 s). 0: the target stays on the mocap path.
    #[arg(long, default_value_t = SpringTuning::default().follow_feet_s)]
    pub root_follow_feet: f64,
    /// Largest shift of the root spring's target by --root-follow-feet, m: about what a
    /// handball leaves a foot off its mark (1–4 cm); unbounded, a ball that knocked a foot
    /// aside drew the figure after it into a fall.
    #[arg(long, default_value_t = SpringTuning::default().follow_feet_max_m)]
    pub root_follow_max: f64,
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
    /// Trunk and hip stiffness right after an impact, as a fraction of the tracking's, in
    /// (0, 1]: a person's stretch reflexes need 50–100 ms to answer a blow, so for
    /// --reflex-latency after a ball's first contact with the pelvis, the trunk or a
    /// thigh, the joints from the pelvis to the chest and the hips hold at this fraction
    /// (a push at the pelvis passes through the legs under it), then return to full
    /// stiffness over --reflex-ramp. 1 turns it off (the thesis: the gains act from the
    /// instant of contact, and a handball to the trunk barely shows).
    #[arg(long, default_value_t = ImpactReflex::default().stiffness_fraction)]
    pub reflex_fraction: f64,
    /// How long the trunk and hips hold at --reflex-fraction after a ball's first
    /// contact, s.
    #[arg(long, default_value_t = ImpactReflex::default().latency_s)]
    pub reflex_latency: f64,
    /// How long the trunk and hips take to return to full stiffness after
    /// --reflex-latency, s.
    #[arg(long, default_value_t = ImpactReflex::default().ramp_s)]
    pub reflex_ramp: f64,
    /// The root spring's frequencies over the same reflex delay, as a fraction of
    /// --root-hz's, in (0, 1] (its stiffness goes with the square): the hand of god stands
    /// for the balance the legs and hips keep, whose reflexes are as late. 1 holds it at
    /// full strength.
    #[arg(long, default_value_t = ImpactReflex::default().root_frequency_fraction)]
    pub reflex_root: f64,
    /// Keep the character up whatever hits it. By default, standing on the floor, it lets go
    /// of the mocap and falls when a hit moves its extrapolated centre of mass more than
    /// 10 cm from the mocap's, or the root spring pulls with more than half its weight,
    /// for 50 ms, within 1 s of a ball's last contact; or more than 30 cm, for 50 ms, at
    /// any time after a hit (a slow topple).
    #[arg(long)]
    pub no_falls: bool,
}

impl SimArgs {
    /// Library options from the flags.
    pub fn options(&self) -> Result<SimOptions, OptionsError> {
        ensure(
            self.step.is_finite() && self.step > 0.0 && self.step <= 0.05,
            "--step",
            || format!("--step must be in (0, 0.05] s, got {}", self.step),
        )?;
        for (name, v) in [
            ("--k-s", self.k_s),
            ("--k-0", self.k_0),
            ("--k-g", self.k_g),
            ("--k-stance", self.k_stance),
            ("--damping-time", self.damping_time),
            ("--beta", self.beta),
        ] {
            ensure_non_negative(name, v)?;
        }

        Ok(SimOptions {
            step: self.step,
            gains: Gains {
                k_s: self.k_s,
                k_0: self.k_0,
                damping_time: self.damping_time,
                k_g: self.k_g,
                k_stance: self.k_stance,
            },
            drift: match self.drift {
                DriftArg::None => Drift::None,
                DriftArg::Baumgarte => Drift::Baumgarte { beta: self.beta },
                DriftArg::Post => Drift::PostStabilization,
                DriftArg::Improved => Drift::ImprovedImplicit,
            },
            projection: match self.projection {
                ProjectionArg::Step => Projection::Step,
                ProjectionArg::Mass => Projection::Mass,
            },
            feedforward: !self.no_feedforward,
            feedback: !self.no_feedback,
            ground: !self.no_ground && self.root == RootArg::Spring,
            falls: FallOptions {
                allowed: !self.no_falls,
                ..FallOptions::default()
            },
            reflex: {
                ensure(
                    self.reflex_fraction > 0.0 && self.reflex_fraction <= 1.0,
                    "--reflex-fraction",
                    || {
                        format!(
                            "--reflex-fraction must be in (0, 1] (1: off), got {}",
                            self.reflex_fraction
                        )
                    },
                )?;
                ensure(
                    self.reflex_root > 0.0 && self.reflex_root <= 1.0,
                    "--reflex-root",
                    || {
                        format!(
                            "--reflex-root must be in (0, 1] (1: off), got {}",
                            self.reflex_root
                        )
                    },
                )?;
                ensure_non_negative("--reflex-latency", self.reflex_latency)?;
                ensure_non_negative("--reflex-ramp", self.reflex_ramp)?;
                ImpactReflex {
                    stiffness_fraction: self.reflex_fraction,
                    latency_s: self.reflex_latency,
                    ramp_s: self.reflex_ramp,
                    root_frequency_fraction: self.reflex_root,
                }
            },
            root: match self.root {
                RootArg::Pinned => RootMode::Pinned,
                RootArg::Spring => {
                    for (name, v) in [
                        ("--root-zeta", self.root_zeta),
                        ("--balance-cd", self.balance_cd),
                        ("--balance-cv", self.balance_cv),
                        ("--root-soft-zone", self.root_soft_zone),
                        ("--root-follow-feet", self.root_follow_feet),
                        ("--root-follow-max", self.root_follow_max),
                    ] {
                        ensure_non_negative(name, v)?;
                    }
                    ensure(
                        self.root_soft_scale > 0.0 && self.root_soft_scale <= 1.0,
                        "--root-soft-scale",
                        || {
                            format!(
                                "--root-soft-scale must be in (0, 1], got {}",
                                self.root_soft_scale
                            )
                        },
                    )?;
                    let tuning = SpringTuning {
                        linear_hz: self.root_hz,
                        angular_hz: 2.0 * self.root_hz,
                        damping_ratio: self.root_zeta,
                        balance_cd: self.balance_cd,
                        balance_cv: self.balance_cv,
                        soft_zone_m: self.root_soft_zone,
                        soft_scale: self.root_soft_scale,
                        follow_feet_s: self.root_follow_feet,
                        follow_feet_max_m: self.root_follow_max,
                    };
                    tuning.validate().map_err(|e| OptionsError::Invalid {
                        option: "--root-hz",
                        message: format!("--root-hz: {e}"),
                    })?;
                    RootMode::Spring(tuning)
                }
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    /// The simulation options of a command line (`jostle` + `args`).
    fn options(args: &[&str]) -> Result<SimOptions, OptionsError> {
        let mut argv = vec!["jostle"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).expect("parses").sim.options()
    }

    #[test]
    fn a_bad_value_is_refused_under_its_own_flag() {
        for (args, flag) in [
            (&["--k-stance=-1"][..], "--k-stance"),
            (&["--root-zeta=-0.5"], "--root-zeta"),
            (&["--balance-cd=NaN"], "--balance-cd"),
            (&["--root-soft-zone=-0.01"], "--root-soft-zone"),
            (&["--root-soft-scale=1.5"], "--root-soft-scale"),
            (&["--root-hz=0"], "--root-hz"),
            (&["--reflex-fraction=0"], "--reflex-fraction"),
            (&["--reflex-fraction=1.2"], "--reflex-fraction"),
            (&["--reflex-latency=-0.1"], "--reflex-latency"),
            (&["--reflex-ramp=inf"], "--reflex-ramp"),
            (&["--reflex-root=0"], "--reflex-root"),
        ] {
            match options(args) {
                Err(OptionsError::Invalid { option, message }) => {
                    assert_eq!(option, flag, "{args:?}");
                    assert!(message.contains(flag), "{args:?}: {message}");
                }
                other => panic!("{args:?}: {other:?}"),
            }
        }
        let o = options(&["--k-stance", "1.5", "--root-zeta", "0.7"]).expect("valid");
        assert_eq!(o.gains.k_stance, 1.5);
        assert!(matches!(o.root, RootMode::Spring(t) if t.damping_ratio == 0.7));
        assert_eq!(o.reflex, ImpactReflex::default());
        let off = options(&["--reflex-fraction", "1"]).expect("valid");
        assert_eq!(off.reflex.stiffness_fraction, 1.0);
    }
}
