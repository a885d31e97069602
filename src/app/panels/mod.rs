//! The panels around the timeline: each draws itself from what the document gives it and returns
//! the commands a click asked for; none names the document or the window.

pub mod annotations_panel;
pub mod capture_panel;
pub mod compare_view;
pub mod cpu_profile_panel;
pub mod details;
pub mod findings_panel;
pub mod job_ranges;
pub mod job_rank_loads;
pub mod job_summary_ranks;
pub mod job_view;
pub mod kernel_chart_labels;
pub mod kernel_metrics;
pub mod kernel_metrics_section;
pub mod kernel_panel;
pub mod lesson_panel;
pub(crate) mod notes_saver;
pub mod nvtx_gpu;
pub mod range_stats;
pub mod roofline;
pub mod search;
pub mod speed_of_light;
pub mod warnings;
