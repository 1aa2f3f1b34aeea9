//! Export the demo clip's reference motion (plus one synthetic ball) to .glb and .bvh.
//! `cargo run --release --example export_demo -- [CLIP.bvh] [OUT_DIR]`
use jostle::export::{bvh::clip_with_trajectory, gltf::glb_bytes, write_atomic};
use jostle::mocap::write_bvh_string;
use jostle::sim::{BallTrack, Trajectory};
use jostle::{Character, CharacterOptions};
use nalgebra::Vector3;

fn main() -> anyhow::Result<()> {
    let clip = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "mocap/demo_walk.bvh".into());
    let out = std::path::PathBuf::from(std::env::args().nth(2).unwrap_or_else(|| "out".into()));
    std::fs::create_dir_all(&out)?;
    let c = Character::load(std::path::Path::new(&clip), &CharacterOptions::default())?;
    let n = c.clip.num_frames() - c.model.figure.first_frame;
    let mut traj = Trajectory::from_reference(&c.model, &c.reference, c.clip.frame_time, n);
    // A ball flying across the scene in the second half, to exercise the ball nodes.
    let positions = (0..n)
        .map(|f| {
            (f >= n / 2)
                .then(|| Vector3::new(-2.0 + 4.0 * (f - n / 2) as f64 / (n / 2) as f64, 1.2, 0.5))
        })
        .collect();
    traj.balls.push(BallTrack {
        radius: 0.095,
        positions,
    });
    let stem = std::path::Path::new(&clip)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (bytes, summary) = glb_bytes(
        &c.model,
        &c.clip,
        &traj,
        &serde_json::json!({"tool": "jostle", "scenario": "export_demo"}),
    )?;
    write_atomic(&out.join(format!("{stem}.glb")), &bytes)?;
    write_atomic(
        &out.join(format!("{stem}.bvh")),
        write_bvh_string(&clip_with_trajectory(&c.model, &c.clip, Some(&traj))).as_bytes(),
    )?;
    println!("{summary:?}");
    Ok(())
}
