/*
 * block.c - a block of memory the extension filled, handed to Python as
 * it is: an object with the buffer protocol that owns the block and
 * frees it when the last numpy array over it goes.  Copying a large
 * result into a bytearray instead paid a second first touch of every
 * page, which on a VM whose page tables the host shadows costs more than
 * filling the block did.
 */
#include "lctpy.h"

typedef struct block {
    PyObject_HEAD
    void *p;
    size_t len;
} block;

static void block_dealloc(block *b)
{
    free(b->p);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

/* Writable, so numpy's arrays over it are too, as over a bytearray. */
static int block_getbuffer(block *b, Py_buffer *view, int flags)
{
    static char empty[1];
    return PyBuffer_FillInfo(view, (PyObject *)b, b->p ? b->p : empty,
                             (Py_ssize_t)b->len, 0, flags);
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

PyObject *lctpy_block_adopt(void *p, size_t len)
{
    if (len > PY_SSIZE_T_MAX) {
        free(p);
        return PyErr_NoMemory();
    }
    /* Give back what doubling left spare: a large block shrinks in
     * place or by moving its pages, neither touching them. */
    void *fitted = p && len ? realloc(p, len) : NULL;
    if (fitted)
        p = fitted;
    block *b = PyObject_New(block, &lctpy_block_type);
    if (!b) {
        free(p);
        return NULL;
    }
    b->p = p;
    b->len = len;
    return (PyObject *)b;
}
