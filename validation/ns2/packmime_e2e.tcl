# Two-way PackMime-HTTP through DelayBoxes and one 10 Mb/s bottleneck, end to end
# (validation/suites/e2e.py; the scenario of bench/packmime_ns2_anchor.toml), recording its
# workload connection by connection so that aqmlab can also replay the same connections.
#
#   ns packmime_e2e.tcl PARAMS OUTDIR
#
# PARAMS is a Tcl file written by the Python driver. It sets the array P (below) and, before
# any link or agent exists, the class defaults that differ from ns-2.35's for the variant under
# test (Queue/RED set ..., Agent/TCP set ecn_ 1), since ns-2 objects read their defaults when
# they are created. Every other setting is ns-2.35's own default (tcl/lib/ns-default.tcl).
#
# The script follows tcl/ex/packmime/pm-delaybox.tcl (ns-2.35), made two-way:
#   hL --access-- db0 ==bottleneck== db1 --access-- hR
# hL and hR are the host "clouds" of the two sides, db0 and db1 DelayBox nodes. Instance 0 of
# PackMimeHTTP has its clients on hL and its servers on hR; instance 1 the other way round.
# Both use `set-TCP Newreno` (Agent/TCP/FullTcp/Newreno, tcl/packmime/packmime.tcl
# `alloc-tcp`) and HTTP/1.0 (`set-http-1.1` is not called: packmime_HTTP.cc http_1_1_ false).
# DelayBox rules carry a delay only (delaybox.cc: the three-argument `add-rule` leaves loss and
# link speed unset): the client-side box draws PackMimeHTTPXmit type 0 (CLIENT), the
# server-side box type 1 (SERVER), once per flow, and delays both directions of the flow by it
# (DelayBoxClassifier symmetric_ 1). A rule is looked up by the SYN's (source, destination),
# so one node per side can carry both instances' hosts.
#
# P(seed) seeds ns-2's default RNG (`$defaultRNG seed`), selects PackMime's substream
# (`set-run`, packmime_HTTP.cc `start`) and advances the delay variables' RNGs by as many
# substreams (pm-delaybox.tcl's `run` idiom). Recording draws no random number: the run is the
# one it would be without it.
#
# Output in OUTDIR:
#   pm0.dat, pm1.dat: PackMime's response log (`set-outfile`), one line per response whose
#     request was sent at or after P(warmup) (`set-warmup`), fields: time of the last byte,
#     request bytes, response bytes, response time in ms (from the request's write; for the
#     first request of a connection that write opens the connection, so the handshake is in).
#   stats.txt: "key value" lines per bottleneck direction (fwd = db0 -> db1, rev =
#     db1 -> db0), counted from P(warmup) to P(stop) by a QueueMonitor on the link:
#     arrivals, drops, departures, departed bytes, the time-integral of the queue in packets
#     (packets waiting, not the one on the wire: the monitor counts at enqueue and dequeue),
#     and for RED queues the parameters RED settled to.
# and the workload (validation/ns2_record.py turns it into aqmlab replay files):
#   conn<i>.txt: one line per connection instance i opens, in order: its flow id (packmime.tcl
#     `setup-tcp`; instance 1's moved up by 100000000) and the time it opened (the client's
#     connect and request write, packmime_HTTP.cc setup_connection), seconds, 9 decimals.
#   samples<i>.txt: PackMime's `set-samples-outfile`, one line per request in the same order
#     (HTTP/1.0: one per connection): time, request bytes, response bytes, server address.
#   delays0.txt, delays1.txt: DelayBox's `set-delay-file` of db0 and db1: "src dst fid delay
#     ms" for each direction of each flow the box sees (the delay each of its packets gets).
#   on stderr, PackMime's debug output at level 2, whose "server NAME (ID)> waiting D s"
#     lines give each request's server delay (packmime_HTTP.cc ServerApp::recv); a server
#     app belongs to the instance whose "new flow" line precedes the app's allocation.

if {$argc != 2} {
    puts stderr "usage: ns packmime_e2e.tcl PARAMS OUTDIR"
    exit 2
}
set params [lindex $argv 0]
set outdir [lindex $argv 1]
source $params

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
dumbbell $ns $hL $hR $db0 $db1
$db0 set-delay-file $outdir/delays0.txt
$db1 set-delay-file $outdir/delays1.txt

set side(0) [list $hL $hR $db0 $db1]
set side(1) [list $hR $hL $db1 $db0]
for {set i 0} {$i < 2} {incr i} {
    lassign $side($i) cnode snode cbox sbox
    set pm($i) [new PackMimeHTTP]
    $pm($i) set-client $cnode
    $pm($i) set-server $snode
    $pm($i) set-TCP Newreno
    $pm($i) set-rate $P(rate)
    $pm($i) set-run $P(seed)
    $pm($i) set-warmup $P(warmup)
    $pm($i) set-outfile $outdir/pm$i.dat
    $pm($i) set-samples-outfile $outdir/samples$i.txt
    $pm($i) set-debug 2
    foreach {name type box} [list cdelay 0 $cbox sdelay 1 $sbox] {
        set rng [new RNG]
        for {set j 1} {$j < $P(seed)} {incr j} {
            $rng next-substream
        }
        set rv [new RandomVariable/PackMimeHTTPXmit $P(rate) $type]
        $rv use-rng $rng
        $box add-rule [$cnode id] [$snode id] $rv
    }
}

# common.tcl's offset_flow_ids, and each connection logged once: PackMime calls setup-tcp for
# the server's agent, then the client's, when the connection opens.
set connlog(0) [open $outdir/conn0.txt w]
set connlog(1) [open $outdir/conn1.txt w]
proc log_conn {i fid} {
    global connlog ns
    puts $connlog($i) [format "%d %.9f" $fid [$ns now]]
}
foreach {i offset} {0 0 1 100000000} {
    $pm($i) proc setup-tcp {tcp fid} "
        \$tcp set fid_ \[expr {\$fid + $offset}\]
        \$tcp proc done {} \"\$self done \$tcp\"
        if {\[incr ::seen($i,\$fid)\] == 1} { log_conn $i \[expr {\$fid + $offset}\] }
    "
}

proc finish {} {
    global outdir connlog
    set f [open $outdir/stats.txt w]
    write_counters $f
    close $f
    close $connlog(0)
    close $connlog(1)
    exit 0
}

$ns at 0.0 "$pm(0) start; $pm(1) start"
$ns at $P(warmup) "snapshot"
$ns at $P(stop) "finish"
$ns run
