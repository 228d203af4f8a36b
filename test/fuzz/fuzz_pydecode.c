/*
 * fuzz_pydecode.c - libFuzzer target: arbitrary bytes through the Python
 * module's decoder (python/src/decode.c, what a record's args and the
 * header become in Python), in an embedded interpreter.
 *
 * The bytes are copied to an exact-size heap buffer (one byte read past
 * them is an AddressSanitizer report) and decoded.  The oracle is the
 * library's own validator: when lct_value_validate finds the bytes not
 * one well-formed value (malformed, cut short, nested too deeply, invalid
 * UTF-8, bytes after it), the decoder must refuse them with ValueError;
 * when it finds one, the decoder must give a value, or refuse only with
 * TypeError (a map, or a list holding one, used as a map key: Python
 * cannot hash it; the validator refuses those too) or
 * ValueError for a timestamp ext that does not hold one (an ext -1 of a
 * size msgpack does not define for it, or a time datetime cannot hold).
 * A value given is then compared with itself (repr runs over every
 * nested object) and released.
 *
 *     make fuzz && test/fuzz/fuzz_pydecode -max_total_time=60 corpus-py/
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "lct.h"

PyObject *lctpy_decode(const unsigned char *p, size_t len);
extern PyObject *lctpy_ext_type;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    Py_InitializeEx(0);
    /* What lct/__init__.py hands the extension when msgspec is absent. */
    PyObject *globals = PyDict_New();
    PyObject *done = PyRun_String(
        "class Ext:\n"
        "    __slots__ = ('code', 'data')\n"
        "    def __init__(self, code, data):\n"
        "        self.code = code\n"
        "        self.data = data\n"
        "    def __repr__(self):\n"
        "        return f'Ext({self.code!r}, {self.data!r})'\n"
        "    def __eq__(self, other):\n"
        "        return isinstance(other, Ext) and (self.code, self.data) == "
        "(other.code, other.data)\n"
        "    __hash__ = None\n",
        Py_file_input, globals, globals);
    lctpy_ext_type = done ? PyDict_GetItemString(globals, "Ext") : NULL;
    if (!lctpy_ext_type)
        abort();
    Py_INCREF(lctpy_ext_type);
    Py_XDECREF(done);
    return 0;
}

/* Whether the bytes hold an ext -1 (msgpack's timestamp) anywhere: the
 * one ext whose contents the decoder reads. */
static bool has_timestamp_ext(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if ((p[i] >= 0xd4 && p[i] <= 0xd8) || (p[i] >= 0xc7 && p[i] <= 0xc9))
            return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    size_t vsize = 0;
    lct_value v = {copy, size};
    bool valid = lct_value_validate(v, &vsize) == LCT_OK && vsize == size;
    PyObject *out = lctpy_decode(copy, size);
    if (out) {
        if (!valid)
            abort(); /* decoded what the library calls malformed */
        PyObject *shown = PyObject_Repr(out);
        if (!shown)
            PyErr_Clear(); /* a recursion limit, or memory */
        Py_XDECREF(shown);
        Py_DECREF(out);
    } else {
        if (!PyErr_Occurred())
            abort(); /* a refusal without an exception */
        bool type_error = PyErr_ExceptionMatches(PyExc_TypeError);
        bool value_error = PyErr_ExceptionMatches(PyExc_ValueError) ||
                           PyErr_ExceptionMatches(PyExc_OverflowError);
        if (!type_error && !value_error &&
            !PyErr_ExceptionMatches(PyExc_MemoryError))
            abort(); /* another kind of exception */
        if (valid && value_error && !has_timestamp_ext(copy, size))
            abort(); /* refused what the library calls one value */
        PyErr_Clear();
    }
    free(copy);
    return 0;
}
