# The dumbbell both end-to-end scripts build (sourced by packmime_e2e.tcl and red_greedy.tcl).
#
#   dumbbell NS LEFT RIGHT MID_LEFT MID_RIGHT
#
# LEFT -- MID_LEFT == MID_RIGHT -- RIGHT: access links of P(access_bw)/P(access_delay) with
# drop-tail queues that never drop (10^6 packets), the bottleneck of P(bw)/P(delay) with the
# queue class P(queue) and P(limit) packets in both directions (ns-2 `queue-limit`).
proc dumbbell {ns left right mid_left mid_right} {
    global P
    $ns duplex-link $left $mid_left $P(access_bw) $P(access_delay) DropTail
    $ns duplex-link $right $mid_right $P(access_bw) $P(access_delay) DropTail
    $ns duplex-link $mid_left $mid_right $P(bw) $P(delay) $P(queue)
    foreach {a b} [list $left $mid_left $mid_left $left $right $mid_right $mid_right $right] {
        $ns queue-limit $a $b 1000000
    }
    $ns queue-limit $mid_left $mid_right $P(limit)
    $ns queue-limit $mid_right $mid_left $P(limit)
}
