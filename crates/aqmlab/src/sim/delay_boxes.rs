//! Where a connection's extra RTT is added (`[delay_box] placement`, docs/network.md), and
//! ns-2's DelayBox geometry (`placement = "boxes"`).
//!
//! ns-2.35's DelayBox (delaybox/delaybox.cc) is a node between an end's access link and the
//! bottleneck. It delays every packet of a flow, in both directions, by the flow's one-way
//! delay drawn for that box: with a box on each side (tcl/ex/packmime/pm-delaybox.tcl), a
//! packet gets its sender's box delay before the bottleneck and its receiver's box delay
//! after it. The round-trip total is the same as `split` (each end's packets delayed by half
//! the RTT as they leave it), but the two queues of a two-way bottleneck see the flow at
//! other times: a data packet leaving the forward queue meets its ACK at the reverse queue
//! twice the receiver's box delay later, not the mean of the two boxes' delays.
//!
//! With `boxes`, a packet carries its sender's box delay in `flow_delay` over the sender's
//! access link; the link hands it the receiver's box delay (`far_delay` of its connection),
//! which the receiver's access link then adds.

use super::Simulation;
use crate::config::DelayPlacement;
use crate::packet::{PktId, Proto};
use crate::units::Time;

/// A connection's extra round-trip time and the client-side box's part of it (the rest is the
/// server side's). Only `boxes` reads the parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtraRtt {
    pub total: Time,
    pub client: Time,
}

impl ExtraRtt {
    /// An RTT with no known parts: half on each side.
    pub fn even(total: Time) -> Self {
        ExtraRtt {
            total,
            client: total / 2,
        }
    }

    /// An RTT whose client-side box has `share` of it.
    pub fn shared(total: Time, share: f64) -> Self {
        ExtraRtt {
            total,
            client: ((total as f64 * share).round() as Time).min(total),
        }
    }

    /// The delays of the packets the client (0) and the server (1) send: as they leave the
    /// sender (`own`, on the sender's access link) and before they reach the receiver (`far`).
    pub fn delays(self, placement: DelayPlacement) -> ([Time; 2], [Time; 2]) {
        let d = self.total;
        match placement {
            DelayPlacement::Split | DelayPlacement::Inbound => ([d / 2, d / 2], [0, 0]),
            DelayPlacement::ClientOutbound => ([d, 0], [0, 0]),
            DelayPlacement::ClientInbound => ([0, d], [0, 0]),
            DelayPlacement::Boxes => {
                // One-way box delays: half of each side's part of the RTT.
                let client = self.client.min(d) / 2;
                let server = (d - self.client.min(d)) / 2;
                ([client, server], [server, client])
            },
        }
    }
}

impl Simulation {
    /// A packet leaves its sender's access link with `boxes`: from here it carries the
    /// receiver's box delay. UDP flows keep their one-way delay on the sender's side.
    pub(super) fn hand_over_far_box(&mut self, id: PktId) {
        let p = self.pkts.get(id);
        let far = match p.proto {
            Proto::Tcp => self.conns[p.conn as usize].far_delay[!p.to_server as usize],
            _ => 0,
        };
        self.pkts.get_mut(id).flow_delay = far;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_delay_each_packet_by_both_boxes_one_way() {
        // Client box 30 ms of RTT, server box 10 ms: one-way 15 and 5 ms.
        let e = ExtraRtt {
            total: 40_000_000,
            client: 30_000_000,
        };
        let (own, far) = e.delays(DelayPlacement::Boxes);
        assert_eq!(own, [15_000_000, 5_000_000]);
        assert_eq!(far, [5_000_000, 15_000_000]);
        // Every placement adds the whole RTT over a round trip.
        for pl in [
            DelayPlacement::Split,
            DelayPlacement::Inbound,
            DelayPlacement::ClientOutbound,
            DelayPlacement::ClientInbound,
            DelayPlacement::Boxes,
        ] {
            let (own, far) = e.delays(pl);
            assert_eq!(own.iter().chain(&far).sum::<Time>(), 40_000_000, "{pl:?}");
        }
        assert_eq!(ExtraRtt::even(41).client, 20);
        assert_eq!(
            ExtraRtt::shared(41, 1.0).delays(DelayPlacement::Boxes),
            ([20, 0], [0, 20])
        );
        assert_eq!(ExtraRtt::shared(40, 0.5), ExtraRtt::even(40));
    }
}
