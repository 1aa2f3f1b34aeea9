//! `report.html`: a self-contained page (inline CSS and SVG, no scripts, nothing fetched)
//! with the batch's totals, the deviation over time of the worst clips, a histogram of
//! recovery times and a row per clip.
//!
//! The two plots are drawn as plain SVG here: a polyline chart and a bar chart are a few
//! dozen lines, and leaving text to the browser needs no font machinery.

use super::read_clip_metrics;
use super::summary::{ClipRow, ClipStatus, Summary};
use std::fmt::Write;
use std::path::Path;

/// How many of the worst clips get a deviation curve.
pub const WORST_CLIPS_PLOTTED: usize = 6;

const COLOURS: [&str; 6] = [
    "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
];

/// Escape text for HTML/SVG.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A "nice" axis for data up to `x`: (maximum, tick step), the step 1, 2, 2.5 or 5 × 10^k
/// giving at most 5 intervals, the maximum the first multiple of the step ≥ x; with
/// `integer` (counts) the step is at least 1.
fn nice_axis(x: f64, integer: bool) -> (f64, f64) {
    let x = if x.is_nan() || x <= 0.0 { 1.0 } else { x };
    let raw = x / 5.0;
    let p = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|v| *v >= raw * (1.0 - 1e-12))
        .unwrap_or(10.0 * p);
    if integer {
        step = step.ceil().max(1.0);
    }
    let max = (x / step * (1.0 - 1e-12)).ceil().max(1.0) * step;
    (max, step)
}

struct Frame {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x_max: f64,
    /// Distance between x ticks; ticks stop at `x_ticks_to`.
    x_step: f64,
    x_ticks_to: f64,
    y_max: f64,
    y_step: f64,
}

impl Frame {
    fn x(&self, v: f64) -> f64 {
        self.left + (self.w - self.left - self.right) * v / self.x_max
    }
    fn y(&self, v: f64) -> f64 {
        self.h - self.bottom - (self.h - self.top - self.bottom) * v / self.y_max
    }
    /// Axes, ticks (5 per axis) and labels.
    fn axes(&self, svg: &mut String, x_label: &str, y_label: &str) {
        let (x0, y0, x1, y1) = (
            self.left,
            self.h - self.bottom,
            self.w - self.right,
            self.top,
        );
        let _ = write!(
            svg,
            r##"<path d="M{x0},{y1} V{y0} H{x1}" fill="none" stroke="#333"/>"##
        );
        let nx = (self.x_ticks_to / self.x_step + 1e-9).floor() as usize;
        for i in 0..=nx {
            let xv = self.x_step * i as f64;
            let xp = self.x(xv);
            let _ = write!(
                svg,
                r##"<line x1="{xp:.1}" y1="{y0}" x2="{xp:.1}" y2="{:.1}" stroke="#333"/><text x="{xp:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                y0 + 4.0,
                y0 + 16.0,
                tick(xv),
            );
        }
        let ny = (self.y_max / self.y_step + 1e-9).floor() as usize;
        for i in 0..=ny {
            let yv = self.y_step * i as f64;
            let yp = self.y(yv);
            let _ = write!(
                svg,
                r##"<line x1="{x0}" y1="{yp:.1}" x2="{x1}" y2="{yp:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                x0 - 5.0,
                yp + 4.0,
                tick(yv)
            );
        }
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text transform="translate(14,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"##,
            (x0 + x1) / 2.0,
            self.h - 4.0,
            escape(x_label),
            (y0 + y1) / 2.0,
            escape(y_label)
        );
    }
}

