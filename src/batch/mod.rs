//! Library runs (`jostle batch`): every `.bvh` under a folder, N perturbed variations per
//! clip, in parallel (rayon), resumable, shardable across machines, summarised.
//!
//! Layout of the output folder (mirrors the library):
//! ```text
//! OUT/<relative path without .bvh>/v01.glb, v01.bvh, …, metrics.json, job.json
//! OUT/summary.json, summary.csv, report.html          (a whole run or a merge)
//! OUT/summary.shard-I-of-N.json                       (a shard)
//! ```
//! `job.json` is written last: it records the input's SHA-256, the options' fingerprint and
//! the outputs, and marks the clip as done. A clip's outputs are written into a staging
//! folder and moved into place together ([`staging`]), so a clip folder holds a complete
//! result or none, and a killed batch leaves complete files only (the temporaries and
//! staging folders of writes in progress are deleted on SIGINT/SIGTERM by the CLI, and
//! stale ones at the next start). After a few clips in a row fail for lack of space the run
//! stops scheduling clips ([`space`]). The outputs (`.glb`,
//! `.bvh`, `metrics.json`) hold no timings and no absolute paths: the same inputs, options
//! and seed give the same bytes, whatever the thread count or shard.

pub mod files;
pub mod job;
pub mod report;
pub mod space;
pub mod staging;
pub mod summary;

use crate::Character;
use crate::character::CharacterOptions;
use crate::export::gltf::GltfLayout;
use crate::export::write_atomic;
use crate::sim::SimOptions;
use crate::sim::metrics::Recovery;
use crate::sim::random_throws::random_scenario;
use crate::sim::scenario::Scenario;
use files::{ClipFile, Shard, clip_out_dir, file_sha256_hex, sha256_hex, shard_of, variation_file};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;
use staging::{StageError, Staging};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use summary::{ClipRow, ClipStatus, ClipTiming, Summary};

/// Default number of random balls per variation.
pub const DEFAULT_BALLS_PER_VARIATION: usize = 2;

/// Revision of what a clip's outputs contain for the same inputs and options; part of the
/// fingerprint so that a resumed batch redoes clips whose outputs an older jostle wrote
/// differently (r2: recovery time counted from the last impact's onset; r3: targeted balls
/// go around obstructing bodies, metrics name the body aimed at and the root's peak
/// displacement; stature from the whole
/// bone chain, masses and inertia from de Leva's tables; r4: the floor balls bounce on is
/// the 5th percentile of the reference's lowest points, METHOD §12.1; r5: the character
/// stands on the floor by default, root spring-held, and can be knocked down, METHOD
/// §12.2–12.4; r6: the contact LCP's warm start follows the friction cones, so more steps
/// take its exact answer instead of Lemke's, an equally valid one that differs by round-off
/// or, where the LCP has several, by up to 0.1 % in the metrics; r7: the .glb is skinned by
/// default, one armature, `--gltf-layout`; r8: the trunk yields for a moment after an impact,
/// `sim::reflex`; r9: the metrics say how a run ended, `recovery`, and the time it had,
/// `after_last_hit_s`; r10: an aimed ball prefers an approach that meets its target
/// head-on, `sim::aim::HEAD_ON_DEG`, and the trunk answers a blow at 2.5 % of its
/// stiffness while the unperturbed path's torques go on, `sim::reflex`; r11: after a hit
/// the root spring's target follows the planted feet, `sim::root::FeetShift`; r12: a
/// landing foot's floor rows are bounded by the floor too, `sim::ground`, and the balance
/// margins are fractions of the figure's stature, `sim::balance`; r13: a variation's run
/// starts just before its first ball, the frames before are the reference's,
/// [`job::Outputs::from_clip_start`]). `--mass` and `--height` reach the fingerprint
/// through [`BatchOptions::load`].
pub const OUTPUT_REVISION: u32 = 13;

