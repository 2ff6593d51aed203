# One bottleneck queue under test, for the decision-by-decision comparison of queue
# disciplines (validation/README.md, docs/validation.md).
#
#   ns aqm_queue.tcl PARAMS OUTDIR
#
# PARAMS is a Tcl file written by the Python driver: it sets the array P (below) and the
# class defaults of the queue under test (Queue/RED set thresh_ 5, ...) before the link is
# built, since ns-2 queues read their parameters when they are created and reset.
#
# Topology: the router r sends over a simplex link r -> d (rate P(rate), delay P(delay)) whose
# queue P(queue) is under test. Traffic, by P(traffic):
#   onoff: P(udp_flows) UDP agents attached to r itself (so a packet reaches the queue at the
#          instant it is sent): Exponential on/off sources of P(pkt_size)-byte packets, rate
#          P(on_rate) while on, mean on/off times P(on_s)/P(off_s); they start at random times
#          in the first second (ns-2's default stream, seeded by P(seed)).
#   tcp:   P(tcp_flows) one-way TCP flows (Agent/TCP/P(tcp_variant), packetSize_
#          P(pkt_size), window_ P(window)) from hosts h_i to sinks on d, host i's access link
#          100 Mb/s with delay P(base_delay_ms) + i * P(delay_step_ms) ms; ECN-capable when
#          P(ecn) is 1; the ACKs return over d -> r (drop-tail, never full).
# Output: OUTDIR/events.tr, ns-2's queue trace of r -> d (+ - r d events, times rounded to the
# microsecond), each line followed by " | " and the exact simulation time, then " | " and the
# values of the queue's instance variables P(state_vars) at that moment (ns-2 prints them with
# 6 significant digits): the state after an arrival is the one read at the next event. OUTDIR/vars.tr: the traced variables
# P(trace_vars) (each line "<letter> <time> <value>", written when a value changes; for the
# timer-driven updates of PI and REM).

if {$argc != 2} {
    puts stderr "usage: ns aqm_queue.tcl PARAMS OUTDIR"
    exit 2
}
set params [lindex $argv 0]
set outdir [lindex $argv 1]
source $params

set ns [new Simulator]
ns-random $P(seed)

set r [$ns node]
set d [$ns node]
$ns simplex-link $r $d $P(rate) $P(delay) $P(queue)
$ns simplex-link $d $r $P(rate) $P(delay) DropTail
$ns queue-limit $d $r 100000
set q [[$ns link $r $d] queue]

# Every trace event calls back `handle`, which appends the queue's state to the line.
Trace set callback_ 1
set qtrace [open $outdir/events.tr w]
Trace instproc handle {line} {
    global ns q qtrace P
    set values {}
    foreach v $P(state_vars) {
        lappend values [$q set $v]
    }
    puts $qtrace "$line | [$ns now] | [join $values { }]"
}
$ns trace-queue $r $d [open /dev/null w]
set vtrace [open $outdir/vars.tr w]
foreach v $P(trace_vars) {
    $q trace $v
}
if {[llength $P(trace_vars)] > 0} {
    $q attach $vtrace
}

set starts [new RNG]
$starts seed $P(seed)

if {$P(traffic) == "onoff"} {
    for {set i 0} {$i < $P(udp_flows)} {incr i} {
        set udp($i) [new Agent/UDP]
        $udp($i) set packetSize_ $P(pkt_size)
        $udp($i) set fid_ $i
        $ns attach-agent $r $udp($i)
        set sink($i) [new Agent/Null]
        $ns attach-agent $d $sink($i)
        $ns connect $udp($i) $sink($i)
        set src($i) [new Application/Traffic/Exponential]
        $src($i) set packetSize_ $P(pkt_size)
        $src($i) set burst_time_ $P(on_s)
        $src($i) set idle_time_ $P(off_s)
        $src($i) set rate_ $P(on_rate)
        $src($i) attach-agent $udp($i)
        $ns at [$starts uniform 0 1] "$src($i) start"
    }
} elseif {$P(traffic) == "tcp"} {
    for {set i 0} {$i < $P(tcp_flows)} {incr i} {
        set h($i) [$ns node]
        set delay [expr {$P(base_delay_ms) + $i * $P(delay_step_ms)}]
        $ns duplex-link $h($i) $r 100Mb ${delay}ms DropTail
        $ns queue-limit $h($i) $r 100000
        $ns queue-limit $r $h($i) 100000
        set tcp($i) [new Agent/TCP/$P(tcp_variant)]
        $tcp($i) set packetSize_ $P(pkt_size)
        $tcp($i) set window_ $P(window)
        $tcp($i) set fid_ $i
        $tcp($i) set ecn_ $P(ecn)
        $ns attach-agent $h($i) $tcp($i)
        set sink($i) [new Agent/TCPSink]
        $sink($i) set ecn_ $P(ecn)
        $ns attach-agent $d $sink($i)
        $ns connect $tcp($i) $sink($i)
        set ftp($i) [new Application/FTP]
        $ftp($i) attach-agent $tcp($i)
        $ns at [$starts uniform 0 1] "$ftp($i) start"
    }
} else {
    puts stderr "aqm_queue.tcl: P(traffic) = $P(traffic): expected onoff or tcp"
    exit 2
}

proc finish {} {
    global ns qtrace vtrace
    $ns flush-trace
    close $qtrace
    close $vtrace
    exit 0
}
$ns at $P(duration) "finish"
$ns run
