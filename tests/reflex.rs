//! The reflex delay after an impact (`sim::reflex`): for a moment after a ball strikes, the
//! trunk's joints hold at a fraction of their stiffness, so a handball to the chest bends
//! the trunk visibly; before the contact nothing changes, and the figure recovers and
//! stays up. On the repo's own walk (no shared clips needed).

mod common;

use jostle::motion::kinematics::BodyKinematics;
use jostle::motion::reference::ReferenceScratch;
use jostle::sim::balls::Ball;
use jostle::sim::metrics::perturb_metrics;
use jostle::sim::reflex::{ImpactReflex, trunk_joints};
use jostle::sim::scenario::BallSpec;
use jostle::sim::{SimOptions, Simulation};
use jostle::skeleton::Role;
use jostle::{Character, CharacterOptions};

const CHEST_HANDBALL: &str = "t=1,target=chest,speed=12";

fn walk() -> Character {
    let path = common::repo_clip("demo_walk.bvh");
    Character::load(&path, &CharacterOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The run of the ball `flag` (a `--ball` spec) with `reflex`.
fn hit<'c>(c: &'c Character, flag: &str, reflex: ImpactReflex) -> Simulation<'c> {
    let opts = SimOptions {
        reflex,
        ..Default::default()
    };
    let mut sim = Simulation::new(c, opts).expect("simulation");
    let launch = BallSpec::from_flag(flag)
        .expect("ball flag")
        .launch(&c.model, &c.reference)
        .expect("aims");
    sim.throw(Ball::from_launch(&launch));
    sim.run().expect("runs");
    sim
}

/// Per recorded step: the largest angle (degrees) between a trunk joint's relative rotation
/// and the reference's at the same time.
fn trunk_deviation_deg(c: &Character, sim: &Simulation<'_>, trunk: &[usize]) -> Vec<f64> {
    let model = &c.model;
    let mut kin = vec![BodyKinematics::default(); model.num_bodies()];
    let mut scratch = ReferenceScratch::default();
    sim.record
        .times
        .iter()
        .zip(&sim.record.poses)
        .map(|(&t, poses)| {
            c.reference.sample(model, t, &mut scratch, &mut kin);
            trunk
                .iter()
                .map(|&b| {
                    let a = model.bodies[b].parent.expect("a trunk joint has a parent");
                    let sim_rel = poses[a].q.inverse() * poses[b].q;
                    let ref_rel = kin[a].q.inverse() * kin[b].q;
                    sim_rel.angle_to(&ref_rel).to_degrees()
                })
                .fold(0.0, f64::max)
        })
        .collect()
}

#[test]
fn the_trunk_is_the_chain_from_the_pelvis_up_to_the_chest() {
    let c = walk();
    let trunk = trunk_joints(&c.model);
    let names: Vec<&str> = trunk
        .iter()
        .map(|&b| c.model.bodies[b].name.as_str())
        .collect();
    assert!(!trunk.is_empty(), "the demo walk has a chest");
    let last = *trunk.last().expect("non-empty");
    assert_eq!(c.model.bodies[last].role, Some(Role::Chest), "{names:?}");
    // each joint's parent is the one before it, the first's is the root
    assert_eq!(c.model.bodies[trunk[0]].parent, Some(0), "{names:?}");
    for w in trunk.windows(2) {
        assert_eq!(c.model.bodies[w[1]].parent, Some(w[0]), "{names:?}");
    }
    for &b in &trunk {
        assert!(
            !matches!(
                c.model.bodies[b].role,
                Some(Role::Neck | Role::Head | Role::LeftThigh | Role::RightThigh)
            ),
            "{names:?}"
        );
    }
}

