//! glTF export: structure, unit and sign-continuous quaternions, increasing times with
//! bounds, no byteStride on animation data, atomic writes; for the repo's demo clips and
//! several real clips (../shared/mocap, skipped when absent).

mod common;

use gltf::animation::util::ReadOutputs;
use gltf::mesh::Semantic;
use jostle::export::gltf::{CAPSULE_RINGS, CAPSULE_SEGMENTS, bind_pose, glb_bytes};
use jostle::sim::balls::Ball;
use jostle::sim::scenario::BallSpec;
use jostle::sim::{BallTrack, SimOptions, Simulation, Trajectory};
use jostle::{Character, CharacterOptions};
use nalgebra::{Isometry3, Matrix4, Quaternion, Translation3, UnitQuaternion, Vector3};

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
            nj + 1 + traj.balls.len(),
            "{file}: nodes (joints, the skinned figure, balls)"
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

/// A parsed .glb with its binary chunk.
struct Glb {
    doc: gltf::Gltf,
    blob: Vec<u8>,
}

impl Glb {
    fn parse(bytes: &[u8]) -> Self {
        let doc = gltf::Gltf::from_slice(bytes).expect("re-imports");
        let blob = doc.blob.clone().expect("BIN chunk");
        Glb { doc, blob }
    }

    /// Rest (node) transforms of the first `n` nodes, f64.
    fn rest(&self, n: usize) -> Vec<Isometry3<f64>> {
        self.doc
            .nodes()
            .take(n)
            .map(|node| {
                let (t, r, s) = node.transform().decomposed();
                assert_eq!(s, [1.0; 3], "joint nodes carry no scale");
                iso(t, r)
            })
            .collect()
    }

    /// Per joint node (index < n): the keyed translations and rotations of an animation.
    fn keys(&self, name: &str, n: usize) -> Vec<JointKeys> {
        let anim = self
            .doc
            .animations()
            .find(|a| a.name() == Some(name))
            .expect("animation");
        let mut keys = vec![(None, None); n];
        for ch in anim.channels() {
            let node = ch.target().node().index();
            if node >= n {
                continue;
            }
            let reader = ch.reader(|_| Some(&self.blob[..]));
            match reader.read_outputs().expect("outputs") {
                ReadOutputs::Translations(t) => keys[node].0 = Some(t.collect()),
                ReadOutputs::Rotations(r) => keys[node].1 = Some(r.into_f32().collect()),
                _ => panic!("joint node {node}: only translation and rotation are animated"),
            }
        }
        keys
    }
}

/// A joint node's keyed translations and rotations (None: not animated).
type JointKeys = (Option<Vec<[f32; 3]>>, Option<Vec<[f32; 4]>>);

fn iso(t: [f32; 3], r: [f32; 4]) -> Isometry3<f64> {
    let q = Quaternion::new(r[3] as f64, r[0] as f64, r[1] as f64, r[2] as f64);
    Isometry3::from_parts(
        Translation3::new(t[0] as f64, t[1] as f64, t[2] as f64),
        UnitQuaternion::from_quaternion(q),
    )
}

/// World transforms of the joints at key `f` of an animation (unanimated parts at rest).
fn animated_worlds(
    rest: &[Isometry3<f64>],
    keys: &[JointKeys],
    parents: &[Option<usize>],
    f: usize,
) -> Vec<Matrix4<f64>> {
    let mut world: Vec<Matrix4<f64>> = Vec::with_capacity(rest.len());
    for j in 0..rest.len() {
        let mut local = rest[j];
        if let Some(t) = &keys[j].0 {
            local.translation = Translation3::new(t[f][0] as f64, t[f][1] as f64, t[f][2] as f64);
        }
        if let Some(r) = &keys[j].1 {
            local.rotation = iso([0.0; 3], r[f]).rotation;
        }
        let m = local.to_homogeneous();
        world.push(match parents[j] {
            None => m,
            Some(p) => world[p] * m,
        });
    }
    world
}

