//! `jostle info`: clip and model summary, optionally the model as JSON.

use super::{LoadArgs, write_output};
use clap::Args;
use jostle::Character;
use jostle::skeleton::JointType;
use serde_json::{Value, json};
use std::path::PathBuf;

/// Arguments of `jostle info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The BVH clip.
    pub clip: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the physical model (bodies, mass, COM, inertia, joints, axes) as JSON.
    #[arg(long, value_name = "FILE")]
    pub model_json: Option<PathBuf>,
    #[command(flatten)]
    pub load: LoadArgs,
}

fn v3(v: &nalgebra::Vector3<f64>) -> Value {
    json!([v.x, v.y, v.z])
}

/// Summary of a character as JSON (also used by tests).
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
fn discarded_swing(c: &Character) -> serde_json::Map<String, Value> {
    c.model
        .bodies
        .iter()
        .zip(&c.reference.swing_rms_deg)
        .filter(|(b, _)| b.joint.as_ref().is_some_and(|j| j.kind != JointType::Ball))
        .map(|(b, s)| (b.name.clone(), json!(s)))
        .collect()
}

/// The model in a form another engine can rebuild: rest pose = the reference at t = 0.
fn model_json(c: &Character) -> Value {
    let m = &c.model;
    let mut kin = vec![Default::default(); m.num_bodies()];
    let mut scratch = Default::default();
    c.reference.sample(m, 0.0, &mut scratch, &mut kin);
    let bodies: Vec<Value> = m
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let k: &jostle::motion::kinematics::BodyKinematics = &kin[i];
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

/// Where the segment masses, centres of mass and inertia come from.
const SEGMENT_TABLE: &str =
    "de Leva (1996), J. Biomech. 29(9) 1223-1230, Table 4: mean of the male and female parameters";

/// Per body: the share of each de Leva segment's mass it carries (`{"left_thigh": 1.0}`);
/// empty when its mass came from its shapes' volume.
fn role_fractions(b: &jostle::skeleton::Body) -> serde_json::Map<String, Value> {
    b.segments
        .iter()
        .map(|s| (s.slot.name(), json!(s.fraction)))
        .collect()
}

/// Run `jostle info`.
pub fn run(a: &InfoArgs) -> anyhow::Result<()> {
    let c = Character::load(&a.clip, &a.load.options()?)?;
    if let Some(p) = &a.model_json {
        write_output(p, &serde_json::to_string_pretty(&model_json(&c))?)?;
    }
    let s = summary(&c);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(());
    }
    let m = &c.model;
    let (ball, hinge, universal) = m.joint_type_counts();
    println!("{}", c.path.display());
    println!(
        "  frames       {} ({} used) at {:.4} s = {:.2} s",
        s["frames"], s["frames_used"], c.clip.frame_time, c.reference.duration
    );
    println!(
        "  joints       {} in the clip -> {} bodies, {} DOF (ball {ball}, hinge {hinge}, universal {universal})",
        c.clip.joints.len(),
        m.num_bodies(),
        m.dof()
    );
    println!("  skeleton     {}", m.spec_name);
    println!(
        "  units        {} (scale {} m/unit)",
        m.figure.unit, m.figure.scale
    );
    println!(
        "  figure       {:.2} m tall, {:.1} kg (body-mass index {:.1} kg/m²)",
        m.figure.height_m,
        m.total_mass(),
        m.bmi()
    );
    match m.figure.stature_source.as_str() {
        // the user's or the fallback stature set the scale; the detail is the bones' own
        source @ ("--height" | "fitted") => println!(
            "  stature      {source} (the bones' proportions: {})",
            m.figure.stature_detail
        ),
        _ => println!("  stature      {}", m.figure.stature_detail),
    }
    println!(
        "  mass         {}; segments from {SEGMENT_TABLE}",
        m.mass_source
    );
    println!(
        "  reference    {:.2} deg RMS from the raw mocap (filter + joint projection)",
        c.reference.mocap_rms_deg
    );
    let swing: Vec<String> = discarded_swing(&c)
        .iter()
        .map(|(k, v)| format!("{k} {:.1}°", v.as_f64().unwrap_or(0.0)))
        .collect();
    if !swing.is_empty() {
        println!("  hinge fit    discarded swing (RMS): {}", swing.join(", "));
    }
    for n in &m.notes {
        println!("  note: {n}");
    }
    Ok(())
}
