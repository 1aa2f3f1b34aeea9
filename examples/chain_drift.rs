//! Constraint drift figures (METHOD §10): thesis §5.2.1's 6-link chain and Hong, Welch &
//! Choi's 5-link arm, for every drift control.
//!
//! `cargo run --release --example chain_drift [-- --json]`

use jostle::sim::drift::drift_report;

fn main() -> anyhow::Result<()> {
    let json = std::env::args().any(|a| a == "--json");
    let report = drift_report(5.0)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "6-link chain (100 mm, 0.1 kg rods, ball joints), h = 1 ms, 600 steps from horizontal"
    );
    println!(
        "{:<22} {:>16} {:>18} {:>14}",
        "method", "max sep. (mm)", "before stab. (mm)", "ΔE (J)"
    );
    for r in &report.chain {
        let before = r
            .max_separation_before_stabilization_mm
            .map_or("-".to_string(), |b| format!("{b:.4}"));
        println!(
            "{:<22} {:>16.6} {:>18} {:>14.3e} {}",
            r.method,
            r.max_separation_mm,
            before,
            r.energy_change_j,
            r.failure.as_deref().unwrap_or("")
        );
    }
    println!(
        "thesis: none ≈ 20 mm, Baumgarte 50 ≈ 5 mm, Baumgarte 200 < 3 mm, post-stab < 0.01 mm"
    );
    println!();
    println!("Hong et al. 5-link arm (1 m rods, hinges), falling from horizontal for 5 s:");
    println!("accumulated error = Σ over steps and joints of |joint separation| (m)");
    for case in &report.hong_arm {
        println!("  h = {} s, link mass = {} kg", case.h, case.mass);
        for r in &case.runs {
            let fail = r.failure.as_ref().map_or(String::new(), |e| {
                format!("  FAILED after {} steps: {e}", r.steps)
            });
            println!(
                "    {:<24} accumulated {:>12.6e} m   max {:>10.4} mm   ΔE {:>10.3e} J{fail}",
                r.method, r.accumulated_separation_m, r.max_separation_mm, r.energy_change_j
            );
        }
    }
    Ok(())
}
