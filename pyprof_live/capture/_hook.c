/* The op hook's hot path in C: OpRecorder._record and callsite.capture of recorder.py / callsite.py,
 * ExternOp.call of extern_ops.py (a static compiled graph's extern kernel call recorded without the hook), and
 * compiled.py's kernel_call (a static compiled graph's Inductor kernel call timed).
 *
 * Python C API only (no torch headers), so one build serves every torch release on this Python. Every
 * torch call (sequence numbers, graph task, grad mode, autograd nodes) and every rare path (new
 * overloads, record_function scopes, the record cap, CopySlices) is a Python callable handed in by
 * recorder.py, so torch_compat keeps the version handling. Backward facts (node name, number,
 * AccumulateGrad's parameter, recompute) are read here from the node, by recorder.py's names for its
 * kinds, which this module exports for a test to hold equal to recorder.py's. It appends the same raw tuple,
 * with the same objects and types, as the pure-Python path (tests/test_native_hook.py and
 * tests/test_extern_ops.py prove it).
 *
 * Errors: an exception raised by the op propagates, as in the Python path; so does an error of the
 * hook's own work after it, exactly where the Python path would raise one.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <pythread.h>
#include <structmember.h>
#include <time.h>

static PyObject *s_graph_call, *s_extern_site, *s_graph_backward_facts, *s_recording, *s_recording_public, *s_push,
    *s_pop, *s_empty_tuple, *s_dict, *s_call, *s_shape, *s_dtype, *s_module, *s_hook_ns, *s_host_dir, *s_layers, *s_index, *s_kind,
    *s_writes_first_arg, *s_op, *s_fwd, *s_opt, *s_bwd, *s_zero_grad, *s_undecided, *s_empty, *s_nested,
    *s_name, *s_get, *s_variable, *s_recompute, *s_accumulate_grad, *s_reentrant_checkpoint, *i_zero, *i_minus_one,
    *i_no_sequence;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *raw;                 /* list the tuples go to */
    Py_ssize_t max_ops;
    Py_ssize_t stack_depth;
    PyObject *infos;               /* id(func) -> (info, index, is_op, writes_first_arg, call) */
    PyObject *site_meta;           /* (extern call site's serial, op index) -> (args_meta, kwargs_meta, out_meta) */
    PyObject *new_info;            /* func -> _OpInfo (recorder.py, shared with the Python path) */
    PyObject *scope;               /* (info, func, args, kwargs, hook_in) -> out */
    PyObject *hit_cap;             /* () */
    PyObject *next_id, *peek_seq, *graph_task, *grad_enabled;
    PyObject *current_node;        /* () -> the autograd Node running on this thread, or None */
    PyObject *node_seq;            /* node -> its sequence number */
    PyObject *param_names;
    PyObject *creates_copy_slices; /* args -> bool */
    PyObject *context;
    PyObject *tensor_type;
    PyObject *internal_code;       /* callsite._internal_code */
    PyObject *is_internal;         /* callsite._is_internal */
    PyObject *clock;               /* None: CLOCK_MONOTONIC (time.perf_counter_ns's clock); else a callable */
} Hook;

/* ---- clock ---------------------------------------------------------------------------------------- */

static PyObject *now_ns(PyObject *clock) {
    if (clock != NULL && clock != Py_None)
        return PyObject_CallNoArgs(clock);
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    return PyLong_FromLongLong((long long)ts.tv_sec * 1000000000LL + (long long)ts.tv_nsec);
}

/* What the garbage collector does to a tuple it visits (_PyTuple_MaybeUntrack), done when the tuple is made:
 * a tuple holding only values that cannot be in a reference cycle (ints, strs, dtypes, untracked tuples)
 * leaves the collector's lists. As in CPython, any other object the collector could track (a dict or list,
 * even one untracked now, which becomes tracked when it gets a container) keeps the tuple tracked. The records are millions of such tuples; the Python hook's are untracked
 * too, only later, after one or more collections have visited each. */
static PyObject *untracked(PyObject *tuple) {
    if (tuple == NULL || !PyObject_GC_IsTracked(tuple))
        return tuple;
    for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(tuple); i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i);
        if (item == NULL || (PyObject_IS_GC(item) && (!PyTuple_CheckExact(item) || PyObject_GC_IsTracked(item))))
            return tuple;
    }
    PyObject_GC_UnTrack(tuple);
    return tuple;
}

/* ---- shapes and dtypes (recorder.tensor_meta and recorder._described) ----------------------------- */

static PyObject *tensor_pair(PyObject *t) { /* (tuple(t.shape), t.dtype) */
    PyObject *shape = PyObject_GetAttr(t, s_shape);
    if (shape == NULL)
        return NULL;
    /* torch.Size is a tuple subclass: a slice of it is the plain tuple tuple() makes, without an iterator */
    PyObject *sizes = untracked(PyTuple_Check(shape) ? PyTuple_GetSlice(shape, 0, PyTuple_GET_SIZE(shape))
                                                     : PySequence_Tuple(shape));
    Py_DECREF(shape);
    if (sizes == NULL)
        return NULL;
    PyObject *dtype = PyObject_GetAttr(t, s_dtype);
    if (dtype == NULL) {
        Py_DECREF(sizes);
        return NULL;
    }
    PyObject *pair = PyTuple_New(2);
    if (pair == NULL) {
        Py_DECREF(sizes);
        Py_DECREF(dtype);
        return NULL;
    }
    PyTuple_SET_ITEM(pair, 0, sizes);
    PyTuple_SET_ITEM(pair, 1, dtype);
    return untracked(pair);
}

/* 1 when type(tensor_type).__instancecheck__ is type's: isinstance(v, Tensor) is then a subtype check
 * (plus v.__class__, which builtin values never override), without looking __instancecheck__ up. */
static int plain_isinstance;

/* isinstance(value, tensor_type); the values an aten op's arguments mostly are answered without a call. */
static inline int is_tensor(PyObject *value, PyObject *tensor_type) {
    PyTypeObject *type = Py_TYPE(value);
    if (plain_isinstance) {
        if (type == (PyTypeObject *)tensor_type || PyType_IsSubtype(type, (PyTypeObject *)tensor_type))
            return 1;
        if (type == &PyLong_Type || type == &PyFloat_Type || type == &PyBool_Type || value == Py_None ||
            type == &PyList_Type || type == &PyTuple_Type || type == &PyUnicode_Type || type == &PyComplex_Type)
            return 0;
    }
    return PyObject_IsInstance(value, tensor_type);
}

static inline int is_sequence(PyObject *v) { return PyList_CheckExact(v) || PyTuple_CheckExact(v); }

/* tensor_meta: a tensor's pair; a list/tuple copied one level deep; anything else as it is. */
static PyObject *tensor_meta(PyObject *tensor_type, PyObject *value) {
    int tensor = is_tensor(value, tensor_type);
    if (tensor < 0)
        return NULL;
    if (tensor)
        return tensor_pair(value);
    if (!is_sequence(value))
        return Py_NewRef(value);
    PyObject *seq = PySequence_Fast(value, "");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyTuple_New(n);
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
        int t = is_tensor(v, tensor_type);
        PyObject *m = t < 0 ? NULL : t ? tensor_pair(v) : Py_NewRef(v);
        if (m == NULL) {
            Py_DECREF(seq);
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, m);
    }
    Py_DECREF(seq);
    return untracked(out);
}

/* _described: like tensor_meta, but a tensor without sizes is "nested tensor <dtype>" and lists recurse. */
static PyObject *described(PyObject *tensor_type, PyObject *value) {
    int tensor = is_tensor(value, tensor_type);
    if (tensor < 0)
        return NULL;
    if (tensor) {
        PyObject *pair = tensor_pair(value);
        if (pair != NULL || !PyErr_ExceptionMatches(PyExc_RuntimeError))
            return pair;
        PyErr_Clear();
        PyObject *dtype = PyObject_GetAttr(value, s_dtype);
        if (dtype == NULL)
            return NULL;
        PyObject *text = PyObject_Format(dtype, s_empty);
        Py_DECREF(dtype);
        if (text == NULL)
            return NULL;
        PyObject *out = PyUnicode_Concat(s_nested, text);
        Py_DECREF(text);
        return out;
    }
    if (!is_sequence(value))
        return Py_NewRef(value);
    PyObject *seq = PySequence_Fast(value, "");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyTuple_New(n);
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *m = described(tensor_type, PySequence_Fast_GET_ITEM(seq, i));
        if (m == NULL) {
            Py_DECREF(seq);
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, m);
    }
    Py_DECREF(seq);
    return untracked(out);
}

typedef PyObject *(*meta_fn)(PyObject *, PyObject *);

/* args_meta, kwargs_meta, out_meta with one describer; 0 on success, -1 with an error set. */
static int all_meta(meta_fn meta, PyObject *tensor_type, PyObject *args, PyObject *kwargs, int has_kwargs,
                    PyObject *out, PyObject **args_meta, PyObject **kwargs_meta, PyObject **out_meta) {
    *args_meta = *kwargs_meta = *out_meta = NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *a = PyTuple_New(n);
    if (a == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *m = meta(tensor_type, PyTuple_GET_ITEM(args, i));
        if (m == NULL) {
            Py_DECREF(a);
            return -1;
        }
        PyTuple_SET_ITEM(a, i, m);
    }
    PyObject *k;
    if (has_kwargs) {
        k = PyTuple_New(PyDict_GET_SIZE(kwargs));
        if (k == NULL) {
            Py_DECREF(a);
            return -1;
        }
        Py_ssize_t pos = 0, i = 0;
        PyObject *key, *value;
        while (PyDict_Next(kwargs, &pos, &key, &value)) {
            PyObject *m = meta(tensor_type, value);
            PyObject *pair = m == NULL ? NULL : PyTuple_Pack(2, key, m);
            Py_XDECREF(m);
            if (pair == NULL) {
                Py_DECREF(a);
                Py_DECREF(k);
                return -1;
            }
            PyTuple_SET_ITEM(k, i++, untracked(pair));
        }
    } else {
        k = PyTuple_New(0);
    }
    PyObject *o = meta(tensor_type, out);
    if (o == NULL) {
        Py_DECREF(a);
        Py_DECREF(k);
        return -1;
    }
    *args_meta = untracked(a);
    *kwargs_meta = untracked(k);
    *out_meta = o;
    return 0;
}

/* ---- call sites (callsite.capture) ---------------------------------------------------------------- */

/* Is `code` (its id: `key`) torch/pyprof_live/stdlib plumbing? callsite._internal_code (`known`), filled by
 * callsite._is_internal (`is_internal`) for code not seen before. 1, 0, or -1 with an error set. */
