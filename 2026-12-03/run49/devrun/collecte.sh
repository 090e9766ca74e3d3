#!/bin/bash
# wait until /tmp/rese/$2 exists or $1 seconds pass, then tar /tmp/rese into $OUT
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/rese/${2:-done1} ]] && (( $(date +%s) < end )); do sleep 5; done
ls /tmp/rese; cat /tmp/rese/status 2>/dev/null
tar -czf $OUT/rese.tgz -C /tmp rese
tail -n 12 /tmp/rese/probe_*.txt; cat /tmp/rese/seed/pass.log 2>/dev/null | cut -c1-400
