//! A text column as the scan hands it over: `Utf8` or `Utf8View`, read in place.
//!
//! Why: the analyzer's row table declares its top-level text columns `Utf8View`
//! ([`crate::store::clip::analysis_schema`]), so the Parquet reader makes each value a view
//! into the page it decoded (or into the column chunk's dictionary) instead of copying every
//! string into a fresh offset buffer grown by reallocation: those copies were about 7% of a
//! 1M-span `check`'s instructions (callgrind, session 24). Casting the views back to `Utf8`
//! would copy them again, so the readers take either shape as it comes. Anything else that
//! casts to text (a dictionary, `LargeUtf8`) is cast to `Utf8` once per batch.

use arrow::array::{Array, ArrayRef, AsArray, StringArray, StringViewArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use arrow::error::ArrowError;

/// A text column of one batch.
#[derive(Debug, Clone)]
pub enum StrCol {
    Offsets(StringArray),
    Views(StringViewArray),
}

// The per-row accessors are `#[inline]`: the row reader calls them per row and column, and a build
// of several codegen units (bench-dev) called `value` out of line, 172M instructions at 1M spans
// (callgrind, session 55).
impl StrCol {
    /// `array` as text: `Utf8` and `Utf8View` as they are, other text shapes cast to `Utf8`.
    pub fn of(array: &ArrayRef) -> Result<Self, ArrowError> {
        Ok(match array.data_type() {
            DataType::Utf8 => Self::Offsets(array.as_string::<i32>().clone()),
            DataType::Utf8View => Self::Views(array.as_string_view().clone()),
            _ => Self::Offsets(cast(array, &DataType::Utf8)?.as_string::<i32>().clone()),
        })
    }

    /// Whether every row is null (a batch's optional columns mostly are).
    pub fn all_null(&self) -> bool {
        match self {
            Self::Offsets(a) => a.null_count() == a.len(),
            Self::Views(a) => a.null_count() == a.len(),
        }
    }

    #[inline]
    pub fn is_null(&self, i: usize) -> bool {
        match self {
            Self::Offsets(a) => a.is_null(i),
            Self::Views(a) => a.is_null(i),
        }
    }

    /// Row `i`'s text (empty for a null row: check [`StrCol::is_null`] first, or use
    /// [`StrCol::get`]).
    #[inline]
    pub fn value(&self, i: usize) -> &str {
        match self {
            Self::Offsets(a) => a.value(i),
            Self::Views(a) => a.value(i),
        }
    }

    /// Row `i`'s text, `None` when null.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&str> {
        (!self.is_null(i)).then(|| self.value(i))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::DictionaryArray;
    use arrow::datatypes::Int32Type;

    use super::*;

    #[test]
    fn every_text_shape_reads_the_same_values() {
        let values = [
            Some("tools/call"),
            None,
            Some("a value longer than twelve bytes"),
            Some(""),
        ];
        let offsets: ArrayRef = Arc::new(StringArray::from(values.to_vec()));
        let views: ArrayRef = Arc::new(StringViewArray::from(values.to_vec()));
        let dict: ArrayRef = Arc::new(values.into_iter().collect::<DictionaryArray<Int32Type>>());
        for array in [offsets, views, dict] {
            let col = StrCol::of(&array).unwrap();
            let got: Vec<Option<&str>> = (0..values.len()).map(|i| col.get(i)).collect();
            assert_eq!(got, values, "{}", array.data_type());
        }
        assert!(matches!(
            StrCol::of(&(Arc::new(StringViewArray::from(vec!["x"])) as ArrayRef)).unwrap(),
            StrCol::Views(_)
        ));
    }

    #[test]
    fn a_column_is_all_null_only_when_no_row_has_a_value() {
        let nulls: ArrayRef = Arc::new(StringViewArray::from(vec![None::<&str>, None]));
        assert!(StrCol::of(&nulls).unwrap().all_null());
        let one: ArrayRef = Arc::new(StringArray::from(vec![None, Some("x")]));
        assert!(!StrCol::of(&one).unwrap().all_null());
        let empty: ArrayRef = Arc::new(StringArray::from(Vec::<Option<&str>>::new()));
        assert!(StrCol::of(&empty).unwrap().all_null());
    }

    #[test]
    fn other_shapes_are_cast_and_bytes_that_are_not_utf8_read_as_null() {
        let ints: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![1]));
        assert_eq!(StrCol::of(&ints).unwrap().get(0), Some("1"));
        let not_utf8: ArrayRef = Arc::new(arrow::array::BinaryArray::from(vec![&[0xff_u8][..]]));
        assert_eq!(StrCol::of(&not_utf8).unwrap().get(0), None);
    }
}
