//! Figures from hand-made skeletons with known bone lengths: stature, masses, centres of
//! mass and inertia against values computed by hand from de Leva's Table 4.

use super::*;
use crate::mocap::parse_bvh;
use nalgebra::SymmetricEigen;

/// A CMU-named figure in cm, standing still (3 identical frames). Legs: hip joints 10 cm to
/// the sides and 5 cm below the pelvis joint, thigh 40, shank 42; trunk: pelvis → Spine
/// `spine`, → Spine1 `chest`, → Neck1 `neck`, → Head 10, head End Site 22 cm up; arms:
/// upper arm 28, forearm 26, hand End Site 8.
fn figure(spine: f64, chest: f64, neck: f64) -> String {
    let leg = |side: &str, x: f64| leg_chain(side, x, ["UpLeg", "Leg", "Foot"]);
    let arm = |side: &str, x: f64| arm_chain(side, x, ["Arm", "ForeArm", "Hand"], [18.0, 20.0]);
    format!(
        "HIERARCHY
ROOT Hips {{ OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
{}
{}
JOINT Spine {{ OFFSET 0 {spine} 0 CHANNELS 3 Zrotation Xrotation Yrotation
  JOINT Spine1 {{ OFFSET 0 {chest} 0 CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Neck1 {{ OFFSET 0 {neck} 0 CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT Head {{ OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation
        End Site {{ OFFSET 0 22 0 }} }} }}
    {}
    {} }} }} }}
",
        leg("Left", 10.0),
        leg("Right", -10.0),
        arm("Left", 1.0),
        arm("Right", -1.0),
    )
}

/// One leg, its joints named `side` + `names` (thigh, shank, foot): the hip joint `x` cm to
/// the side and 5 cm below the pelvis joint, thigh 40, shank 42, a foot 15 cm long.
fn leg_chain(side: &str, x: f64, names: [&str; 3]) -> String {
    let [thigh, shank, foot] = names;
    format!(
        "JOINT {side}{thigh} {{ OFFSET {x} -5 0 CHANNELS 3 Zrotation Xrotation Yrotation
  JOINT {side}{shank} {{ OFFSET 0 -40 0 CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT {side}{foot} {{ OFFSET 0 -42 0 CHANNELS 3 Zrotation Xrotation Yrotation
      End Site {{ OFFSET 0 -5 15 }} }} }} }}"
    )
}

/// One arm, its joints named `side` + `names` (upper arm, forearm, hand), starting at
/// (`at[0]` · `x`, `at[1]`, 0) cm from its parent joint (`x` = ±1: the side): upper arm
/// 28, forearm 26, hand End Site 8 cm along ±x.
fn arm_chain(side: &str, x: f64, names: [&str; 3], at: [f64; 2]) -> String {
    let [upper, fore, hand] = names;
    format!(
        "JOINT {side}{upper} {{ OFFSET {} {} 0 CHANNELS 3 Zrotation Xrotation Yrotation
  JOINT {side}{fore} {{ OFFSET {} 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT {side}{hand} {{ OFFSET {} 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
      End Site {{ OFFSET {} 0 0 }} }} }} }}",
        at[0] * x,
        at[1],
        28.0 * x,
        26.0 * x,
        8.0 * x
    )
}

/// The hierarchy with a MOTION section of `frames` frames of zeros (standing still).
fn with_motion(hierarchy: &str, frames: usize) -> String {
    posed(hierarchy, frames, 0.0)
}

/// The hierarchy held in one pose: every rotation channel at `degrees`.
fn posed(hierarchy: &str, frames: usize, degrees: f64) -> String {
    let words: Vec<&str> = hierarchy.split_whitespace().collect();
    let values: Vec<String> = words
        .iter()
        .filter(|w| w.ends_with("position") || w.ends_with("rotation"))
        .map(|w| {
            if w.ends_with("rotation") {
                degrees.to_string()
            } else {
                "0".to_string()
            }
        })
        .collect();
    let frame = values.join(" ");
    let mut text = format!("{hierarchy}\nMOTION\nFrames: {frames}\nFrame Time: 0.0333333\n");
    for _ in 0..frames {
        text += &frame;
        text += "\n";
    }
    text
}

