//! libFuzzer target for the statistics page parser of `rsuring-stat`
//! (`rsuring::live_view::live::parse_page`): the bytes another user may
//! have written into `/dev/shm/rs-ringstats.PID`. Built and run by
//! `scripts/fuzz.sh --target page`.
//!
//! Input: a page's first bytes (the header, then slots). The parser gets
//! them as the reader's three copies, whole and cut short, and what it
//! returns goes through the same formatting `rsuring-stat` prints with.

use rsuring::live_view::format::{ring_fields, text};
use rsuring::live_view::live::{parse_page, Page, HEADER_LEN, PID_AT, SLOTS, SLOT_LEN};

fn run(data: &[u8]) {
    let header = &data[..data.len().min(HEADER_LEN)];
    let slots = data.get(HEADER_LEN..).unwrap_or(&[]);
    let pid = data
        .get(PID_AT..PID_AT + 4)
        .map_or(0, |b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    let half = &slots[..slots.len() / 2];
    for copies in [
        [slots, slots, slots],
        [slots, half, slots],
        [half, slots, &slots[1.min(slots.len())..]],
    ] {
        for pid in [pid, pid ^ 1] {
            let (page, found) = parse_page(pid, header, copies);
            assert!(found.len() <= SLOTS, "more slots than a page holds");
            if !matches!(page, Page::Live { .. }) {
                assert!(found.is_empty(), "slots of a page that is not live");
            }
            for s in &found {
                assert!(s.index < SLOTS && (s.index + 1) * SLOT_LEN <= copies[1].len());
                assert!(s.gen % 2 == 1, "a free slot read as live");
                let line = text("rsuring:", &ring_fields(pid, &s.info, &s.counters, None));
                assert!(line.starts_with("rsuring: pid="));
            }
        }
    }
}

/// # Safety
/// libFuzzer passes `size` readable bytes at `data` (or a null pointer
/// with size 0).
#[no_mangle]
pub unsafe extern "C" fn LLVMFuzzerTestOneInput(data: *const u8, size: usize) -> i32 {
    let input: &[u8] = if data.is_null() || size == 0 {
        &[]
    } else {
        // SAFETY: libFuzzer's contract, above.
        unsafe { std::slice::from_raw_parts(data, size) }
    };
    run(input);
    0
}
