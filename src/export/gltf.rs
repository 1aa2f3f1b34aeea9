//! glTF 2.0 binary (.glb) of a trajectory: a node per clip joint (the clip's own names and
//! hierarchy, so retargeting tools recognise it), capsule meshes per body, balls as
//! animated spheres, and two animations sampled at the clip's frame rate: "perturbed"
//! (the trajectory) and "original" (the mocap). Checked with the Khronos validator.

use super::pose::{Transform, joint_world_transforms, local_transforms};
use crate::mocap::Clip;
use crate::sim::Trajectory;
use crate::skeleton::{ClipFrames, Model, Role};
use gltf_json as json;
use json::validation::{Checked::Valid, USize64};
use json::{Index, Node};
use nalgebra::{UnitQuaternion, Vector3};
use std::borrow::Cow;

/// Why a .glb could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum GltfError {
    /// The trajectory does not fit the model/clip.
    #[error("cannot export glTF: {0}")]
    Mismatch(String),
    /// Serialisation failed.
    #[error("cannot serialise glTF: {0}")]
    Serialize(String),
}

/// What the writer produced.
#[derive(Clone, Debug, PartialEq)]
pub struct GlbSummary {
    /// Bytes of the .glb.
    pub bytes: usize,
    /// Nodes in the scene (joints + meshes + balls).
    pub nodes: usize,
    /// Animations ("perturbed", "original").
    pub animations: usize,
    /// Duration of the animations, s.
    pub duration_s: f64,
}

#[derive(Default)]
struct Bin {
    data: Vec<u8>,
}

impl Bin {
    fn view(
        &mut self,
        root: &mut json::Root,
        bytes: &[u8],
        target: Option<json::buffer::Target>,
    ) -> Index<json::buffer::View> {
        while !self.data.len().is_multiple_of(4) {
            self.data.push(0);
        }
        let off = self.data.len();
        self.data.extend_from_slice(bytes);
        root.push(json::buffer::View {
            buffer: Index::new(0),
            byte_length: USize64::from(bytes.len()),
            byte_offset: Some(USize64::from(off)),
            byte_stride: None,
            target: target.map(Valid),
            extensions: None,
            extras: Default::default(),
            name: None,
        })
    }

    fn accessor_f32(
        &mut self,
        root: &mut json::Root,
        values: &[f32],
        kind: json::accessor::Type,
        target: Option<json::buffer::Target>,
        bounds: bool,
    ) -> Index<json::Accessor> {
        let comps = match kind {
            json::accessor::Type::Scalar => 1,
            json::accessor::Type::Vec3 => 3,
            json::accessor::Type::Vec4 => 4,
            _ => 1,
        };
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.view(root, &bytes, target);
        let (min, max) = if bounds {
            let mut lo = vec![f32::INFINITY; comps];
            let mut hi = vec![f32::NEG_INFINITY; comps];
            for c in values.chunks(comps) {
                for i in 0..comps {
                    lo[i] = lo[i].min(c[i]);
                    hi[i] = hi[i].max(c[i]);
                }
            }
            (Some(json::Value::from(lo)), Some(json::Value::from(hi)))
        } else {
            (None, None)
        };
        root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64::from(values.len() / comps),
            component_type: Valid(json::accessor::GenericComponentType(
                json::accessor::ComponentType::F32,
            )),
            type_: Valid(kind),
            min,
            max,
            normalized: false,
            sparse: None,
            extensions: None,
            extras: Default::default(),
            name: None,
        })
    }

    fn accessor_u16(&mut self, root: &mut json::Root, values: &[u16]) -> Index<json::Accessor> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.view(root, &bytes, Some(json::buffer::Target::ElementArrayBuffer));
        root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64::from(values.len()),
            component_type: Valid(json::accessor::GenericComponentType(
                json::accessor::ComponentType::U16,
            )),
            type_: Valid(json::accessor::Type::Scalar),
            min: None,
            max: None,
            normalized: false,
            sparse: None,
            extensions: None,
            extras: Default::default(),
            name: None,
        })
    }
}

