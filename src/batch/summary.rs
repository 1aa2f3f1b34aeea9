//! The batch summary: one row per clip (`summary.json`, `summary.csv`), shard summaries
//! and their merge.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// What happened to a clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClipStatus {
    /// Processed in this run.
    Ok,
    /// Processing failed (see the reason).
    Failed,
    /// Outputs of an earlier run matched the input's hash and the options.
    Skipped,
    /// Not attempted: the run stopped scheduling clips (its output volume was full).
    #[serde(rename = "not_run")]
    NotRun,
}

impl ClipStatus {
    /// The word used in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            ClipStatus::Ok => "ok",
            ClipStatus::Failed => "failed",
            ClipStatus::Skipped => "skipped",
            ClipStatus::NotRun => "not_run",
        }
    }
}

/// Wall times of one clip, s (not part of the deterministic outputs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClipTiming {
    /// Parse, model and reference fit, s.
    pub load_s: f64,
    /// Feedforward precompute, s.
    pub inverse_s: f64,
    /// Simulation of all variations, s.
    pub simulate_s: f64,
    /// Export of all variations, s.
    pub export_s: f64,
    /// Everything for this clip, s.
    pub total_s: f64,
    /// Motion simulated over the variations, s: from each run's start on (before it the
    /// motion is the mocap's; see
    /// [`Outputs::from_clip_start`](crate::batch::job::Outputs::from_clip_start)).
    /// `None` in rows of older versions, which simulated all of it.
    #[serde(default)]
    pub run_s: Option<f64>,
}

/// One clip's row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClipRow {
    /// Path relative to the library root.
    pub path: String,
    /// ok | failed | skipped | not_run.
    pub status: ClipStatus,
    /// Why it failed (file, line and cause) or was not run; for a redone clip, which
    /// finished outputs were damaged; `null` otherwise.
    pub reason: Option<String>,
    /// Frames used (after a dropped leading T-pose frame).
    pub frames: Option<usize>,
    /// Clip duration, s.
    pub duration_s: Option<f64>,
    /// Model mass, kg.
    pub mass_kg: Option<f64>,
    /// Model height, m.
    pub height_m: Option<f64>,
    /// Variations simulated.
    pub variations: usize,
    /// Balls thrown over all variations.
    pub balls: usize,
    /// Balls that touched the character.
    pub hits: usize,
    /// Aimed balls that first struck another body than their target (random throws at a
    /// neck or a shoulder often meet a bigger neighbour first, and an earlier ball may
    /// have changed the pose): their `metrics.json` entries name both, `aimed_at` and
    /// `body`. A dataset labelled by target should read `body`.
    #[serde(default)]
    pub off_target: usize,
    /// Largest joint deviation from the mocap over all variations, degrees.
    pub peak_deviation_deg: Option<f64>,
    /// Joint of that peak.
    pub peak_joint: Option<String>,
    /// Per variation: time from the last hit until every joint stays within 2° of the
    /// mocap, s (`null`: no hit, or never recovered within the clip).
    pub recovery_times_s: Vec<Option<f64>>,
    /// Variations still deviating at their clip's end, 2 s or more after the last hit
    /// ([`Recovery::NotRecovered`](crate::sim::metrics::Recovery::NotRecovered)).
    pub not_recovered: usize,
    /// Variations still deviating when their clip ended, less than 2 s after the last hit:
    /// too soon to tell ([`Recovery::ClipEnded`](crate::sim::metrics::Recovery::ClipEnded)).
    #[serde(default)]
    pub clip_ended: usize,
    /// Variations in which a hit knocked the character down (METHOD §12.4).
    #[serde(default)]
    pub falls: usize,
    /// Motion the variations produced, s (the clip's duration per variation; from the
    /// runs' start, `timing.start_s`, it is simulated, before it the mocap's).
    pub simulated_s: f64,
    /// Wall times.
    pub timing: ClipTiming,
    /// Per variation: its output files, relative to the output folder (a manifest a
    /// training script can read; empty for a clip without results).
    #[serde(default)]
    pub files: Vec<VariationFiles>,
    /// What the user should know about this clip's run, e.g. a figure that `--scale` made
    /// taller than any person (absent when there is nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One variation's output files, as paths relative to the batch's output folder.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VariationFiles {
    /// The .glb.
    pub glb: String,
    /// The BVH, if written.
    pub bvh: Option<String>,
    /// The dataset arrays, if written.
    pub npz: Option<String>,
}

