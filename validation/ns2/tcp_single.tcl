# One Full-TCP connection, packet by packet (validation/README.md, docs/validation.md).
#
#   ns tcp_single.tcl PARAMS OUTDIR
#
# PARAMS (written by the Python driver) sets the array P:
#   variant       FullTcp, FullTcp/Newreno or FullTcp/Sack (both ends)
#   tcp           list of "instance-variable value" pairs set on both agents
#   bytes         application bytes the client sends (then it closes)
#   start         when it connects (s)
#   access_rate, access_delay, bn_rate, bn_delay, bn_limit
#                 the chain client -- r1 -- r2 -- server: access links, bottleneck, and the
#                 bottleneck's DropTail limit (both directions)
#   droplist      packets (counted from 0, every packet the client sends) lost at the end of
#                 the client's access link (after transmission and propagation)
#   marklist      packets (same count) that get CE set as they enter that link
#   ackdroplist   packets (counted from 0, every packet the server sends) lost at the end of
#                 the server's access link
#   duration      end of the run (s)
# Output: OUTDIR/events.tr: ns-2's trace (with the TCP header: seqno uid ackno flags hdrlen
# sa) of every packet either end sends ('+' on its access link), each line followed by
# " | " and the exact clock, then " | " and cwnd_ ssthresh_ of the client and the server.

if {$argc != 2} {
    puts stderr "usage: ns tcp_single.tcl PARAMS OUTDIR"
    exit 2
}
source [lindex $argv 0]
set outdir [lindex $argv 1]

set ns [new Simulator]
Trace set show_tcphdr_ 1

set c [$ns node]
set r1 [$ns node]
set r2 [$ns node]
set s [$ns node]
$ns duplex-link $c $r1 $P(access_rate) $P(access_delay) DropTail
$ns duplex-link $r1 $r2 $P(bn_rate) $P(bn_delay) DropTail
$ns duplex-link $r2 $s $P(access_rate) $P(access_delay) DropTail
foreach {a b} [list $c $r1 $r1 $c $r2 $s $s $r2] {
    $ns queue-limit $a $b 100000
}
$ns queue-limit $r1 $r2 $P(bn_limit)
$ns queue-limit $r2 $r1 $P(bn_limit)

set src [new Agent/TCP/$P(variant)]
set dst [new Agent/TCP/$P(variant)]
foreach {k v} $P(tcp) {
    $src set $k $v
    $dst set $k $v
}
$ns attach-agent $c $src
$ns attach-agent $s $dst
$ns connect $src $dst
$dst listen

if {[llength $P(marklist)] > 0} {
    set marker [new ErrorModel/List]
    $marker set markecn_ true
    $marker droplist $P(marklist)
    $ns lossmodel $marker $c $r1
}
if {[llength $P(droplist)] > 0} {
    set dropper [new ErrorModel/List]
    $dropper droplist $P(droplist)
    $dropper drop-target [new Agent/Null]
    $ns link-lossmodel $dropper $c $r1
}
if {[info exists P(ackdroplist)] && [llength $P(ackdroplist)] > 0} {
    set ackdropper [new ErrorModel/List]
    $ackdropper droplist $P(ackdroplist)
    $ackdropper drop-target [new Agent/Null]
    $ns link-lossmodel $ackdropper $s $r2
}

Trace set callback_ 1
set out [open $outdir/events.tr w]
Trace instproc handle {line} {
    global ns out src dst
    if {[string index [string trimleft $line] 0] != "+"} {
        return
    }
    set state [list [$src set cwnd_] [$src set ssthresh_] [$dst set cwnd_] [$dst set ssthresh_]]
    puts $out "$line | [$ns now] | [join $state { }]"
}
$ns trace-queue $c $r1 [open /dev/null w]
$ns trace-queue $s $r2 [open /dev/null w]

# The client writes its bytes and closes once they are all sent and acknowledged, as a
# PackMime-HTTP server does (`sendmsg` with MSG_EOF sets close_on_empty_). A write on a
# CLOSED agent resets it (tcp-full.cc advance_bytes -> reset(), which clears
# close_on_empty_), so the flag is set just after the write opens the connection.
$ns at $P(start) "$src advance-bytes $P(bytes)"
$ns at [expr {$P(start) + 1e-9}] "$src set close_on_empty_ true"
proc finish {} {
    global out
    close $out
    exit 0
}
$ns at $P(duration) "finish"
$ns run
