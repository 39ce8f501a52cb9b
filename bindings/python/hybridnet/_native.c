/* hybridnet._native: the binding's per-step paths in C.
 *
 * A training step in Python is a handful of calls (batch, record, forward, loss, backward,
 * step) and the release of the arrays it made; written in Python each costs an interpreter
 * frame, together several microseconds next to a small model's step. These types take them:
 *
 *   Handle          the base of the objects owning one library handle (a cffi pointer in `_h`):
 *                   when the object goes, its class's `_free` gets the handle, from C.
 *   CallableBlock   the base of gluon.Block: its __call__ runs a call with NDArrays by position
 *                   as one hn_block_forward and wraps the one output; other calls go to the
 *                   block's _call_general.
 *   LoaderBatches   the batches of a library data loader (hn_data_loader_next) as NDArrays.
 *   AutogradScope   autograd.record() and its kin: set autograd flags on entry, restore on exit.
 *
 * They call cffi's functions as Python code would (cffi stays the one binding of c_api.h) and
 * keep no pointer of their own; the Python modules hand over those functions with bind().
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

/* ---- what the Python modules bind ------------------------------------------------------------ */

/* Set once at import by bind(name=object); a path whose object is missing raises. */
static PyObject* ndarray_class;        /* NDArray: the arrays taken and made (a Handle type) */
static PyObject* raise_error_fn;       /* base.raise_error(status): raises the library's error */
static PyObject* null_pointer;         /* ffi.NULL */
static PyObject* block_forward_fn;     /* lib.hn_block_forward */
static PyObject* tree_lock;            /* base.tree_lock: a block tree runs on one thread */
static PyObject* max_block_outputs;    /* the capacity of a block's _out buffer */
static PyObject* data_loader_next_fn;  /* lib.hn_data_loader_next */
static PyObject* set_autograd_flags_fn; /* lib.hn_autograd_set_flags */

static const struct {
  const char* name;
  PyObject** slot;
} bindings[] = {
    {"ndarray", &ndarray_class},
    {"raise_error", &raise_error_fn},
    {"null", &null_pointer},
    {"block_forward", &block_forward_fn},
    {"tree_lock", &tree_lock},
    {"max_block_outputs", &max_block_outputs},
    {"data_loader_next", &data_loader_next_fn},
    {"set_autograd_flags", &set_autograd_flags_fn},
};

static PyObject* bind(PyObject* module, PyObject* args, PyObject* kwargs) {
  (void)module;
  if (PyTuple_GET_SIZE(args) != 0 || kwargs == NULL) {
    PyErr_SetString(PyExc_TypeError, "bind takes its objects by name only");
    return NULL;
  }
  PyObject *key, *value;
  Py_ssize_t position = 0;
  while (PyDict_Next(kwargs, &position, &key, &value)) {
    const char* name = PyUnicode_AsUTF8(key);
    if (name == NULL) return NULL;
    size_t i = 0;
    while (i < sizeof bindings / sizeof bindings[0] && strcmp(bindings[i].name, name) != 0) ++i;
    if (i == sizeof bindings / sizeof bindings[0]) {
      PyErr_Format(PyExc_TypeError, "bind: unknown name '%s'", name);
      return NULL;
    }
    if (bindings[i].slot == &ndarray_class &&
        !(PyType_Check(value) && PyType_IsSubtype((PyTypeObject*)value, &HandleType))) {
      PyErr_SetString(PyExc_TypeError, "bind: ndarray must be a class deriving from Handle");
      return NULL;
    }
    Py_INCREF(value);
    Py_XSETREF(*bindings[i].slot, value);
  }
  Py_RETURN_NONE;
}

/* The bound object, or NULL with an error naming it. */
static PyObject* bound(PyObject* object, const char* name) {
  if (object == NULL)
    PyErr_Format(PyExc_RuntimeError, "hybridnet._native: '%s' is not bound (import hybridnet)",
                 name);
  return object;
}

/* 0 when `status` (a call's int result) is 0; else the library's error raised and -1. */
static int check_status(PyObject* status) {
  long code = PyLong_AsLong(status);
  if (code == 0) return 0;
  if (code == -1 && PyErr_Occurred()) return -1;
  if (bound(raise_error_fn, "raise_error") == NULL) return -1;
  PyObject* raised = PyObject_CallOneArg(raise_error_fn, status);
  if (raised != NULL) { /* raise_error always raises: a return is a bug to name */
    Py_DECREF(raised);
    PyErr_Format(PyExc_SystemError, "raise_error(%ld) returned", code);
  }
  return -1;
}

