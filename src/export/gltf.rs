//! glTF 2.0 binary (.glb) of a trajectory: a node per clip joint (the clip's own names and
//! hierarchy, so retargeting tools recognise it), the bodies' capsules, balls as animated
//! spheres, and two animations sampled at the clip's frame rate: "perturbed" (the
//! trajectory) and "original" (the mocap). Checked with the Khronos validator.
//!
//! Two layouts ([`GltfLayout`]). The default, [`GltfLayout::Skinned`], makes the clip
//! joints a skin (`skins[0]`, joints in the clip's hierarchy order, skeleton root = the clip
//! root) and the capsules one skinned mesh at the scene root, each vertex bound with weight
//! 1 to the joint of its body, so Blender imports one armature and three.js a
//! `SkinnedMesh`. Its bind pose is the clip's OFFSET pose ([`bind_pose`]): every joint's
//! rest transform is its OFFSET in metres with identity rotation (the root's also turned
//! from file to world axes), and every inverse bind matrix is the exact inverse of that
//! joint's world rest transform, so an importer that guesses the bind pose from the joint
//! nodes and one that reads the inverse bind matrices agree. [`GltfLayout::Nodes`] is the
//! older plain node tree: each body's capsules a mesh node under its joint node.

use super::pose::{
    Transform, joint_world_transforms_over_into, local_transforms, local_transforms_into,
    mocap_world_frames,
};
use crate::Character;
use crate::mocap::Clip;
use crate::sim::Trajectory;
use crate::skeleton::{ClipFrames, ClipWorldPoses, Model, Role};
use gltf_json as json;
use json::validation::{Checked::Valid, USize64};
use json::{Index, Node};
use nalgebra::{Isometry3, Matrix4, Translation3, UnitQuaternion, Vector3};

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

/// How the figure is laid out in the .glb.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GltfLayout {
    /// One armature: the clip joints are `skins[0]`, the capsules one skinned mesh (a
    /// primitive per colour) bound to them; the animations move the joint nodes.
    #[default]
    Skinned,
    /// Plain nodes (the layout before skinning): a mesh node per body under its joint node,
    /// no skin; importers make empties rather than bones.
    Nodes,
}

impl GltfLayout {
    /// The name used on the command line and in batch descriptions (`skinned`, `nodes`).
    pub fn name(self) -> &'static str {
        match self {
            GltfLayout::Skinned => "skinned",
            GltfLayout::Nodes => "nodes",
        }
    }
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

/// Capsule tessellation: segments around the axis.
pub const CAPSULE_SEGMENTS: usize = 16;
/// Capsule tessellation: rings per hemisphere.
pub const CAPSULE_RINGS: usize = 6;

/// The bind (rest) pose of the skinned layout, per clip joint (same indexing as
/// [`Clip::joints`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BindPose {
    /// Rest transform relative to the parent joint, as the joint node stores it: the
    /// OFFSET in metres (times the clip's scale) with identity rotation; the root's
    /// OFFSET and rotation are the file→world turn (Y up). Translations are exactly what
    /// the file stores (f32); rotations are the stored f32 components, normalised.
    pub local: Vec<Transform>,
    /// Rest transform in the world (the scene root), m: `local` composed down the
    /// hierarchy.
    pub world: Vec<Transform>,
    /// Inverse bind matrices: the exact inverse of `world` as a 4×4 matrix (m).
    pub inverse_bind: Vec<Matrix4<f64>>,
}

/// A value as the .glb stores it (f32), back in f64.
fn stored(v: f64) -> f64 {
    v as f32 as f64
}

