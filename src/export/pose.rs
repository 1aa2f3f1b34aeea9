//! From body poses back to every clip joint's transform (the inverse of the model build):
//! body joints take the simulated pose, merged joints (fingers, toes, zero-length bones)
//! ride on their body with the mocap's own relative motion, carriers follow the mocap.

use crate::mocap::Clip;
use crate::sim::BodyPose;
use crate::skeleton::{ClipFrames, ClipWorldPoses, Model};
use nalgebra::{UnitQuaternion, Vector3};
use std::borrow::Cow;

/// A rigid transform: translation (m) and rotation.
pub type Transform = (Vector3<f64>, UnitQuaternion<f64>);

/// World transform (m, Y up) of every clip joint in used frame `f`, given the bodies' poses
/// (`None`: the mocap itself).
pub fn joint_world_transforms(
    model: &Model,
    frames: &ClipFrames,
    f: usize,
    bodies: Option<&[BodyPose]>,
) -> Vec<Transform> {
    let mocap = frames.world(f);
    match bodies {
        Some(bodies) => joint_world_transforms_over(model, frames.clip, &mocap, bodies),
        None => mocap,
    }
}

/// [`joint_world_transforms`] of the bodies' poses `bodies` over the mocap's own world
/// transforms of the same frame (`mocap`, from [`ClipFrames::world`]), for an export that
/// needs both the original and a simulated animation and computes the mocap's once.
pub fn joint_world_transforms_over(
    model: &Model,
    clip: &Clip,
    mocap: &[Transform],
    bodies: &[BodyPose],
) -> Vec<Transform> {
    let mut out = Vec::with_capacity(mocap.len());
    joint_world_transforms_over_into(model, clip, mocap, bodies, &mut out);
    out
}

/// [`joint_world_transforms_over`] into `out` (its storage reused: an export poses every
/// frame in turn).
pub fn joint_world_transforms_over_into(
    model: &Model,
    clip: &Clip,
    mocap: &[Transform],
    bodies: &[BodyPose],
    out: &mut Vec<Transform>,
) {
    out.clear();
    out.extend_from_slice(mocap);
    for (j, owner) in model.owner.iter().enumerate().take(clip.joints.len()) {
        let Some(b) = *owner else { continue };
        let body = &model.bodies[b];
        let pose = &bodies[b];
        let joint_point = pose.x - pose.q * body.com;
        if body.bvh_joint == j {
            out[j] = (joint_point, pose.q);
        } else if let (Some((t, q)), Some(p)) = (model.frozen[j], clip.joints[j].parent) {
            let (pp, pq) = out[p];
            out[j] = (pp + pq * t, pq * q);
        } else {
            let (pr, qr) = mocap[body.bvh_joint];
            let rel_t = qr.inverse() * (mocap[j].0 - pr);
            let rel_q = qr.inverse() * mocap[j].1;
            out[j] = (joint_point + pose.q * rel_t, pose.q * rel_q);
        }
    }
}

/// The mocap's world transforms of the first `n` used frames: `known` (what the model's
/// build computed, [`Character::mocap_world`](crate::Character::mocap_world)) when it has
/// them, else computed from `frames` — the same values either way.
pub fn mocap_world_frames<'a>(
    known: Option<&'a ClipWorldPoses>,
    frames: &ClipFrames,
    n: usize,
) -> Cow<'a, [Vec<Transform>]> {
    match known {
        Some(w) if w.len() >= n => Cow::Borrowed(&w[..n]),
        _ => Cow::Owned((0..n).map(|f| frames.world(f)).collect()),
    }
}

/// Local transforms (relative to the parent joint; the root's relative to the world) from
/// world transforms.
pub fn local_transforms(clip: &Clip, world: &[Transform]) -> Vec<Transform> {
    let mut out = Vec::with_capacity(clip.joints.len());
    local_transforms_into(clip, world, &mut out);
    out
}

/// [`local_transforms`] into `out` (its storage reused).
pub fn local_transforms_into(clip: &Clip, world: &[Transform], out: &mut Vec<Transform>) {
    out.clear();
    out.extend(
        clip.joints
            .iter()
            .enumerate()
            .map(|(j, joint)| match joint.parent {
                None => world[j],
                Some(p) => {
                    let (pp, pq) = world[p];
                    (pq.inverse() * (world[j].0 - pp), pq.inverse() * world[j].1)
                }
            }),
    );
}
