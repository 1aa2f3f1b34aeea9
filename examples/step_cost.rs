//! Development aid: run one clip's unperturbed simulation (for instruction counting).
use jostle::sim::{SimOptions, Simulation};
use jostle::{Character, CharacterOptions};
fn main() -> anyhow::Result<()> {
    let f = std::env::args().nth(1).expect("clip");
    let c = Character::load(std::path::Path::new(&f), &CharacterOptions::default())?;
    let mut sim = Simulation::new(&c, SimOptions::default())?;
    sim.replay_unperturbed = false; // every step computed
    sim.run()?;
    println!("{} steps", sim.record.times.len());
    Ok(())
}