static int is_plumbing(PyCodeObject *code, PyObject *key, PyObject *known, PyObject *is_internal) {
    PyObject *internal = PyDict_GetItemWithError(known, key); /* borrowed */
    if (internal != NULL)
        return PyObject_IsTrue(internal);
    if (PyErr_Occurred())
        return -1;
    PyObject *r = PyObject_CallOneArg(is_internal, (PyObject *)code);
    int truth = r == NULL ? -1 : PyObject_IsTrue(r);
    Py_XDECREF(r);
    return truth;
}

/* Up to depth user frames as (id(code), f_lasti), innermost first, from frame `start` (a new reference,
 * consumed) outwards. Reaching `stop` (a compiled graph call's hook frame, pyprof_live code: plumbing), the walk
 * would go on from its caller, where that hook's own walk (as deep as this one) went, so the rest are `stop_frames`
 * (that walk's result, the same frames: they are suspended in the call) up to depth; stop NULL: none. */
static PyObject *walk_frames(PyFrameObject *frame, Py_ssize_t depth, PyObject *known, PyObject *is_internal,
                             PyObject *stop, PyObject *stop_frames) {
    PyObject *frames = PyList_New(0);
    if (frames == NULL) {
        Py_XDECREF(frame);
        return NULL;
    }
    while (frame != NULL) {
        if ((PyObject *)frame == stop) {
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(stop_frames) && PyList_GET_SIZE(frames) < depth; i++)
                if (PyList_Append(frames, PyTuple_GET_ITEM(stop_frames, i)) < 0)
                    goto error;
            break;
        }
        PyCodeObject *code = PyFrame_GetCode(frame);
        PyObject *key = PyLong_FromVoidPtr(code);
        if (key == NULL) {
            Py_DECREF(code);
            goto error;
        }
        int truth = is_plumbing(code, key, known, is_internal);
        Py_DECREF(code);
        if (truth < 0) {
            Py_DECREF(key);
            goto error;
        }
        if (!truth) {
            PyObject *lasti = PyLong_FromLong(PyFrame_GetLasti(frame));
            PyObject *pair = lasti == NULL ? NULL : PyTuple_Pack(2, key, lasti);
            Py_XDECREF(lasti);
            Py_DECREF(key);
            if (untracked(pair) == NULL || PyList_Append(frames, pair) < 0) {
                Py_XDECREF(pair);
                goto error;
            }
            Py_DECREF(pair);
            if (PyList_GET_SIZE(frames) == depth)
                break;
        } else {
            Py_DECREF(key);
        }
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    Py_XDECREF(frame);
    PyObject *out = untracked(PyList_AsTuple(frames));
    Py_DECREF(frames);
    return out;
error:
    Py_XDECREF(frame);
    Py_DECREF(frames);
    return NULL;
}

/* The current Python frame (a new reference), or NULL without error when there is none. */
static PyFrameObject *current_frame(void) {
    PyFrameObject *frame = PyEval_GetFrame(); /* borrowed */
    Py_XINCREF(frame);
    return frame;
}

static PyObject *g_known, *g_is_internal; /* callsite._internal_code and callsite._is_internal */

static PyObject *set_callsite(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyDict_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "set_callsite(internal_code: dict, is_internal)");
        return NULL;
    }
    Py_XSETREF(g_known, Py_NewRef(args[0]));
    Py_XSETREF(g_is_internal, Py_NewRef(args[1]));
    Py_RETURN_NONE;
}

/* capture(depth, skip=2): callsite.capture in C. Frame 0 of the Python version is capture's own frame,
 * which a C function does not have: the walk starts skip - 1 frames behind the caller's. */
static PyObject *capture(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    static const char usage[] = "capture(depth, skip=2)";
    PyObject *skip_arg = nargs == 2 ? args[1] : NULL;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs < 1 || nargs + nkw > 2 ||
        (nkw == 1 && !PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0))) ||
        (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "skip") != 0)) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    if (nkw == 1)
        skip_arg = args[nargs];
    if (g_known == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_callsite() was not called");
        return NULL;
    }
    Py_ssize_t depth = PyLong_AsSsize_t(args[0]);
    if (depth == -1 && PyErr_Occurred())
        return NULL;
    long skip = 2;
    if (skip_arg != NULL && (skip = PyLong_AsLong(skip_arg)) == -1 && PyErr_Occurred())
        return NULL;
    PyFrameObject *frame = current_frame();
    for (long i = 1; i < skip && frame != NULL; i++) {
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    if (frame == NULL && skip >= 1) {
        PyErr_SetString(PyExc_ValueError, "call stack is not deep enough");
        return NULL;
    }
    return walk_frames(frame, depth, g_known, g_is_internal, NULL, NULL);
}

/* ---- the hook ------------------------------------------------------------------------------------- */

static PyObject *call_op(PyObject *func, PyObject *args, PyObject *kwargs, int has_kwargs) {
    return PyObject_Call(func, args, has_kwargs ? kwargs : NULL);
}

/* (info, index, is_op, writes_first_arg, call) for func, made once per overload. Borrowed reference. */
static PyObject *op_info(Hook *h, PyObject *func) {
    PyObject *key = PyLong_FromVoidPtr(func);
    if (key == NULL)
        return NULL;
    PyObject *entry = PyDict_GetItemWithError(h->infos, key);
    if (entry != NULL || PyErr_Occurred()) {
        Py_DECREF(key);
        return entry;
    }
    PyObject *info = PyObject_CallOneArg(h->new_info, func);
    PyObject *index = NULL, *kind = NULL, *writes = NULL, *call = NULL;
    if (info == NULL || (index = PyObject_GetAttr(info, s_index)) == NULL ||
        (kind = PyObject_GetAttr(info, s_kind)) == NULL ||
        (writes = PyObject_GetAttr(info, s_writes_first_arg)) == NULL || (call = PyObject_GetAttr(info, s_call)) == NULL)
        goto done;
    int is_op = PyObject_RichCompareBool(kind, s_op, Py_EQ);
    if (is_op < 0)
        goto done;
    entry = Py_BuildValue("(OOOOO)", info, index, is_op ? Py_True : Py_False, writes, call);
    if (entry != NULL) {
        if (PyDict_SetItem(h->infos, key, entry) < 0) {
            Py_CLEAR(entry);
        } else {
            Py_DECREF(entry); /* the dict holds it */
        }
    }
done:
    Py_DECREF(key);
    Py_XDECREF(info);
    Py_XDECREF(index);
    Py_XDECREF(kind);
    Py_XDECREF(writes);
    Py_XDECREF(call);
    return entry;
}

static int str_eq(PyObject *a, PyObject *b) { return a == b ? 1 : PyObject_RichCompareBool(a, b, Py_EQ); }

/* The thread context's fields (context.py: a threading.local subclass with plain attributes, no descriptors) are
 * read from this thread's instance dict, which ``ctx.__dict__`` returns: one thread-local lookup per op instead of
 * one per field. A field missing from it goes through getattr, as in Python. */
static PyObject *ctx_get(PyObject *ctx, PyObject *dict, PyObject *name) {
    PyObject *value = PyDict_GetItemWithError(dict, name); /* borrowed */
    if (value != NULL)
        return Py_NewRef(value);
    return PyErr_Occurred() ? NULL : PyObject_GetAttr(ctx, name);
}

/* recorder.host_direction(ctx.host_dir, grad, module) in C: dir of an op outside autograd's engine (new reference). */
static PyObject *host_direction(PyObject *ctx, PyObject *ctx_dict, PyObject *grad, PyObject *module) {
    PyObject *direction = ctx_get(ctx, ctx_dict, s_host_dir);
    if (direction == NULL)
        return NULL;
    int eq = str_eq(direction, s_fwd), truth = 0;
    if (eq > 0) { /* "fwd" inside a module, else undecided */
        if ((truth = PyObject_IsTrue(module)) == 0)
            Py_SETREF(direction, Py_NewRef(s_undecided));
    } else if (eq == 0 && (eq = str_eq(direction, s_opt)) > 0) { /* "opt", or a closure's forward with grad on */
        if ((truth = PyObject_IsTrue(grad)) > 0)
            Py_SETREF(direction, Py_NewRef(s_fwd));
    } else if (eq == 0 && (eq = str_eq(direction, s_zero_grad)) > 0) {
        Py_SETREF(direction, Py_NewRef(s_opt));
    }
    if (eq < 0 || truth < 0)
        Py_CLEAR(direction);
    return direction;
}

/* recorder.backward_facts in C, the same values without a Python frame per backward op: (direction, node name,
 * node sequence number, parameter name) inside autograd's engine, as new references; -1 with an error set. */
static int backward_facts(Hook *h, PyObject *ctx, PyObject *ctx_dict, PyObject **direction, PyObject **node,
                          PyObject **node_seq, PyObject **param) {
    PyObject *current = PyObject_CallNoArgs(h->current_node);
    if (current == NULL)
        return -1;
    if (current == Py_None) {
        Py_DECREF(current);
        *direction = Py_NewRef(s_bwd);
        *node = Py_NewRef(s_empty);
        *node_seq = Py_NewRef(i_minus_one);
        *param = Py_NewRef(Py_None);
        return 0;
    }
    PyObject *name = PyObject_CallMethodNoArgs(current, s_name);
    PyObject *seq = name == NULL ? NULL : PyObject_CallOneArg(h->node_seq, current);
    PyObject *found = Py_NewRef(Py_None), *recompute = NULL;
    int none = seq == NULL ? -1 : PyObject_RichCompareBool(seq, i_no_sequence, Py_EQ);
    if (none < 0)
        goto error;
    if (none) { /* AccumulateGrad and other nodes without a number: -1, and an AccumulateGrad's parameter */
        Py_SETREF(seq, Py_NewRef(i_minus_one));
        int accumulate = str_eq(name, s_accumulate_grad);
        if (accumulate < 0)
            goto error;
        if (accumulate) {
            PyObject *variable = PyObject_GetAttr(current, s_variable);
            PyObject *key = variable == NULL ? NULL : PyLong_FromVoidPtr(variable);
            Py_XDECREF(variable);
            if (key == NULL)
                goto error;
            PyObject *value = PyObject_CallMethodOneArg(h->param_names, s_get, key); /* param_names.get(id(...)) */
            Py_DECREF(key);
            if (value == NULL)
                goto error;
            Py_SETREF(found, value);
        }
    }
    /* reentrant checkpointing re-runs forward inside its Function's backward node */
    if ((recompute = ctx_get(ctx, ctx_dict, s_recompute)) == NULL)
        goto error;
    int again = PyObject_IsTrue(recompute);
    if (again == 0)
        again = str_eq(name, s_reentrant_checkpoint);
    if (again < 0)
        goto error;
    Py_DECREF(recompute);
    Py_DECREF(current);
    *direction = Py_NewRef(again ? s_recompute : s_bwd);
    *node = name;
    *node_seq = seq;
    *param = found;
    return 0;
error:
    Py_DECREF(current);
    Py_XDECREF(name);
    Py_XDECREF(seq);
    Py_DECREF(found);
    Py_XDECREF(recompute);
    return -1;
}

