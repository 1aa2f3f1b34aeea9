//! The repo's demo clips and every real clip in ../shared/mocap (skipped when absent): a
//! plausible human model (adult stature, a body-mass index of 23, de Leva's segment masses,
//! physical inertia), a reference motion and finite inverse-dynamics torques; walking
//! torques of the order biomechanics reports.

mod common;

use jostle::skeleton::anthropometry::{Segment, SegmentSlot, Side, female, male};
use jostle::{Character, CharacterOptions};
use nalgebra::SymmetricEigen;

/// The repo's clips, then the shared ones when they are there (all 20 of them).
fn all_clips() -> Vec<std::path::PathBuf> {
    let clips = common::repo_and_shared_clips();
    let shared = clips.len() - common::repo_clips().len();
    assert!(
        shared == 0 || shared >= 20,
        "expected the 20 shared clips, found {shared}"
    );
    clips
}

/// Largest |τ| over the table (N·m) of the DOFs whose name starts with `prefix`.
fn peak_torque(names: &[String], tau: &[Vec<f64>], prefix: &str) -> f64 {
    names
        .iter()
        .enumerate()
        .filter(|(_, n)| n.starts_with(prefix))
        .map(|(i, _)| tau.iter().map(|t| t[i].abs()).fold(0.0, f64::max))
        .fold(0.0, f64::max)
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
        let peak = |prefix: &str| peak_torque(&names, &table.tau, prefix);
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
    let peak = |prefix: &str| peak_torque(&names, &table.tau, prefix);
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
fn every_clip_is_an_adult_with_de_leva_segment_masses() {
    // All the shared actors are adults: 1.55–1.95 m, a body-mass index of 23 by default,
    // and the limbs' and head's shares of the body mass within 15 % of de Leva's male and
    // female tables (the model uses their mean).
    let limbs = [
        Segment::Thigh,
        Segment::Shank,
        Segment::Foot,
        Segment::UpperArm,
        Segment::Forearm,
        Segment::Hand,
    ];
    let mut slots: Vec<SegmentSlot> = limbs
        .iter()
        .flat_map(|&segment| [Side::Left, Side::Right].map(|side| SegmentSlot { segment, side }))
        .collect();
    slots.push(SegmentSlot {
        segment: Segment::HeadNeck,
        side: Side::Middle,
    });
    for path in all_clips() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
        let m = &c.model;
        let (h, total) = (m.figure.height_m, m.total_mass());
        eprintln!(
            "{name:45} {h:.3} m ({}) {total:5.1} kg",
            m.figure.stature_source
        );
        assert!((1.55..=1.95).contains(&h), "{name}: stature {h} m");
        assert!((20.0..=26.0).contains(&m.bmi()), "{name}: BMI {}", m.bmi());
        let sum: f64 = m.bodies.iter().map(|b| b.mass).sum();
        assert!((sum - 23.0 * h * h).abs() < 1e-9 * sum, "{name}: {sum} kg");
        for &slot in &slots {
            let fraction = m.segment_mass(slot) / total;
            for table in [male(slot.segment), female(slot.segment)] {
                let ratio = fraction / table.mass_fraction;
                assert!(
                    (0.85..=1.15).contains(&ratio),
                    "{name}: {} is {:.2} % of the body, de Leva {:.2} %",
                    slot.name(),
                    100.0 * fraction,
                    100.0 * table.mass_fraction
                );
            }
        }
    }
}

#[test]
fn every_body_of_every_clip_has_physical_inertia() {
    for path in all_clips() {
        let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
        for b in &c.model.bodies {
            let what = format!("{}: {}", path.display(), b.name);
            assert!(
                b.mass > 0.0 && b.mass.is_finite(),
                "{what}: mass {}",
                b.mass
            );
            assert!(
                (b.inertia - b.inertia.transpose()).norm() <= 1e-12 * b.inertia.norm(),
                "{what}: inertia not symmetric"
            );
            let mut p: Vec<f64> = SymmetricEigen::new(b.inertia)
                .eigenvalues
                .iter()
                .copied()
                .collect();
            p.sort_by(f64::total_cmp);
            assert!(p[0] > 0.0, "{what}: not positive definite {p:?}");
            assert!(
                p[2] <= (p[0] + p[1]) * (1.0 + 1e-9),
                "{what}: principal moments {p:?} break the triangle inequality"
            );
            assert!(
                b.capsules
                    .iter()
                    .all(|cp| cp.radius > 0.0 && cp.radius < 0.2),
                "{what}: capsule radii"
            );
        }
    }
}

