/*
 * skillhost-sandbox: confines itself as the host says, then becomes the program (execv), which keeps the
 * confinement for good. The host computed everything (the program's absolute path, the folders it may execute,
 * read and write); this launcher only applies it, so a confined run costs a process start without the Swift
 * runtime (about a millisecond) instead of the skillhost binary's own start.
 *
 *   skillhost-sandbox [-n] [-d DIR] [-x PATH]... [-r PATH]... [-w PATH]... -- PROGRAM [ARGUMENT]...
 *
 *   -n  network allowed          -d  start in DIR          -x  readable and executable
 *   -r  readable                 -w  readable and writable (a private temporary folder is added, as $TMPDIR)
 *
 * Exit status: the program's; 70 when it cannot be confined (nothing ran), 126 when it cannot be run, 64 for a
 * command line that is not this one. Messages begin "skillhost sandbox:", as the binary's sandbox role says them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "process_support.h"

enum { MAXIMUM_PATHS = 512 };

static void fail(int status, const char *what, const char *detail) {
    fprintf(stderr, "skillhost sandbox: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(status);
}

int main(int argc, char **argv) {
    const char *execute[MAXIMUM_PATHS], *readable[MAXIMUM_PATHS], *writable[MAXIMUM_PATHS + 1];
    int execute_count = 0, read_count = 0, write_count = 0, network = 0;
    const char *directory = NULL;
    int index = 1;
    for (; index < argc; index++) {
        const char *flag = argv[index];
        if (strcmp(flag, "--") == 0) { index++; break; }
        if (strcmp(flag, "-n") == 0) { network = 1; continue; }
        if (index + 1 >= argc) fail(64, "an option needs a value", flag);
        const char *value = argv[++index];
        if (strcmp(flag, "-d") == 0) directory = value;
        else if (strcmp(flag, "-x") == 0 && execute_count < MAXIMUM_PATHS) execute[execute_count++] = value;
        else if (strcmp(flag, "-r") == 0 && read_count < MAXIMUM_PATHS) readable[read_count++] = value;
        else if (strcmp(flag, "-w") == 0 && write_count < MAXIMUM_PATHS) writable[write_count++] = value;
        else fail(64, "unknown option or too many paths", flag);
    }
    if (index >= argc || argv[index][0] != '/') fail(64, "the program must be given by its absolute path", NULL);

    /* A private temporary folder, the one place it may write besides what it was given. */
    const char *base = getenv("TMPDIR");
    char folder[4096];
    snprintf(folder, sizeof folder, "%s/skillhost-sandbox-XXXXXX", base && base[0] == '/' ? base : "/tmp");
    if (mkdtemp(folder) != NULL) {
        writable[write_count++] = folder;
        setenv("TMPDIR", folder, 1);
    }

    struct skillhost_confinement spec = {
        .network = network, .exec = 1, .read_anywhere = 0, .write_anywhere = 0,
        .execute_paths = execute, .execute_count = execute_count,
        .read_paths = readable, .read_count = read_count,
        .write_paths = writable, .write_count = write_count,
        .maximum_abi = -1, .for_exec = 1, .supervise_metadata = 1,
    };
    int applied = 0;
    int result = skillhost_confine(&spec, &applied);
    if (result != 0) fail(70, "cannot confine the program", strerror(result));
    if (directory != NULL && chdir(directory) != 0) fail(70, "cannot start in its folder", strerror(errno));
    execv(argv[index], argv + index);
    fail(126, "cannot run the program", strerror(errno));
    return 126;
}
