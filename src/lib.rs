//! rsuring: a liburing-compatible io_uring library with a C ABI.
//!
//! Layers: [`sys`] (raw system calls and kernel types) → the core
//! ([`ring`], [`setup`], [`queue`], [`register`]) → `ffi` (the exported C
//! functions: pointer checks and the panic boundary only).

pub mod env;
pub mod queue;
pub mod register;
pub mod ring;
pub mod setup;
pub mod sqpoll;
pub mod stats;
pub mod sys;

mod ffi;

pub use ring::io_uring;
