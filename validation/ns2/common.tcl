# What the end-to-end scripts share (sourced by packmime_e2e.tcl, red_greedy.tcl and
# study_c_cell.tcl): the dumbbell, the bottleneck's monitors, and the counters they report.

# dumbbell NS LEFT RIGHT MID_LEFT MID_RIGHT ?ACCESS_LIMIT?
# LEFT -- MID_LEFT == MID_RIGHT -- RIGHT: access links of P(access_bw)/P(access_delay) with
# drop-tail queues of ACCESS_LIMIT packets (default 10^6: they never drop), the bottleneck of
# P(bw)/P(delay) with the queue class P(queue) and P(limit) packets in both directions
# (ns-2 `queue-limit`). Then a QueueMonitor on each bottleneck direction
# (tcl/lib/ns-link.tcl init-monitor: counters and integrators): qm(fwd) on MID_LEFT ->
# MID_RIGHT, qm(rev) the other way, and q(fwd), q(rev) their queues.
proc dumbbell {ns left right mid_left mid_right {access_limit 1000000}} {
    global P qm q
    $ns duplex-link $left $mid_left $P(access_bw) $P(access_delay) DropTail
    $ns duplex-link $right $mid_right $P(access_bw) $P(access_delay) DropTail
    $ns duplex-link $mid_left $mid_right $P(bw) $P(delay) $P(queue)
    foreach {a b} [list $left $mid_left $mid_left $left $right $mid_right $mid_right $right] {
        $ns queue-limit $a $b $access_limit
    }
    $ns queue-limit $mid_left $mid_right $P(limit)
    $ns queue-limit $mid_right $mid_left $P(limit)
    set qm(fwd) [$ns monitor-queue $mid_left $mid_right 0]
    set qm(rev) [$ns monitor-queue $mid_right $mid_left 0]
    set q(fwd) [[$ns link $mid_left $mid_right] queue]
    set q(rev) [[$ns link $mid_right $mid_left] queue]
}

# Time-integral up to now of a monitor's queue, in packets or bytes (the integrator adds at
# each change only). The monitor counts at enqueue and dequeue: packets waiting, not the one
# on the wire.
proc integral {m {which pkts}} {
    global ns
    set in [$m get-$which-integrator]
    return [expr {[$in set sum_] + [$in set lasty_] * ([$ns now] - [$in set lastx_])}]
}

# The monitors' counters now (called at the end of the warm-up).
proc snapshot {} {
    global qm base
    foreach d {fwd rev} {
        foreach v {parrivals_ pdrops_ pdepartures_ bdepartures_} {
            set base($d,$v) [$qm($d) set $v]
        }
        set base($d,qint) [integral $qm($d) pkts]
        set base($d,qbint) [integral $qm($d) bytes]
    }
}

# Writes to channel F the measured time and, per direction, what the counters and integrals
# gained since `snapshot`, and for RED queues the parameters RED settled to.
proc write_counters {f} {
    global ns qm q base P
    puts $f "measured_s [expr {[$ns now] - $P(warmup)}]"
    foreach d {fwd rev} {
        foreach v {parrivals_ pdrops_ pdepartures_ bdepartures_} {
            puts $f "$d.$v [expr {[$qm($d) set $v] - $base($d,$v)}]"
        }
        puts $f "$d.qint [expr {[integral $qm($d) pkts] - $base($d,qint)}]"
        puts $f "$d.qbint [expr {[integral $qm($d) bytes] - $base($d,qbint)}]"
        if {$P(queue) == "RED"} {
            foreach v {thresh_ maxthresh_ q_weight_ cur_max_p_ ave_ mean_pktsize_ bottom_} {
                puts $f "$d.$v [$q($d) set $v]"
            }
        }
    }
}

# Both PackMime instances number their connections 1, 2, ... and use the number as the flow
# id, which DelayBox keys its flows by (with the two hosts): instance PM's ids are moved
# OFFSET up (the body is packmime.tcl's `setup-tcp` plus the offset).
proc offset_flow_ids {pm offset} {
    $pm proc setup-tcp {tcp fid} "
        \$tcp set fid_ \[expr {\$fid + $offset}\]
        \$tcp proc done {} \"\$self done \$tcp\"
    "
}
