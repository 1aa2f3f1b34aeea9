//! Stature from a skeleton's bone lengths (METHOD §3): pose-independent, so a crouching
//! fighter or a dancer with raised arms measures the same as a walker.
//!
//! The *whole chain* is the direct measurement: sole → ankle (a table share of stature,
//! the rig has no sole), ankle → knee → hip (the mean of both legs), the hip joints' centre
//! → pelvis joint → spine → neck → head joint (every bone on the way, merged zero-length
//! ones included), and the head joint → vertex (the rig's head bones when they reach that
//! far, else the table's share). A rig's trunk can only lose length, never gain it —
//! cgspeed's CMU files have no thorax bone, Bandai's spine joints sit close together — so
//! the legs, the best-defined joint centres of any capture, bound the chain from below:
//! legs are at most [`MAX_LEG_LENGTH_PER_STATURE`] of an adult's stature.

use super::anthropometry::{
    ANKLE_HEIGHT_PER_STATURE, MAX_LEG_LENGTH_PER_STATURE, VERTEX_ABOVE_HEAD_JOINT_PER_STATURE,
    leg_length_per_stature,
};
use super::roles::Role;
use super::units::ClipFrames;
use std::collections::BTreeMap;

/// How a stature was estimated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatureSource {
    /// Sole → ankle → knee → hip → spine → head joint → vertex.
    WholeChain,
    /// The chain is too short for the legs (trunk bones missing or short): legs /
    /// [`MAX_LEG_LENGTH_PER_STATURE`].
    LegsBound,
    /// No trunk chain (no pelvis or head role): legs / the table's mean leg share.
    Legs,
    /// No leg roles: the joints' vertical extent over the clip × 1.06.
    JointExtent,
}

impl StatureSource {
    /// Keyword for JSON (`whole_chain`, `legs_bound`, `legs`, `joint_extent`).
    pub fn keyword(self) -> &'static str {
        match self {
            StatureSource::WholeChain => "whole_chain",
            StatureSource::LegsBound => "legs_bound",
            StatureSource::Legs => "legs",
            StatureSource::JointExtent => "joint_extent",
        }
    }
}

/// A stature and its parts. Lengths are in metres at the scale of the frames they were
/// measured in (file units × the scale in force).
#[derive(Clone, Debug, PartialEq)]
pub struct StatureEstimate {
    /// The estimate.
    pub stature: f64,
    /// Which rule gave it.
    pub source: StatureSource,
    /// Mean of the legs' hip → knee → ankle bone lengths, if the roles exist.
    pub legs: Option<f64>,
    /// Hip joints' centre → pelvis joint → … → head joint, along the bones.
    pub trunk: Option<f64>,
    /// How far the rig's head bones (End Site, descendants) reach above the head joint.
    pub head_bones: Option<f64>,
    /// The whole-chain estimate (even when the legs bound wins).
    pub chain: Option<f64>,
}

impl StatureEstimate {
    /// One line for `info` and the model notes, at `scale` metres per unit of the lengths
    /// (1 when they are metres already).
    pub fn describe(&self, scale: f64) -> String {
        let m = |x: f64| format!("{:.3} m", x * scale);
        let vertex = VERTEX_ABOVE_HEAD_JOINT_PER_STATURE * self.stature;
        let head = match self.head_bones {
            Some(b) if b >= vertex => format!("head bones {}", m(b)),
            Some(b) if b > 0.0 => format!(
                "head joint → vertex {} (11.6 % of stature; the head bones reach {})",
                m(vertex),
                m(b)
            ),
            _ => format!("head joint → vertex {} (11.6 % of stature)", m(vertex)),
        };
        match self.source {
            StatureSource::WholeChain => format!(
                "whole chain: sole → ankle {} (3.9 % of stature) + legs {} + hips → head joint {} + {}",
                m(ANKLE_HEIGHT_PER_STATURE * self.stature),
                m(self.legs.unwrap_or(0.0)),
                m(self.trunk.unwrap_or(0.0)),
                head
            ),
            StatureSource::LegsBound => format!(
                "legs {} / {MAX_LEG_LENGTH_PER_STATURE} (adults' longest legs): the whole chain \
                 (hips → head joint {}) gives only {}, too short for these legs (trunk bones \
                 missing or short)",
                m(self.legs.unwrap_or(0.0)),
                m(self.trunk.unwrap_or(0.0)),
                m(self.chain.unwrap_or(0.0))
            ),
            StatureSource::Legs => format!(
                "legs {} / {:.3} (de Leva's mean leg share; no pelvis → head chain)",
                m(self.legs.unwrap_or(0.0)),
                leg_length_per_stature()
            ),
            StatureSource::JointExtent => {
                "1.06 × the joints' vertical extent (no leg roles)".into()
            }
        }
    }
}

