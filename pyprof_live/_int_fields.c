/* record_checks' passes over every record's integer fields, in C (the Python passes beside them in
 * record_checks.py give the same answers and errors; PYPROF_LIVE_NATIVE=0 selects those).
 *
 * ints_fit (record_checks._ints_fit): whether every named integer field of every record is an int
 * (exactly: not a bool or another int subclass) within [-limit, limit].
 *
 * The Python pass builds a list of all the values (19 M for a million kernels and their launches) and
 * scans it three times (types, min, max); this reads each value in place once. It answers the same
 * yes/no, and the records it reads raise the same errors (a missing attribute: AttributeError), so the
 * slow search that names the first bad record stays in Python, shared by both paths.
 *
 * A slotted dataclass keeps each field at a fixed offset in the object (a member descriptor, T_OBJECT_EX);
 * for a record of the type last seen, read there. Anything else (another class, an overridden
 * __getattribute__ or __getattr__, a property, an unset slot) goes through PyObject_GetAttr, as
 * attrgetter does. The fast path runs no Python code, so nothing can change the list or a class under it.
 *
 * starts_ascending (importers' sort_by_start): whether the records are in start order already (every
 * start an exact int, none below the one before), so sorting them by start would leave them as they are.
 *
 * any_reversed (record_checks.drop_reversed's test): whether any record's end is before its start,
 * read and compared as ``any(map(operator.lt, ends, starts))`` does (end read before start; two exact
 * ints compared here, anything else by Python's ``<``, whose errors propagate).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#ifndef Py_T_OBJECT_EX
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

typedef struct {
    PyTypeObject *type;  /* borrowed (a record in the list holds it); NULL: no fast path yet */
    Py_ssize_t *offsets; /* one per field */
} Slots;

/* Offsets of the fields as slots of ``type``; 0 (no fast path) when any field is not a plain slot. */
static int find_slots(Slots *slots, PyTypeObject *type, PyObject *const *names, Py_ssize_t count) {
    slots->type = NULL;
    if (type->tp_getattro != PyObject_GenericGetAttr)
        return 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        /* What PyObject_GenericGetAttr finds first in the MRO (borrowed, sets no error). */
        PyObject *descr = _PyType_Lookup(type, names[i]);
        if (descr == NULL || Py_TYPE(descr) != &PyMemberDescr_Type)
            return 0;
        /* A member descriptor of another class (copied into this one) would raise TypeError when read:
         * its offset means nothing here. */
        if (!PyType_IsSubtype(type, PyDescr_TYPE(descr)))
            return 0;
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type != Py_T_OBJECT_EX || (member->flags & PY_AUDIT_READ))
            return 0;
        slots->offsets[i] = member->offset;
    }
    slots->type = type;
    return 1;
}

/* 1: an exact int within [-limit, limit]; 0: not. */
static int fits(PyObject *value, long long limit) {
    if (Py_TYPE(value) != &PyLong_Type)
        return 0;
    int overflow;
    long long number = PyLong_AsLongLongAndOverflow(value, &overflow); /* an exact int: cannot fail */
    return !overflow && number >= -limit && number <= limit;
}

static PyObject *ints_fit(PyObject *module, PyObject *args) {
    PyObject *items, *names;
    long long limit;
    Py_ssize_t chunk;
    if (!PyArg_ParseTuple(args, "O!O!Ln", &PyList_Type, &items, &PyTuple_Type, &names, &limit, &chunk))
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    if (chunk < 1) {
        PyErr_SetString(PyExc_ValueError, "ints_fit: chunk must be >= 1");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(names, i))) {
            PyErr_SetString(PyExc_TypeError, "ints_fit: field names must be str");
            return NULL;
        }
    PyObject *const *field = &PyTuple_GET_ITEM(names, 0);
    Slots slots = {NULL, PyMem_New(Py_ssize_t, count ? count : 1)};
    if (slots.offsets == NULL)
        return PyErr_NoMemory();
    int all_fit = 1;
    /* PyList_GET_SIZE each time: a slow-path getattr could run code that shortens the list. */
    for (Py_ssize_t at = 0; at < PyList_GET_SIZE(items); at++) {
        PyObject *record = PyList_GET_ITEM(items, at);
        Py_INCREF(record);
        PyTypeObject *type = Py_TYPE(record);
        int fast = (type == slots.type) || find_slots(&slots, type, field, count);
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *value = fast ? *(PyObject **)((char *)record + slots.offsets[i]) : NULL;
            if (value != NULL) {
                all_fit &= fits(value, limit);
                continue;
            }
            value = PyObject_GetAttr(record, field[i]);
            slots.type = NULL; /* it may have run code that changed a class: look the slots up again */
            fast = 0;
            if (value == NULL) {
                Py_DECREF(record);
                PyMem_Free(slots.offsets);
                return NULL;
            }
            all_fit &= fits(value, limit);
            Py_DECREF(value);
        }
        Py_DECREF(record);
        /* The Python pass reads a whole chunk before it checks it: an unreadable field later in the chunk
         * raises there even after a bad value, so stop only at a chunk's end. */
        if (!all_fit && ((at + 1) % chunk == 0))
            break;
    }
    PyMem_Free(slots.offsets);
    return PyBool_FromLong(all_fit);
}

