//! Helpers shared by the BVH tests.
#![allow(dead_code)]

use jostle::mocap::Clip;
use std::path::PathBuf;

/// The shared real clips (never copied into the repo).
pub fn shared_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap"))
}

/// `(file, joints, end sites, channels/frame, frames, frame time, rotation order)` as listed in
/// `shared/mocap/MANIFEST.md` (computed there by an independent parser). Order "mixed" means
/// the root is ZYX and every other joint ZXY.
pub const MANIFEST: &[(&str, usize, usize, usize, usize, f64, &str)] = &[
    (
        "cmu_01_01_jumps_turn.bvh",
        31,
        7,
        96,
        2752,
        0.0083333,
        "ZYX",
    ),
    ("cmu_walk_bvhmatlab.bvh", 31, 7, 96, 344, 0.0083333, "ZYX"),
    ("cmu_walk_dme_example.bvh", 31, 7, 96, 278, 0.0083333, "ZYX"),
    (
        "xia_neutral_01_000_walk.bvh",
        31,
        7,
        96,
        327,
        0.008333,
        "ZYX",
    ),
    ("xia_angry_13_000_run.bvh", 31, 7, 96, 140, 0.008333, "ZYX"),
    (
        "xia_depressed_18_000_punch.bvh",
        31,
        7,
        96,
        105,
        0.008333,
        "ZYX",
    ),
    (
        "iclone_cmu_02_01_walk.bvh",
        101,
        41,
        306,
        171,
        0.016667,
        "ZYX",
    ),
    (
        "iclone_cmu_02_05_punch_strike.bvh",
        100,
        41,
        303,
        927,
        0.016667,
        "ZYX",
    ),
    (
        "iclone_cmu_05_02_dance_pirouette.bvh",
        100,
        41,
        303,
        562,
        0.016667,
        "ZYX",
    ),
    (
        "bandai1_walk_normal_001.bvh",
        22,
        5,
        132,
        195,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_run_happy_001.bvh",
        22,
        5,
        132,
        140,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_punch_normal_001.bvh",
        22,
        5,
        132,
        224,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_kick_normal_001.bvh",
        22,
        5,
        132,
        358,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_bow_normal_001.bvh",
        22,
        5,
        132,
        138,
        0.0333333,
        "ZXY",
    ),
    (
        "bandai1_dance_short_normal_001_LONG.bvh",
        22,
        5,
        132,
        1901,
        0.0333333,
        "ZXY",
    ),
    (
        "cmusl_60_12_salsa_lead_m.bvh",
        43,
        14,
        132,
        1690,
        0.008333,
        "mixed",
    ),
    ("arena_louise.bvh", 18, 5, 57, 2998, 0.01, "ZXY"),
    ("mixamo_freebvh.bvh", 55, 15, 168, 69, 0.0333333, "ZYX"),
    ("mocapbank_sit_stand.bvh", 19, 5, 60, 455, 0.033333, "ZXY"),
    (
        "pymo_av_8walk_meredith.bvh",
        23,
        7,
        72,
        1064,
        0.008333,
        "XYZ",
    ),
];

/// A copy of the clip with every `line` field zeroed (for comparing re-parsed clips).
pub fn without_lines(clip: &Clip) -> Clip {
    let mut c = clip.clone();
    for j in &mut c.joints {
        j.line = 0;
    }
    c
}

/// A fresh empty directory under the target dir, unique per test name and process.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

mod random;
#[allow(unused_imports)]
pub use random::*;