static PyObject *hook_record(Hook *h, PyObject *func, PyObject *args, PyObject *kwargs) {
    PyObject *hook_in = now_ns(h->clock);
    if (hook_in == NULL)
        return NULL;
    PyObject *result = NULL;
    PyObject *targs = NULL, *peek = NULL, *op_id = NULL, *start = NULL, *out = NULL, *end = NULL;
    PyObject *module = NULL, *hooks_before = NULL, *grad = NULL, *task = NULL, *direction = NULL;
    PyObject *node = NULL, *node_seq = NULL, *param = NULL, *frames = NULL, *args_meta = NULL,
             *kwargs_meta = NULL, *out_meta = NULL, *tid = NULL, *view_inplace = NULL, *layers = NULL,
             *hook_out = NULL, *ctx_dict = NULL, *site_key = NULL;
    PyObject *ctx = h->context;

    PyObject *entry = op_info(h, func);
    if (entry == NULL)
        goto done;
    Py_INCREF(entry);
    int has_kwargs = 0;
    if (kwargs != Py_None) {
        has_kwargs = PyObject_IsTrue(kwargs);
        if (has_kwargs < 0)
            goto done_entry;
        if (has_kwargs && !PyDict_Check(kwargs)) {
            PyErr_SetString(PyExc_TypeError, "kwargs must be a dict");
            goto done_entry;
        }
    }
    targs = PyTuple_Check(args) ? Py_NewRef(args) : PySequence_Tuple(args);
    if (targs == NULL)
        goto done_entry;
    if (PyTuple_GET_ITEM(entry, 2) != Py_True) { /* record_function enter/exit */
        result = PyObject_CallFunctionObjArgs(h->scope, PyTuple_GET_ITEM(entry, 0), func, args, kwargs, hook_in,
                                              NULL);
        goto done_entry;
    }
    Py_ssize_t n = PyList_Size(h->raw);
    if (n < 0)
        goto done_entry;
    if (n >= h->max_ops) { /* capped: run the op untouched */
        PyObject *r = PyObject_CallNoArgs(h->hit_cap);
        if (r == NULL)
            goto done_entry;
        Py_DECREF(r);
        result = call_op(PyTuple_GET_ITEM(entry, 4), targs, kwargs, has_kwargs);
        goto done_entry;
    }
    if ((peek = PyObject_CallNoArgs(h->peek_seq)) == NULL || (op_id = PyObject_CallNoArgs(h->next_id)) == NULL ||
        (start = now_ns(h->clock)) == NULL)
        goto done_entry;
    if ((out = call_op(PyTuple_GET_ITEM(entry, 4), targs, kwargs, has_kwargs)) == NULL)
        goto done_entry;
    if ((end = now_ns(h->clock)) == NULL)
        goto done_entry;
    if ((ctx_dict = PyObject_GetAttr(ctx, s_dict)) == NULL)
        goto done_entry;
    if (!PyDict_Check(ctx_dict)) {
        PyErr_SetString(PyExc_TypeError, "the capture context's __dict__ must be a dict");
        goto done_entry;
    }
    if ((module = ctx_get(ctx, ctx_dict, s_module)) == NULL || (hooks_before = ctx_get(ctx, ctx_dict, s_hook_ns)) == NULL)
        goto done_entry;
    int nonzero = PyObject_IsTrue(hooks_before);
    if (nonzero < 0 || (nonzero && PyDict_SetItem(ctx_dict, s_hook_ns, i_zero) < 0))
        goto done_entry;
    if ((grad = PyObject_CallNoArgs(h->grad_enabled)) == NULL || (task = PyObject_CallNoArgs(h->graph_task)) == NULL)
        goto done_entry;
    int host = PyObject_RichCompareBool(task, i_minus_one, Py_EQ);
    if (host < 0)
        goto done_entry;
    if (host) {
        if ((direction = host_direction(ctx, ctx_dict, grad, module)) == NULL)
            goto done_entry;
        node = Py_NewRef(s_empty);
        node_seq = Py_NewRef(i_minus_one);
        param = Py_NewRef(Py_None);
    } else if (backward_facts(h, ctx, ctx_dict, &direction, &node, &node_seq, &param) < 0) {
        goto done_entry;
    }
    int walk = 0;
    if (h->stack_depth) {
        int bwd = str_eq(direction, s_bwd);
        if (bwd < 0)
            goto done_entry;
        walk = !bwd;
    }
    if (walk) {
        /* context.graph_call: (frame, stack depth, call site) of the running graph call's hook, or None */
        PyObject *call = PyDict_GetItemWithError(ctx_dict, s_graph_call); /* borrowed */
        if (call == NULL && PyErr_Occurred())
            goto done_entry;
        PyObject *stop = NULL, *stop_frames = NULL;
        if (call != NULL && PyTuple_CheckExact(call) && PyTuple_GET_SIZE(call) == 3 &&
            PyTuple_CheckExact(PyTuple_GET_ITEM(call, 2))) {
            Py_ssize_t depth = PyLong_AsSsize_t(PyTuple_GET_ITEM(call, 1));
            if (depth == -1 && PyErr_Occurred())
                goto done_entry;
            if (depth == h->stack_depth) { /* captured as deep as this walk goes */
                stop = PyTuple_GET_ITEM(call, 0);
                stop_frames = PyTuple_GET_ITEM(call, 2);
            }
        }
        if ((frames = walk_frames(current_frame(), h->stack_depth, h->internal_code, h->is_internal, stop,
                                  stop_frames)) == NULL)
            goto done_entry;
    } else {
        frames = PyTuple_New(0);
    }
    /* context.extern_site: the first op of an extern kernel call of a static compiled graph has the shapes it had at
     * that call site's first call (the graph's sizes are all constants: compiled.py), read once per profile. */
    PyObject *site = PyDict_GetItemWithError(ctx_dict, s_extern_site); /* borrowed */
    if (site == NULL && PyErr_Occurred())
        goto done_entry;
    if (site != NULL && site != Py_None) {
        if ((site_key = PyTuple_Pack(2, site, PyTuple_GET_ITEM(entry, 1))) == NULL ||
            PyDict_SetItem(ctx_dict, s_extern_site, Py_None) < 0) /* later ops of the call: read as usual */
            goto done_entry;
        PyObject *known = PyDict_GetItemWithError(h->site_meta, site_key); /* borrowed */
        if (known == NULL && PyErr_Occurred())
            goto done_entry;
        if (known != NULL) {
            args_meta = Py_NewRef(PyTuple_GET_ITEM(known, 0));
            kwargs_meta = Py_NewRef(PyTuple_GET_ITEM(known, 1));
            out_meta = Py_NewRef(PyTuple_GET_ITEM(known, 2));
        }
    }
    if (args_meta == NULL) {
        if (all_meta(tensor_meta, h->tensor_type, targs, kwargs, has_kwargs, out, &args_meta, &kwargs_meta,
                     &out_meta) < 0) {
            if (!PyErr_ExceptionMatches(PyExc_RuntimeError)) /* a tensor without sizes (nested): describe it */
                goto done_entry;
            PyErr_Clear();
            if (all_meta(described, h->tensor_type, targs, kwargs, has_kwargs, out, &args_meta, &kwargs_meta,
                         &out_meta) < 0)
                goto done_entry;
        }
        if (site_key != NULL) {
            PyObject *metas = PyTuple_Pack(3, args_meta, kwargs_meta, out_meta);
            int stored = metas == NULL ? -1 : PyDict_SetItem(h->site_meta, site_key, metas);
            Py_XDECREF(metas);
            if (stored < 0)
                goto done_entry;
        }
    }
    unsigned long ident = PyThread_get_thread_ident();
    if ((tid = PyLong_FromUnsignedLong(ident)) == NULL)
        goto done_entry;
    if (PyTuple_GET_ITEM(entry, 3) != Py_True) { /* info.writes_first_arg and _creates_copy_slices(args) */
        view_inplace = Py_NewRef(PyTuple_GET_ITEM(entry, 3));
    } else if ((view_inplace = PyObject_CallOneArg(h->creates_copy_slices, args)) == NULL) {
        goto done_entry;
    }
    if ((layers = ctx_get(ctx, ctx_dict, s_layers)) == NULL || (hook_out = now_ns(h->clock)) == NULL)
        goto done_entry;
    PyObject *record = PyTuple_Pack(21, PyTuple_GET_ITEM(entry, 1), args_meta, kwargs_meta, out_meta, start, end, tid,
                                    peek, grad, view_inplace, direction, node_seq, node, param, module, layers, frames,
                                    op_id, hook_in, hook_out, hooks_before);
    if (untracked(record) == NULL)
        goto done_entry;
    int appended = PyList_Append(h->raw, record);
    Py_DECREF(record);
    if (appended < 0)
        goto done_entry;
    result = Py_NewRef(out);
done_entry:
    Py_DECREF(entry);
done:
    Py_DECREF(hook_in);
    Py_XDECREF(targs);
    Py_XDECREF(peek);
    Py_XDECREF(op_id);
    Py_XDECREF(start);
    Py_XDECREF(out);
    Py_XDECREF(end);
    Py_XDECREF(module);
    Py_XDECREF(hooks_before);
    Py_XDECREF(grad);
    Py_XDECREF(task);
    Py_XDECREF(direction);
    Py_XDECREF(node);
    Py_XDECREF(node_seq);
    Py_XDECREF(param);
    Py_XDECREF(frames);
    Py_XDECREF(args_meta);
    Py_XDECREF(kwargs_meta);
    Py_XDECREF(out_meta);
    Py_XDECREF(tid);
    Py_XDECREF(view_inplace);
    Py_XDECREF(layers);
    Py_XDECREF(hook_out);
    Py_XDECREF(ctx_dict);
    Py_XDECREF(site_key);
    return result;
}

static PyObject *hook_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 3 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "hook(func, args, kwargs)");
        return NULL;
    }
    return hook_record((Hook *)self, args[0], args[1], args[2]);
}

