//! What `jostle info --json` says of a clip and the model built from it, as JSON values
//! (the command line prints them; the Python package returns them as dicts).

use crate::mocap::{Clip, load_bvh};
use crate::skeleton::JointType;
use crate::skeleton::{ClipFrames, build_model};
use crate::{Character, CharacterError, CharacterOptions};
use serde_json::{Value, json};
use std::path::Path;

/// What `info --json` prints for the clip at `path`: [`summary`] when it makes a character,
/// [`clip_only_summary`] when it is valid BVH that makes none. Fails only when the file
/// cannot be read or is not valid BVH.
pub fn describe(path: &Path, opts: &CharacterOptions) -> Result<Value, CharacterError> {
    let clip = load_bvh(path)?;
    match Character::from_clip(clip.clone(), path, opts) {
        Ok(c) => Ok(summary(&c)),
        Err(e @ (CharacterError::Model { .. } | CharacterError::Reference { .. })) => Ok(
            clip_only_summary(&clip, path, opts, &no_character_reason(&e)),
        ),
        Err(e) => Err(e),
    }
}

/// Why a valid clip makes no character (the error without its file name).
pub fn no_character_reason(e: &CharacterError) -> String {
    match e {
        CharacterError::Model { source, .. } => source.to_string(),
        CharacterError::Reference { source, .. } => source.to_string(),
        CharacterError::Bvh(b) => b.to_string(),
    }
}

fn v3(v: &nalgebra::Vector3<f64>) -> Value {
    json!([v.x, v.y, v.z])
}

/// Summary of a character as JSON: what `jostle info --json` prints.
pub fn summary(c: &Character) -> Value {
    let m = &c.model;
    let (ball, hinge, universal) = m.joint_type_counts();
    json!({
        "file": c.path.display().to_string(),
        "frames": c.clip.num_frames(),
        "frames_used": c.clip.num_frames() - m.figure.first_frame,
        "frame_time": c.clip.frame_time,
        "duration_s": c.reference.duration,
        "joints": c.clip.joints.len(),
        "bodies": m.num_bodies(),
        "dof": m.dof(),
        "joint_types": {"ball": ball, "hinge": hinge, "universal": universal},
        "skeleton_spec": m.spec_name,
        "unit": m.figure.unit,
        "scale": m.figure.scale,
        "height_m": m.figure.height_m,
        "stature_source": m.figure.stature_source,
        "stature_detail": m.figure.stature_detail,
        "mass_kg": m.total_mass(),
        "mass_source": m.mass_source,
        "bmi_kg_m2": m.bmi(),
        "reference_vs_mocap_rms_deg": c.reference.mocap_rms_deg,
        "discarded_swing_rms_deg": discarded_swing(c),
        "warnings": m.notes,
    })
}

/// Per hinge/universal joint: RMS of the mocap rotation the joint cannot represent, degrees.
pub fn discarded_swing(c: &Character) -> serde_json::Map<String, Value> {
    c.model
        .bodies
        .iter()
        .zip(&c.reference.swing_rms_deg)
        .filter(|(b, _)| b.joint.as_ref().is_some_and(|j| j.kind != JointType::Ball))
        .map(|(b, s)| (b.name.clone(), json!(s)))
        .collect()
}

