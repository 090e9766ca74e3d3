#!/bin/bash
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resk/${2:-done1} ]] && (( $(date +%s) < end )); do sleep 5; done
cat /tmp/resk/status 2>/dev/null; tail -2 /tmp/resk/gputest.txt
tar -czf $OUT/resk.tgz -C /tmp resk
tail -30 /tmp/resk/contest/pass.log 2>/dev/null | cut -c1-300
