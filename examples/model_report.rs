//! Print the model summary of every clip in a folder (development aid).
use jostle::{Character, CharacterOptions};
fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/mocap".into());
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
        .collect();
    paths.sort();
    for p in paths {
        match Character::load(&p, &CharacterOptions::default()) {
            Ok(c) => {
                let m = &c.model;
                let (b, h, u) = m.joint_type_counts();
                println!(
                    "{:45} spec={:10} unit={:18} h={:.3} m={:.1} bodies={} dof={} (ball {b}, hinge {h}, univ {u}) ref-vs-mocap rms {:.2} max {:.1} deg, swing max {:.1}",
                    p.file_name().unwrap().to_string_lossy(),
                    m.spec_name,
                    m.figure.unit,
                    m.figure.height_m,
                    m.total_mass(),
                    m.num_bodies(),
                    m.dof(),
                    c.reference.mocap_rms_deg,
                    c.reference.mocap_max_deg,
                    c.reference
                        .swing_rms_deg
                        .iter()
                        .cloned()
                        .fold(0.0, f64::max)
                );
                if std::env::var("VERBOSE").is_ok() {
                    for n in &m.notes {
                        println!("    note: {n}");
                    }
                    for bd in &m.bodies {
                        println!(
                            "    {:30} role={:?} mass={:.2} parent={:?} joint={:?} merged={}",
                            bd.name,
                            bd.role.map(|r| r.name()),
                            bd.mass,
                            bd.parent,
                            bd.joint.as_ref().map(|j| j.kind),
                            bd.merged.len()
                        );
                    }
                }
            }
            Err(e) => println!("{}: ERROR {e}", p.display()),
        }
    }
}