/// The model in a form another engine can rebuild (`info --model-json`): rest pose = the
/// reference at t = 0.
pub fn model_json(c: &Character) -> Value {
    let m = &c.model;
    let mut kin = vec![Default::default(); m.num_bodies()];
    let mut scratch = Default::default();
    c.reference.sample(m, 0.0, &mut scratch, &mut kin);
    let bodies: Vec<Value> = m
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let k: &crate::motion::kinematics::BodyKinematics = &kin[i];
            let r = k.q.to_rotation_matrix();
            let iw = r.matrix() * b.inertia * r.matrix().transpose();
            let rows = |mm: &nalgebra::Matrix3<f64>| json!([[mm[(0,0)], mm[(0,1)], mm[(0,2)]], [mm[(1,0)], mm[(1,1)], mm[(1,2)]], [mm[(2,0)], mm[(2,1)], mm[(2,2)]]]);
            let joint = b.joint.as_ref().map(|j| json!({
                "type": j.kind.name(),
                "dof": j.dof(),
                "anchor_in_parent_m": v3(&j.parent_anchor),
                "anchor_in_child_m": v3(&j.child_anchor),
                "anchor_world_m": v3(&(k.x + k.q * j.child_anchor)),
                "rest_relative_rotation_xyzw": [j.rest_rel.i, j.rest_rel.j, j.rest_rel.k, j.rest_rel.w],
                "axis_in_parent": if j.kind == JointType::Ball { Value::Null } else { v3(&j.axis_parent) },
                "axis_in_child": if j.kind == JointType::Ball { Value::Null } else { v3(&j.axis_child) },
            }));
            json!({
                "name": b.name,
                "role": b.role.map(|r| r.name()),
                "parent": b.parent.map(|p| m.bodies[p].name.clone()),
                "mass_kg": b.mass,
                "com_world_m": v3(&k.x),
                "orientation_world_xyzw": [k.q.i, k.q.j, k.q.k, k.q.w],
                "inertia_body_kgm2": rows(&b.inertia),
                "inertia_world_kgm2": rows(&iw),
                "capsules_body_m": b.capsules.iter().map(|cp| json!({"a": v3(&cp.a), "b": v3(&cp.b), "radius": cp.radius})).collect::<Vec<_>>(),
                "joint": joint,
                "merged_clip_joints": b.merged.iter().map(|&j| c.clip.joints[j].name.clone()).collect::<Vec<_>>(),
                "role_fractions": role_fractions(b),
            })
        })
        .collect();
    json!({
        "units": "SI: m, kg, s; world Y up, gravity (0, -9.81, 0); body frames = the clip joint frames; quaternions [x, y, z, w]",
        "rest_pose": "the reference motion at t = 0 s",
        "gravity_mps2": v3(&m.gravity),
        "height_m": m.figure.height_m,
        "stature_source": m.figure.stature_source,
        "mass_kg": m.total_mass(),
        "mass_source": m.mass_source,
        "segment_table": SEGMENT_TABLE,
        "bodies": bodies,
    })
}

/// What `info` can say of a clip that parses but makes no character (one frame, one
/// joint, all joints at one point): the file's own facts, the units if the figure has a
/// measurable size, and why no model or reference motion could be built.
pub fn clip_only_summary(clip: &Clip, path: &Path, opts: &CharacterOptions, why: &str) -> Value {
    // A one-frame clip still makes a model (only the reference motion needs two frames):
    // its units, stature and mass are those a longer take of the same figure would get.
    let model = build_model(clip, &opts.model);
    let what = if model.is_ok() {
        "no reference motion to simulate"
    } else {
        "no physical model"
    };
    let (unit, scale, height, mass, bodies, mut notes) = match model {
        Ok(m) => (
            json!(m.figure.unit),
            json!(m.figure.scale),
            json!(m.figure.height_m),
            json!(m.total_mass()),
            json!(m.num_bodies()),
            m.notes.clone(),
        ),
        Err(_) => match ClipFrames::new(clip, &opts.model.frames) {
            Ok(f) => (
                json!(f.unit),
                json!(f.scale),
                json!(f.height_m),
                Value::Null,
                Value::Null,
                f.notes.clone(),
            ),
            Err(e) => (
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                vec![format!("units cannot be measured: {e}")],
            ),
        },
    };
    notes.push(format!(
        "{what}: {why}; `simulate`, `perturb`, `batch` and `view` need at least 2 \
         frames and a figure with a size"
    ));
    json!({
        "file": path.display().to_string(),
        "frames": clip.num_frames(),
        "frame_time": clip.frame_time,
        "duration_s": clip.num_frames().saturating_sub(1) as f64 * clip.frame_time,
        "joints": clip.joints.len(),
        "channels": clip.num_channels,
        "bodies": bodies,
        "unit": unit,
        "scale": scale,
        "height_m": height,
        "mass_kg": mass,
        "model": Value::Null,
        "warnings": notes,
    })
}

/// Where the segment masses, centres of mass and inertia come from.
pub const SEGMENT_TABLE: &str =
    "de Leva (1996), J. Biomech. 29(9) 1223-1230, Table 4: mean of the male and female parameters";

/// Per body: the share of each de Leva segment's mass it carries (`{"left_thigh": 1.0}`);
/// empty when its mass came from its shapes' volume.
fn role_fractions(b: &crate::skeleton::Body) -> serde_json::Map<String, Value> {
    b.segments
        .iter()
        .map(|s| (s.slot.name(), json!(s.fraction)))
        .collect()
}
