//! Development aid: largest relative joint rates of the reference in a time window.
use jostle::motion::reference::JointTargets;
use jostle::{Character, CharacterOptions};
fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let c = Character::load(std::path::Path::new(&a[1]), &CharacterOptions::default())?;
    let (t0, t1): (f64, f64) = (a[2].parse()?, a[3].parse()?);
    let mut s = Default::default();
    let mut tg = JointTargets::default();
    let mut t = t0;
    while t <= t1 {
        c.reference.joint_targets(&c.model, t, &mut s, &mut tg);
        let (b, w) = tg.w_rel.iter().enumerate().skip(1).map(|(b, w)| (b, w.norm())).fold((0, 0.0), |x, y| if y.1 > x.1 { y } else { x });
        println!("t={t:.4} max |w_rel| = {w:8.2} rad/s at {}", c.model.bodies[b].name);
        t += 1.0 / 240.0;
    }
    Ok(())
}
