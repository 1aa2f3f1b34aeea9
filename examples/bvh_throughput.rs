//! Parse (and write) throughput of the BVH reader on a folder of clips.
//!
//! `cargo run --release --example bvh_throughput [DIR]` (default `../shared/mocap`).
use jostle::mocap::{parse_bvh, write_bvh_string};
use std::time::Instant;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap").to_string());
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "bvh") {
            let text = std::fs::read_to_string(&path).expect("read clip");
            texts.push((path.display().to_string(), text));
        }
    }
    let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    let mut frames = 0usize;
    let reps = 10;
    let start = Instant::now();
    let mut clips = Vec::new();
    for r in 0..reps {
        for (name, text) in &texts {
            let clip = parse_bvh(text, name).expect("parse");
            frames += clip.num_frames();
            if r == 0 {
                clips.push(clip);
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "parse: {} files, {:.1} MB x {reps} in {secs:.3} s = {:.0} MB/s, {:.0} k frames/s",
        texts.len(),
        bytes as f64 / 1e6,
        (bytes * reps) as f64 / 1e6 / secs,
        frames as f64 / secs / 1e3
    );
    let start = Instant::now();
    let mut out = 0usize;
    for _ in 0..reps {
        for c in &clips {
            out += write_bvh_string(c).len();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("write: {:.0} MB/s", out as f64 / 1e6 / secs);
}
