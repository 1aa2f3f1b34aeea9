//! `jostle info`: clip and model summary, optionally the model as JSON.

use super::{LoadArgs, write_output};
use clap::Args;
use jostle::info::{SEGMENT_TABLE, clip_only_summary, discarded_swing, model_json, summary};
use jostle::mocap::load_bvh;
use jostle::{Character, CharacterError};
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

/// Run `jostle info`.
pub fn run(a: &InfoArgs) -> anyhow::Result<()> {
    let opts = a.load.options()?;
    let clip = load_bvh(&a.clip)?;
    let c = match Character::from_clip(clip.clone(), &a.clip, &opts) {
        Ok(c) => c,
        // The file is valid BVH: describe it, and say what cannot be built from it.
        Err(e @ (CharacterError::Model { .. } | CharacterError::Reference { .. })) => {
            let why = jostle::info::no_character_reason(&e);
            let s = clip_only_summary(&clip, &a.clip, &opts, &why);
            if a.json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                println!("{}", a.clip.display());
                println!(
                    "  frames       {} at {:.4} s = {:.2} s",
                    clip.num_frames(),
                    clip.frame_time,
                    s["duration_s"].as_f64().unwrap_or(0.0)
                );
                println!(
                    "  joints       {} ({} channels per frame)",
                    clip.joints.len(),
                    clip.num_channels
                );
                match (s["unit"].as_str(), s["height_m"].as_f64()) {
                    (Some(u), Some(h)) => {
                        println!("  units        {u} (scale {} m/unit)", s["scale"]);
                        match s["mass_kg"].as_f64() {
                            Some(m) => println!("  figure       {h:.2} m tall, {m:.1} kg"),
                            None => println!("  figure       {h:.2} m tall"),
                        }
                    }
                    _ => println!("  units        not measurable"),
                }
                for n in s["warnings"].as_array().into_iter().flatten() {
                    println!("  note: {}", n.as_str().unwrap_or_default());
                }
            }
            if let Some(p) = &a.model_json {
                anyhow::bail!("{}: cannot write {}: {why}", a.clip.display(), p.display());
            }
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
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