/// Settings of a batch run.
#[derive(Clone, Debug)]
pub struct BatchOptions {
    /// Library folder (searched recursively for `.bvh`).
    pub library: PathBuf,
    /// Output folder.
    pub out: PathBuf,
    /// Variations per clip (random throws); ignored with a scenario.
    pub variations: usize,
    /// Random balls per variation.
    pub balls_per_variation: usize,
    /// Seed of the random throws (mixed with the clip's path and the variation index).
    pub seed: u64,
    /// One scenario for every clip (one variation each), with its file's text.
    pub scenario: Option<(Scenario, String)>,
    /// Simulation settings.
    pub sim: SimOptions,
    /// Loading settings.
    pub load: CharacterOptions,
    /// Also write BVH files.
    pub write_bvh: bool,
    /// Also write the dataset arrays (`.npz`).
    pub write_npz: bool,
    /// Layout of the .glb files.
    pub gltf_layout: GltfLayout,
    /// Simulate every variation from its clip's first frame
    /// ([`job::Outputs::from_clip_start`]).
    pub from_clip_start: bool,
    /// Redo clips whose outputs are up to date.
    pub force: bool,
    /// Process only this shard.
    pub shard: Option<Shard>,
    /// Worker threads (`None`: one per core).
    pub jobs: Option<usize>,
}

impl BatchOptions {
    /// The options that shape the outputs, as JSON (stored in the summary).
    pub fn describe(&self) -> serde_json::Value {
        let mut v = json!({
            "variations": if self.scenario.is_some() { 1 } else { self.variations },
            "balls_per_variation": self.balls_per_variation,
            "seed": self.seed,
            "scenario": self.scenario.as_ref().map(|s| s.1.clone()),
            "bvh": self.write_bvh,
            "npz": self.write_npz,
            "gltf_layout": self.gltf_layout.name(),
            "sim": format!("{:?}", self.sim),
            "load": format!("{:?}", self.load),
        });
        // (only when set: the fingerprints of earlier runs stay valid)
        if self.from_clip_start {
            v["from_clip_start"] = json!(true);
        }
        v
    }

    /// SHA-256 of everything that changes a clip's outputs (options and tool version).
    pub fn fingerprint(&self) -> String {
        sha256_hex(
            format!(
                "jostle {} outputs r{OUTPUT_REVISION}\n{}",
                env!("CARGO_PKG_VERSION"),
                serde_json::to_string(&self.describe()).unwrap_or_default()
            )
            .as_bytes(),
        )
    }

    /// The scenarios of one clip: the given scenario, or `variations` random ones seeded
    /// from (seed, clip path, variation index).
    fn scenarios(&self, c: &Character, rel: &str) -> Vec<Scenario> {
        match &self.scenario {
            Some((s, _)) => vec![s.clone()],
            None => (0..self.variations)
                .map(|v| {
                    let seed = variation_seed(self.seed, rel, v);
                    random_scenario(
                        &c.model,
                        c.reference.duration,
                        self.balls_per_variation,
                        seed,
                    )
                })
                .collect(),
        }
    }
}

/// The seed of a clip's variation: independent of the other clips, of sharding and of the
/// order of processing.
pub fn variation_seed(seed: u64, rel: &str, variation: usize) -> u64 {
    let h = sha256_hex(format!("{seed}/{rel}/{variation}").as_bytes());
    u64::from_str_radix(&h[..16], 16).unwrap_or(seed)
}

/// The completion marker beside a clip's outputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobMarker {
    /// SHA-256 of the input clip.
    pub input_sha256: String,
    /// The options' fingerprint ([`BatchOptions::fingerprint`]).
    pub options_sha256: String,
    /// Every output as it was written.
    pub outputs: Vec<OutputRecord>,
    /// Wall times.
    pub timing: ClipTiming,
}

/// One output file as `job.json` records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputRecord {
    /// File name in the clip's folder.
    pub name: String,
    /// Size, bytes.
    pub bytes: u64,
    /// SHA-256 of the contents.
    pub sha256: String,
}

impl OutputRecord {
    fn of(name: &str, data: &[u8]) -> Self {
        OutputRecord {
            name: name.to_string(),
            bytes: data.len() as u64,
            sha256: sha256_hex(data),
        }
    }
}