static PyObject *end_and_start; /* ("end", "start"), interned: made at import */

/* The value of field ``i`` of ``record`` (a new reference; NULL with an error set), from its slot when
 * ``fast``; a getattr clears ``slots`` (it may have run code that changed a class). */
static PyObject *read_field(PyObject *record, Slots *slots, int *fast, Py_ssize_t i, PyObject *name) {
    if (*fast) {
        PyObject *value = *(PyObject **)((char *)record + slots->offsets[i]);
        if (value != NULL) {
            Py_INCREF(value);
            return value;
        }
    }
    PyObject *value = PyObject_GetAttr(record, name);
    slots->type = NULL;
    *fast = 0;
    return value;
}

/* 1: end < start; 0: not; -1: an error (Python's ``<`` raised). Python's ``<`` may run code that changed a
 * class: then ``slots`` is cleared, as after a getattr. */
static int before(PyObject *end, PyObject *start, Slots *slots) {
    if (Py_TYPE(end) == &PyLong_Type && Py_TYPE(start) == &PyLong_Type) {
        int end_over, start_over;
        long long e = PyLong_AsLongLongAndOverflow(end, &end_over);
        long long s = PyLong_AsLongLongAndOverflow(start, &start_over);
        if (!end_over && !start_over)
            return e < s;
    }
    slots->type = NULL;
    return PyObject_RichCompareBool(end, start, Py_LT);
}

static PyObject *any_reversed(PyObject *module, PyObject *items) {
    if (!PyList_CheckExact(items)) {
        PyErr_SetString(PyExc_TypeError, "any_reversed: a list");
        return NULL;
    }
    PyObject *const *field = &PyTuple_GET_ITEM(end_and_start, 0);
    Py_ssize_t offsets[2] = {0, 0};
    Slots slots = {NULL, offsets};
    int found = 0;
    for (Py_ssize_t at = 0; !found && at < PyList_GET_SIZE(items); at++) {
        PyObject *record = PyList_GET_ITEM(items, at);
        Py_INCREF(record);
        PyTypeObject *type = Py_TYPE(record);
        int fast = (type == slots.type) || find_slots(&slots, type, field, 2);
        PyObject *end = read_field(record, &slots, &fast, 0, field[0]);
        PyObject *start = end == NULL ? NULL : read_field(record, &slots, &fast, 1, field[1]);
        found = start == NULL ? -1 : before(end, start, &slots);
        Py_XDECREF(start);
        Py_XDECREF(end);
        Py_DECREF(record);
    }
    if (found < 0)
        return NULL;
    return PyBool_FromLong(found);
}

static PyObject *starts_ascending(PyObject *module, PyObject *items) {
    if (!PyList_CheckExact(items)) {
        PyErr_SetString(PyExc_TypeError, "starts_ascending: a list");
        return NULL;
    }
    PyObject *const *field = &PyTuple_GET_ITEM(end_and_start, 1);
    Py_ssize_t offsets[1] = {0};
    Slots slots = {NULL, offsets};
    long long last = LLONG_MIN;
    for (Py_ssize_t at = 0; at < PyList_GET_SIZE(items); at++) {
        PyObject *record = PyList_GET_ITEM(items, at);
        Py_INCREF(record);
        PyTypeObject *type = Py_TYPE(record);
        int fast = (type == slots.type) || find_slots(&slots, type, field, 1);
        PyObject *start = read_field(record, &slots, &fast, 0, field[0]);
        Py_DECREF(record);
        if (start == NULL) /* sorting by start would read it first and raise the same */
            return NULL;
        int overflow = 1;
        long long value = Py_TYPE(start) == &PyLong_Type ? PyLong_AsLongLongAndOverflow(start, &overflow) : 0;
        Py_DECREF(start);
        if (overflow || value < last) /* not an exact 64-bit int, or out of order: the sort decides */
            Py_RETURN_FALSE;
        last = value;
    }
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"ints_fit", ints_fit, METH_VARARGS,
     "ints_fit(items: list, names: tuple, limit: int, chunk: int) -> bool: every named field of every item an "
     "exact int within [-limit, limit] (errors of attribute reads propagate; reads go on to the end of the "
     "chunk of ``chunk`` items in which a value fails, as record_checks' Python pass does)."},
    {"any_reversed", any_reversed, METH_O,
     "any_reversed(items: list) -> bool: any(end < start) over the items, reading and comparing as "
     "any(map(operator.lt, map(attrgetter('end'), items), map(attrgetter('start'), items))) does."},
    {"starts_ascending", starts_ascending, METH_O,
     "starts_ascending(items: list) -> bool: every item's start an exact int, none below the one before "
     "(False: not known; errors of reading a start propagate, as sorting by it would raise them)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pyprof_live._int_fields", "record_checks' passes over integer fields, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__int_fields(void) {
    if (end_and_start == NULL) {
        PyObject *end = PyUnicode_InternFromString("end"), *start = PyUnicode_InternFromString("start");
        end_and_start = (end && start) ? PyTuple_Pack(2, end, start) : NULL;
        Py_XDECREF(end);
        Py_XDECREF(start);
        if (end_and_start == NULL)
            return NULL;
    }
    return PyModule_Create(&module_def);
}
