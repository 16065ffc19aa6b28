//! rsuring: a liburing-compatible io_uring library with a C ABI.
//!
//! Layers, each module importing only from the layers before it (never
//! from its own, never from later ones):
//!
//! 1. [`sys`] — raw system calls and kernel types.
//! 2. [`ring`], [`lock`], [`env`] — the layout of `struct io_uring` and the
//!    only accessors of its kernel-shared words ([`ring::LiveRing`]); a
//!    fork-safe lock; the `RSURING_*` environment.
//! 3. [`setup`], [`register`], [`stats`] — mapping and unmapping rings
//!    (no policy); io_uring_register(2) wrappers; per-ring statistics.
//! 4. [`ring_fd`], [`sqpoll`], [`transparent`] — registered ring fds;
//!    the per-CPU poller registry; transparent SQPOLL.
//! 5. [`queue`], [`lifecycle`] — the hot paths (SQEs, submit, wait, reap);
//!    init/exit orchestration (policy, then mapping, then registration,
//!    then statistics).
//! 6. `ffi` — the exported C functions.
//!
//! Ring methods live in [`ring`] ([`ring::io_uring`]: geometry;
//! [`ring::LiveRing`]: the ring words) and [`queue`] (the hot paths, on
//! `LiveRing`); every other module offers free functions taking the ring,
//! so each use of a module shows as an import. Submodules (`stats::*`,
//! `ffi::*`) belong to their parent's layer and only have to be acyclic
//! among themselves.
//!
//! A [`ring::LiveRing`] can only be made by the FFI layer's checks (and by
//! [`lifecycle`] right after the mapper succeeded).

pub mod env;
pub mod lifecycle;
pub mod lock;
pub mod queue;
pub mod register;
pub mod ring;
pub mod ring_fd;
pub mod setup;
pub mod sqpoll;
pub mod stats;
pub mod sys;
pub mod transparent;

mod ffi;

pub use ring::io_uring;
