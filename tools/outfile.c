/*
 * outfile.c - the tool's output files, which never destroy an input: a path that names
 * an input (same device and inode, links followed) is refused before
 * anything is opened for writing, and a regular file is written under a
 * temporary name beside it and renamed into place only when complete, so
 * a failed or interrupted run leaves what was there untouched.
 */
#include "outfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vis.h>

struct outfile {
    char *final;  /* where the output goes (links resolved) */
    char *tmp;    /* the temporary name, or NULL: written in place */
    int fd;
    bool owns_fd; /* not stdout */
};

/* err (when not NULL) filled as the library fills one; returns code. */
static lct_status fail(lct_error *err, lct_status code, int e, uint64_t offset,
                       const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static lct_status fail(lct_error *err, lct_status code, int e, uint64_t offset,
                       const char *fmt, ...)
{
    if (err) {
        *err = (lct_error){.code = code, .sys_errno = e, .offset = offset};
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* A path as an lct_error shows one: escaped C-style, its head when too
 * long. */
static void vis_name(char *out, size_t outsz, const char *name)
{
    size_t len = strlen(name);
    while (strnvisx(out, outsz, name, len,
                    VIS_CSTYLE | VIS_TAB | VIS_NL | VIS_OCTAL) < 0) {
        if (len == 0) {
            out[0] = '\0';
            return;
        }
        len /= 2;
    }
}

/* One pending temporary file, for the interrupt handler: the tool writes
 * one output at a time.  The handler only reads it. */
static char *volatile pending_tmp;
static volatile sig_atomic_t handlers_installed;

static void on_interrupt(int sig)
{
    char *tmp = pending_tmp;
    if (tmp)
        unlink(tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* SIGINT, SIGTERM and SIGHUP remove the temporary file, unless the
 * program handles them itself. */
static void install_handlers(void)
{
    if (handlers_installed)
        return;
    handlers_installed = 1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            signal(sigs[i], on_interrupt);
    }
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether `out` (as stat(2) sees it) is one of the inputs; *which says
 * which one. */
static bool is_input(const struct stat *out, const char *const *inputs,
                     size_t ninputs, size_t *which)
{
    for (size_t i = 0; i < ninputs; i++) {
        struct stat in;
        int rc = strcmp(inputs[i], "-") == 0 ? fstat(STDIN_FILENO, &in)
                                               : stat(inputs[i], &in);
        if (rc == 0 && same_inode(out, &in)) {
            *which = i;
            return true;
        }
    }
    return false;
}

/* LCT_OK, or LCT_ERR_IS_INPUT naming both paths. */
static lct_status output_check(const char *path, const char *const *inputs,
                               size_t ninputs, lct_error *err)
{
    if (!path || (!inputs && ninputs))
        return fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "output: invalid argument");
    struct stat out;
    int rc = strcmp(path, "-") == 0 ? fstat(STDOUT_FILENO, &out)
                                    : stat(path, &out);
    size_t which;
    if (rc != 0 || !is_input(&out, inputs, ninputs, &which))
        return LCT_OK;
    /* A terminal or /dev/null may well be both stdin and stdout. */
    if (!S_ISREG(out.st_mode) && !S_ISBLK(out.st_mode))
        return LCT_OK;
    char shown_out[256], shown_in[256];
    vis_name(shown_out, sizeof shown_out, path);
    vis_name(shown_in, sizeof shown_in, inputs[which]);
    return fail(err, LCT_ERR_IS_INPUT, 0, 0,
                     "output '%s' is the input '%s' (the same file): "
                     "refusing to write over it",
                     shown_out, shown_in);
}

/* The temporary name beside `final`: DIR/.BASE.XXXXXX */
static char *temp_name(const char *final)
{
    const char *slash = strrchr(final, '/');
    size_t dirlen = slash ? (size_t)(slash - final) + 1 : 0;
    const char *base = final + dirlen;
    size_t n = dirlen + 1 + strlen(base) + sizeof ".XXXXXX";
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "%.*s.%s.XXXXXX", (int)dirlen, final, base);
    return t;
}

/* The mode a new file gets from open(2) with 0666, as the umask says. */
static mode_t default_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

static lct_status open_temp(outfile *o, const struct stat *existing,
                            lct_error *err)
{
    o->tmp = temp_name(o->final);
    if (!o->tmp)
        return fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "output: out of memory");
    o->fd = mkstemp(o->tmp);
    if (o->fd >= 0)
        (void)fcntl(o->fd, F_SETFD, FD_CLOEXEC);
    if (o->fd < 0) {
        int e = errno;
        char shown[256];
        vis_name(shown, sizeof shown, o->final);
        return fail(err, LCT_ERR_SYS, e, 0,
                         "output '%s': cannot create a file beside it: %s",
                         shown, strerror(e));
    }
    o->owns_fd = true;
    (void)fchmod(o->fd, existing ? existing->st_mode & 07777
                                 : default_mode());
    pending_tmp = o->tmp;
    install_handlers();
    return LCT_OK;
}

lct_status outfile_open(const char *path, const char *const *inputs,
                           size_t ninputs, outfile **out, lct_error *err)
{
    if (out)
        *out = NULL;
    if (!out)
        return fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "output: invalid argument");
    lct_status rc = output_check(path, inputs, ninputs, err);
    if (rc != LCT_OK)
        return rc;
    outfile *o = calloc(1, sizeof *o);
    if (!o)
        return fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "output: out of memory");
    o->fd = -1;
    if (strcmp(path, "-") == 0) {
        o->fd = STDOUT_FILENO;
        *out = o;
        return LCT_OK;
    }
    struct stat st;
    bool exists = stat(path, &st) == 0;
    /* Write through a link to what it names; a device, a FIFO or a
     * terminal is written in place (there is nothing to rename over). */
    /* Only a regular file is renamed over, so only its links need
     * following; /dev/stdout on a pipe has no path realpath can give. */
    errno = ENOMEM;
    o->final = exists && S_ISREG(st.st_mode) ? realpath(path, NULL)
                                             : strdup(path);
    if (!o->final) {
        int e = errno;
        char shown[256];
        vis_name(shown, sizeof shown, path);
        free(o);
        return e == ENOMEM ? fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                                       "output: out of memory")
                           : fail(err, LCT_ERR_SYS, e, 0,
                                       "output '%s': %s", shown, strerror(e));
    }
    if (exists && !S_ISREG(st.st_mode)) {
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        o->owns_fd = true;
        rc = o->fd >= 0 ? LCT_OK : LCT_ERR_SYS;
        if (rc != LCT_OK) {
            int e = errno;
            char shown[256];
            vis_name(shown, sizeof shown, path);
            fail(err, LCT_ERR_SYS, e, 0, "output '%s': %s", shown,
                      strerror(e));
        }
    } else {
        rc = open_temp(o, exists ? &st : NULL, err);
    }
    if (rc != LCT_OK) {
        outfile_abort(o);
        return rc;
    }
    *out = o;
    return LCT_OK;
}

int outfile_fd(const outfile *o)
{
    return o ? o->fd : -1;
}

lct_status outfile_commit(outfile *o, lct_error *err)
{
    if (!o)
        return fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "output: invalid argument");
    int e = 0;
    if (o->owns_fd && close(o->fd) != 0)
        e = errno;
    o->owns_fd = false;
    if (!e && o->tmp && rename(o->tmp, o->final) != 0)
        e = errno;
    if (!e) {
        pending_tmp = NULL;
        free(o->tmp);
        o->tmp = NULL;
        outfile_abort(o);
        return LCT_OK;
    }
    char shown[256];
    vis_name(shown, sizeof shown, o->final ? o->final : "<stdout>");
    outfile_abort(o);
    return fail(err, LCT_ERR_SYS, e, 0, "output '%s': %s", shown,
                     strerror(e));
}

void outfile_abort(outfile *o)
{
    if (!o)
        return;
    if (o->owns_fd)
        close(o->fd);
    if (o->tmp) {
        pending_tmp = NULL;
        unlink(o->tmp);
    }
    free(o->tmp);
    free(o->final);
    free(o);
}
