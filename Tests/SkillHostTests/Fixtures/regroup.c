/* A program that leaves a child behind in a process group of its own: the child calls setpgid(0, 0) (setsid() with
   --session), lets go of everything its parent had open, and sleeps 300 s — longer than any test waits, so it must
   be stopped, not end by itself. The parent writes the child's pid to the file its last argument names (if any)
   and to its standard output, then exits. Used as a skill's script, a hook and an MCP server. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int session = argc > 1 && strcmp(argv[1], "--session") == 0;
    const char *pid_file = argc > 1 + session ? argv[argc - 1] : NULL;
    int ready[2];
    if (pipe(ready) != 0) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
        if (session) setsid();
        else setpgid(0, 0);
        (void)!write(ready[1], "x", 1);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        closefrom(3);
        sleep(300);
        _exit(0);
    }
    close(ready[1]);
    char byte;
    (void)!read(ready[0], &byte, 1);
    if (pid_file) {
        FILE *file = fopen(pid_file, "w");
        if (!file) return 2;
        fprintf(file, "%d\n", (int)child);
        fclose(file);
    }
    printf("%d\n", (int)child);
    return 0;
}
