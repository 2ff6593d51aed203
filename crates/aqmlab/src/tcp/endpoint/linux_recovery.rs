//! The endpoint's hooks for PRR (`tcp/prr.rs`) and RACK-TLP (`tcp/rack.rs`): where Linux's
//! `tcp_ack`, `tcp_fastretrans_alert`, `tcp_cong_control`, `tcp_xmit_retransmit_queue`,
//! `tcp_write_timer_handler` and `tcp_write_xmit` call them. A child module of `endpoint`
//! (it reads the endpoint's fields); the endpoint calls in only when `prr` or `rack_tlp` is on.

use super::{prr_mut, rack_mut, segments, Endpoint, Outbox, MAX_CWND};
use crate::packet::Packet;
use crate::tcp::config::{CongestionControl, Recovery, TcpConfig, TimerModel};
use crate::tcp::cong::LinuxCong;
use crate::tcp::deadline::Deadline;
use crate::tcp::rack::Rack;
use crate::tcp::rtt::linux_timer_expiry;
use crate::units::Time;

impl Endpoint {
    /// An ACK with PRR or RACK-TLP on: the usual processing, then, in Linux's order
    /// (`tcp_ack`): RACK's advance and the TLP episode (`tcp_process_tlp_ack`), RACK loss
    /// marking and recovery entry (`tcp_fastretrans_alert`), the PRR reduction
    /// (`tcp_cong_control`). The caller's output() then transmits.
    #[inline(never)]
    pub(super) fn linux_recovery_ack(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        pkt: &Packet,
        out: &mut Outbox,
    ) {
        if pkt.ack > self.snd_max {
            self.process_ack_base(now, cfg, pkt, out);
            return;
        }
        let una_before = self.snd_una;
        let mss = cfg.mss as u64;
        let rack = self.rack_on();
        // RFC 6675 path: the lost bytes before this ACK's blocks, for PRR's new-loss test.
        let lost_before = (!rack && self.prr_active() && self.sack_recovery(cfg)).then(|| {
            let from = pkt.ack.max(self.snd_una);
            self.board
                .lost_bytes_from(from, self.snd_una, self.snd_max, cfg.dupack_threshold, mss)
        });
        self.ack_delivered = 0;
        // F-RTO (`tcp/undo.rs`): the ACK's flags read before it is counted.
        let frto = self.frto_armed(cfg).then(|| self.frto_scan_ack(pkt));
        self.process_ack_base(now, cfg, pkt, out);
        if let Some(scanned) = frto {
            self.frto_on_ack(now, cfg, pkt, una_before, scanned);
        }
        let delivered = self.ack_delivered;
        let una_advanced = self.snd_una > una_before;
        let mut newly_lost = false;
        if rack {
            let dup = delivered == 0 && pkt.len == 0 && pkt.ack == una_before;
            newly_lost = self.rack_on_ack(now, cfg, pkt.ack, una_advanced, dup, out);
        } else if let Some(before) = lost_before {
            if self.sack_recovery(cfg) {
                let after = self.board.lost_bytes_from(
                    self.snd_una,
                    self.snd_una,
                    self.snd_max,
                    cfg.dupack_threshold,
                    mss,
                );
                newly_lost = after > before;
            }
        }
        self.prr_on_ack(cfg, delivered, newly_lost, una_advanced);
    }

    #[inline]
    pub(super) fn rack_on(&self) -> bool {
        self.has_rack() && self.sack_ok && self.linux.is_some()
    }

    #[inline]
    fn prr_active(&self) -> bool {
        self.prr_state().is_some_and(|p| p.active)
    }

    // ----- PRR -----

    /// Segments in flight for PRR (`tcp_packets_in_flight`): RACK's count, else RFC 6675's
    /// pipe in recovery, else what is outstanding less what is SACKed.
    fn prr_in_flight(&self, cfg: &TcpConfig) -> u32 {
        let mss = cfg.mss as u64;
        if self.rack_on() {
            if let Some(lx) = self.linux.as_deref() {
                return lx.rack_in_flight();
            }
        }
        let bytes = if self.sack_recovery(cfg) {
            self.board
                .set_pipe(self.snd_una, self.snd_max, cfg.dupack_threshold, mss)
        } else {
            (self.snd_max - self.snd_una).saturating_sub(self.board.sacked_bytes())
        };
        bytes.div_ceil(mss).min(u32::MAX as u64) as u32
    }