static int hook_init(Hook *h, PyObject *args, PyObject *kw) {
    static char *names[] = {"raw", "max_ops", "stack_depth", "new_info", "scope", "hit_cap", "next_id",
                            "peek_seq", "graph_task", "grad_enabled", "current_node", "node_seq", "param_names",
                            "creates_copy_slices", "context", "tensor_type", "internal_code", "is_internal",
                            NULL};
    PyObject *raw, *new_info, *scope, *hit_cap, *next_id, *peek_seq, *graph_task, *grad_enabled, *current_node, *node_seq,
        *param_names, *creates_copy_slices, *context, *tensor_type, *internal_code, *is_internal;
    Py_ssize_t max_ops, stack_depth;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "$O!nnOOOOOOOOOOOOOO!O", names, &PyList_Type, &raw, &max_ops,
                                     &stack_depth, &new_info, &scope, &hit_cap, &next_id, &peek_seq, &graph_task,
                                     &grad_enabled, &current_node, &node_seq, &param_names, &creates_copy_slices, &context,
                                     &tensor_type, &PyDict_Type, &internal_code, &is_internal))
        return -1;
    if (!PyType_Check(tensor_type)) {
        PyErr_SetString(PyExc_TypeError, "tensor_type must be a type");
        return -1;
    }
    PyObject *check = PyObject_GetAttrString((PyObject *)Py_TYPE(tensor_type), "__instancecheck__");
    PyObject *type_check = check == NULL ? NULL : PyObject_GetAttrString((PyObject *)&PyType_Type, "__instancecheck__");
    if (type_check == NULL) {
        Py_XDECREF(check);
        return -1;
    }
    plain_isinstance = check == type_check;
    Py_DECREF(check);
    Py_DECREF(type_check);
    PyObject *infos = PyDict_New();
    if (infos == NULL)
        return -1;
    Py_XSETREF(h->infos, infos);
    PyObject *site_meta = PyDict_New();
    if (site_meta == NULL)
        return -1;
    Py_XSETREF(h->site_meta, site_meta);
    Py_XSETREF(h->raw, Py_NewRef(raw));
    h->max_ops = max_ops;
    h->stack_depth = stack_depth;
    Py_XSETREF(h->new_info, Py_NewRef(new_info));
    Py_XSETREF(h->scope, Py_NewRef(scope));
    Py_XSETREF(h->hit_cap, Py_NewRef(hit_cap));
    Py_XSETREF(h->next_id, Py_NewRef(next_id));
    Py_XSETREF(h->peek_seq, Py_NewRef(peek_seq));
    Py_XSETREF(h->graph_task, Py_NewRef(graph_task));
    Py_XSETREF(h->grad_enabled, Py_NewRef(grad_enabled));
    Py_XSETREF(h->current_node, Py_NewRef(current_node));
    Py_XSETREF(h->node_seq, Py_NewRef(node_seq));
    Py_XSETREF(h->param_names, Py_NewRef(param_names));
    Py_XSETREF(h->creates_copy_slices, Py_NewRef(creates_copy_slices));
    Py_XSETREF(h->context, Py_NewRef(context));
    Py_XSETREF(h->tensor_type, Py_NewRef(tensor_type));
    Py_XSETREF(h->internal_code, Py_NewRef(internal_code));
    Py_XSETREF(h->is_internal, Py_NewRef(is_internal));
    Py_XSETREF(h->clock, Py_NewRef(Py_None));
    return 0;
}

static PyObject *hook_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    Hook *h = (Hook *)type->tp_alloc(type, 0);
    if (h != NULL)
        h->vectorcall = hook_vectorcall;
    return (PyObject *)h;
}

static int hook_traverse(Hook *h, visitproc visit, void *arg) {
    Py_VISIT(h->raw);
    Py_VISIT(h->infos);
    Py_VISIT(h->site_meta);
    Py_VISIT(h->new_info);
    Py_VISIT(h->scope);
    Py_VISIT(h->hit_cap);
    Py_VISIT(h->next_id);
    Py_VISIT(h->peek_seq);
    Py_VISIT(h->graph_task);
    Py_VISIT(h->grad_enabled);
    Py_VISIT(h->current_node);
    Py_VISIT(h->node_seq);
    Py_VISIT(h->param_names);
    Py_VISIT(h->creates_copy_slices);
    Py_VISIT(h->context);
    Py_VISIT(h->tensor_type);
    Py_VISIT(h->internal_code);
    Py_VISIT(h->is_internal);
    Py_VISIT(h->clock);
    return 0;
}

static int hook_clear(Hook *h) {
    Py_CLEAR(h->raw);
    Py_CLEAR(h->infos);
    Py_CLEAR(h->site_meta);
    Py_CLEAR(h->new_info);
    Py_CLEAR(h->scope);
    Py_CLEAR(h->hit_cap);
    Py_CLEAR(h->next_id);
    Py_CLEAR(h->peek_seq);
    Py_CLEAR(h->graph_task);
    Py_CLEAR(h->grad_enabled);
    Py_CLEAR(h->current_node);
    Py_CLEAR(h->node_seq);
    Py_CLEAR(h->param_names);
    Py_CLEAR(h->creates_copy_slices);
    Py_CLEAR(h->context);
    Py_CLEAR(h->tensor_type);
    Py_CLEAR(h->internal_code);
    Py_CLEAR(h->is_internal);
    Py_CLEAR(h->clock);
    return 0;
}

static void hook_dealloc(Hook *h) {
    PyObject_GC_UnTrack(h);
    hook_clear(h);
    Py_TYPE(h)->tp_free((PyObject *)h);
}

static PyObject *hook_call(PyObject *self, PyObject *args, PyObject *kw) {
    return PyVectorcall_Call(self, args, kw);
}

static PyMemberDef hook_members[] = {
    {"clock", T_OBJECT, offsetof(Hook, clock), 0, "None (CLOCK_MONOTONIC, as time.perf_counter_ns) or a callable"},
    {NULL},
};

static PyTypeObject HookType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pyprof_live.capture._hook.Hook",
    .tp_basicsize = sizeof(Hook),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "OpRecorder._record in C: Hook(**callables)(func, args, kwargs) -> the op's output.",
    .tp_new = hook_new,
    .tp_init = (initproc)hook_init,
    .tp_traverse = (traverseproc)hook_traverse,
    .tp_clear = (inquiry)hook_clear,
    .tp_dealloc = (destructor)hook_dealloc,
    .tp_call = hook_call,
    .tp_vectorcall_offset = offsetof(Hook, vectorcall),
    .tp_members = hook_members,
};


/* ---- the dispatch entry (OpRecorder.__torch_dispatch__) ------------------------------------------- */

/* OpRecorder.__torch_dispatch__ in C, put in the recorder's instance dict (torch looks the attribute up on the
 * mode object and calls it with (func, types, args, kwargs)): no Python frame per op. As the Python method: Dynamo's
 * frame callback is off (set_eval_frame(None)) around the hook and the op and put back even when the op raises;
 * while ``recording`` is false the op runs untouched. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *hook;           /* a Hook (called directly), or a callable (func, args, kwargs) -> out */
    PyObject *set_eval_frame; /* torch_compat.set_eval_frame */
    PyObject *mode;           /* __self__: torch checks that a mode's __torch_dispatch__ is bound to the mode */
    char recording;
} Dispatch;

static PyTypeObject HookType;

static PyObject *dispatch_vectorcall(PyObject *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames) {
    Dispatch *d = (Dispatch *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *func = NULL, *args = NULL, *kwargs = NULL;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs < 2 || nargs > 4)
        goto usage;
    func = argv[0];
    if (nargs > 2)
        args = argv[2];
    if (nargs > 3)
        kwargs = argv[3];
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        if (args == NULL && PyUnicode_CompareWithASCIIString(name, "args") == 0)
            args = argv[nargs + i];
        else if (kwargs == NULL && PyUnicode_CompareWithASCIIString(name, "kwargs") == 0)
            kwargs = argv[nargs + i];
        else
            goto usage;
    }
    PyObject *empty = NULL;
    if (args == NULL && (args = empty = PyTuple_New(0)) == NULL)
        return NULL;
    if (kwargs == NULL)
        kwargs = Py_None;
    PyObject *none = Py_None;
    PyObject *prior = PyObject_Vectorcall(d->set_eval_frame, &none, 1, NULL);
    if (prior == NULL) {
        Py_XDECREF(empty);
        return NULL;
    }
    PyObject *out;
    if (d->recording && d->hook != NULL) {
        if (Py_IS_TYPE(d->hook, &HookType))
            out = hook_record((Hook *)d->hook, func, args, kwargs);
        else
            out = PyObject_CallFunctionObjArgs(d->hook, func, args, kwargs, NULL);
    } else { /* func(*args, **kwargs) if kwargs else func(*args) */
        int has_kwargs = kwargs == Py_None ? 0 : PyObject_IsTrue(kwargs);
        PyObject *targs = has_kwargs < 0 ? NULL : PyTuple_Check(args) ? Py_NewRef(args) : PySequence_Tuple(args);
        out = NULL;
        if (targs != NULL) {
            if (has_kwargs && !PyDict_Check(kwargs)) {
                PyObject *dict = PyDict_New();
                if (dict != NULL && PyDict_Merge(dict, kwargs, 1) == 0)
                    out = PyObject_Call(func, targs, dict);
                Py_XDECREF(dict);
            } else {
                out = call_op(func, targs, kwargs, has_kwargs);
            }
            Py_DECREF(targs);
        }
    }
    Py_XDECREF(empty);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb); /* the op's error, if any, survives the restore (a finally: block) */
    PyObject *restored = PyObject_Vectorcall(d->set_eval_frame, &prior, 1, NULL);
    Py_DECREF(prior);
    if (restored == NULL) { /* as in Python: the finally block's error, with the op's as its context */
        Py_XDECREF(out);
        if (type != NULL)
            _PyErr_ChainExceptions(type, value, tb);
        return NULL;
    }
    Py_DECREF(restored);
    if (out == NULL)
        PyErr_Restore(type, value, tb);
    return out;
usage:
    PyErr_SetString(PyExc_TypeError, "__torch_dispatch__(func, types, args=(), kwargs=None)");
    return NULL;
}

static int dispatch_init(Dispatch *d, PyObject *args, PyObject *kw) {
    static char *names[] = {"mode", "hook", "set_eval_frame", NULL};
    PyObject *mode, *hook, *set_eval_frame;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "$OOO", names, &mode, &hook, &set_eval_frame))
        return -1;
    Py_XSETREF(d->mode, Py_NewRef(mode));
    Py_XSETREF(d->hook, Py_NewRef(hook));
    Py_XSETREF(d->set_eval_frame, Py_NewRef(set_eval_frame));
    d->recording = 0;
    return 0;
}

