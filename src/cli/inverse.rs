//! `jostle inverse`: feedforward joint torques over a clip, as CSV (+ JSON summary).

use super::{LoadArgs, write_output};
use clap::Args;
use jostle::motion::kinematics::BodyKinematics;
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Arguments of `jostle inverse`.
#[derive(Args, Debug)]
pub struct InverseArgs {
    /// The BVH clip.
    pub clip: PathBuf,
    /// Output CSV: time, every DOF's torque (N·m, columns `joint.axis`), root force/torque.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Print a JSON summary (largest torques, timing) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write the reference motion the torques came from (per sample and body: position,
    /// orientation, velocities, accelerations; world frame).
    #[arg(long, value_name = "FILE")]
    pub kinematics: Option<PathBuf>,
    /// Sample step, s (the simulation step).
    #[arg(long, default_value_t = 1.0 / 240.0)]
    pub step: f64,
    #[command(flatten)]
    pub load: LoadArgs,
}

/// Run `jostle inverse`.
pub fn run(a: &InverseArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        a.step.is_finite() && a.step > 0.0 && a.step <= 0.1,
        "--step must be in (0, 0.1] s, got {}",
        a.step
    );
    let c = super::load_character(&a.clip, &a.load)?;
    let table = c.inverse_dynamics(a.step);
    let names = c.dof_names();
    let mut csv = String::from("time_s");
    for n in &names {
        write!(csv, ",{n}")?;
    }
    csv.push_str(",root.fx,root.fy,root.fz,root.tx,root.ty,root.tz\n");
    for (k, t) in table.times.iter().enumerate() {
        write!(csv, "{t}")?;
        for v in table.tau[k].iter().chain(table.root[k].iter()) {
            write!(csv, ",{v}")?;
        }
        csv.push('\n');
    }
    write_output(&a.out, &csv)?;
    if let Some(p) = &a.kinematics {
        let mut kcsv = String::from(
            "time_s,body,x,y,z,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz,ax,ay,az,alphax,alphay,alphaz\n",
        );
        let mut kin = vec![BodyKinematics::default(); c.model.num_bodies()];
        let mut scratch = Default::default();
        for &t in &table.times {
            c.reference.sample(&c.model, t, &mut scratch, &mut kin);
            for (b, k) in kin.iter().enumerate() {
                write!(kcsv, "{t},{}", c.model.bodies[b].name)?;
                for v in [
                    k.x.x, k.x.y, k.x.z, k.q.i, k.q.j, k.q.k, k.q.w, k.v.x, k.v.y, k.v.z, k.w.x,
                    k.w.y, k.w.z, k.a.x, k.a.y, k.a.z, k.dw.x, k.dw.y, k.dw.z,
                ] {
                    write!(kcsv, ",{v}")?;
                }
                kcsv.push('\n');
            }
        }
        write_output(p, &kcsv)?;
    }
    // Peak |τ| per DOF, largest first.
    let mut peaks: Vec<(usize, f64, f64)> = (0..names.len())
        .map(|i| {
            let (k, v) = table
                .tau
                .iter()
                .enumerate()
                .map(|(k, tau)| (k, tau[i].abs()))
                .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
            (i, v, table.times[k])
        })
        .collect();
    peaks.sort_by(|a, b| b.1.total_cmp(&a.1));
    let n = table.root.len().max(1) as f64;
    let mean_root_fy = table.root.iter().map(|r| r[1]).sum::<f64>() / n;
    let weight = c.model.total_mass() * 9.81;
    if a.json {
        let s = json!({
            "samples": table.times.len(),
            "step_s": a.step,
            "dofs": names.len(),
            "mass_kg": c.model.total_mass(),
            "largest_torques": peaks.iter().take(10).map(|(i, v, t)| json!({"dof": names[*i], "peak_nm": v, "time_s": t})).collect::<Vec<_>>(),
            "root_force_mean_y_n": mean_root_fy,
            "body_weight_n": weight,
            "timing": {"us_per_sample": table.us_per_sample},
            "out": a.out.display().to_string(),
        });
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!(
            "{}: {} samples every {:.5} s, {} DOF -> {}",
            c.path.display(),
            table.times.len(),
            a.step,
            names.len(),
            a.out.display()
        );
        println!("  largest torques:");
        for (i, v, t) in peaks.iter().take(6) {
            println!("    {:28} {:8.1} N·m at {:.2} s", names[*i], v, t);
        }
        println!(
            "  root (hand of god) vertical force, mean {mean_root_fy:.1} N (body weight {weight:.1} N)"
        );
        println!(
            "  inverse dynamics: {:.2} µs per sample",
            table.us_per_sample
        );
    }
    Ok(())
}
