//! BVH export round trips: the mocap itself for the repo's demo clips and every shared clip
//! (../shared/mocap, skipped when absent), and a body trajectory.

mod common;

use jostle::export::bvh::clip_with_trajectory;
use jostle::mocap::{parse_bvh, write_bvh_string};
use jostle::sim::Trajectory;
use jostle::skeleton::ClipFrames;
use jostle::{Character, CharacterOptions};

#[test]
fn exported_mocap_reproduces_every_joint_position_on_every_frame() {
    let mut worst: f64 = 0.0;
    let paths = common::repo_and_shared_clips();
    for path in paths {
        let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
        let out = clip_with_trajectory(&c.model, &c.clip, None);
        let text = write_bvh_string(&out);
        let back = parse_bvh(&text, "export").expect("exported BVH parses");
        assert_eq!(back.joints.len(), c.clip.joints.len());
        assert_eq!(back.num_frames(), c.clip.num_frames());
        let a = ClipFrames::from_figure(&c.clip, &c.model.figure);
        let b = ClipFrames::from_figure(&back, &c.model.figure);
        let tol = 1e-4 * c.model.figure.height_m;
        let mut err: f64 = 0.0;
        for f in 0..a.num_frames() {
            for (pa, pb) in a.world(f).iter().zip(b.world(f).iter()) {
                err = err.max((pa.0 - pb.0).norm());
            }
        }
        eprintln!(
            "{:45} max joint position error {:.2e} m",
            path.file_name().unwrap().to_string_lossy(),
            err
        );
        assert!(err < tol, "{}: {err} m > {tol} m", path.display());
        worst = worst.max(err / c.model.figure.height_m);
    }
    eprintln!("worst relative error {worst:.2e} of the figure height");
}

#[test]
fn exported_trajectory_round_trips_to_the_body_joint_points() {
    let mut paths = common::repo_clips();
    let shared = [
        "cmu_walk_bvhmatlab.bvh",
        "xia_depressed_18_000_punch.bvh",
        "bandai1_punch_normal_001.bvh",
        "mixamo_freebvh.bvh",
    ];
    if let Some(d) = common::shared_dir_or_skip_part(&shared.join(", ")) {
        paths.extend(shared.iter().map(|f| d.join(f)));
    }
    for path in paths {
        let file = path.file_name().unwrap().to_string_lossy();
        let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
        let n = c.clip.num_frames() - c.model.figure.first_frame;
        let traj = Trajectory::from_reference(&c.model, &c.reference, c.clip.frame_time, n);
        let out = clip_with_trajectory(&c.model, &c.clip, Some(&traj));
        let back = parse_bvh(&write_bvh_string(&out), "export").expect("parses");
        let frames = ClipFrames::from_figure(&back, &c.model.figure);
        let tol = 1e-4 * c.model.figure.height_m;
        let mut err: f64 = 0.0;
        for f in 0..n {
            let w = frames.world(f);
            for (b, body) in c.model.bodies.iter().enumerate() {
                let pose = traj.poses[f][b];
                let joint_point = pose.x - pose.q * body.com;
                err = err.max((w[body.bvh_joint].0 - joint_point).norm());
                err = err.max(w[body.bvh_joint].1.angle_to(&pose.q) * 0.1);
            }
        }
        eprintln!("{file:45} max body joint error {err:.2e} m");
        assert!(err < tol, "{file}: {err} m > {tol} m");
    }
}

#[test]
fn a_characters_exports_over_its_builds_poses_are_the_plain_exports_bytes() {
    // `character_glb_bytes` and `character_clip_with_trajectory` pose the animations over
    // the mocap's world transforms the model's build computed (`Character::mocap_world`)
    // instead of computing them again from the clip and the model's figure: the two must
    // agree to the bit, on every repo and shared clip (T-pose frames dropped, carriers,
    // unit and axis conversions).
    use jostle::export::bvh::character_clip_with_trajectory;
    use jostle::export::gltf::{GltfLayout, character_glb_bytes, glb_bytes_with_layout};
    for path in common::repo_and_shared_clips() {
        let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
        let n = c.clip.num_frames() - c.model.figure.first_frame;
        assert_eq!(c.mocap_world.len(), n, "{}", path.display());
        let traj = Trajectory::from_reference(&c.model, &c.reference, c.clip.frame_time, n);
        for t in [None, Some(&traj)] {
            assert_eq!(
                write_bvh_string(&character_clip_with_trajectory(&c, t)),
                write_bvh_string(&clip_with_trajectory(&c.model, &c.clip, t)),
                "{}",
                path.display()
            );
        }
        let extras = serde_json::json!({});
        for layout in [GltfLayout::Skinned, GltfLayout::Nodes] {
            let (a, _) = character_glb_bytes(&c, &traj, &extras, layout).expect("glb");
            let (b, _) =
                glb_bytes_with_layout(&c.model, &c.clip, &traj, &extras, layout).expect("glb");
            assert!(a == b, "{}: {layout:?} .glb differs", path.display());
        }
    }
}
