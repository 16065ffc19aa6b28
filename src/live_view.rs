//! The public Rust API: reading the rings of a running process, as
//! `rsuring-stat` does. Everything here only reads files (`/dev/shm`
//! statistics pages, checked and copied with `pread`, never mapped, and
//! `/proc`), so it is safe to call from any program, as root too, whatever
//! other users left in /dev/shm; the ring core itself is private to the crate, whose
//! product is the C ABI.

pub use crate::procfs::{FdInfo, TaskStat};
pub use crate::stats::format::{self, parse_line, End, Fields, Value};
pub use crate::stats::live::{self, Page, Poller, Ring, RingRates, Snapshot};
pub use crate::stats::metrics;
pub use crate::stats::slot::{Counters, RingInfo, Sqpoll};