static PyObject *dispatch_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    Dispatch *d = (Dispatch *)type->tp_alloc(type, 0);
    if (d != NULL)
        d->vectorcall = dispatch_vectorcall;
    return (PyObject *)d;
}

static int dispatch_traverse(Dispatch *d, visitproc visit, void *arg) {
    Py_VISIT(d->hook);
    Py_VISIT(d->set_eval_frame);
    Py_VISIT(d->mode);
    return 0;
}

static int dispatch_clear(Dispatch *d) {
    Py_CLEAR(d->hook);
    Py_CLEAR(d->set_eval_frame);
    Py_CLEAR(d->mode);
    return 0;
}

static void dispatch_dealloc(Dispatch *d) {
    PyObject_GC_UnTrack(d);
    dispatch_clear(d);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

static PyMemberDef dispatch_members[] = {
    {"recording", T_BOOL, offsetof(Dispatch, recording), 0, "record ops (true) or pass them on untouched"},
    {"__self__", T_OBJECT, offsetof(Dispatch, mode), READONLY, "the mode (as a bound method's __self__)"},
    {NULL},
};

static PyTypeObject DispatchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pyprof_live.capture._hook.Dispatch",
    .tp_basicsize = sizeof(Dispatch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "OpRecorder.__torch_dispatch__ in C: Dispatch(mode=, hook=, set_eval_frame=)(func, types, args, kwargs).",
    .tp_new = dispatch_new,
    .tp_init = (initproc)dispatch_init,
    .tp_traverse = (traverseproc)dispatch_traverse,
    .tp_clear = (inquiry)dispatch_clear,
    .tp_dealloc = (destructor)dispatch_dealloc,
    .tp_call = hook_call,
    .tp_vectorcall_offset = offsetof(Dispatch, vectorcall),
    .tp_members = dispatch_members,
};

/* ---- extern kernel calls of static compiled graphs (extern_ops.ExternOp) ---------------------------- */

/* extern_ops.ExternOp.call in C: the same raw tuple, each field read as there, the same calls left to the op hook
 * (NOT_TAKEN). The torch calls it makes, and the objects it reads, are extern_ops.py's, handed in by set_extern_ops. */
static struct {
    PyObject *stack_len, *stack_at, *pop, *push; /* torch_compat's dispatch-stack calls */
    /* the thread's TorchFunctionMode count; whether one other than set_default_device's is there (asked only when
     * there is one); whether the Python dispatch key is excluded (no_dispatch()): any of them keeps the hook */
    PyObject *function_modes, *foreign_function_modes, *python_key_excluded;
    PyObject *peek_seq, *graph_task, *grad_enabled;
    PyObject *backward_facts; /* recorder.backward_facts(ctx, param_names): once per backward graph call */
    PyObject *context;        /* context.context */
    PyObject *internal_code, *is_internal;
    PyObject *not_taken;
    PyObject *clock; /* None: CLOCK_MONOTONIC (time.perf_counter_ns's clock); else a callable */
} handed;

#define HANDED_FIELDS 16

static PyObject *set_extern_ops(PyObject *self, PyObject *args, PyObject *kw) {
    static char *names[HANDED_FIELDS + 1] = {"stack_len", "stack_at", "pop", "push", "function_modes",
                                             "foreign_function_modes", "python_key_excluded", "peek_seq",
                                             "graph_task", "grad_enabled", "backward_facts", "context",
                                             "internal_code", "is_internal", "not_taken", "clock", NULL};
    PyObject *v[HANDED_FIELDS];
    if (!PyArg_ParseTupleAndKeywords(args, kw, "$OOOOOOOOOOOOO!OOO", names, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                                     &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &PyDict_Type, &v[12], &v[13], &v[14],
                                     &v[15]))
        return NULL;
    PyObject **slots[HANDED_FIELDS] = {&handed.stack_len, &handed.stack_at, &handed.pop, &handed.push,
                                       &handed.function_modes, &handed.foreign_function_modes,
                                       &handed.python_key_excluded, &handed.peek_seq, &handed.graph_task,
                                       &handed.grad_enabled, &handed.backward_facts, &handed.context,
                                       &handed.internal_code, &handed.is_internal, &handed.not_taken, &handed.clock};
    for (int i = 0; i < HANDED_FIELDS; i++)
        Py_XSETREF(*slots[i], Py_NewRef(v[i]));
    Py_RETURN_NONE;
}

typedef struct {
    PyObject_HEAD
    PyObject *recorder; /* the op hook; its raw list, cap, stack depth, GPU backend, id counter and parameter
                         * names are read once here: they do not change while it records */
    PyObject *raw, *gpu, *next_id, *param_names;
    PyObject *dispatch_ns; /* what finalize.py adds to each op's overhead for torch's dispatch into the hook */
    Py_ssize_t max_ops, stack_depth;
    PyObject *index, *args, *kwargs, *out; /* the first call's op: the raw tuple's constant fields */
    PyObject *run, *line, *calls;          /* the extern call's own entry (compiled.py) */
} ExternOp;

/* The truth of fn(): 1, 0, or -1 with an error set. */
static int truth_of_call(PyObject *fn) {
    PyObject *value = PyObject_CallNoArgs(fn);
    if (value == NULL)
        return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

/* Every frame from `frame` (a new reference, consumed) out to `stop` is plumbing: 1, 0, or -1 with an error set. */
static int plumbing_until(PyFrameObject *frame, PyObject *stop) {
    int all = 1;
    while (all > 0 && (PyObject *)frame != stop) {
        if (frame == NULL)
            return 0;
        PyCodeObject *code = PyFrame_GetCode(frame);
        PyObject *key = PyLong_FromVoidPtr(code);
        all = key == NULL ? -1 : is_plumbing(code, key, handed.internal_code, handed.is_internal);
        Py_XDECREF(key);
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    Py_XDECREF(frame);
    return all;
}

/* fn(*args, **kwargs) with the op hook off the thread's mode stack (and the op's id pushed to the GPU backend), put
 * back even when fn raises; *start and *end: the clock around it. A new reference, or NULL with an error set. */
static PyObject *run_without_hook(ExternOp *op, PyObject *fn, PyObject *args, PyObject *kwargs, PyObject *op_id,
                                  PyObject **start, PyObject **end) {
    PyObject *none = Py_None, *out = NULL;
    PyObject *popped = PyObject_Vectorcall(handed.pop, &none, 1, NULL); /* None: not one of torch's infra modes */
    if (popped == NULL)
        return NULL;
    Py_DECREF(popped);
    PyObject *kw = PyDict_GET_SIZE(kwargs) ? kwargs : NULL;
    if ((*start = now_ns(handed.clock)) != NULL) {
        if (op->gpu == Py_None) {
            out = PyObject_Call(fn, args, kw);
        } else {
            PyObject *pushed = PyObject_CallMethodOneArg(op->gpu, s_push, op_id);
            if (pushed != NULL) {
                Py_DECREF(pushed);
                out = PyObject_Call(fn, args, kw);
                PyObject *type, *value, *tb; /* gpu.pop() in a finally: block */
                PyErr_Fetch(&type, &value, &tb);
                PyObject *gpu_popped = PyObject_CallMethodNoArgs(op->gpu, s_pop);
                if (gpu_popped == NULL) {
                    Py_CLEAR(out);
                    if (type != NULL)
                        _PyErr_ChainExceptions(type, value, tb);
                } else {
                    Py_DECREF(gpu_popped);
                    PyErr_Restore(type, value, tb);
                }
            }
        }
        if (out != NULL && (*end = now_ns(handed.clock)) == NULL)
            Py_CLEAR(out);
    }
    PyObject *type, *value, *tb; /* the hook goes back on the stack in a finally: block */
    PyErr_Fetch(&type, &value, &tb);
    PyObject *pushed = PyObject_Vectorcall(handed.push, &op->recorder, 1, NULL);
    if (pushed == NULL) {
        Py_CLEAR(out);
        if (type != NULL)
            _PyErr_ChainExceptions(type, value, tb);
        return NULL;
    }
    Py_DECREF(pushed);
    PyErr_Restore(type, value, tb);
    return out;
}

/* ctx.graph_backward_facts, read (ctx: context, a threading.local) once per graph call inside autograd's engine: one
 * autograd node runs all of it. A new reference to (direction, node name, node sequence number, parameter name). */
static PyObject *graph_backward_facts(ExternOp *op, PyObject *ctx_dict) {
    PyObject *facts = ctx_get(handed.context, ctx_dict, s_graph_backward_facts);
    if (facts == NULL || facts != Py_None)
        return facts;
    Py_DECREF(facts);
    PyObject *argv[2] = {handed.context, op->param_names};
    facts = PyObject_Vectorcall(handed.backward_facts, argv, 2, NULL);
    if (facts != NULL && (!PyTuple_CheckExact(facts) || PyTuple_GET_SIZE(facts) != 4)) {
        PyErr_SetString(PyExc_TypeError, "backward_facts must return (direction, node, node_seq, param)");
        Py_CLEAR(facts);
    }
    if (facts != NULL && PyObject_SetAttr(handed.context, s_graph_backward_facts, facts) < 0)
        Py_CLEAR(facts);
    return facts;
}

/* ExternOp.call(fn, args, kwargs), its frame walk starting at `caller` (a new reference, consumed; NULL: none), the
 * frame that called compiled.py's extern call. */
static PyObject *extern_op_record(ExternOp *op, PyObject *fn, PyObject *args, PyObject *kwargs, PyFrameObject *caller) {
    PyObject *result = NULL, *len = NULL, *top = NULL, *recording = NULL, *ctx_dict = NULL, *graph_call = NULL,
             *peek = NULL, *op_id = NULL, *start = NULL, *end = NULL, *out = NULL, *module = NULL,
             *hooks_before = NULL, *grad = NULL, *task = NULL, *direction = NULL, *facts = NULL, *tid = NULL,
             *layers = NULL, *hook_out = NULL;
    PyObject *site = s_empty_tuple, *node = s_empty, *node_seq = i_minus_one, *param = Py_None; /* borrowed */
    PyObject *hook_in = now_ns(handed.clock);
    if (hook_in == NULL)
        goto done;
    if (!PyTuple_Check(args) || !PyDict_Check(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "ExternOp.call(fn, args: tuple, kwargs: dict)");
        goto done;
    }
    /* the op hook alone on the thread's mode stack, recording, under its cap */
    if ((len = PyObject_CallNoArgs(handed.stack_len)) == NULL)
        goto done;
    Py_ssize_t modes = PyLong_AsSsize_t(len);
    if (modes == -1 && PyErr_Occurred())
        goto done;
    if (modes != 1)
        goto not_taken;
    PyObject *zero = i_zero;
    if ((top = PyObject_Vectorcall(handed.stack_at, &zero, 1, NULL)) == NULL)
        goto done;
    if (top != op->recorder)
        goto not_taken;
    if ((recording = PyObject_GetAttr(op->recorder, s_recording)) == NULL)
        goto done;
    int on = PyObject_IsTrue(recording);
    if (on < 0)
        goto done;
    if (!on || PyList_GET_SIZE(op->raw) >= op->max_ops)
        goto not_taken;
    /* extern_ops.hook_alone's other two conditions: no TorchFunctionMode of the user's, no_dispatch() off */
    int hidden = truth_of_call(handed.function_modes);
    if (hidden > 0)
        hidden = truth_of_call(handed.foreign_function_modes);
    if (hidden == 0)
        hidden = truth_of_call(handed.python_key_excluded);
    if (hidden < 0)
        goto done;
    if (hidden)
        goto not_taken;
    if ((ctx_dict = PyObject_GetAttr(handed.context, s_dict)) == NULL)
        goto done;
    if (!PyDict_Check(ctx_dict)) {
        PyErr_SetString(PyExc_TypeError, "the capture context's __dict__ must be a dict");
        goto done;
    }
    /* (frame, stack depth, call site) of the hook of the compiled graph call this extern call runs in */
    if ((graph_call = ctx_get(handed.context, ctx_dict, s_graph_call)) == NULL)
        goto done;
    if (graph_call == Py_None)
        goto not_taken;
    if (op->stack_depth) {
        /* The hook's walk from the op goes through plumbing frames up to the graph call's hook, then takes the
         * call site that hook captured (walk_frames): so, here, when every frame up to that hook is plumbing. */
        if (!PyTuple_CheckExact(graph_call) || PyTuple_GET_SIZE(graph_call) != 3)
            goto not_taken;
        Py_ssize_t depth = PyLong_AsSsize_t(PyTuple_GET_ITEM(graph_call, 1));
        if (depth == -1 && PyErr_Occurred())
            goto done;
        if (depth != op->stack_depth)
            goto not_taken;
        int plumbing = plumbing_until(caller, PyTuple_GET_ITEM(graph_call, 0));
        caller = NULL; /* consumed */
        if (plumbing < 0)
            goto done;
        if (!plumbing)
            goto not_taken;
        site = PyTuple_GET_ITEM(graph_call, 2);
    }
    if ((peek = PyObject_CallNoArgs(handed.peek_seq)) == NULL || (op_id = PyObject_CallNoArgs(op->next_id)) == NULL ||
        (out = run_without_hook(op, fn, args, kwargs, op_id, &start, &end)) == NULL)
        goto done;
    if ((module = ctx_get(handed.context, ctx_dict, s_module)) == NULL ||
        (hooks_before = ctx_get(handed.context, ctx_dict, s_hook_ns)) == NULL)
        goto done;
    int nonzero = PyObject_IsTrue(hooks_before);
    if (nonzero < 0 || (nonzero && PyObject_SetAttr(handed.context, s_hook_ns, i_zero) < 0))
        goto done;
    /* finalize.py adds the cost of torch's dispatch into the hook to every op's overhead; this op made none */
    Py_SETREF(hooks_before, PyNumber_Subtract(hooks_before, op->dispatch_ns));
    if (hooks_before == NULL)
        goto done;
    if ((grad = PyObject_CallNoArgs(handed.grad_enabled)) == NULL ||
        (task = PyObject_CallNoArgs(handed.graph_task)) == NULL)
        goto done;
    int host = PyObject_RichCompareBool(task, i_minus_one, Py_EQ);
    if (host < 0)
        goto done;
    if (host) {
        if ((direction = host_direction(handed.context, ctx_dict, grad, module)) == NULL)
            goto done;
    } else {
        if ((facts = graph_backward_facts(op, ctx_dict)) == NULL)
            goto done;
        direction = Py_NewRef(PyTuple_GET_ITEM(facts, 0));
        node = PyTuple_GET_ITEM(facts, 1);
        node_seq = PyTuple_GET_ITEM(facts, 2);
        param = PyTuple_GET_ITEM(facts, 3);
    }
    int bwd = str_eq(direction, s_bwd);
    if (bwd < 0 || (tid = PyLong_FromUnsignedLong(PyThread_get_thread_ident())) == NULL ||
        (layers = ctx_get(handed.context, ctx_dict, s_layers)) == NULL || (hook_out = now_ns(handed.clock)) == NULL)
        goto done;
    PyObject *record = PyTuple_Pack(21, op->index, op->args, op->kwargs, op->out, start, end, tid, peek,
                                    grad, Py_False, direction, node_seq, node, param, module, layers,
                                    bwd ? s_empty_tuple : site, op_id, hook_in, hook_out, hooks_before);
    if (untracked(record) == NULL)
        goto done;
    int appended = PyList_Append(op->raw, record);
    Py_DECREF(record);
    if (appended < 0)
        goto done;
    PyObject *call = PyTuple_Pack(5, op->run, op->line, start, end, tid);
    if (call == NULL)
        goto done;
    appended = PyList_Append(op->calls, call);
    Py_DECREF(call);
    if (appended < 0)
        goto done;
    result = Py_NewRef(out);
    goto done;
not_taken:
    result = Py_NewRef(handed.not_taken);
done:
    Py_XDECREF(caller);
    Py_XDECREF(hook_in);
    Py_XDECREF(len);
    Py_XDECREF(top);
    Py_XDECREF(recording);
    Py_XDECREF(ctx_dict);
    Py_XDECREF(graph_call);
    Py_XDECREF(peek);
    Py_XDECREF(op_id);
    Py_XDECREF(start);
    Py_XDECREF(end);
    Py_XDECREF(out);
    Py_XDECREF(module);
    Py_XDECREF(hooks_before);
    Py_XDECREF(grad);
    Py_XDECREF(task);
    Py_XDECREF(direction);
    Py_XDECREF(facts);
    Py_XDECREF(tid);
    Py_XDECREF(layers);
    Py_XDECREF(hook_out);
    return result;
}

/* The frame that called the running Python function (a new reference), or NULL without error when there is none. */
static PyFrameObject *callers_frame(void) {
    PyFrameObject *frame = PyEval_GetFrame(); /* borrowed */
    return frame == NULL ? NULL : PyFrame_GetBack(frame);
}

static PyObject *extern_op_call(ExternOp *op, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "ExternOp.call(fn, args, kwargs)");
        return NULL;
    }
    if (handed.not_taken == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_extern_ops() was not called");
        return NULL;
    }
    /* called from compiled.py's extern call (a Python function): the walk starts at its caller, as in Python */
    return extern_op_record(op, args[0], args[1], args[2], callers_frame());
}

/* The recorder's attribute `name` as a new reference in *slot (-1 with an error set). */
static int recorder_attr(PyObject *recorder, const char *name, PyObject **slot) {
    *slot = PyObject_GetAttrString(recorder, name);
    return *slot == NULL ? -1 : 0;
}

/* ExternOp(recorder, record, run, line, calls), built whole here (no __init__: a half-made or re-made one cannot be
 * called). The recorder's raw list, cap, stack depth, GPU backend, id counter, parameter names and dispatch cost are
 * read once: they do not change while it records. */
static PyObject *extern_op_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *names[] = {"recorder", "record", "run", "line", "calls", NULL};
    PyObject *recorder, *record, *run, *line, *calls, *max_ops = NULL, *stack_depth = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!OOO!", names, &recorder, &PyTuple_Type, &record, &run, &line,
                                     &PyList_Type, &calls))
        return NULL;
    if (PyTuple_GET_SIZE(record) < 4) {
        PyErr_SetString(PyExc_ValueError, "record must be a raw op tuple");
        return NULL;
    }
    ExternOp *op = (ExternOp *)type->tp_alloc(type, 0);
    if (op == NULL)
        return NULL;
    if (recorder_attr(recorder, "raw", &op->raw) < 0 || recorder_attr(recorder, "gpu", &op->gpu) < 0 ||
        recorder_attr(recorder, "next_id", &op->next_id) < 0 ||
        recorder_attr(recorder, "param_names", &op->param_names) < 0 ||
        recorder_attr(recorder, "dispatch_ns", &op->dispatch_ns) < 0 ||
        recorder_attr(recorder, "max_ops", &max_ops) < 0 || recorder_attr(recorder, "stack_depth", &stack_depth) < 0)
        goto error;
    if (!PyList_Check(op->raw)) {
        PyErr_SetString(PyExc_TypeError, "the recorder's raw ops must be a list");
        goto error;
    }
    if ((op->max_ops = PyNumber_AsSsize_t(max_ops, PyExc_OverflowError)) == -1 && PyErr_Occurred())
        goto error;
    if ((op->stack_depth = PyNumber_AsSsize_t(stack_depth, PyExc_OverflowError)) == -1 && PyErr_Occurred())
        goto error;
    Py_DECREF(max_ops);
    Py_DECREF(stack_depth);
    op->recorder = Py_NewRef(recorder);
    op->index = Py_NewRef(PyTuple_GET_ITEM(record, 0));
    op->args = Py_NewRef(PyTuple_GET_ITEM(record, 1));
    op->kwargs = Py_NewRef(PyTuple_GET_ITEM(record, 2));
    op->out = Py_NewRef(PyTuple_GET_ITEM(record, 3));
    op->run = Py_NewRef(run);
    op->line = Py_NewRef(line);
    op->calls = Py_NewRef(calls);
    return (PyObject *)op;
