#!/bin/bash
# wait until /tmp/resb/$2 exists or $1 seconds pass, then tar /tmp/resb into $OUT
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resb/${2:-done2} ]] && (( $(date +%s) < end )); do sleep 5; done
ls /tmp/resb; cat /tmp/resb/status 2>/dev/null
tar -czf $OUT/resb.tgz -C /tmp resb
cat /tmp/resb/*.txt 2>/dev/null
