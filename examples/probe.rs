use std::sync::atomic::AtomicBool;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let t0 = std::time::Instant::now();
    let cancel = AtomicBool::new(false);
    let (t, times) = sightline::loader::load_timed(path.as_ref(), &mut |_| {}, &cancel).unwrap();
    println!("{:?} events={} bytes={} bpe={:.1}", t0.elapsed(), t.event_count(), t.heap_bytes(), t.heap_bytes() as f64 / t.event_count() as f64);
    println!("{:?}", times);
    println!("threads={} streams={} gpus={} procs={}", t.threads.len(), t.streams.len(), t.gpus.len(), t.processes.len());
    for th in &t.threads { println!("  thread {} {} {:?} api={} osrt={} nvtx={:?}", th.tid, th.name, th.pid, th.cuda_api.len(), th.osrt.len(), th.nvtx.iter().map(|n| (n.domain.clone(), n.track.len(), n.track.depth)).collect::<Vec<_>>()); }
    for s in &t.streams { println!("  stream dev{} ctx{} s{} k={} cp={} ms={} sy={} g={}", s.device_id, s.context_id, s.stream_id, s.kernels.len(), s.memcpys.len(), s.memsets.len(), s.syncs.len(), s.graphs.len()); }
    for w in &t.warnings { println!("  warn: {w}"); }
    println!("metrics={}", t.metrics.len());
}
