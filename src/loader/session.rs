//! When and where the report was recorded: the session's start in UTC
//! (`TARGET_INFO_SESSION_START_TIME.utcEpochNs`) and the host's name
//! (`TARGET_INFO_SYSTEM_ENV`, `Hostname`). Several reports of one job are put on one clock by
//! the first (as nsys's multi-report view aligns them by default) and labelled by the second.
//! Both tables are optional: older reports, or reports written by other tools, lack them.

use super::builder::Builder;

pub(super) fn read_session(b: &mut Builder) -> rusqlite::Result<()> {
    let report = b.report.clone();
    if report.has_column("TARGET_INFO_SESSION_START_TIME", "utcEpochNs") {
        let start: Option<i64> = report
            .conn
            .query_row(
                "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1",
                [],
                |row| row.get::<_, Option<i64>>(0),
            )
            .unwrap_or(None);
        b.trace.info.session_start_utc_ns = start;
    }
    if report.has_column("TARGET_INFO_SYSTEM_ENV", "name")
        && report.has_column("TARGET_INFO_SYSTEM_ENV", "value")
    {
        let host: Option<String> = report
            .conn
            .query_row(
                "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' LIMIT 1",
                [],
                |row| row.get::<_, Option<String>>(0),
            )
            .unwrap_or(None);
        b.trace.info.host = host.filter(|h| !h.is_empty());
    }
    Ok(())
}