/* fn(*argv) -> status, checked. */
static int call_checked(PyObject* fn, PyObject* const* argv, size_t argc) {
  PyObject* status = PyObject_Vectorcall(fn, argv, argc, NULL);
  if (status == NULL) return -1;
  int rc = check_status(status);
  Py_DECREF(status);
  return rc;
}

static PyObject* index_objects[2]; /* 0 and 1: cffi arrays index as mappings, not sequences */

/* cffi_array[index] as a C long. */
static int read_long(PyObject* cffi_array, long* value) {
  PyObject* item = PyObject_GetItem(cffi_array, index_objects[0]);
  if (item == NULL) return -1;
  *value = PyLong_AsLong(item);
  Py_DECREF(item);
  return *value == -1 && PyErr_Occurred() ? -1 : 0;
}

/* A new NDArray owning handles[index] (a handle the library gave this call). */
static PyObject* wrap_array(PyObject* handles, Py_ssize_t index) {
  PyObject* key = index < 2 ? (Py_INCREF(index_objects[index]), index_objects[index])
                            : PyLong_FromSsize_t(index);
  if (key == NULL) return NULL;
  PyObject* handle = PyObject_GetItem(handles, key);
  Py_DECREF(key);
  if (handle == NULL) return NULL;
  PyTypeObject* type = (PyTypeObject*)ndarray_class;
  PyObject* array = type->tp_alloc(type, 0);
  if (array == NULL) {
    Py_DECREF(handle);
    return NULL;
  }
  ((HandleObject*)array)->handle = handle;
  return array;
}

/* ---- CallableBlock ---------------------------------------------------------------------------- */

static PyObject *name_h, *name_out, *name_nout, *name_fast_inputs, *name_call_general,
    *name_outputs, *name_acquire, *name_release;

/* hn_block_forward(self._h, handles, n, max_outputs, self._out, self._nout) (under tree_lock);
 * then the output as an NDArray, or self._outputs() when there are several. */
static PyObject* forward_locked(PyObject* self, PyObject* block, PyObject* handles,
                                PyObject* count, PyObject* out, PyObject* nout) {
  PyObject* argv[6] = {block, handles, count, max_block_outputs, out, nout};
  if (call_checked(block_forward_fn, argv, 6) < 0) return NULL;
  long outputs;
  if (read_long(nout, &outputs) < 0) return NULL;
  if (outputs != 1) return PyObject_CallMethodNoArgs(self, name_outputs);
  return wrap_array(out, 0);
}

static PyObject* forward_arrays(PyObject* self, PyObject* args, Py_ssize_t n) {
  PyObject *handles = NULL, *count = NULL, *block = NULL, *out = NULL, *nout = NULL;
  PyObject* result = NULL;
  if (bound(block_forward_fn, "block_forward") == NULL || bound(tree_lock, "tree_lock") == NULL ||
      bound(max_block_outputs, "max_block_outputs") == NULL)
    return NULL;
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
  PyObject* locked = PyObject_CallMethodNoArgs(tree_lock, name_acquire);
  if (locked == NULL) goto done;
  Py_DECREF(locked);
  result = forward_locked(self, block, handles, count, out, nout);
  PyObject *error_type, *error_value, *error_traceback;
  PyErr_Fetch(&error_type, &error_value, &error_traceback);
  PyObject* unlocked = PyObject_CallMethodNoArgs(tree_lock, name_release);
  if (unlocked == NULL) { /* the lock's own error wins, as in a `with` block */
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

/* Up to self._fast_inputs NDArrays by position and nothing else: forward_arrays; any other
 * call: self._call_general(args, kwargs), kwargs a dict. */
static PyObject* block_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (ndarray_class != NULL && n > 0 && (kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0)) {
    PyObject* limit = PyObject_GetAttr(self, name_fast_inputs);
    if (limit == NULL) return NULL;
    Py_ssize_t fast_inputs = PyLong_AsSsize_t(limit);
    Py_DECREF(limit);
    if (fast_inputs == -1 && PyErr_Occurred()) return NULL;
    int all_arrays = n <= fast_inputs;
    for (Py_ssize_t i = 0; all_arrays && i < n; ++i) {
      PyObject* arg = PyTuple_GET_ITEM(args, i);
      all_arrays = (PyObject*)Py_TYPE(arg) == ndarray_class && ((HandleObject*)arg)->handle != NULL;
    }
    if (all_arrays) return forward_arrays(self, args, n);
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

/* ---- LoaderBatches ---------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  PyObject* loader;     /* the hn_data_loader (a cffi pointer that frees it) */
  PyObject* num_fields; /* int */
  PyObject* fields;     /* hn_tensor*[num_fields]: a batch's arrays */
  PyObject* count;      /* size_t*: how many samples the batch holds (0: the epoch is over) */
  int finished;
} LoaderBatchesObject;

static PyObject* loader_batches_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *loader, *num_fields, *fields, *count;
  static char* positional_only[] = {"", "", "", "", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!OO:LoaderBatches", positional_only, &loader,
                                   &PyLong_Type, &num_fields, &fields, &count))
    return NULL;
  Py_ssize_t n = PyLong_AsSsize_t(num_fields);
  if (n < 1) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "LoaderBatches: no fields");
    return NULL;
  }
  LoaderBatchesObject* self = (LoaderBatchesObject*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  Py_INCREF(loader);
  self->loader = loader;
  Py_INCREF(num_fields);
  self->num_fields = num_fields;
  Py_INCREF(fields);
  self->fields = fields;
  Py_INCREF(count);
  self->count = count;
  return (PyObject*)self;
}

