//! Measure step time with a ball in contact with the character vs without (issue #4's
//! benchmark): several throws at a clip, each step timed from outside.
use jostle::sim::balls::Ball;
use jostle::sim::scenario::BallSpec;
use jostle::sim::{SimOptions, Simulation};
use jostle::{Character, CharacterOptions};
fn main() -> anyhow::Result<()> {
    let f = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/mocap/cmu_01_01_jumps_turn.bvh".into());
    let c = Character::load(std::path::Path::new(&f), &CharacterOptions::default())?;
    let mut sim = Simulation::new(&c, SimOptions::default())?;
    sim.replay_unperturbed = false; // every step computed
    for (i, target) in [
        "right_forearm",
        "left_forearm",
        "chest",
        "head",
        "right_thigh",
        "left_hand",
    ]
    .iter()
    .enumerate()
    {
        let spec = format!("t={},target={target},speed=6", 1.0 + 2.5 * i as f64);
        let l = BallSpec::from_flag(&spec)?
            .launch(&c.model, &c.reference)
            .map_err(anyhow::Error::msg)?;
        sim.throw(Ball::from_launch(&l));
    }
    let (mut with, mut without) = (vec![], vec![]);
    while sim.k < sim.num_steps() {
        let t0 = std::time::Instant::now();
        sim.step(None)?;
        let dt = t0.elapsed().as_secs_f64() * 1e6;
        let r = sim.record.contacts.last().copied().unwrap_or_default();
        if r.character_momentum.norm() > 0.0 {
            with.push(dt)
        } else {
            without.push(dt)
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (nw, nwo) = (with.len(), without.len());
    let (mw, mwo) = (med(&mut with), med(&mut without));
    println!(
        "steps with a ball touching the character: {nw}, median {mw:.1} µs; without: {nwo}, median {mwo:.1} µs; contacts add {:.0} %",
        100.0 * (mw / mwo - 1.0)
    );
    Ok(())
}
