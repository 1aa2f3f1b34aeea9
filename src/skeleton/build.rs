//! Clip + skeleton spec → [`Model`] (METHOD §3): choose bodies, merge tiny and zero-length
//! bones, measure the rigid geometry from the motion, build capsules, mass and joints.

use super::anthropometry::DEFAULT_BMI;
use super::mass::{FigureBodies, ShapeSegment, distribute};
use super::model::{Body, Capsule, FigureInfo, GRAVITY, Joint, Model};
use super::roles::{JointType, MERGE_KEYWORDS, Role};
use super::spec::{SkeletonSpec, base_name, choose_spec};
use super::stature::estimate_stature;
use super::units::{ClipFrames, FigureError, FrameOptions, PositionConvention};
use crate::mocap::Clip;
use nalgebra::{Matrix3, Quaternion, SymmetricEigen, UnitQuaternion, Vector3};
use std::collections::BTreeMap;

/// Options for building a model.
#[derive(Clone, Debug, Default)]
pub struct ModelOptions {
    /// Units, stature and T-pose handling.
    pub frames: FrameOptions,
    /// A user skeleton spec; `None` picks a built-in one by joint names (or `auto`).
    pub spec: Option<SkeletonSpec>,
    /// Total body mass, kg (`--mass`); `None`: [`DEFAULT_BMI`] × stature².
    pub mass_kg: Option<f64>,
}

