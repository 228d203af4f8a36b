/*
 * outfile.h - the tool's output files: written whole under a temporary
 * name and renamed into place, and never one of the command's inputs.
 */
#ifndef LCT_TOOL_OUTFILE_H
#define LCT_TOOL_OUTFILE_H

#include <stddef.h>

#include "lct.h"

/*
 * An output file that never destroys an input.  outfile_open() refuses
 * a path that is one of @p inputs (the same device and inode, links
 * followed; "-" is standard input among inputs and standard output as
 * the path) with LCT_ERR_IS_INPUT, before anything is opened for writing.
 * Otherwise a regular file (new, or existing, through links) is written
 * under a temporary name in its directory, and outfile_commit() renames
 * it into place: until then, and after outfile_abort() or a failure,
 * what was at the path is untouched and no partial file is left.  SIGINT,
 * SIGTERM and SIGHUP remove the temporary file (unless the program has
 * its own handlers).  Standard output, devices and FIFOs are written in
 * place.  A new file gets mode 0666 less the umask; a replaced one keeps
 * its mode.
 */
typedef struct outfile outfile;

/* @return LCT_OK, LCT_ERR_IS_INPUT, LCT_ERR_SYS (cannot create the
 *  file; err names it and errno), LCT_ERR_NOMEM, LCT_ERR_INVALID. */
lct_status outfile_open(const char *path, const char *const *inputs,
                           size_t ninputs, outfile **out, lct_error *err);

/* The descriptor to write to (the temporary file's, or stdout's). */
int outfile_fd(const outfile *out);

/* Close (a close that fails, e.g. a full disk, is an error) and rename
 *  into place; @p out is freed either way.  @return LCT_OK, LCT_ERR_SYS
 *  (err->message names the path and says why). */
lct_status outfile_commit(outfile *out, lct_error *err);

/* Give up: the temporary file is removed; @p out is freed. */
void outfile_abort(outfile *out);

#endif
