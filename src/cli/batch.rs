//! `jostle batch`: perturbed variations of every clip of a library, in parallel, resumable,
//! shardable, with a summary and an HTML report.

use super::simulate::SimArgs;
use super::{GltfLayoutArg, LoadArgs};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use jostle::batch::files::Shard;
use jostle::batch::summary::{ClipRow, ClipStatus, Summary, merge_shards};
use jostle::batch::{BatchOptions, DEFAULT_BALLS_PER_VARIATION, clips_of_run, run_batch};
use jostle::sim::scenario::Scenario;
use std::path::PathBuf;

/// Arguments of `jostle batch`.
#[derive(Args, Debug)]
#[command(after_long_help = "\
Outputs mirror the library: OUT/<path without .bvh>/v01.glb (+ v01.bvh), metrics.json and
job.json per clip; OUT/summary.json, summary.csv and report.html for the run.

A clip whose job.json matches its input's SHA-256 and the options, and whose outputs still
have the sizes and SHA-256 it recorded, is skipped (use --force to redo it; a damaged output
is named and its clip redone), so an interrupted batch resumes where it stopped; killing it leaves no partial
file. A clip's outputs appear all together or not at all (staged beside its folder, moved in
when complete). One bad clip is reported (status failed, with the reason) and the rest go on;
the exit code is 1 if any clip failed. After 3 clips in a row fail with \"no space left on
device\" the run starts no more clips (status not_run), says which volume is full and roughly
how much the rest need, and still writes the summary.

On a cluster, run `jostle batch LIB --out OUT --shard I/N` for I = 0..N-1 (e.g. a Slurm array
with I = $SLURM_ARRAY_TASK_ID) and then `jostle batch --merge OUT`. `jostle batch --check OUT`
verifies a finished output folder against its job.json files without simulating.")]
pub struct BatchArgs {
    /// Folder of BVH clips (searched recursively for *.bvh).
    #[arg(required_unless_present_any = ["merge", "check"])]
    pub library: Option<PathBuf>,
    /// Output folder.
    #[arg(long, value_name = "DIR", required_unless_present_any = ["merge", "check"])]
    pub out: Option<PathBuf>,
    /// Perturbed variations per clip, each with its own random throws.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub variations: usize,
    /// Random balls per variation.
    #[arg(long = "balls", value_name = "N", default_value_t = DEFAULT_BALLS_PER_VARIATION)]
    pub balls_per_variation: usize,
    /// Seed of the random throws (each clip and variation derives its own from it).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// One scenario file for every clip instead of random throws (one variation each).
    #[arg(long, value_name = "FILE.toml")]
    pub scenario: Option<PathBuf>,
    /// Also write each variation as BVH.
    #[arg(long)]
    pub bvh: bool,
    /// Also write each variation's dataset arrays as NumPy .npz (v01.npz, …; see the
    /// README's "Dataset arrays" for every array, its units and frame).
    #[arg(long)]
    pub npz: bool,
    /// Layout of the .glb files: `skinned` (one armature: the joints a skin, the capsules
    /// a skinned mesh) or `nodes` (a plain node tree, no skin).
    #[arg(long, value_enum, value_name = "LAYOUT", default_value_t = GltfLayoutArg::Skinned)]
    pub gltf_layout: GltfLayoutArg,
    /// Simulate every variation from its clip's first frame. By default a variation's
    /// run starts at the last half second at least 0.25 s before its first ball's
    /// launch: the frames before are the mocap (which the unperturbed simulation tracks to
    /// ~1e-4°), and the time before the first ball costs nothing. With --npz every frame is
    /// simulated (the arrays' contact labels come from the run).
    #[arg(long)]
    pub from_clip_start: bool,
    /// Redo clips whose outputs are already up to date.
    #[arg(long)]
    pub force: bool,
    /// Process only shard I of N (0-based), chosen by a hash of each clip's relative path.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Join the shard summaries in this output folder into summary.json/csv and report.html.
    #[arg(long, value_name = "OUT_DIR", conflicts_with_all = ["library", "out", "shard"])]
    pub merge: Option<PathBuf>,
    /// Verify every finished clip in this output folder against its job.json (each output's
    /// size and SHA-256) without simulating; exit code 1 and a line per bad file if any.
    #[arg(
        long,
        value_name = "OUT_DIR",
        conflicts_with_all = ["library", "out", "shard", "merge", "force"]
    )]
    pub check: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// No progress bar and no per-clip lines (errors and the final line only).
    #[arg(short, long, conflicts_with = "json_lines")]
    pub quiet: bool,
    /// One JSON object per finished clip on stdout (the summary row), for scripts.
    #[arg(long)]
    pub json_lines: bool,
    #[command(flatten)]
    pub sim: SimArgs,
    #[command(flatten)]
    pub load: LoadArgs,
}

