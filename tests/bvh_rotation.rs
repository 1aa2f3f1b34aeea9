//! Rotation orders of parsed clips against hand-written rotation matrices.
use jostle::mocap::{Clip, parse_bvh};
use nalgebra::{Matrix3, Vector3};

fn rx(deg: f64) -> Matrix3<f64> {
    let (s, c) = deg.to_radians().sin_cos();
    Matrix3::new(
        1.0, 0.0, 0.0, //
        0.0, c, -s, //
        0.0, s, c,
    )
}

fn ry(deg: f64) -> Matrix3<f64> {
    let (s, c) = deg.to_radians().sin_cos();
    Matrix3::new(
        c, 0.0, s, //
        0.0, 1.0, 0.0, //
        -s, 0.0, c,
    )
}

fn rz(deg: f64) -> Matrix3<f64> {
    let (s, c) = deg.to_radians().sin_cos();
    Matrix3::new(
        c, -s, 0.0, //
        s, c, 0.0, //
        0.0, 0.0, 1.0,
    )
}

/// A root with position channels then the three rotations in `order` (e.g. "ZXY"), and
/// one child at OFFSET (1,2,3) with 6 channels (position on a non-root joint).
fn clip(order: &str, angles: [f64; 3], child_pos: [f64; 3]) -> Clip {
    let rot: Vec<String> = order.chars().map(|a| format!("{a}rotation")).collect();
    let text = format!(
        "HIERARCHY\nROOT r\n{{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition {}\n\
         \tJOINT c\n\t{{\n\t\tOFFSET 1 2 3\n\t\tCHANNELS 6 Xposition Yposition Zposition {}\n\
         \t\tEnd Site\n\t\t{{\n\t\t\tOFFSET 0 0 1\n\t\t}}\n\t}}\n}}\nMOTION\nFrames: 1\n\
         Frame Time: 0.01\n5 6 7 {} {} {} {} {} {} 0 0 0\n",
        rot.join(" "),
        rot.join(" "),
        angles[0],
        angles[1],
        angles[2],
        child_pos[0],
        child_pos[1],
        child_pos[2],
    );
    parse_bvh(&text, "rot").unwrap()
}

#[track_caller]
fn assert_close(a: &Matrix3<f64>, b: &Matrix3<f64>, what: &str) {
    let d = (a - b).abs().max();
    assert!(d < 1e-12, "{what}: max diff {d}\n{a}\n{b}");
}

#[test]
fn rotation_orders_match_hand_written_products() {
    let angle_sets = [
        [90.0, 0.0, 0.0],
        [0.0, 90.0, 0.0],
        [0.0, 0.0, 90.0],
        [30.0, 45.0, 60.0],
        [-170.0, 12.5, 250.0],
    ];
    for a in angle_sets {
        // Channel values in file order: a[0] for the first listed axis, etc.
        let cases: [(&str, Matrix3<f64>); 6] = [
            ("ZXY", rz(a[0]) * rx(a[1]) * ry(a[2])),
            ("ZYX", rz(a[0]) * ry(a[1]) * rx(a[2])),
            ("XYZ", rx(a[0]) * ry(a[1]) * rz(a[2])),
            ("YXZ", ry(a[0]) * rx(a[1]) * rz(a[2])),
            ("XZY", rx(a[0]) * rz(a[1]) * ry(a[2])),
            ("YZX", ry(a[0]) * rz(a[1]) * rx(a[2])),
        ];
        for (order, want) in cases {
            let c = clip(order, a, [0.0; 3]);
            let (t, q) = c.local_transform(0, 0);
            assert_eq!(t, Vector3::new(5.0, 6.0, 7.0));
            let got = q.to_rotation_matrix().into_inner();
            assert_close(&got, &want, &format!("{order} {a:?}"));
        }
    }
}

#[test]
fn ninety_degree_rotations_map_axes() {
    let x = Vector3::x();
    let y = Vector3::y();
    let z = Vector3::z();
    let close = |a: Vector3<f64>, b: Vector3<f64>| (a - b).norm() < 1e-12;
    // Zrotation 90 maps x to y; Xrotation 90 maps y to z; Yrotation 90 maps z to x.
    let (_, q) = clip("ZXY", [90.0, 0.0, 0.0], [0.0; 3]).local_transform(0, 0);
    assert!(close(q * x, y), "{}", q * x);
    let (_, q) = clip("ZXY", [0.0, 90.0, 0.0], [0.0; 3]).local_transform(0, 0);
    assert!(close(q * y, z), "{}", q * y);
    let (_, q) = clip("ZXY", [0.0, 0.0, 90.0], [0.0; 3]).local_transform(0, 0);
    assert!(close(q * z, x), "{}", q * z);
    // Order matters: ZXY (90,90,0) = Rz(90)·Rx(90): y -> z -> z, x -> x -> y.
    let (_, q) = clip("ZXY", [90.0, 90.0, 0.0], [0.0; 3]).local_transform(0, 0);
    assert!(close(q * y, z));
    assert!(close(q * x, y));
    // XYZ (90,90,0) = Rx(90)·Ry(90): z -> x -> x, y -> y -> z.
    let (_, q) = clip("XYZ", [90.0, 90.0, 0.0], [0.0; 3]).local_transform(0, 0);
    assert!(close(q * z, x));
    assert!(close(q * y, z));
}

#[test]
fn non_root_position_channels_add_to_offset() {
    let c = clip("ZYX", [0.0; 3], [10.0, 20.0, 30.0]);
    assert_eq!(c.joints[1].first_column, 6);
    let (t, _) = c.local_transform(1, 0);
    assert_eq!(t, Vector3::new(11.0, 22.0, 33.0));
}

#[test]
fn world_transform_composes_parent_rotation() {
    // Root at (5,6,7) rotated Zrotation 90; child OFFSET (1,2,3): world = root + Rz(90)·(1,2,3).
    let c = clip("ZYX", [90.0, 0.0, 0.0], [0.0; 3]);
    let w = c.world_transforms(0);
    let want = Vector3::new(5.0 - 2.0, 6.0 + 1.0, 7.0 + 3.0);
    assert!((w[1].0 - want).norm() < 1e-12, "{}", w[1].0);
    let want_r = rz(90.0);
    assert_close(
        &w[1].1.to_rotation_matrix().into_inner(),
        &want_r,
        "child world rotation",
    );
}