/// Read a clip folder's `job.json`: `Ok(None)` when there is none, `Err` (naming the file
/// by `shown`, its path relative to the output folder) when it cannot be read or parsed.
pub fn read_job_marker(dir: &Path, shown: &str) -> Result<Option<JobMarker>, String> {
    let p = dir.join("job.json");
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{shown}/job.json: unreadable ({e})")),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{shown}/job.json: not a job marker of this jostle version ({e})"))
}

/// Check a finished clip's outputs against its `job.json`: each file's size, then its
/// SHA-256. Returns one line per bad file, `DIR/NAME: what is wrong` (`shown`: the clip
/// folder's path relative to the output folder).
pub fn verify_outputs(dir: &Path, shown: &str, marker: &JobMarker) -> Vec<String> {
    marker
        .outputs
        .iter()
        .filter_map(|o| {
            let p = dir.join(&o.name);
            // The size first (no read), then the contents, streamed.
            let what = match std::fs::metadata(&p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => "missing".to_string(),
                Err(e) => format!("unreadable ({e})"),
                Ok(m) if m.len() != o.bytes => format!("{} bytes, expected {}", m.len(), o.bytes),
                Ok(_) => match file_sha256_hex(&p) {
                    Err(e) => format!("unreadable ({e})"),
                    Ok((_, sha)) if sha != o.sha256 => format!(
                        "{} bytes as expected but its SHA-256 differs from job.json (altered)",
                        o.bytes
                    ),
                    Ok(_) => return None,
                },
            };
            Some(format!("{shown}/{}: {what}", o.name))
        })
        .collect()
}

/// What `jostle batch --check` found in an output folder.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Clip folders with a `job.json`.
    pub clips: usize,
    /// Output files checked.
    pub files: usize,
    /// Their recorded sizes, bytes.
    pub bytes: u64,
    /// One line per bad file (`DIR/NAME: what is wrong`), sorted by path.
    pub bad: Vec<String>,
}

/// Verify every finished clip under `out` (each folder with a `job.json`) against its
/// `job.json` — sizes and SHA-256 — without simulating anything.
pub fn check_outputs(out: &Path) -> std::io::Result<CheckReport> {
    let mut report = CheckReport::default();
    let mut stack = vec![out.to_path_buf()];
    let mut dirs = vec![];
    while let Some(d) = stack.pop() {
        let mut has_job = false;
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            if e.file_type()?.is_dir() {
                // A staging folder holds a clip on its way in, not a finished one.
                if !crate::export::is_temporary(&e.path()) {
                    stack.push(e.path());
                }
            } else if e.file_name() == "job.json" {
                has_job = true;
            }
        }
        if has_job {
            dirs.push(d);
        }
    }
    dirs.sort();
    for dir in dirs {
        let shown = shown_dir(out, &dir);
        report.clips += 1;
        match read_job_marker(&dir, &shown) {
            Ok(Some(marker)) => {
                report.files += marker.outputs.len();
                report.bytes += marker.outputs.iter().map(|o| o.bytes).sum::<u64>();
                report.bad.extend(verify_outputs(&dir, &shown, &marker));
            }
            Ok(None) => {}
            Err(why) => report.bad.push(why),
        }
    }
    Ok(report)
}

/// A clip folder's path relative to the output folder, for messages.
fn shown_dir(out: &Path, dir: &Path) -> String {
    dir.strip_prefix(out)
        .unwrap_or(dir)
        .to_string_lossy()
        .into_owned()
}

/// The per-clip metrics file (deterministic: no timings, no absolute paths).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClipMetrics {
    /// Path relative to the library.
    pub clip: String,
    /// SHA-256 of the input file.
    pub input_sha256: String,
    /// Frames used.
    pub frames: usize,
    /// Duration, s.
    pub duration_s: f64,
    /// Model mass, kg.
    pub mass_kg: f64,
    /// Model height, m.
    pub height_m: f64,
    /// Per variation.
    pub variations: Vec<VariationMetrics>,
}

