//! Development aid: simulate clips unperturbed and print tracking errors.
use jostle::sim::{SimOptions, Simulation};
use jostle::{Character, CharacterOptions};
fn main() -> anyhow::Result<()> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    for f in files {
        let c = Character::load(std::path::Path::new(&f), &CharacterOptions::default())?;
        for (label, ff, fb) in [("ff+fb", true, true), ("ff only", true, false)] {
            let t0 = std::time::Instant::now();
            let mut sim = Simulation::new(
                &c,
                SimOptions {
                    feedforward: ff,
                    feedback: fb,
                    ..Default::default()
                },
            )?;
            let t1 = t0.elapsed();
            let t2 = std::time::Instant::now();
            let r = sim.run();
            let el = t2.elapsed();
            let rec = &sim.record;
            let n = rec.rms_error_deg.len().max(1);
            let rms = (rec.rms_error_deg.iter().map(|x| x * x).sum::<f64>() / n as f64).sqrt();
            let (kmax, wmax) =
                rec.max_error_deg
                    .iter()
                    .enumerate()
                    .fold(
                        (0, (0.0, 0)),
                        |a, (k, x)| if x.0 > a.1.0 { (k, *x) } else { a },
                    );
            let max = wmax.0;
            let first_s = (1.0 / sim.opts.step) as usize;
            let max1 = rec
                .max_error_deg
                .iter()
                .take(first_s)
                .map(|x| x.0)
                .fold(0.0, f64::max);
            let within1 = rec
                .max_error_deg
                .iter()
                .position(|x| x.0 > 1.0)
                .map_or(c.reference.duration, |k| k as f64 * sim.opts.step);
            let cons = rec.constraint_error_m.iter().cloned().fold(0.0, f64::max);
            let name = f.rsplit('/').next().unwrap_or("");
            let err = r
                .as_ref()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_else(|| "ok".into());
            println!(
                "{name} [{label}] {err} steps={} rms={rms:.4} max={max:.3}deg ({} at {:.2}s) max_first_s={max1:.4} within1deg_until={within1:.2}s cons={:.2e}mm landing={:.2e}@{:.2}s precompute={:.2}s sim={:.3}s ({:.1} us/step)",
                rec.times.len(),
                c.model.bodies[wmax.1].name,
                kmax as f64 * sim.opts.step,
                cons * 1e3,
                sim.feedforward.max_landing_error,
                sim.feedforward.worst_landing_time,
                t1.as_secs_f64(),
                el.as_secs_f64(),
                el.as_secs_f64() * 1e6 / n as f64
            );
        }
    }
    Ok(())
}
