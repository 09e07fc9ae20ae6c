# make install PREFIX=~/.local   builds in release and installs (see Scripts/install.sh for what goes where)
# make uninstall PREFIX=~/.local removes it all again
PREFIX ?= /usr/local
CONFIGURATION ?= release

build:
	swift build -c $(CONFIGURATION)

install: build
	Scripts/install.sh "$$(swift build -c $(CONFIGURATION) --show-bin-path)" "$(DESTDIR)$(PREFIX)"

uninstall:
	Scripts/uninstall.sh "$(DESTDIR)$(PREFIX)"

.PHONY: build install uninstall
