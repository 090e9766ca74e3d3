#!/bin/bash
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resm2/done1 ]] && (( $(date +%s) < end )); do sleep 3; done
cat /tmp/resm2/status; tar -czf $OUT/resm2.tgz -C /tmp resm2
python3 -c "
import json,sys
r=json.loads(open('/tmp/resm2/full.json').read().strip().splitlines()[-1])
print(r['status'], r.get('score'), r.get('error'), {k: v for k, v in (r.get('timings') or {}).items()})
for s in r.get('shapes', [])[:3]: print(s['shape'], s['mean_us'])
" 2>&1 | cut -c1-600
grep -v NVIDIA /tmp/resm2/probe_32x160.txt | tail -7
