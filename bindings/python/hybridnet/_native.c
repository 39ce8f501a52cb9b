/* hybridnet._native: the binding's per-step paths in C.
 *
 * A training step in Python is a handful of calls (forward, loss, backward, step) and the
 * release of the arrays it made; written in Python each costs an interpreter frame, together
 * several microseconds next to a small model's step. Two base types take the commonest ones:
 *
 *   Handle         the base of the objects owning one library handle (a cffi pointer in `_h`):
 *                  when the object goes, its class's `_free` gets the handle, from C.
 *   CallableBlock  the base of gluon.Block: its __call__ runs a call with NDArrays by position as
 *                  one hn_block_forward and wraps the one output; other calls go to the block's
 *                  _call_general.
 *
 * They call cffi's functions as Python code would (cffi stays the one binding of c_api.h) and
 * keep no pointer of their own; bind_block_call hands over what a forward needs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* ---- Handle ----------------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  PyObject* handle; /* NULL until set: `_h` then raises AttributeError, as an unset slot does */
  PyObject* weakrefs;
} HandleObject;

static PyObject* free_name; /* "_free" */

/* type(self)._free(handle), unless _free is None. An error there is reported as unraisable, as
 * one in __del__ is, and an exception being raised meanwhile is kept. */
static void release_handle(PyObject* self, PyObject* handle) {
  PyObject *error_type, *error_value, *error_traceback;
  PyErr_Fetch(&error_type, &error_value, &error_traceback);
  PyObject* free_fn = PyObject_GetAttr((PyObject*)Py_TYPE(self), free_name);
  if (free_fn == NULL) {
    PyErr_WriteUnraisable(self);
  } else {
    if (free_fn != Py_None) {
      PyObject* result = PyObject_CallOneArg(free_fn, handle);
      if (result == NULL) PyErr_WriteUnraisable(free_fn);
      Py_XDECREF(result);
    }
    Py_DECREF(free_fn);
  }
  PyErr_Restore(error_type, error_value, error_traceback);
}

static void handle_dealloc(PyObject* op) {
  HandleObject* self = (HandleObject*)op;
  if (self->weakrefs != NULL) PyObject_ClearWeakRefs(op);
  PyObject* handle = self->handle;
  if (handle != NULL) {
    if (handle != Py_None) release_handle(op, handle);
    self->handle = NULL;
    Py_DECREF(handle);
  }
  Py_TYPE(op)->tp_free(op);
}