fn tick(v: f64) -> String {
    if v == v.round() {
        format!("{v:.0}")
    } else if (v * 10.0) == (v * 10.0).round() {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn svg_open(w: f64, h: f64, title: &str) -> String {
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11" role="img"><title>{}</title>"##,
        escape(title)
    )
}

/// Deviation from the mocap over time, one curve per clip (its worst variation).
pub fn deviation_plot(curves: &[(String, f64, Vec<f64>)]) -> String {
    let t_max = curves
        .iter()
        .map(|c| c.2.len() as f64 * c.1)
        .fold(0.0, f64::max);
    let d_max = curves
        .iter()
        .flat_map(|c| c.2.iter().copied())
        .fold(0.0, f64::max);
    let f = Frame {
        w: 780.0,
        h: 300.0,
        left: 50.0,
        right: 250.0,
        top: 12.0,
        bottom: 36.0,
        x_max: 0.0,
        x_step: 0.0,
        x_ticks_to: 0.0,
        y_max: 0.0,
        y_step: 0.0,
    };
    let ((x_max, x_step), (y_max, y_step)) = (nice_axis(t_max, false), nice_axis(d_max, false));
    let f = Frame {
        x_max,
        x_step,
        x_ticks_to: x_max,
        y_max,
        y_step,
        ..f
    };
    let mut svg = svg_open(f.w, f.h, "Largest joint deviation over time");
    f.axes(&mut svg, "time (s)", "max joint deviation (°)");
    for (i, (name, dt, ys)) in curves.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points: Vec<String> = ys
            .iter()
            .enumerate()
            .map(|(k, y)| format!("{:.1},{:.1}", f.x((k as f64 + 0.5) * dt), f.y(*y)))
            .collect();
        let _ = write!(
            svg,
            r##"<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{}"/>"##,
            points.join(" ")
        );
        let ly = f.top + 14.0 + 16.0 * i as f64;
        let lx = f.w - f.right + 12.0;
        let _ = write!(
            svg,
            r##"<line x1="{lx}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="3"/><text x="{:.1}" y="{ly:.1}">{}</text>"##,
            ly - 4.0,
            lx + 16.0,
            ly - 4.0,
            lx + 20.0,
            escape(&shorten(name, 32))
        );
    }
    svg + "</svg>"
}

fn shorten(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= n {
        s.to_string()
    } else {
        format!(
            "…{}",
            chars[chars.len() - (n - 1)..].iter().collect::<String>()
        )
    }
}

/// Histogram of recovery times (bins of `bin` s) with a last bar for runs that never
/// recovered within the clip.
pub fn recovery_histogram(times: &[f64], never: usize, bin: f64) -> String {
    let top = times.iter().copied().fold(0.0, f64::max);
    let bins = ((top / bin).floor() as usize + 1).max(1);
    let mut counts = vec![0usize; bins + 1];
    for t in times {
        counts[((t / bin).floor() as usize).min(bins - 1)] += 1;
    }
    counts[bins] = never;
    let f = Frame {
        w: 720.0,
        h: 260.0,
        left: 50.0,
        right: 20.0,
        top: 12.0,
        bottom: 36.0,
        x_max: (bins + 1) as f64 * bin,
        // ticks on bin edges (every k-th when there are many), none under "never"
        x_step: bin * bins.div_ceil(10) as f64,
        x_ticks_to: bins as f64 * bin,
        y_max: 0.0,
        y_step: 0.0,
    };
    let (y_max, y_step) = nice_axis(*counts.iter().max().unwrap_or(&1) as f64, true);
    let f = Frame { y_max, y_step, ..f };
    let mut svg = svg_open(f.w, f.h, "Recovery times");
    f.axes(
        &mut svg,
        "recovery time (s) — last bar: not recovered by the clip's end",
        "variations",
    );
    let _ = write!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#d62728">never</text>"##,
        f.x((bins as f64 + 0.5) * bin),
        f.y(0.0) + 16.0
    );
    for (i, c) in counts.iter().enumerate() {
        let (x0, x1) = (f.x(i as f64 * bin) + 1.0, f.x((i + 1) as f64 * bin) - 1.0);
        let (y0, y1) = (f.y(0.0), f.y(*c as f64));
        let colour = if i == bins { "#d62728" } else { "#1f77b4" };
        let _ = write!(
            svg,
            r##"<rect x="{x0:.1}" y="{y1:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{c}</title></rect>"##,
            (x1 - x0).max(0.5),
            y0 - y1
        );
    }
    svg + "</svg>"
}

fn fmt_opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("–".into(), |v| format!("{v:.digits$}"))
}

