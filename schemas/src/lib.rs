//! The one place that declares tripline's span schema and attribute registry.
//!
//! Everything that reads or writes spans (the collector, the analyzer, the samples) goes through
//! this crate, so a column, an attribute name or a dialect mapping is declared exactly once.
//! Dependencies inside the crate go one way: [`columns`] (the column table) depends on nothing;
//! [`schema`], [`lift`], [`registry`], [`parquet_props`] and [`dialects`] are derived from it;
//! [`convert`] uses all of them; [`decode`] and [`encode`] are leaves.
//!
//! - [`columns`]: every column with its facts (type, fill, encoding, analyzer visibility);
//! - [`schema`]: the canonical span row as an Arrow schema (column names in [`schema::col`]);
//! - [`kind_status`] and [`tool_def`]: span kind / status spellings, the tool definition struct;
//! - [`decode`]: OTLP protobuf / JSON / JSON-lines bodies into `ExportTraceServiceRequest`;
//!   [`encode`]: attribute values into their stored OTLP/JSON form;
//! - [`convert`]: requests into canonical `RecordBatch`es (validation, dialects, content, derived
//!   facts), filling the liftable columns through [`lift`];
//! - [`roundtrip`]: canonical rows back into OTLP;
//! - [`dialects`] and [`registry`]: the instrumentation dialects and the attribute registry;
//!   [`genai_registry`]: the pinned GenAI conventions registry TL007 resolves `gen_ai.*` names
//!   against; [`mcp_methods`]: the MCP methods of both protocol revisions;
//! - [`parquet_props`]: the Parquet writer settings and row-group bounds;
//! - [`logs`]: the OTLP log record table (GenAI events) stored next to spans, and the GenAI
//!   events turned back into span content attributes for the analyzer's join.

pub mod columns;
pub mod convert;
pub mod decode;
pub mod derived;
pub mod dialects;
pub mod encode;
pub mod error;
pub mod genai_registry;
pub mod kind_status;
pub mod layout;
pub mod lift;
pub mod logs;
pub mod mcp_methods;
pub mod parquet_props;
pub mod registry;
pub mod roundtrip;
pub mod schema;
pub mod tool_def;

pub use convert::{convert_request, Converted, IngestContext};
pub use decode::{decode_json, decode_json_lines, decode_protobuf};
pub use error::{DecodeError, SchemaError};
pub use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
pub use parquet_props::writer_properties;
pub use roundtrip::batch_to_request;
pub use schema::{span_schema, SCHEMA_VERSION, SCHEMA_VERSION_KEY};
