#!/bin/bash
# wait until /tmp/resi/$2 exists or $1 seconds pass, then tar /tmp/resi into $OUT
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resi/${2:-done3} ]] && (( $(date +%s) < end )); do sleep 5; done
ls /tmp/resi; cat /tmp/resi/status 2>/dev/null; tail -2 /tmp/resi/gputest.txt
tar -czf $OUT/resi.tgz -C /tmp resi
tail -22 /tmp/resi/seed/pass.log 2>/dev/null | cut -c1-200; tail -25 /tmp/resi/climb/pass.log 2>/dev/null | cut -c1-250; tail -30 /tmp/resi/contest/pass.log 2>/dev/null | cut -c1-250
