//! The CPU side of a copied report: native samples (`COMPOSITE_EVENTS` +
//! `SAMPLING_CALLCHAINS`), scheduling (`SCHED_EVENTS`) and Python samples
//! (NVTX marks of the Python sampling domain with nsys 2025.3's JSON
//! payload), written from the trace's [`crate::model::CpuSampling`] in every
//! copy, so that a scaled report has N times the samples of its source.
//!
//! The Python samples are written from the model, not copied as the NVTX
//! marks they were read from: their payloads name functions and files by
//! the source report's `StringIds` ids, and the copy's string table is the
//! trace's own (other ids).

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::rows;
use super::warp::TimeWarp;
use crate::model::nsys::event_type::NVTX_MARK;
use crate::model::samples::PYTHON_SAMPLING_DOMAIN;
use crate::model::{
    Ns, SampleSource, SampleStack, SampleState, SchedState, StackTree, ThreadSamples, Trace,
};

/// (process, domain name) → the domain id written (see `write_nvtx`).
pub(super) type Domains<'t> = HashMap<(u32, &'t str), i64>;

/// Counts a row written; stops the write where asked to.
pub(super) type Tick<'a, E> = &'a mut dyn FnMut() -> Result<(), E>;

/// What the CPU side's rows need of the writer: the trace, where its times
/// land, and each copy's time shift.
pub(super) struct CpuWriter<'t> {
    pub trace: &'t Trace,
    pub warp: &'t TimeWarp,
    pub shifts: Vec<Ns>,
}

impl<'t> CpuWriter<'t> {
    /// Rows written per copy for the native samples, their frames and the
    /// switches.
    pub(super) fn sampling_rows_per_copy(&self) -> u64 {
        let cpu = &self.trace.cpu;
        let native = || (cpu.threads.iter()).filter(|s| s.source == SampleSource::Native);
        let samples: usize = native().map(ThreadSamples::len).sum();
        let frames: usize = (native().flat_map(|s| s.stacks.iter()))
            .map(|st| cpu.stacks.frames(st.stack()).count())
            .sum();
        let switches: usize = cpu.sched.iter().map(|s| s.at.len()).sum();
        // (The Python samples are NVTX marks: counted with the NVTX rows.)
        (samples + frames + switches) as u64
    }

    /// Whether `domain` is where the trace's Python samples are (its marks
    /// are written from the samples, by [`Self::write_python_samples`]).
    pub(super) fn is_python_sampling(&self, domain: &str) -> bool {
        domain == PYTHON_SAMPLING_DOMAIN
            && (self.trace.cpu.threads.iter()).any(|s| s.source == SampleSource::Python)
    }

