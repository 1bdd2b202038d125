//! The OTLP receiver and Parquet span store writer.

pub mod cli;
