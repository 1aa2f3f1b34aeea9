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

criterion_group!(benches, pipeline);
criterion_main!(benches);
