#!/bin/bash
# wait until /tmp/resc/$2 exists or $1 seconds pass, then tar /tmp/resc into $OUT
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resc/${2:-done2} ]] && (( $(date +%s) < end )); do sleep 5; done
ls /tmp/resc; cat /tmp/resc/status 2>/dev/null
tar -czf $OUT/resc.tgz -C /tmp resc
cat /tmp/resc/*.txt; grep -h "^|\|wall_s" /tmp/resc/export/*.out 2>/dev/null