static void loader_batches_dealloc(PyObject* op) {
  LoaderBatchesObject* self = (LoaderBatchesObject*)op;
  Py_XDECREF(self->loader);
  Py_XDECREF(self->num_fields);
  Py_XDECREF(self->fields);
  Py_XDECREF(self->count);
  Py_TYPE(op)->tp_free(op);
}

/* The next batch: one NDArray for one field, else a list of them; the end of the epoch stops. */
static PyObject* loader_batches_next(PyObject* op) {
  LoaderBatchesObject* self = (LoaderBatchesObject*)op;
  if (self->finished) return NULL;
  if (bound(data_loader_next_fn, "data_loader_next") == NULL ||
      bound(ndarray_class, "ndarray") == NULL)
    return NULL;
  PyObject* argv[4] = {self->loader, self->num_fields, self->fields, self->count};
  long samples;
  if (call_checked(data_loader_next_fn, argv, 4) < 0 || read_long(self->count, &samples) < 0)
    return NULL;
  if (samples == 0) {
    self->finished = 1;
    return NULL;
  }
  Py_ssize_t n = PyLong_AsSsize_t(self->num_fields);
  if (n == 1) return wrap_array(self->fields, 0);
  PyObject* batch = PyList_New(n);
  if (batch == NULL) return NULL;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* array = wrap_array(self->fields, i);
    if (array == NULL) {
      Py_DECREF(batch);
      return NULL;
    }
    PyList_SET_ITEM(batch, i, array);
  }
  return batch;
}

static PyTypeObject LoaderBatchesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hybridnet._native.LoaderBatches",
    .tp_basicsize = sizeof(LoaderBatchesObject),
    .tp_dealloc = loader_batches_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "LoaderBatches(loader, num_fields, fields, count): the batches of a library data "
              "loader, as NDArrays (a list of them for several fields).",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = loader_batches_next,
    .tp_new = loader_batches_new,
};

/* ---- AutogradScope ---------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  long flags;       /* hn_autograd_flag bits set on entry */
  long mask;        /* the bits the scope sets */
  long previous;    /* the bits before entry */
  PyObject* buffer; /* int*: the calling thread's buffer for the previous bits */
} AutogradScopeObject;

static PyObject* autograd_scope_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  long flags, mask;
  PyObject* buffer;
  static char* positional_only[] = {"", "", "", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "llO:AutogradScope", positional_only, &flags,
                                   &mask, &buffer))
    return NULL;
  AutogradScopeObject* self = (AutogradScopeObject*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  self->flags = flags;
  self->mask = mask;
  self->previous = flags; /* an exit without an entry changes nothing */
  Py_INCREF(buffer);
  self->buffer = buffer;
  return (PyObject*)self;
}

static void autograd_scope_dealloc(PyObject* op) {
  Py_XDECREF(((AutogradScopeObject*)op)->buffer);
  Py_TYPE(op)->tp_free(op);
}

