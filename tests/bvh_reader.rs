//! BVH reader: the repo's demo clips and the real clips of ../shared/mocap (counts from
//! MANIFEST.md, values against bvh_anim; skipped when absent), layout variants, hierarchy
//! corner cases.
mod common;

use common::MANIFEST;
use jostle::mocap::{BvhError, Channel, Clip, load_bvh, parse_bvh};

fn parse(text: &str) -> Clip {
    match parse_bvh(text, "<test>") {
        Ok(c) => c,
        Err(e) => panic!("parse failed: {e}\n--- text ---\n{text}"),
    }
}

fn order(channels: &[Channel]) -> String {
    channels
        .iter()
        .filter(|c| c.is_rotation())
        .map(|c| &c.keyword()[..1])
        .collect()
}

#[test]
fn every_shared_clip_matches_the_manifest() {
    let Some(shared) = common::shared_dir_or_skip() else {
        return;
    };
    let mut listed: Vec<&str> = MANIFEST.iter().map(|m| m.0).collect();
    listed.sort();
    let mut found: Vec<String> = std::fs::read_dir(&shared)
        .expect("shared/mocap exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bvh"))
        .collect();
    found.sort();
    assert_eq!(
        found, listed,
        "shared/mocap/*.bvh differs from the MANIFEST table"
    );

    for &(file, joints, end_sites, channels, frames, frame_time, rot) in MANIFEST {
        let clip = load_bvh(&shared.join(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(clip.joints.len(), joints, "{file}: joints");
        let ends = clip.joints.iter().filter(|j| j.end_site.is_some()).count();
        assert_eq!(ends, end_sites, "{file}: End Sites");
        assert_eq!(clip.num_channels, channels, "{file}: channels/frame");
        assert_eq!(clip.num_frames(), frames, "{file}: frames");
        assert_eq!(clip.values.len(), frames * channels, "{file}: values");
        assert_eq!(clip.frame_time, frame_time, "{file}: frame time");

        // Structure invariants.
        assert_eq!(clip.joints[0].parent, None, "{file}");
        let mut col = 0;
        for (i, j) in clip.joints.iter().enumerate() {
            assert_eq!(j.first_column, col, "{file}: {} first_column", j.name);
            col += j.channels.len();
            if i > 0 {
                let p = j.parent.expect("non-root joints have parents");
                assert!(p < i, "{file}: parent after child");
            }
            assert!(j.line > 0);
        }
        assert_eq!(col, channels);

        // Rotation orders.
        for (i, j) in clip.joints.iter().enumerate() {
            let want = match (rot, i) {
                ("mixed", 0) => "ZYX",
                ("mixed", _) => "ZXY",
                (r, _) => r,
            };
            assert_eq!(
                order(&j.channels),
                want,
                "{file}: {} rotation order",
                j.name
            );
        }
    }
}

#[test]
fn manifest_oddities_are_read_as_described() {
    let Some(shared) = common::shared_dir_or_skip() else {
        return;
    };
    // Bandai: position channels on every joint.
    let c = load_bvh(&shared.join("bandai1_walk_normal_001.bvh")).unwrap();
    assert!(c.joints.iter().all(|j| j.channels.len() == 6));
    // Mixamo: names keep the colon.
    let c = load_bvh(&shared.join("mixamo_freebvh.bvh")).unwrap();
    assert_eq!(c.joints[0].name, "mixamorig:Hips");
    let mut names: Vec<&str> = c.joints.iter().map(|j| j.name.as_str()).collect();
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("mixamorig:") && n.len() > 10)
    );
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 55, "mixamo joint names must be distinct");
    // cmu 01_01: assimp renamed the finger joints.
    let c = load_bvh(&shared.join("cmu_01_01_jumps_turn.bvh")).unwrap();
    assert!(c.joint_index("LFingers").is_some());
    // CMU T-pose frame 0: rotations small (the largest are ±17 deg, on LeftUpLeg/RightUpLeg).
    let f0 = c.frame(0);
    for j in &c.joints {
        for (k, ch) in j.channels.iter().enumerate() {
            if ch.is_rotation() {
                assert!(f0[j.first_column + k].abs() <= 17.0, "{}", j.name);
            }
        }
    }
    // pymo: *_End joints carry channels and have End Sites.
    let c = load_bvh(&shared.join("pymo_av_8walk_meredith.bvh")).unwrap();
    let ends: Vec<_> = c
        .joints
        .iter()
        .filter(|j| j.name.ends_with("_End"))
        .collect();
    assert!(!ends.is_empty());
    assert!(
        ends.iter()
            .all(|j| j.channels.len() == 3 && j.end_site.is_some())
    );
}

