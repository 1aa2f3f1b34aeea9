//! BVH of a trajectory in the input's own hierarchy, offsets, channel orders, units and
//! frame time, so it goes back into the tools that made the input.

use super::pose::{
    Transform, joint_world_transforms_over_into, local_transforms_into, mocap_world_frames,
};
use crate::Character;
use crate::mocap::euler::decompose_into;
use crate::mocap::{Channel, Clip};
use crate::sim::Trajectory;
use crate::skeleton::{ClipFrames, ClipWorldPoses, Model, PositionConvention};

/// A copy of `clip` whose motion is `traj` (one trajectory frame per clip frame used;
/// `None` re-exports the mocap itself). A dropped T-pose frame is kept as it was.
pub fn clip_with_trajectory(model: &Model, clip: &Clip, traj: Option<&Trajectory>) -> Clip {
    clip_with_trajectory_over(model, clip, None, traj)
}

/// [`clip_with_trajectory`] of a character, posed over the mocap's world transforms its
/// build computed ([`Character::mocap_world`]): the same clip, without computing them
/// again.
pub fn character_clip_with_trajectory(character: &Character, traj: Option<&Trajectory>) -> Clip {
    clip_with_trajectory_over(
        &character.model,
        &character.clip,
        Some(&character.mocap_world),
        traj,
    )
}

/// The clip; `mocap`: the clip's world transforms per used frame if known.
fn clip_with_trajectory_over(
    model: &Model,
    clip: &Clip,
    mocap: Option<&ClipWorldPoses>,
    traj: Option<&Trajectory>,
) -> Clip {
    let frames = ClipFrames::from_figure(clip, &model.figure);
    let n = traj.map_or(frames.num_frames(), |t| {
        t.num_frames().min(frames.num_frames())
    });
    let mocap = mocap_world_frames(mocap, &frames, n);
    let nc = clip.num_channels;
    let first = model.figure.first_frame;
    let mut values = Vec::with_capacity((first + n) * nc);
    values.extend_from_slice(&clip.values[..first * nc]);
    let to_file = model.figure.to_world.inverse();
    let scale = model.figure.scale;
    // per joint, its rotation channels in order (what its angles are solved for)
    let rotations: Vec<Vec<Channel>> = clip
        .joints
        .iter()
        .map(|joint| {
            joint
                .channels
                .iter()
                .copied()
                .filter(|c| c.is_rotation())
                .collect()
        })
        .collect();
    // a frame's buffers, reused from frame to frame
    let (mut world, mut local) = (Vec::new(), Vec::new());
    let (mut prev, mut angles) = (Vec::new(), Vec::new());
    let mut row = vec![0.0; nc];
    for f in 0..n {
        let world: &[Transform] = match traj {
            Some(t) => {
                joint_world_transforms_over_into(model, clip, &mocap[f], &t.poses[f], &mut world);
                &world
            }
            None => &mocap[f],
        };
        local_transforms_into(clip, world, &mut local);
        let src = clip.frame(first + f);
        row.fill(0.0);
        for (j, joint) in clip.joints.iter().enumerate() {
            let (mut t, mut q) = local[j];
            if joint.parent.is_none() {
                t = to_file * t;
                q = to_file * q;
            }
            let t = t / scale;
            let rot = &rotations[j];
            prev.clear();
            prev.extend(
                joint
                    .channels
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.is_rotation())
                    .map(|(k, _)| {
                        if f == 0 {
                            src[joint.first_column + k]
                        } else {
                            values[values.len() - nc + joint.first_column + k]
                        }
                    }),
            );
            angles.clear();
            if !rot.is_empty() {
                decompose_into(&q, rot, &prev, &mut angles);
            }
            let mut r = 0;
            for (k, c) in joint.channels.iter().enumerate() {
                row[joint.first_column + k] = if c.is_rotation() {
                    r += 1;
                    angles[r - 1]
                } else {
                    let v = t.dot(&c.axis());
                    if frames.position_convention[j] == PositionConvention::RelativeToOffset {
                        v - joint.offset.dot(&c.axis())
                    } else {
                        v
                    }
                };
            }
        }
        values.extend_from_slice(&row);
    }
    Clip {
        joints: clip.joints.clone(),
        frame_time: clip.frame_time,
        num_channels: nc,
        values,
    }
}
