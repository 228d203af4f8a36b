/*
 * module.c - the lct._lct extension module: its types and functions,
 * and the hook through which the Python layer hands in the classes it
 * defines (ObjectKey, Ext).
 */
#include "lctpy.h"

static PyObject *set_types(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *object_key, *ext, *layout;
    if (!PyArg_ParseTuple(args, "OOO", &object_key, &ext, &layout))
        return NULL;
    Py_INCREF(layout);
    Py_XSETREF(lctpy_layout_type, layout);
    Py_INCREF(object_key);
    Py_XSETREF(lctpy_object_key_type, object_key);
    Py_INCREF(ext);
    Py_XSETREF(lctpy_ext_type, ext);
    Py_RETURN_NONE;
}

static PyObject *decode(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) != 0)
        return NULL;
    PyObject *v = lctpy_decode(b.buf, (size_t)b.len);
    PyBuffer_Release(&b);
    return v;
}

static PyObject *allocations(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLongLong(lctpy_table_allocations);
}

static PyObject *version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(lct_version());
}

static PyMethodDef methods[] = {
    {"_set_types", set_types, METH_VARARGS, NULL},
    {"decode", decode, METH_O,
     "decode(buf) -> object: one msgpack value as msgspec decodes it."},
    {"table_allocations", allocations, METH_NOARGS,
     "How many times read_table/keys grew an array, since import."},
    {"version", version, METH_NOARGS, "liblct's version."},
    {"read_table", (PyCFunction)(void (*)(void))lctpy_read_table,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"keys", (PyCFunction)(void (*)(void))lctpy_keys,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"mrc", (PyCFunction)(void (*)(void))lctpy_mrc,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"sim", (PyCFunction)(void (*)(void))lctpy_sim,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_lct",
    "liblct for Python: the C reader under the lct package.", -1, methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__lct(void)
{
    if (PyType_Ready(&lctpy_owner_type) < 0 ||
        PyType_Ready(&lctpy_block_type) < 0 ||
        PyType_Ready(&lctpy_record_type) < 0 ||
        PyType_Ready(&lctpy_reader_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    lctpy_open_error = PyErr_NewException("lct._lct.OpenError", NULL, NULL);
    if (!lctpy_open_error ||
        PyModule_AddObjectRef(m, "OpenError", lctpy_open_error) < 0 ||
        PyModule_AddObjectRef(m, "Reader", (PyObject *)&lctpy_reader_type) < 0 ||
        PyModule_AddObjectRef(m, "Record", (PyObject *)&lctpy_record_type) < 0 ||
        PyModule_AddIntConstant(m, "ERR_SYS", LCT_ERR_SYS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