    /// Entering loss recovery with PRR (`tcp_enter_recovery` → `tcp_init_cwnd_reduction`,
    /// then `tcp_cwnd_reduction` for the entry ACK, before the fast retransmission): a CWR
    /// reduction under way goes on (ssthresh is not cut twice). `newly_lost`: this ACK
    /// marked the loss.
    pub(super) fn prr_enter_recovery(&mut self, cfg: &TcpConfig, newly_lost: bool) {
        let mss = cfg.mss as u64;
        let cwnd = segments(self.cwnd, mss);
        let in_flight = self.prr_in_flight(cfg);
        let ssthresh = segments(self.ssthresh, mss);
        let delivered = self.ack_delivered;
        let Some(p) = prr_mut(&mut self.linux) else {
            return;
        };
        if !p.active {
            p.start(cwnd, None);
        }
        p.cwr_end = None;
        if let Some(w) = p.on_ack(delivered.max(1), newly_lost, false, in_flight, ssthresh) {
            self.cwnd = (w as u64 * mss).min(MAX_CWND);
        }
        p.entry_ack_done = true;
    }

    /// The end of loss recovery (`tcp_end_cwnd_reduction`): cwnd = ssthresh.
    pub(super) fn prr_end_recovery(&mut self) {
        if let Some(p) = prr_mut(&mut self.linux) {
            if p.active {
                p.end();
                self.cwnd = self.ssthresh;
            }
        }
    }

    /// `tcp_cong_control` in the CWR and Recovery states: the end of a CWR reduction once
    /// snd_una passes its snd_nxt, else cwnd = in_flight + sndcnt.
    fn prr_on_ack(&mut self, cfg: &TcpConfig, delivered: u32, newly_lost: bool, una_adv: bool) {
        let mss = cfg.mss as u64;
        let (in_recovery, snd_una) = (self.in_recovery, self.snd_una);
        // PRR runs in SACK recovery only: a NewReno recovery (a peer without SACK) keeps its
        // own window rules, and ends a CWR reduction under way.
        let newreno = in_recovery && self.recovery(cfg) != Recovery::Sack;
        let Some(p) = prr_mut(&mut self.linux) else {
            return;
        };
        if !p.active {
            return;
        }
        if newreno {
            p.end();
            return;
        }
        if p.entry_ack_done {
            p.entry_ack_done = false;
            return;
        }
        match p.cwr_end {
            Some(h) if snd_una > h && !in_recovery => {
                p.end();
                self.cwnd = self.ssthresh;
                return;
            },
            None if !in_recovery => {
                p.end();
                return;
            },
            _ => {},
        }
        let in_flight = self.prr_in_flight(cfg);
        let ssthresh = segments(self.ssthresh, mss);
        let Some(p) = prr_mut(&mut self.linux) else {
            return;
        };
        if let Some(w) = p.on_ack(delivered, newly_lost, una_adv, in_flight, ssthresh) {
            self.cwnd = (w as u64 * mss).min(MAX_CWND);
        }
    }

    // ----- RACK -----