/// Estimate the stature of a figure from its bones (see the module doc). `joint_extent`
/// is the fallback when the roles give no legs: the frames' height from the joints'
/// vertical extent, at the frames' scale.
pub fn estimate_stature(
    frames: &ClipFrames,
    roles: &BTreeMap<Role, usize>,
    joint_extent: f64,
) -> StatureEstimate {
    let fallback = StatureEstimate {
        stature: joint_extent,
        source: StatureSource::JointExtent,
        legs: None,
        trunk: None,
        head_bones: None,
        chain: None,
    };
    let nf = frames.num_frames();
    if nf == 0 {
        return fallback;
    }
    let step = (nf / 100).max(1);
    let sample: Vec<_> = (0..nf).step_by(step).map(|f| frames.world(f)).collect();
    let n = sample.len() as f64;
    let dist = |a: usize, b: usize| -> f64 {
        sample.iter().map(|w| (w[a].0 - w[b].0).norm()).sum::<f64>() / n
    };
    let clip = frames.clip;
    let get = |r: Role| roles.get(&r).copied();

    // Legs: hip → knee → ankle on each side that has all three roles.
    let mut legs = vec![];
    for (thigh, shin, foot) in [
        (Role::LeftThigh, Role::LeftShin, Role::LeftFoot),
        (Role::RightThigh, Role::RightShin, Role::RightFoot),
    ] {
        if let (Some(t), Some(s), Some(f)) = (get(thigh), get(shin), get(foot)) {
            legs.push(dist(t, s) + dist(s, f));
        }
    }
    let legs = (!legs.is_empty()).then(|| legs.iter().sum::<f64>() / legs.len() as f64);
    let Some(legs) = legs.filter(|l| l.is_finite() && *l > 0.0) else {
        return fallback;
    };

    // Trunk: hip joints' centre → pelvis joint, then the bones from the pelvis joint up to
    // the head joint (the head must lie below the pelvis in the hierarchy).
    let trunk = (|| -> Option<(f64, usize)> {
        let pelvis = get(Role::Pelvis)?;
        let head = get(Role::Head)?;
        let hips: Vec<usize> = [Role::LeftThigh, Role::RightThigh]
            .iter()
            .filter_map(|&r| get(r))
            .collect();
        let drop = sample
            .iter()
            .map(|w| {
                let centre = hips.iter().map(|&h| w[h].0).sum::<nalgebra::Vector3<f64>>()
                    / hips.len() as f64;
                (centre - w[pelvis].0).norm()
            })
            .sum::<f64>()
            / n;
        let mut spine = 0.0;
        let mut j = head;
        while j != pelvis {
            let p = clip.joints[j].parent?;
            spine += dist(j, p);
            j = p;
        }
        Some((drop + spine, head))
    })();
    let Some((trunk, head)) = trunk.filter(|t| t.0.is_finite()) else {
        return StatureEstimate {
            stature: legs / leg_length_per_stature(),
            source: StatureSource::Legs,
            legs: Some(legs),
            ..fallback
        };
    };

    // Head bones: the head's End Site and every descendant (joints and their End Sites).
    let mut head_bones: f64 = 0.0;
    let end_site_reach = |k: usize| -> f64 {
        clip.joints[k].end_site.map_or(0.0, |e| {
            sample
                .iter()
                .map(|w| (w[k].0 + w[k].1 * (e * frames.scale) - w[head].0).norm())
                .sum::<f64>()
                / n
        })
    };
    for k in 0..clip.joints.len() {
        let mut a = Some(k);
        while let Some(p) = a {
            if p == head {
                head_bones = head_bones.max(dist(k, head)).max(end_site_reach(k));
                break;
            }
            a = clip.joints[p].parent;
        }
    }

    // known + ankle·H + max(head bones, vertex·H) = H
    let known = legs + trunk;
    let chain = ((known + head_bones) / (1.0 - ANKLE_HEIGHT_PER_STATURE))
        .max(known / (1.0 - ANKLE_HEIGHT_PER_STATURE - VERTEX_ABOVE_HEAD_JOINT_PER_STATURE));
    let bound = legs / MAX_LEG_LENGTH_PER_STATURE;
    let (stature, source) = if chain >= bound {
        (chain, StatureSource::WholeChain)
    } else {
        (bound, StatureSource::LegsBound)
    };
    StatureEstimate {
        stature,
        source,
        legs: Some(legs),
        trunk: Some(trunk),
        head_bones: Some(head_bones),
        chain: Some(chain),
    }
}
