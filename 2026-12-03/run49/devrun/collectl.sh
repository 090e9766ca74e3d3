#!/bin/bash
end=$(( $(date +%s) + $1 ))
while [[ ! -e /tmp/resl/${2:-done3} ]] && (( $(date +%s) < end )); do sleep 3; done
cat /tmp/resl/status; tar -czf $OUT/resl.tgz -C /tmp resl
for f in /tmp/resl/*.txt; do echo "## $f"; grep -v "^NVIDIA" $f | tail -7; done
