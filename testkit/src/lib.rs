//! Helpers the integration tests of several crates share, so each is written once: running a
//! collector binary as a child process ([`collector`]), posting OTLP exports to it ([`http`]),
//! finding the recorded exports of real agents ([`recordings`]), looking inside a store on disk
//! ([`store`]), reading a thread's priority from /proc ([`proc`]) and polling for a condition
//! instead of sleeping ([`wait`]).
//!
//! A dev-dependency only: nothing here is part of tripline. It depends on `schemas` (the store
//! layout) and on no crate that uses it, so any crate's tests can use it.

pub mod collector;
pub mod http;
pub mod proc;
pub mod recordings;
pub mod store;
pub mod wait;
