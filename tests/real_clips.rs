//! The repo's demo clips and every real clip in ../shared/mocap (skipped when absent): a
//! plausible human model, a reference motion and finite inverse-dynamics torques; walking
//! torques of the order biomechanics reports.

mod common;

use jostle::{Character, CharacterOptions};

/// The repo's clips, then the shared ones when they are there.
fn all_clips() -> Vec<std::path::PathBuf> {
    let mut clips = common::repo_clips();
    let Some(shared) = common::shared_dir_or_skip_part("shared clips") else {
        return clips;
    };
    let mut v: Vec<_> = std::fs::read_dir(shared)
        .expect("the shared clip folder")
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
    clips.extend(v);
    clips
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
fn walk_hip_and_knee_torques_are_tens_of_newton_metres() {
    // Winter, "Biomechanics and Motor Control of Human Movement" (4th ed., 2009), ch. 5:
    // in walking, hip and knee moments peak at roughly 0.5–1 N·m/kg (tens of N·m). With
    // the root pinned to the mocap path, the legs do not carry the body weight (the hand of
    // god does), so the swing-phase moments dominate: ~10–80 N·m for a ~56 kg model. The
    // repo's demo walk (73 kg, ±25° thigh swing) peaks at 42.6 N·m (hips) and 20.2 N·m
    // (knees), measured: inside the same bounds, and the same on both sides (the generator
    // mirrors the legs half a stride apart).
    let mut paths = vec![common::repo_clip("demo_walk.bvh")];
    if let Some(d) = common::shared_dir_or_skip_part("cmu_walk_bvhmatlab.bvh") {
        paths.push(d.join("cmu_walk_bvhmatlab.bvh"));
    }
    for path in paths {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
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
            eprintln!("{file}: {joint} peak {p:.1} N·m");
            assert!(
                (lo..=hi).contains(&p),
                "{file}: {joint}: peak torque {p} N·m outside [{lo}, {hi}]"
            );
        }
        if file == "demo_walk.bvh" {
            for (l, r) in [("LeftUpLeg.", "RightUpLeg."), ("LeftLeg.", "RightLeg.")] {
                let (pl, pr) = (peak(l), peak(r));
                assert!(
                    (pl - pr).abs() < 0.05 * pl.max(pr),
                    "{file}: {l} {pl} N·m vs {r} {pr} N·m in a symmetric walk"
                );
            }
        }
    }
}

#[test]
fn demo_wave_torques_are_in_the_waving_arm() {
    // The repo's demo wave stands still and waves the right arm above the head: the right
    // shoulder raises and swings the arm (peak 26.0 N·m, measured; gravity alone on a
    // ~3.6 kg arm held horizontal is ~10 N·m), while the hanging left arm (2.5 N·m) and the
    // legs (0.75 N·m) barely work. Bounds with a factor ≥ 2 of margin.
    let c = Character::load(
        &common::repo_clip("demo_wave.bvh"),
        &CharacterOptions::default(),
    )
    .expect("loads");
    let table = c.inverse_dynamics(1.0 / 240.0);
    assert!(table.tau.iter().flatten().all(|v| v.is_finite()));
    let names = c.dof_names();
    let peak = |prefix: &str| {
        names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.starts_with(prefix))
            .map(|(i, _)| table.tau.iter().map(|t| t[i].abs()).fold(0.0, f64::max))
            .fold(0.0, f64::max)
    };
    let right = peak("RightArm.");
    let left = peak("LeftArm.");
    let legs = ["LeftUpLeg.", "RightUpLeg.", "LeftLeg.", "RightLeg."]
        .map(peak)
        .into_iter()
        .fold(0.0, f64::max);
    eprintln!("right shoulder {right:.1} N·m, left {left:.1} N·m, legs {legs:.2} N·m");
    assert!(
        (10.0..=60.0).contains(&right),
        "waving shoulder peaks at {right} N·m"
    );
    assert!(left < 8.0 && left * 4.0 < right, "hanging arm {left} N·m");
    assert!(legs < 5.0, "standing legs peak at {legs} N·m");
}

#[test]
fn cgspeed_tpose_frames_are_dropped_and_units_detected() {
    // the repo's demo clips: centimetres, walking (or standing) from the first frame
    let mut cases = vec![
        (common::repo_clip("demo_walk.bvh"), false, "cm"),
        (common::repo_clip("demo_wave.bvh"), false, "cm"),
    ];
    let shared = common::shared_dir_or_skip_part("cmu, xia, bandai, pymo, mixamo clips");
    if let Some(d) = &shared {
        for (file, tpose, unit) in [
            ("cmu_walk_bvhmatlab.bvh", true, "CMU unit (5.64 cm)"),
            ("cmu_01_01_jumps_turn.bvh", true, "CMU unit (5.64 cm)"),
            ("xia_neutral_01_000_walk.bvh", false, "CMU unit (5.64 cm)"),
            ("bandai1_walk_normal_001.bvh", false, "cm"),
            ("pymo_av_8walk_meredith.bvh", false, "in"),
            ("mixamo_freebvh.bvh", false, "cm"),
        ] {
            cases.push((d.join(file), tpose, unit));
        }
    }
    for (path, tpose, unit) in cases {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
        assert_eq!(
            c.model.figure.first_frame == 1,
            tpose,
            "{file}: T-pose detection"
        );
        assert_eq!(c.model.figure.unit, unit, "{file}: unit");
    }
    // --keep-first-frame keeps it
    if let Some(d) = &shared {
        let mut opts = CharacterOptions::default();
        opts.model.frames.keep_first_frame = true;
        let c = Character::load(&d.join("cmu_walk_bvhmatlab.bvh"), &opts).expect("loads");
        assert_eq!(c.model.figure.first_frame, 0);
    }
}

#[test]
fn iclone_zup_rest_skeleton_and_bandai_carrier_root_give_upright_figures() {
    let Some(shared) = common::shared_dir_or_skip() else {
        return;
    };
    for file in ["iclone_cmu_02_01_walk.bvh", "bandai1_walk_normal_001.bvh"] {
        let c = Character::load(&shared.join(file), &CharacterOptions::default()).expect("loads");
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