/// The whole page. Deviation curves are read from the clips' `metrics.json` under `out`.
pub fn report_html(out: &Path, s: &Summary) -> String {
    let mut worst: Vec<&ClipRow> = s
        .clips
        .iter()
        .filter(|c| c.status != ClipStatus::Failed && c.peak_deviation_deg.is_some())
        .collect();
    worst.sort_by(|a, b| {
        b.peak_deviation_deg
            .unwrap_or(0.0)
            .total_cmp(&a.peak_deviation_deg.unwrap_or(0.0))
            .then_with(|| a.path.cmp(&b.path))
    });
    let curves: Vec<(String, f64, Vec<f64>)> = worst
        .iter()
        .filter_map(|c| {
            let m = read_clip_metrics(out, &c.path)?;
            let v = m.variations.iter().max_by(|a, b| {
                a.metrics
                    .peak_deviation_deg
                    .total_cmp(&b.metrics.peak_deviation_deg)
            })?;
            Some((
                c.path.clone(),
                1.0 / super::job::DEVIATION_SERIES_HZ,
                v.deviation_deg_20hz.clone(),
            ))
        })
        .take(WORST_CLIPS_PLOTTED)
        .collect();
    let recoveries: Vec<f64> = s
        .clips
        .iter()
        .flat_map(|c| c.recovery_times_s.iter().flatten().copied())
        .collect();
    let never: usize = s.clips.iter().map(|c| c.not_recovered).sum();
    let clip_ended: usize = s.clips.iter().map(|c| c.clip_ended).sum();
    let falls: usize = s.clips.iter().map(|c| c.falls).sum();
    let t = &s.totals;
    let mut h = String::new();
    let _ = write!(
        h,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>jostle batch report</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; }}
/* The clip table fits a laptop screen: long paths and reasons wrap, and if the table
   is still wider than the page it scrolls inside its own box, not the page. */