/// Compare with bvh_anim on the repo's demo clips and on every shared clip it reads
/// correctly (all but mixamo).
#[test]
fn oracle_bvh_anim_agrees_on_repo_and_shared_clips() {
    let mut paths = common::repo_clips();
    if let Some(shared) = common::shared_dir_or_skip_part("MANIFEST clips") {
        for &(file, ..) in MANIFEST {
            if file == "mixamo_freebvh.bvh" {
                continue; // bvh_anim splits names at ':' (CRATE-NOTES §1)
            }
            paths.push(shared.join(file));
        }
    }
    for path in paths {
        oracle_agrees(&path);
    }
}

fn oracle_agrees(path: &std::path::Path) {
    use bvh_anim::ChannelType as T;
    let file = path.file_name().unwrap().to_string_lossy();
    let ours = load_bvh(path).unwrap();
    let bytes = std::fs::read(path).unwrap();
    let theirs = bvh_anim::Bvh::from_bytes(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));

    let tj: Vec<_> = theirs.joints().collect();
    assert_eq!(tj.len(), ours.joints.len(), "{file}: joint count");
    for (o, t) in ours.joints.iter().zip(&tj) {
        let d = t.data();
        assert_eq!(d.name().to_string(), o.name, "{file}: name");
        assert_eq!(d.parent_index(), o.parent, "{file}: parent of {}", o.name);
        let off = d.offset();
        assert_eq!(
            [off.x, off.y, off.z],
            [o.offset.x as f32, o.offset.y as f32, o.offset.z as f32],
            "{file}: offset of {}",
            o.name
        );
        let tch: Vec<(Channel, usize)> = d
            .channels()
            .iter()
            .map(|c| {
                let ch = match c.channel_type() {
                    T::PositionX => Channel::Xposition,
                    T::PositionY => Channel::Yposition,
                    T::PositionZ => Channel::Zposition,
                    T::RotationX => Channel::Xrotation,
                    T::RotationY => Channel::Yrotation,
                    T::RotationZ => Channel::Zrotation,
                };
                (ch, c.motion_index())
            })
            .collect();
        let och: Vec<(Channel, usize)> = o
            .channels
            .iter()
            .enumerate()
            .map(|(k, &c)| (c, o.first_column + k))
            .collect();
        assert_eq!(och, tch, "{file}: channels of {}", o.name);
        // bvh_anim drops an End Site directly under ROOT; none of these clips has one.
        let te = d.end_site().map(|e| [e.x, e.y, e.z]);
        let oe = o.end_site.map(|e| [e.x as f32, e.y as f32, e.z as f32]);
        assert_eq!(oe, te, "{file}: End Site of {}", o.name);
    }
    assert_eq!(theirs.num_frames(), ours.num_frames(), "{file}: frames");
    let dt = theirs.frame_time().as_secs_f64();
    assert!(
        (dt - ours.frame_time).abs() <= 1e-9,
        "{file}: frame time {dt} vs {}",
        ours.frame_time
    );
    let mut n = 0;
    for (f, frame) in theirs.frames().enumerate() {
        let t = frame.as_slice();
        let o = ours.frame(f);
        assert_eq!(t.len(), o.len(), "{file}: frame {f} length");
        for (c, (&a, &b)) in o.iter().zip(t).enumerate() {
            assert!((a as f32) == b, "{file}: frame {f} column {c}: {a} vs {b}");
        }
        n += 1;
    }
    assert_eq!(n, ours.num_frames());
}

#[test]
fn leaf_joint_without_end_site() {
    let text = "HIERARCHY
ROOT Hips
{
	OFFSET 0 0 0
	CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
	JOINT L_Arm
	{
		OFFSET 1 0 0
		CHANNELS 3 Zrotation Xrotation Yrotation
		JOINT L_Wrist_End
		{
			OFFSET 2 0 0
			CHANNELS 3 Zrotation Xrotation Yrotation
		}
	}
	JOINT R_Arm
	{
		OFFSET -1 0 0
		CHANNELS 3 Zrotation Xrotation Yrotation
		JOINT R_Wrist_End
		{
			OFFSET -2 0 0
			CHANNELS 3 Zrotation Xrotation Yrotation
		}
	}
	JOINT Head
	{
		OFFSET 0 1 0
		CHANNELS 3 Zrotation Xrotation Yrotation
		End Site
		{
			OFFSET 0 0.5 0
		}
	}
}
MOTION
Frames: 2
Frame Time: 0.1
0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20
1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 21
";
    let c = parse(text);
    let names: Vec<&str> = c.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Hips",
            "L_Arm",
            "L_Wrist_End",
            "R_Arm",
            "R_Wrist_End",
            "Head"
        ]
    );
    let parents: Vec<Option<usize>> = c.joints.iter().map(|j| j.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(1), Some(0), Some(3), Some(0)]);
    let cols: Vec<usize> = c.joints.iter().map(|j| j.first_column).collect();
    assert_eq!(cols, [0, 6, 9, 12, 15, 18]);
    let lines: Vec<usize> = c.joints.iter().map(|j| j.line).collect();
    assert_eq!(lines, [2, 6, 10, 16, 20, 26]);
    assert_eq!(c.joints[2].end_site, None);
    assert_eq!(c.joints[4].end_site, None);
    assert_eq!(c.joints[5].end_site.map(|e| e.y), Some(0.5));
    assert_eq!(c.num_channels, 21);
    assert_eq!(c.frame(1)[20], 21.0);
    assert_eq!(c.children(0).collect::<Vec<_>>(), [1, 3, 5]);
}

