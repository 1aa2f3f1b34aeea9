//! Development aid: throw one ball at a body and print the deviation over time.
use jostle::motion::kinematics::BodyKinematics;
use jostle::sim::balls::{Ball, BallParams, Touched};
use jostle::sim::{SimOptions, Simulation};
use jostle::{Character, CharacterOptions};
use nalgebra::Vector3;
fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let c = Character::load(std::path::Path::new(&a[1]), &CharacterOptions::default())?;
    let target = c.model.find_body(&a[2]).expect("body");
    let t_hit: f64 = a[3].parse()?;
    let speed: f64 = a[4].parse()?;
    let mut kin = vec![BodyKinematics::default(); c.model.num_bodies()];
    c.reference
        .sample(&c.model, t_hit, &mut Default::default(), &mut kin);
    let p = kin[target].x;
    let from = p + Vector3::new(3.0, 0.3, 0.0);
    let d = p - from;
    let tf = d.norm() / speed;
    let v0 = d / tf - c.model.gravity * (0.5 * tf);
    let mut opts = SimOptions::default();
    if let Some(v) = a.get(5) {
        opts.gains.k_s = v.parse()?;
    }
    if let Some(v) = a.get(6) {
        opts.gains.k_0 = v.parse()?;
    }
    if let Some(v) = a.get(7) {
        opts.gains.damping_time = v.parse()?;
    }
    if let Some(v) = a.get(8) {
        opts.gains.k_g = v.parse()?;
    }
    let mut sim = Simulation::new(&c, opts)?;
    sim.throw(Ball::new(BallParams::default(), t_hit - tf, from, v0));
    let t0 = std::time::Instant::now();
    sim.run()?;
    let el = t0.elapsed().as_secs_f64();
    let b = &sim.balls[0];
    for h in &b.hits {
        let what = match h.other {
            Touched::Body(i) => c.model.bodies[i].name.clone(),
            Touched::Ground => "ground".into(),
            Touched::Ball(j) => format!("ball{j}"),
        };
        println!(
            "hit {what} at {:.4}s impulse {:.3} N·s",
            h.t,
            h.impulse.norm()
        );
    }
    let rec = &sim.record;
    let last_hit = b
        .hits
        .iter()
        .filter(|h| matches!(h.other, Touched::Body(_)))
        .map(|h| h.t)
        .fold(0.0, f64::max);
    let peak = rec.max_error_deg.iter().map(|x| x.0).fold(0.0, f64::max);
    let back = rec
        .max_error_deg
        .iter()
        .rposition(|x| x.0 > 2.0)
        .map(|k| rec.times[k] - last_hit);
    println!(
        "peak {peak:.1}°, back within 2° after {back:?} s (clip end {:.2})",
        rec.times.last().copied().unwrap_or(0.0) - last_hit
    );
    if a.len() > 5 {
        return Ok(());
    }
    for k in (0..rec.times.len()).step_by(24) {
        println!(
            "t={:.2} max err {:6.2}° ({}) rms {:.3}°",
            rec.times[k],
            rec.max_error_deg[k].0,
            c.model.bodies[rec.max_error_deg[k].1].name,
            rec.rms_error_deg[k]
        );
    }
    println!(
        "floor y = {:.3}; {:.1} µs/step",
        sim.contact.ground_y.unwrap_or(0.0),
        el * 1e6 / rec.times.len() as f64
    );
    Ok(())
}