/* hn_autograd_set_flags(flags, mask, previous_out), checked. */
static int set_flags(long flags, long mask, PyObject* previous_out) {
  if (bound(set_autograd_flags_fn, "set_autograd_flags") == NULL) return -1;
  PyObject* flags_object = PyLong_FromLong(flags);
  PyObject* mask_object = flags_object != NULL ? PyLong_FromLong(mask) : NULL;
  int rc = -1;
  if (mask_object != NULL) {
    PyObject* argv[3] = {flags_object, mask_object, previous_out};
    rc = call_checked(set_autograd_flags_fn, argv, 3);
  }
  Py_XDECREF(flags_object);
  Py_XDECREF(mask_object);
  return rc;
}

static PyObject* autograd_scope_enter(PyObject* op, PyObject* unused) {
  (void)unused;
  AutogradScopeObject* self = (AutogradScopeObject*)op;
  if (set_flags(self->flags, self->mask, self->buffer) < 0 ||
      read_long(self->buffer, &self->previous) < 0)
    return NULL;
  Py_RETURN_NONE;
}

/* Restores the bits the entry changed (one call, none when nothing changed); never swallows the
 * exception leaving the block. */
static PyObject* autograd_scope_exit(PyObject* op, PyObject* args) {
  (void)args;
  AutogradScopeObject* self = (AutogradScopeObject*)op;
  long changed = (self->previous ^ self->flags) & self->mask;
  if (changed != 0) {
    if (bound(null_pointer, "null") == NULL ||
        set_flags(self->previous, changed, null_pointer) < 0)
      return NULL;
  }
  Py_RETURN_FALSE;
}

static PyMethodDef autograd_scope_methods[] = {
    {"__enter__", autograd_scope_enter, METH_NOARGS, NULL},
    {"__exit__", autograd_scope_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject AutogradScopeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hybridnet._native.AutogradScope",
    .tp_basicsize = sizeof(AutogradScopeObject),
    .tp_dealloc = autograd_scope_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "AutogradScope(flags, mask, buffer): sets the autograd flags in mask to flags on "
              "entry and restores those that changed on exit.",
    .tp_methods = autograd_scope_methods,
    .tp_new = autograd_scope_new,
};

/* ---- module ----------------------------------------------------------------------------------- */

static PyMethodDef native_functions[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_VARARGS | METH_KEYWORDS,
     "bind(name=object, ...): hands over what the paths call (ndarray, raise_error, null, "
     "block_forward, tree_lock, max_block_outputs, data_loader_next, set_autograd_flags)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "hybridnet._native", "The binding's per-step paths in C.", -1,
    native_functions, NULL, NULL, NULL, NULL,
};

static int add_type(PyObject* module, const char* name, PyTypeObject* type) {
  /* The base types get object's own __new__, so that object.__new__(SubClass) (how the binding
   * makes an object without __init__) accepts their subclasses. */
  if (type->tp_new == NULL) type->tp_new = PyBaseObject_Type.tp_new;
  if (PyType_Ready(type) < 0) return -1;
  Py_INCREF(type);
  if (PyModule_AddObject(module, name, (PyObject*)type) < 0) {
    Py_DECREF(type);
    return -1;
  }
  return 0;
}

PyMODINIT_FUNC PyInit__native(void) {
  static const struct {
    PyObject** slot;
    const char* text;
  } names[] = {
      {&free_name, "_free"},
      {&name_h, "_h"},
      {&name_out, "_out"},
      {&name_nout, "_nout"},
      {&name_fast_inputs, "_fast_inputs"},
      {&name_call_general, "_call_general"},
      {&name_outputs, "_outputs"},
      {&name_acquire, "acquire"},
      {&name_release, "release"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if ((*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL) return NULL;
  }
  for (long i = 0; i < 2; ++i) {
    if ((index_objects[i] = PyLong_FromLong(i)) == NULL) return NULL;
  }
  PyObject* module = PyModule_Create(&native_module);
  if (module == NULL) return NULL;
  if (add_type(module, "Handle", &HandleType) < 0 ||
      add_type(module, "CallableBlock", &CallableBlockType) < 0 ||
      add_type(module, "LoaderBatches", &LoaderBatchesType) < 0 ||
      add_type(module, "AutogradScope", &AutogradScopeType) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