/// Why a model could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The clip does not describe a usable figure.
    #[error(transparent)]
    Figure(#[from] FigureError),
    /// An option is out of its range (names the command-line flag).
    #[error("{option}: {message}")]
    InvalidOption {
        /// The flag (`--mass`).
        option: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A user spec names joints the clip lacks.
    #[error("skeleton spec `{spec}` does not fit this clip: joint `{joint}` not found")]
    SpecMismatch {
        /// Spec name.
        spec: String,
        /// Missing joint.
        joint: String,
    },
}

/// Name parts of rig helper bones that get no shape of their own.
const HELPER_KEYWORDS: [&str; 8] = [
    "twist", "share", "breast", "facial", "jaw", "tongue", "teeth", "eye",
];

/// Fraction of the figure height below which a joint's offset counts as zero (merge).
const ZERO_OFFSET_FRACTION: f64 = 0.005;
/// Fraction of the figure height below which an unnamed bone subtree is merged.
const TINY_FRACTION: f64 = 0.045;

/// World poses (metres, Y up) of every clip joint at every used frame, `[frame][joint]`:
/// what the model build and the reference fit both read.
pub type ClipWorldPoses = Vec<Vec<(Vector3<f64>, UnitQuaternion<f64>)>>;

/// Build the physical model of a clip.
pub fn build_model(clip: &Clip, opts: &ModelOptions) -> Result<Model, ModelError> {
    build_model_with_poses(clip, opts).map(|(model, _)| model)
}

/// [`build_model`], also returning the clip's world poses it was built from (those of
/// `ClipFrames::from_figure(clip, &model.figure)`, bit for bit), for
/// [`crate::motion::reference::Reference::fit_with_poses`]: posing every frame is most of
/// a load, and the fit would pose them again.
pub fn build_model_with_poses(
    clip: &Clip,
    opts: &ModelOptions,
) -> Result<(Model, ClipWorldPoses), ModelError> {
    if let Some(m) = opts.mass_kg
        && !(m.is_finite() && m > 0.0)
    {
        return Err(ModelError::InvalidOption {
            option: "--mass",
            message: format!("must be a positive body mass in kilograms, got {m}"),
        });
    }
    let mut frames = ClipFrames::new(clip, &opts.frames)?;

    // Skeleton spec and roles.
    let builtin;
    let (spec, roles): (Option<&SkeletonSpec>, BTreeMap<Role, usize>) = match &opts.spec {
        Some(s) => {
            let m = s.match_clip(clip).ok_or_else(|| ModelError::SpecMismatch {
                spec: s.name.clone(),
                joint: s
                    .roles
                    .values()
                    .find(|n| {
                        !clip
                            .joints
                            .iter()
                            .any(|j| base_name(&j.name) == base_name(n))
                    })
                    .cloned()
                    .unwrap_or_default(),
            })?;
            (Some(s), m)
        }
        None => {
            builtin = SkeletonSpec::builtin();
            match choose_spec(&builtin, clip) {
                Some((i, m)) => (Some(&builtin[i]), m),
                None => (None, BTreeMap::new()),
            }
        }
    };
    let spec_name = spec.map_or("auto".to_string(), |s| s.name.clone());
    let mut role_of: Vec<Option<Role>> = vec![None; clip.joints.len()];
    for (r, j) in &roles {
        role_of[*j] = Some(*r);
    }
    // Stature from bone lengths is pose-independent (a crouching fighter or a dancer
    // with raised arms has the same bones); prefer it to the vertical extent.
    let stature = estimate_stature(&frames, &roles, frames.height_m);
    let measured_scale = frames.scale;
    frames.set_units(stature.stature / measured_scale, &opts.frames)?;
    let h = frames.height_m;
    let stature_source = match frames.unit.as_str() {
        "--height" | "fitted" => frames.unit.clone(),
        _ => stature.source.keyword().to_string(),
    };
    let stature_detail = stature.describe(frames.scale / measured_scale);
    // Radii of the provisional shapes (volumes compared before masses are known) grow
    // with √stature, as mass does at a constant body-mass index.
    let size = (h / 1.75).sqrt();
    let mut notes = frames.notes.clone();
    notes.push(format!(
        "units: {} ({} m per file unit); stature {:.3} m ({stature_source})",
        frames.unit, frames.scale, h
    ));
    let (total_mass, mass_source) = match opts.mass_kg {
        Some(m) => (m, format!("--mass {m} kg")),
        None => (
            DEFAULT_BMI * h * h,
            format!("body-mass index {DEFAULT_BMI} kg/m² × stature²"),
        ),
    };

    // All frames in world coordinates (metres).
    let nf = frames.num_frames();
    let world: ClipWorldPoses = (0..nf).map(|f| frames.world(f)).collect();
    let nj = clip.joints.len();
    let children: Vec<Vec<usize>> = (0..nj).map(|j| clip.children(j).collect()).collect();

    // Static carriers: a root with a single child is not a body (Bandai joint_Root,
    // iClone RL_BoneRoot); descend to the first joint that branches.
    let mut root = 0;
    while children[root].len() == 1 {
        notes.push(format!(
            "`{}` has a single child: treated as a carrier, not a body",
            clip.joints[root].name
        ));
        root = children[root][0];
    }

    // Mean local translation length of each joint (m) and extent of its subtree.
    let mean_offset: Vec<f64> = (0..nj)
        .map(|j| match clip.joints[j].parent {
            None => 0.0,
            Some(p) => {
                let s: f64 = world
                    .iter()
                    .map(|w| (w[p].1.inverse() * (w[j].0 - w[p].0)).norm())
                    .sum();
                s / nf as f64
            }
        })
        .collect();
    let w0 = &world[0];
    let mut extent = vec![0.0f64; nj];
    for k in (0..nj).rev() {
        if let Some(e) = clip.joints[k].end_site {
            extent[k] = extent[k].max((e * frames.scale).norm());
        }
        let mut a = clip.joints[k].parent;
        while let Some(p) = a {
            extent[p] = extent[p].max((w0[k].0 - w0[p].0).norm() + 0.0);
            a = clip.joints[p].parent;
        }
    }

    // Decide which clip joints start a body.
    let mut owner: Vec<Option<usize>> = vec![None; nj];
    let mut bodies: Vec<Body> = Vec::new();
    let in_subtree = |j: usize| {
        let mut a = Some(j);
        while let Some(x) = a {
            if x == root {
                return true;
            }
            a = clip.joints[x].parent;
        }
        false
    };
    for j in 0..nj {
        if !in_subtree(j) {
            continue;
        }
        let name = &clip.joints[j].name;
        let lname = base_name(name).to_ascii_lowercase();
        let is_body = if j == root {
            true
        } else if spec.is_some_and(|s| s.forces_merge(name))
            || mean_offset[j] < ZERO_OFFSET_FRACTION * h
        {
            false
        } else if role_of[j].is_some() {
            true
        } else {
            !(MERGE_KEYWORDS.iter().any(|k| lname.contains(k)) || extent[j] < TINY_FRACTION * h)
        };
        if is_body {
            let parent = clip.joints[j].parent.and_then(|p| owner[p]);
            owner[j] = Some(bodies.len());
            if let Some(p) = parent {
                let idx = bodies.len();
                bodies[p].children.push(idx);
            }
            bodies.push(Body {
                name: name.clone(),
                role: role_of[j],
                parent,
                children: vec![],
                bvh_joint: j,
                merged: vec![],
                mass: 0.0,
                inertia: Matrix3::zeros(),
                com: Vector3::zeros(),
                capsules: vec![],
                joint: None,
                segments: vec![],
            });
        } else {
            let Some(p) = clip.joints[j].parent.and_then(|p| owner[p]) else {
                continue;
            };
            owner[j] = Some(p);
            bodies[p].merged.push(j);
            if let Some(r) = role_of[j] {
                if bodies[p].role.is_none() {
                    bodies[p].role = Some(r);
                }
                notes.push(format!(
                    "`{name}` ({}) has no length of its own: merged into `{}`",
                    r.name(),
                    bodies[p].name
                ));
            }
        }
    }

    // Mean position of a world point track in body b's frame.
    let mean_in_body = |b: &Body, track: &dyn Fn(usize) -> Vector3<f64>| -> Vector3<f64> {
        let r = b.bvh_joint;
        let s: Vector3<f64> = (0..nf)
            .map(|f| world[f][r].1.inverse() * (track(f) - world[f][r].0))
            .sum();
        s / nf as f64
    };

    // Geometry of each body: its bones as capsule axes in the body frame.
    let mut shapes: Vec<Vec<ShapeSegment>> = Vec::with_capacity(bodies.len());
    let mut provisional_radius = Vec::with_capacity(bodies.len());
    let mut spec_radius = Vec::with_capacity(bodies.len());
    for b in &bodies {
        let from_spec = spec
            .and_then(|s| s.radius_for(b.role, &b.name))
            .map(|r| r * size);
        let r_body = from_spec.or(b.role.map(|r| r.default_radius_m() * size));
        let members: Vec<usize> = std::iter::once(b.bvh_joint)
            .chain(b.merged.iter().copied())
            .collect();
        let mut rep_segments: Vec<(Vector3<f64>, Vector3<f64>, bool)> = vec![];
        let mut other_segments: Vec<(Vector3<f64>, Vector3<f64>, bool)> = vec![];
        let bi = owner[b.bvh_joint];
        // Helper bones (twist, share, breast, facial) are not anatomical segments: no shape.
        let helper = |j: usize| {
            let n = base_name(&clip.joints[j].name).to_ascii_lowercase();
            HELPER_KEYWORDS.iter().any(|k| n.contains(k))
        };
        for &k in &members {
            if k != b.bvh_joint && helper(k) {
                continue;
            }
            let pk = mean_in_body(b, &|f| world[f][k].0);
            let near_rep = pk.norm() < 0.01 * h;
            let mut ends: Vec<(Vector3<f64>, bool)> = children[k]
                .iter()
                .filter(|&&c| !(owner[c] == bi && helper(c)))
                .map(|&c| {
                    let leaf = children[c].is_empty() && clip.joints[c].end_site.is_none();
                    (mean_in_body(b, &|f| world[f][c].0), leaf && owner[c] == bi)
                })
                .collect();
            if let Some(e) = clip.joints[k].end_site {
                let e = e * frames.scale;
                ends.push((
                    mean_in_body(b, &|f| world[f][k].0 + world[f][k].1 * e),
                    true,
                ));
            }
            // Children at one point (a chest's neck and collars starting together, as in
            // OptiTrack and MocapBank files) are one bone: counted once, else the body's
            // volume went to three copies of one capsule, each of 1/√3 the radius.
            let mut distinct: Vec<(Vector3<f64>, bool)> = Vec::with_capacity(ends.len());
            for (pe, cap) in ends {
                match distinct.iter_mut().find(|(q, _)| (q - pe).norm() < 1e-4) {
                    Some(same) => same.1 |= cap,
                    None => distinct.push((pe, cap)),
                }
            }
            for (pe, cap) in distinct {
                if (pe - pk).norm() < 1e-4 {
                    continue;
                }
                if near_rep {
                    rep_segments.push((pk, pe, cap));
                } else {
                    other_segments.push((pk, pe, cap));
                }
            }
        }
        let longest = rep_segments
            .iter()
            .chain(&other_segments)
            .map(|(a, c, _)| (c - a).norm())
            .fold(0.0, f64::max);
        let r = r_body.unwrap_or_else(|| (0.2 * longest).clamp(0.015 * size, 0.06 * size));
        let mut shape: Vec<ShapeSegment> = rep_segments
            .into_iter()
            .map(|(a, c, cap)| ShapeSegment {
                a,
                b: c,
                cap,
                thin: false,
            })
            .collect();
        for (a, c, cap) in other_segments {
            // Helper bones lying inside the body's capsules (twist bones) add nothing.
            let inside = |p: &Vector3<f64>| {
                shape.iter().any(|s| {
                    let rr = if s.thin {
                        r.min(0.2 * (s.b - s.a).norm())
                    } else {
                        r
                    };
                    point_segment_distance(p, &s.a, &s.b) <= rr
                })
            };
            if inside(&a) && inside(&c) {
                continue;
            }
            shape.push(ShapeSegment {
                a,
                b: c,
                cap,
                thin: true,
            });
        }
        shapes.push(shape);
        provisional_radius.push(r);
        spec_radius.push(from_spec);
    }

    // Mass, centre of mass, inertia and capsule radii from the anthropometric tables.
    let body_roles: Vec<Vec<Role>> = bodies
        .iter()
        .map(|b| {
            std::iter::once(b.bvh_joint)
                .chain(b.merged.iter().copied())
                .filter_map(|j| role_of[j])
                .collect()
        })
        .collect();
    let point_in_body = |bi: usize, k: usize| mean_in_body(&bodies[bi], &|f| world[f][k].0);
    let clip_parent = |k: usize| clip.joints[k].parent;
    let (masses, mass_notes) = distribute(&FigureBodies {
        bodies: &bodies,
        roles: &body_roles,
        shapes: &shapes,
        provisional_radius: &provisional_radius,
        spec_radius: &spec_radius,
        role_joint: &roles,
        point_in_body: &point_in_body,
        clip_parent: &clip_parent,
        stature: h,
        total_mass,
    });
    notes.extend(mass_notes);
    for (body, m) in bodies.iter_mut().zip(masses) {
        body.mass = m.mass;
        body.com = m.com;
        body.inertia = m.inertia;
        body.segments = m.segments;
        body.capsules = m
            .capsules
            .into_iter()
            .map(|(a, c, radius)| Capsule {
                a: a - m.com,
                b: c - m.com,
                radius,
            })
            .collect();
    }

    // Merged joints between two bodies are frozen at their mean local transform; the
    // child's anchor is the frozen chain, so model and export agree exactly.
    let mean_local = |k: usize| -> (Vector3<f64>, UnitQuaternion<f64>) {
        let Some(p) = clip.joints[k].parent else {
            return (Vector3::zeros(), UnitQuaternion::identity());
        };
        let t: Vector3<f64> = world
            .iter()
            .map(|w| w[p].1.inverse() * (w[k].0 - w[p].0))
            .sum::<Vector3<f64>>()
            / nf as f64;
        let qs: Vec<UnitQuaternion<f64>> =
            world.iter().map(|w| w[p].1.inverse() * w[k].1).collect();
        (t, mean_rotation(&qs))
    };
    let mut frozen: Vec<Option<(Vector3<f64>, UnitQuaternion<f64>)>> = vec![None; nj];
    for b in &bodies {
        let mut k = clip.joints[b.bvh_joint].parent;
        while let Some(m) = k {
            if owner[m].is_none() || bodies.iter().any(|x| x.bvh_joint == m) {
                break;
            }
            if frozen[m].is_none() {
                frozen[m] = Some(mean_local(m));
            }
            k = clip.joints[m].parent;
        }
    }

    // Joints.
    for bi in 1..bodies.len() {
        let Some(pi) = bodies[bi].parent else {
            continue;
        };
        let (ra, rb) = (bodies[pi].bvh_joint, bodies[bi].bvh_joint);
        let mut point_in_parent = mean_local(rb).0;
        let mut k = clip.joints[rb].parent;
        while let Some(m) = k {
            if m == ra {
                break;
            }
            let (t, q) = frozen[m].unwrap_or_else(|| mean_local(m));
            point_in_parent = t + q * point_in_parent;
            k = clip.joints[m].parent;
        }
        let rel: Vec<UnitQuaternion<f64>> = (0..nf)
            .map(|f| world[f][ra].1.inverse() * world[f][rb].1)
            .collect();
        let q0 = mean_rotation(&rel);
        let kind = spec
            .and_then(|s| s.joint_type_for(bodies[bi].role, &bodies[bi].name))
            .or(bodies[bi].role.map(|r| r.default_joint()))
            .unwrap_or(JointType::Ball);
        let (axis_parent, axis_child) = match kind {
            JointType::Ball => (Vector3::x(), Vector3::x()),
            JointType::Hinge => {
                let (n, _) = principal_axes(&q0, &rel);
                (q0 * n, n)
            }
            JointType::Universal => {
                let (n1, n2) = principal_axes(&q0, &rel);
                (q0 * n1, n2)
            }
        };
        bodies[bi].joint = Some(Joint {
            kind,
            parent_anchor: point_in_parent - bodies[pi].com,
            child_anchor: -bodies[bi].com,
            rest_rel: q0,
            axis_parent,
            axis_child,
        });
    }

    let figure = FigureInfo {
        scale: frames.scale,
        unit: frames.unit.clone(),
        to_world: frames.to_world,
        first_frame: frames.first_frame,
        absolute_positions: frames
            .position_convention
            .iter()
            .map(|c| *c == PositionConvention::Absolute)
            .collect(),
        height_m: h,
        stature_source,
        stature_detail,
    };
    if let Some(w) = super::units::stature_warning(&figure) {
        notes.push(w);
    }
    let merged: usize = bodies.iter().map(|b| b.merged.len()).sum();
    notes.push(format!(
        "skeleton spec `{spec_name}`: {} bodies from {} clip joints ({merged} merged into their parents)",
        bodies.len(),
        nj
    ));
    let model = Model {
        bodies,
        gravity: GRAVITY,
        spec_name,
        figure,
        owner,
        frozen,
        clip_joint_names: clip.joints.iter().map(|j| j.name.clone()).collect(),
        mass_source,
        notes,
    };
    Ok((model, world))
}

/// Distance from point p to the segment [a, b].
pub fn point_segment_distance(p: &Vector3<f64>, a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
    let d = b - a;
    let l2 = d.norm_squared();
    let t = if l2 > 0.0 {
        ((p - a).dot(&d) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p - (a + d * t)).norm()
}

/// Chordal mean of rotations (sign-aligned quaternion average, normalised).
pub fn mean_rotation(qs: &[UnitQuaternion<f64>]) -> UnitQuaternion<f64> {
    let Some(first) = qs.first() else {
        return UnitQuaternion::identity();
    };
    let mut acc = Quaternion::new(0.0, 0.0, 0.0, 0.0);
    for q in qs {
        let c = if q.coords.dot(&first.coords) < 0.0 {
            -q.into_inner()
        } else {
            q.into_inner()
        };
        acc += c;
    }
    UnitQuaternion::try_new(acc, 1e-12).unwrap_or(*first)
}

/// The two principal axes (child frame of Q0) of the rotations' deviation from Q0:
/// the dominant one is a hinge's axis; the first two are a universal joint's axes.
/// Falls back to the child frame's X and Y when the joint never moves.
fn principal_axes(
    q0: &UnitQuaternion<f64>,
    rel: &[UnitQuaternion<f64>],
) -> (Vector3<f64>, Vector3<f64>) {
    let mut m = Matrix3::zeros();
    for q in rel {
        let d = (q0.inverse() * q).scaled_axis();
        m += d * d.transpose();
    }
    if m.trace() < 1e-12 {
        return (Vector3::x(), Vector3::y());
    }
    let eig = SymmetricEigen::new(m);
    let mut idx = [0usize, 1, 2];
    idx.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let n1: Vector3<f64> = eig.eigenvectors.column(idx[0]).into_owned().normalize();
    let mut n2: Vector3<f64> = eig.eigenvectors.column(idx[1]).into_owned();
    n2 = (n2 - n1 * n1.dot(&n2)).normalize();
    // Sign: make the mean deviation angle about n1 non-negative (flexion positive).
    let mean: f64 = rel
        .iter()
        .map(|q| (q0.inverse() * q).scaled_axis().dot(&n1))
        .sum();
    let n1 = if mean < 0.0 { -n1 } else { n1 };
    (n1, n2)
}