fn clip_line(r: &ClipRow) -> String {
    match r.status {
        ClipStatus::Failed => format!("failed  {}: {}", r.path, r.reason.as_deref().unwrap_or("?")),
        ClipStatus::NotRun => format!("not run {} (out of space)", r.path),
        s => format!(
            "{:<7} {}  {:.1} s clip, peak {:.1}° ({}), {}/{} hits, {:.1} s",
            s.as_str(),
            r.path,
            r.duration_s.unwrap_or(0.0),
            r.peak_deviation_deg.unwrap_or(0.0),
            r.peak_joint.as_deref().unwrap_or("-"),
            r.hits,
            r.balls,
            r.timing.total_s
        ),
    }
}

fn finish(summary: &Summary, written: &[PathBuf]) -> anyhow::Result<()> {
    let t = &summary.totals;
    let not_run = if t.not_run > 0 {
        format!(", {} not run", t.not_run)
    } else {
        String::new()
    };
    eprintln!(
        "{} clips: {} ok, {} skipped, {} failed{not_run}; {}",
        t.clips,
        t.ok,
        t.skipped,
        t.failed,
        t.throughput_text()
    );
    let off_target: usize = summary.clips.iter().map(|c| c.off_target).sum();
    if off_target > 0 {
        let hits: usize = summary.clips.iter().map(|c| c.hits).sum();
        eprintln!(
            "note: {off_target} of the {hits} balls that hit first struck another body than \
             the one they were aimed at (mostly necks and shoulders shielded by a bigger \
             neighbour, or a pose an earlier ball changed); the column `off_target` of summary.csv counts them per clip, \
             and each ball's `aimed_at` and `body` in its clip's metrics.json say which"
        );
    }
    for p in written {
        eprintln!("wrote {}", p.display());
    }
    if let Some(why) = &summary.stopped {
        anyhow::bail!("{why}");
    }
    if t.failed > 0 {
        anyhow::bail!(
            "{} of {} clips failed (reasons in {})",
            t.failed,
            t.clips,
            written
                .first()
                .map_or("the summary".into(), |p| p.display().to_string())
        );
    }
    Ok(())
}

/// `jostle batch --check OUT`: the bad files on stdout and an error, or a one-line summary.
fn check(out: &std::path::Path) -> anyhow::Result<()> {
    anyhow::ensure!(
        out.is_dir(),
        "{}: not a folder (give the --out folder of a batch run)",
        out.display()
    );
    let r = jostle::batch::check_outputs(out)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", out.display()))?;
    anyhow::ensure!(
        r.clips > 0,
        "{}: no finished clips (no job.json): not a batch output folder, or no clip finished yet",
        out.display()
    );
    for line in &r.bad {
        println!("{line}");
    }
    if !r.bad.is_empty() {
        anyhow::bail!(
            "{} bad file(s) among the {} finished clips in {}; run the same `jostle batch LIB --out {}` again to redo those clips",
            r.bad.len(),
            r.clips,
            out.display(),
            out.display()
        );
    }
    println!(
        "ok: {} clips, {} files ({}) match their job.json in {}",
        r.clips,
        r.files,
        jostle::batch::space::human_bytes(r.bytes),
        out.display()
    );
    Ok(())
}