    /// The native samples and their call chains, every copy.
    pub(super) fn write_native_samples<E: From<rusqlite::Error>>(
        &self,
        conn: &Connection,
        tick: Tick<E>,
    ) -> Result<(), E> {
        let cpu = &self.trace.cpu;
        let mut sample = conn.prepare_cached(
            "INSERT INTO COMPOSITE_EVENTS (id, start, globalTid, cpuCycles) VALUES (?1, ?2, ?3, 0)",
        )?;
        let mut frame = conn.prepare_cached(
            "INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, unresolved, stackDepth)
             VALUES (?1, ?2, ?3, 0, ?4)",
        )?;
        let mut id = 0i64;
        for &dt in &self.shifts {
            for samples in cpu.threads.iter() {
                if samples.source != SampleSource::Native {
                    continue;
                }
                let global_tid = self.global_tid(samples.thread);
                for (&at, stack) in samples.times.iter().zip(samples.stacks.iter()) {
                    id += 1;
                    sample.execute(params![id, self.warp.at(at) + dt, global_tid])?;
                    tick()?;
                    // Innermost first: depth 0 is the sampled function. An
                    // unresolved frame was named after its module when
                    // read: written so, it reads back as the same frame.
                    for (depth, f) in cpu.stacks.frames(stack.stack()).enumerate() {
                        let Some(f) = cpu.frame(f) else { continue };
                        frame.execute(params![id, f.function.0, f.location.0, depth as i64])?;
                        tick()?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Every thread's scheduling switches, every copy.
    pub(super) fn write_sched<E: From<rusqlite::Error>>(
        &self,
        conn: &Connection,
        tick: Tick<E>,
    ) -> Result<(), E> {
        let mut switch = conn.prepare_cached(
            "INSERT INTO SCHED_EVENTS (start, cpu, isSchedIn, globalTid, threadState)
             VALUES (?1, 0, ?2, ?3, ?4)",
        )?;
        for &dt in &self.shifts {
            for sched in &self.trace.cpu.sched {
                let global_tid = self.global_tid(sched.thread);
                for (&at, &state) in sched.at.iter().zip(&sched.state) {
                    // `ENUM_SAMPLING_THREAD_STATE` ids, as the loader reads them.
                    let (sched_in, thread_state) = match state {
                        SchedState::Running => (1, None),
                        SchedState::Preempted => (0, Some(1)),
                        SchedState::Sleeping => (0, Some(2)),
                        SchedState::Uninterruptible => (0, Some(3)),
                        SchedState::OffCpu => (0, None),
                    };
                    switch.execute(params![
                        self.warp.at(at) + dt,
                        sched_in,
                        global_tid,
                        thread_state
                    ])?;
                    tick()?;
                }
            }
        }
        Ok(())
    }

    /// The Python samples as the marks nsys writes, every copy, in the
    /// sampling domain of their process (created where the NVTX tracks did
    /// not already).
    pub(super) fn write_python_samples<E: From<rusqlite::Error>>(
        &self,
        conn: &Connection,
        tick: Tick<E>,
        domains: &mut Domains<'t>,
    ) -> Result<(), E> {
        let t = self.trace;
        let python = || (t.cpu.threads.iter()).filter(|s| s.source == SampleSource::Python);
        for samples in python() {
            let Some(thread) = t.threads.get(samples.thread as usize) else {
                continue;
            };
            if !domains.contains_key(&(thread.pid, PYTHON_SAMPLING_DOMAIN)) {
                let next = 1 + domains.keys().filter(|(pid, _)| *pid == thread.pid).count();
                domains.insert((thread.pid, PYTHON_SAMPLING_DOMAIN), next as i64);
                rows::nvtx_domain(
                    conn,
                    t.info.time_range.0,
                    thread.global_tid,
                    next as i64,
                    PYTHON_SAMPLING_DOMAIN,
                )?;
            }
        }
        // A sampler's payloads repeat (a loop's stacks): each made once.
        let mut payloads: HashMap<SampleStack, String> = HashMap::new();
        for &dt in &self.shifts {
            for samples in python() {
                let Some(thread) = t.threads.get(samples.thread as usize) else {
                    continue;
                };
                let domain = domains
                    .get(&(thread.pid, PYTHON_SAMPLING_DOMAIN))
                    .copied()
                    .unwrap_or(0);
                self.write_python_marks(
                    conn,
                    tick,
                    samples,
                    (thread.global_tid, domain),
                    dt,
                    &mut payloads,
                )?;
            }
        }
        Ok(())
    }

    fn write_python_marks<E: From<rusqlite::Error>>(
        &self,
        conn: &Connection,
        tick: Tick<E>,
        samples: &ThreadSamples,
        (global_tid, domain): (i64, i64),
        dt: Ns,
        payloads: &mut HashMap<SampleStack, String>,
    ) -> Result<(), E> {
        for (&at, stack) in samples.times.iter().zip(samples.stacks.iter()) {
            let json = payloads
                .entry(stack)
                .or_insert_with(|| self.python_payload(stack));
            // A sample read without a payload is written without one.
            let payload = rows::PayloadCells {
                json: (!json.is_empty()).then_some(json.as_str()),
                ..Default::default()
            };
            rows::nvtx(
                conn,
                &rows::NvtxRow {
                    start: self.warp.at(at) + dt,
                    end: None,
                    event_type: NVTX_MARK,
                    category: 0,
                    color: 0,
                    global_tid,
                    end_global_tid: None,
                    text_id: 0,
                    domain_id: domain,
                    payload,
                },
            )?;
            tick()?;
        }
        Ok(())
    }

    /// nsys 2025.3's payload of a Python sample (names as `StringIds` ids);
    /// empty for a sample without frames nor state (read without a payload).
    fn python_payload(&self, stack: SampleStack) -> String {
        let cpu = &self.trace.cpu;
        let state = match stack.state() {
            SampleState::Running => Some((1, "Running")),
            SampleState::Waiting => Some((2, "Blocking Wait")),
            SampleState::Uninterruptible => Some((3, "Uninterruptible")),
            SampleState::Unknown => None,
        };
        if state.is_none() && stack.stack() == StackTree::ROOT {
            return String::new();
        }
        let frames: Vec<String> = (cpu.stacks.frames(stack.stack()))
            .filter_map(|f| cpu.frame(f))
            .map(|f| {
                format!(
                    r#"{{"Function":{},"File":{},"Line":{}}}"#,
                    f.function.0, f.location.0, f.line
                )
            })
            .collect();
        let state = state
            .map(|(id, label)| format!(r#""Thread state ID":{id},"Thread state":"{label}","#))
            .unwrap_or_default();
        format!(
            r#"{{"{PYTHON_SAMPLING_DOMAIN}":{{{state}"Frames count":{},"Frames":[{}]}}}}"#,
            frames.len(),
            frames.join(",")
        )
    }

    fn global_tid(&self, thread: u32) -> i64 {
        (self.trace.threads.get(thread as usize)).map_or(0, |t| t.global_tid)
    }
}