static PyMemberDef handle_members[] = {
    {"_h", T_OBJECT_EX, offsetof(HandleObject, handle), 0,
     "the library handle (a cffi pointer) this object owns"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hybridnet._native.Handle",
    .tp_basicsize = sizeof(HandleObject),
    .tp_dealloc = handle_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "An object owning one library handle (_h), released by its class's _free.",
    .tp_weaklistoffset = offsetof(HandleObject, weakrefs),
    .tp_members = handle_members,
};

/* ---- CallableBlock ---------------------------------------------------------------------------- */

/* What bind_block_call handed over; NULL before (every call then takes _call_general). */
static PyTypeObject* ndarray_type; /* the NDArray class: the inputs taken, the output made */
static PyObject* forward_fn;       /* lib.hn_block_forward */
static PyObject* lock_acquire;     /* tree_lock.acquire and .release: one tree, one thread */
static PyObject* lock_release;
static PyObject* raise_error_fn;   /* base.raise_error(status): raises the library's error */
static PyObject* max_outputs;      /* the capacity of a block's _out buffer */

static PyObject* first_index; /* 0: cffi arrays index as mappings, not as sequences */
static PyObject *name_h, *name_out, *name_nout, *name_fast_inputs, *name_call_general,
    *name_outputs;

/* hn_block_forward(self._h, handles, n, max_outputs, self._out, self._nout) under tree_lock,
 * raising the library's error; afterwards the output, or self._outputs() when there are several.
 * This is what Block.__call__'s Python fast path did. */
static PyObject* forward_with_lock(PyObject* self, PyObject* block, PyObject* handles,
                                   PyObject* count, PyObject* out, PyObject* nout) {
  PyObject* result = NULL;
  PyObject* argv[6] = {block, handles, count, max_outputs, out, nout};
  PyObject* status = PyObject_Vectorcall(forward_fn, argv, 6, NULL);
  if (status == NULL) return NULL;
  long code = PyLong_AsLong(status);
  if (code != 0) {
    if (code != -1 || !PyErr_Occurred()) {
      PyObject* raised = PyObject_CallOneArg(raise_error_fn, status);
      if (raised != NULL) {  /* raise_error always raises; a return is a bug to name */
        Py_DECREF(raised);
        PyErr_Format(PyExc_SystemError, "raise_error(%ld) returned", code);
      }
    }
    Py_DECREF(status);
    return NULL;
  }
  Py_DECREF(status);
  PyObject* produced = PyObject_GetItem(nout, first_index);
  if (produced == NULL) return NULL;
  long outputs = PyLong_AsLong(produced);
  Py_DECREF(produced);
  if (outputs == -1 && PyErr_Occurred()) return NULL;
  if (outputs != 1) return PyObject_CallMethodNoArgs(self, name_outputs);
  PyObject* handle = PyObject_GetItem(out, first_index);
  if (handle == NULL) return NULL;
  result = ndarray_type->tp_alloc(ndarray_type, 0);
  if (result == NULL) {
    Py_DECREF(handle);
    return NULL;
  }
  ((HandleObject*)result)->handle = handle;
  return result;
}

static PyObject* forward_ndarrays(PyObject* self, PyObject* args, Py_ssize_t n) {
  PyObject *handles = NULL, *count = NULL, *block = NULL, *out = NULL, *nout = NULL;
  PyObject* result = NULL;
  handles = PyList_New(n);
  if (handles == NULL) goto done;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* handle = ((HandleObject*)PyTuple_GET_ITEM(args, i))->handle;
    Py_INCREF(handle);
    PyList_SET_ITEM(handles, i, handle);
  }
  if ((count = PyLong_FromSsize_t(n)) == NULL || (block = PyObject_GetAttr(self, name_h)) == NULL ||
      (out = PyObject_GetAttr(self, name_out)) == NULL ||
      (nout = PyObject_GetAttr(self, name_nout)) == NULL)
    goto done;
  PyObject* locked = PyObject_CallNoArgs(lock_acquire);
  if (locked == NULL) goto done;
  Py_DECREF(locked);
  result = forward_with_lock(self, block, handles, count, out, nout);
  PyObject *error_type, *error_value, *error_traceback;
  PyErr_Fetch(&error_type, &error_value, &error_traceback);
  PyObject* unlocked = PyObject_CallNoArgs(lock_release);
  if (unlocked == NULL) {  /* the lock's own error wins, as in a `with` block */
    Py_CLEAR(result);
    Py_XDECREF(error_type);
    Py_XDECREF(error_value);
    Py_XDECREF(error_traceback);
  } else {
    Py_DECREF(unlocked);
    PyErr_Restore(error_type, error_value, error_traceback);
  }
done:
  Py_XDECREF(handles);
  Py_XDECREF(count);
  Py_XDECREF(block);
  Py_XDECREF(out);
  Py_XDECREF(nout);
  return result;
}

/* Up to self._fast_inputs NDArrays by position and nothing else: forward_ndarrays; any other
 * call: self._call_general(args, kwargs), kwargs a dict. */