/// Run `jostle batch`.
pub fn run(a: &BatchArgs) -> anyhow::Result<()> {
    if let Some(out) = &a.merge {
        let summary = merge_shards(out)?;
        let written = jostle::batch::write_summary(out, &summary)
            .map_err(|e| anyhow::anyhow!("cannot write the summary in {}: {e}", out.display()))?;
        return finish(&summary, &written);
    }
    if let Some(out) = &a.check {
        return check(out);
    }
    let (Some(library), Some(out)) = (&a.library, &a.out) else {
        anyhow::bail!(
            "give the library folder and --out DIR (or --merge OUT_DIR, or --check OUT_DIR)"
        );
    };
    let scenario = match &a.scenario {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            Some((Scenario::from_toml(&text, &p.display().to_string())?, text))
        }
        None => None,
    };
    anyhow::ensure!(
        a.scenario.is_some() || a.variations >= 1,
        "--variations must be at least 1"
    );
    let opts = BatchOptions {
        library: library.clone(),
        out: out.clone(),
        variations: a.variations,
        balls_per_variation: a.balls_per_variation,
        seed: a.seed,
        scenario,
        sim: a.sim.options()?,
        load: a.load.options()?,
        write_bvh: a.bvh,
        write_npz: a.npz,
        gltf_layout: a.gltf_layout.into(),
        from_clip_start: a.from_clip_start,
        force: a.force,
        shard: a.shard,
        jobs: a.jobs,
    };
    let clips = clips_of_run(&opts)?;
    if clips.is_empty() {
        eprintln!(
            "no .bvh files in {}{}",
            library.display(),
            a.shard.map_or(String::new(), |s| format!(" for shard {s}"))
        );
    }
    // Ctrl-C / SIGTERM: delete the temporaries of writes in progress and stop new ones,
    // so the output folder holds complete files only; the next run resumes.
    ctrlc::set_handler(|| {
        let _hold = jostle::export::remove_pending_temporaries();
        eprintln!("\ninterrupted: finished clips are kept; run the same command to resume");
        std::process::exit(130);
    })
    .map_err(|e| anyhow::anyhow!("cannot install the interrupt handler: {e}"))?;
    let bar = if a.quiet || a.json_lines {
        ProgressBar::hidden()
    } else {
        let b =
            ProgressBar::with_draw_target(Some(clips.len() as u64), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} clips (eta {eta})",
            )
            .map_err(|e| anyhow::anyhow!("progress bar: {e}"))?,
        );
        b
    };
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let on_done = |r: &ClipRow| {
        // A redone clip says which finished outputs were damaged, in every mode.
        if matches!(r.status, ClipStatus::Ok | ClipStatus::Skipped)
            && let Some(why) = &r.reason
        {
            bar.suspend(|| eprintln!("{why}"));
        }
        for w in &r.warnings {
            bar.suspend(|| eprintln!("warning: {}: {w}", r.path));
        }
        if a.json_lines {
            if let Ok(line) = serde_json::to_string(r) {
                bar.suspend(|| println!("{line}"));
            }
        } else if !a.quiet {
            bar.suspend(|| println!("{}", clip_line(r)));
        } else if r.status == ClipStatus::Failed {
            eprintln!("{}", clip_line(r));
        }
        bar.inc(1);
    };
    let summary = run_batch(&opts, &clips, &on_done)?;
    bar.finish_and_clear();
    let written = jostle::batch::write_summary(out, &summary)
        .map_err(|e| anyhow::anyhow!("cannot write the summary in {}: {e}", out.display()))?;
    finish(&summary, &written)
}
