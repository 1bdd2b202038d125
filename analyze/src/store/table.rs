//! The table a snapshot registers for DataFusion: its name and its Hive partition columns with
//! their types. Declared here, beside the snapshot that registers the table, so the store needs
//! nothing from the scan that reads it (`load` re-exports these for its callers).

use arrow::datatypes::DataType;

/// Name of the table registered for SQL (`tripline query`).
pub const TABLE: &str = "spans";
/// Hive partition columns of the store (types: [`partition_type`]).
pub const PARTITION_COLUMNS: [&str; 2] = ["date", "hour"];

/// The type of a partition column as the analyzer's table declares it: `date` text
/// (`YYYY-MM-DD`), `hour` an integer, so `ORDER BY hour` sorts 9 before 10.
pub fn partition_type(name: &str) -> DataType {
    match name {
        "hour" => DataType::Int32,
        _ => DataType::Utf8,
    }
}
