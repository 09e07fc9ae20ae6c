// cmark-gfm (Debian libcmark-gfm-dev, libcmark-gfm-extensions-dev): the CommonMark + GFM parser the shell renders
// model answers with.
#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>