/// One variation in `metrics.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VariationMetrics {
    /// Output files (names in the clip's folder).
    pub glb: String,
    /// BVH output, if written.
    pub bvh: Option<String>,
    /// Dataset arrays (`.npz`), if written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub npz: Option<String>,
    /// The throws, in `--ball` syntax.
    pub balls: Vec<String>,
    /// The run's metrics (`perturb`'s keys).
    pub metrics: crate::sim::metrics::PerturbMetrics,
    /// Largest joint deviation per 1/20 s, degrees.
    pub deviation_deg_20hz: Vec<f64>,
}

/// Read a clip's `metrics.json` (for the report).
pub fn read_clip_metrics(out: &Path, rel: &str) -> Option<ClipMetrics> {
    let p = clip_out_dir(out, rel).join("metrics.json");
    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
}

fn row_from_metrics(m: &ClipMetrics, status: ClipStatus, timing: ClipTiming) -> ClipRow {
    let runs = &m.variations;
    let peak = runs
        .iter()
        .max_by(|a, b| {
            a.metrics
                .peak_deviation_deg
                .total_cmp(&b.metrics.peak_deviation_deg)
        })
        .map(|v| &v.metrics);
    ClipRow {
        path: m.clip.clone(),
        status,
        reason: None,
        frames: Some(m.frames),
        duration_s: Some(m.duration_s),
        mass_kg: Some(m.mass_kg),
        height_m: Some(m.height_m),
        variations: runs.len(),
        balls: runs.iter().map(|v| v.metrics.balls.len()).sum(),
        hits: runs
            .iter()
            .map(|v| v.metrics.balls.iter().filter(|b| b.hit).count())
            .sum(),
        off_target: runs
            .iter()
            .map(|v| {
                v.metrics
                    .balls
                    .iter()
                    .filter(|b| b.struck_off_target())
                    .count()
            })
            .sum(),
        peak_deviation_deg: peak.map(|p| p.peak_deviation_deg),
        peak_joint: peak.map(|p| p.peak_joint.clone()),
        recovery_times_s: runs.iter().map(|v| v.metrics.recovery_time_s).collect(),
        not_recovered: runs
            .iter()
            .filter(|v| v.metrics.recovery == Recovery::NotRecovered)
            .count(),
        clip_ended: runs
            .iter()
            .filter(|v| v.metrics.recovery == Recovery::ClipEnded)
            .count(),
        falls: runs.iter().filter(|v| v.metrics.fell).count(),
        simulated_s: runs
            .iter()
            .map(|v| v.metrics.steps as f64 * v.metrics.step_s)
            .fold(0.0, |a, b| a + b),
        timing,
        files: {
            let dir = files::clip_out_dir(Path::new(""), &m.clip);
            let folder: Vec<String> = dir
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let at = |name: &str| {
                let mut parts = folder.clone();
                parts.push(name.to_string());
                parts.join("/")
            };
            runs.iter()
                .map(|v| summary::VariationFiles {
                    glb: at(&v.glb),
                    bvh: v.bvh.as_deref().map(at),
                    npz: v.npz.as_deref().map(at),
                })
                .collect()
        },
        warnings: vec![],
    }
}

