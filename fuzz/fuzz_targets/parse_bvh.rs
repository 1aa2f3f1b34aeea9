//! Any bytes: the reader must return Ok or a Parse error (never panic, never allocate
//! beyond the input), and every accepted input must survive write → parse unchanged.
#![no_main]

use jostle::mocap::{BvhError, parse_bvh, write_bvh_string};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_bvh(&text, "fuzz") {
        Ok(clip) => {
            assert!(clip.num_frames() > 0 && clip.frame_time > 0.0);
            assert_eq!(clip.values.len(), clip.num_frames() * clip.num_channels);
            let written = write_bvh_string(&clip);
            let mut again = parse_bvh(&written, "written")
                .unwrap_or_else(|e| panic!("written text does not parse: {e}\n{written}"));
            let mut orig = clip;
            for j in orig.joints.iter_mut().chain(again.joints.iter_mut()) {
                j.line = 0;
            }
            assert_eq!(again, orig);
            assert_eq!(write_bvh_string(&again), written);
        }
        Err(BvhError::Parse { line, .. }) => assert!(line >= 1),
        Err(e) => panic!("unexpected error kind: {e}"),
    }
});
