# One cell of Study C (Weigle, Jeffay, Smith 2005) in ns-2.35: two-way PackMime-HTTP/1.0
# through a 10 Mb/s bottleneck, per-connection RTTs from DelayBox, ns-2 Full-TCP configured as
# the study's `ns2-weigle2005` preset, and the cell's queue (Adaptive RED or drop-tail) in both
# directions. Driven by validation/suites/study_c_ared.py (the on-demand suite `study_c_ared`).
# Derived from validation/ns2/packmime_e2e.tcl (which is left as it is).
#
#   ns study_c_cell.tcl PARAMS OUTDIR
#
# PARAMS (Tcl, written by the driver) sets the array P (below) and, before any link or agent
# exists, the queue's class defaults (`Queue/RED set ...`), since ns-2 objects read their
# defaults when they are created. Everything not set here or there is ns-2.35's default
# (tcl/lib/ns-default.tcl).
#
# Topology (python/src/aqmlab/studies/C/base.toml [topology]):
#   hL --P(access_bw), P(access_delay)-- db0 ==P(bw), P(delay)== db1 --access-- hR
# hL and hR are the two sides' PackMime clouds (one host per side, as the study file), db0
# and db1 DelayBox nodes acting as the routers. Access queues hold P(access_limit) packets
# (the study's access_queue_packets: the clouds never drop).
#
# Traffic (base.toml [[traffic]]): PackMime instance 0 has its clients on hR and servers on hL
# (base.toml traffic[0], client_side = "right": responses cross left -> right, the "forward"
# path); instance 1 the other way round. Both HTTP/1.0 (`set-http-1.1` not called:
# packmime_HTTP.cc http_1_1_ false), P(rate) new connections/s each (`set-rate`).
# `set-TCP P(tcp)`: "Reno" is plain Agent/TCP/FullTcp (tcl/packmime/packmime.tcl `alloc-tcp`).
#
# Per-connection RTT (base.toml [rtt], kind = "empirical", packmime_rtt.csv): aqmlab draws
# one extra RTT d per connection and its client-side box delays every packet of the
# connection by d/2, in both directions (base.toml [delay_box]: placement "boxes",
# client_share 1; docs/network.md). Here the same: one DelayBox rule per
# instance, on the client-side box, whose RandomVariable/Empirical returns d/2 in ms from the
# CDF file P(rtt_cdf) (lines "value 0 cdf", tools/ranvar.cc EmpiricalRandomVariable::loadCDF
# reads "%lf %*f %lf"), linearly interpolated (`interpolation_ 1` = INTER_CONTINUOUS,
# tools/ranvar.h; aqmlab's EmpiricalCdf::inverse_cdf interpolates linearly too). A rule's
# delay applies to both directions of the flow (DelayBoxClassifier symmetric_ 1; delaybox.cc
# divides the value by 1000: milliseconds). The server-side box gets a rule of constant delay
# 0 for the same (client, server) pair: it must have one, because a SYN that finds no rule for
# its (source, destination) is given the rule of (destination, source) when symmetric_ is set
# (delaybox.cc DelayBoxClassifier::recv, action 1, `rev_pair`), and that is the other
# instance's client-side rule: without the zero rule every connection would be delayed by
# two independent draws, one per box.
#
# Seeds: P(seed) seeds ns-2's default RNG, selects PackMime's substream (`set-run`) and
# advances the RTT variables' RNGs by as many substreams (pm-delaybox.tcl's idiom).
#
# Output in OUTDIR:
#   pm0.dat, pm1.dat: PackMime's response log (`set-outfile`; responses whose request was
#     written at or after P(warmup)): time, request bytes, response bytes, response time (ms).
#     pm0 = instance 0 = the forward cloud (clients on the right).
#   stats.txt: per bottleneck direction (fwd = db0 -> db1, left -> right; rev = db1 -> db0)
#     from P(warmup) to P(stop): QueueMonitor arrivals, drops, departures, departed bytes,
#     time-integral of the queue in packets; for RED the parameters RED settled to and the
#     time averages of cur_max_p_ and ave_ sampled every P(sample) s.
#   red.txt (RED only): the samples "t fwd.cur_max_p_ rev.cur_max_p_ fwd.ave_ rev.ave_".

if {$argc != 2} {
    puts stderr "usage: ns study_c_cell.tcl PARAMS OUTDIR"
    exit 2
}
set params [lindex $argv 0]
set outdir [lindex $argv 1]
source $params