fn distance_to_segment(p: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
    let d = b - a;
    let len2 = d.norm_squared();
    let s = if len2 > 0.0 {
        ((p - a).dot(&d) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p - (a + d * s)).norm()
}

/// The skin: joints = the clip joints in hierarchy order, skeleton = the clip root, the
/// rest pose = OFFSET × scale with identity rotation (the root turned to Y up), inverse
/// bind matrices the exact inverse of the world rest pose (1e-9 in f64, f32 precision in
/// the file), every vertex bound with weight 1 to its body's joint.
#[test]
fn skin_joints_bind_pose_and_weights_are_valid() {
    let mut paths = common::repo_clips();
    let shared = [
        "cmu_01_01_jumps_turn.bvh",
        "bandai1_kick_normal_001.bvh",
        "iclone_cmu_02_01_walk.bvh",
        "mixamo_freebvh.bvh",
        "xia_neutral_01_000_walk.bvh",
    ];
    if let Some(d) = common::shared_dir_or_skip_part(&shared.join(", ")) {
        paths.extend(shared.iter().map(|f| d.join(f)));
    }
    for path in paths {
        let file = path.file_name().unwrap().to_string_lossy();
        let (c, traj, bytes) = export(&path);
        let g = Glb::parse(&bytes);
        let nj = c.clip.joints.len();
        assert_eq!(
            g.doc.nodes().count(),
            nj + 1 + traj.balls.len(),
            "{file}: joints, the figure, the balls"
        );
        // the library's bind pose, f64
        let bind = bind_pose(&c.model, &c.clip);
        let mut worst_ibm = 0.0f64;
        for j in 0..nj {
            let (t, q) = bind.world[j];
            let w = Isometry3::from_parts(Translation3::from(t), q).to_homogeneous();
            worst_ibm = worst_ibm.max((bind.inverse_bind[j] * w - Matrix4::identity()).amax());
            let (lt, lq) = bind.local[j];
            let offset = c.clip.joints[j].offset * c.model.figure.scale;
            if c.clip.joints[j].parent.is_some() {
                assert!(
                    (lt - offset).amax() < 1e-6,
                    "{file}: joint {j} rest = OFFSET"
                );
                assert_eq!(
                    lq,
                    UnitQuaternion::identity(),
                    "{file}: joint {j} rest rotation"
                );
            } else {
                assert!(
                    (lq.angle_to(&c.model.figure.to_world)) < 1e-6,
                    "{file}: root turn"
                );
            }
        }
        assert!(
            worst_ibm < 1e-9,
            "{file}: IBM × world rest − I = {worst_ibm:e}"
        );
        eprintln!("{file}: bind pose IBM × world rest − I, max entry {worst_ibm:.1e} (f64)");

        // the file: skin, joint nodes, inverse bind matrices
        let skins: Vec<_> = g.doc.skins().collect();
        assert_eq!(skins.len(), 1, "{file}: one skin");
        let skin = &skins[0];
        let joints: Vec<usize> = skin.joints().map(|n| n.index()).collect();
        assert_eq!(joints, (0..nj).collect::<Vec<_>>(), "{file}: skin joints");
        assert_eq!(
            skin.skeleton().map(|n| n.index()),
            Some(0),
            "{file}: skeleton root"
        );
        for (j, node) in skin.joints().enumerate() {
            assert_eq!(node.name(), Some(c.clip.joints[j].name.as_str()), "{file}");
            let kids: Vec<usize> = node.children().map(|n| n.index()).collect();
            let expected: Vec<usize> = c.clip.children(j).collect();
            assert_eq!(
                kids, expected,
                "{file}: joint {j}'s children are the clip's"
            );
        }
        let rest = g.rest(nj);
        for (j, r) in rest.iter().enumerate() {
            let (t, q) = bind.local[j];
            assert!(
                (r.translation.vector - t).amax() < 1e-12,
                "{file}: node {j} translation"
            );
            assert!(r.rotation.angle_to(&q) < 1e-6, "{file}: node {j} rotation");
        }
        let ibms: Vec<Matrix4<f64>> = skin
            .reader(|_| Some(&g.blob[..]))
            .read_inverse_bind_matrices()
            .expect("inverse bind matrices")
            .map(|m| Matrix4::from_fn(|r, col| m[col][r] as f64))
            .collect();
        assert_eq!(ibms.len(), nj, "{file}: one inverse bind matrix per joint");
        let rest_world = animated_worlds(&rest, &vec![(None, None); nj], &parents(&c), 0);
        let mut worst_file = 0.0f64;
        for j in 0..nj {
            worst_file = worst_file.max((ibms[j] * rest_world[j] - Matrix4::identity()).amax());
            assert!(
                (ibms[j] - bind.inverse_bind[j]).amax() < 1e-5,
                "{file}: IBM {j} stored"
            );
        }
        assert!(
            worst_file < 1e-5,
            "{file}: stored IBM × node rest − I = {worst_file:e}"
        );
        eprintln!("{file}: stored (f32) IBM × node rest − I, max entry {worst_file:.1e}");

        // the figure: one skinned mesh at the scene root, no transform of its own
        let figure = g.doc.nodes().nth(nj).expect("figure node");
        assert_eq!(figure.skin().map(|s| s.index()), Some(0), "{file}");
        let (t, r, s) = figure.transform().decomposed();
        assert_eq!(
            (t, r, s),
            ([0.0; 3], [0.0, 0.0, 0.0, 1.0], [1.0; 3]),
            "{file}"
        );
        let scene = g.doc.default_scene().expect("scene");
        assert!(
            scene.nodes().any(|n| n.index() == nj),
            "{file}: figure at the root"
        );
        assert_eq!(
            g.doc
                .meshes()
                .filter(|m| m
                    .primitives()
                    .any(|p| p.get(&Semantic::Joints(0)).is_some()))
                .count(),
            1,
            "{file}: one skinned mesh"
        );
        let body_joints: Vec<usize> = c.model.bodies.iter().map(|b| b.bvh_joint).collect();
        let mut per_joint = vec![0usize; nj];
        for prim in figure.mesh().expect("mesh").primitives() {
            let reader = prim.reader(|_| Some(&g.blob[..]));
            let n = reader.read_positions().expect("positions").count();
            let joints: Vec<[u16; 4]> = reader
                .read_joints(0)
                .expect("JOINTS_0")
                .into_u16()
                .collect();
            let weights: Vec<[f32; 4]> = reader
                .read_weights(0)
                .expect("WEIGHTS_0")
                .into_f32()
                .collect();
            assert_eq!((joints.len(), weights.len()), (n, n), "{file}");
            for (jt, w) in joints.iter().zip(&weights) {
                assert_eq!(*w, [1.0, 0.0, 0.0, 0.0], "{file}: weight 1 on one joint");
                assert_eq!(&jt[1..], &[0, 0, 0], "{file}: unused joints are 0");
                assert!(
                    body_joints.contains(&(jt[0] as usize)),
                    "{file}: a body's joint"
                );
                per_joint[jt[0] as usize] += 1;
            }
        }
        let ring = (CAPSULE_SEGMENTS + 1) * 2 * (CAPSULE_RINGS + 1);
        for body in &c.model.bodies {
            assert_eq!(
                per_joint[body.bvh_joint],
                body.capsules.len() * ring,
                "{file}: {}'s vertices",
                body.name
            );
        }
    }
}

fn parents(c: &Character) -> Vec<Option<usize>> {
    c.clip.joints.iter().map(|j| j.parent).collect()
}

/// Skinning the exported mesh with the exported "perturbed" animation (vertex =
/// jointWorld(t) × IBM × bind-pose vertex, all from the file) puts every vertex on its
/// body's capsule surface as the simulation posed it: a wrong bind pose, inverse bind
/// matrix or joint-local conversion shows as a gap. A real simulation with a ball hit,
/// on the repo's demo walk and on a CMU clip.
#[test]
fn skinning_reproduces_the_simulated_capsules() {
    let clips = [
        (
            common::repo_clip("demo_walk.bvh"),
            "t=1.5,target=right_forearm,speed=12",
        ),
        (
            common::shared_clip_or_repo("cmu_01_01_jumps_turn.bvh", "demo_wave.bvh"),
            "t=1.0,target=chest,speed=14",
        ),
    ];
    for (path, ball) in clips {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let c = Character::load(&path, &CharacterOptions::default()).expect("loads");
        let mut sim = Simulation::new(&c, SimOptions::default()).expect("sim");
        let launch = BallSpec::from_flag(ball)
            .expect("flag")
            .launch(&c.model, &c.reference)
            .expect("aims");
        sim.throw(Ball::from_launch(&launch));
        sim.run().expect("runs");
        let traj = sim.trajectory();
        let (bytes, _) = glb_bytes(&c.model, &c.clip, &traj, &serde_json::json!({})).expect("glb");
        let g = Glb::parse(&bytes);
        let nj = c.clip.joints.len();
        let rest = g.rest(nj);
        let keys = g.keys("perturbed", nj);
        let skin = g.doc.skins().next().expect("skin");
        let ibms: Vec<Matrix4<f64>> = skin
            .reader(|_| Some(&g.blob[..]))
            .read_inverse_bind_matrices()
            .expect("inverse bind matrices")
            .map(|m| Matrix4::from_fn(|r, col| m[col][r] as f64))
            .collect();
        let mut vertices: Vec<(Vector3<f64>, usize)> = vec![];
        let figure = g.doc.nodes().nth(nj).expect("figure node");
        for prim in figure.mesh().expect("mesh").primitives() {
            let reader = prim.reader(|_| Some(&g.blob[..]));
            let joints = reader.read_joints(0).expect("JOINTS_0").into_u16();
            for (p, j) in reader.read_positions().expect("positions").zip(joints) {
                let v = Vector3::new(p[0] as f64, p[1] as f64, p[2] as f64);
                vertices.push((v, j[0] as usize));
            }
        }
        let body_of: std::collections::HashMap<usize, usize> = c
            .model
            .bodies
            .iter()
            .enumerate()
            .map(|(b, body)| (body.bvh_joint, b))
            .collect();
        let n = traj.num_frames();
        let hit = traj.balls[0]
            .positions
            .iter()
            .position(|p| p.is_some())
            .unwrap_or(0);
        let mut frames: Vec<usize> = vec![0, n / 4, n / 2, 3 * n / 4, n - 1];
        frames.extend((hit..n).step_by(7).take(12));
        let mut worst = (0.0f64, 0usize, String::new());
        for &f in &frames {
            let world = animated_worlds(&rest, &keys, &parents(&c), f);
            let skinning: Vec<Matrix4<f64>> = (0..nj).map(|j| world[j] * ibms[j]).collect();
            for (v, j) in &vertices {
                let p = (skinning[*j] * v.push(1.0)).xyz();
                let b = body_of[j];
                let body = &c.model.bodies[b];
                let pose = &traj.poses[f][b];
                let gap = body
                    .capsules
                    .iter()
                    .map(|cap| {
                        let a = pose.x + pose.q * cap.a;
                        let e = pose.x + pose.q * cap.b;
                        (distance_to_segment(&p, &a, &e) - cap.radius).abs()
                    })
                    .fold(f64::INFINITY, f64::min);
                if gap > worst.0 {
                    worst = (gap, f, body.name.clone());
                }
            }
        }
        eprintln!(
            "{file}: {} vertices × {} frames, largest gap to the simulated capsule surface {:.3e} m (frame {}, {})",
            vertices.len(),
            frames.len(),
            worst.0,
            worst.1,
            worst.2
        );
        assert!(
            worst.0 < 2e-6,
            "{file}: skinned surface off by {:e} m",
            worst.0
        );
    }
}
