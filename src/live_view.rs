//! The public Rust API: reading the rings of a running process, as
//! `rsuring-stat` does. Everything here only reads files (`/dev/shm`
//! statistics pages, mapped read-only, and `/proc`), so it is safe to call
//! from any program; the ring core itself is private to the crate, whose
//! product is the C ABI.

pub use crate::stats::format::{self, parse_line, End, Fields, Value};
pub use crate::stats::live::{self, Page, Poller, Ring, RingRates, Snapshot};
pub use crate::stats::procfs::{FdInfo, TaskStat};
pub use crate::stats::slot::{Counters, RingInfo, Sqpoll};
