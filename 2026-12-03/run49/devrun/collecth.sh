#!/bin/bash
# wait until /tmp/resh/$2 exists or $1 seconds pass, then tar /tmp/resh into $OUT
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resh/${2:-done1} ]] && (( $(date +%s) < end )); do sleep 5; done
ls /tmp/resh; cat /tmp/resh/status 2>/dev/null
tar -czf $OUT/resh.tgz -C /tmp resh
tail -n 12 /tmp/resh/probe_*.txt; cat /tmp/resh/seed/pass.log 2>/dev/null | cut -c1-400
