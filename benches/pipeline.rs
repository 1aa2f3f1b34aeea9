//! Spine benchmarks: BVH load (MB/s), reference fit, inverse dynamics per sample, export,
//! and a clip under physics, on the longest 120 Hz CMU clip of the shared real clips
//! (`$JOSTLE_MOCAP_DIR`, else `../shared/mocap` beside the checkout). Without them (a
//! fresh clone) each benchmark says so on stderr (`fallback: …`) and runs on the repo's
//! demo walk instead, so `cargo bench` still works; its numbers are then not comparable.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jostle::dynamics::{InverseWorkspace, JointTorques, inverse_dynamics};
use jostle::mocap::parse_bvh;
use jostle::motion::kinematics::BodyKinematics;
use jostle::motion::reference::{Reference, ReferenceOptions};
use jostle::skeleton::{ModelOptions, build_model};
use std::hint::black_box;

use std::path::PathBuf;

/// The clip the spine and physics benchmarks run on.
const CLIP: &str = "cmu_01_01_jumps_turn.bvh";

/// Where the shared real clips are: `$JOSTLE_MOCAP_DIR` (an empty value counts as unset),
/// else `../shared/mocap` beside the checkout (as the tests find them).
fn shared_dir() -> PathBuf {
    match std::env::var_os("JOSTLE_MOCAP_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap")),
    }
}

/// The shared clip `file`, or (said on stderr) the repo's demo walk when it is missing.
fn clip_path(file: &str) -> PathBuf {
    let path = shared_dir().join(file);
    if path.is_file() {
        return path;
    }
    let demo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/mocap/demo_walk.bvh"));
    eprintln!(
        "fallback: benches/pipeline.rs needs {} (not found; set JOSTLE_MOCAP_DIR=/path/to/mocap \
         or clone the shared folder beside the repository): benchmarking mocap/demo_walk.bvh instead",
        path.display()
    );
    demo
}

