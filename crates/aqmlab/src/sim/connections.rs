//! A TCP connection's life: opened (paths, delay-box delays, timer phases, a slot), driven
//! by the segments delivered to it, its application's actions and wake-ups, its segments put
//! on the wire, and retired (booked, slot freed) when both ends are done.

use super::app::App;
use super::app_action::AppAction;
use super::delay_boxes::ExtraRtt;
use super::events::{Ev, MAX_SLOTS};
use super::flow_losses;
use super::realtime;
use super::{Conn, Simulation};
use crate::packet::{Packet, Proto};
use crate::rng::{Rng, StreamKind};
use crate::units::Time;

impl Simulation {
    /// The delay-box RTT of flow `identity` of `source` between two hosts, from the flow's own
    /// stream.
    pub(super) fn sample_rtt(
        &self,
        source: u32,
        identity: u64,
        client_host: u32,
        server_host: u32,
    ) -> Time {
        let mut rng = Rng::substream(self.sc.seed, StreamKind::DelayBox, source as u64, identity);
        let side_index = |h: u32| self.topo.side_index(h);
        self.rtts[source as usize].sample(
            &mut rng,
            side_index(client_host),
            side_index(server_host),
        )
    }

    /// The delay-box delays of the packets a connection's client and server send (all of
    /// them: as they leave and as they arrive), for a connection whose extra round-trip time
    /// is `extra` with no known parts (`[delay_box] placement`).
    pub(super) fn one_way_delays(&self, extra: Time) -> [Time; 2] {
        let (own, far) = ExtraRtt::even(extra).delays(self.sc.delay_box.placement);
        [own[0] + far[0], own[1] + far[1]]
    }

