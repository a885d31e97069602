//! A table to export, described column by column: each column reads row `i` of one rank's
//! model through a closure. The rows are turned into Arrow record batches a chunk at a time,
//! so no table is ever whole in Arrow form (a chunk of [`CHUNK_ROWS`] rows is).

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Float32Builder, Int32Builder, Int64Builder, StringBuilder,
    UInt32Builder, UInt64Builder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;

/// Rows per record batch (and Parquet row group): big enough for Parquet's encodings, small
/// enough that a batch of every table of every worker fits in a few hundred MB.
pub const CHUNK_ROWS: usize = 1 << 16;

/// How a column reads its value at a row.
pub enum Values<'a> {
    I64(Box<dyn Fn(usize) -> i64 + 'a>),
    OptI64(Box<dyn Fn(usize) -> Option<i64> + 'a>),
    I32(Box<dyn Fn(usize) -> i32 + 'a>),
    U32(Box<dyn Fn(usize) -> u32 + 'a>),
    OptU32(Box<dyn Fn(usize) -> Option<u32> + 'a>),
    U64(Box<dyn Fn(usize) -> u64 + 'a>),
    F32(Box<dyn Fn(usize) -> f32 + 'a>),
    Bool(Box<dyn Fn(usize) -> bool + 'a>),
    Str(Box<dyn Fn(usize) -> &'a str + 'a>),
    /// Text made for the export (not in the model), shared by many rows: the row's index into
    /// the list.
    Listed(Arc<Vec<String>>, Box<dyn Fn(usize) -> usize + 'a>),
}

impl Values<'_> {
    fn data_type(&self) -> (DataType, bool) {
        match self {
            Values::I64(_) => (DataType::Int64, false),
            Values::OptI64(_) => (DataType::Int64, true),
            Values::I32(_) => (DataType::Int32, false),
            Values::U32(_) => (DataType::UInt32, false),
            Values::OptU32(_) => (DataType::UInt32, true),
            Values::U64(_) => (DataType::UInt64, false),
            Values::F32(_) => (DataType::Float32, false),
            Values::Bool(_) => (DataType::Boolean, false),
            Values::Str(_) | Values::Listed(..) => (DataType::Utf8, false),
        }
    }

    fn array(&self, rows: std::ops::Range<usize>) -> ArrayRef {
        let n = rows.len();
        match self {
            Values::I64(f) => build(Int64Builder::with_capacity(n), rows, |b, i| {
                b.append_value(f(i))
            }),
            Values::OptI64(f) => build(Int64Builder::with_capacity(n), rows, |b, i| {
                b.append_option(f(i))
            }),
            Values::I32(f) => build(Int32Builder::with_capacity(n), rows, |b, i| {
                b.append_value(f(i))
            }),
            Values::U32(f) => build(UInt32Builder::with_capacity(n), rows, |b, i| {
                b.append_value(f(i))
            }),
            Values::OptU32(f) => build(UInt32Builder::with_capacity(n), rows, |b, i| {
                b.append_option(f(i))
            }),
            Values::U64(f) => build(UInt64Builder::with_capacity(n), rows, |b, i| {
                b.append_value(f(i))
            }),
            Values::F32(f) => build(Float32Builder::with_capacity(n), rows, |b, i| {
                b.append_value(f(i))
            }),
            Values::Bool(f) => build(BooleanBuilder::with_capacity(n), rows, |b, i| {
                b.append_value(f(i))
            }),
            Values::Str(f) => build(StringBuilder::with_capacity(n, n * 16), rows, |b, i| {
                b.append_value(f(i))
            }),
            Values::Listed(list, f) => {
                build(StringBuilder::with_capacity(n, n * 16), rows, |b, i| {
                    b.append_value(list.get(f(i)).map_or("", String::as_str))
                })
            }
        }
    }
}

/// Fills `builder` with rows `rows` and finishes it.
fn build<B: datafusion::arrow::array::ArrayBuilder>(
    mut builder: B,
    rows: std::ops::Range<usize>,
    mut append: impl FnMut(&mut B, usize),
) -> ArrayRef {
    for i in rows {
        append(&mut builder, i);
    }
    builder.finish()
}

/// One table of one rank, ready to be cut into batches.
pub struct TableRows<'a> {
    /// The table's folder name (`kernels`, `cuda_api`, …).
    pub name: &'static str,
    pub rows: usize,
    pub columns: Vec<(&'static str, Values<'a>)>,
}

impl TableRows<'_> {
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            (self.columns.iter())
                .map(|(name, values)| {
                    let (data_type, nullable) = values.data_type();
                    Field::new(*name, data_type, nullable)
                })
                .collect::<Vec<_>>(),
        ))
    }

    /// Rows `rows` as one record batch.
    pub fn batch(
        &self,
        schema: &SchemaRef,
        rows: std::ops::Range<usize>,
    ) -> Result<RecordBatch, ArrowError> {
        let arrays = (self.columns.iter())
            .map(|(_, values)| values.array(rows.clone()))
            .collect();
        RecordBatch::try_new(schema.clone(), arrays)
    }

    /// Every batch of the table in row order, to `sink`.
    pub fn each_batch(
        &self,
        mut sink: impl FnMut(RecordBatch) -> Result<(), String>,
    ) -> Result<(), String> {
        let schema = self.schema();
        let mut from = 0;
        while from < self.rows {
            let to = (from + CHUNK_ROWS).min(self.rows);
            sink(self.batch(&schema, from..to).map_err(|e| e.to_string())?)?;
            from = to;
        }
        Ok(())
    }
}
