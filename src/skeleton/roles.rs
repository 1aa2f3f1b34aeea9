//! Semantic body roles shared by every skeleton family (targets for throws, default
//! joint types, the de Leva segments they stand for).

use serde::{Deserialize, Serialize};

/// A named part of a human figure that every skeleton family can map to one of its joints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Pelvis / hips (usually the root body).
    Pelvis,
    /// Lower trunk between pelvis and chest.
    Abdomen,
    /// Upper trunk (ribcage), carries the arms.
    Chest,
    /// Neck segment.
    Neck,
    /// Head.
    Head,
    /// Left clavicle / collar.
    LeftClavicle,
    /// Right clavicle / collar.
    RightClavicle,
    /// Left upper arm (shoulder to elbow).
    LeftUpperArm,
    /// Right upper arm.
    RightUpperArm,
    /// Left forearm (elbow to wrist).
    LeftForearm,
    /// Right forearm.
    RightForearm,
    /// Left hand.
    LeftHand,
    /// Right hand.
    RightHand,
    /// Left thigh (hip to knee).
    LeftThigh,
    /// Right thigh.
    RightThigh,
    /// Left shin (knee to ankle).
    LeftShin,
    /// Right shin.
    RightShin,
    /// Left foot.
    LeftFoot,
    /// Right foot.
    RightFoot,
}

impl Role {
    /// Every role, in a stable order.
    pub const ALL: [Role; 19] = [
        Role::Pelvis,
        Role::Abdomen,
        Role::Chest,
        Role::Neck,
        Role::Head,
        Role::LeftClavicle,
        Role::RightClavicle,
        Role::LeftUpperArm,
        Role::RightUpperArm,
        Role::LeftForearm,
        Role::RightForearm,
        Role::LeftHand,
        Role::RightHand,
        Role::LeftThigh,
        Role::RightThigh,
        Role::LeftShin,
        Role::RightShin,
        Role::LeftFoot,
        Role::RightFoot,
    ];

    /// The snake_case name used in skeleton specs, CLI targets and JSON (`left_forearm`).
    pub fn name(self) -> &'static str {
        match self {
            Role::Pelvis => "pelvis",
            Role::Abdomen => "abdomen",
            Role::Chest => "chest",
            Role::Neck => "neck",
            Role::Head => "head",
            Role::LeftClavicle => "left_clavicle",
            Role::RightClavicle => "right_clavicle",
            Role::LeftUpperArm => "left_upper_arm",
            Role::RightUpperArm => "right_upper_arm",
            Role::LeftForearm => "left_forearm",
            Role::RightForearm => "right_forearm",
            Role::LeftHand => "left_hand",
            Role::RightHand => "right_hand",
            Role::LeftThigh => "left_thigh",
            Role::RightThigh => "right_thigh",
            Role::LeftShin => "left_shin",
            Role::RightShin => "right_shin",
            Role::LeftFoot => "left_foot",
            Role::RightFoot => "right_foot",
        }
    }

    /// Parse a role name (`left_forearm`).
    pub fn from_name(s: &str) -> Option<Role> {
        Role::ALL.iter().copied().find(|r| r.name() == s)
    }

    /// Provisional capsule radius of this segment for a 1.75 m figure, metres (scaled with
    /// √stature): compares the volumes of bodies that share a segment's mass (a Mixamo
    /// `Spine1` and the abdomen) before the final radii are fitted to the masses.
    pub fn default_radius_m(self) -> f64 {
        match self {
            Role::Pelvis => 0.08,
            Role::Abdomen => 0.09,
            Role::Chest => 0.095,
            Role::Neck => 0.05,
            Role::Head => 0.085,
            Role::LeftClavicle | Role::RightClavicle => 0.04,
            Role::LeftUpperArm | Role::RightUpperArm => 0.042,
            Role::LeftForearm | Role::RightForearm => 0.034,
            Role::LeftHand | Role::RightHand => 0.035,
            Role::LeftThigh | Role::RightThigh => 0.064,
            Role::LeftShin | Role::RightShin => 0.044,
            Role::LeftFoot | Role::RightFoot => 0.035,
        }
    }

    /// Joint type used for this segment's joint to its parent when the spec says nothing:
    /// knees and elbows are hinges (METHOD §3), everything else a ball joint.
    pub fn default_joint(self) -> JointType {
        match self {
            Role::LeftShin | Role::RightShin | Role::LeftForearm | Role::RightForearm => {
                JointType::Hinge
            }
            _ => JointType::Ball,
        }
    }
}

/// The three joint types of METHOD §3/§4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JointType {
    /// 3 rotational DOF.
    Ball,
    /// 1 rotational DOF (knee, elbow).
    Hinge,
    /// 2 rotational DOF (wrist, ankle if chosen).
    Universal,
}

impl JointType {
    /// Rotational degrees of freedom.
    pub fn dof(self) -> usize {
        match self {
            JointType::Ball => 3,
            JointType::Hinge => 1,
            JointType::Universal => 2,
        }
    }

    /// Name as written in specs and JSON.
    pub fn name(self) -> &'static str {
        match self {
            JointType::Ball => "ball",
            JointType::Hinge => "hinge",
            JointType::Universal => "universal",
        }
    }
}

/// Words in joint names of bones that are too small or not anatomical segments
/// (fingers, toes, eyes, twist and helper bones): merged into their parent body.
pub(crate) const MERGE_KEYWORDS: [&str; 16] = [
    "finger", "thumb", "index", "middle", "ring", "pinky", "toe", "eye", "jaw", "tongue", "teeth",
    "twist", "share", "breast", "facial", "nub",
];