/// A file's name without its folder, for the benchmark labels.
fn label_of(path: &std::path::Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn pipeline(c: &mut Criterion) {
    let path = clip_path(CLIP);
    let name = label_of(&path);
    let text = std::fs::read_to_string(&path).expect("reads the clip");
    let mut g = c.benchmark_group("bvh_load");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function(format!("{name} ({:.2} MB)", text.len() as f64 / 1e6), |b| {
        b.iter(|| parse_bvh(black_box(&text), "bench").expect("parses"))
    });
    g.finish();

    let clip = parse_bvh(&text, "bench").expect("parses");
    let mut g = c.benchmark_group("model_and_reference");
    g.sample_size(10);
    g.bench_function("build_model", |b| {
        b.iter(|| build_model(black_box(&clip), &ModelOptions::default()).expect("model"))
    });
    let model = build_model(&clip, &ModelOptions::default()).expect("model");
    g.bench_function(format!("reference_fit (filter + spline, {name})"), |b| {
        b.iter(|| {
            Reference::fit(black_box(&model), &clip, &ReferenceOptions::default()).expect("fit")
        })
    });
    g.finish();

    let reference = Reference::fit(&model, &clip, &ReferenceOptions::default()).expect("fit");
    let mut kin = vec![BodyKinematics::default(); model.num_bodies()];
    let mut scratch = Default::default();
    reference.sample(&model, 3.0, &mut scratch, &mut kin);
    let mut ws = InverseWorkspace::default();
    let mut out = JointTorques::default();
    let mut g = c.benchmark_group("per_sample");
    let shape = format!(
        "{name}: {} joints -> {} bodies",
        clip.joints.len(),
        model.num_bodies()
    );
    g.bench_function(format!("inverse_dynamics ({shape})"), |b| {
        b.iter(|| inverse_dynamics(black_box(&model), black_box(&kin), None, &mut ws, &mut out))
    });
    let duration = reference.duration;
    let mut t = 0.0;
    g.bench_function(
        "reference_sample (spline eval + FK with derivatives)",
        |b| {
            b.iter(|| {
                t = (t + 1.0 / 240.0) % duration;
                reference.sample(&model, black_box(t), &mut scratch, &mut kin)
            })
        },
    );
    g.finish();
}

fn export(c: &mut Criterion) {
    use jostle::export::bvh::clip_with_trajectory;
    use jostle::export::gltf::glb_bytes;
    use jostle::mocap::write_bvh_string;
    use jostle::sim::Trajectory;
    use jostle::{Character, CharacterOptions};
    let mut g = c.benchmark_group("export");
    g.sample_size(10);
    let mut paths: Vec<PathBuf> = [
        "bandai1_kick_normal_001.bvh",
        "iclone_cmu_05_02_dance_pirouette.bvh",
    ]
    .map(clip_path)
    .to_vec();
    // both fall back to the demo walk without the shared clips: benchmark it once
    paths.dedup();
    for path in paths {
        let file = label_of(&path);
        let ch = Character::load(&path, &CharacterOptions::default()).expect("loads");
        let n = ch.clip.num_frames() - ch.model.figure.first_frame;
        let traj = Trajectory::from_reference(&ch.model, &ch.reference, ch.clip.frame_time, n);
        let (bytes, _) =
            glb_bytes(&ch.model, &ch.clip, &traj, &serde_json::Value::Null).expect("glb");
        let label = format!(
            "{file} ({:.1} s, {} joints, glb {} kB)",
            ch.reference.duration,
            ch.clip.joints.len(),
            bytes.len() / 1024
        );
        g.bench_function(format!("glb {label}"), |b| {
            b.iter(|| {
                glb_bytes(
                    &ch.model,
                    &ch.clip,
                    black_box(&traj),
                    &serde_json::Value::Null,
                )
                .expect("glb")
            })
        });
        g.bench_function(format!("bvh {label}"), |b| {
            b.iter(|| {
                write_bvh_string(&clip_with_trajectory(
                    &ch.model,
                    &ch.clip,
                    Some(black_box(&traj)),
                ))
            })
        });
    }
    g.finish();
}

/// A clip end to end under physics: the discrete-time feedforward (two solves per step
/// sharing one factorisation) and the simulation (feedforward + feedback), with the root
/// pinned (the thesis) and standing on the floor (the default: spring-held root, the floor
/// contacts' LCP every step; METHOD §12 asks for ≤ 1.5× the pinned step).
fn simulation(c: &mut Criterion) {
    use jostle::sim::{RootMode, SimOptions, Simulation};
    use jostle::{Character, CharacterOptions};
    let path = clip_path(CLIP);
    let name = label_of(&path);
    let ch = Character::load(&path, &CharacterOptions::default()).expect("loads");
    let pinned = SimOptions {
        root: RootMode::Pinned,
        ..Default::default()
    };
    let mut g = c.benchmark_group("clip_under_physics");
    g.sample_size(10);
    for (label, opts) in [("pinned", pinned), ("standing", SimOptions::default())] {
        let steps = Simulation::new(&ch, opts).expect("feedforward").num_steps();
        g.bench_function(
            format!("feedforward {label}, {name} ({steps} steps of 1/240 s)"),
            |b| b.iter(|| Simulation::new(black_box(&ch), opts).expect("ff")),
        );
        let mut sim = Simulation::new(&ch, opts).expect("feedforward");
        // the step itself: nothing copied from the feedforward's path
        sim.replay_unperturbed = false;
        let start = sim.snapshot();
        g.bench_function(format!("simulate {label}, {name} ({steps} steps)"), |b| {
            b.iter(|| {
                sim.restore(&start);
                sim.run().expect("runs")
            })
        });
    }
    // What `perturb` runs: one throw mid-clip (at 12 s of the CMU clip). The steps before
    // the ball is in the air are copied from the feedforward's path (`sim::replay`; same
    // output bit for bit) or computed, for comparison.
    use jostle::sim::balls::Ball;
    use jostle::sim::scenario::BallSpec;
    let hit_s = (ch.reference.duration * 0.5).min(12.0);
    let launch = BallSpec::from_flag(&format!("t={hit_s},target=chest,speed=12"))
        .expect("spec")
        .launch(&ch.model, &ch.reference)
        .expect("aims");
    let mut sim = Simulation::new(&ch, SimOptions::default()).expect("feedforward");
    sim.throw(Ball::from_launch(&launch));
    let start = sim.snapshot();
    for (label, replay) in [("replayed", true), ("computed", false)] {
        sim.replay_unperturbed = replay;
        g.bench_function(
            format!("perturb standing, {name}, chest hit at {hit_s:.1} s, untouched steps {label}"),
            |b| {
                b.iter(|| {
                    sim.restore(&start);
                    sim.run().expect("runs")
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, pipeline, export, simulation);
criterion_main!(benches);
