#!/bin/bash
# wait until /tmp/resd/$2 exists or $1 seconds pass, then tar /tmp/resd into $OUT
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resd/${2:-done2} ]] && (( $(date +%s) < end )); do sleep 5; done
ls /tmp/resd; cat /tmp/resd/status 2>/dev/null
tar -czf $OUT/resd.tgz -C /tmp resd
cat /tmp/resd/*.txt; grep -h "^|\|wall_s" /tmp/resd/export/*.out 2>/dev/null