impl ClipRow {
    /// A failed clip's row.
    pub fn failed(path: &str, reason: String) -> Self {
        Self::without_results(path, ClipStatus::Failed, reason)
    }

    /// The row of a clip the run did not attempt.
    pub fn not_run(path: &str, reason: String) -> Self {
        Self::without_results(path, ClipStatus::NotRun, reason)
    }

    fn without_results(path: &str, status: ClipStatus, reason: String) -> Self {
        ClipRow {
            path: path.to_string(),
            status,
            reason: Some(reason),
            frames: None,
            duration_s: None,
            mass_kg: None,
            height_m: None,
            variations: 0,
            balls: 0,
            hits: 0,
            off_target: 0,
            peak_deviation_deg: None,
            peak_joint: None,
            recovery_times_s: vec![],
            not_recovered: 0,
            clip_ended: 0,
            falls: 0,
            simulated_s: 0.0,
            timing: ClipTiming::default(),
            files: vec![],
            warnings: vec![],
        }
    }

    /// The largest recovery time over the variations that recovered, s.
    pub fn worst_recovery_s(&self) -> Option<f64> {
        self.recovery_times_s
            .iter()
            .flatten()
            .copied()
            .reduce(f64::max)
    }
}

/// Totals of a summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Clips in the summary.
    pub clips: usize,
    /// Processed successfully.
    pub ok: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped (already done).
    pub skipped: usize,
    /// Not attempted (the run stopped scheduling clips: its output volume was full).
    #[serde(default)]
    pub not_run: usize,
    /// Seconds of motion produced (processed clips only; see [`ClipRow::simulated_s`]).
    pub simulated_s: f64,
    /// Of them, the seconds simulated from the runs' starts (see [`ClipTiming::run_s`]).
    #[serde(default)]
    pub run_s: f64,
    /// Wall time of the run(s), s (for a merge: the sum over shards).
    pub wall_s: f64,
    /// Processed clips per minute of wall time.
    pub clips_per_min: f64,
    /// Seconds of motion produced per wall second.
    pub sim_s_per_wall_s: f64,
}

impl Totals {
    /// One line on throughput for the terminal and the report.
    pub fn throughput_text(&self) -> String {
        if self.ok + self.failed == 0 {
            return "nothing to do: every clip's outputs are up to date (--force redoes them)"
                .into();
        }
        let line = format!(
            "{:.1} simulated s in {:.1} wall s ({:.0} clips/min, {:.1} sim s per wall s)",
            self.simulated_s, self.wall_s, self.clips_per_min, self.sim_s_per_wall_s
        );
        // runs started just before their first balls: say how much of the motion was
        // simulated
        if self.run_s > 0.0 && self.run_s < self.simulated_s - 1e-9 {
            format!(
                "{line}; of the motion, {:.1} s simulated, the rest (before each clip's first \
                 ball) the mocap's",
                self.run_s
            )
        } else {
            line
        }
    }
}

/// A batch summary (`summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Tool and version.
    pub tool: String,
    /// The library folder.
    pub library: String,
    /// The shard this summary covers (`I/N`), `null` for a whole run or a merge.
    pub shard: Option<String>,
    /// The options that shape the outputs (as given on the command line).
    pub options: serde_json::Value,
    /// Fingerprint of those options (also stored beside each clip's outputs).
    pub options_sha256: String,
    /// One row per clip, sorted by path.
    pub clips: Vec<ClipRow>,
    /// Totals.
    pub totals: Totals,
    /// Why the run stopped scheduling clips before the end (its output volume was full:
    /// which, and roughly how much the clips left to do need); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