/// Triangle mesh of a capsule from `a` to `b` with radius `r`: (positions, normals, indices).
pub fn capsule_mesh(
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    r: f64,
    segments: usize,
    rings: usize,
) -> (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u16>) {
    let d = b - a;
    let len = d.norm();
    let axis = if len > 1e-12 { d / len } else { Vector3::y() };
    let u = crate::skeleton::joint::perpendicular(&axis);
    let v = axis.cross(&u);
    let (mut pos, mut nor, mut idx) = (vec![], vec![], vec![]);
    // rows from the bottom pole (at a, along −axis) to the top pole (at b)
    let mut rows: Vec<(f64, Vector3<f64>)> = vec![];
    for i in 0..=rings {
        let phi =
            -std::f64::consts::FRAC_PI_2 + std::f64::consts::FRAC_PI_2 * i as f64 / rings as f64;
        rows.push((phi, *a));
    }
    for i in 0..=rings {
        let phi = std::f64::consts::FRAC_PI_2 * i as f64 / rings as f64;
        rows.push((phi, *b));
    }
    for (phi, c) in &rows {
        for s in 0..=segments {
            let th = std::f64::consts::TAU * s as f64 / segments as f64;
            let n = axis * phi.sin() + (u * th.cos() + v * th.sin()) * phi.cos();
            let p = c + n * r;
            pos.push([p.x as f32, p.y as f32, p.z as f32]);
            nor.push([n.x as f32, n.y as f32, n.z as f32]);
        }
    }
    let w = segments + 1;
    for row in 0..rows.len() - 1 {
        for s in 0..segments {
            let (i0, i1) = ((row * w + s) as u16, (row * w + s + 1) as u16);
            let (j0, j1) = (((row + 1) * w + s) as u16, ((row + 1) * w + s + 1) as u16);
            idx.extend_from_slice(&[i0, j0, i1, i1, j0, j1]);
        }
    }
    (pos, nor, idx)
}

fn side(model: &Model, b: usize) -> usize {
    let body = &model.bodies[b];
    if let Some(r) = body.role {
        let n = r.name();
        if n.starts_with("left_") {
            return 1;
        }
        if n.starts_with("right_") {
            return 2;
        }
        if matches!(
            r,
            Role::Pelvis | Role::Abdomen | Role::Chest | Role::Neck | Role::Head
        ) {
            return 0;
        }
    }
    let n = crate::skeleton::base_name(&body.name);
    let l = n.to_ascii_lowercase();
    if l.starts_with("left")
        || n.starts_with("L_")
        || n.contains("_L_")
        || n.ends_with("_L")
        || (n.starts_with('l') && n.chars().nth(1).is_some_and(|c| c.is_uppercase()))
    {
        1
    } else if l.starts_with("right")
        || n.starts_with("R_")
        || n.contains("_R_")
        || n.ends_with("_R")
        || (n.starts_with('r') && n.chars().nth(1).is_some_and(|c| c.is_uppercase()))
    {
        2
    } else {
        0
    }
}

/// Local transforms of every clip joint for each frame, with quaternions made sign-continuous.
fn animation_locals(
    model: &Model,
    clip: &Clip,
    traj: Option<&Trajectory>,
    n: usize,
) -> Vec<Vec<Transform>> {
    let frames = ClipFrames::from_figure(clip, &model.figure);
    let mut out: Vec<Vec<Transform>> = Vec::with_capacity(n);
    for f in 0..n {
        let world = joint_world_transforms(model, &frames, f, traj.map(|t| t.poses[f].as_slice()));
        let mut local = local_transforms(clip, &world);
        if let Some(prev) = out.last() {
            for (l, p) in local.iter_mut().zip(prev) {
                if l.1.coords.dot(&p.1.coords) < 0.0 {
                    l.1 = UnitQuaternion::new_unchecked(-l.1.into_inner());
                }
            }
        }
        out.push(local);
    }
    out
}