const SMALL: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT Leg
  {
    OFFSET 1 -2 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -3 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.0083333
1 2 3 4 5 6 7 8 9
1e2 +3.0 -.5 .0083333 0 -0 1E-3 5. 9
";

#[test]
fn small_clip_fields() {
    let c = parse(SMALL);
    assert_eq!(c.joints.len(), 2);
    assert_eq!(c.joints[1].offset, nalgebra::Vector3::new(1.0, -2.0, 0.0));
    assert_eq!(
        c.joints[1].end_site,
        Some(nalgebra::Vector3::new(0.0, -3.0, 0.0))
    );
    assert_eq!(
        c.joints[1].channels,
        [Channel::Zrotation, Channel::Xrotation, Channel::Yrotation]
    );
    assert_eq!(c.frame_time, 0.0083333);
    assert_eq!(
        c.frame(1),
        [100.0, 3.0, -0.5, 0.0083333, 0.0, -0.0, 0.001, 5.0, 9.0]
    );
    assert_eq!(c.joints[0].line, 2);
    assert_eq!(c.joints[1].line, 6);
}

/// The same clip in many layouts parses to the same `Clip` (except line numbers).
#[test]
fn layout_variants_parse_identically() {
    let base = common::without_lines(&parse(SMALL));
    let variants: Vec<String> = vec![
        SMALL.replace('\n', "\r\n"),
        SMALL.replace('\n', "\r"),
        // mixed endings
        SMALL
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{l}{}", if i % 3 == 0 { "\r\n" } else { "\n" }))
            .collect(),
        SMALL.replace("  ", "\t"),
        SMALL.replace('\n', " \t \n"),
        SMALL.replace('\n', "\n\n"),
        format!("\u{feff}{SMALL}"),
        SMALL.trim_end().to_string(),
        SMALL.replace("Frames: 2", "Frames:\t2"),
        SMALL.replace("Frames: 2", "Frames :   2"),
        SMALL.replace("Frames: 2", "Frames:2"),
        SMALL.replace("Frames: 2", "frames: 2"),
        SMALL.replace("Frame Time: 0.0083333", "Frame Time:0.0083333"),
        SMALL.replace("Frame Time: 0.0083333", "Frame Time :\t0.0083333"),
        SMALL.replace("Frame Time: 0.0083333", "FRAME   TIME: 0.0083333"),
        SMALL.replace(
            "Frames: 2\nFrame Time: 0.0083333",
            "Frame Time: 0.0083333\nFrames: 2",
        ),
        SMALL.replace("End Site", "End site"),
        SMALL.replace("End Site", "END SITE"),
        SMALL.replace("JOINT", "Joint").replace("ROOT", "root"),
        SMALL
            .replace("OFFSET", "offset")
            .replace("CHANNELS", "channels"),
        SMALL
            .replace("HIERARCHY", "hierarchy")
            .replace("MOTION", "Motion"),
        SMALL
            .replace("Xrotation", "XROTATION")
            .replace("Yposition", "yposition"),
        SMALL.replace("JOINT Leg\n  {", "JOINT Leg {"),
        SMALL.replace("ROOT Hips\n{", "ROOT Hips {"),
        SMALL.replace("End Site\n    {", "End Site {"),
        SMALL.replace("ROOT Hips\n{", "ROOT Hips\n\n\n{"),
        SMALL.replace(
            "End Site\n    {\n      OFFSET 0 -3 0\n    }",
            "End Site { OFFSET 0 -3 0 }",
        ),
        SMALL.replace("OFFSET 1 -2 0", "OFFSET 1.0 -2e0 0.000"),
    ];
    for (i, v) in variants.iter().enumerate() {
        let c = parse_bvh(v, "<variant>").unwrap_or_else(|e| panic!("variant {i}: {e}\n{v:?}"));
        assert_eq!(common::without_lines(&c), base, "variant {i}: {v:?}");
    }
}

#[test]
fn line_numbers_follow_all_line_endings() {
    let crlf = parse(&SMALL.replace('\n', "\r\n"));
    let cr = parse(&SMALL.replace('\n', "\r"));
    assert_eq!(crlf.joints[1].line, 6);
    assert_eq!(cr.joints[1].line, 6);
    // Error lines too.
    let bad = SMALL.replace("1 2 3 4 5 6 7 8 9", "1 2 3 4 5 6 7 8");
    for t in [bad.replace('\n', "\r\n"), bad.replace('\n', "\r"), bad] {
        match parse_bvh(&t, "x") {
            Err(BvhError::Parse { line, .. }) => assert_eq!(line, 19),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn odd_names_and_channel_layouts() {
    let text = "HIERARCHY
ROOT mixamorig:Hips
{
	OFFSET 0 0 0
	CHANNELS 3 Xrotation Yrotation Zrotation
	End Site
	{
		OFFSET 0 0 1
	}
	JOINT Left Upper Arm {
		OFFSET 1 0 0
		CHANNELS 0
		JOINT a/b[1]#x
		{
			OFFSET 1 0 0
			CHANNELS 4 Zposition Yrotation Xposition Xrotation
		}
	}
	JOINT NoChannels
	{
		OFFSET 0 1 0
	}
}
MOTION
Frames: 1
Frame Time: 0.5
1 2 3 4 5 6 7
";
    let c = parse(text);
    let names: Vec<&str> = c.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        ["mixamorig:Hips", "Left Upper Arm", "a/b[1]#x", "NoChannels"]
    );
    assert_eq!(
        c.joints[0].end_site,
        Some(nalgebra::Vector3::new(0.0, 0.0, 1.0))
    );
    assert!(c.joints[1].channels.is_empty());
    assert!(c.joints[3].channels.is_empty());
    assert_eq!(c.joints[2].first_column, 3);
    assert_eq!(c.joints[3].first_column, 7);
    assert_eq!(c.num_channels, 7);
}

#[test]
fn load_bvh_reports_io_and_utf8_errors() {
    let dir = common::temp_dir("load_bvh_errors");
    match load_bvh(&dir.join("missing.bvh")) {
        Err(e @ BvhError::Io { .. }) => assert!(e.to_string().contains("missing.bvh")),
        other => panic!("{other:?}"),
    }
    let mut bytes = SMALL.replace('\n', "\r\n").into_bytes();
    // Latin-1 'é' in the joint name on line 6.
    let pos = bytes.windows(3).position(|w| w == b"Leg").unwrap();
    bytes[pos + 1] = 0xe9;
    let p = dir.join("latin1.bvh");
    std::fs::write(&p, &bytes).unwrap();
    match load_bvh(&p) {
        Err(BvhError::Parse {
            line,
            message,
            file,
        }) => {
            assert_eq!(line, 6);
            assert!(message.contains("UTF-8"), "{message}");
            assert!(file.ends_with("latin1.bvh"));
        }
        other => panic!("{other:?}"),
    }
    let p = dir.join("ok.bvh");
    std::fs::write(&p, SMALL).unwrap();
    assert_eq!(load_bvh(&p).unwrap(), parse(SMALL));
}

#[test]
fn error_display_is_file_colon_line() {
    let e = parse_bvh("HIERARCHY\nROOT\n", "clip.bvh").unwrap_err();
    let s = e.to_string();
    assert!(s.starts_with("clip.bvh:2: "), "{s}");
}

/// The committed fuzz seeds do what their names say (so the corpus starts meaningful).
#[test]
fn fuzz_seeds_parse_as_intended() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    for (name, ok) in [
        ("tiny.bvh", true),
        ("crlf_odd.bvh", true),
        ("leaf_joint.bvh", true),
        ("huge_frames.bvh", false),
        ("bad.bvh", false),
    ] {
        let r = load_bvh(&dir.join(name));
        assert_eq!(r.is_ok(), ok, "{name}: {r:?}");
    }
    let c = load_bvh(&dir.join("crlf_odd.bvh")).unwrap();
    assert_eq!(c.joints[1].name, "Left Arm");
    assert_eq!(c.joints[0].end_site.map(|e| e.y), Some(1.0));
    let c = load_bvh(&dir.join("leaf_joint.bvh")).unwrap();
    assert_eq!(c.num_frames(), 3);
    assert_eq!(c.joints[2].parent, Some(1));
    assert_eq!(c.joints[2].first_column, 7);
}