#[test]
fn mass_and_height_options_on_a_real_clip() {
    let path = common::shared_clip_or_repo("cmu_walk_bvhmatlab.bvh", "demo_walk.bvh");
    let base = Character::load(&path, &CharacterOptions::default()).expect("loads");
    let mut opts = CharacterOptions::default();
    opts.model.mass_kg = Some(80.0);
    opts.model.frames.height_m = Some(1.8);
    let c = Character::load(&path, &opts).expect("loads");
    assert!((c.model.total_mass() - 80.0).abs() < 1e-9);
    assert!((c.model.figure.height_m - 1.8).abs() < 1e-12);
    assert_eq!(c.model.figure.unit, "--height");
    // the same figure, rescaled: every bone (joint point in the parent's frame) is
    // 1.8 / stature as long
    let k = 1.8 / base.model.figure.height_m;
    let bone = |m: &jostle::Model, i: usize| {
        let b = &m.bodies[i];
        let p = b.parent.expect("a child");
        (b.joint.as_ref().expect("joint").parent_anchor + m.bodies[p].com).norm()
    };
    for i in 1..base.model.num_bodies() {
        let (la, lb) = (bone(&base.model, i), bone(&c.model, i));
        assert!(
            (lb - k * la).abs() < 1e-9,
            "{}: {la} -> {lb}",
            base.model.bodies[i].name
        );
    }
    // same inputs, same model
    assert_eq!(Character::load(&path, &opts).expect("loads").model, c.model);
}

#[test]
fn cgspeed_tpose_frames_are_dropped_and_units_detected() {
    // The repo's demo clips: centimetres, walking (or standing) from the first frame. The
    // shared clips: the units chosen before statures came from the whole bone chain,
    // unchanged.
    let mut cases = vec![
        (common::repo_clip("demo_walk.bvh"), false, "cm"),
        (common::repo_clip("demo_wave.bvh"), false, "cm"),
    ];
    let shared = common::shared_dir_or_skip_part("the shared clips' units");
    if let Some(d) = &shared {
        for (file, tpose, unit) in [
            ("arena_louise.bvh", false, "cm"),
            ("bandai1_bow_normal_001.bvh", false, "cm"),
            ("bandai1_dance_short_normal_001_LONG.bvh", false, "cm"),
            ("bandai1_kick_normal_001.bvh", false, "cm"),
            ("bandai1_punch_normal_001.bvh", false, "cm"),
            ("bandai1_run_happy_001.bvh", false, "cm"),
            ("bandai1_walk_normal_001.bvh", false, "cm"),
            ("cmu_01_01_jumps_turn.bvh", true, "CMU unit (5.64 cm)"),
            ("cmu_walk_bvhmatlab.bvh", true, "CMU unit (5.64 cm)"),
            ("cmu_walk_dme_example.bvh", true, "CMU unit (5.64 cm)"),
            ("cmusl_60_12_salsa_lead_m.bvh", false, "fitted"),
            ("iclone_cmu_02_01_walk.bvh", false, "cm"),
            ("iclone_cmu_02_05_punch_strike.bvh", false, "cm"),
            ("iclone_cmu_05_02_dance_pirouette.bvh", false, "cm"),
            ("mixamo_freebvh.bvh", false, "cm"),
            ("mocapbank_sit_stand.bvh", false, "cm"),
            ("pymo_av_8walk_meredith.bvh", false, "in"),
            ("xia_angry_13_000_run.bvh", false, "CMU unit (5.64 cm)"),
            (
                "xia_depressed_18_000_punch.bvh",
                false,
                "CMU unit (5.64 cm)",
            ),
            ("xia_neutral_01_000_walk.bvh", false, "CMU unit (5.64 cm)"),
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

/// The world poses the model build returns (and the reference fit reuses) are the ones the
/// fit would compute itself from the model's figure, bit for bit, on every clip: the
/// loaded character's reference is the one `Reference::fit` gives.
#[test]
fn the_model_builds_world_poses_are_the_reference_fits_to_the_bit() {
    use jostle::skeleton::{ClipFrames, ModelOptions, build_model_with_poses};
    for path in all_clips() {
        let name = path.display().to_string();
        let clip = jostle::mocap::load_bvh(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (model, poses) = build_model_with_poses(&clip, &ModelOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let frames = ClipFrames::from_figure(&clip, &model.figure);
        assert_eq!(poses.len(), frames.num_frames(), "{name}");
        for (f, pose) in poses.iter().enumerate() {
            let own = frames.world(f);
            let bits = |p: &[(nalgebra::Vector3<f64>, nalgebra::UnitQuaternion<f64>)]| {
                p.iter()
                    .flat_map(|(x, q)| x.iter().chain(q.coords.iter()).map(|v| v.to_bits()))
                    .collect::<Vec<u64>>()
            };
            assert_eq!(bits(pose), bits(&own), "{name}, frame {f}");
        }
    }
}