/// Build the .glb bytes. `extras` (JSON) is stored in the asset's extras (tool, scenario).
pub fn glb_bytes(
    model: &Model,
    clip: &Clip,
    traj: &Trajectory,
    extras: &serde_json::Value,
) -> Result<(Vec<u8>, GlbSummary), GltfError> {
    let frames = ClipFrames::from_figure(clip, &model.figure);
    let n = traj.num_frames().min(frames.num_frames());
    if n == 0 {
        return Err(GltfError::Mismatch("the trajectory has no frames".into()));
    }
    if traj.poses.iter().any(|p| p.len() != model.num_bodies()) {
        return Err(GltfError::Mismatch(
            "trajectory body count differs from the model".into(),
        ));
    }
    let mut root = json::Root::default();
    root.asset.generator = Some(format!("jostle {}", env!("CARGO_PKG_VERSION")));
    root.asset.extras = serde_json::value::to_raw_value(extras).ok();
    let mut bin = Bin::default();

    // Materials: centre, left, right, ball.
    let colours = [
        ("centre", [0.78, 0.78, 0.76, 1.0]),
        ("left", [0.25, 0.45, 0.85, 1.0]),
        ("right", [0.85, 0.3, 0.25, 1.0]),
        ("ball", [1.0, 0.6, 0.1, 1.0]),
    ];
    let materials: Vec<Index<json::Material>> = colours
        .iter()
        .map(|(name, c)| {
            root.push(json::Material {
                name: Some((*name).into()),
                pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                    base_color_factor: json::material::PbrBaseColorFactor(*c),
                    metallic_factor: json::material::StrengthFactor(0.0),
                    roughness_factor: json::material::StrengthFactor(0.8),
                    ..Default::default()
                },
                ..Default::default()
            })
        })
        .collect();

    let push_mesh = |root: &mut json::Root,
                     bin: &mut Bin,
                     name: String,
                     caps: &[(Vector3<f64>, Vector3<f64>, f64)],
                     material: Index<json::Material>| {
        let (mut pos, mut nor, mut idx): (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u16>) =
            (vec![], vec![], vec![]);
        for (a, b, r) in caps {
            let (p, nn, i) = capsule_mesh(a, b, *r, 16, 6);
            let base = pos.len() as u16;
            pos.extend(p);
            nor.extend(nn);
            idx.extend(i.into_iter().map(|k| k + base));
        }
        let pa = bin.accessor_f32(
            root,
            &pos.concat(),
            json::accessor::Type::Vec3,
            Some(json::buffer::Target::ArrayBuffer),
            true,
        );
        let na = bin.accessor_f32(
            root,
            &nor.concat(),
            json::accessor::Type::Vec3,
            Some(json::buffer::Target::ArrayBuffer),
            false,
        );
        let ia = bin.accessor_u16(root, &idx);
        let mut attributes = std::collections::BTreeMap::new();
        attributes.insert(Valid(json::mesh::Semantic::Positions), pa);
        attributes.insert(Valid(json::mesh::Semantic::Normals), na);
        root.push(json::Mesh {
            name: Some(name),
            primitives: vec![json::mesh::Primitive {
                attributes,
                indices: Some(ia),
                material: Some(material),
                mode: Valid(json::mesh::Mode::Triangles),
                targets: None,
                extensions: None,
                extras: Default::default(),
            }],
            weights: None,
            extensions: None,
            extras: Default::default(),
        })
    };

    let original = animation_locals(model, clip, None, n);
    let perturbed = animation_locals(model, clip, Some(traj), n);
    let rest = &original[0];
    let nj = clip.joints.len();

    // Joint nodes first (index = clip joint index), then mesh and ball nodes.
    for (j, joint) in clip.joints.iter().enumerate() {
        let (t, q) = rest[j];
        root.push(Node {
            name: Some(joint.name.clone()),
            translation: Some([t.x as f32, t.y as f32, t.z as f32]),
            rotation: Some(json::scene::UnitQuaternion([
                q.i as f32, q.j as f32, q.k as f32, q.w as f32,
            ])),
            ..Default::default()
        });
    }
    let mut children: Vec<Vec<Index<Node>>> = vec![vec![]; nj];
    for (j, joint) in clip.joints.iter().enumerate() {
        if let Some(p) = joint.parent {
            children[p].push(Index::new(j as u32));
        }
    }
    for (b, body) in model.bodies.iter().enumerate() {
        let caps: Vec<_> = body
            .capsules
            .iter()
            .map(|c| (c.a + body.com, c.b + body.com, c.radius))
            .collect();
        let mesh = push_mesh(
            &mut root,
            &mut bin,
            format!("{}_capsules", body.name),
            &caps,
            materials[side(model, b)],
        );
        let node = root.push(Node {
            name: Some(format!("{}_mesh", body.name)),
            mesh: Some(mesh),
            ..Default::default()
        });
        children[body.bvh_joint].push(node);
    }
    for (j, ch) in children.into_iter().enumerate() {
        if !ch.is_empty() {
            root.nodes[j].children = Some(ch);
        }
    }
    let mut scene_nodes = vec![Index::new(0)];
    let mut ball_nodes = vec![];
    for (i, ball) in traj.balls.iter().enumerate() {
        let mesh = push_mesh(
            &mut root,
            &mut bin,
            format!("ball{i}"),
            &[(Vector3::zeros(), Vector3::zeros(), ball.radius)],
            materials[3],
        );
        let node = root.push(Node {
            name: Some(format!("ball{i}")),
            mesh: Some(mesh),
            scale: Some([0.0; 3]),
            ..Default::default()
        });
        scene_nodes.push(node);
        ball_nodes.push(node);
    }
    root.push(json::Scene {
        name: Some("jostle".into()),
        nodes: scene_nodes,
        extensions: None,
        extras: Default::default(),
    });
    root.scene = Some(Index::new(0));

    // Animations.
    let times: Vec<f32> = (0..n)
        .map(|f| (f as f64 * traj.frame_time) as f32)
        .collect();
    let translated: Vec<usize> = (0..nj)
        .filter(|&j| {
            j == 0
                || clip.joints[j].channels.iter().any(|c| !c.is_rotation())
                || model.owner[j].is_none()
                || model.bodies.first().is_some_and(|b| b.bvh_joint == j)
        })
        .collect();
    let mut anims = vec![];
    for (name, locals, with_balls) in [
        ("perturbed", &perturbed, true),
        ("original", &original, false),
    ] {
        let input = bin.accessor_f32(&mut root, &times, json::accessor::Type::Scalar, None, true);
        let mut samplers = vec![];
        let mut channels = vec![];
        let mut add = |root: &mut json::Root,
                       bin: &mut Bin,
                       node: usize,
                       path: json::animation::Property,
                       data: Vec<f32>,
                       kind: json::accessor::Type,
                       interp: json::animation::Interpolation| {
            let output = bin.accessor_f32(root, &data, kind, None, false);
            samplers.push(json::animation::Sampler {
                input,
                output,
                interpolation: Valid(interp),
                extensions: None,
                extras: Default::default(),
            });
            channels.push(json::animation::Channel {
                sampler: Index::new(samplers.len() as u32 - 1),
                target: json::animation::Target {
                    node: Index::new(node as u32),
                    path: Valid(path),
                    extensions: None,
                    extras: Default::default(),
                },
                extensions: None,
                extras: Default::default(),
            });
        };
        for j in 0..nj {
            let rot: Vec<f32> = locals
                .iter()
                .flat_map(|l| {
                    let q = l[j].1;
                    [q.i as f32, q.j as f32, q.k as f32, q.w as f32]
                })
                .collect();
            add(
                &mut root,
                &mut bin,
                j,
                json::animation::Property::Rotation,
                rot,
                json::accessor::Type::Vec4,
                json::animation::Interpolation::Linear,
            );
        }
        for &j in &translated {
            let tr: Vec<f32> = locals
                .iter()
                .flat_map(|l| {
                    let t = l[j].0;
                    [t.x as f32, t.y as f32, t.z as f32]
                })
                .collect();
            add(
                &mut root,
                &mut bin,
                j,
                json::animation::Property::Translation,
                tr,
                json::accessor::Type::Vec3,
                json::animation::Interpolation::Linear,
            );
        }
        for (i, ball) in traj.balls.iter().enumerate() {
            let node = ball_nodes[i].value();
            let mut last = Vector3::zeros();
            let (mut tr, mut sc) = (vec![], vec![]);
            for f in 0..n {
                let p = if with_balls {
                    ball.positions.get(f).copied().flatten()
                } else {
                    None
                };
                last = p.unwrap_or(last);
                tr.extend([last.x as f32, last.y as f32, last.z as f32]);
                sc.extend(if p.is_some() { [1.0f32; 3] } else { [0.0; 3] });
            }
            add(
                &mut root,
                &mut bin,
                node,
                json::animation::Property::Translation,
                tr,
                json::accessor::Type::Vec3,
                json::animation::Interpolation::Linear,
            );
            add(
                &mut root,
                &mut bin,
                node,
                json::animation::Property::Scale,
                sc,
                json::accessor::Type::Vec3,
                json::animation::Interpolation::Step,
            );
        }
        anims.push(json::Animation {
            name: Some(name.into()),
            channels,
            samplers,
            extensions: None,
            extras: Default::default(),
        });
    }
    let animations = anims.len();
    for a in anims {
        root.push(a);
    }
    while !bin.data.len().is_multiple_of(4) {
        bin.data.push(0);
    }
    root.push(json::Buffer {
        byte_length: USize64::from(bin.data.len()),
        uri: None,
        name: None,
        extensions: None,
        extras: Default::default(),
    });
    let nodes = root.nodes.len();
    let text =
        json::serialize::to_string(&root).map_err(|e| GltfError::Serialize(e.to_string()))?;
    let glb = gltf::binary::Glb {
        header: gltf::binary::Header {
            magic: *b"glTF",
            version: 2,
            length: 0,
        },
        json: Cow::Owned(text.into_bytes()),
        bin: Some(Cow::Owned(bin.data)),
    };
    let bytes = glb
        .to_vec()
        .map_err(|e| GltfError::Serialize(e.to_string()))?;
    let summary = GlbSummary {
        bytes: bytes.len(),
        nodes,
        animations,
        duration_s: times.last().copied().unwrap_or(0.0) as f64,
    };
    Ok((bytes, summary))
}
