/* What SwiftPM's start-up object (swiftrt.o, linked into every executable it builds) calls in the Swift runtime,
   which this C program is linked without (Scripts/link-without-swift-runtime): it registers the image's Swift
   metadata sections, and this program has none. Hidden, so a Swift plugin's own registration still reaches the
   runtime it loads. */
#include <stdint.h>

__attribute__((visibility("hidden"))) void swift_addNewDSOImage(const void *header) { (void)header; }

__attribute__((visibility("hidden"))) int _swift_backtrace_isThunkFunction(const char *name) {
    (void)name;
    return 0;
}
