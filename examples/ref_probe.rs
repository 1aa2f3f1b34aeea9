//! Development aid: a body's reference relative rate and raw-mocap rotation step over a window.
use jostle::motion::reference::JointTargets;
use jostle::skeleton::ClipFrames;
use jostle::{Character, CharacterOptions};
fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let c = Character::load(std::path::Path::new(&a[1]), &CharacterOptions::default())?;
    let b = c.model.find_body(&a[2]).expect("body");
    let (t0, t1): (f64, f64) = (a[3].parse()?, a[4].parse()?);
    let parent = c.model.bodies[b].parent.expect("parent");
    let frames = ClipFrames::from_figure(&c.clip, &c.model.figure);
    let mut s = Default::default();
    let mut tg = JointTargets::default();
    let dt = c.clip.frame_time;
    let rel = |f: usize| {
        let w = frames.world(f);
        w[c.model.bodies[parent].bvh_joint].1.inverse() * w[c.model.bodies[b].bvh_joint].1
    };
    for f in ((t0 / dt) as usize)..=((t1 / dt) as usize) {
        c.reference
            .joint_targets(&c.model, f as f64 * dt, &mut s, &mut tg);
        let raw_step = rel(f).angle_to(&rel(f + 1)).to_degrees();
        let ref_err = tg.q_rel[b].angle_to(&rel(f)).to_degrees();
        println!(
            "t={:.4} ref |w_rel| {:7.2} rad/s  raw step {:6.2} deg/frame  ref-vs-raw {:6.2} deg",
            f as f64 * dt,
            tg.w_rel[b].norm(),
            raw_step,
            ref_err
        );
    }
    Ok(())
}