fn clip(hierarchy: &str) -> crate::mocap::Clip {
    parse_bvh(&with_motion(hierarchy, 3), "hand-made.bvh").expect("parses")
}

fn build(hierarchy: &str, opts: &ModelOptions) -> Model {
    build_model(&clip(hierarchy), opts).expect("builds")
}

fn body<'m>(m: &'m Model, role: &str) -> &'m Body {
    &m.bodies[m.find_body(role).expect(role)]
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "{what}: {a} vs {b}"
    );
}

/// Symmetric, positive definite, principal moments within the triangle inequality.
pub(crate) fn assert_physical_inertia(m: &Model) {
    for b in &m.bodies {
        assert!(
            b.mass > 0.0 && b.mass.is_finite(),
            "{}: mass {}",
            b.name,
            b.mass
        );
        assert!((b.inertia - b.inertia.transpose()).norm() <= 1e-12 * b.inertia.norm());
        let e = SymmetricEigen::new(b.inertia).eigenvalues;
        let mut v: Vec<f64> = e.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        assert!(
            v[0] > 0.0,
            "{}: inertia not positive definite: {v:?}",
            b.name
        );
        assert!(
            v[2] <= (v[0] + v[1]) * (1.0 + 1e-9),
            "{}: principal moments {v:?} break the triangle inequality",
            b.name
        );
        for c in &b.capsules {
            assert!(c.radius > 0.0 && c.radius.is_finite(), "{}", b.name);
        }
    }
}

#[test]
fn hand_made_figure_stature_and_masses_by_hand() {
    let m = build(&figure(10.0, 20.0, 25.0), &ModelOptions::default());
    assert_eq!(m.spec_name, "cmu31");
    assert_eq!(m.figure.unit, "cm");
    assert_eq!(m.figure.stature_source, "whole_chain");
    // Whole chain: legs 40 + 42, hip joints 5 below the pelvis, trunk 10 + 20 + 25 + 10 to
    // the head joint, the head's End Site 22 above it (more than 11.6 % of the stature),
    // the sole 3.9 % of the stature below the ankle.
    let h = (0.82 + 0.05 + 0.65 + 0.22) / (1.0 - 0.039);
    close(m.figure.height_m, h, "stature");
    // Default mass: body-mass index 23.
    let total = 23.0 * h * h;
    close(m.total_mass(), total, "total mass");
    close(m.bmi(), 23.0, "bmi");
    // de Leva's male and female mass percentages averaged, over their sum 99.995 %.
    let pct = |male: f64, female: f64| total * (male + female) / 2.0 / 99.995;
    close(body(&m, "left_thigh").mass, pct(14.16, 14.78), "thigh");
    close(body(&m, "right_shin").mass, pct(4.33, 4.81), "shank");
    close(body(&m, "left_foot").mass, pct(1.37, 1.29), "foot");
    close(
        body(&m, "left_upper_arm").mass,
        pct(2.71, 2.55),
        "upper arm",
    );
    close(body(&m, "right_forearm").mass, pct(1.62, 1.38), "forearm");
    close(body(&m, "left_hand").mass, pct(0.61, 0.56), "hand");
    close(body(&m, "pelvis").mass, pct(11.17, 12.47), "lower trunk");
    close(body(&m, "abdomen").mass, pct(16.33, 14.65), "middle trunk");
    // no clavicle bodies: the chest keeps the whole upper trunk
    close(body(&m, "chest").mass, pct(15.96, 15.45), "upper trunk");
    // head+neck is one de Leva segment: 85 % head, 15 % neck
    close(body(&m, "head").mass, 0.85 * pct(6.94, 6.68), "head");
    close(body(&m, "neck").mass, 0.15 * pct(6.94, 6.68), "neck");

    // Thigh: COM 38.535 % down the 40 cm hip → knee line; radii of gyration (% of 40 cm)
    // 15.55 about the long axis and √((34.9² + 34.65²)/2) across it.
    let thigh = body(&m, "left_thigh");
    close(thigh.com.y, -0.40 * 0.38535, "thigh COM");
    assert!(thigh.com.x.abs() < 1e-12 && thigh.com.z.abs() < 1e-12);
    let r_t = ((0.349f64.powi(2) + 0.3465f64.powi(2)) / 2.0).sqrt() * 0.40;
    close(
        thigh.inertia[(0, 0)],
        thigh.mass * r_t * r_t,
        "thigh transverse",
    );
    close(
        thigh.inertia[(2, 2)],
        thigh.mass * r_t * r_t,
        "thigh transverse",
    );
    close(
        thigh.inertia[(1, 1)],
        thigh.mass * (0.1555 * 0.40f64).powi(2),
        "thigh long",
    );
    // Head: the vertex 11.6 % of stature above the head joint (the End Site is 22 cm, the
    // table's share less: the capsule reaches the farther), COM 49.215 % of the vertex → C7
    // length (13.999 % of stature) below the vertex.
    let head = body(&m, "head");
    let to_vertex = (203.3 / 1741.0 + 200.2 / 1735.0) / 2.0 * h;
    let head_neck = (242.9 / 1741.0 + 243.7 / 1735.0) / 2.0 * h;
    close(head.com.y, to_vertex - 0.49215 * head_neck, "head COM");
    let top = head
        .capsules
        .iter()
        .map(|c| (head.com + c.b).y + c.radius)
        .fold(f64::MIN, f64::max);
    close(
        top,
        0.22f64.max(to_vertex),
        "head capsule reaches the vertex",
    );
    // Pelvis: COM 55.175 % of the way from the abdomen joint (10 cm up) to the hip joints'
    // centre (5 cm down).
    close(
        body(&m, "pelvis").com.y,
        0.10 - 0.55175 * 0.15,
        "pelvis COM",
    );
    // Capsules hold each body's mass at 1050 kg/m³: the thigh's capsule is a sphere at the
    // hip and a 40 cm cylinder (the knee is the shin's joint, not a leaf: no end cap).
    let r = thigh.capsules[0].radius;
    let v = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3) + std::f64::consts::PI * r * r * 0.40;
    close(v * 1050.0, thigh.mass, "thigh capsule volume");
    assert_physical_inertia(&m);
    // the figure is symmetric, so are the trunk bodies' inertia and COM
    for role in ["pelvis", "abdomen", "chest"] {
        let b = body(&m, role);
        assert!(b.com.x.abs() < 1e-12, "{role} COM off the midline");
        assert!(b.inertia[(0, 1)].abs() < 1e-12 && b.inertia[(0, 2)].abs() < 1e-12);
    }
    // shares: what each body got of which segment
    let shares = |role: &str| -> Vec<(String, f64)> {
        body(&m, role)
            .segments
            .iter()
            .map(|s| (s.slot.name(), s.fraction))
            .collect()
    };
    assert_eq!(shares("left_thigh"), vec![("left_thigh".to_string(), 1.0)]);
    assert_eq!(shares("neck"), vec![("head_neck".to_string(), 0.15)]);
}

