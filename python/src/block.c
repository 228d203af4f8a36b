/*
 * block.c - the memory the extension builds its results in: columns that
 * grow without copying what they hold, handed to Python as they are (a
 * Block object with the buffer protocol, which frees its memory when the
 * last numpy array over it goes).
 *
 * Both are about first touches.  Copying a large result into a bytearray
 * paid a second first touch of every page, and so did realloc's copies
 * once glibc had raised its mmap threshold and put large columns in the
 * heap (a quarter of lct.keys' time in memmove, on a VM whose page tables
 * the host shadows).  A column of LARGE bytes or more lives in its own
 * mapping instead, and mremap moves its pages when it grows.
 */
#include "lctpy.h"

#include <string.h>
#include <sys/mman.h>

#define LARGE ((size_t)1 << 20)

unsigned long long lctpy_table_allocations;

static size_t page_round(size_t n)
{
    return (n + 4095) & ~(size_t)4095;
}

/* A fresh mapping of cap bytes holding c's bytes, or NULL. */
static char *map_copy(const lctpy_col *c, size_t cap)
{
    void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (c->len)
        memcpy(m, c->buf, c->len);
    return m;
}

bool lctpy_col_grow(lctpy_col *c, size_t more)
{
    if (more > SIZE_MAX / 4 - c->len)
        return false;
    size_t cap = c->cap ? c->cap : 4096;
    while (cap - c->len < more)
        cap *= 2;
    char *grown;
    if (cap < LARGE) {
        grown = realloc(c->buf, cap);
    } else if (!c->mapped) {
        cap = page_round(cap);
        if ((grown = map_copy(c, cap)) != NULL)
            free(c->buf);
    } else {
#ifdef MREMAP_MAYMOVE
        cap = page_round(cap);
        void *m = mremap(c->buf, c->cap, cap, MREMAP_MAYMOVE);
        grown = m == MAP_FAILED ? NULL : m;
#else
        cap = page_round(cap);
        if ((grown = map_copy(c, cap)) != NULL)
            munmap(c->buf, c->cap);
#endif
    }
    if (!grown)
        return false;
    __atomic_add_fetch(&lctpy_table_allocations, 1, __ATOMIC_RELAXED);
    c->mapped = cap >= LARGE;
    c->buf = grown;
    c->cap = cap;
    return true;
}

void lctpy_col_free(lctpy_col *c)
{
    if (c->mapped)
        munmap(c->buf, c->cap);
    else
        free(c->buf);
    *c = (lctpy_col){0};
}

typedef struct block {
    PyObject_HEAD
    lctpy_col col;
} block;

static void block_dealloc(block *b)
{
    lctpy_col_free(&b->col);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

/* Writable, so numpy's arrays over it are too, as over a bytearray. */
static int block_getbuffer(block *b, Py_buffer *view, int flags)
{
    static char empty[1];
    return PyBuffer_FillInfo(view, (PyObject *)b,
                             b->col.buf ? b->col.buf : empty,
                             (Py_ssize_t)b->col.len, 0, flags);
}

static PyBufferProcs block_as_buffer = {
    .bf_getbuffer = (getbufferproc)block_getbuffer,
};

PyTypeObject lctpy_block_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lct._lct.Block",
    .tp_basicsize = sizeof(block),
    .tp_dealloc = (destructor)block_dealloc,
    .tp_as_buffer = &block_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory a result was built in, lent to numpy without a copy.",
};

/* Give back what doubling left spare, without touching a page: the heap
 * shrinks a block in place, a mapping loses its tail. */
static void fit(lctpy_col *c)
{
    if (!c->mapped) {
        char *fitted = c->len ? realloc(c->buf, c->len) : NULL;
        if (fitted)
            c->buf = fitted, c->cap = c->len;
        return;
    }
    size_t keep = page_round(c->len ? c->len : 1);
    if (keep < c->cap && munmap(c->buf + keep, c->cap - keep) == 0)
        c->cap = keep;
}

PyObject *lctpy_col_give(lctpy_col *c)
{
    if (c->len > PY_SSIZE_T_MAX) {
        lctpy_col_free(c);
        return PyErr_NoMemory();
    }
    fit(c);
    block *b = PyObject_New(block, &lctpy_block_type);
    if (!b) {
        lctpy_col_free(c);
        return NULL;
    }
    b->col = *c;
    *c = (lctpy_col){0};
    return (PyObject *)b;
}