error:
    Py_XDECREF(max_ops);
    Py_XDECREF(stack_depth);
    Py_DECREF(op);
    return NULL;
}

static int extern_op_traverse(ExternOp *op, visitproc visit, void *arg) {
    Py_VISIT(op->recorder);
    Py_VISIT(op->raw);
    Py_VISIT(op->gpu);
    Py_VISIT(op->next_id);
    Py_VISIT(op->param_names);
    Py_VISIT(op->dispatch_ns);
    Py_VISIT(op->index);
    Py_VISIT(op->args);
    Py_VISIT(op->kwargs);
    Py_VISIT(op->out);
    Py_VISIT(op->run);
    Py_VISIT(op->line);
    Py_VISIT(op->calls);
    return 0;
}

static int extern_op_clear(ExternOp *op) {
    Py_CLEAR(op->recorder);
    Py_CLEAR(op->raw);
    Py_CLEAR(op->gpu);
    Py_CLEAR(op->next_id);
    Py_CLEAR(op->param_names);
    Py_CLEAR(op->dispatch_ns);
    Py_CLEAR(op->index);
    Py_CLEAR(op->args);
    Py_CLEAR(op->kwargs);
    Py_CLEAR(op->out);
    Py_CLEAR(op->run);
    Py_CLEAR(op->line);
    Py_CLEAR(op->calls);
    return 0;
}