#[test]
fn a_chest_hit_bends_the_trunk_more_while_the_reflex_is_late_and_the_figure_recovers() {
    let c = walk();
    let trunk = trunk_joints(&c.model);
    let with = hit(&c, CHEST_HANDBALL, ImpactReflex::default());
    let without = hit(&c, CHEST_HANDBALL, ImpactReflex::OFF);
    let contact = perturb_metrics(&with).balls[0]
        .first_contact_s
        .expect("the ball hits");
    assert_eq!(
        perturb_metrics(&without).balls[0].first_contact_s,
        Some(contact),
        "same ball, same first contact"
    );
    // nothing differs before the ball arrives: the reflex acts only after a contact
    let before = with
        .record
        .times
        .iter()
        .take_while(|&&t| t < contact)
        .count();
    assert!(before > 100, "{before} steps before the hit");
    assert_eq!(
        with.record.poses[..before],
        without.record.poses[..before],
        "poses before the first contact"
    );
    let (dev_with, dev_without) = (
        trunk_deviation_deg(&c, &with, &trunk),
        trunk_deviation_deg(&c, &without, &trunk),
    );
    let peak = |d: &[f64]| d.iter().copied().fold(0.0, f64::max);
    let (p_with, p_without) = (peak(&dev_with), peak(&dev_without));
    eprintln!("trunk peak deviation: {p_with:.2}° with the reflex delay, {p_without:.2}° without");
    assert!(
        p_with > 1.5 * p_without && p_with > 3.0,
        "the trunk should yield: {p_with:.2}° with the reflex delay, {p_without:.2}° without"
    );
    for (name, sim) in [("with", &with), ("without", &without)] {
        let m = perturb_metrics(sim);
        assert!(!m.fell, "{name}: a handball must not knock the walk down");
        let r = m.recovery_time_s.unwrap_or(f64::INFINITY);
        assert!(r <= 2.0, "{name}: back within 2° in {r} s");
    }
    // once the reflex is over (latency + ramp), the trunk returns toward the mocap
    let window = ImpactReflex::default().duration_s();
    let late: Vec<f64> = with
        .record
        .times
        .iter()
        .zip(&dev_with)
        .filter(|(t, _)| **t > contact + window + 1.0)
        .map(|(_, d)| *d)
        .collect();
    assert!(
        !late.is_empty(),
        "the clip runs on a second after the reflex"
    );
    assert!(
        peak(&late) < 0.5 * p_with,
        "a second after the reflex the trunk is back: {:.2}° against a {p_with:.2}° peak",
        peak(&late)
    );
}

#[test]
fn a_pelvis_hit_moves_the_pelvis_further_while_the_hand_of_god_is_late_too() {
    let c = walk();
    let run = |root_frequency_fraction: f64| {
        let reflex = ImpactReflex {
            root_frequency_fraction,
            ..ImpactReflex::default()
        };
        perturb_metrics(&hit(&c, "t=1.5,target=pelvis,speed=12", reflex))
    };
    let (late, held) = (
        run(ImpactReflex::default().root_frequency_fraction),
        run(1.0),
    );
    eprintln!(
        "pelvis handball: pelvis moved {:.1} mm with the hand of god late, {:.1} mm held",
        late.root_peak_displacement_m * 1e3,
        held.root_peak_displacement_m * 1e3
    );
    assert!(
        late.root_peak_displacement_m > 1.3 * held.root_peak_displacement_m,
        "{} m against {} m",
        late.root_peak_displacement_m,
        held.root_peak_displacement_m
    );
    for m in [&late, &held] {
        assert!(!m.fell);
        assert!(m.recovery_time_s.is_some_and(|r| r <= 2.0), "{m:?}");
        assert!(m.foot_slip_mm <= 20.0, "{}", m.foot_slip_mm);
    }
}

/// While the trunk's feedback is late it still gives the unperturbed path's torques (the
/// planned part): a 1 g ball that barely touches the chest leaves the figure where it is
/// with the reflex delay as without it. Dropping the gains alone (the step's feedforward
/// was computed with them) moved the spine by 0.052° on the demo walk (0.019° without the
/// reflex delay) and by 0.585° on CMU 01_01 as it jumped (0.008°).
#[test]
fn a_tap_leaves_the_trunk_on_its_path_while_the_reflex_is_late() {
    // a 1 g ball to the chest at `t`: the peak deviation with the reflex delay stays
    // within `slack` (°) of the one without
    let check = |name: &str, c: &Character, t: f64, slack: f64| {
        let tap = |reflex: ImpactReflex| {
            perturb_metrics(&hit(
                c,
                &format!("t={t},target=chest,speed=12,mass=0.001"),
                reflex,
            ))
        };
        let (late, off) = (tap(ImpactReflex::default()), tap(ImpactReflex::OFF));
        assert!(late.balls[0].hit && off.balls[0].hit, "{name}");
        eprintln!(
            "{name}, 1 g tap: {:.4}° with the reflex delay, {:.4}° without",
            late.peak_deviation_deg, off.peak_deviation_deg
        );
        assert!(
            late.peak_deviation_deg < off.peak_deviation_deg + slack,
            "{name}: {} against {}",
            late.peak_deviation_deg,
            off.peak_deviation_deg
        );
    };
    check("demo walk", &walk(), 1.5, 0.015);
    if let Some(path) = common::shared_clip("cmu_01_01_jumps_turn.bvh") {
        let c = Character::load(&path, &CharacterOptions::default()).expect("CMU 01_01 loads");
        check("CMU 01_01 jumping", &c, 2.0, 0.05);
    }
}
