//! The step's hot path allocates nothing: a counting global allocator sees zero
//! allocations across many steps of a 20-body humanoid with PD-like torques, for every
//! drift control. The count is per thread, so what the test harness (or another test
//! in this binary) allocates meanwhile on its own threads is not blamed on the step.

mod common;

use jostle::dynamics::{Drift, SpringDamper, StepOptions, Stepper};
use jostle::sim::models::{humanoid, humanoid_state};
use nalgebra::Vector3;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // const-initialised and without a destructor: reading it never allocates
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Heap allocations made so far by the calling thread.
fn allocations_of_this_thread() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // try_with: the slot may already be gone while a thread is being torn down
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn step_does_not_allocate() {
    // the counter sees this thread's allocations (else a zero below would prove nothing)
    let probe = allocations_of_this_thread();
    std::hint::black_box(Vec::<u8>::with_capacity(16));
    assert_eq!(allocations_of_this_thread(), probe + 1);
    let model = humanoid();
    let (v, w) = (Vector3::new(0.5, 0.0, 0.2), Vector3::new(0.0, 0.3, 0.1));
    let stiff = SpringDamper::new(&model, 300.0, 30.0);
    for drift in [
        Drift::PostStabilization,
        Drift::None,
        Drift::Baumgarte { beta: 50.0 },
        Drift::ImprovedImplicit,
    ] {
        let mut state = humanoid_state(&model, v, w);
        let opts = StepOptions {
            drift,
            ..Default::default()
        };
        let mut stepper = Stepper::new(&model, opts).unwrap();
        let torques = &stiff;
        let (x0, q0) = (state.bodies[0].x, state.bodies[0].q);
        let before = allocations_of_this_thread();
        for k in 1..=50 {
            let t = k as f64 * opts.h;
            let root = common::steadily_moving_root(x0, q0, v, w, t);
            stepper
                .step(&model, &mut state, &root, torques, None)
                .unwrap();
        }
        let n = allocations_of_this_thread() - before;
        assert_eq!(n, 0, "{}: {n} heap allocations in 50 steps", drift.label());
    }
}

#[test]
fn a_standing_simulation_step_allocates_little_beyond_its_record() {
    // A spring-held figure on the floor (the default run): its contact phase keeps its
    // buffers from step to step. What a step still allocates: its record (the poses, the
    // touching bodies), the warm start's small LU (the basic block, its permutation and
    // right-hand side, per round) and Lemke's tableau on the rare steps that need it.
    // Before the buffers were kept, ~45 a step.
    use jostle::sim::{SimOptions, Simulation};
    use jostle::{Character, CharacterOptions};
    let c = Character::load(
        &common::repo_clip("demo_walk.bvh"),
        &CharacterOptions::default(),
    )
    .expect("demo walk loads");
    let mut sim = Simulation::new(&c, SimOptions::default()).expect("feedforward");
    sim.replay_unperturbed = false;
    for _ in 0..50 {
        sim.step(None).expect("steps");
    }
    let steps = 300;
    let before = allocations_of_this_thread();
    for _ in 0..steps {
        sim.step(None).expect("steps");
    }
    let per_step = (allocations_of_this_thread() - before) as f64 / steps as f64;
    let contacts = sim.record.contacts[50..]
        .iter()
        .filter(|r| r.contacts > 0)
        .count();
    eprintln!("{per_step:.2} heap allocations a step, {contacts} of {steps} steps with contacts");
    assert!(contacts > steps / 2, "the figure stands on the floor");
    assert!(per_step <= 10.0, "{per_step:.2} heap allocations a step");
}
