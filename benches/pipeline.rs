//! Spine benchmarks: BVH load (MB/s), reference fit, inverse dynamics per sample, on the
//! longest 120 Hz CMU clip of ../shared/mocap.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jostle::dynamics::{InverseWorkspace, JointTorques, inverse_dynamics};
use jostle::mocap::parse_bvh;
use jostle::motion::kinematics::BodyKinematics;
use jostle::motion::reference::{Reference, ReferenceOptions};
use jostle::skeleton::{ModelOptions, build_model};
use std::hint::black_box;

const CLIP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/mocap/cmu_01_01_jumps_turn.bvh"
);

fn pipeline(c: &mut Criterion) {
    let text = std::fs::read_to_string(CLIP).expect("shared clip");
    let mut g = c.benchmark_group("bvh_load");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function("cmu_01_01_jumps_turn (2.07 MB, 2752 frames)", |b| {
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
    g.bench_function("reference_fit (filter + spline, 2751 frames)", |b| {
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
    g.bench_function("inverse_dynamics (CMU 31 joints -> 17 bodies)", |b| {
        b.iter(|| inverse_dynamics(black_box(&model), black_box(&kin), None, &mut ws, &mut out))
    });
    let mut t = 0.0;
    g.bench_function(
        "reference_sample (spline eval + FK with derivatives)",
        |b| {
            b.iter(|| {
                t = (t + 1.0 / 240.0) % 20.0;
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
    for file in [
        "bandai1_kick_normal_001.bvh",
        "iclone_cmu_05_02_dance_pirouette.bvh",
    ] {
        let path =
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap/"))
                .join(file);
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
    let ch =
        Character::load(std::path::Path::new(CLIP), &CharacterOptions::default()).expect("loads");
    let pinned = SimOptions {
        root: RootMode::Pinned,
        ..Default::default()
    };
    let mut g = c.benchmark_group("clip_under_physics");
    g.sample_size(10);
    for (label, opts) in [("pinned", pinned), ("standing", SimOptions::default())] {
        let steps = Simulation::new(&ch, opts).expect("feedforward").num_steps();
        g.bench_function(
            format!("feedforward {label}, cmu_01_01 ({steps} steps of 1/240 s)"),
            |b| b.iter(|| Simulation::new(black_box(&ch), opts).expect("ff")),
        );
        let mut sim = Simulation::new(&ch, opts).expect("feedforward");
        // the step itself: nothing copied from the feedforward's path
        sim.replay_unperturbed = false;
        let start = sim.snapshot();
        g.bench_function(
            format!("simulate {label}, cmu_01_01 ({steps} steps)"),
            |b| {
                b.iter(|| {
                    sim.restore(&start);
                    sim.run().expect("runs")
                })
            },
        );
    }
    // What `perturb` runs: one throw mid-clip. The steps before the ball is in the air are
    // copied from the feedforward's path (`sim::replay`; same output bit for bit) or
    // computed, for comparison.
    use jostle::sim::balls::Ball;
    use jostle::sim::scenario::BallSpec;
    let launch = BallSpec::from_flag("t=12,target=chest,speed=12")
        .expect("spec")
        .launch(&ch.model, &ch.reference)
        .expect("aims");
    let mut sim = Simulation::new(&ch, SimOptions::default()).expect("feedforward");
    sim.throw(Ball::from_launch(&launch));
    let start = sim.snapshot();
    for (label, replay) in [("replayed", true), ("computed", false)] {
        sim.replay_unperturbed = replay;
        g.bench_function(
            format!("perturb standing, chest hit at 12 s, untouched steps {label}"),
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
