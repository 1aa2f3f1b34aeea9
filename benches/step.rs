//! One linearly implicit step of a 20-body humanoid (pinned pelvis, spring-damper torque
//! on every joint so the gradients are exercised), split into its phases:
//! gradient estimation (`prepare`), assembly + factorisation + solve (`solve`), position
//! update + post-stabilisation (`finish`), and the whole step.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use jostle::dynamics::{Root, RootTarget, SpringDamper, StepOptions, Stepper};
use jostle::sim::models::{humanoid, humanoid_state};
use nalgebra::{UnitQuaternion, Vector3};
use std::hint::black_box;

fn bench_step(c: &mut Criterion) {
    let model = humanoid();
    assert_eq!(model.bodies.len(), 20);
    let (v, w) = (Vector3::new(0.5, 0.0, 0.2), Vector3::new(0.0, 0.3, 0.1));
    let state = humanoid_state(&model, v, w);
    let opts = StepOptions::default();
    let h = opts.h;
    let s0 = state.bodies[0];
    let root = Root::Pinned(RootTarget {
        x: s0.x + v * h,
        q: UnitQuaternion::from_scaled_axis(w * h) * s0.q,
        v,
        w,
    });
    let torques = SpringDamper::new(&model, 300.0, 30.0);
    let mut stepper = Stepper::new(&model, opts).unwrap();
    // warm up and sanity-check: a step succeeds and post-stabilises
    {
        let mut s = state.clone();
        let rep = stepper.step(&model, &mut s, &root, &torques, None).unwrap();
        eprintln!("humanoid step report: {rep:?}");
    }

    let mut g = c.benchmark_group("step_humanoid20");
    g.bench_function("gradients (prepare)", |b| {
        b.iter(|| {
            stepper
                .prepare(&model, black_box(&state), &root, &torques, None)
                .unwrap()
        })
    });
    stepper
        .prepare(&model, &state, &root, &torques, None)
        .unwrap();
    g.bench_function("factor+solve (solve)", |b| {
        b.iter(|| stepper.solve(&model, black_box(&state), &root).unwrap())
    });
    stepper.solve(&model, &state, &root).unwrap();
    g.bench_function("update+stabilise (finish)", |b| {
        b.iter_batched_ref(
            || state.clone(),
            |s| stepper.finish(&model, s, &root).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("whole step", |b| {
        b.iter_batched_ref(
            || state.clone(),
            |s| stepper.step(&model, s, &root, &torques, None).unwrap(),
            BatchSize::SmallInput,
        )
    });
    // what the feedforward adds to a step: ψ's wrenches by re-solving with the factorisation
    let psi_wrench: Vec<(Vector3<f64>, Vector3<f64>)> = (0..model.bodies.len())
        .map(|b| (Vector3::zeros(), Vector3::new(0.3, -0.2, 0.1) * b as f64))
        .collect();
    stepper
        .prepare(&model, &state, &root, &torques, None)
        .unwrap();
    stepper.solve(&model, &state, &root).unwrap();
    g.bench_function("feedforward re-solve (resolve_with_external)", |b| {
        b.iter_batched_ref(
            || stepper.clone(),
            |st| st.resolve_with_external(black_box(&psi_wrench)).unwrap(),
            BatchSize::SmallInput,
        )
    });
    let mut reuse = Stepper::new(
        &model,
        StepOptions {
            post_stabilization_reuse: true,
            ..opts
        },
    )
    .unwrap();
    g.bench_function("whole step, post-stab. reusing the factorisation", |b| {
        b.iter_batched_ref(
            || state.clone(),
            |s| reuse.step(&model, s, &root, &torques, None).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench_step);
criterion_main!(benches);
