//! Development aid: run a --ball spec and list every contact episode.
use jostle::sim::balls::{Ball, Touched};
use jostle::sim::scenario::BallSpec;
use jostle::sim::{SimOptions, Simulation};
use jostle::{Character, CharacterOptions};
fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let c = Character::load(std::path::Path::new(&a[1]), &CharacterOptions::default())?;
    let l = BallSpec::from_flag(&a[2])?
        .launch(&c.model, &c.reference)
        .map_err(anyhow::Error::msg)?;
    let step: f64 = a
        .get(3)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1.0 / 240.0);
    let mut sim = Simulation::new(
        &c,
        SimOptions {
            step,
            ..Default::default()
        },
    )?;
    sim.throw(Ball::from_launch(&l));
    sim.run()?;
    for h in &sim.balls[0].hits {
        let what = match h.other {
            Touched::Body(i) => c.model.bodies[i].name.clone(),
            Touched::Ground => "ground".into(),
            Touched::Ball(j) => format!("ball{j}"),
        };
        println!(
            "{what:20} t={:.4} dur={:.4} impulse {:.3}",
            h.t,
            h.duration,
            h.impulse.norm()
        );
    }
    Ok(())
}
