//! The parts of a clipped footer that depend only on the file's schema, worked out once per
//! schema.
//!
//! Why: every file a row scan opens has its footer clipped ([`super::clip::clip_metadata`]), and
//! two parts of that work depend on the schema alone: the narrowed schema descriptor with the
//! leaves it keeps, and the Arrow schema of the key/value metadata (decoded from its IPC
//! flatbuffer, narrowed, encoded again). The files of a store share one schema per schema
//! version, yet `check` over 10M spans opens about 2,300 files (each window the files of its
//! hours) and spent 1.7% of its CPU re-encoding that one Arrow schema (BENCHMARKS.md, session
//! 46). A few schemas are remembered (the last [`MAX_SCHEMAS`]), each keyed by the file's
//! Parquet schema, Arrow schema and empty columns together, so a file of another shape is
//! clipped afresh.

use std::sync::{Arc, Mutex};

use datafusion::parquet::errors::Result as ParquetResult;
use datafusion::parquet::schema::types::{SchemaDescriptor, TypePtr};

/// What clipping makes of one file schema.
#[derive(Debug)]
pub(super) struct ClippedSchema {
    /// The narrowed schema.
    pub descr: Arc<SchemaDescriptor>,
    /// The indexes of the surviving leaves in the file's own schema, in order.
    pub kept: Vec<usize>,
    /// The narrowed Arrow schema for the key/value metadata (when the file carries one).
    pub arrow: Option<String>,
}

/// At most this many file schemas are remembered; the oldest goes first. An entry is one schema
/// with one set of empty columns left out ([`super::clip::empty_columns`]), and files of one
/// schema can differ in which columns they leave empty (a collector's files of one service and
/// of another), so room is left for many sets. An entry holds two encoded Arrow schemas (12 KB
/// each for the span schema) and two schema trees (173 nodes), so 64 stay within a few MB.
const MAX_SCHEMAS: usize = 64;

/// A file schema (its Parquet root and its Arrow schema as stored) and what clipping made of
/// it (`None`: nothing to clip).
struct Entry {
    root: TypePtr,
    arrow: Option<String>,
    /// The leaves left out as empty ([`super::clip::empty_columns`]).
    empty: Vec<usize>,
    clipped: Option<Arc<ClippedSchema>>,
}

/// The remembered schemas (one per process: [`SCHEMAS`]).
pub(super) struct SchemaMemo(Mutex<Vec<Entry>>);

/// The schemas every row scan of this process shares.
pub(super) static SCHEMAS: SchemaMemo = SchemaMemo::new();

impl SchemaMemo {
    const fn new() -> Self {
        Self(Mutex::new(Vec::new()))
    }

    /// The clipped schema of a file whose schema is `root` with the stored Arrow schema
    /// `arrow` and the leaves `empty` left out: `work`'s answer, computed on the first file of
    /// that schema and those empty leaves and remembered (an error is returned, not
    /// remembered).
    pub(super) fn clipped_schema(
        &self,
        root: &TypePtr,
        arrow: Option<&str>,
        empty: &[usize],
        work: impl FnOnce() -> ParquetResult<Option<ClippedSchema>>,
    ) -> ParquetResult<Option<Arc<ClippedSchema>>> {
        let same = |e: &Entry| {
            e.arrow.as_deref() == arrow
                && e.empty == empty
                && (Arc::ptr_eq(&e.root, root) || *e.root == **root)
        };
        // A poisoned lock only means another thread panicked while holding it: the entries
        // are complete values either way.
        let lock = || self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = lock().iter().find(|e| same(e)) {
            return Ok(e.clipped.clone());
        }
        let clipped = work()?.map(Arc::new);
        let mut memo = lock();
        if !memo.iter().any(same) {
            if memo.len() >= MAX_SCHEMAS {
                memo.remove(0);
            }
            memo.push(Entry {
                root: Arc::clone(root),
                arrow: arrow.map(str::to_string),
                empty: empty.to_vec(),
                clipped: clipped.clone(),
            });
        }
        Ok(clipped)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use datafusion::parquet::basic::Type as Physical;
    use datafusion::parquet::schema::types::Type;

    use super::*;

    /// A one-column schema whose column is named `name` (a distinct schema per name).
    fn root(name: &str) -> TypePtr {
        let leaf = Type::primitive_type_builder(name, Physical::INT64)
            .build()
            .unwrap();
        Arc::new(
            Type::group_type_builder("schema")
                .with_fields(vec![Arc::new(leaf)])
                .build()
                .unwrap(),
        )
    }

    fn clipped(root: &TypePtr) -> ClippedSchema {
        ClippedSchema {
            descr: Arc::new(SchemaDescriptor::new(Arc::clone(root))),
            kept: vec![0],
            arrow: Some("narrowed".into()),
        }
    }

    #[test]
    fn one_schema_is_clipped_once_and_another_schema_or_arrow_schema_afresh() {
        let memo = SchemaMemo::new();
        let runs = Cell::new(0);
        let work = |r: &TypePtr| {
            runs.set(runs.get() + 1);
            Ok(Some(clipped(r)))
        };
        let a = root("memo_test_a");
        let first = memo
            .clipped_schema(&a, Some("arrow a"), &[], || work(&a))
            .unwrap();
        // The same schema in another file's footer: an equal tree, not the same pointer.
        let again = root("memo_test_a");
        let second = memo
            .clipped_schema(&again, Some("arrow a"), &[], || work(&again))
            .unwrap();
        assert_eq!(runs.get(), 1);
        assert!(Arc::ptr_eq(
            first.as_ref().unwrap(),
            second.as_ref().unwrap()
        ));
        // Another Arrow schema, or another Parquet schema, is worked out.
        memo.clipped_schema(&a, Some("arrow b"), &[], || work(&a))
            .unwrap();
        let b = root("memo_test_b");
        memo.clipped_schema(&b, Some("arrow a"), &[], || work(&b))
            .unwrap();
        assert_eq!(runs.get(), 3);
        // The same schema with other columns left out as empty is worked out too.
        memo.clipped_schema(&a, Some("arrow a"), &[0], || work(&a))
            .unwrap();
        assert_eq!(runs.get(), 4);
        // "Nothing to clip" is remembered too.
        let plain = root("memo_test_plain");
        for _ in 0..2 {
            let got = memo.clipped_schema(&plain, None, &[], || {
                runs.set(runs.get() + 1);
                Ok(None)
            });
            assert!(got.unwrap().is_none());
        }
        assert_eq!(runs.get(), 5);
    }

    #[test]
    fn at_most_max_schemas_are_remembered() {
        let memo = SchemaMemo::new();
        for i in 0..MAX_SCHEMAS + 5 {
            let r = root(&format!("memo_bound_{i}"));
            memo.clipped_schema(&r, None, &[], || Ok(Some(clipped(&r))))
                .unwrap();
            assert!(memo.len() <= MAX_SCHEMAS);
        }
    }

    #[test]
    fn an_error_is_returned_and_not_remembered() {
        let memo = SchemaMemo::new();
        let r = root("memo_test_error");
        let err = memo.clipped_schema(&r, None, &[], || {
            Err(datafusion::parquet::errors::ParquetError::General(
                "broken".into(),
            ))
        });
        assert!(err.is_err());
        let ok = memo
            .clipped_schema(&r, None, &[], || Ok(Some(clipped(&r))))
            .unwrap();
        assert!(ok.is_some());
    }
}
