#!/bin/bash
# wait until /tmp/resj/$2 exists or $1 seconds pass, then tar /tmp/resj into $OUT
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resj/${2:-done2} ]] && (( $(date +%s) < end )); do sleep 5; done
ls /tmp/resj; cat /tmp/resj/status 2>/dev/null
tar -czf $OUT/resj.tgz -C /tmp resj
tail -5 /tmp/resj/pipeline.out 2>/dev/null