impl Summary {
    /// Recompute the totals from the rows; `wall_s` is the run's wall time.
    pub fn compute_totals(&mut self, wall_s: f64) {
        let count = |s| self.clips.iter().filter(|c| c.status == s).count();
        let ok = count(ClipStatus::Ok);
        let ok_rows = || self.clips.iter().filter(|c| c.status == ClipStatus::Ok);
        let simulated_s = ok_rows().map(|c| c.simulated_s).fold(0.0, |a, b| a + b);
        let run_s = ok_rows()
            .map(|c| c.timing.run_s.unwrap_or(c.simulated_s))
            .fold(0.0, |a, b| a + b);
        self.totals = Totals {
            clips: self.clips.len(),
            ok,
            failed: count(ClipStatus::Failed),
            skipped: count(ClipStatus::Skipped),
            not_run: count(ClipStatus::NotRun),
            simulated_s,
            run_s,
            wall_s,
            clips_per_min: if wall_s > 0.0 {
                ok as f64 * 60.0 / wall_s
            } else {
                0.0
            },
            sim_s_per_wall_s: if wall_s > 0.0 {
                simulated_s / wall_s
            } else {
                0.0
            },
        };
    }

    /// The summary as CSV (one row per clip; empty fields for unknown values).
    pub fn to_csv(&self) -> String {
        let mut s = String::from(
            "path,status,reason,frames,duration_s,mass_kg,height_m,variations,balls,hits,off_target,\
             peak_deviation_deg,peak_joint,worst_recovery_s,not_recovered,clip_ended,falls,simulated_s,\
             load_s,inverse_s,simulate_s,export_s,total_s,outputs\n",
        );
        let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
        for c in &self.clips {
            let fields = [
                csv_field(&c.path),
                c.status.as_str().to_string(),
                csv_field(c.reason.as_deref().unwrap_or("")),
                c.frames.map_or(String::new(), |f| f.to_string()),
                opt(c.duration_s),
                opt(c.mass_kg),
                opt(c.height_m),
                c.variations.to_string(),
                c.balls.to_string(),
                c.hits.to_string(),
                c.off_target.to_string(),
                opt(c.peak_deviation_deg),
                csv_field(c.peak_joint.as_deref().unwrap_or("")),
                opt(c.worst_recovery_s()),
                c.not_recovered.to_string(),
                c.clip_ended.to_string(),
                c.falls.to_string(),
                c.simulated_s.to_string(),
                c.timing.load_s.to_string(),
                c.timing.inverse_s.to_string(),
                c.timing.simulate_s.to_string(),
                c.timing.export_s.to_string(),
                c.timing.total_s.to_string(),
                // the clip's output folder (its files are listed in summary.json)
                csv_field(&c.files.first().map_or(String::new(), |f| {
                    f.glb
                        .rsplit_once('/')
                        .map_or("", |(dir, _)| dir)
                        .to_string()
                })),
            ];
            s += &fields.join(",");
            s.push('\n');
        }
        s
    }
}

/// Quote a CSV field when it needs it (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// File name of a shard's summary: `summary.shard-I-of-N.json`.
pub fn shard_summary_name(index: usize, count: usize) -> String {
    format!("summary.shard-{index}-of-{count}.json")
}

/// Why shard summaries could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Reading a folder or file.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// A summary that does not parse.
    #[error("{path}: not a jostle shard summary: {source}")]
    Parse {
        /// The file.
        path: String,
        /// Cause.
        source: serde_json::Error,
    },
    /// Shards missing, mixed shard counts or options, or a clip in two shards.
    #[error("{0}")]
    Inconsistent(String),
}