    /// RACK on an ACK (`tcp_rack_advance`, `tcp_process_tlp_ack`, `tcp_rack_mark_lost`,
    /// `tcp_time_to_recover`). Returns whether segments were newly marked lost.
    fn rack_on_ack(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        ack: u64,
        una_advanced: bool,
        dup: bool,
        out: &mut Outbox,
    ) -> bool {
        let delivered = self.ack_delivered;
        let srtt_s = self.rto.srtt_s();
        let tick = cfg.tick().max(1);
        let wheel = cfg.timer_model == TimerModel::Linux;
        let in_recovery = self.in_recovery;
        let Some(lx) = self.linux.as_deref_mut() else {
            return false;
        };
        let sacked_out = lx.sacked_out();
        let LinuxCong {
            rack: Some(r),
            sent,
            newest_delivered,
            reordered,
            cold,
            ..
        } = lx
        else {
            return false;
        };
        if let Some((at, end, rexmit)) = newest_delivered.take() {
            r.advance(now, at, end, rexmit);
        }
        if *reordered {
            r.reord_seen = true;
        }
        let probe_loss = r.on_probe_ack(ack, una_advanced, dup);
        let mut newly = 0;
        let mut reo_set = false;
        if r.advanced {
            r.advanced = false;
            let srtt = (srtt_s * 1e9) as Time;
            let wnd = r.reo_wnd(in_recovery, sacked_out, cfg.dupack_threshold, srtt);
            let (n, wait) = r.detect_loss(now, sent, wnd);
            newly = n;
            if let Some(rt) = cold.as_deref_mut().and_then(|c| c.rate.as_deref_mut()) {
                rt.count_lost(n);
            }
            if let Some(w) = wait {
                r.reo_at = Deadline::at(if wheel {
                    // `tcp_rack_reo_timeout` armed on the timer wheel, the wait in jiffies
                    // plus `TCP_TIMEOUT_MIN` (2).
                    linux_timer_expiry(now, w.div_ceil(tick) + 2, tick)
                } else {
                    Rack::reo_deadline(now, w, tick)
                });
                reo_set = true;
            }
        }
        // FLAG_SET_XMIT_TIMER: an ACK that delivered data sets the probe (or retransmission)
        // timer again after output, unless RACK has just set its reorder timer.
        if delivered > 0 && !reo_set {
            r.reo_at = Deadline::NONE;
            r.rearm = true;
        }
        let any_lost = sent.counts().lost > 0;
        if self.snd_una == self.snd_max {
            r.reo_at = Deadline::NONE;
            r.tlp_at = Deadline::NONE;
        }
        if probe_loss {
            self.tlp_reduction(cfg);
        }
        if any_lost && !self.in_recovery && self.snd_una >= self.recover {
            self.rack_enter_recovery(now, cfg, newly > 0, out);
        }
        newly > 0
    }

    /// The probe repaired a loss (`tcp_process_tlp_ack`): one reduction, completed at once
    /// (`tcp_init_cwnd_reduction`, CWR, `tcp_end_cwnd_reduction`).
    fn tlp_reduction(&mut self, cfg: &TcpConfig) {
        if self.in_recovery {
            return;
        }
        self.ssthresh = self.cut_ssthresh(cfg);
        self.cwnd = self.ssthresh;
        self.ecn.on_reduction(self.snd_max, false);
        if let Some(p) = prr_mut(&mut self.linux) {
            p.end();
        }
    }

    /// Loss recovery starts on a loss RACK marked (`tcp_enter_recovery`): ssthresh is cut
    /// (unless a CWR reduction is under way), PRR starts, and the first lost segment is
    /// retransmitted; the caller's output() sends what cwnd then allows.
    fn rack_enter_recovery(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        newly_lost: bool,
        out: &mut Outbox,
    ) {
        self.begin_loss_recovery(cfg, newly_lost);
        if let Some(r) = rack_mut(&mut self.linux) {
            r.tlp_high_seq = None;
            r.tlp_at = Deadline::NONE;
        }
        // Under BBR the retransmission waits for the caller's output: Linux sends it in
        // `tcp_xmit_recovery`, after `tcp_cong_control` (`tcp_ack`), so BBR sets cwnd from
        // what was in flight before it (`bbr_set_cwnd_to_recover_or_restore`).
        let bbr = cfg.congestion_control == CongestionControl::Bbr;
        let first = self.linux.as_deref_mut().and_then(|lx| lx.first_lost());
        if let (Some((s, e)), false) = (first, bbr) {
            let sent = self.sack_retransmit(now, cfg, s, e, false, out);
            self.rearm_after_head_retransmit(now, cfg, s, sent);
        }
        if self.rexmt_at.is_none() && self.snd_max > self.snd_una {
            self.rexmt_at = Deadline::at(self.rto.timer_deadline(cfg, now, false));
        }
    }

