//! The one place that declares tripline's span schema and attribute registry.
//!
//! Everything that reads or writes spans (the collector, the analyzer, the samples) goes through
//! this crate, so a column, an attribute name or a dialect mapping is declared exactly once.
//!
//! - [`schema`]: the canonical span row (Arrow schema, column names);
//! - [`decode`]: OTLP protobuf / JSON / JSON-lines bodies into `ExportTraceServiceRequest`;
//! - [`convert`]: requests into canonical `RecordBatch`es (validation, dialects, content, derived
//!   facts);
//! - [`roundtrip`]: canonical rows back into OTLP;
//! - [`dialects`] and [`registry`]: the instrumentation dialects and the attribute registry;
//! - [`parquet_props`]: the Parquet writer settings.

pub mod convert;
pub mod decode;
pub mod derived;
pub mod dialects;
pub mod error;
pub mod layout;
pub mod parquet_props;
pub mod registry;
pub mod roundtrip;
pub mod schema;

pub use convert::{convert_request, Converted, IngestContext};
pub use decode::{decode_json, decode_json_lines, decode_protobuf};
pub use error::{DecodeError, SchemaError};
pub use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
pub use parquet_props::writer_properties;
pub use roundtrip::batch_to_request;
pub use schema::{span_schema, SCHEMA_VERSION, SCHEMA_VERSION_KEY};