#[test]
fn mass_and_height_options() {
    let text = figure(10.0, 20.0, 25.0);
    let h = (0.82 + 0.05 + 0.65 + 0.22) / (1.0 - 0.039);
    let mut opts = ModelOptions {
        mass_kg: Some(80.0),
        ..Default::default()
    };
    let m = build(&text, &opts);
    close(m.total_mass(), 80.0, "--mass");
    close(
        body(&m, "left_thigh").mass,
        80.0 * 14.47 / 99.995,
        "thigh of 80 kg",
    );
    assert!(m.mass_source.contains("--mass"));
    // --height: the figure is rescaled, its proportions kept
    opts.frames.height_m = Some(1.9);
    let m = build(&text, &opts);
    close(m.figure.height_m, 1.9, "--height");
    assert_eq!(m.figure.stature_source, "--height");
    let knee = body(&m, "left_shin").joint.as_ref().expect("knee");
    let thigh = body(&m, "left_thigh");
    close(
        (knee.parent_anchor + thigh.com).norm(),
        0.40 * 1.9 / h,
        "thigh length scaled",
    );
    // bad values are errors naming the option
    for (mass, height, flag) in [
        (Some(-3.0), None, "--mass"),
        (Some(f64::NAN), None, "--mass"),
        (Some(0.0), None, "--mass"),
        (None, Some(-1.7), "--height"),
        (None, Some(f64::INFINITY), "--height"),
    ] {
        let opts = ModelOptions {
            mass_kg: mass,
            frames: FrameOptions {
                height_m: height,
                ..Default::default()
            },
            ..Default::default()
        };
        let err = build_model(&clip(&text), &opts)
            .expect_err("rejected")
            .to_string();
        assert!(err.contains(flag), "{err}");
    }
    let both = ModelOptions {
        frames: FrameOptions {
            height_m: Some(1.8),
            scale: Some(0.01),
            ..Default::default()
        },
        ..Default::default()
    };
    assert!(build_model(&clip(&text), &both).is_err());
}