/// Join the shard summaries (`summary.shard-*-of-N.json`) found in `out` into one summary.
/// Every shard 0..N must be there, with the same library and options.
pub fn merge_shards(out: &Path) -> Result<Summary, MergeError> {
    let io = |path: &Path, source| MergeError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut shards: Vec<(usize, usize, Summary)> = vec![];
    for entry in std::fs::read_dir(out).map_err(|e| io(out, e))? {
        let path = entry.map_err(|e| io(out, e))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((i, n)) = name
            .strip_prefix("summary.shard-")
            .and_then(|r| r.strip_suffix(".json"))
            .and_then(|r| r.split_once("-of-"))
            .and_then(|(i, n)| Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?)))
        else {
            continue;
        };
        let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
        let summary: Summary = serde_json::from_str(&text).map_err(|source| MergeError::Parse {
            path: path.display().to_string(),
            source,
        })?;
        shards.push((i, n, summary));
    }
    let Some(count) = shards.first().map(|s| s.1) else {
        return Err(MergeError::Inconsistent(format!(
            "{}: no shard summaries (summary.shard-I-of-N.json) to merge; run `jostle batch \
             --shard I/N` first",
            out.display()
        )));
    };
    if shards.iter().any(|s| s.1 != count) {
        return Err(MergeError::Inconsistent(format!(
            "{}: shard summaries of different shard counts; delete the stale ones",
            out.display()
        )));
    }
    shards.sort_by_key(|s| s.0);
    let missing: Vec<String> = (0..count)
        .filter(|i| !shards.iter().any(|s| s.0 == *i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Inconsistent(format!(
            "{}: shard(s) {} have no summary yet; run them (or wait for them) before merging",
            out.display(),
            missing.join(", ")
        )));
    }
    let first = &shards[0].2;
    if let Some(s) = shards
        .iter()
        .find(|s| s.2.options_sha256 != first.options_sha256 || s.2.library != first.library)
    {
        return Err(MergeError::Inconsistent(format!(
            "{}: shard {}/{count} ran with other options or another library than shard 0/{count}",
            out.display(),
            s.0
        )));
    }
    let mut merged = Summary {
        tool: first.tool.clone(),
        library: first.library.clone(),
        shard: None,
        options: first.options.clone(),
        options_sha256: first.options_sha256.clone(),
        clips: shards.iter().flat_map(|s| s.2.clips.clone()).collect(),
        totals: Totals::default(),
        stopped: None,
    };
    let stops: Vec<String> = shards
        .iter()
        .filter_map(|(i, n, s)| Some(format!("shard {i}/{n}: {}", s.stopped.as_ref()?)))
        .collect();
    merged.stopped = (!stops.is_empty()).then(|| stops.join("\n"));
    merged.clips.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(w) = merged.clips.windows(2).find(|w| w[0].path == w[1].path) {
        return Err(MergeError::Inconsistent(format!(
            "{}: clip {} appears in two shards",
            out.display(),
            w[0].path
        )));
    }
    let wall = shards
        .iter()
        .map(|s| s.2.totals.wall_s)
        .fold(0.0, |a, b| a + b);
    merged.compute_totals(wall);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_line_says_when_nothing_was_done() {
        let mut t = Totals {
            clips: 3,
            skipped: 3,
            ..Default::default()
        };
        assert!(t.throughput_text().contains("up to date"));
        (t.ok, t.skipped, t.simulated_s, t.wall_s) = (3, 0, 30.0, 2.0);
        (t.clips_per_min, t.sim_s_per_wall_s) = (90.0, 15.0);
        assert_eq!(
            t.throughput_text(),
            "30.0 simulated s in 2.0 wall s (90 clips/min, 15.0 sim s per wall s)"
        );
    }

    #[test]
    fn csv_quotes_fields_that_need_it() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
        let mut s = Summary {
            tool: "t".into(),
            library: "l".into(),
            shard: None,
            options: serde_json::json!({}),
            options_sha256: String::new(),
            clips: vec![ClipRow::failed("a.bvh", "a.bvh:3: bad, very".into())],
            totals: Totals::default(),
            stopped: None,
        };
        s.compute_totals(2.0);
        let csv = s.to_csv();
        let row = csv.lines().nth(1).unwrap();
        assert!(
            row.starts_with("a.bvh,failed,\"a.bvh:3: bad, very\","),
            "{row}"
        );
        assert_eq!(
            csv.lines().next().unwrap().split(',').count(),
            24,
            "header fields"
        );
        assert_eq!(s.totals.failed, 1);
    }
}
