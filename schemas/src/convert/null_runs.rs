//! Column builders for sparse columns: nulls are counted and appended as one run.
//!
//! Why: most of the canonical row's columns are NULL in most spans (the lifted GenAI / MCP
//! columns a span's dialect does not set, the content columns, the derived result facts).
//! Appending those nulls one row at a time was 8% of a request's conversion (callgrind,
//! `request_path 20 1000 parquet`, session 18: `GenericByteBuilder::append_null` alone). A run
//! of nulls costs one `append_nulls` (a bulk fill of offsets and validity bits) however long
//! it is; the finished arrays are identical.

use arrow::array::{ArrayBuilder, BooleanBuilder, Int64Builder, StringBuilder};

/// The builders [`NullRuns`] wraps: those with a bulk `append_nulls`.
pub(super) trait AppendNulls: ArrayBuilder {
    /// Appends `n` nulls at once.
    fn append_n_nulls(&mut self, n: usize);
}

impl AppendNulls for StringBuilder {
    fn append_n_nulls(&mut self, n: usize) {
        self.append_nulls(n);
    }
}

impl AppendNulls for Int64Builder {
    fn append_n_nulls(&mut self, n: usize) {
        self.append_nulls(n);
    }
}

impl AppendNulls for BooleanBuilder {
    fn append_n_nulls(&mut self, n: usize) {
        self.append_nulls(n);
    }
}

/// A builder and the nulls appended to it but not yet written.
pub(super) struct NullRuns<B> {
    builder: B,
    pending: usize,
}

impl<B: AppendNulls> NullRuns<B> {
    pub(super) fn new(builder: B) -> Self {
        Self {
            builder,
            pending: 0,
        }
    }

    /// One more null row.
    pub(super) fn null(&mut self) {
        self.pending += 1;
    }

    /// The builder with every pending null written, ready for a value (or for `finish`).
    pub(super) fn flushed(&mut self) -> &mut B {
        if self.pending > 0 {
            self.builder.append_n_nulls(self.pending);
            self.pending = 0;
        }
        &mut self.builder
    }

    /// Rows appended, nulls included.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.builder.len() + self.pending
    }
}

impl NullRuns<StringBuilder> {
    pub(super) fn append_option(&mut self, v: Option<&str>) {
        match v {
            Some(v) => self.flushed().append_value(v),
            None => self.null(),
        }
    }
}

impl NullRuns<Int64Builder> {
    pub(super) fn append_option(&mut self, v: Option<i64>) {
        match v {
            Some(v) => self.flushed().append_value(v),
            None => self.null(),
        }
    }
}

impl NullRuns<BooleanBuilder> {
    pub(super) fn append_option(&mut self, v: Option<bool>) {
        match v {
            Some(v) => self.flushed().append_value(v),
            None => self.null(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Array;

    #[test]
    fn runs_build_the_same_arrays_as_row_by_row_appends() {
        let pattern = [
            None,
            None,
            Some("a"),
            None,
            Some(""),
            Some("bc"),
            None,
            None,
            None,
        ];
        let mut runs = NullRuns::new(StringBuilder::new());
        let mut rows = StringBuilder::new();
        for v in pattern {
            runs.append_option(v);
            rows.append_option(v);
        }
        assert_eq!(runs.len(), pattern.len());
        let (a, b) = (runs.flushed().finish(), rows.finish());
        assert_eq!(a, b);
        assert_eq!(a.null_count(), 6);

        let mut ints = NullRuns::new(Int64Builder::new());
        let mut bools = NullRuns::new(BooleanBuilder::new());
        for i in 0..10i64 {
            ints.append_option((i % 3 == 0).then_some(i));
            bools.append_option((i % 4 == 1).then_some(i % 2 == 0));
        }
        let ints = ints.flushed().finish();
        let bools = bools.flushed().finish();
        assert_eq!(
            ints.iter().collect::<Vec<_>>(),
            (0..10i64)
                .map(|i| (i % 3 == 0).then_some(i))
                .collect::<Vec<_>>()
        );
        assert_eq!(bools.len(), 10);
        assert_eq!(bools.null_count(), 7);
    }

    #[test]
    fn an_all_null_column_is_one_run() {
        let mut runs = NullRuns::new(StringBuilder::new());
        for _ in 0..1000 {
            runs.null();
        }
        let a = runs.flushed().finish();
        assert_eq!((a.len(), a.null_count()), (1000, 1000));
    }
}
