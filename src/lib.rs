//! rsuring: a liburing-compatible io_uring library with a C ABI.
//!
//! Layers, each module importing only from the layers before it (never
//! from its own, never from later ones). This list is the one statement of
//! the layering: tests/layering.rs reads it from this file (each `N.` line's
//! names before the dash, so they stay on that line), reads every path of
//! src/, and fails on a cycle or on an import against this order;
//! docs/design.md points here.
//!
//! 1. [`uapi`], [`version`] — the kernel's ABI (system call numbers,
//!    io_uring's constants and structs, checked against the C headers);
//!    the API version.
//! 2. [`sys`], [`fork`] — raw system calls and the process's credentials,
//!    capabilities and CPU affinity; the one set of fork() handlers, which
//!    calls each subsystem's in the documented lock order.
//! 3. [`ring`], [`lock`], [`env`], [`procfs`] — the layout of `struct
//!    io_uring` and the only accessors of its kernel-shared words
//!    ([`ring::LiveRing`]); a fork-safe lock; the `RSURING_*` environment;
//!    what /proc says about io_uring fds and threads.
//! 4. [`setup`], [`register`], [`stats`] — mapping and unmapping rings
//!    (no policy); io_uring_register(2), one function per operation;
//!    per-ring statistics.
//! 5. [`ring_fd`], [`sqpoll`], [`transparent`] — registered ring fds;
//!    the per-CPU poller registry; transparent SQPOLL.
//! 6. [`queue`], [`lifecycle`] — the hot paths (SQEs, submit, wait, reap);
//!    init/exit orchestration (policy, then mapping, then registration,
//!    then statistics).
//! 7. `ffi`, [`live_view`] — the exported C functions (pointer checks and
//!    the panic boundary only); the public Rust API.
//!
//! Ring methods live in [`ring`] ([`ring::io_uring`]: geometry;
//! [`ring::LiveRing`]: the ring words) and [`queue`] (the hot paths, on
//! `LiveRing`); every other module offers free functions taking the ring,
//! so each use of a module shows as an import. Submodules (`stats::*`,
//! `register::*`, `ffi::*`) belong to their parent's layer and only have
//! to be acyclic among themselves.
//!
//! Only [`live_view`] is public: the core is `pub(crate)`, and a
//! [`ring::LiveRing`] can only be made by the FFI layer's checks (and by
//! [`lifecycle`] right after the mapper succeeded).

pub(crate) mod env;
pub(crate) mod fork;
pub(crate) mod lifecycle;
pub mod live_view;
pub(crate) mod lock;
pub(crate) mod procfs;
pub(crate) mod queue;
pub(crate) mod register;
pub(crate) mod ring;
pub(crate) mod ring_fd;
pub(crate) mod setup;
pub(crate) mod sqpoll;
pub(crate) mod stats;
pub(crate) mod sys;
pub(crate) mod transparent;
// The kernel ABI mirror keeps every constant of the uapi header, used or not.
#[allow(dead_code)]
pub(crate) mod uapi;
pub(crate) mod version;

mod ffi;