static void extern_op_dealloc(ExternOp *op) {
    PyObject_GC_UnTrack(op);
    extern_op_clear(op);
    Py_TYPE(op)->tp_free((PyObject *)op);
}

static PyMethodDef extern_op_methods[] = {
    {"call", (PyCFunction)(void (*)(void))extern_op_call, METH_FASTCALL,
     "call(fn, args, kwargs): fn(*args, **kwargs) with its op's raw tuple and the extern call appended, or NOT_TAKEN "
     "(fn not run)."},
    {NULL},
};

static PyMemberDef extern_op_members[] = {
    {"recorder", T_OBJECT, offsetof(ExternOp, recorder), READONLY, "the op hook"},
    {"raw", T_OBJECT, offsetof(ExternOp, raw), READONLY, "the op hook's raw op tuples"},
    {"index", T_OBJECT, offsetof(ExternOp, index), READONLY, "the op's index in the profile's op infos"},
    {"args", T_OBJECT, offsetof(ExternOp, args), READONLY, "the op's argument shapes"},
    {"kwargs", T_OBJECT, offsetof(ExternOp, kwargs), READONLY, "the op's keyword argument shapes"},
    {"out", T_OBJECT, offsetof(ExternOp, out), READONLY, "the op's output shapes"},
    {"run", T_OBJECT, offsetof(ExternOp, run), READONLY, "the graph run of the extern call"},
    {"line", T_OBJECT, offsetof(ExternOp, line), READONLY, "the extern call's wrapper line"},
    {"calls", T_OBJECT, offsetof(ExternOp, calls), READONLY, "the extern calls' list"},
    {NULL},
};

static PyTypeObject ExternOpType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pyprof_live.capture._hook.ExternOp",
    .tp_basicsize = sizeof(ExternOp),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "extern_ops.ExternOp in C: ExternOp(recorder, record, run, line, calls).",
    .tp_new = extern_op_new,
    .tp_traverse = (traverseproc)extern_op_traverse,
    .tp_clear = (inquiry)extern_op_clear,
    .tp_dealloc = (destructor)extern_op_dealloc,
    .tp_methods = extern_op_methods,
    .tp_members = extern_op_members,
};

/* compiled.py's extern_call in C for a static graph's calls whose site learned a C ExternOp: no Python frame for the
 * wrapper, its call-site lookup or ExternOp.call. Every other call goes to extern_call itself (not recording, a site
 * not seen or not learned), and a call ExternOp leaves to the op hook to hooked_call(site, args, kwargs). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn;          /* the extern kernel */
    PyObject *capture;     /* CompiledCapture: .recording */
    PyObject *sites;       /* GraphRun.metas: (id(code), f_lasti) of the call -> (line, shapes, code, serial) */
    PyObject *known;       /* CompiledCapture.extern_ops: serial -> ExternOp, or None */
    PyObject *extern_call; /* compiled.py's Python extern_call */
    PyObject *hooked_call; /* compiled.py's (site, args, kwargs) -> out: the call through the op hook */
} ExternCall;

/* The site of the call the frame runs, from ``sites`` (GraphRun.metas, keyed as compiled.py's _call_site keys it:
 * (id(code), f_lasti)), borrowed; NULL: not seen yet (or an error set). Keyed by the frame's f_lasti during a call to
 * a C callable (its CALL instruction; a Python wrapper's frame reads a later offset), so the sites a C wrapper makes
 * are found by C wrappers alone. */
static PyObject *known_site(PyObject *sites, PyFrameObject *frame) {
    PyCodeObject *code = PyFrame_GetCode(frame);
    PyObject *key = Py_BuildValue("(Ni)", PyLong_FromVoidPtr(code), PyFrame_GetLasti(frame));
    Py_DECREF(code);
    if (key == NULL)
        return NULL;
    PyObject *site = PyDict_GetItemWithError(sites, key); /* borrowed */
    Py_DECREF(key);
    if (site != NULL && (!PyTuple_CheckExact(site) || PyTuple_GET_SIZE(site) != 4))
        site = NULL; /* not one _call_site made: let it say */
    return site;
}

static PyObject *extern_call_vectorcall(PyObject *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames) {
    ExternCall *c = (ExternCall *)self;
    PyFrameObject *frame = PyEval_GetFrame(); /* borrowed: the wrapper's, which called this */
    PyObject *recording = PyObject_GetAttr(c->capture, s_recording_public);
    int on = recording == NULL ? -1 : PyObject_IsTrue(recording);
    Py_XDECREF(recording);
    if (on < 0)
        return NULL;
    PyObject *site = on && frame != NULL ? known_site(c->sites, frame) : NULL;
    PyObject *op = site == NULL ? NULL : PyDict_GetItemWithError(c->known, PyTuple_GET_ITEM(site, 3)); /* borrowed */
    if (PyErr_Occurred())
        return NULL;
    if (op == NULL || !Py_IS_TYPE(op, &ExternOpType))
        return PyObject_Vectorcall(c->extern_call, argv, nargsf, kwnames);
    Py_INCREF(site);
    Py_INCREF(op);
    PyObject *result = NULL, *kwargs = NULL;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *args = PyTuple_New(nargs);
    if (args == NULL || (kwargs = PyDict_New()) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < nargs; i++)
        PyTuple_SET_ITEM(args, i, Py_NewRef(argv[i]));
    for (Py_ssize_t i = 0, n = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames); i < n; i++)
        if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), argv[nargs + i]) < 0)
            goto done;
    Py_INCREF(frame);
    result = extern_op_record((ExternOp *)op, c->fn, args, kwargs, frame);
    if (result == handed.not_taken) {
        Py_DECREF(result);
        PyObject *call[3] = {site, args, kwargs};
        result = PyObject_Vectorcall(c->hooked_call, call, 3, NULL);
    }
done:
    Py_DECREF(site);
    Py_DECREF(op);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return result;
}

/* ExternCall(fn, capture, sites, known, extern_call, hooked_call), built whole here (no __init__: a half-made or
 * re-made one cannot be called). */
static PyObject *extern_call_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *names[] = {"fn", "capture", "sites", "known", "extern_call", "hooked_call", NULL};
    PyObject *fn, *capture, *sites, *known, *extern_call, *hooked_call;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO!O!OO", names, &fn, &capture, &PyDict_Type, &sites, &PyDict_Type,
                                     &known, &extern_call, &hooked_call))
        return NULL;
    if (handed.not_taken == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_extern_ops() was not called");
        return NULL;
    }
    ExternCall *c = (ExternCall *)type->tp_alloc(type, 0);
    if (c == NULL)
        return NULL;
    c->vectorcall = extern_call_vectorcall;
    c->fn = Py_NewRef(fn);
    c->capture = Py_NewRef(capture);
    c->sites = Py_NewRef(sites);
    c->known = Py_NewRef(known);
    c->extern_call = Py_NewRef(extern_call);
    c->hooked_call = Py_NewRef(hooked_call);
    return (PyObject *)c;
}

static int extern_call_traverse(ExternCall *c, visitproc visit, void *arg) {
    Py_VISIT(c->fn);
    Py_VISIT(c->capture);
    Py_VISIT(c->sites);
    Py_VISIT(c->known);
    Py_VISIT(c->extern_call);
    Py_VISIT(c->hooked_call);
    return 0;
}

static int extern_call_clear(ExternCall *c) {
    Py_CLEAR(c->fn);
    Py_CLEAR(c->capture);
    Py_CLEAR(c->sites);
    Py_CLEAR(c->known);
    Py_CLEAR(c->extern_call);
    Py_CLEAR(c->hooked_call);
    return 0;
}