/// A `--scale` or `--height` that makes the figure no person's size is warned of (in the
/// model's notes too), with the unit that reads the clip right; jostle's own units and a
/// plausible figure are not.
#[test]
fn a_figure_no_person_could_be_is_warned_of() {
    let text = figure(10.0, 20.0, 25.0);
    let with = |scale: Option<f64>, height_m: Option<f64>| {
        let opts = ModelOptions {
            frames: FrameOptions {
                scale,
                height_m,
                ..Default::default()
            },
            ..Default::default()
        };
        let m = build(&text, &opts);
        let w = stature_warning(&m.figure);
        assert_eq!(
            w.is_some(),
            m.notes.iter().any(|n| Some(n) == w.as_ref()),
            "the warning is among the notes: {:?}",
            m.notes
        );
        (m.figure.height_m, w)
    };
    // detected (the file is in cm): a person, no warning
    let (h, w) = with(None, None);
    assert!(PLAUSIBLE_STATURE_M.contains(&h) && w.is_none(), "{h} {w:?}");
    // read in metres by mistake: 100 × as tall, and the hint names the file's unit
    let (giant, w) = with(Some(1.0), None);
    let w = w.expect("a giant is warned of");
    assert!((giant / h - 100.0).abs() < 1e-9, "{giant} m");
    assert!(w.contains("--scale 1 m per file unit"), "{w}");
    assert!(w.contains("read in cm (--scale 0.01"), "{w}");
    assert!(w.contains(&format!("{h:.2} m tall")), "{w}");
    // a tenth of its size by --scale, and --height beyond a person either way
    assert!(with(Some(0.001), None).1.is_some());
    for (height, warned) in [(0.5, true), (0.95, false), (2.4, false), (3.0, true)] {
        let w = with(None, Some(height)).1;
        assert_eq!(w.is_some(), warned, "--height {height}: {w:?}");
        if let Some(w) = w {
            assert!(w.starts_with("--height makes the figure"), "{w}");
        }
    }
    // a user's --scale that gives a person: no warning
    assert!(with(Some(0.01), None).1.is_none());
}

#[test]
fn a_trunk_missing_bones_takes_its_stature_from_the_legs() {
    // Spine 10, chest 5, neck 10: the chain gives (0.82 + 0.05 + 0.35 + 0.22) / 0.961 =
    // 1.50 m, where 82 cm legs need at least 0.82 / 0.505 = 1.62 m.
    let m = build(&figure(10.0, 5.0, 10.0), &ModelOptions::default());
    assert_eq!(m.figure.stature_source, "legs_bound");
    close(m.figure.height_m, 0.82 / 0.505, "stature from the legs");
    assert_physical_inertia(&m);
}

#[test]
fn stature_does_not_depend_on_the_pose() {
    // every joint turned 40° about each axis: a crouched, twisted figure, the same bones
    let hierarchy = figure(10.0, 20.0, 25.0);
    let still = build(&hierarchy, &ModelOptions::default());
    let clip = parse_bvh(&posed(&hierarchy, 3, 40.0), "posed.bvh").expect("parses");
    let bent = build_model(&clip, &ModelOptions::default()).expect("builds");
    close(bent.figure.height_m, still.figure.height_m, "stature");
    close(bent.total_mass(), still.total_mass(), "mass");
}

#[test]
fn same_inputs_same_model() {
    let text = figure(10.0, 20.0, 25.0);
    assert_eq!(
        build(&text, &ModelOptions::default()),
        build(&text, &ModelOptions::default())
    );
}