/// An earlier run's row if its outputs are complete, intact (sizes and SHA-256 as
/// `job.json` recorded them) and match this input and these options. Otherwise the clip is
/// to be redone: `Err(Some(why))` when finished outputs were found damaged (`redo DIR/NAME:
/// why`, one line per file), `Err(None)` when it simply was not done for these inputs.
fn up_to_date(
    out: &Path,
    dir: &Path,
    rel: &str,
    input_sha: &str,
    options_sha: &str,
) -> Result<(ClipRow, u64), Option<String>> {
    let shown = shown_dir(out, dir);
    let redo = |why: String| Some(format!("redo {why}"));
    let marker = read_job_marker(dir, &shown).map_err(redo)?.ok_or(None)?;
    if marker.input_sha256 != input_sha || marker.options_sha256 != options_sha {
        return Err(None);
    }
    let bad = verify_outputs(dir, &shown, &marker);
    if !bad.is_empty() {
        return Err(Some(
            bad.iter()
                .map(|b| format!("redo {b}"))
                .collect::<Vec<_>>()
                .join("\n"),
        ));
    }
    let m: ClipMetrics = std::fs::read_to_string(dir.join("metrics.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| redo(format!("{shown}/metrics.json: unreadable")))?;
    if m.clip != rel {
        return Err(redo(format!(
            "{shown}/metrics.json: written for {}",
            m.clip
        )));
    }
    Ok((
        row_from_metrics(&m, ClipStatus::Skipped, marker.timing),
        marker.outputs.iter().map(|o| o.bytes).sum(),
    ))
}

/// What became of one clip in a run.
#[derive(Clone, Debug)]
pub struct ClipResult {
    /// Its summary row.
    pub row: ClipRow,
    /// The size of its outputs, bytes: written now or found up to date, or (a clip that
    /// failed writing them) what they would have taken.
    pub output_bytes: Option<u64>,
    /// It failed because the output volume is full (or over quota).
    pub out_of_space: bool,
}

/// Why a clip failed, whether for lack of space, and what its outputs would have taken.
struct ClipFailure {
    reason: String,
    out_of_space: bool,
    needed: Option<u64>,
}

impl From<String> for ClipFailure {
    fn from(reason: String) -> Self {
        ClipFailure {
            reason,
            out_of_space: false,
            needed: None,
        }
    }
}

/// Process one clip (never panics: a panic inside the pipeline becomes a failed row).
pub fn process_clip(clip: &ClipFile, opts: &BatchOptions, options_sha: &str) -> ClipResult {
    let t0 = Instant::now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        process_clip_inner(clip, opts, options_sha, t0)
    }));
    let failed = |reason| ClipResult {
        row: ClipRow::failed(&clip.rel, reason),
        output_bytes: None,
        out_of_space: false,
    };
    match result {
        Ok(Ok((row, bytes))) => ClipResult {
            row,
            output_bytes: Some(bytes),
            out_of_space: false,
        },
        Ok(Err(f)) => ClipResult {
            out_of_space: f.out_of_space,
            output_bytes: f.needed,
            ..failed(f.reason)
        },
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            failed(format!(
                "{}: internal error (panic: {what}); please report it with this file",
                clip.path.display()
            ))
        }
    }
}