/// The skinned layout's bind pose of a clip read as `model` reads it (scale, up axis).
pub fn bind_pose(model: &Model, clip: &Clip) -> BindPose {
    let scale = model.figure.scale;
    let to_world = model.figure.to_world;
    let n = clip.joints.len();
    let (mut local, mut world) = (Vec::with_capacity(n), Vec::<Transform>::with_capacity(n));
    for joint in &clip.joints {
        let offset = joint.offset * scale;
        let (t, q) = match joint.parent {
            None => (to_world * offset, to_world),
            Some(_) => (offset, UnitQuaternion::identity()),
        };
        let t = t.map(stored);
        let c = q.coords.map(stored);
        let q = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(c.w, c.x, c.y, c.z));
        let w = match joint.parent {
            None => (t, q),
            Some(p) => {
                let (pt, pq) = world[p];
                (pt + pq * t, pq * q)
            }
        };
        local.push((t, q));
        world.push(w);
    }
    let inverse_bind = world
        .iter()
        .map(|(t, q)| {
            Isometry3::from_parts(Translation3::from(*t), *q)
                .inverse()
                .to_homogeneous()
        })
        .collect();
    BindPose {
        local,
        world,
        inverse_bind,
    }
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
        self.view_written(root, bytes.len(), target, |data| {
            data.extend_from_slice(bytes)
        })
    }

    /// A buffer view of `len` bytes that `write` appends to the buffer (straight into it:
    /// no copy of an animation's megabytes on the way).
    fn view_written(
        &mut self,
        root: &mut json::Root,
        len: usize,
        target: Option<json::buffer::Target>,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Index<json::buffer::View> {
        while !self.data.len().is_multiple_of(4) {
            self.data.push(0);
        }
        let off = self.data.len();
        self.data.reserve(len);
        write(&mut self.data);
        debug_assert_eq!(self.data.len() - off, len);
        root.push(json::buffer::View {
            buffer: Index::new(0),
            byte_length: USize64::from(len),
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
        let comps = kind.multiplicity();
        let view = self.view_written(root, values.len() * 4, target, |data| {
            let start = data.len();
            data.resize(start + values.len() * 4, 0);
            for (bytes, v) in data[start..].chunks_exact_mut(4).zip(values) {
                bytes.copy_from_slice(&v.to_le_bytes());
            }
        });
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

    /// Triangle indices: UNSIGNED_SHORT when every index fits, else UNSIGNED_INT.
    fn accessor_indices(&mut self, root: &mut json::Root, values: &[u32]) -> Index<json::Accessor> {
        let short = values.iter().all(|&v| v <= u32::from(u16::MAX));
        let (bytes, component) = if short {
            let bytes: Vec<u8> = values
                .iter()
                .flat_map(|&v| (v as u16).to_le_bytes())
                .collect();
            (bytes, json::accessor::ComponentType::U16)
        } else {
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            (bytes, json::accessor::ComponentType::U32)
        };
        let view = self.view(root, &bytes, Some(json::buffer::Target::ElementArrayBuffer));
        self.accessor_of(
            root,
            view,
            values.len(),
            component,
            json::accessor::Type::Scalar,
        )
    }

    /// JOINTS_0: four joint indices per vertex, UNSIGNED_BYTE when every index fits, else
    /// UNSIGNED_SHORT.
    fn accessor_joints(
        &mut self,
        root: &mut json::Root,
        values: &[[u16; 4]],
    ) -> Index<json::Accessor> {
        let byte = values.iter().flatten().all(|&v| v <= u16::from(u8::MAX));
        let (bytes, component) = if byte {
            let bytes: Vec<u8> = values.iter().flatten().map(|&v| v as u8).collect();
            (bytes, json::accessor::ComponentType::U8)
        } else {
            let bytes: Vec<u8> = values
                .iter()
                .flatten()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            (bytes, json::accessor::ComponentType::U16)
        };
        let view = self.view(root, &bytes, Some(json::buffer::Target::ArrayBuffer));
        self.accessor_of(
            root,
            view,
            values.len(),
            component,
            json::accessor::Type::Vec4,
        )
    }

    fn accessor_of(
        &mut self,
        root: &mut json::Root,
        view: Index<json::buffer::View>,
        count: usize,
        component: json::accessor::ComponentType,
        kind: json::accessor::Type,
    ) -> Index<json::Accessor> {
        root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64::from(count),
            component_type: Valid(json::accessor::GenericComponentType(component)),
            type_: Valid(kind),
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

/// Triangle mesh of a capsule from `a` to `b` with radius `r` (m): (positions, normals,
/// indices), `segments` around the axis and `rings` per hemisphere.
pub fn capsule_mesh(
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    r: f64,
    segments: usize,
    rings: usize,
) -> (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u16>) {
    let (pos, nor, idx) = capsule_surface(a, b, r, segments, rings);
    let f32s = |v: &Vector3<f64>| [v.x as f32, v.y as f32, v.z as f32];
    (
        pos.iter().map(f32s).collect(),
        nor.iter().map(f32s).collect(),
        idx,
    )
}

/// [`capsule_mesh`] in f64: vertex positions (m), unit normals, triangle indices.
pub fn capsule_surface(
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    r: f64,
    segments: usize,
    rings: usize,
) -> (Vec<Vector3<f64>>, Vec<Vector3<f64>>, Vec<u16>) {
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
            pos.push(c + n * r);
            nor.push(n);
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

/// One animation's keyframes as the .glb stores them (f32), computed a frame at a time:
/// per clip joint its rotations (x, y, z, w a frame, each on the hemisphere of the frame
/// before's), per joint of `translated` its translations (x, y, z a frame). The local
/// transforms of every frame were 4.8 MB an animation in f64 on a 23 s clip, all fresh
/// memory; only the frame before is kept now.
fn animation_tracks(
    model: &Model,
    clip: &Clip,
    traj: Option<&Trajectory>,
    mocap: &[Vec<Transform>],
    translated: &[usize],
) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
    let n = mocap.len();
    let mut rotations: Vec<Vec<f32>> = clip
        .joints
        .iter()
        .map(|_| Vec::with_capacity(4 * n))
        .collect();
    let mut translations: Vec<Vec<f32>> = translated
        .iter()
        .map(|_| Vec::with_capacity(3 * n))
        .collect();
    let (mut world, mut local, mut prev) = (Vec::new(), Vec::new(), Vec::<Transform>::new());
    for (f, frame) in mocap.iter().enumerate() {
        let world: &[Transform] = match traj {
            Some(t) => {
                joint_world_transforms_over_into(model, clip, frame, &t.poses[f], &mut world);
                &world
            }
            None => frame,
        };
        local_transforms_into(clip, world, &mut local);
        for (l, p) in local.iter_mut().zip(&prev) {
            if l.1.coords.dot(&p.1.coords) < 0.0 {
                l.1 = UnitQuaternion::new_unchecked(-l.1.into_inner());
            }
        }
        for (r, (_, q)) in rotations.iter_mut().zip(&local) {
            r.extend([q.i as f32, q.j as f32, q.k as f32, q.w as f32]);
        }
        for (tr, &j) in translations.iter_mut().zip(translated) {
            let t = local[j].0;
            tr.extend([t.x as f32, t.y as f32, t.z as f32]);
        }
        std::mem::swap(&mut prev, &mut local);
    }
    (rotations, translations)
}

/// The skinned figure: every body's capsules placed in the bind pose (world rest), one
/// primitive per colour, each vertex bound with weight 1 to its body's joint; the skin
/// over all clip joints with their inverse bind matrices. Returns the mesh node (at the
/// scene root, no transform of its own, as glTF requires of skinned meshes).
fn push_skinned_figure(
    root: &mut json::Root,
    bin: &mut Bin,
    model: &Model,
    bind: &BindPose,
    materials: &[Index<json::Material>],
) -> Index<Node> {
    let mut parts: [FigurePart; 3] = Default::default();
    for (b, body) in model.bodies.iter().enumerate() {
        let part = &mut parts[side(model, b)];
        let (wt, wq) = bind.world[body.bvh_joint];
        // checked by the caller: at most 65536 joints
        let joint = body.bvh_joint as u16;
        for c in &body.capsules {
            let (p, nn, i) = capsule_surface(
                &(c.a + body.com),
                &(c.b + body.com),
                c.radius,
                CAPSULE_SEGMENTS,
                CAPSULE_RINGS,
            );
            let base = part.joints.len() as u32;
            for v in &p {
                let w = wt + wq * v;
                part.positions.extend([w.x as f32, w.y as f32, w.z as f32]);
            }
            for v in &nn {
                let w = wq * v;
                part.normals.extend([w.x as f32, w.y as f32, w.z as f32]);
            }
            part.joints
                .extend(std::iter::repeat_n([joint, 0, 0, 0], p.len()));
            part.indices
                .extend(i.into_iter().map(|k| u32::from(k) + base));
        }
    }
    let mut primitives = vec![];
    for (part, material) in parts.iter().zip(materials) {
        if part.joints.is_empty() {
            continue;
        }
        let positions = bin.accessor_f32(
            root,
            &part.positions,
            json::accessor::Type::Vec3,
            Some(json::buffer::Target::ArrayBuffer),
            true,
        );
        let normals = bin.accessor_f32(
            root,
            &part.normals,
            json::accessor::Type::Vec3,
            Some(json::buffer::Target::ArrayBuffer),
            false,
        );
        let joints = bin.accessor_joints(root, &part.joints);
        let weights: Vec<f32> = std::iter::repeat_n([1.0f32, 0.0, 0.0, 0.0], part.joints.len())
            .flatten()
            .collect();
        let weights = bin.accessor_f32(
            root,
            &weights,
            json::accessor::Type::Vec4,
            Some(json::buffer::Target::ArrayBuffer),
            false,
        );
        let indices = bin.accessor_indices(root, &part.indices);
        let mut attributes = std::collections::BTreeMap::new();
        attributes.insert(Valid(json::mesh::Semantic::Positions), positions);
        attributes.insert(Valid(json::mesh::Semantic::Normals), normals);
        attributes.insert(Valid(json::mesh::Semantic::Joints(0)), joints);
        attributes.insert(Valid(json::mesh::Semantic::Weights(0)), weights);
        primitives.push(json::mesh::Primitive {
            attributes,
            indices: Some(indices),
            material: Some(*material),
            mode: Valid(json::mesh::Mode::Triangles),
            targets: None,
            extensions: None,
            extras: Default::default(),
        });
    }
    let mesh = root.push(json::Mesh {
        name: Some("figure".into()),
        primitives,
        weights: None,
        extensions: None,
        extras: Default::default(),
    });
    let matrices: Vec<f32> = bind
        .inverse_bind
        .iter()
        .flat_map(|m| m.as_slice().iter().map(|&v| v as f32))
        .collect();
    let inverse_bind_matrices =
        bin.accessor_f32(root, &matrices, json::accessor::Type::Mat4, None, false);
    let skin = root.push(json::Skin {
        extensions: None,
        extras: Default::default(),
        inverse_bind_matrices: Some(inverse_bind_matrices),
        joints: (0..bind.local.len() as u32).map(Index::new).collect(),
        // Blender names the armature after the skin
        name: Some("skeleton".into()),
        skeleton: Some(Index::new(0)),
    });
    root.push(Node {
        name: Some("figure".into()),
        mesh: Some(mesh),
        skin: Some(skin),
        ..Default::default()
    })
}

/// Vertex data of one primitive of the skinned figure (one colour).
#[derive(Default)]
struct FigurePart {
    positions: Vec<f32>,
    normals: Vec<f32>,
    joints: Vec<[u16; 4]>,
    indices: Vec<u32>,
}

/// Build the .glb bytes in the default layout ([`GltfLayout::Skinned`]). `extras` (JSON)
/// is stored in the asset's extras (tool, scenario).
pub fn glb_bytes(
    model: &Model,
    clip: &Clip,
    traj: &Trajectory,
    extras: &serde_json::Value,
) -> Result<(Vec<u8>, GlbSummary), GltfError> {
    glb_bytes_with_layout(model, clip, traj, extras, GltfLayout::Skinned)
}

/// Build the .glb bytes in the given layout. `extras` (JSON) is stored in the asset's
/// extras (tool, scenario).
pub fn glb_bytes_with_layout(
    model: &Model,
    clip: &Clip,
    traj: &Trajectory,
    extras: &serde_json::Value,
    layout: GltfLayout,
) -> Result<(Vec<u8>, GlbSummary), GltfError> {
    glb_bytes_over(model, clip, None, traj, extras, layout)
}

/// [`glb_bytes_with_layout`] of a character's trajectory, posed over the mocap's world
/// transforms its build computed ([`Character::mocap_world`]): the same bytes, without
/// computing them again.
pub fn character_glb_bytes(
    character: &Character,
    traj: &Trajectory,
    extras: &serde_json::Value,
    layout: GltfLayout,
) -> Result<(Vec<u8>, GlbSummary), GltfError> {
    glb_bytes_over(
        &character.model,
        &character.clip,
        Some(&character.mocap_world),
        traj,
        extras,
        layout,
    )
}

/// The .glb container (glTF 2.0 §4.4: a 12-byte header, the JSON chunk padded with
/// spaces, the BIN chunk padded with zeros) around `json` and the buffer `bin`, built in
/// `bin`'s own storage: its megabytes of keyframes move up within it instead of being
/// copied into fresh memory (`gltf::binary::Glb::to_vec`, which gives the same bytes).
fn glb_container(json: &[u8], mut bin: Vec<u8>) -> Result<Vec<u8>, GltfError> {
    let padded = |n: usize| n.div_ceil(4) * 4;
    let (json_len, bin_len) = (padded(json.len()), padded(bin.len()));
    let head_len = 12 + 8 + json_len + 8;
    let total = head_len + bin_len;
    let total32 = u32::try_from(total)
        .map_err(|_| GltfError::Serialize(format!("{total} bytes: a .glb holds at most 4 GiB")))?;
    let mut head = Vec::with_capacity(head_len);
    head.extend_from_slice(b"glTF");
    head.extend_from_slice(&2u32.to_le_bytes());
    head.extend_from_slice(&total32.to_le_bytes());
    // (both chunk lengths are below the total, which fits)
    head.extend_from_slice(&(json_len as u32).to_le_bytes());
    head.extend_from_slice(b"JSON");
    head.extend_from_slice(json);
    head.resize(12 + 8 + json_len, b' ');
    head.extend_from_slice(&(bin_len as u32).to_le_bytes());
    head.extend_from_slice(b"BIN\0");
    bin.resize(bin_len, 0);
    bin.resize(total, 0);
    bin.copy_within(0..bin_len, head_len);
    bin[..head_len].copy_from_slice(&head);
    Ok(bin)
}

/// The .glb bytes; `mocap`: the clip's world transforms per used frame if known.
fn glb_bytes_over(
    model: &Model,
    clip: &Clip,
    mocap: Option<&ClipWorldPoses>,
    traj: &Trajectory,
    extras: &serde_json::Value,
    layout: GltfLayout,
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
    let nj = clip.joints.len();
    if model.owner.len() != nj
        || model.frozen.len() != nj
        || model.bodies.iter().any(|b| b.bvh_joint >= nj)
    {
        return Err(GltfError::Mismatch(
            "the model was built from another clip (joint count differs)".into(),
        ));
    }
    if nj > usize::from(u16::MAX) + 1 {
        return Err(GltfError::Mismatch(format!(
            "{nj} joints: a skin holds at most 65536"
        )));
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
        let (mut pos, mut nor, mut idx): (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u32>) =
            (vec![], vec![], vec![]);
        for (a, b, r) in caps {
            let (p, nn, i) = capsule_mesh(a, b, *r, CAPSULE_SEGMENTS, CAPSULE_RINGS);
            let base = pos.len() as u32;
            pos.extend(p);
            nor.extend(nn);
            idx.extend(i.into_iter().map(|k| u32::from(k) + base));
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
        let ia = bin.accessor_indices(root, &idx);
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

    let mocap = mocap_world_frames(mocap, &frames, n);
    let bind = (layout == GltfLayout::Skinned).then(|| bind_pose(model, clip));
    // Joint rest transforms: the bind pose (skinned), or the mocap's first frame (nodes).
    let first_frame;
    let rest = match &bind {
        Some(bind) => &bind.local,
        None => {
            first_frame = local_transforms(clip, &mocap[0]);
            &first_frame
        }
    };

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
    let mut scene_nodes = vec![Index::new(0)];
    match &bind {
        None => {
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
        }
        Some(bind) => {
            let figure = push_skinned_figure(&mut root, &mut bin, model, bind, &materials);
            scene_nodes.push(figure);
        }
    }
    for (j, ch) in children.into_iter().enumerate() {
        if !ch.is_empty() {
            root.nodes[j].children = Some(ch);
        }
    }
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
    for (name, simulated, with_balls) in
        [("perturbed", Some(traj), true), ("original", None, false)]
    {
        let (rotations, translations) =
            animation_tracks(model, clip, simulated, &mocap, &translated);
        let input = bin.accessor_f32(&mut root, &times, json::accessor::Type::Scalar, None, true);
        let mut samplers = vec![];
        let mut channels = vec![];
        let mut add = |root: &mut json::Root,
                       bin: &mut Bin,
                       node: usize,
                       path: json::animation::Property,
                       data: &[f32],
                       kind: json::accessor::Type,
                       interp: json::animation::Interpolation| {
            let output = bin.accessor_f32(root, data, kind, None, false);
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
        for (j, rot) in rotations.iter().enumerate() {
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
        for (&j, tr) in translated.iter().zip(&translations) {
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
                &tr,
                json::accessor::Type::Vec3,
                json::animation::Interpolation::Linear,
            );
            add(
                &mut root,
                &mut bin,
                node,
                json::animation::Property::Scale,
                &sc,
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
    let bytes = glb_container(text.as_bytes(), bin.data)?;
    let summary = GlbSummary {
        bytes: bytes.len(),
        nodes,
        animations,
        duration_s: times.last().copied().unwrap_or(0.0) as f64,
    };
    Ok((bytes, summary))
}