#[test]
fn odd_skeletons_build_without_panics() {
    let stick = "HIERARCHY
ROOT A { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT B { OFFSET 0 90 0 CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT C { OFFSET 0 80 0 CHANNELS 3 Zrotation Xrotation Yrotation
      End Site { OFFSET 0 0 0 } } }
  JOINT D { OFFSET 30 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
    End Site { OFFSET 20 0 0 } } }";
    // no roles at all: mass by volume, stature from the joints' extent
    let m = build(stick, &ModelOptions::default());
    assert_eq!(m.figure.stature_source, "joint_extent");
    close(m.total_mass(), 23.0 * m.figure.height_m.powi(2), "total");
    assert!(m.bodies.iter().all(|b| b.segments.is_empty()));
    assert_physical_inertia(&m);
    // a CMU figure whose hands and forearms coincide with the elbows (zero-length bones),
    // with a head that has no End Site: still a figure, masses summing to the total
    let text = figure(10.0, 20.0, 25.0)
        .replace("OFFSET 26 0 0", "OFFSET 0 0 0")
        .replace("OFFSET -26 0 0", "OFFSET 0 0 0")
        .replace("OFFSET 0 22 0", "OFFSET 0 0 0");
    let m = build(&text, &ModelOptions::default());
    close(m.total_mass(), 23.0 * m.figure.height_m.powi(2), "total");
    assert_physical_inertia(&m);
    // the hands merged into the forearms: the forearms carry the hands' mass
    let forearm = body(&m, "left_forearm");
    assert!(
        forearm
            .segments
            .iter()
            .any(|s| s.slot.name() == "left_hand"),
        "{:?}",
        forearm.segments
    );
    // a spec that names the legs but no head: stature from the legs' mean share (0.477),
    // and the head+neck, trunk and arm segments without bodies go to the pelvis
    let legs_only = SkeletonSpec::from_toml(
        r#"name = "legs"
[roles]
pelvis = "Hips"
left_thigh = "LeftUpLeg"
left_shin = "LeftLeg"
left_foot = "LeftFoot"
right_thigh = "RightUpLeg"
right_shin = "RightLeg"
right_foot = "RightFoot""#,
        "legs.toml",
    )
    .expect("spec");
    let m = build(
        &figure(10.0, 20.0, 25.0),
        &ModelOptions {
            spec: Some(legs_only),
            ..Default::default()
        },
    );
    assert_eq!(m.figure.stature_source, "legs");
    close(
        m.figure.height_m,
        0.82 / ((422.2 / 1741.0 + 368.5 / 1735.0 + 434.0 / 1741.0 + 432.3 / 1735.0) / 2.0),
        "stature from the legs",
    );
    close(m.total_mass(), 23.0 * m.figure.height_m.powi(2), "total");
    assert_physical_inertia(&m);
}

#[test]
fn bodies_without_a_role_share_their_roled_parent_by_volume() {
    // An extra spine bone between abdomen and chest (Mixamo's Spine1): it takes part of the
    // abdomen's middle trunk; every segment still sums to its table mass.
    let text = figure(10.0, 20.0, 25.0).replace(
        "JOINT Spine1 {",
        "JOINT SpineExtra { OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation\n JOINT Spine1 {",
    ) + "}";
    let m = build(&text, &ModelOptions::default());
    let extra = &m.bodies[m.find_body("SpineExtra").expect("extra body")];
    assert!(extra.role.is_none());
    assert_eq!(extra.segments.len(), 1);
    assert_eq!(extra.segments[0].slot.name(), "middle_trunk");
    let abdomen = body(&m, "abdomen");
    close(
        extra.mass + abdomen.mass,
        m.total_mass() * 15.49 / 99.995,
        "middle trunk",
    );
    assert!(extra.mass > 0.0 && abdomen.mass > extra.mass);
    for slot in anthropometry::SegmentSlot::all() {
        close(
            m.segment_mass(slot),
            m.total_mass() * anthropometry::averaged(slot.segment).mass_fraction,
            &slot.name(),
        );
    }
    assert_physical_inertia(&m);
}