fn process_clip_inner(
    clip: &ClipFile,
    opts: &BatchOptions,
    options_sha: &str,
    t0: Instant,
) -> Result<(ClipRow, u64), ClipFailure> {
    let bytes = std::fs::read(&clip.path).map_err(|e| format!("{}: {e}", clip.path.display()))?;
    let input_sha = sha256_hex(&bytes);
    drop(bytes);
    let dir = clip_out_dir(&opts.out, &clip.rel);
    let mut redone = None;
    if !opts.force {
        match up_to_date(&opts.out, &dir, &clip.rel, &input_sha, options_sha) {
            Ok(done) => return Ok(done),
            Err(why) => redone = why,
        }
    }
    let c = Character::load(&clip.path, &opts.load).map_err(|e| e.to_string())?;
    let load_s = t0.elapsed().as_secs_f64();
    let scenarios = opts.scenarios(&c, &clip.rel);
    let wanted = job::Outputs {
        layout: opts.gltf_layout,
        bvh: opts.write_bvh,
        npz: opts.write_npz,
        from_clip_start: opts.from_clip_start,
        ..job::Outputs::default()
    };
    let (jt, runs) = job::run_variations_with(&c, opts.sim, &scenarios, &clip.rel, wanted)
        .map_err(|e| e.to_string())?;
    // All of the clip's outputs or none: staged beside its folder, moved in at the end
    // (an earlier result stays untouched until then; see `staging`).
    let mut files: Vec<(String, &[u8])> = vec![];
    let mut variations = vec![];
    for (v, run) in runs.iter().enumerate() {
        let glb = variation_file(v, "glb");
        files.push((glb.clone(), &run.glb));
        let bvh = run.bvh.as_ref().map(|text| {
            let name = variation_file(v, "bvh");
            files.push((name.clone(), text.as_bytes()));
            name
        });
        let npz = run.npz.as_ref().map(|bytes| {
            let name = variation_file(v, "npz");
            files.push((name.clone(), bytes.as_slice()));
            name
        });
        variations.push(VariationMetrics {
            glb,
            bvh,
            npz,
            balls: run.scenario.balls.iter().map(|b| b.to_flag()).collect(),
            metrics: run.metrics.clone(),
            deviation_deg_20hz: run.deviation_series_deg.clone(),
        });
    }
    let metrics = ClipMetrics {
        clip: clip.rel.clone(),
        input_sha256: input_sha.clone(),
        frames: c.clip.num_frames(),
        duration_s: c.reference.duration,
        mass_kg: c.model.total_mass(),
        height_m: c.model.figure.height_m,
        variations,
    };
    let text = serde_json::to_string_pretty(&metrics).map_err(|e| e.to_string())? + "\n";
    files.push(("metrics.json".into(), text.as_bytes()));
    let needed: u64 = files.iter().map(|f| f.1.len() as u64).sum();
    let failed = |e: StageError| ClipFailure {
        out_of_space: e.out_of_space(),
        reason: e.to_string(),
        needed: Some(needed),
    };
    let mut staging = Staging::new(&dir).map_err(failed)?;
    for (name, data) in &files {
        staging.write(name, data).map_err(failed)?;
    }
    let timing = ClipTiming {
        load_s,
        inverse_s: jt.inverse_s,
        simulate_s: runs.iter().map(|r| r.simulate_s).fold(0.0, |a, b| a + b),
        export_s: runs.iter().map(|r| r.export_s).fold(0.0, |a, b| a + b),
        total_s: t0.elapsed().as_secs_f64(),
        run_s: Some(
            runs.iter()
                .map(|r| r.run_steps as f64 * opts.sim.step)
                .fold(0.0, |a, b| a + b),
        ),
    };
    let marker = JobMarker {
        input_sha256: input_sha,
        options_sha256: options_sha.to_string(),
        outputs: staging.outputs().to_vec(),
        timing,
    };
    let text = serde_json::to_string_pretty(&marker).map_err(|e| e.to_string())? + "\n";
    staging.commit(text.as_bytes()).map_err(failed)?;
    let mut row = row_from_metrics(&metrics, ClipStatus::Ok, timing);
    row.reason = redone;
    row.warnings
        .extend(crate::skeleton::stature_warning(&c.model.figure));
    let bytes = marker.outputs.iter().map(|o| o.bytes).sum();
    Ok((row, bytes))
}

/// Why a batch could not run at all (a clip's failure is a row, not an error).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The library folder.
    #[error("library {path}: {source}")]
    Library {
        /// Folder.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// Bad settings.
    #[error("{0}")]
    Settings(String),
}

/// The clips this run handles (its shard of the library), sorted by path.
pub fn clips_of_run(opts: &BatchOptions) -> Result<Vec<ClipFile>, BatchError> {
    if !opts.library.is_dir() {
        return Err(BatchError::Library {
            path: opts.library.display().to_string(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not a folder (give the folder that holds the .bvh files)",
            ),
        });
    }
    let all = files::discover_clips(&opts.library, Some(&opts.out)).map_err(|source| {
        BatchError::Library {
            path: opts.library.display().to_string(),
            source,
        }
    })?;
    Ok(match opts.shard {
        Some(s) => all
            .into_iter()
            .filter(|c| shard_of(&c.rel, s.count) == s.index)
            .collect(),
        None => all,
    })
}

