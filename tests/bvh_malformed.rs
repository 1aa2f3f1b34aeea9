//! Malformed BVH input: every case must be a `BvhError::Parse` naming the right line with a
//! useful message, never a panic or a huge allocation.
mod common;

use jostle::mocap::{BvhError, parse_bvh, write_bvh_string};

/// Lines:  1 HIERARCHY, 2 ROOT, 6 JOINT, 10 End Site, 16 MOTION, 17 Frames, 18 Frame Time,
/// 19-20 frames.
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
1 2 3 4 5 6 7 8 9
";

#[track_caller]
fn expect_err(text: &str, want_line: usize, fragment: &str) {
    match parse_bvh(text, "bad.bvh") {
        Err(BvhError::Parse {
            file,
            line,
            message,
        }) => {
            assert_eq!(file, "bad.bvh");
            assert_eq!(line, want_line, "wrong line for error '{message}'\n{text}");
            assert!(
                message.contains(fragment),
                "message '{message}' lacks '{fragment}'"
            );
        }
        Err(e) => panic!("expected a parse error, got {e:?}"),
        Ok(_) => panic!("accepted malformed input:\n{text}"),
    }
}

fn replace_line(n: usize, new: &str) -> String {
    SMALL
        .lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == n { new } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_base_clip_is_valid() {
    let c = parse_bvh(SMALL, "ok").unwrap();
    assert_eq!(c.num_frames(), 2);
}

#[test]
fn truncated_mid_frame() {
    let cut = &SMALL[..SMALL.len() - 5]; // "1 2 3 4 5 6 7" on line 20
    expect_err(cut, 20, "expected 9 values, found 7");
}

#[test]
fn truncated_at_a_frame_boundary() {
    let cut = &SMALL[..SMALL.len() - 18];
    assert!(cut.ends_with("8 9\n"));
    expect_err(cut, 19, "file ends after 1 of 2 frames: truncated?");
}

#[test]
fn truncated_mid_hierarchy() {
    let cut = &SMALL[..SMALL.find("End Site").unwrap() + 8];
    expect_err(cut, 10, "expected '{'");
    let cut = &SMALL[..SMALL.find("    }\n  }").unwrap()];
    expect_err(cut, 12, "file ends inside the hierarchy (3 '}' missing)");
    let cut = &SMALL[..SMALL.find("MOTION").unwrap()];
    expect_err(cut, 15, "MOTION section missing");
    let cut = &SMALL[..SMALL.find("Frame Time").unwrap()];
    expect_err(cut, 17, "file ends before 'Frame Time:'");
    expect_err(
        "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0",
        4,
        "OFFSET needs 3 numbers, found 2",
    );
}

#[test]
fn wrong_value_count_on_a_frame_line() {
    expect_err(
        &replace_line(19, "1 2 3 4 5 6 7 8"),
        19,
        "expected 9 values, found 8",
    );
    expect_err(
        &replace_line(20, "1 2 3 4 5 6 7 8 9 10"),
        20,
        "expected 9 values, found 10",
    );
    // Short line followed by a long one: the total is right, but each line is checked.
    let text = replace_line(19, "1 2 3 4 5 6 7 8").replace("7 8 9\n1", "7 8 9 10\n1");
    expect_err(&text, 19, "expected 9 values, found 8");
}

#[test]
fn channel_count_mismatch() {
    expect_err(
        &replace_line(9, "CHANNELS 4 Zrotation Xrotation Yrotation"),
        9,
        "CHANNELS declares 4 channels but lists 3",
    );
    expect_err(
        &replace_line(9, "CHANNELS 2 Zrotation Xrotation Yrotation"),
        9,
        "declares 2 channels but lists 3",
    );
    expect_err(
        &replace_line(9, "CHANNELS 3 Zrotation Xrotaton Yrotation"),
        9,
        "'Xrotaton' is not a channel name",
    );
    expect_err(&replace_line(9, "CHANNELS"), 9, "CHANNELS without a count");
    expect_err(
        &replace_line(9, "CHANNELS -1"),
        9,
        "not a non-negative integer",
    );
    expect_err(
        &replace_line(9, "CHANNELS 99999999999999999999999"),
        9,
        "not a non-negative integer",
    );
}

#[test]
fn non_finite_and_non_numeric_values() {
    expect_err(
        &replace_line(20, "1 2 NaN 4 5 6 7 8 9"),
        20,
        "NaN is not a valid motion value",
    );
    expect_err(
        &replace_line(20, "1 2 nan 4 5 6 7 8 9"),
        20,
        "NaN is not a valid motion value (frame 2, column 3)",
    );
    expect_err(
        &replace_line(19, "1 2 3 inf 5 6 7 8 9"),
        19,
        "infinity is not a valid motion value",
    );
    expect_err(
        &replace_line(19, "1 2 3 -Infinity 5 6 7 8 9"),
        19,
        "-infinity is not a valid motion value",
    );
    expect_err(
        &replace_line(19, "1 2 3 4 5 6 7 8 1e999"),
        19,
        "infinity is not a valid motion value",
    );
    expect_err(
        &replace_line(19, "1 2 3 4 5 6 7 8 x9"),
        19,
        "'x9' is not a number",
    );
    expect_err(
        &replace_line(19, "1,5 2 3 4 5 6 7 8 9"),
        19,
        "use '.' as the decimal separator",
    );
    expect_err(
        &replace_line(8, "OFFSET 1,0 -2 0"),
        8,
        "'1,0' is not a number",
    );
    expect_err(
        &replace_line(8, "OFFSET 1 NaN 0"),
        8,
        "NaN is not a valid OFFSET value",
    );
    expect_err(&replace_line(8, "OFFSET 1 2 3 4"), 8, "exactly 3 numbers");
    expect_err(
        &replace_line(12, "OFFSET 0 -3"),
        12,
        "OFFSET needs 3 numbers, found 2",
    );
}

#[test]
fn unknown_keywords() {
    expect_err(&replace_line(10, "    End Sight"), 10, "'End Sight'");
    expect_err(&replace_line(10, "    End"), 10, "expected 'End Site'");
    expect_err(
        &replace_line(6, "  JIONT Leg"),
        6,
        "unknown keyword 'JIONT'",
    );
    expect_err(
        &replace_line(4, "  OFSET 0 0 0"),
        4,
        "unknown keyword 'OFSET'",
    );
    expect_err(&replace_line(1, "HIERARCHIE"), 1, "expected HIERARCHY");
}

#[test]
fn joint_and_root_without_name() {
    expect_err(&replace_line(6, "  JOINT"), 6, "JOINT without a name");
    expect_err(&replace_line(6, "  JOINT {"), 6, "JOINT without a name");
    expect_err(&replace_line(2, "ROOT"), 2, "ROOT without a name");
}

#[test]
fn structure_errors() {
    // second ROOT, after the first closed and inside it
    let two_roots = SMALL.replace("MOTION", "ROOT Other\n{\nOFFSET 0 0 0\n}\nMOTION");
    expect_err(&two_roots, 16, "second ROOT (the first is on line 2)");
    expect_err(&replace_line(6, "  ROOT Leg"), 6, "second ROOT");
    // stray } before ROOT
    expect_err(&format!("}}\n{SMALL}"), 1, "expected HIERARCHY");
    expect_err(
        &SMALL.replace("HIERARCHY\n", "HIERARCHY\n}\n"),
        2,
        "unexpected '}' before ROOT",
    );
    // extra } after ROOT closed, JOINT outside ROOT
    expect_err(
        &SMALL.replace("MOTION", "}\nMOTION"),
        16,
        "more '}' than '{'",
    );
    expect_err(
        &SMALL.replace("MOTION", "JOINT X\n{\n}\nMOTION"),
        16,
        "JOINT after the ROOT block",
    );
    // second HIERARCHY
    expect_err(
        &SMALL.replace("MOTION", "HIERARCHY\nMOTION"),
        16,
        "second HIERARCHY",
    );
    // missing OFFSET, duplicate OFFSET/CHANNELS, CHANNELS after a child
    expect_err(
        &replace_line(8, ""),
        14,
        "joint 'Leg' (line 6) has no OFFSET",
    );
    expect_err(
        &replace_line(12, ""),
        13,
        "End Site (line 10) has no OFFSET",
    );
    expect_err(&replace_line(9, "OFFSET 1 1 1"), 9, "second OFFSET");
    expect_err(
        &replace_line(9, "CHANNELS 3 Zrotation Xrotation Yrotation CHANNELS"),
        9,
        "'CHANNELS' is not a channel name",
    );
    expect_err(
        &SMALL.replace("    End Site", "    CHANNELS 1 Xrotation\n    End Site"),
        10,
        "second CHANNELS",
    );
    let late = SMALL
        .replace(
            "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n",
            "",
        )
        .replace("  }\n}\nMOTION", "  }\n  CHANNELS 1 Xrotation\n}\nMOTION");
    expect_err(&late, 14, "CHANNELS after a child JOINT");
    // End Site with CHANNELS, nested End Site, second End Site, JOINT inside End Site
    expect_err(
        &replace_line(12, "CHANNELS 1 Xrotation"),
        12,
        "End Sites have no channels",
    );
    expect_err(
        &replace_line(12, "End Site"),
        12,
        "End Site inside an End Site",
    );
    expect_err(&replace_line(12, "JOINT x"), 12, "inside an End Site block");
    let two_ends = SMALL.replace(
        "    }\n  }",
        "    }\n    End Site\n    {\n    OFFSET 0 0 0\n    }\n  }",
    );
    expect_err(&two_ends, 14, "second End Site");
    // stray {
    expect_err(&replace_line(7, "  { {"), 7, "unexpected '{'");
    expect_err(
        &replace_line(7, "  x"),
        7,
        "expected '{' after 'Leg' (line 6), found 'x'",
    );
    // MOTION too early
    expect_err(
        &replace_line(14, "MOTION"),
        14,
        "MOTION inside the hierarchy: 2 '}' missing",
    );
    expect_err(
        &replace_line(16, "MOTION 2"),
        16,
        "unexpected '2' after MOTION",
    );
}

#[test]
fn zero_frames() {
    expect_err(&replace_line(17, "Frames: 0"), 17, "clip has no frames");
}

#[test]
fn huge_frame_counts() {
    // Must not try to allocate 10^12 frames (bvh_anim aborts here).
    expect_err(
        &replace_line(17, "Frames: 1000000000000"),
        20,
        "file ends after 2 of 1000000000000 frames: truncated?",
    );
    expect_err(
        &replace_line(17, "Frames: 1000000000000000000000"),
        17,
        "is too large",
    );
    expect_err(
        &replace_line(17, "Frames: 18446744073709551615"),
        20,
        "file ends after 2 of 18446744073709551615 frames",
    );
}

#[test]
fn bad_motion_header() {
    expect_err(&replace_line(17, "Frames: -3"), 17, "is negative");
    expect_err(
        &replace_line(17, "Frames: 2.0"),
        17,
        "is not a whole number",
    );
    expect_err(
        &replace_line(17, "Frames: two"),
        17,
        "is not a whole number",
    );
    expect_err(&replace_line(17, "Frames:"), 17, "is missing");
    expect_err(&replace_line(17, "Frames 2"), 17, "expected 'Frames: N'");
    expect_err(
        &replace_line(17, "Frame Time: 0.01"),
        18,
        "second 'Frame Time:'",
    );
    expect_err(
        &replace_line(18, "Frame Time: -0.0083333"),
        18,
        "must be a positive number",
    );
    expect_err(
        &replace_line(18, "Frame Time: 0"),
        18,
        "must be a positive number",
    );
    expect_err(
        &replace_line(18, "Frame Time: NaN"),
        18,
        "must be a positive number",
    );
    expect_err(
        &replace_line(18, "Frame Time: inf"),
        18,
        "must be a positive number",
    );
    expect_err(
        &replace_line(18, "Frame Time: 0,0083"),
        18,
        "must be a positive number",
    );
    expect_err(
        &replace_line(18, "Frame Time: 0.01 1 2"),
        18,
        "must be a positive number",
    );
    expect_err(
        &replace_line(18, "1 2 3 4 5 6 7 8 9"),
        18,
        "expected 'Frame Time: T'",
    );
}

#[test]
fn extra_lines_after_the_last_frame() {
    expect_err(
        &format!("{SMALL}1 2 3 4 5 6 7 8 9\n"),
        21,
        "extra data after the last frame",
    );
    expect_err(
        &format!("{SMALL}\n\n  x\n"),
        23,
        "extra data after the last frame",
    );
    // Blank trailing lines are fine.
    assert!(parse_bvh(&format!("{SMALL}\n \t\n\r\n"), "ok").is_ok());
}

#[test]
fn missing_motion() {
    let text = SMALL.replace("MOTION\n", "");
    expect_err(&text, 16, "the MOTION line is missing");
    let text = &SMALL[..SMALL.find("MOTION").unwrap()];
    expect_err(text, 15, "MOTION section missing");
}

#[test]
fn no_channels_at_all() {
    let text = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: 1\nFrame Time: 1\n\n";
    expect_err(text, 6, "declares no CHANNELS");
}

#[test]
fn empty_and_garbage_files() {
    expect_err("", 1, "file is empty");
    expect_err("\n\n  \r\n", 1, "file is empty");
    expect_err("HIERARCHY\n", 1, "file ends before ROOT");
    expect_err("HIERARCHY\nMOTION\n", 2, "MOTION before any ROOT");
    expect_err("\u{0}\u{1}\u{7f}binary", 1, "expected HIERARCHY");
    expect_err("\n\nGIF89a\u{1}", 3, "expected HIERARCHY");
    // Random bytes: decoded lossily they must still produce an error, never a panic.
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for _ in 0..200 {
        let bytes: Vec<u8> = (0..512)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        assert!(matches!(parse_bvh(&text, "r"), Err(BvhError::Parse { .. })));
    }
}

/// Cheap built-in fuzzing: every prefix and many byte mutations of a valid file either
/// parse (and then round-trip exactly) or fail with a Parse error; nothing panics.
#[test]
fn prefixes_and_mutations_never_panic() {
    let check = |text: &str| {
        if let Ok(c) = parse_bvh(text, "m") {
            let again = parse_bvh(&write_bvh_string(&c), "w").expect("written text parses");
            assert_eq!(common::without_lines(&again), common::without_lines(&c));
        }
    };
    for end in 0..=SMALL.len() {
        check(&SMALL[..end]);
    }
    let alphabet: &[u8] = b" \t\r\n{}:.-+e0123456789xXJOINTEndSite";
    let mut x: u64 = 0x2545f4914f6cdd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..20_000 {
        let mut bytes = SMALL.as_bytes().to_vec();
        for _ in 0..1 + next() % 3 {
            let pos = (next() % bytes.len() as u64) as usize;
            let b = alphabet[(next() % alphabet.len() as u64) as usize];
            match next() % 3 {
                0 => bytes[pos] = b,
                1 => bytes.insert(pos, b),
                _ => {
                    bytes.remove(pos);
                }
            }
        }
        check(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn messages_escape_control_characters_and_cut_long_tokens() {
    expect_err(
        "HIERARCHY\nROOT a\n{\nOFF\u{1}SET 0 0 0\n",
        4,
        "'OFF\\u{1}SET'",
    );
    let long = "x".repeat(100);
    expect_err(&format!("{long}\n"), 1, &format!("'{}…'", "x".repeat(40)));
}

#[test]
fn absurd_nesting_is_rejected() {
    let mut text = String::from("HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n");
    for _ in 0..1000 {
        text.push_str("JOINT j\n{\nOFFSET 0 1 0\n");
    }
    // 1000 open blocks are fine up to the 1000th JOINT (depth 1000 including ROOT) ...
    expect_err(&text, 6 + 999 * 3, "nested more than 1000 deep");
    // ... and depth 1000 itself parses.
    let mut ok = String::from("HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n");
    for _ in 0..999 {
        ok.push_str("JOINT j\n{\nOFFSET 0 1 0\n");
    }
    ok.push_str(&"}\n".repeat(1000));
    ok.push_str("MOTION\nFrames: 1\nFrame Time: 1\n5\n");
    let c = parse_bvh(&ok, "deep").unwrap();
    assert_eq!(c.joints.len(), 1000);
    assert_eq!(c.joints[999].parent, Some(998));
    let again = parse_bvh(&write_bvh_string(&c), "w").unwrap();
    assert_eq!(common::without_lines(&again), common::without_lines(&c));
}
