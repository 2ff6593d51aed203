//! Defaults shared by the queue kinds' configurations (serde's `default = "…"` needs a
//! function): the values several kinds take from Linux's `*_params_init` and tc.

/// Packets: Linux's default limit of sch_codel, sch_pie and others.
pub(super) fn d_1000() -> u32 {
    1000
}

/// Bytes: the IP MTU of an Ethernet link.
pub(super) fn d_1500_u32() -> u32 {
    1500
}

/// ms: PIE's target and update period (`pie_params_init`).
pub(super) fn d_15() -> f64 {
    15.0
}

/// PIE's α in 1/16 s⁻¹ (`pie_params_init`).
pub(super) fn d_2_u32() -> u32 {
    2
}

/// PIE's β in 1/16 s⁻¹ (`pie_params_init`).
pub(super) fn d_20_u32() -> u32 {
    20
}