    /// Transmission in recovery with RACK (`tcp_xmit_retransmit_queue`, then new data): while
    /// fewer than cwnd segments are in flight, the first segment marked lost and not yet
    /// retransmitted, else new data within the receiver's window.
    #[inline(never)]
    pub(super) fn rack_output(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let mss = cfg.mss as u64;
        let cwnd = segments(self.cwnd, mss);
        self.snd_nxt = self.snd_max;
        if self.frto_send_new_first(now, cfg, out) {
            if self.ack_now {
                self.emit_ack(cfg, out);
            }
            return;
        }
        while let Some(lx) = self.linux.as_deref_mut() {
            if lx.rack_in_flight() >= cwnd {
                break;
            }
            let first_lost = lx.first_lost();
            let sent = if let Some((s, e)) = first_lost {
                let sent = self.sack_retransmit(now, cfg, s, e, false, out);
                self.rearm_after_head_retransmit(now, cfg, s, sent);
                sent
            } else {
                let rwnd_room = (self.snd_una + cfg.rwnd as u64).saturating_sub(self.snd_max);
                let unsent = self.snd_max < self.app_end
                    || (self.fin_queued && self.snd_max == self.app_end);
                if unsent && rwnd_room > 0 {
                    self.snd_nxt = self.snd_max;
                    self.send_one(now, cfg, rwnd_room, out)
                        .map_or(0, |(n, _)| n)
                } else {
                    0
                }
            };
            if sent == 0 {
                break;
            }
        }
        if self.ack_now {
            self.emit_ack(cfg, out);
        }
    }

    // ----- TLP -----

    /// After a transmission attempt: the probe timer is set again when new data went out
    /// (`tcp_write_xmit` → `tcp_schedule_loss_probe`) or the ACK delivered data
    /// (`tcp_set_xmit_timer`), in the Open and CWR states with data outstanding.
    #[inline(never)]
    pub(super) fn rack_after_output(&mut self, now: Time, cfg: &TcpConfig, snd_max_before: u64) {
        if !self.rack_on() {
            return;
        }
        let sent_new = self.snd_max > snd_max_before;
        if !sent_new && self.rack_state().is_none_or(|r| !r.rearm) {
            return;
        }
        let mss = cfg.mss as u64;
        let open = !self.in_recovery
            && self.snd_una >= self.recover
            && !self.opening()
            && self.snd_max > self.snd_una;
        let packets_out = (self.snd_max - self.snd_una).div_ceil(mss) as u32;
        let srtt_s = self.rto.srtt_s();
        let rexmt_at = self.rexmt_at.get().filter(|&t| t > now);
        let rto_left = self.rexmt_at.get().map(|t| t.saturating_sub(now));
        let tick = cfg.tick().max(1);
        let rto_min = cfg.min_rto();
        let Some(r) = rack_mut(&mut self.linux) else {
            return;
        };
        if !(sent_new || r.rearm) {
            return;
        }
        r.rearm = false;
        let wheel = cfg.timer_model == TimerModel::Linux;
        r.tlp_at = Deadline::from_option(open.then(|| {
            let srtt = (srtt_s * 1e9) as Time;
            if wheel {
                // `tcp_reset_xmit_timer` on the timer wheel, whole jiffies ahead; the probe
                // takes the retransmission timer's slot in Linux, so it never fires after the
                // retransmission timer would have.
                let t = Rack::probe_timeout(srtt, packets_out, rto_min, None, tick);
                let at = linux_timer_expiry(now, t.div_ceil(tick), tick);
                rexmt_at.map_or(at, |r| at.min(r))
            } else {
                now + Rack::probe_timeout(srtt, packets_out, rto_min, rto_left, tick)
            }
        }));
    }

