#!/bin/bash
# wait until /tmp/resf/$2 exists or $1 seconds pass, then tar /tmp/resf into $OUT
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resf/${2:-done1} ]] && (( $(date +%s) < end )); do sleep 5; done
ls /tmp/resf; cat /tmp/resf/status 2>/dev/null
tar -czf $OUT/resf.tgz -C /tmp resf
tail -n 12 /tmp/resf/probe_*.txt; cat /tmp/resf/seed/pass.log 2>/dev/null | cut -c1-400
