#!/bin/bash
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resg/${2:-done1} ]] && (( $(date +%s) < end )); do sleep 5; done
cat /tmp/resg/status; tar -czf $OUT/resg.tgz -C /tmp resg
grep -v "^==PROF==\|^  *-\+$" /tmp/resg/ncu_colk_qr6.txt | grep -A200 "colk_qr6" | head -150