    /// The reorder and probe timers (`tcp_write_timer_handler`).
    #[inline(never)]
    pub(super) fn rack_timers(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let Some(r) = rack_mut(&mut self.linux) else {
            return;
        };
        if r.reo_at.get().is_some_and(|t| t <= now) {
            r.reo_at = Deadline::NONE;
            r.reo_timeouts += 1;
            self.rack_reo_timeout(now, cfg, out);
        }
        let Some(r) = rack_mut(&mut self.linux) else {
            return;
        };
        if r.tlp_at.get().is_some_and(|t| t <= now) {
            r.tlp_at = Deadline::NONE;
            self.send_loss_probe(now, cfg, out);
        }
    }

    /// `tcp_rack_reo_timeout`: mark what has now waited long enough; if that marked
    /// anything, enter recovery (PRR's first step counts one segment delivered) and
    /// retransmit. The retransmission timer keeps running.
    fn rack_reo_timeout(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let srtt = (self.rto.srtt_s() * 1e9) as Time;
        let in_recovery = self.in_recovery;
        let Some(lx) = self.linux.as_deref_mut() else {
            return;
        };
        let sacked_out = lx.sacked_out();
        let LinuxCong {
            rack: Some(r),
            sent,
            cold,
            ..
        } = lx
        else {
            return;
        };
        let wnd = r.reo_wnd(in_recovery, sacked_out, cfg.dupack_threshold, srtt);
        let (n, _) = r.detect_loss(now, sent, wnd);
        if let Some(rt) = cold.as_deref_mut().and_then(|c| c.rate.as_deref_mut()) {
            rt.count_lost(n);
        }
        if n > 0 {
            if !self.in_recovery && self.snd_una >= self.recover {
                self.ack_delivered = 1;
                self.rack_enter_recovery(now, cfg, true, out);
            }
            self.output(now, cfg, out);
        }
        self.rearm_after_reo_timeout(now, cfg);
    }

    /// `tcp_xmit_retransmit_queue`: a retransmission of the head of the retransmission queue
    /// (the segment at snd_una) restarts the retransmission timer, a full icsk_rto from now
    /// (`rearm_timer`, `tcp_reset_xmit_timer`). Linux skips this while its reorder timer holds
    /// the timer's slot, but that timer's handler ends in `tcp_rearm_rto`, which sets the
    /// same deadline (what is left of icsk_rto since the head was sent, i.e. all of it), so
    /// the model, whose reorder and retransmission timers are separate, sets it here.
    fn rearm_after_head_retransmit(&mut self, now: Time, cfg: &TcpConfig, seq: u64, sent: u64) {
        if sent > 0 && seq == self.snd_una && cfg.timer_model == TimerModel::Linux {
            self.rexmt_at = Deadline::at(self.rto.timer_deadline(cfg, now, false));
        }
    }

    /// The end of `tcp_rack_reo_timeout`: the reorder timer held Linux's single timer slot,
    /// so `tcp_rearm_rto` sets the retransmission timer again, offset by the time since the
    /// head of the retransmission queue was last sent (`tcp_rto_delta_us`); with nothing
    /// outstanding it stays off.
    fn rearm_after_reo_timeout(&mut self, now: Time, cfg: &TcpConfig) {
        if cfg.timer_model != TimerModel::Linux {
            return;
        }
        let head = self.linux.as_deref().and_then(|lx| lx.sent.first_sent_at());
        if let (Some(at), true) = (head, self.snd_max > self.snd_una) {
            self.rexmt_at = Deadline::at(self.rto.linux_rearm_deadline(now, at));
        }
    }