/// A Biovision-named figure in cm (OptiTrack Arena, MocapBank): Hips, a trunk of `Chest`
/// and, with `chest2`, `Chest2` above it, Neck, Head, collars, arms and legs.
fn biovision_figure(chest2: bool) -> String {
    let leg = |side: &str, x: f64| leg_chain(side, x, ["Hip", "Knee", "Ankle"]);
    let arm = |side: &str, x: f64| {
        format!(
            "JOINT {side}Collar {{ OFFSET {} 14 0 CHANNELS 3 Zrotation Xrotation Yrotation
{} }}",
            3.0 * x,
            arm_chain(side, x, ["Shoulder", "Elbow", "Wrist"], [15.0, 0.0])
        )
    };
    let upper = format!(
        "JOINT Neck {{ OFFSET 0 17 0 CHANNELS 3 Zrotation Xrotation Yrotation
  JOINT Head {{ OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation
    End Site {{ OFFSET 0 22 0 }} }} }}
{}
{}",
        arm("Left", 1.0),
        arm("Right", -1.0)
    );
    let trunk = if chest2 {
        format!(
            "JOINT Chest {{ OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation
  JOINT Chest2 {{ OFFSET 0 16 0 CHANNELS 3 Zrotation Xrotation Yrotation
{upper} }} }}"
        )
    } else {
        format!(
            "JOINT Chest {{ OFFSET 0 26 0 CHANNELS 3 Zrotation Xrotation Yrotation
{upper} }}"
        )
    };
    format!(
        "HIERARCHY
ROOT Hips {{ OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
{}
{}
{trunk} }}
",
        leg("Left", 10.0),
        leg("Right", -10.0),
    )
}

#[test]
fn a_two_segment_biovision_trunk_has_its_chest_above_its_abdomen() {
    // MocapBank: Chest is the abdomen and Chest2 the chest (a "chest" ball must meet the
    // upper segment); every de Leva trunk segment has a body that plays it
    let m = build(&biovision_figure(true), &ModelOptions::default());
    assert_eq!(m.spec_name, "biovision_chest2");
    assert_eq!(body(&m, "chest").name, "Chest2");
    assert_eq!(body(&m, "abdomen").name, "Chest");
    assert!(
        m.bodies.iter().all(|b| b.role.is_some()),
        "every body has a role"
    );
    assert_physical_inertia(&m);
    // OptiTrack Arena: one trunk segment, the chest
    let m = build(&biovision_figure(false), &ModelOptions::default());
    assert_eq!(m.spec_name, "biovision");
    assert_eq!(body(&m, "chest").name, "Chest");
    assert!(m.find_body("abdomen").is_none());
    assert_physical_inertia(&m);
}

#[test]
fn children_starting_at_one_point_make_one_capsule() {
    // The neck and both collars leave the chest at one point (OptiTrack, MocapBank): one
    // bone, one capsule, as thick as for a chest whose only child is the neck (the collars
    // hung under the neck instead). Counted three times, the chest's volume went to three
    // copies of one capsule of 1/√3 the radius.
    let together = biovision_figure(true)
        .replace(
            "JOINT LeftCollar { OFFSET 3 14 0",
            "JOINT LeftCollar { OFFSET 0 17 0",
        )
        .replace(
            "JOINT RightCollar { OFFSET -3 14 0",
            "JOINT RightCollar { OFFSET 0 17 0",
        );
    let under_neck = biovision_figure(true)
        .replace(
            "End Site { OFFSET 0 22 0 } } }",
            "End Site { OFFSET 0 22 0 } }",
        )
        .replace(
            "JOINT LeftCollar { OFFSET 3 14 0",
            "JOINT LeftCollar { OFFSET 0 0 0",
        )
        .replace(
            "JOINT RightCollar { OFFSET -3 14 0",
            "JOINT RightCollar { OFFSET 0 0 0",
        )
        .replace("OFFSET -8 0 0 } } } } }", "OFFSET -8 0 0 } } } } } }");
    assert_ne!(together, biovision_figure(true));
    let (a, b) = (
        build(&together, &ModelOptions::default()),
        build(&under_neck, &ModelOptions::default()),
    );
    let (ca, cb) = (body(&a, "chest"), body(&b, "chest"));
    assert_eq!(ca.capsules.len(), 1, "{:?}", ca.capsules);
    assert_eq!(cb.capsules.len(), 1, "{:?}", cb.capsules);
    close(ca.mass, cb.mass, "chest mass");
    close(ca.capsules[0].radius, cb.capsules[0].radius, "chest radius");
    assert!(ca.capsules[0].radius > 0.08, "{}", ca.capsules[0].radius);
}
