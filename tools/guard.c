/* guard.c - `reprise --min-replayed SHARE ... program`: a guard a user puts
 * in CI, so that a change that makes a loop stop replaying fails the build.
 *
 * The program runs as this process's child (not exec'd, so that something
 * is left to read its stats): the signals a scheduler or a user sends to
 * the command are forwarded to it, and when it fails its own exit status is
 * the command's (a program killed by a signal kills the command by the same
 * signal).  When it succeeds, the stats files the run left (every
 * process's: the stats pattern with %p, %h and %r as any text, new or
 * rewritten since the start) are read, and the command exits 3 when less
 * than SHARE of all their ops ran as graphs, or when there are none. */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

/* What a scheduler, a user or a launcher sends to stop or poke a program. */
static const int forwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};
#define N_FORWARDED (sizeof forwarded / sizeof forwarded[0])

bool rp_guard_share(const char *s, double *share)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno)
        return false;
    if (*end == '%')
        v /= 100, end++;
    if (*end || !(v >= 0 && v <= 1))
        return false;
    *share = v;
    return true;
}

/* The glob of the files a stats pattern names in any process: %p, %h and
 * %r as any text, %% as %, glob's own characters escaped. */
static void glob_of(const char *pattern, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = pattern; *p && k + 3 < n; p++) {
        if (p[0] == '%' && (p[1] == 'p' || p[1] == 'h' || p[1] == 'r')) {
            out[k++] = '*';
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            out[k++] = '%';
            p++;
        } else {
            if (strchr("*?[]\\", *p))
                out[k++] = '\\';
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

/* A file as it was before the run: a report is renamed over its file, so a
 * rewritten one has another inode (or, on a file system that reuses them at
 * once, another modification time). */
struct before {
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
};

static bool same_file(const struct stat *st, const struct before *b)
{
    return st->st_dev == b->dev && st->st_ino == b->ino &&
           st->st_mtim.tv_sec == b->mtime.tv_sec && st->st_mtim.tv_nsec == b->mtime.tv_nsec;
}

/* The files matching `g`, with what they were (before[] may be NULL);
 * returns how many. */
static size_t list_files(const char *g, glob_t *out, struct before **before)
{
    memset(out, 0, sizeof *out);
    if (glob(g, 0, NULL, out) != 0)
        return 0;
    if (before) {
        *before = calloc(out->gl_pathc ? out->gl_pathc : 1, sizeof **before);
        for (size_t i = 0; *before && i < out->gl_pathc; i++) {
            struct stat st;
            if (stat(out->gl_pathv[i], &st) == 0)
                (*before)[i] = (struct before){st.st_dev, st.st_ino, st.st_mtim};
        }
    }
    return out->gl_pathc;
}

/* Ends this process as the child ended: its exit status, or its signal. */
static int as_the_child(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none); /* the program's core, if any, is the one */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    raise(sig);
    return 128 + sig; /* a signal whose default is not to end a process */
}

/* Removes the guard's own folder and what the run left in it. */
static void remove_own(const char *tmpdir)
{
    if (!tmpdir)
        return;
    char g[PATH_MAX + 4];
    snprintf(g, sizeof g, "%s/*", tmpdir);
    glob_t files;
    if (list_files(g, &files, NULL))
        for (size_t i = 0; i < files.gl_pathc; i++)
            unlink(files.gl_pathv[i]);
    globfree(&files);
    rmdir(tmpdir);
}

/* Runs the program; returns its wait status, or -1 when it could not be
 * started.  No signal handler: the signals to forward and the child's end
 * (SIGCHLD) are blocked and taken one by one with sigwaitinfo, so none is
 * lost between a look at the child and the wait. */
static int run_child(char **argv)
{
    sigset_t set, old;
    sigemptyset(&set);
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaddset(&set, forwarded[i]);
    sigaddset(&set, SIGCHLD);
    signal(SIGCHLD, SIG_DFL); /* ignored, the child would be reaped unseen */
    sigprocmask(SIG_BLOCK, &set, &old);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        fprintf(stderr, "reprise: cannot start '%s': %s\n", argv[0], strerror(errno));
        return -1;
    }
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        char me[24];
        snprintf(me, sizeof me, "%ld", (long)getpid());
        setenv("REPRISE_RUN_PID", me, 1);
        execvp(argv[0], argv);
        fprintf(stderr, "reprise: cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    for (;;) {
        int status;
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            sigprocmask(SIG_SETMASK, &old, NULL);
            return status;
        }
        if (w < 0 && errno != EINTR) {
            sigprocmask(SIG_SETMASK, &old, NULL);
            return -1;
        }
        siginfo_t si;
        int sig = sigwaitinfo(&set, &si);
        /* A terminal's signal (Ctrl-C: SI_KERNEL) went to the whole
         * foreground process group, the program included: sent again it
         * would come twice. */
        if (sig > 0 && sig != SIGCHLD && si.si_code != SI_KERNEL)
            kill(pid, sig);
    }
}

int rp_guard_run(char **argv, double share, const char *pattern, const char *tmpdir)
{
    char g[PATH_MAX * 2];
    glob_of(pattern, g, sizeof g);
    glob_t old;
    struct before *was = NULL;
    size_t nold = list_files(g, &old, &was);
    int status = run_child(argv);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        remove_own(tmpdir);
        globfree(&old);
        free(was);
        return status == -1 ? 127 : as_the_child(status);
    }
    glob_t now;
    list_files(g, &now, NULL);
    double ops = 0, replayed = 0;
    size_t files = 0;
    bool readable = true;
    for (size_t i = 0; i < now.gl_pathc; i++) {
        struct stat st;
        if (stat(now.gl_pathv[i], &st) != 0)
            continue;
        bool unchanged = false;
        for (size_t k = 0; was && k < nold && !unchanged; k++)
            unchanged = !strcmp(old.gl_pathv[k], now.gl_pathv[i]) && same_file(&st, &was[k]);
        if (unchanged)
            continue; /* an earlier run's */
        files++;
        readable = rp_report_add_share(now.gl_pathv[i], &ops, &replayed) && readable;
    }
    globfree(&now);
    globfree(&old);
    free(was);
    remove_own(tmpdir);
    int rc = 3;
    if (!files)
        fprintf(stderr, "reprise: --min-replayed: the run left no stats file (%s): no process "
                        "of it used CUDA\n", pattern);
    else if (!readable)
        fprintf(stderr, "reprise: --min-replayed: a stats file of the run could not be read\n");
    else if (replayed < share * ops || (ops <= 0 && share > 0))
        fprintf(stderr, "reprise: --min-replayed: %.1f%% of %.0f ops ran as graphs (%zu stats "
                        "file%s), less than the %.1f%% asked\n",
                ops > 0 ? 100 * replayed / ops : 0.0, ops, files, files == 1 ? "" : "s",
                100 * share);
    else {
        fprintf(stderr, "reprise: --min-replayed: %.1f%% of %.0f ops ran as graphs (%zu stats "
                        "file%s), at least the %.1f%% asked\n",
                100 * replayed / ops, ops, files, files == 1 ? "" : "s", 100 * share);
        rc = 0;
    }
    return rc;
}