    /// `tcp_send_loss_probe`: one new segment if the receiver's window allows (sent whatever
    /// cwnd says), else the last segment again; the retransmission timer restarts from now.
    /// Nothing if a probe is already outstanding.
    fn send_loss_probe(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let mss = cfg.mss as u64;
        if self.rack_state().is_none_or(|r| r.tlp_high_seq.is_some()) {
            return;
        }
        let snd_max_before = self.snd_max;
        let rwnd_room = (self.snd_una + cfg.rwnd as u64).saturating_sub(self.snd_max);
        let unsent =
            self.snd_max < self.app_end || (self.fin_queued && self.snd_max == self.app_end);
        let mut retrans = false;
        let mut sent = 0;
        if unsent && rwnd_room >= mss.min(self.app_end - self.snd_max).max(1) {
            self.snd_nxt = self.snd_max;
            // `tcp_write_xmit(push_one = 2)`: one skb whatever cwnd says, never deferred.
            set_push_one(&mut self.linux, true);
            sent = self
                .send_one(now, cfg, rwnd_room.min(mss), out)
                .map_or(0, |(n, _)| n);
            set_push_one(&mut self.linux, false);
        }
        if sent == 0 {
            // The last segment sent: data, or a FIN sent on its own after it.
            let last = self.linux.as_deref().and_then(|lx| lx.last_segment());
            let fin_alone = self.fin_queued
                && self.snd_max == self.app_end + 1
                && last.is_none_or(|(_, e)| e < self.app_end);
            if fin_alone {
                sent = self.sack_retransmit(now, cfg, self.app_end, self.app_end, true, out);
            } else if let Some((s, e)) = last {
                sent = self.sack_retransmit(now, cfg, s, e, true, out);
            }
            retrans = sent > 0;
        }
        if sent == 0 {
            return;
        }
        let high = self.snd_max;
        if let Some(r) = rack_mut(&mut self.linux) {
            r.tlp_high_seq = Some(high);
            r.tlp_retrans = retrans;
            r.probes += 1;
        }
        self.rexmt_at = Deadline::at(self.rto.timer_deadline(cfg, now, false));
        self.linux_after_output(cfg, snd_max_before);
    }

    /// A retransmission timeout (`tcp_enter_loss`): the reduction and the probe episode end,
    /// the timers stop, everything not SACKed is marked lost (`tcp_timeout_mark_lost`) — in
    /// the kernel's loss state (`linux_loss_state`) only what RACK's RTT says has timed out.
    pub(super) fn linux_recovery_on_rto(&mut self, now: Time, kernel_loss_state: bool) {
        if let Some(p) = prr_mut(&mut self.linux) {
            p.end();
        }
        if let Some(r) = rack_mut(&mut self.linux) {
            r.tlp_at = Deadline::NONE;
            r.reo_at = Deadline::NONE;
            r.tlp_high_seq = None;
            r.rearm = false;
            if let Some(lx) = self.linux.as_deref_mut() {
                if kernel_loss_state {
                    lx.mark_timed_out_lost(now);
                } else {
                    lx.mark_all_lost();
                }
            }
        }
    }

    /// Whether a retransmission timeout leads into the loss state as the kernel runs it
    /// (`tcp_enter_loss` keeps the SACK marks; `tcp_xmit_retransmit_queue` sends again only
    /// the segments marked lost, oldest first while `tcp_packets_in_flight` < cwnd, then new
    /// data; Linux 6.x `tcp_input.c`, `tcp_output.c`) rather than go-back-N over a forgotten
    /// scoreboard. Linux does this under every congestion control; the model takes it for
    /// BBR (issue 35 §4), and the other Linux presets keep go-back-N until their own
    /// comparison with the kernel is redone (their results are otherwise unchanged).
    pub(super) fn linux_loss_state(&self, cfg: &TcpConfig) -> bool {
        cfg.congestion_control == CongestionControl::Bbr && self.rack_on()
    }

    /// In the timeout's loss state as the kernel runs it: until snd_una passes what was sent
    /// when it began (`tcp_process_loss`: `high_seq`).
    pub(super) fn in_linux_loss_state(&self, cfg: &TcpConfig) -> bool {
        self.linux_loss_state(cfg)
            && self
                .linux
                .as_deref()
                .and_then(|l| l.cold.as_deref())
                .and_then(|c| c.bbr_loss_high)
                .is_some_and(|h| self.snd_una < h)
    }
}

/// Marks the sending of a tail loss probe on the pacer (`Pacer::push_one`).
fn set_push_one(linux: &mut Option<Box<LinuxCong>>, on: bool) {
    if let Some(p) = linux.as_deref_mut().and_then(|l| l.pacer_mut()) {
        p.push_one = on;
    }
}
