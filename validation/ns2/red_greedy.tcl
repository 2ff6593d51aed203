# Greedy TCP flows through one bottleneck (RED, or P(queue)) (validation/suites/e2e.py, "greedy RED").
#
#   ns red_greedy.tcl PARAMS OUTDIR
#
# PARAMS is a Tcl file written by the Python driver: it sets the array P (below) and any
# Queue/RED class default that differs from ns-2.35's (tcl/lib/ns-default.tcl), before the
# link exists. Topology, as aqmlab's dumbbell with one host per side:
#   hL --access-- r0 ==bottleneck (RED)== r1 --access-- hR
# P(flows) connections of Agent/TCP/FullTcp/Newreno with ns-2.35's defaults (the class
# aqmlab's ns2.35-fulltcp preset models, docs/tcp.md), each carrying an infinite
# Application/FTP from hL to hR, starting at uniform times in [0, P(start_jitter)) (an RNG
# seeded with P(seed)). The access links never drop (limit 10^6) and run at P(access_bw).
#
# Output in OUTDIR: stats.txt as packmime_e2e.tcl's (fwd = r0 -> r1, rev = r1 -> r0), plus
# the time-integral of the bytes waiting (qbint), the time average of RED's ave_ sampled every
# P(sample) s after P(warmup) (ave_time_avg), and red.tr: every P(sample) s after the warm-up,
# "time ave_ packets_waiting bytes_waiting cur_max_p_" of the forward queue.

if {$argc != 2} {
    puts stderr "usage: ns red_greedy.tcl PARAMS OUTDIR"
    exit 2
}
set params [lindex $argv 0]
set outdir [lindex $argv 1]
source $params

set ns [new Simulator]
$defaultRNG seed $P(seed)

set hL [$ns node]
set hR [$ns node]
set r0 [$ns node]
set r1 [$ns node]
source [file join [file dirname [info script]] common.tcl]
dumbbell $ns $hL $hR $r0 $r1

set starts [new RNG]
$starts seed $P(seed)
for {set i 0} {$i < $P(flows)} {incr i} {
    set src($i) [new Agent/TCP/FullTcp/Newreno]
    set dst($i) [new Agent/TCP/FullTcp/Newreno]
    $src($i) set fid_ $i
    $dst($i) set fid_ $i
    $ns attach-agent $hL $src($i)
    $ns attach-agent $hR $dst($i)
    $ns connect $src($i) $dst($i)
    $dst($i) listen
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $src($i)
    $ns at [$starts uniform 0 $P(start_jitter)] "$ftp($i) start"
}

set avesum 0.0
set aven 0
set trace [open $outdir/red.tr w]
proc sample {} {
    global ns q qm P avesum aven trace
    if {$P(queue) != "RED"} {
        return
    }
    set a [$q(fwd) set ave_]
    set avesum [expr {$avesum + $a}]
    incr aven
    puts $trace "[$ns now] $a [$qm(fwd) set pkts_] [$qm(fwd) set size_] [$q(fwd) set cur_max_p_]"
    $ns at [expr {[$ns now] + $P(sample)}] "sample"
}

proc finish {} {
    global ns qm q base P outdir avesum aven trace
    close $trace
    set f [open $outdir/stats.txt w]
    write_counters $f
    if {$P(queue) == "RED"} {
        puts $f "fwd.ave_time_avg [expr {$avesum / $aven}]"
    }
    close $f
    exit 0
}

$ns at $P(warmup) "snapshot; sample"
$ns at $P(stop) "finish"
$ns run
