/*
 * error_internal.h - filling an lct_error, and quoting untrusted bytes
 * for messages.
 */
#ifndef LCT_ERROR_INTERNAL_H
#define LCT_ERROR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "lct_core.h"

/*
 * Fill err (when not NULL) with code, errno and offset and a message
 * formatted from fmt; returns code so callers can `return lct__fail(...)`.
 */
int lct__fail(lct_error *err, int code, int sys_errno, uint64_t offset,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Write p[0..n) into out (NUL-terminated, cut to outsz) as Python's repr of
 * a bytes object, b'...', so messages show what the reference reader shows.
 */
void lct__repr_bytes(char *out, size_t outsz, const unsigned char *p,
                     size_t n);

/*
 * Write the NUL-terminated name into out with control and non-printable
 * bytes escaped (strvis), so a hostile path cannot drive a terminal.
 */
void lct__vis_name(char *out, size_t outsz, const char *name);

/* LCT_ERR_SYS for a file that could not be opened: "trace file 'PATH':
 * DOING: strerror(e)", the path escaped. */
lct_status lct__fail_open(lct_error *err, int e, const char *path,
                          const char *doing);

#endif