# --- Full-TCP as the study's ns2-weigle2005 preset (docs/tcp.md; the paper's Table 2) -------
# segsize_: the preset's mss, 1420 data bytes (paper footnote 3); tcpip_base_hdr_size_ 40
# (ns-default.tcl) is the preset's header_bytes 40, so data packets are 1460 bytes.
Agent/TCP/FullTcp set segsize_ $P(segsize)
# window_: the receiver's window in segments (rwnd 105,080 bytes = 74 segments, §V.A).
# tcp.cc uses min(cwnd_, wnd_); the initial ssthresh_ 0 becomes wnd_ (tcp.cc reset), which
# cwnd can never exceed anyway (aqmlab: initial ssthresh unbounded, window 74 segments).
Agent/TCP/FullTcp set window_ $P(window)
# windowInit_ 2: ns-default.tcl's default, the preset's initial_window 2 (Table 2).
Agent/TCP/FullTcp set windowInit_ $P(window_init)
# tcpTick_ 0.01 (ns-default.tcl default; Table 2: 10 ms tick).
Agent/TCP/FullTcp set tcpTick_ $P(tick)
# minrto_ 1 s (Table 2; ns-2.35's default is 0.2), maxrto_ 60 s (ns-default.tcl default; the
# preset's max_rto_s), rtxcur_init_ 6 s (Table 2 "initial RTO"; ns-2.35's default is 3).
Agent/TCP/FullTcp set minrto_ $P(minrto)
Agent/TCP/FullTcp set maxrto_ $P(maxrto)
Agent/TCP/FullTcp set rtxcur_init_ $P(rtxcur_init)
# rfc2988_ true and timestamps_ false are ns-default.tcl's defaults (Table 2: RFC 2988 RTT
# calculation, no timestamps); nodelay_ false (Nagle on) and tcprexmtthresh_ 3 are Full-TCP's
# defaults, as the preset's nagle = true and dupack_threshold = 3. ecn_ 0 (default): no ECN in
# these cells. Delayed ACK: the preset's `delayed_ack = false` acknowledges every in-order
# data segment at once. Full-TCP's closest setting is its default `segsperack_ 1`
# (tcp-full.cc need_send: an ACK as soon as one full segment is unacknowledged); a sub-MSS
# segment still waits for the free-running `interval_` 0.1 s timer unless something else
# (the response, a FIN) carries the ACK first. `segsperack_ 0` would make need_send() always
# true and so defeat Nagle in foutput(); left at the defaults (see the suite's notes).

remove-all-packet-headers
add-packet-header IP TCP Flags
set ns [new Simulator]
$ns use-scheduler Heap
$defaultRNG seed $P(seed)

set hL [$ns node]
set hR [$ns node]
set db0 [$ns DelayBox]
set db1 [$ns DelayBox]
source [file join [file dirname [info script]] common.tcl]
dumbbell $ns $hL $hR $db0 $db1 $P(access_limit)

# PackMime: instance 0 clients on hR (forward responses), instance 1 clients on hL.
set side(0) [list $hR $hL $db1 $db0]
set side(1) [list $hL $hR $db0 $db1]
set zero [new RandomVariable/Constant]
$zero set val_ 0
for {set i 0} {$i < 2} {incr i} {
    lassign $side($i) cnode snode cbox sbox
    set pm($i) [new PackMimeHTTP]
    $pm($i) set-client $cnode
    $pm($i) set-server $snode
    $pm($i) set-TCP $P(tcp)
    $pm($i) set-rate $P(rate)
    $pm($i) set-run $P(seed)
    $pm($i) set-warmup $P(warmup)
    $pm($i) set-outfile $outdir/pm$i.dat
    set rng [new RNG]
    for {set j 1} {$j < $P(seed)} {incr j} {
        $rng next-substream
    }
    set rv [new RandomVariable/Empirical]
    $rv use-rng $rng
    $rv set interpolation_ 1
    $rv loadCDF $P(rtt_cdf)
    $cbox add-rule [$cnode id] [$snode id] $rv
    $sbox add-rule [$cnode id] [$snode id] $zero
}
if {[info exists P(delay_log)] && $P(delay_log)} {
    # Per-flow delays as DelayBox samples them (delaybox.cc `set-delay-file`), for checks.
    $db0 set-delay-file $outdir/delays_db0.txt
    $db1 set-delay-file $outdir/delays_db1.txt
}
offset_flow_ids $pm(1) 100000000

# RED state sampled every P(sample) s from the warm-up on (cur_max_p_ and ave_ are bound in
# queue/red.cc REDQueue::REDQueue; ave_ is in packets here: queue_in_bytes_ false).
set nsamp 0
foreach d {fwd rev} {
    set sum($d,maxp) 0.0
    set sum($d,ave) 0.0
}
proc sample {} {
    global ns q P sum nsamp redlog
    set now [$ns now]
    set line [format "%.3f" $now]
    foreach v {cur_max_p_ ave_} {
        foreach d {fwd rev} {
            append line " " [$q($d) set $v]
        }
    }
    puts $redlog $line
    foreach d {fwd rev} {
        set sum($d,maxp) [expr {$sum($d,maxp) + [$q($d) set cur_max_p_]}]
        set sum($d,ave) [expr {$sum($d,ave) + [$q($d) set ave_]}]
    }
    incr nsamp
    $ns at [expr {$now + $P(sample)}] "sample"
}

proc finish {} {
    global ns qm q base P outdir sum nsamp redlog
    set f [open $outdir/stats.txt w]
    write_counters $f
    if {$P(queue) == "RED"} {
        foreach d {fwd rev} {
            puts $f "$d.maxp_time_avg [expr {$sum($d,maxp) / max($nsamp, 1)}]"
            puts $f "$d.ave_time_avg [expr {$sum($d,ave) / max($nsamp, 1)}]"
        }
    }
    close $f
    if {$P(queue) == "RED"} {
        close $redlog
    }
    exit 0
}

$ns at 0.0 "$pm(0) start; $pm(1) start"
$ns at $P(warmup) "snapshot"
if {$P(queue) == "RED"} {
    set redlog [open $outdir/red.txt w]
    $ns at $P(warmup) "sample"
}
$ns at $P(stop) "finish"
$ns run
