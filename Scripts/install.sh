#!/usr/bin/env bash
# Installs a built skillhost into a prefix: install.sh <build products folder> <prefix>
#   bin/skillhost                       the host (it finds its plugins through its resolved path)
#   bin/skillhost-sandbox               confines a skill folder's script, then becomes it
#   bin/skillhost-worker                runs one process-mode plugin (looked for beside the skillhost binary)
#   lib/skillhost/plugins/libskill-*.so the bundled plugins
#   include/skillhost/                  skill_sdk.h, skill_json.h and a module map (swiftc -I …)
#   share/skillhost/swift/SkillSDK/     the Swift helper as a package of its own (identity "skillsdk")
#   lib/pkgconfig/skillsdk.pc           cc -shared -fPIC $(pkg-config --cflags skillsdk) x.c -o x.so
#   share/man/man1/skillhost.1          the manual, made from the help texts
# Every file installed is listed in share/skillhost/installed-files, which uninstall.sh removes.
set -euo pipefail
products=${1:?usage: install.sh <build products folder> <prefix>}
prefix=${2:?usage: install.sh <build products folder> <prefix>}
source_root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$products/skillhost" ] || { echo "install.sh: no skillhost in $products; build first (swift build -c release)" >&2; exit 1; }
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
manifest="$prefix/share/skillhost/installed-files"
mkdir -p "$prefix/share/skillhost"
: > "$manifest.new"
put() { # put <mode> <source> <destination>
    install -D -m "$1" "$2" "$3.partial" && mv -f "$3.partial" "$3"
    echo "$3" >> "$manifest.new"
}
put 755 "$products/skillhost" "$prefix/bin/skillhost"
# The launcher that confines skill folders' scripts (looked for beside the skillhost binary).
put 755 "$products/skillhost-sandbox" "$prefix/bin/skillhost-sandbox"
# The worker each process-mode plugin runs in (without it, skillhost starts itself as the worker, more slowly).
put 755 "$products/skillhost-worker" "$prefix/bin/skillhost-worker"
for plugin in "$products"/libskill-*.so; do
    put 644 "$plugin" "$prefix/lib/skillhost/plugins/$(basename "$plugin")"
done
for header in skill_sdk.h skill_json.h; do
    put 644 "$source_root/SkillSDK/include/$header" "$prefix/include/skillhost/$header"
done
modulemap=$(mktemp)
printf 'module SkillSDK {\n    header "skill_sdk.h"\n    header "skill_json.h"\n    export *\n}\n' > "$modulemap"
put 644 "$modulemap" "$prefix/include/skillhost/module.modulemap"
# The Swift helper: its own package, so a plugin depends on it by path with a stable identity.
package="$prefix/share/skillhost/swift/SkillSDK"
cat > "$modulemap" <<'SWIFT'
// swift-tools-version:6.0
import PackageDescription

// The skillhost SDK for plugins written in Swift: the C ABI (SkillSDK) and the Swift helper (SkillSDKSwift).
let package = Package(
    name: "SkillSDK",
    products: [.library(name: "SkillSDKSwift", targets: ["SkillSDKSwift"])],
    targets: [
        .target(name: "SkillSDK", path: "Sources/SkillSDK", publicHeadersPath: "include"),
        .target(name: "SkillSDKSwift", dependencies: ["SkillSDK"], path: "Sources/SkillSDKSwift"),
    ]
)
SWIFT
put 644 "$modulemap" "$package/Package.swift"
for header in skill_sdk.h skill_json.h; do
    put 644 "$source_root/SkillSDK/include/$header" "$package/Sources/SkillSDK/include/$header"
done
put 644 "$source_root/SkillSDK/src/abi_layout.c" "$package/Sources/SkillSDK/abi_layout.c"
for file in "$source_root"/SkillSDK/Swift/*.swift; do
    put 644 "$file" "$package/Sources/SkillSDKSwift/$(basename "$file")"
done
version=$("$products/skillhost" --version | sed -n 's/^skillhost //p' | head -1)
cat > "$modulemap" <<PC
prefix=$prefix
includedir=\${prefix}/include/skillhost

Name: skillsdk
Description: The skillhost plugin SDK (C ABI headers)
Version: $version
Cflags: -I\${includedir}
PC
put 644 "$modulemap" "$prefix/lib/pkgconfig/skillsdk.pc"
"$products/skillhost" help --man > "$modulemap"
put 644 "$modulemap" "$prefix/share/man/man1/skillhost.1"
rm -f "$modulemap"
echo "$manifest" >> "$manifest.new"
mv -f "$manifest.new" "$manifest"
echo "installed skillhost $version into $prefix ($(wc -l < "$manifest") files); run $prefix/bin/skillhost"
