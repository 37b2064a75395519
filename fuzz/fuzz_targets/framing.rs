//! The framing fed arbitrary datagrams: splitting into messages never
//! panics, stops at the first malformed message, and agrees with the
//! header-only count of data messages.

#![no_main]

use ipvsnl::proto::fuzzing::{all_frames, data_message_count, frames, Reply};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let family = match data.first() {
        Some(b) => 0x10 + u16::from(*b % 8),
        None => 0x23,
    };
    let mut data_frames = 0;
    let mut ended = false;
    for f in frames(data, family) {
        assert!(!ended, "a frame after an error");
        match f {
            Ok(f) => {
                if matches!(f.reply, Reply::Data { .. }) {
                    data_frames += 1;
                }
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                ended = true;
            }
        }
    }
    // The count reads headers only: it counts at least every data message
    // the framing yields (and family replies, which are not IPVS data).
    assert!(data_message_count(data) >= data_frames);
    assert_eq!(all_frames(data, family).is_err(), ended);
});
