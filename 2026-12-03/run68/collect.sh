#!/bin/bash
# wait up to $1 s for /tmp/res33/$2, then pack what there is into $OUT/res.tgz (bundles over 20 MB left out)
R=${R:-/tmp/res33}
for _ in $(seq 1 "$1"); do [[ -e $R/$2 ]] && break; sleep 1; done
cat $R/status 2>/dev/null; ls $R
tar -czf $OUT/res.tgz -C $R --exclude='*.bundle' . 2>/dev/null
mkdir -p $OUT/bundles && find $R -name '*.bundle' -size -20M -exec sh -c 'cp "$1" "$2/$(basename $(dirname $1))_$(basename $1)"' _ {} $OUT/bundles \;
true
