#!/bin/bash
# wait until /tmp/resa/$2 exists or $1 seconds pass, then tar /tmp/resa into $OUT
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resa/${2:-done2} ]] && (( $(date +%s) < end )); do sleep 5; done
ls /tmp/resa; cat /tmp/resa/status 2>/dev/null
tar -czf $OUT/resa.tgz -C /tmp resa
tail -3 /tmp/resa/noise/pass.log 2>/dev/null
