#!/bin/bash
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resm/done ]] && (( $(date +%s) < end )); do sleep 5; done
cat /tmp/resm/status 2>/dev/null; tar -czf $OUT/resm.tgz -C /tmp resm; tail -3 /tmp/resm/gputest.txt; tail -12 /tmp/resm/climb/pass.log; tail -25 /tmp/resm/seed/pass.log
