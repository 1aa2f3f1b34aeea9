//! glTF export: structure, unit and sign-continuous quaternions, increasing times with
//! bounds, no byteStride on animation data, atomic writes; for the repo's demo clips and
//! several real clips (../shared/mocap, skipped when absent).

mod common;

use jostle::export::gltf::glb_bytes;
use jostle::sim::{BallTrack, Trajectory};
use jostle::{Character, CharacterOptions};
use nalgebra::Vector3;

fn read_f32(doc: &gltf::Gltf, blob: &[u8], acc: &gltf::Accessor) -> Vec<f32> {
    let view = acc.view().expect("accessor has a view");
    assert!(
        view.stride().is_none(),
        "animation/vertex views carry no byteStride"
    );
    let start = view.offset() + acc.offset();
    let n = acc.count() * acc.dimensions().multiplicity();
    let _ = doc;
    (0..n)
        .map(|i| {
            f32::from_le_bytes(
                blob[start + 4 * i..start + 4 * i + 4]
                    .try_into()
                    .expect("4 bytes"),
            )
        })
        .collect()
}

fn export(file: &std::path::Path) -> (Character, Trajectory, Vec<u8>) {
    let c = Character::load(file, &CharacterOptions::default()).expect("loads");
    let n = c.clip.num_frames() - c.model.figure.first_frame;
    let mut traj = Trajectory::from_reference(&c.model, &c.reference, c.clip.frame_time, n);
    traj.balls.push(BallTrack {
        radius: 0.095,
        positions: (0..n)
            .map(|f| (f > n / 3).then(|| Vector3::new(0.01 * f as f64, 1.0, 0.0)))
            .collect(),
    });
    let (bytes, summary) =
        glb_bytes(&c.model, &c.clip, &traj, &serde_json::json!({"test": true})).expect("exports");
    assert_eq!(summary.bytes, bytes.len());
    (c, traj, bytes)
}

#[test]
fn glb_structure_and_animation_data_are_valid() {
    let mut paths = common::repo_clips();
    let shared = [
        "cmu_walk_bvhmatlab.bvh",
        "bandai1_kick_normal_001.bvh",
        "iclone_cmu_02_01_walk.bvh",
        "mixamo_freebvh.bvh",
        "cmusl_60_12_salsa_lead_m.bvh",
    ];
    if let Some(d) = common::shared_dir_or_skip_part(&shared.join(", ")) {
        paths.extend(shared.iter().map(|f| d.join(f)));
    }
    for path in paths {
        let file = path.file_name().unwrap().to_string_lossy();
        let (c, traj, bytes) = export(&path);
        let doc = gltf::Gltf::from_slice(&bytes).expect("re-imports");
        let blob = doc.blob.clone().expect("BIN chunk");
        let nj = c.clip.joints.len();
        assert_eq!(
            doc.nodes().count(),
            nj + c.model.num_bodies() + traj.balls.len(),
            "{file}: nodes"
        );
        for (j, node) in doc.nodes().take(nj).enumerate() {
            assert_eq!(
                node.name(),
                Some(c.clip.joints[j].name.as_str()),
                "{file}: node {j} keeps the clip's name"
            );
        }
        let names: Vec<_> = doc
            .animations()
            .map(|a| a.name().unwrap_or("").to_string())
            .collect();
        assert_eq!(names, ["perturbed", "original"], "{file}");
        for anim in doc.animations() {
            for ch in anim.channels() {
                let s = ch.sampler();
                let times = read_f32(&doc, &blob, &s.input());
                assert!(
                    s.input().min().is_some() && s.input().max().is_some(),
                    "{file}: input bounds"
                );
                assert!(
                    times.windows(2).all(|w| w[1] > w[0]),
                    "{file}: increasing times"
                );
                let expect = (traj.num_frames() - 1) as f64 * c.clip.frame_time;
                assert!(
                    (*times.last().unwrap() as f64 - expect).abs() < 1e-4,
                    "{file}: duration"
                );
                if ch.target().property() == gltf::animation::Property::Rotation {
                    let q = read_f32(&doc, &blob, &s.output());
                    for (k, w) in q.chunks(4).enumerate() {
                        let n = w.iter().map(|x| x * x).sum::<f32>().sqrt();
                        assert!(
                            (n - 1.0).abs() < 1e-5,
                            "{file}: quaternion {k} has norm {n}"
                        );
                        if k > 0 {
                            let p = &q[4 * (k - 1)..4 * k];
                            let dot: f32 = p.iter().zip(w).map(|(a, b)| a * b).sum();
                            assert!(dot >= 0.0, "{file}: quaternion keys {k} flip sign");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn write_atomic_leaves_no_partial_file() {
    let dir = std::env::temp_dir().join(format!("jostle-atomic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("a.glb");
    jostle::export::write_atomic(&path, b"hello").expect("writes");
    assert_eq!(std::fs::read(&path).expect("reads"), b"hello");
    // a destination inside a missing directory fails cleanly, leaving nothing behind
    let bad = dir.join("missing/b.glb");
    assert!(jostle::export::write_atomic(&bad, b"x").is_err());
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    std::fs::remove_dir_all(&dir).ok();
}
