//! Pieces every view uses: cells, colours, formats, tables, exports, the file browser, help and
//! preferences. They know nothing of documents or panels.

pub mod cells;
pub mod colors;
pub mod export_image;
pub mod file_browser;
pub mod file_dialog;
pub mod format;
pub mod help;
pub mod prefs;
pub mod table_export;
