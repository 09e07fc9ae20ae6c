#!/usr/bin/env bash
# Removes what install.sh put into a prefix: uninstall.sh <prefix>
set -euo pipefail
prefix=${1:?usage: uninstall.sh <prefix>}
manifest="$prefix/share/skillhost/installed-files"
[ -f "$manifest" ] || { echo "uninstall.sh: nothing installed in $prefix (no $manifest)" >&2; exit 1; }
count=0
while IFS= read -r file; do
    case "$file" in "$prefix"/*) rm -f "$file"; count=$((count + 1)) ;; esac
done < "$manifest"
# The folders install.sh made, when nothing else is in them.
for folder in share/skillhost/swift/SkillSDK/Sources/SkillSDK/include share/skillhost/swift/SkillSDK/Sources/SkillSDK \
    share/skillhost/swift/SkillSDK/Sources/SkillSDKSwift share/skillhost/swift/SkillSDK/Sources \
    share/skillhost/swift/SkillSDK share/skillhost/swift share/skillhost lib/skillhost/plugins lib/skillhost \
    include/skillhost lib/pkgconfig share/man/man1 share/man bin lib include share; do
    rmdir "$prefix/$folder" 2>/dev/null || true
done
echo "removed skillhost from $prefix ($count files)"
