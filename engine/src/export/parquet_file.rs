//! One Parquet file of the export: the writer's settings, and a table written as one file.

use std::path::Path;

use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::properties::WriterProperties;

use super::columns::{CHUNK_ROWS, TableRows};

/// The writer settings of every file: zstd (small and quick to read back), statistics on.
pub fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(CHUNK_ROWS * 4))
        .build()
}

/// One table of one rank as one Parquet file (empty tables too: a file with the schema).
pub fn write_table(table: &TableRows, path: &Path) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(|e| fail(&e))?;
    let mut writer = ArrowWriter::try_new(
        std::io::BufWriter::with_capacity(1 << 20, file),
        table.schema(),
        Some(writer_properties()),
    )
    .map_err(|e| fail(&e))?;
    table.each_batch(|batch| writer.write(&batch).map_err(|e| fail(&e)))?;
    writer.close().map_err(|e| fail(&e))?;
    Ok(())
}