/// Run the batch over `clips`; `on_done` is called (from worker threads) as each clip
/// finishes. Returns the summary (rows sorted by path). After [`space::OUT_OF_SPACE_STOP`]
/// clips in a row fail for lack of space no more clips are started: the rest get
/// `not_run` rows and the summary says why ([`Summary::stopped`]).
pub fn run_batch(
    opts: &BatchOptions,
    clips: &[ClipFile],
    on_done: &(dyn Fn(&ClipRow) + Sync),
) -> Result<Summary, BatchError> {
    if opts.scenario.is_none() && opts.variations == 0 {
        return Err(BatchError::Settings(
            "--variations must be at least 1".into(),
        ));
    }
    // settings every clip would fail on: said once, before any clip is read
    opts.sim.validate().map_err(BatchError::Settings)?;
    let t0 = Instant::now();
    files::remove_stale_temporaries(&opts.out);
    let options_sha = opts.fingerprint();
    // Largest first: the long clips start early, so the tail of the run stays busy.
    let mut order: Vec<&ClipFile> = clips.iter().collect();
    order.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.rel.cmp(&b.rel)));
    // Clips in a row that failed for lack of space, and whether to stop starting clips.
    let in_a_row = Mutex::new(0usize);
    let full = AtomicBool::new(false);
    let not_run = format!(
        "not run: {} is out of space ({} clips in a row failed with \"no space left on \
         device\"); free space and run the same command again",
        opts.out.display(),
        space::OUT_OF_SPACE_STOP
    );
    let work = || -> Vec<(ClipResult, u64)> {
        // par_bridge hands the clips out in this order, one at a time.
        order
            .into_iter()
            .par_bridge()
            .map(|c| {
                let r = if full.load(Ordering::SeqCst) {
                    ClipResult {
                        row: ClipRow::not_run(&c.rel, not_run.clone()),
                        output_bytes: None,
                        out_of_space: false,
                    }
                } else {
                    let r = process_clip(c, opts, &options_sha);
                    let mut n = in_a_row.lock().unwrap_or_else(|e| e.into_inner());
                    if r.out_of_space {
                        *n += 1;
                        if *n >= space::OUT_OF_SPACE_STOP {
                            full.store(true, Ordering::SeqCst);
                        }
                    } else if r.row.status == ClipStatus::Ok {
                        *n = 0;
                    }
                    r
                };
                on_done(&r.row);
                (r, c.bytes)
            })
            .collect()
    };
    let results = match opts.jobs {
        Some(j) => rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build()
            .map_err(|e| BatchError::Settings(format!("cannot start {j} threads: {e}")))?
            .install(work),
        None => work(),
    };
    let stopped = full.load(Ordering::SeqCst).then(|| {
        let measured: Vec<(u64, u64)> = results
            .iter()
            .filter_map(|(r, input)| Some((*input, r.output_bytes?)))
            .collect();
        let failed: Vec<u64> = results
            .iter()
            .filter(|(r, _)| r.out_of_space)
            .map(|(r, _)| r.output_bytes.unwrap_or(0))
            .collect();
        let not_run: Vec<u64> = results
            .iter()
            .filter(|(r, _)| r.row.status == ClipStatus::NotRun)
            .map(|(_, input)| *input)
            .collect();
        space::stop_message(&opts.out, &measured, &failed, &not_run)
    });
    let mut rows: Vec<ClipRow> = results.into_iter().map(|(r, _)| r.row).collect();
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    let mut summary = Summary {
        tool: format!("jostle {}", env!("CARGO_PKG_VERSION")),
        library: opts.library.display().to_string(),
        shard: opts.shard.map(|s| s.to_string()),
        options: opts.describe(),
        options_sha256: options_sha,
        clips: rows,
        totals: Default::default(),
        stopped,
    };
    summary.compute_totals(t0.elapsed().as_secs_f64());
    Ok(summary)
}

/// Write `summary.json`, `summary.csv` and `report.html` (a whole run or a merge), or the
/// shard's `summary.shard-I-of-N.json`. Returns the files written.
pub fn write_summary(out: &Path, summary: &Summary) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out)?;
    let json = serde_json::to_string_pretty(summary).map_err(std::io::Error::other)? + "\n";
    if let Some(shard) = summary
        .shard
        .as_deref()
        .and_then(|s| s.parse::<Shard>().ok())
    {
        let p = out.join(summary::shard_summary_name(shard.index, shard.count));
        write_atomic(&p, json.as_bytes())?;
        return Ok(vec![p]);
    }
    let files = [
        ("summary.json", json),
        ("summary.csv", summary.to_csv()),
        ("report.html", report::report_html(out, summary)),
    ];
    let mut written = vec![];
    for (name, text) in files {
        let p = out.join(name);
        write_atomic(&p, text.as_bytes())?;
        written.push(p);
    }
    Ok(written)
}
