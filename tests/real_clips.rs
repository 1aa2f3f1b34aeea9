//! Every real clip in ../shared/mocap: a plausible human model, a reference motion and
//! finite inverse-dynamics torques; walking torques of the order biomechanics reports.

mod common;

use jostle::{Character, CharacterOptions};

fn all_clips() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(common::shared_dir())
        .expect("../shared/mocap must exist (CI has it beside the clone)")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
        .collect();
    v.sort();
    assert!(
        v.len() >= 20,
        "expected the 20 shared clips, found {}",
        v.len()
    );
    v
}

#[test]
fn every_clip_yields_a_plausible_human_with_finite_torques() {
    for path in all_clips() {
        let c = Character::load(&path, &CharacterOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (h, m) = (c.model.figure.height_m, c.model.total_mass());
        eprintln!(
            "{:45} {:.3} m {:6.1} kg {} bodies",
            path.file_name().unwrap().to_string_lossy(),
            h,
            m,
            c.model.num_bodies()
        );
        assert!((1.4..=2.0).contains(&h), "{}: height {h} m", path.display());
        assert!(
            (45.0..=110.0).contains(&m),
            "{}: mass {m} kg",
            path.display()
        );
        assert!(
            c.model.num_bodies() >= 15,
            "{}: only {} bodies",
            path.display(),
            c.model.num_bodies()
        );
        let table = c.inverse_dynamics(1.0 / 120.0);
        assert!(
            table.tau.iter().flatten().all(|v| v.is_finite()),
            "{}: non-finite torque",
            path.display()
        );
        assert!(table.root.iter().flatten().all(|v| v.is_finite()));
        // Over a whole clip the hand of god carries the body weight on average (the mean
        // vertical acceleration of the COM is small): within 10 %, on clips of 4 s or more
        // (a 1.2 s run is not a whole number of strides).
        if c.reference.duration < 4.0 {
            continue;
        }
        let weight = m * 9.81;
        let mean_fy = table.root.iter().map(|r| r[1]).sum::<f64>() / table.root.len() as f64;
        assert!(
            (mean_fy - weight).abs() < 0.1 * weight,
            "{}: mean root force {mean_fy} N vs weight {weight} N",
            path.display()
        );
    }
}

#[test]
fn cmu_walk_hip_and_knee_torques_are_tens_of_newton_metres() {
    // Winter, "Biomechanics and Motor Control of Human Movement" (4th ed., 2009), ch. 5:
    // in walking, hip and knee moments peak at roughly 0.5–1 N·m/kg (tens of N·m). With
    // the root pinned to the mocap path, the legs do not carry the body weight (the hand of
    // god does), so the swing-phase moments dominate: ~10–80 N·m for a ~56 kg model.
    let path = common::shared_dir().join("cmu_walk_bvhmatlab.bvh");
    let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
    let table = c.inverse_dynamics(1.0 / 240.0);
    let names = c.dof_names();
    let peak = |prefix: &str| {
        names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.starts_with(prefix))
            .map(|(i, _)| table.tau.iter().map(|t| t[i].abs()).fold(0.0, f64::max))
            .fold(0.0, f64::max)
    };
    for (joint, lo, hi) in [
        ("LeftUpLeg.", 10.0, 120.0),
        ("RightUpLeg.", 10.0, 120.0),
        ("LeftLeg.", 5.0, 80.0),
        ("RightLeg.", 5.0, 80.0),
    ] {
        let p = peak(joint);
        eprintln!("{joint} peak {p:.1} N·m");
        assert!(
            (lo..=hi).contains(&p),
            "{joint}: peak torque {p} N·m outside [{lo}, {hi}]"
        );
    }
}

#[test]
fn cgspeed_tpose_frames_are_dropped_and_units_detected() {
    for (file, tpose, unit) in [
        ("cmu_walk_bvhmatlab.bvh", true, "CMU unit (5.64 cm)"),
        ("cmu_01_01_jumps_turn.bvh", true, "CMU unit (5.64 cm)"),
        ("xia_neutral_01_000_walk.bvh", false, "CMU unit (5.64 cm)"),
        ("bandai1_walk_normal_001.bvh", false, "cm"),
        ("pymo_av_8walk_meredith.bvh", false, "in"),
        ("mixamo_freebvh.bvh", false, "cm"),
    ] {
        let c = Character::load(
            &common::shared_dir().join(file),
            &CharacterOptions::default(),
        )
        .expect("loads");
        assert_eq!(
            c.model.figure.first_frame == 1,
            tpose,
            "{file}: T-pose detection"
        );
        assert_eq!(c.model.figure.unit, unit, "{file}: unit");
    }
    // --keep-first-frame keeps it
    let mut opts = CharacterOptions::default();
    opts.model.frames.keep_first_frame = true;
    let c = Character::load(&common::shared_dir().join("cmu_walk_bvhmatlab.bvh"), &opts)
        .expect("loads");
    assert_eq!(c.model.figure.first_frame, 0);
}

#[test]
fn iclone_zup_rest_skeleton_and_bandai_carrier_root_give_upright_figures() {
    for file in ["iclone_cmu_02_01_walk.bvh", "bandai1_walk_normal_001.bvh"] {
        let c = Character::load(
            &common::shared_dir().join(file),
            &CharacterOptions::default(),
        )
        .expect("loads");
        let mut kin = vec![Default::default(); c.model.num_bodies()];
        c.reference
            .sample(&c.model, 0.5, &mut Default::default(), &mut kin);
        let head = c.model.find_body("head").expect("head role");
        let foot = c.model.find_body("left_foot").expect("foot role");
        let k: &Vec<jostle::motion::kinematics::BodyKinematics> = &kin;
        assert!(
            k[head].x.y - k[foot].x.y > 1.0,
            "{file}: head not above the feet"
        );
    }
}
