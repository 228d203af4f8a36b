/*
 * guard_internal.h - the registry of mapped ranges that the SIGBUS guard
 * consults, and what it learned (the first lost offset of each).
 */
#ifndef LCT_GUARD_INTERNAL_H
#define LCT_GUARD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* No loss recorded. */
#define LCT__NOTHING_LOST UINT64_MAX

/* Register a mapping; returns a slot, or -1 when no memory could be had
 * for one (the registry grows; a mapping that cannot be guarded must not
 * be read). */
int lct__guard_register(const void *start, size_t len);
/* The mapping of a slot moved or grew (lct_reader_refresh). */
void lct__guard_update(int slot, const void *start, size_t len);
void lct__guard_unregister(int slot);
/* First lost offset of the slot's mapping, or LCT__NOTHING_LOST. */
uint64_t lct__guard_lost(int slot);
/* Whether lct_guard_install has run: a file cut under a mapping then
 * reads as zeros instead of killing the process. */
bool lct__guard_installed(void);

#endif