static PyObject* block_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (forward_fn != NULL && n > 0 && (kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0)) {
    PyObject* limit = PyObject_GetAttr(self, name_fast_inputs);
    if (limit == NULL) return NULL;
    Py_ssize_t fast_inputs = PyLong_AsSsize_t(limit);
    Py_DECREF(limit);
    if (fast_inputs == -1 && PyErr_Occurred()) return NULL;
    int all_arrays = n <= fast_inputs;
    for (Py_ssize_t i = 0; all_arrays && i < n; ++i) {
      PyObject* arg = PyTuple_GET_ITEM(args, i);
      all_arrays = Py_TYPE(arg) == ndarray_type && ((HandleObject*)arg)->handle != NULL;
    }
    if (all_arrays) return forward_ndarrays(self, args, n);
  }
  PyObject* keywords = kwargs;
  if (keywords != NULL) Py_INCREF(keywords);
  else if ((keywords = PyDict_New()) == NULL) return NULL;
  PyObject* result = PyObject_CallMethodObjArgs(self, name_call_general, args, keywords, NULL);
  Py_DECREF(keywords);
  return result;
}

static PyTypeObject CallableBlockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hybridnet._native.CallableBlock",
    .tp_basicsize = sizeof(PyObject),
    .tp_call = block_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The base of gluon.Block: __call__ with NDArrays runs the block's forward from C.",
};

static PyObject* bind_block_call(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *type, *forward, *lock, *raise_error, *capacity;
  if (!PyArg_ParseTuple(args, "O!OOOO!:bind_block_call", &PyType_Type, &type, &forward, &lock,
                        &raise_error, &PyLong_Type, &capacity))
    return NULL;
  if (!PyType_IsSubtype((PyTypeObject*)type, &HandleType)) {
    PyErr_SetString(PyExc_TypeError, "bind_block_call: the array type must derive from Handle");
    return NULL;
  }
  PyObject* acquire = PyObject_GetAttrString(lock, "acquire");
  PyObject* release = acquire != NULL ? PyObject_GetAttrString(lock, "release") : NULL;
  if (release == NULL) {
    Py_XDECREF(acquire);
    return NULL;
  }
  Py_INCREF(type);
  Py_XSETREF(ndarray_type, (PyTypeObject*)type);
  Py_INCREF(forward);
  Py_XSETREF(forward_fn, forward);
  Py_XSETREF(lock_acquire, acquire);
  Py_XSETREF(lock_release, release);
  Py_INCREF(raise_error);
  Py_XSETREF(raise_error_fn, raise_error);
  Py_INCREF(capacity);
  Py_XSETREF(max_outputs, capacity);
  Py_RETURN_NONE;
}

/* ---- module ----------------------------------------------------------------------------------- */

static PyMethodDef native_functions[] = {
    {"bind_block_call", bind_block_call, METH_VARARGS,
     "bind_block_call(ndarray_type, hn_block_forward, tree_lock, raise_error, max_outputs): "
     "what CallableBlock's __call__ uses."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "hybridnet._native", "The binding's per-step paths in C.", -1,
    native_functions, NULL, NULL, NULL, NULL,
};

static int add_type(PyObject* module, const char* name, PyTypeObject* type) {
  /* object's own __new__, so that object.__new__(SubClass) (how the binding makes an object
   * without __init__) accepts subclasses: it requires their C base to allocate as object does. */
  type->tp_new = PyBaseObject_Type.tp_new;
  if (PyType_Ready(type) < 0) return -1;
  Py_INCREF(type);
  if (PyModule_AddObject(module, name, (PyObject*)type) < 0) {
    Py_DECREF(type);
    return -1;
  }
  return 0;
}

PyMODINIT_FUNC PyInit__native(void) {
  struct { PyObject** slot; const char* text; } names[] = {
      {&free_name, "_free"},          {&name_h, "_h"},
      {&name_out, "_out"},            {&name_nout, "_nout"},
      {&name_fast_inputs, "_fast_inputs"}, {&name_call_general, "_call_general"},
      {&name_outputs, "_outputs"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if ((*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL) return NULL;
  }
  if ((first_index = PyLong_FromLong(0)) == NULL) return NULL;
  PyObject* module = PyModule_Create(&native_module);
  if (module == NULL) return NULL;
  if (add_type(module, "Handle", &HandleType) < 0 ||
      add_type(module, "CallableBlock", &CallableBlockType) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
