//! A run that keeps in its record only the step poses its frames read
//! (`Simulation::keep_frame_poses_only`, what `batch`, `perturb` and `simulate` do) exports
//! the same trajectory, to the bit, as one that keeps every step's pose (the viewer's).

use jostle::sim::balls::Ball;
use jostle::sim::scenario::{BallSpec, Scenario};
use jostle::sim::{SimOptions, Simulation};
use jostle::{Character, CharacterOptions};

fn load(name: &str) -> Character {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("mocap")
        .join(name);
    Character::load(&path, &CharacterOptions::default()).expect("clip loads")
}

/// Run `c` from `start_s` with a chest ball arriving at `hit_s`, keeping every pose or
/// only the frames'.
fn run(c: &Character, start_s: f64, hit_s: f64, frames_only: bool) -> Simulation<'_> {
    let spec = format!("t={hit_s},target=chest,speed=12");
    let launches = Scenario {
        balls: vec![BallSpec::from_flag(&spec).expect("ball spec")],
    }
    .launches(&c.model, &c.reference, "test")
    .expect("launches");
    let mut sim = Simulation::new(c, SimOptions::default()).expect("feedforward");
    if frames_only {
        sim.keep_frame_poses_only();
    }
    sim.reset_from(start_s);
    for l in &launches {
        sim.throw(Ball::from_launch(l));
    }
    sim.run().expect("runs");
    sim
}

#[test]
fn keeping_only_the_frames_poses_exports_the_same_trajectory() {
    // the wave at 60 fps (frame time 1/60 s rounded in the file, not 4 steps of 1/240),
    // from its start and from later; the walk at 120 fps
    for (clip, start_s, hit_s) in [
        ("demo_wave.bvh", 0.0, 0.9),
        ("demo_wave.bvh", 0.5, 1.2),
        ("demo_walk.bvh", 1.0, 1.5),
    ] {
        let c = load(clip);
        let (all, few) = (
            run(&c, start_s, hit_s, false),
            run(&c, start_s, hit_s, true),
        );
        assert!(all.balls[0].hits.iter().any(|h| h.impulse.norm() > 0.0));
        let (ta, tf) = (all.trajectory(), few.trajectory());
        assert_eq!(ta, tf, "{clip} from {start_s} s: the trajectories differ");
        let kept = |s: &Simulation| s.record.poses.iter().filter(|p| !p.is_empty()).count();
        let frames = tf.poses.len();
        assert!(
            kept(&few) <= 2 * frames + 1,
            "{clip}: {} poses kept for {frames} frames",
            kept(&few)
        );
        // every step after the start is recorded when all are kept; the 60 fps clip
        // needs about half of them
        assert_eq!(kept(&all), all.num_steps() - all.start_step);
        if clip == "demo_wave.bvh" {
            assert!(
                kept(&few) * 10 < kept(&all) * 6,
                "{} of {}",
                kept(&few),
                kept(&all)
            );
        }
        assert_eq!(few.record.poses.len(), all.record.poses.len());
        assert!(!few.record.poses.last().expect("steps").is_empty());
    }
}

#[test]
fn a_run_cut_short_still_ends_on_its_last_pose() {
    let c = load("demo_wave.bvh");
    let mut all = Simulation::new(&c, SimOptions::default()).expect("feedforward");
    let mut few = Simulation::new(&c, SimOptions::default()).expect("feedforward");
    few.keep_frame_poses_only();
    for k in 1..=37 {
        all.step(None).expect("steps");
        few.step(None).expect("steps");
        // the latest pose is always there, and the same
        assert_eq!(few.record.poses.last(), all.record.poses.last(), "step {k}");
    }
    let empty = few.record.poses.iter().filter(|p| p.is_empty()).count();
    assert!(empty > 0, "no pose was dropped in 37 steps");
}
