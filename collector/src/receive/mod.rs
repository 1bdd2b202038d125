//! The network side of the collector: everything between a client's bytes and a converted batch
//! handed to the [`crate::store::pipeline`], and the answer back.
//!
//! Checks run cheapest first, so a refused request costs little: [`auth`] and the content type
//! from the headers, then [`early_admission`] (a body-byte budget and processing slots, decided
//! before the body is read), then the body read under its cap and deadline, [`decompress`]ed
//! under the same cap, decoded and converted in [`request`], and answered in the request's own
//! encoding ([`otlp_wire`]). [`http`] and [`grpc`] are the two protocol front ends over that one
//! path; both run a request's synchronous part on the thread that read it ([`on_worker`]).

pub mod auth;
pub mod decompress;
pub mod early_admission;
pub mod grpc;
pub mod grpc_traces;
pub mod http;
pub mod on_worker;
pub mod otlp_wire;
pub mod request;
pub mod request_pool;
pub mod unread_body;
