//! Writes reports in the nsys SQLite schema. SCAFFOLD: replaced by the writer.