static void extern_call_dealloc(ExternCall *c) {
    PyObject_GC_UnTrack(c);
    extern_call_clear(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyTypeObject ExternCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pyprof_live.capture._hook.ExternCall",
    .tp_basicsize = sizeof(ExternCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "compiled.py's extern_call in C: ExternCall(fn, capture, sites, known, extern_call, hooked_call).",
    .tp_new = extern_call_new,
    .tp_traverse = (traverseproc)extern_call_traverse,
    .tp_clear = (inquiry)extern_call_clear,
    .tp_dealloc = (destructor)extern_call_dealloc,
    .tp_call = hook_call,
    .tp_vectorcall_offset = offsetof(ExternCall, vectorcall),
};

/* ---- Inductor kernel calls of static compiled graphs (compiled.py's kernel_call) -------------------- */

/* compiled.py's kernel_call in C, for a static graph's kernels: the same clock readings in the same order and the same
 * raw tuple (run, kernel, line, start, end, tid, run.dir, NO_LINK, argument shapes, own ns), without a Python frame for
 * the wrapper. A call site not seen yet is made by compiled.py's _call_site, handed the caller's frame. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn;        /* the kernel */
    PyObject *capture;   /* CompiledCapture: .recording, .max_calls */
    PyObject *calls;     /* CompiledCapture.kernel_calls */
    PyObject *run;       /* GraphRun: .dir */
    PyObject *kernel;    /* the kernel's name */
    PyObject *sites;     /* GraphRun.metas: (id(code), f_lasti) of the call -> (line, shapes, code, serial) */
    PyObject *call_site; /* compiled._call_site(sites, static, args, frame) */
    PyObject *no_link;   /* records.NO_LINK */
    PyObject *clock;     /* None: CLOCK_MONOTONIC (time.perf_counter_ns's clock); else a callable */
} KernelCall;

static PyObject *s_dir, *s_max_calls;

/* The site of the call ``frame`` runs, a new reference: known_site's, else made (and kept) by _call_site. */
static PyObject *kernel_call_site(KernelCall *k, PyFrameObject *frame, PyObject *const *argv, Py_ssize_t nargs) {
    PyObject *site = known_site(k->sites, frame);
    if (site != NULL)
        return Py_NewRef(site);
    if (PyErr_Occurred())
        return NULL;
    PyObject *args = PyTuple_New(nargs);
    if (args == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        PyTuple_SET_ITEM(args, i, Py_NewRef(argv[i]));
    PyObject *call[4] = {k->sites, Py_True, args, (PyObject *)frame};
    site = PyObject_Vectorcall(k->call_site, call, 4, NULL);
    Py_DECREF(args);
    if (site != NULL && (!PyTuple_CheckExact(site) || PyTuple_GET_SIZE(site) != 4)) {
        Py_DECREF(site);
        PyErr_SetString(PyExc_TypeError, "_call_site returned no (line, shapes, code, serial)");
        return NULL;
    }
    return site;
}

static PyObject *kernel_call_vectorcall(PyObject *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames) {
    KernelCall *k = (KernelCall *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *entered = now_ns(k->clock), *start = NULL, *end = NULL, *last = NULL, *out = NULL, *site = NULL;
    PyObject *dir = NULL, *tid = NULL, *own = NULL, *record = NULL;
    if (entered == NULL)
        return NULL;
    PyObject *recording = PyObject_GetAttr(k->capture, s_recording_public);
    int on = recording == NULL ? -1 : PyObject_IsTrue(recording);
    Py_XDECREF(recording);
    if (on > 0) { /* len(calls) >= capture.max_calls, compared as Python compares them (any int) */
        PyObject *cap = PyObject_GetAttr(k->capture, s_max_calls);
        PyObject *count = cap == NULL ? NULL : PyLong_FromSsize_t(PyList_GET_SIZE(k->calls));
        int full = count == NULL ? -1 : PyObject_RichCompareBool(count, cap, Py_GE);
        Py_XDECREF(cap);
        Py_XDECREF(count);
        on = full < 0 ? -1 : !full;
    }
    if (on <= 0) {
        Py_DECREF(entered);
        return on < 0 ? NULL : PyObject_Vectorcall(k->fn, argv, nargsf, kwnames);
    }
    PyFrameObject *frame = PyEval_GetFrame(); /* borrowed: the wrapper's, which called this */
    if ((start = now_ns(k->clock)) == NULL || (out = PyObject_Vectorcall(k->fn, argv, nargsf, kwnames)) == NULL ||
        (end = now_ns(k->clock)) == NULL)
        goto done;
    if (frame == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a compiled kernel was called with no Python frame");
        goto done;
    }
    if ((site = kernel_call_site(k, frame, argv, nargs)) == NULL || (last = now_ns(k->clock)) == NULL ||
        (dir = PyObject_GetAttr(k->run, s_dir)) == NULL || (tid = PyLong_FromUnsignedLong(PyThread_get_thread_ident())) == NULL)
        goto done;
    /* start - entered + last - end, as Python computes it (any number a test's clock returns) */
    PyObject *before = PyNumber_Subtract(start, entered);
    PyObject *upto = before == NULL ? NULL : PyNumber_Add(before, last);
    own = upto == NULL ? NULL : PyNumber_Subtract(upto, end);
    Py_XDECREF(before);
    Py_XDECREF(upto);
    if (own == NULL)
        goto done;
    record = PyTuple_Pack(10, k->run, k->kernel, PyTuple_GET_ITEM(site, 0), start, end, tid, dir, k->no_link,
                          PyTuple_GET_ITEM(site, 1), own);
    if (record == NULL || PyList_Append(k->calls, record) < 0)
        Py_CLEAR(out);
done:
    if (PyErr_Occurred())
        Py_CLEAR(out);
    Py_DECREF(entered);
    Py_XDECREF(start);
    Py_XDECREF(end);
    Py_XDECREF(last);
    Py_XDECREF(site);
    Py_XDECREF(dir);
    Py_XDECREF(tid);
    Py_XDECREF(own);
    Py_XDECREF(record);
    return out;
}

/* KernelCall(fn, capture, run, kernel, sites, call_site, no_link, clock), built whole here. */
static PyObject *kernel_call_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *names[] = {"fn", "capture", "run", "kernel", "sites", "call_site", "no_link", "clock", NULL};
    PyObject *fn, *capture, *run, *kernel, *sites, *call_site, *no_link, *clock;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOUO!OOO", names, &fn, &capture, &run, &kernel, &PyDict_Type, &sites,
                                     &call_site, &no_link, &clock))
        return NULL;
    PyObject *calls = PyObject_GetAttrString(capture, "kernel_calls");
    if (calls == NULL)
        return NULL;
    if (!PyList_CheckExact(calls)) {
        Py_DECREF(calls);
        PyErr_SetString(PyExc_TypeError, "capture.kernel_calls is not a list");
        return NULL;
    }
    KernelCall *k = (KernelCall *)type->tp_alloc(type, 0);
    if (k == NULL) {
        Py_DECREF(calls);
        return NULL;
    }
    k->vectorcall = kernel_call_vectorcall;
    k->fn = Py_NewRef(fn);
    k->capture = Py_NewRef(capture);
    k->calls = calls;
    k->run = Py_NewRef(run);
    k->kernel = Py_NewRef(kernel);
    k->sites = Py_NewRef(sites);
    k->call_site = Py_NewRef(call_site);
    k->no_link = Py_NewRef(no_link);
    k->clock = Py_NewRef(clock);
    return (PyObject *)k;
}

static int kernel_call_traverse(KernelCall *k, visitproc visit, void *arg) {
    Py_VISIT(k->fn);
    Py_VISIT(k->capture);
    Py_VISIT(k->calls);
    Py_VISIT(k->run);
    Py_VISIT(k->kernel);
    Py_VISIT(k->sites);
    Py_VISIT(k->call_site);
    Py_VISIT(k->no_link);
    Py_VISIT(k->clock);
    return 0;
}

static int kernel_call_clear(KernelCall *k) {
    Py_CLEAR(k->fn);
    Py_CLEAR(k->capture);
    Py_CLEAR(k->calls);
    Py_CLEAR(k->run);
    Py_CLEAR(k->kernel);
    Py_CLEAR(k->sites);
    Py_CLEAR(k->call_site);
    Py_CLEAR(k->no_link);
    Py_CLEAR(k->clock);
    return 0;
}

static void kernel_call_dealloc(KernelCall *k) {
    PyObject_GC_UnTrack(k);
    kernel_call_clear(k);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

static PyTypeObject KernelCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pyprof_live.capture._hook.KernelCall",
    .tp_basicsize = sizeof(KernelCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "compiled.py's kernel_call in C: KernelCall(fn, capture, run, kernel, sites, call_site, no_link, clock).",
    .tp_new = kernel_call_new,
    .tp_traverse = (traverseproc)kernel_call_traverse,
    .tp_clear = (inquiry)kernel_call_clear,
    .tp_dealloc = (destructor)kernel_call_dealloc,
    .tp_call = hook_call,
    .tp_vectorcall_offset = offsetof(KernelCall, vectorcall),
};

static PyMethodDef methods[] = {
    {"capture", (PyCFunction)(void (*)(void))capture, METH_FASTCALL | METH_KEYWORDS, "capture(depth, skip=2): callsite.capture in C."},
    {"set_callsite", (PyCFunction)(void (*)(void))set_callsite, METH_FASTCALL,
     "set_callsite(internal_code, is_internal): callsite's cache of internal code, and its filler."},
    {"set_extern_ops", (PyCFunction)(void (*)(void))set_extern_ops, METH_VARARGS | METH_KEYWORDS,
     "set_extern_ops(**calls): the torch calls and objects ExternOp.call uses (extern_ops.py's)."},
    {NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hook", "The op hook's hot path in C.", -1, methods};

#define INTERN(var, text)                                                                                    \
    if ((var = PyUnicode_InternFromString(text)) == NULL)                                                   \
        return NULL;

PyMODINIT_FUNC PyInit__hook(void) {
    INTERN(s_dict, "__dict__");
    INTERN(s_graph_call, "graph_call");
    INTERN(s_extern_site, "extern_site");
    INTERN(s_graph_backward_facts, "graph_backward_facts");
    INTERN(s_recording, "_recording");
    INTERN(s_recording_public, "recording");
    INTERN(s_push, "push");
    INTERN(s_pop, "pop");
    INTERN(s_call, "call");
    INTERN(s_shape, "shape");
    INTERN(s_dtype, "dtype");
    INTERN(s_module, "module");
    INTERN(s_hook_ns, "hook_ns");
    INTERN(s_host_dir, "host_dir");
    INTERN(s_layers, "layers");
    INTERN(s_index, "index");
    INTERN(s_kind, "kind");
    INTERN(s_writes_first_arg, "writes_first_arg");
    INTERN(s_op, "op");
    INTERN(s_fwd, "fwd");
    INTERN(s_opt, "opt");
    INTERN(s_bwd, "bwd");
    INTERN(s_zero_grad, "zero_grad");
    INTERN(s_undecided, "");
    INTERN(s_empty, "");
    INTERN(s_nested, "nested tensor ");
    /* recorder.py's names for these: _ACCUMULATE_GRAD, _REENTRANT_CHECKPOINT, NO_SEQUENCE */
    INTERN(s_accumulate_grad, "torch::autograd::AccumulateGrad");
    INTERN(s_reentrant_checkpoint, "CheckpointFunctionBackward");
    INTERN(s_name, "name");
    INTERN(s_get, "get");
    INTERN(s_variable, "variable");
    INTERN(s_recompute, "recompute");
    INTERN(s_dir, "dir");
    INTERN(s_max_calls, "max_calls");
    if ((s_empty_tuple = PyTuple_New(0)) == NULL || (i_zero = PyLong_FromLong(0)) == NULL ||
        (i_minus_one = PyLong_FromLong(-1)) == NULL ||
        (i_no_sequence = PyLong_FromUnsignedLongLong(~0ULL)) == NULL)
        return NULL;
    if (PyType_Ready(&HookType) < 0 || PyType_Ready(&DispatchType) < 0 || PyType_Ready(&ExternOpType) < 0 ||
        PyType_Ready(&ExternCallType) < 0 || PyType_Ready(&KernelCallType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Hook", (PyObject *)&HookType) < 0 ||
        PyModule_AddObjectRef(m, "Dispatch", (PyObject *)&DispatchType) < 0 ||
        PyModule_AddObjectRef(m, "ExternOp", (PyObject *)&ExternOpType) < 0 ||
        PyModule_AddObjectRef(m, "ExternCall", (PyObject *)&ExternCallType) < 0 ||
        PyModule_AddObjectRef(m, "KernelCall", (PyObject *)&KernelCallType) < 0 ||
        PyModule_AddObjectRef(m, "ACCUMULATE_GRAD", s_accumulate_grad) < 0 ||
        PyModule_AddObjectRef(m, "REENTRANT_CHECKPOINT", s_reentrant_checkpoint) < 0 ||
        PyModule_AddObjectRef(m, "NO_SEQUENCE", i_no_sequence) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
