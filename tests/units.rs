//! One convention for sizes: binary units, labelled (KiB, MiB), everywhere
//! outside nsys's own tables (which print decimal `Bytes (MB)`): the details
//! of a copy and the findings about it say its size the same way.

mod common;
use common::load;

use std::sync::atomic::AtomicBool;

use sightline::analysis::findings::{FindingKind, Thresholds, analyze};
use sightline::app::state::events::EventRef;
use sightline::model::EventKind;

#[test]
fn findings_and_details_say_a_copys_size_the_same_way() {
    let mut checked = 0;
    for name in ["sync_timing.sqlite", "streams.sqlite", "torch_work.sqlite"] {
        let trace = load(name);
        let found = analyze(
            &trace,
            None,
            &Thresholds::default(),
            &AtomicBool::new(false),
        )
        .expect("not cancelled");
        for f in found
            .iter()
            .filter(|f| matches!(f.kind, FindingKind::SyncMemcpy | FindingKind::SyncMemset))
        {
            let Some(&op) = f
                .events
                .iter()
                .find(|e| matches!(e.kind, EventKind::Memcpy | EventKind::Memset))
            else {
                continue;
            };
            let fields = EventRef::from(op).fields(&trace);
            let size = &fields
                .iter()
                .find(|(k, _)| *k == "Size")
                .expect("a copy's details give its size")
                .1;
            assert!(
                size.ends_with(" B") || size.contains("iB"),
                "binary units, labelled: {size}"
            );
            assert!(
                f.message.contains(size.as_str()),
                "{name}: the finding says {:?}, the details {size}",
                f.message
            );
            assert!(!f.message.contains(" MB"), "{}", f.message);
            checked += 1;
        }
    }
    assert!(checked > 0, "some sync copy or set findings were checked");
}
