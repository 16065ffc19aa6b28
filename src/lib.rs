//! rsuring: a liburing-compatible io_uring library with a C ABI.
//!
//! Layers, each importing only from those before it: [`sys`] (raw system
//! calls and kernel types) → [`ring`] (the layout of `struct io_uring`) and
//! [`lock`] → [`setup`] (mapping) and [`stats`] → [`register`],
//! [`ring_fd`], [`transparent`], [`sqpoll`] → [`queue`] (the hot paths) and
//! [`lifecycle`] (init/exit orchestration) → `ffi` (the exported C
//! functions: pointer checks and the panic boundary only).

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
