//! BVH writer: exact round trips (the repo's demo clips, and the real clips of
//! ../shared/mocap when present) and atomic file writes.
mod common;

use common::{MANIFEST, without_lines};
use jostle::mocap::{BvhError, Channel, Clip, load_bvh, parse_bvh, write_bvh, write_bvh_string};

#[test]
fn every_repo_and_shared_clip_round_trips_exactly() {
    let mut paths = common::repo_clips();
    if let Some(shared) = common::shared_dir_or_skip_part("MANIFEST clips") {
        paths.extend(MANIFEST.iter().map(|m| shared.join(m.0)));
    }
    for path in paths {
        let file = path.file_name().unwrap().to_string_lossy();
        let clip = load_bvh(&path).unwrap();
        let text = write_bvh_string(&clip);
        let again = parse_bvh(&text, "written").unwrap_or_else(|e| panic!("{file}: {e}"));
        // PartialEq on f64: every value, offset and the frame time must be bit-equal
        // (apart from -0 == 0, checked separately below).
        assert_eq!(without_lines(&again), without_lines(&clip), "{file}");
        for (a, b) in again.values.iter().zip(&clip.values) {
            assert_eq!(a.to_bits(), b.to_bits(), "{file}");
        }
        // Writing is a fixed point after one round.
        assert_eq!(write_bvh_string(&again), text, "{file}");
    }
}

#[test]
fn written_text_is_standard_bvh() {
    let Some(path) = common::shared_clip("cmu_walk_bvhmatlab.bvh") else {
        return;
    };
    let clip = load_bvh(&path).unwrap();
    let text = write_bvh_string(&clip);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "HIERARCHY");
    assert_eq!(lines[1], "ROOT Hips");
    assert_eq!(lines[2], "{");
    assert_eq!(lines[3], "\tOFFSET 0 0 0");
    assert_eq!(
        lines[4],
        "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation"
    );
    assert_eq!(lines[5], "\tJOINT LHipJoint");
    assert!(
        text.contains("\t\t\t\t\t\tEnd Site\n\t\t\t\t\t\t{\n\t\t\t\t\t\t\tOFFSET 0 -0 1.11249\n")
    );
    let m = lines.iter().position(|l| *l == "MOTION").unwrap();
    assert_eq!(lines[m + 1], "Frames: 344");
    assert_eq!(lines[m + 2], "Frame Time: 0.0083333");
    assert_eq!(lines.len(), m + 3 + 344);
    assert_eq!(lines[m + 3].split(' ').count(), 96);
    assert!(!text.contains('\r'));
    assert!(text.ends_with('\n'));
}

fn tiny(values: Vec<f64>, frame_time: f64) -> Clip {
    let text = "HIERARCHY\nROOT My Root\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Zrotation Xrotation\n\
                End Site\n{\nOFFSET 1 2 3\n}\nJOINT leaf:j\n{\nOFFSET 0.1 0.2 0.3\n\
                CHANNELS 1 Yrotation\n}\n}\nMOTION\nFrames: 1\nFrame Time: 1\n0 0 0 0\n";
    let mut c = parse_bvh(text, "tiny").unwrap();
    assert_eq!(c.joints[0].end_site.map(|e| e.z), Some(3.0));
    assert_eq!(c.joints[1].end_site, None);
    assert_eq!(c.joints[1].channels, [Channel::Yrotation]);
    c.values = values;
    c.frame_time = frame_time;
    c
}

#[test]
fn awkward_numbers_round_trip_bit_for_bit() {
    let vals = vec![
        0.1 + 0.2,
        -0.0,
        1e-300,
        5e-324,
        1.7976931348623157e308,
        123_456_789.123_456_78,
        -1.0 / 3.0,
        f64::EPSILON,
    ];
    let c = tiny(vals.clone(), 1.0 / 120.0);
    let again = parse_bvh(&write_bvh_string(&c), "w").unwrap();
    for (a, b) in again.values.iter().zip(&vals) {
        assert_eq!(a.to_bits(), b.to_bits(), "{a} vs {b}");
    }
    assert_eq!(again.frame_time.to_bits(), (1.0f64 / 120.0).to_bits());
    assert_eq!(again.joints[0].name, "My Root");
    assert_eq!(again.joints[1].name, "leaf:j");
    assert_eq!(without_lines(&again), without_lines(&c));
}

#[test]
fn write_bvh_is_atomic_and_leaves_no_temp_file() {
    let dir = common::temp_dir("write_bvh_atomic");
    // any real clip will do
    let clip = load_bvh(&common::shared_clip_or_repo(
        "mocapbank_sit_stand.bvh",
        "demo_wave.bvh",
    ))
    .unwrap();
    let dest = dir.join("out.bvh");
    write_bvh(&clip, &dest).unwrap();
    let names = |d: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&dir), ["out.bvh"]);
    assert_eq!(
        without_lines(&load_bvh(&dest).unwrap()),
        without_lines(&clip)
    );

    // Overwrite an existing file with a different clip.
    let small = tiny(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], 0.5);
    write_bvh(&small, &dest).unwrap();
    assert_eq!(names(&dir), ["out.bvh"]);
    assert_eq!(load_bvh(&dest).unwrap().num_frames(), 2);

    // A directory in the way: the rename fails, the temp file is removed, nothing else moves.
    let blocked = dir.join("blocked.bvh");
    std::fs::create_dir(&blocked).unwrap();
    std::fs::write(blocked.join("keep"), "x").unwrap();
    match write_bvh(&small, &blocked) {
        Err(BvhError::Io { path, .. }) => assert_eq!(path, blocked),
        other => panic!("{other:?}"),
    }
    assert_eq!(names(&dir), ["blocked.bvh", "out.bvh"]);
    assert_eq!(names(&blocked), ["keep"]);

    // Missing directory: an Io error naming the file, nothing created.
    let missing = dir.join("no/such/dir/x.bvh");
    assert!(matches!(
        write_bvh(&small, &missing),
        Err(BvhError::Io { .. })
    ));
    assert_eq!(names(&dir), ["blocked.bvh", "out.bvh"]);
    // No file name at all.
    assert!(matches!(
        write_bvh(&small, std::path::Path::new("/")),
        Err(BvhError::Io { .. })
    ));
}
