# The workload of packmime_e2e.tcl without its network: ns-2.35's own PackMime random
# variables, drawn in a loop (validation/suites/workload.py).
#
#   ns packmime_draws.tcl PARAMS OUTDIR
#
# PARAMS sets the array P: seed, rate (new connections/s of each PackMime instance), stop (s).
# The random number generators are made as packmime_e2e.tcl makes them, in the same order and
# with the same substreams, so that each variable's sequence is the one a packmime_e2e.tcl
# run of the same seed draws: first the four DelayBox RNGs (instance 0's client-side and
# server-side box, then instance 1's; seed − 1 substreams each, pm-delaybox.tcl's `run`
# idiom), then each instance's eleven (packmime_HTTP.cc `start`: flow arrivals, request
# sizes, response sizes, server delays and seven HTTP/1.1 variables HTTP/1.0 never draws;
# `set-run` seed substreams each). An ns-2 RNG is the next stream of the package's MRG32k3a
# (tools/rng.cc), so only the order of creation matters.
#
# Per connection, as PackMime-HTTP/1.0 draws them (packmime_HTTP.cc): the first opens at 0,
# each one draws its request and response sizes (`get_reqsize`/`get_rspsize`, truncated to
# int, 0 read as 1) and then the gap to the next (`connection_interval`); the server delay
# and the two boxes' delays (PackMimeHTTPXmit: a one-way delay in ms, applied in both
# directions) are drawn here in connection order. In a run the server delay is drawn when the
# request reaches the server and the server-side box's delay when the SYN reaches that box,
# so a run pairs those two sequences with its connections in arrival order; the sequences,
# hence their distributions, are the same.
#
# ns-2's `value` command returns a variable's value printed with "%6e" (tools/ranvar.cc):
# seven significant digits. Sizes below 10^7 bytes are exact; larger ones, and the opening
# times summed from the gaps, carry that rounding (a relative 5e-7; over 360 s the times
# drift by well under a microsecond).
#
# Output: draws<i>.csv for instance i = 0, 1, in the columns of a replay file
# (validation/ns2_record.py): start_s, request_bytes, response_bytes, server_delay_s, rtt_ms
# (twice the two one-way delays), client_rtt_ms (twice the client-side one).

if {$argc != 2} {
    puts stderr "usage: ns packmime_draws.tcl PARAMS OUTDIR"
    exit 2
}
set params [lindex $argv 0]
set outdir [lindex $argv 1]
source $params

set ns [new Simulator]
$defaultRNG seed $P(seed)

proc new_rng {substreams} {
    set rng [new RNG]
    for {set j 0} {$j < $substreams} {incr j} {
        $rng next-substream
    }
    return $rng
}

proc variable {rng class args} {
    set rv [eval new RandomVariable/$class $args]
    $rv use-rng $rng
    return $rv
}

for {set i 0} {$i < 2} {incr i} {
    set client_box($i) [variable [new_rng [expr {$P(seed) - 1}]] PackMimeHTTPXmit $P(rate) 0]
    set server_box($i) [variable [new_rng [expr {$P(seed) - 1}]] PackMimeHTTPXmit $P(rate) 1]
}
for {set i 0} {$i < 2} {incr i} {
    for {set k 0} {$k < 11} {incr k} {
        set rng($i,$k) [new_rng $P(seed)]
    }
    set arrive($i) [variable $rng($i,0) PackMimeHTTPFlowArrive $P(rate)]
    set req($i) [variable $rng($i,1) PackMimeHTTPFileSize $P(rate) 0]
    set rsp($i) [variable $rng($i,2) PackMimeHTTPFileSize $P(rate) 1]
    # packmime_HTTP.cc: SERVER_DELAY_SHAPE, SERVER_DELAY_SCALE.
    set delay($i) [variable $rng($i,3) PackMimeHTTPServerDelay 0.63 305]
}

proc at_least_one {bytes} {
    return [expr {$bytes == 0 ? 1 : $bytes}]
}

for {set i 0} {$i < 2} {incr i} {
    set f [open $outdir/draws$i.csv w]
    puts $f "start_s,request_bytes,response_bytes,server_delay_s,rtt_ms,client_rtt_ms"
    set t 0.0
    while {$t < $P(stop)} {
        set q [at_least_one [expr {int([$req($i) value])}]]
        set r [at_least_one [expr {int([$rsp($i) value])}]]
        set c [$client_box($i) value]
        set s [$server_box($i) value]
        set d [$delay($i) value]
        puts $f [format "%.9f,%d,%d,%.6f,%.6f,%.6f" $t $q $r $d [expr {2 * ($c + $s)}] \
            [expr {2 * $c}]]
        set t [expr {$t + [$arrive($i) value]}]
    }
    close $f
}
exit 0
