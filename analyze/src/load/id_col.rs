//! An id column (`trace_id`, `span_id`, `parent_span_id`) as the scan hands it over: `Binary` or
//! `BinaryView`, read in place.
//!
//! Why: the analyzer's row table declares its top-level binary columns `BinaryView`
//! ([`crate::store::clip::analysis_schema`]), as it does its text columns
//! ([`super::str_col`]): the Parquet reader then makes each id a view (an 8-byte span id inside
//! the view itself, a 16-byte trace id a pointer into the decoded page) instead of copying every
//! id into a fresh offset buffer. The ids are read by every scan, pass 1's included, on every
//! row. Casting the views back to `Binary` would copy them again, so the readers take either
//! shape as it comes; anything else binary (`LargeBinary`, `FixedSizeBinary`) is cast to
//! `Binary` once per batch.

use arrow::array::{Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use arrow::error::ArrowError;

/// A binary column of one batch.
#[derive(Debug, Clone)]
pub enum IdCol {
    Offsets(BinaryArray),
    Views(BinaryViewArray),
}

impl IdCol {
    /// `array` as bytes: `Binary` and `BinaryView` as they are, other binary shapes cast to
    /// `Binary`.
    pub fn of(array: &ArrayRef) -> Result<Self, ArrowError> {
        Ok(match array.data_type() {
            DataType::Binary => Self::Offsets(array.as_binary::<i32>().clone()),
            DataType::BinaryView => Self::Views(array.as_binary_view().clone()),
            _ => Self::Offsets(cast(array, &DataType::Binary)?.as_binary::<i32>().clone()),
        })
    }

    pub fn len(&self) -> usize {
        match self {
            Self::Offsets(a) => a.len(),
            Self::Views(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn is_null(&self, i: usize) -> bool {
        match self {
            Self::Offsets(a) => a.is_null(i),
            Self::Views(a) => a.is_null(i),
        }
    }

    /// Row `i`'s bytes (empty for a null row: check [`IdCol::is_null`] first, or use
    /// [`IdCol::get`]).
    #[inline]
    pub fn value(&self, i: usize) -> &[u8] {
        match self {
            Self::Offsets(a) => a.value(i),
            Self::Views(a) => a.value(i),
        }
    }

    /// Row `i`'s bytes, `None` when null.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        (!self.is_null(i)).then(|| self.value(i))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{FixedSizeBinaryArray, LargeBinaryArray};

    use super::*;

    #[test]
    fn every_binary_shape_reads_the_same_values() {
        let trace = [7u8; 16];
        let span = [9u8; 8];
        let values: [Option<&[u8]>; 4] = [Some(&trace), None, Some(&span), Some(&[])];
        let offsets: ArrayRef = Arc::new(BinaryArray::from(values.to_vec()));
        let views: ArrayRef = Arc::new(BinaryViewArray::from(values.to_vec()));
        let large: ArrayRef = Arc::new(LargeBinaryArray::from(values.to_vec()));
        for array in [offsets, views, large] {
            let col = IdCol::of(&array).unwrap();
            let got: Vec<Option<&[u8]>> = (0..values.len()).map(|i| col.get(i)).collect();
            assert_eq!(got, values, "{}", array.data_type());
            assert_eq!(col.len(), values.len());
        }
        let fixed: ArrayRef = Arc::new(
            FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                [Some(trace), None].into_iter(),
                16,
            )
            .unwrap(),
        );
        let col = IdCol::of(&fixed).unwrap();
        assert_eq!(col.get(0), Some(&trace[..]));
        assert_eq!(col.get(1), None);
        assert!(matches!(
            IdCol::of(&(Arc::new(BinaryViewArray::from(vec![&span[..]])) as ArrayRef)).unwrap(),
            IdCol::Views(_)
        ));
    }

    #[test]
    fn other_shapes_are_read_as_their_cast_to_bytes_or_refused() {
        // Utf8 casts to Binary (its bytes): a store written with text ids still reads.
        let text: ArrayRef = Arc::new(arrow::array::StringArray::from(vec!["ab"]));
        assert_eq!(IdCol::of(&text).unwrap().get(0), Some(&b"ab"[..]));
        // A shape Arrow cannot cast to bytes is an error for the caller to name, not a panic.
        let list: ArrayRef = Arc::new(arrow::array::ListArray::from_iter_primitive::<
            arrow::datatypes::Int32Type,
            _,
            _,
        >(vec![Some(vec![Some(1)])]));
        assert!(!arrow::compute::can_cast_types(
            list.data_type(),
            &DataType::Binary
        ));
        assert!(IdCol::of(&list).is_err());
    }
}
