#!/bin/bash
# seconds, the done file to wait for
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resn/$2 ]] && (( $(date +%s) < end )); do sleep 3; done
cat /tmp/resn/status 2>/dev/null; tar -czf $OUT/resn.tgz -C /tmp resn
grep -E "^== |busy|results in|an hour|exclusive_s|relaxed_s|shared_s|lock_wait|tests_s|warm_up|bench_warmup|calibrate" /tmp/resn/pipe/pass.log 2>/dev/null | cut -c1-200 | tail -60
tail -14 /tmp/resn/cheats/pass.log 2>/dev/null
tail -12 /tmp/resn/noise/pass.log 2>/dev/null