.table-box {{ max-width: 100%; overflow-x: auto; }}
table {{ border-collapse: collapse; font-size: 13px; }}
td.path {{ min-width: 12em; max-width: 24em; overflow-wrap: break-word; }}
td.reason {{ min-width: 16em; max-width: 32em; overflow-wrap: break-word; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: right; }}
th {{ background: #f3f3f3; position: sticky; top: 0; }}
td.l, th.l {{ text-align: left; }}
tr.failed td {{ background: #fde8e8; }}
tr.not_run td, p.stopped {{ background: #fff4d6; }}
tr.skipped td {{ color: #666; }}
.totals span {{ display: inline-block; margin-right: 2em; }}
</style></head><body>
<h1>jostle batch report</h1>
<p>Library <code>{}</code>{} · {}</p>
<details><summary>options</summary><pre>{}</pre></details>
<p class="totals"><span><b>{}</b> clips</span><span><b>{}</b> ok</span><span><b>{}</b> failed</span><span><b>{}</b> skipped</span>{}<span>{}</span></p>
"#,
        escape(&s.library),
        s.shard
            .as_ref()
            .map_or(String::new(), |x| format!(" (shard {})", escape(x))),
        escape(&s.tool),
        escape(&serde_json::to_string_pretty(&s.options).unwrap_or_default()),
        t.clips,
        t.ok,
        t.failed,
        t.skipped,
        if t.not_run > 0 {
            format!("<span><b>{}</b> not run</span>", t.not_run)
        } else {
            String::new()
        },
        escape(&t.throughput_text())
    );
    if let Some(why) = &s.stopped {
        let _ = writeln!(
            h,
            "<p class=\"stopped\"><b>Stopped early:</b> {}</p>",
            escape(why)
        );
    }
    if curves.is_empty() {
        h += "<p>No successful clips to plot.</p>\n";
    } else {
        let _ = write!(
            h,
            "<h2>Deviation from the mocap — the {} worst clips</h2>\n<p>Largest joint-angle deviation from the reference motion, per 1/20 s, in the variation with the highest peak.</p>\n{}\n",
            curves.len(),
            deviation_plot(&curves)
        );
    }
    let _ = write!(
        h,
        "<h2>Recovery times</h2>\n<p>Time from the last impact (the last ball's first contact) until every joint stays within 2° of the mocap; {} variation(s) with hits: {} not recovered by the end of their clip (2 s or more after the hit), {} whose clip ended sooner than 2 s after the hit, still deviating (too soon to tell), {} knocked down. The last bar counts the first two.</p>\n{}\n",
        recoveries.len() + never + clip_ended + falls,
        never,
        clip_ended,
        falls,
        recovery_histogram(&recoveries, never + clip_ended, 0.25)
    );
    h += "<h2>Clips</h2>\n<div class=\"table-box\"><table>\n<tr><th class=\"l\">clip</th><th class=\"l\">status</th><th>duration (s)</th><th>frames</th><th>mass (kg)</th><th>height (m)</th><th>variations</th><th>hits / balls</th><th title=\"aimed balls that first struck another body than their target (metrics.json names both)\">off target</th><th>peak deviation (°)</th><th class=\"l\">peak joint</th><th>worst recovery (s)</th><th>not recovered</th><th title=\"still deviating when the clip ended, less than 2 s after the hit\">clip ended first</th><th>falls</th><th>time (s)</th><th>sim s / wall s</th><th class=\"l\">reason</th></tr>\n";
    for c in &s.clips {
        let speed = if c.timing.total_s > 0.0 && c.status == ClipStatus::Ok {
            format!("{:.1}", c.simulated_s / c.timing.total_s)
        } else {
            "–".into()
        };
        let _ = writeln!(
            h,
            "<tr class=\"{}\"><td class=\"l path\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td class=\"l reason\">{}</td></tr>",
            c.status.as_str(),
            // a line may break after each folder of a long path
            escape(&c.path).replace('/', "/<wbr>"),
            c.status.as_str(),
            fmt_opt(c.duration_s, 2),
            c.frames.map_or("–".into(), |f| f.to_string()),
            fmt_opt(c.mass_kg, 1),
            fmt_opt(c.height_m, 2),
            c.variations,
            c.hits,
            c.balls,
            c.off_target,
            fmt_opt(c.peak_deviation_deg, 1),
            escape(c.peak_joint.as_deref().unwrap_or("")),
            fmt_opt(c.worst_recovery_s(), 2),
            c.not_recovered,
            c.clip_ended,
            c.falls,
            c.timing.total_s,
            speed,
            escape(c.reason.as_deref().unwrap_or("")).replace('/', "/<wbr>"),
        );
    }
    h += "</table></div>\n</body></html>\n";
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_every_run_once() {
        let svg = recovery_histogram(&[0.1, 0.2, 0.3, 1.1], 2, 0.25);
        // Bins: [0,.25): 2, [.25,.5): 1, [1,1.25): 1, plus the "never" bar: 2.
        let counts: Vec<usize> = svg
            .match_indices("<title>")
            .skip(1)
            .map(|(i, _)| {
                let rest = &svg[i + 7..];
                rest[..rest.find('<').unwrap()].parse().unwrap()
            })
            .collect();
        assert_eq!(counts, vec![2, 1, 0, 0, 1, 2]);
        // x ticks on the bin edges, "never" under the last bar
        for edge in [
            ">0<", ">0.25<", ">0.5<", ">0.75<", ">1<", ">1.25<", ">never<",
        ] {
            assert!(svg.contains(edge), "no tick {edge}");
        }
        assert!(!svg.contains(">0.3<") && !svg.contains(">1.5<"));
    }

    #[test]
    fn axes_are_nice_and_text_is_escaped() {
        assert_eq!(nice_axis(22.9, false), (25.0, 5.0));
        assert_eq!(nice_axis(3.2, false), (4.0, 1.0));
        assert_eq!(nice_axis(0.7, false), (0.8, 0.2));
        assert_eq!(nice_axis(20.0, false), (20.0, 5.0));
        assert_eq!(nice_axis(0.0, false), (1.0, 0.2));
        assert_eq!(nice_axis(7.0, true), (8.0, 2.0));
        assert_eq!(nice_axis(1.0, true), (1.0, 1.0));
        assert_eq!(escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
        let svg = deviation_plot(&[("a<b>.bvh".into(), 0.05, vec![0.0, 3.0, 1.0])]);
        assert!(svg.contains("a&lt;b&gt;.bvh") && !svg.contains("a<b>"));
        assert!(svg.contains("<polyline"));
    }
}