    /// Opens a connection from `client_host` to `server_host`. Its delay-box RTT (unless the
    /// source chose one) and timer phase come from streams of the connection's identity
    /// `(source, identity)`, so they do not depend on the order in which connections happen
    /// to open (common random numbers).
    pub(super) fn open(
        &mut self,
        source: u32,
        identity: u64,
        client_host: u32,
        server_host: u32,
        app: App,
        user: Option<u32>,
        extra_rtt: Option<ExtraRtt>,
        primary: bool,
    ) {
        let now = self.sched.now();
        let seed = self.sc.seed;
        let extra = match extra_rtt {
            Some(e) => e,
            None => ExtraRtt::shared(
                self.sample_rtt(source, identity, client_host, server_host),
                self.sc.delay_box.client_share(),
            ),
        };
        let (flow_delay, far_delay) = extra.delays(self.sc.delay_box.placement);
        let extra = extra.total;
        // ns-2 gives each agent its own tick clock (a random phase per endpoint); BSD's clock
        // is global (phase 0), and its connections need no stream.
        let tcp_idx = self.source_tcp[source as usize];
        let tcp = &self.tcps[tcp_idx as usize];
        let phases = match tcp.timer_model {
            // Linux's jiffies are the machine's clock, like BSD's ticks.
            crate::tcp::config::TimerModel::Bsd | crate::tcp::config::TimerModel::Linux => [0, 0],
            crate::tcp::config::TimerModel::Ns2 => {
                let mut clock = Rng::substream(seed, StreamKind::TcpClock, source as u64, identity);
                let tick = tcp.tick();
                [clock.below(tick), clock.below(tick)]
            },
        };
        let bbr = tcp.congestion_control == crate::tcp::config::CongestionControl::Bbr;
        let (to_server, delay_to_server) = self.path_id(client_host, server_host);
        let (to_client, delay_to_client) = self.path_id(server_host, client_host);
        let paths = [to_server, to_client];
        // Propagation RTT of the topology (no serialization) plus the delay box.
        let base_rtt = delay_to_server + delay_to_client + extra;
        let id = self.next_conn_id;
        self.next_conn_id += 1;
        // A reused slot's endpoints hand their Linux state to the new ones (`tcp/template.rs`).
        if let Some(&s) = self.free_slots.last() {
            for ep in &mut self.conns[s as usize].ep {
                self.linux_pool.recycle(ep);
            }
        }
        let template = &self.ep_templates[tcp_idx as usize];
        let mut conn = Conn {
            id,
            ep: [
                template.instantiate(phases[0], &mut self.linux_pool),
                template.instantiate(phases[1], &mut self.linux_pool),
            ],
            paths,
            flow_delay,
            far_delay,
            flow_hash: (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32,
            app,
            source,
            identity,
            user,
            tcp: tcp_idx,
            notified: false,
            primary,
            client_host,
            server_host,
            client_left: self.topo.on_left_side(client_host),
            base_rtt,
            start: now,
            established: None,
            first_byte: None,
            last_byte: None,
            aborted: false,
            delivered_measured: 0,
            losses: Default::default(),
        };
        if bbr {
            // BBR's random draws (the gain cycle's start phase): a stream per connection.
            let mut r = Rng::substream(seed, StreamKind::TcpBbr, source as u64, identity);
            conn.ep[0].set_cc_seed(r.next_u64());
            conn.ep[1].set_cc_seed(r.next_u64());
        }
        let slot = if let Some(s) = self.free_slots.pop() {
            let gen = self.tags[s as usize].gen.wrapping_add(1);
            self.conns[s as usize] = conn;
            self.tags[s as usize] = flow_losses::ConnTag {
                gen,
                active: true,
                source: source as u16,
                ..Default::default()
            };
            s
        } else {
            assert!(self.conns.len() < MAX_SLOTS, "too many open connections");
            self.conns.push(conn);
            self.tags.push(flow_losses::ConnTag {
                active: true,
                source: source as u16,
                ..Default::default()
            });
            (self.conns.len() - 1) as u32
        };
        if now >= self.warmup {
            self.summary.connections_started += 1;
        }
        if let Some(tr) = self.tcp_trace.as_mut() {
            let c = &self.conns[slot as usize];
            tr.open(slot, c.id, c.client_host, c.server_host);
        }
        let c = &mut self.conns[slot as usize];
        c.ep[1].listen(now);
        self.out.clear();
        c.ep[0].connect(now, &self.tcps[c.tcp as usize], &mut self.out);
        self.after_call(slot, 0);
    }

    pub(super) fn deliver(&mut self, pkt: &Packet) {
        let slot = pkt.conn;
        self.delivered_packets += 1;
        if pkt.proto == Proto::Udp {
            if pkt.gen == realtime::RT_GEN {
                self.deliver_rt(pkt);
            } else if pkt.flags != 0 {
                self.deliver_video(pkt);
            } else {
                self.deliver_udp(pkt);
            }
            return;
        }
        if !self.tags[slot as usize].is(pkt.gen) {
            self.stale_packets += 1;
            return; // a late packet of a connection that has ended
        }
        let c = &mut self.conns[slot as usize];
        let side = pkt.to_server as usize;
        self.out.clear();
        c.ep[side].on_segment(
            self.sched.now(),
            &self.tcps[c.tcp as usize],
            pkt,
            &mut self.out,
        );
        self.after_call(slot, side);
    }

    /// A paused application resumes (client think gap, server service delay).
    pub(super) fn on_app_wake(&mut self, slot: u32, side: u8, gen: u32) {
        let now = self.sched.now();
        if !self.tags[slot as usize].is(gen) {
            return;
        }
        let c = &mut self.conns[slot as usize];
        let side = side as usize;
        let action = c.app.on_wake(side, now);
        self.out.clear();
        self.perform(slot, side, action);
        self.after_call(slot, side);
    }

    /// Carries out an application action on endpoint `side`; false when there is nothing
    /// more to do now.
    fn perform(&mut self, slot: u32, side: usize, action: AppAction) -> bool {
        let now = self.sched.now();
        let gen = self.tags[slot as usize].gen;
        let c = &mut self.conns[slot as usize];
        let cfg = &self.tcps[c.tcp as usize];
        match action {
            AppAction::None => return false,
            AppAction::Write(b) => c.ep[side].write(now, cfg, b, &mut self.out),
            // ns-2 (`fin_when_idle`): one `sendmsg(n, "MSG_EOF")`. BSD: write(2), whose
            // tcp_output sends what it may, then close(2).
            AppAction::WriteClose(b) if cfg.fin_when_idle => {
                c.ep[side].write_close(now, cfg, b, &mut self.out)
            },
            AppAction::WriteClose(b) => {
                c.ep[side].write(now, cfg, b, &mut self.out);
                self.transmit(slot, side);
                self.out.clear();
                let c = &mut self.conns[slot as usize];
                c.ep[side].close(now, &self.tcps[c.tcp as usize], &mut self.out);
            },
            AppAction::Close => c.ep[side].close(now, cfg, &mut self.out),
            AppAction::WakeAt(t) => {
                self.sched.at(
                    t,
                    Ev::AppWake {
                        slot,
                        side: side as u8,
                        gen,
                    },
                );
                return false;
            },
            AppAction::WakeAfter(d) => {
                self.sched.at(
                    now + d,
                    Ev::AppWake {
                        slot,
                        side: side as u8,
                        gen,
                    },
                );
                return false;
            },
        }
        true
    }

    /// After an endpoint call: transmit its segments, let the application react (which may
    /// produce more segments), re-arm timers, tell the owning user when the responses are in,
    /// and retire the connection when both ends are done.
    pub(super) fn after_call(&mut self, slot: u32, side: usize) {
        let now = self.sched.now();
        loop {
            self.transmit(slot, side);
            let c = &mut self.conns[slot as usize];
            if self.out.aborted {
                c.aborted = true;
                self.notify_user(slot);
                self.retire(slot);
                return;
            }
            if self.out.established && side == 0 && c.established.is_none() {
                c.established = Some(now);
            }
            if self.out.delivered > 0 && side == c.app.receiver_side() && c.first_byte.is_none() {
                c.first_byte = Some(now);
            }
            if self.out.delivered > 0 && now >= self.warmup {
                c.delivered_measured += self.out.delivered;
                // Bytes reaching the client crossed server → client: right → left (reverse)
                // when the client is on the left.
                let reverse = (side == 0) == c.client_left;
                self.goodput[reverse as usize] += self.out.delivered;
                if let Some(d) = self.source_delays.as_mut() {
                    let source = self.tags[slot as usize].source;
                    d.deliver(source, reverse as usize, self.out.delivered);
                }
            }
            let before = Self::completed_exchanges(&c.app);
            let action = c.app.on_event(side, &self.out, now);
            let after = Self::completed_exchanges(&c.app);
            if after > before {
                self.count_completed(slot, before, after);
                if before == 0 && self.conns[slot as usize].primary {
                    self.notify_primary(slot);
                }
            }
            let c = &mut self.conns[slot as usize];
            if c.last_byte.is_none() && c.app.transfer_complete() {
                c.last_byte = Some(now);
                if !c.app.ends_at_close() {
                    self.notify_user(slot);
                }
            }
            if self.out.peer_closed && side == 0 && self.conns[slot as usize].app.ends_at_close() {
                // The client read the end of the stream and closed (often in the same segment
                // as the last byte): for a source whose responses end at the close (Study A),
                // the user's connection is over now.
                self.notify_user(slot);
            }
            self.out.clear();
            if !self.perform(slot, side, action) {
                break;
            }
        }
        if self.tcp_trace.is_some() {
            self.observe_tcp_state(slot, side);
        }
        let c = &self.conns[slot as usize];
        if c.ep[side].is_done() && c.ep[1 - side].is_done() {
            self.retire(slot);
            return;
        }
        // Only this endpoint was called (the application acts on the side it was called for),
        // so only its deadline can have changed; the other's line stays untouched.
        self.arm_timer(slot, side);
    }

    fn completed_exchanges(app: &App) -> usize {
        match app {
            App::Web(w) => w.completed(),
            App::Bulk(_) => 0,
            App::Dash(d) => d.completed(),
        }
    }

    /// Exchanges `[from, to)` of a connection completed now; counts those started after the
    /// warm-up and stops the run at `max_exchanges`.
    fn count_completed(&mut self, slot: u32, from: usize, to: usize) {
        let w = match &self.conns[slot as usize].app {
            App::Web(w) => w,
            App::Dash(_) => return self.on_dash_segment(slot),
            App::Bulk(_) => return,
        };
        let n = (from..to)
            .filter(|&i| w.start(i).is_some_and(|t| t >= self.warmup))
            .count() as u64;
        self.exchanges_done += n;
        if let Some(max) = self.sc.max_exchanges {
            if self.exchanges_done >= max && self.end > self.sched.now() {
                self.end = self.sched.now();
            }
        }
    }

    /// Puts the outbox's segments on the wire from endpoint `side` of `slot`.
    fn transmit(&mut self, slot: u32, side: usize) {
        if self.out.segs.is_empty() {
            return;
        }
        let c = &self.conns[slot as usize];
        let tcp = &self.tcps[c.tcp as usize];
        let hdr = tcp.header_bytes;
        let padded = tcp.sack_variant != crate::tcp::config::SackVariant::Ns2;
        let route = c.paths[side];
        let first_link = self.paths[route as usize].links[0];
        let template = Packet {
            conn: slot,
            route,
            to_server: side == 0,
            flow_delay: c.flow_delay[side],
            flow_hash: c.flow_hash,
            gen: self.tags[slot as usize].gen,
            ..Default::default()
        };
        for i in 0..self.out.segs.len() {
            let s = self.out.segs[i];
            let p = Packet {
                flags: s.flags,
                size: s.len + hdr + s.option_bytes(padded),
                len: s.len,
                seq: s.seq,
                ack: s.ack,
                retransmit: s.retransmit,
                ecn: s.ecn,
                sack: s.sack,
                sack_n: s.sack_n,
                sack_permitted: s.sack_permitted,
                ..template
            };
            let id = self.pkts.alloc(p);
            if self.seg_observe {
                self.observe_segment(slot, side, i, id);
            }
            self.send_on(first_link, id);
        }
        self.out.segs.clear();
    }

    /// Writes the connection's record and frees its slot.
    fn retire(&mut self, slot: u32) {
        let now = self.sched.now();
        if self.taps.is_some() {
            self.tap_retire(slot);
        }
        self.record(slot, Some(now));
        self.tags[slot as usize].active = false;
        self.free_slots.push(slot);
        // A user whose connection ended without delivering (e.g. the server closed early)
        // must not wait forever.
        self.notify_user(slot);
    }
}
