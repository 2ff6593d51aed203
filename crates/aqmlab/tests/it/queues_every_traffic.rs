//! Today's queues with every traffic model (the L4S issue's "runs with every traffic model";
//! CAKE's own run, with its tin counts, is in `cake.rs`): DualPI2, FQ-PIE with ECN, and
//! FQ-CoDel with the L4S CE threshold, each through the whole mix of `every_traffic_model`.

use crate::common::*;

#[test]
fn dualpi2_fq_pie_and_ce_threshold_carry_every_traffic_model() {
    for queue in [
        serde_json::json!({"kind": "dualpi2"}),
        serde_json::json!({"kind": "dualpi2", "drop_enqueue": true, "limit": 200}),
        serde_json::json!({"kind": "fq_pie", "ecn": true}),
        serde_json::json!({"kind": "fq_codel", "ce_threshold_ms": 1.0,
            "ce_threshold_selector": 1, "ce_threshold_mask": 1}),
    ] {
        every_traffic_model(queue);
    }
}
