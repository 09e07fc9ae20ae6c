# make install PREFIX=~/.local   builds in release and installs (see Scripts/install.sh for what goes where)
# make uninstall PREFIX=~/.local removes it all again
# The release is built in a folder of its own (.build/install), so it never waits for a `swift test` or
# `swift build` running on .build.
PREFIX ?= /usr/local
CONFIGURATION ?= release
SCRATCH ?= .build/install

build:
	swift build -c $(CONFIGURATION) --scratch-path $(SCRATCH)

install: build
	Scripts/install.sh "$$(swift build -c $(CONFIGURATION) --scratch-path $(SCRATCH) --show-bin-path)" "$(DESTDIR)$(PREFIX)"

uninstall:
	Scripts/uninstall.sh "$(DESTDIR)$(PREFIX)"

.PHONY: build install uninstall
