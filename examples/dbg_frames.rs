use jostle::mocap::load_bvh;
fn main() {
    let p = std::env::args().nth(1).unwrap();
    let clip = load_bvh(std::path::Path::new(&p)).unwrap();
    for f in (0..clip.num_frames()).step_by(10) {
        let w = clip.world_transforms(f);
        let ext: Vec<f64> = (0..3).map(|a| { let lo = w.iter().map(|p| p.0[a]).fold(f64::INFINITY, f64::min); let hi = w.iter().map(|p| p.0[a]).fold(f64::NEG_INFINITY, f64::max); hi - lo }).collect();
        let far = w.iter().enumerate().max_by(|a, b| (a.1.0 - w[1].0).norm().total_cmp(&(b.1.0 - w[1].0).norm())).unwrap();
        println!("{f:4} ext {:7.1} {:7.1} {:7.1}  farthest {} {:?}", ext[0], ext[1], ext[2], clip.joints[far.0].name, far.1.0.as_slice());
    }
}
