/* hybridnet._native: the binding's per-step paths in C.
 *
 * A training step in Python is a handful of calls (batch, record, forward, loss, backward,
 * step) and the release of the arrays it made. Written in Python, or as cffi calls, each costs
 * an interpreter frame or cffi's generic argument conversion; between a small model's kernels
 * that code is cold, its instruction-cache misses cost several microseconds a step. These types
 * and functions take those paths, calling c_api.h's functions directly (this module links the
 * package's libhybridnet.so.0, as the cffi module does):
 *
 *   Handle          the base of the objects owning one library handle (`_h`, a cffi pointer):
 *                   when the object goes, its class's `_free` gets the handle. An NDArray made
 *                   here holds the bare address; its cffi pointer is made when Python reads _h.
 *   CallableBlock   the base of gluon.Block: its __call__ runs a call with NDArrays by position
 *                   as one hn_block_forward and wraps the outputs; other calls go to the
 *                   block's _call_general.
 *   TrainerBase     the base of gluon.Trainer: its step is one hn_trainer_step.
 *   LoaderBatches   the batches of a library data loader (hn_data_loader_next) as NDArrays.
 *   AutogradScope   what autograd.record(), pause(), train_mode() and predict_mode() (functions
 *                   here) return: sets autograd flags on entry, restores them on exit.
 *   array_backward  NDArray.backward (an instance method): loss.backward() is one call.
 *
 * Python objects it needs (the NDArray class, the error raiser, cffi's pointer conversions) are
 * handed over once at import with bind().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>

#include "hybridnet/c_api.h"

/* The most outputs one block call returns (gluon's _MAX_OUTPUTS reads it). */
#define MAX_BLOCK_OUTPUTS 256
/* The most arrays a LoaderBatches' dataset holds (the DataLoader gathers larger ones itself). */
#define MAX_LOADER_FIELDS 64

/* ---- what the Python modules bind ------------------------------------------------------------ */

static PyObject* ndarray_class;  /* NDArray: the arrays taken and made (a Handle type) */
static PyObject* raise_error_fn; /* base.raise_error(status): raises the library's error */
static PyObject* tree_lock;      /* base.tree_lock: a block tree runs on one thread */
static PyObject* tensor_pointer_fn; /* address -> cffi hn_tensor* */
static PyObject* address_of_fn;     /* cffi pointer -> its address */
static PyObject* tensor_free_fn;    /* lib.hn_tensor_free: NDArray's _free */
static PyObject* autograd_backward_fn; /* autograd.backward: heads with their gradients */

static const struct {
  const char* name;
  PyObject** slot;
} bindings[] = {
    {"ndarray", &ndarray_class},
    {"raise_error", &raise_error_fn},
    {"tree_lock", &tree_lock},
    {"tensor_pointer", &tensor_pointer_fn},
    {"address_of", &address_of_fn},
    {"tensor_free", &tensor_free_fn},
    {"autograd_backward", &autograd_backward_fn},
};

static PyTypeObject HandleType;

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

/* 0 for HN_OK; else the library's error raised (raise_error) and -1. */
static int check_status(int status) {
  if (status == 0) return 0;
  if (bound(raise_error_fn, "raise_error") == NULL) return -1;
  PyObject* code = PyLong_FromLong(status);
  if (code == NULL) return -1;
  PyObject* raised = PyObject_CallOneArg(raise_error_fn, code);
  Py_DECREF(code);
  if (raised != NULL) { /* raise_error always raises: a return is a bug to name */
    Py_DECREF(raised);
    PyErr_Format(PyExc_SystemError, "raise_error(%d) returned", status);
  }
  return -1;
}

/* The address a cffi pointer holds (through the bound address_of); NULL with an error naming
 * `owner` for a NULL pointer or a failed conversion. */
static void* pointer_address(PyObject* pointer, const char* owner) {
  if (bound(address_of_fn, "address_of") == NULL) return NULL;
  PyObject* number = PyObject_CallOneArg(address_of_fn, pointer);
  void* address = number != NULL ? PyLong_AsVoidPtr(number) : NULL;
  Py_XDECREF(number);
  if (address == NULL && !PyErr_Occurred())
    PyErr_Format(PyExc_ValueError, "%.100s: a NULL handle", owner);
  return address;
}

/* ---- Handle ----------------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  PyObject* handle; /* the cffi pointer, or NULL: none yet (then made from `address` if set) */
  PyObject* weakrefs;
  void* address;    /* the handle's address: set for arrays made here, else found when needed */
} HandleObject;

static PyObject* free_name; /* "_free" */

/* A new NDArray owning `tensor` (a handle the library gave this call). */
static PyObject* wrap_array(hn_tensor* tensor) {
  PyTypeObject* type = (PyTypeObject*)ndarray_class;
  PyObject* array = type->tp_alloc(type, 0);
  if (array == NULL) {
    hn_tensor_free(tensor);
    return NULL;
  }
  ((HandleObject*)array)->address = tensor;
  return array;
}

/* `count` new tensors as NDArrays: the one NDArray for one, else a tuple of them (a list with
 * as_list); after a failure the rest are freed. */
static PyObject* wrap_arrays(hn_tensor* const* tensors, size_t count, int as_list) {
  if (count == 1) return wrap_array(tensors[0]);
  PyObject* arrays = as_list ? PyList_New((Py_ssize_t)count) : PyTuple_New((Py_ssize_t)count);
  for (size_t i = 0; i < count; ++i) {
    if (arrays == NULL) {
      hn_tensor_free(tensors[i]);
      continue;
    }
    PyObject* array = wrap_array(tensors[i]);
    if (array == NULL) Py_CLEAR(arrays);
    else if (as_list) PyList_SET_ITEM(arrays, (Py_ssize_t)i, array);
    else PyTuple_SET_ITEM(arrays, (Py_ssize_t)i, array);
  }
  return arrays;
}

/* self._h, made from the address for an NDArray made here. */
static PyObject* handle_pointer(HandleObject* self) {
  if (self->handle == NULL && self->address != NULL) {
    if (bound(tensor_pointer_fn, "tensor_pointer") == NULL) return NULL;
    PyObject* address = PyLong_FromVoidPtr(self->address);
    if (address == NULL) return NULL;
    self->handle = PyObject_CallOneArg(tensor_pointer_fn, address);
    Py_DECREF(address);
  } else if (self->handle == NULL) {
    PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '_h'",
                 Py_TYPE(self)->tp_name);
  }
  return self->handle;
}

/* The address of the handle `op` (a Handle) owns; NULL with an error when it owns none. */
static void* handle_address(PyObject* op) {
  HandleObject* self = (HandleObject*)op;
  if (self->address != NULL) return self->address;
  if (self->handle == NULL || self->handle == Py_None) {
    PyErr_Format(PyExc_ValueError, "%.100s: the object owns no handle", Py_TYPE(op)->tp_name);
    return NULL;
  }
  self->address = pointer_address(self->handle, Py_TYPE(op)->tp_name);
  return self->address;
}

/* type(self)._free(handle), unless _free is None; NDArray's own _free is called directly. An
 * error there is reported as unraisable, as one in __del__ is, and an exception being raised
 * meanwhile is kept. */
static void release_handle(HandleObject* self) {
  PyObject *error_type, *error_value, *error_traceback;
  PyErr_Fetch(&error_type, &error_value, &error_traceback);
  PyObject* free_fn = PyObject_GetAttr((PyObject*)Py_TYPE(self), free_name);
  if (free_fn == NULL) {
    PyErr_WriteUnraisable((PyObject*)self);
  } else {
    if (free_fn == tensor_free_fn && self->address != NULL) {
      hn_tensor_free((hn_tensor*)self->address);
    } else if (free_fn != Py_None) {
      PyObject* handle = handle_pointer(self);
      PyObject* result = handle != NULL ? PyObject_CallOneArg(free_fn, handle) : NULL;
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
  if (self->handle != Py_None && (self->handle != NULL || self->address != NULL))
    release_handle(self);
  self->address = NULL;
  Py_CLEAR(self->handle);
  Py_TYPE(op)->tp_free(op);
}

static PyObject* handle_get(PyObject* op, void* closure) {
  (void)closure;
  PyObject* handle = handle_pointer((HandleObject*)op);
  Py_XINCREF(handle);
  return handle;
}

/* Setting _h replaces the handle without releasing the one before, as an attribute does. */
static int handle_set(PyObject* op, PyObject* value, void* closure) {
  (void)closure;
  HandleObject* self = (HandleObject*)op;
  if (value == NULL && self->handle == NULL && self->address == NULL) {
    PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '_h'",
                 Py_TYPE(op)->tp_name);
    return -1;
  }
  Py_XINCREF(value);
  Py_XSETREF(self->handle, value);
  self->address = NULL;
  return 0;
}

static PyGetSetDef handle_getset[] = {
    {"_h", handle_get, handle_set, "the library handle (a cffi pointer) this object owns", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hybridnet._native.Handle",
    .tp_basicsize = sizeof(HandleObject),
    .tp_dealloc = handle_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "An object owning one library handle (_h), released by its class's _free.",
    .tp_weaklistoffset = offsetof(HandleObject, weakrefs),
    .tp_getset = handle_getset,
};

/* Is `op` an NDArray owning a handle (one the C paths take)? */
static int is_array(PyObject* op) {
  HandleObject* self = (HandleObject*)op;
  return (PyObject*)Py_TYPE(op) == ndarray_class &&
         (self->address != NULL || (self->handle != NULL && self->handle != Py_None));
}

/* ---- objects whose handle is a plain attribute _h (blocks, trainers) --------------------------- */

/* The address of an object's _h, found again only when _h changes. */
typedef struct {
  PyObject* handle_seen; /* the _h whose address `address` is (kept alive with it) */
  void* address;
} CachedAddress;

static PyObject *name_h, *name_fast_inputs, *name_call_general, *name_acquire, *name_release;

static void* cached_address(PyObject* owner, CachedAddress* cache) {
  PyObject* handle = PyObject_GetAttr(owner, name_h);
  if (handle == NULL) return NULL;
  if (handle == cache->handle_seen) {
    Py_DECREF(handle);
    return cache->address;
  }
  void* address = pointer_address(handle, Py_TYPE(owner)->tp_name);
  if (address == NULL) {
    Py_DECREF(handle);
    return NULL;
  }
  Py_XSETREF(cache->handle_seen, handle);
  cache->address = address;
  return address;
}

/* Runs under base.tree_lock (a block tree runs on one thread at a time): 0, or -1 with the
 * lock's error. */
static int lock_tree(void) {
  if (bound(tree_lock, "tree_lock") == NULL) return -1;
  PyObject* locked = PyObject_CallMethodNoArgs(tree_lock, name_acquire);
  if (locked == NULL) return -1;
  Py_DECREF(locked);
  return 0;
}

/* Releases tree_lock, keeping the exception being raised unless releasing fails (the lock's own
 * error wins, as in a `with` block); returns `result`, or NULL then. */
static PyObject* unlock_tree(PyObject* result) {
  PyObject *error_type, *error_value, *error_traceback;
  PyErr_Fetch(&error_type, &error_value, &error_traceback);
  PyObject* unlocked = PyObject_CallMethodNoArgs(tree_lock, name_release);
  if (unlocked == NULL) {
    Py_CLEAR(result);
    Py_XDECREF(error_type);
    Py_XDECREF(error_value);
    Py_XDECREF(error_traceback);
  } else {
    Py_DECREF(unlocked);
    PyErr_Restore(error_type, error_value, error_traceback);
  }
  return result;
}

/* ---- CallableBlock ---------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  CachedAddress block;
} CallableBlockObject;

/* hn_block_forward on `inputs` under tree_lock, the GIL released meanwhile; the one output as
 * an NDArray, several as a tuple of them. */
static PyObject* forward_arrays(CallableBlockObject* self, hn_tensor* const* inputs, size_t n) {
  hn_block* block = cached_address((PyObject*)self, &self->block);
  if (block == NULL || lock_tree() < 0) return NULL;
  hn_tensor* outputs[MAX_BLOCK_OUTPUTS];
  size_t count = 0;
  int status;
  Py_BEGIN_ALLOW_THREADS
  status = hn_block_forward(block, inputs, n, MAX_BLOCK_OUTPUTS, outputs, &count);
  Py_END_ALLOW_THREADS
  PyObject* result = NULL;
  if (check_status(status) == 0) {
    result = wrap_arrays(outputs, count, 0);
  }
  return unlock_tree(result);
}

static void callable_block_dealloc(PyObject* op) {
  Py_CLEAR(((CallableBlockObject*)op)->block.handle_seen);
  Py_TYPE(op)->tp_free(op);
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
    hn_tensor* inputs[8];
    int all_arrays = n <= fast_inputs && n <= (Py_ssize_t)(sizeof inputs / sizeof inputs[0]);
    for (Py_ssize_t i = 0; all_arrays && i < n; ++i) all_arrays = is_array(PyTuple_GET_ITEM(args, i));
    if (all_arrays) {
      for (Py_ssize_t i = 0; i < n; ++i) {
        if ((inputs[i] = handle_address(PyTuple_GET_ITEM(args, i))) == NULL) return NULL;
      }
      return forward_arrays((CallableBlockObject*)self, inputs, (size_t)n);
    }
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
    .tp_basicsize = sizeof(CallableBlockObject),
    .tp_dealloc = callable_block_dealloc,
    .tp_call = block_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The base of gluon.Block: __call__ with NDArrays runs the block's forward from C.",
};

/* ---- TrainerBase ------------------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD
  CachedAddress trainer;
} TrainerBaseObject;

/* step(batch_size, ignore_stale_grad=False): hn_trainer_step under tree_lock, the GIL released
 * meanwhile. */
static PyObject* trainer_step(PyObject* op, PyObject* args, PyObject* kwargs) {
  TrainerBaseObject* self = (TrainerBaseObject*)op;
  PyObject* batch_object;
  int ignore_stale_grad = 0;
  static char* keywords[] = {"batch_size", "ignore_stale_grad", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p:step", keywords, &batch_object,
                                   &ignore_stale_grad))
    return NULL;
  if (!PyNumber_Check(batch_object)) {
    PyErr_Format(PyExc_TypeError, "step: batch_size must be a number, not %.100s",
                 Py_TYPE(batch_object)->tp_name);
    return NULL;
  }
  PyObject* batch_number = PyNumber_Long(batch_object); /* int(batch_size), as MXNet takes 64.0 */
  if (batch_number == NULL) return NULL;
  int overflow;
  long batch_size = PyLong_AsLongAndOverflow(batch_number, &overflow);
  Py_DECREF(batch_number);
  if (batch_size == -1 && PyErr_Occurred()) return NULL;
  if (overflow != 0 || batch_size < INT_MIN || batch_size > INT_MAX) {
    PyErr_SetString(PyExc_OverflowError, "step: batch_size does not fit a C int");
    return NULL;
  }
  hn_trainer* trainer = cached_address(op, &self->trainer);
  if (trainer == NULL || lock_tree() < 0) return NULL;
  int status;
  Py_BEGIN_ALLOW_THREADS
  status = hn_trainer_step(trainer, (int)batch_size, ignore_stale_grad);
  Py_END_ALLOW_THREADS
  PyObject* result = check_status(status) == 0 ? (Py_INCREF(Py_None), Py_None) : NULL;
  return unlock_tree(result);
}

static void trainer_base_dealloc(PyObject* op) {
  Py_CLEAR(((TrainerBaseObject*)op)->trainer.handle_seen);
  Py_TYPE(op)->tp_free(op);
}

static PyMethodDef trainer_base_methods[] = {
    {"step", (PyCFunction)(void (*)(void))trainer_step, METH_VARARGS | METH_KEYWORDS,
     "step($self, batch_size, ignore_stale_grad=False)\n--\n\nOne update of every parameter "
     "with a gradient, scaled by 1/batch_size. Call it after backward and outside record()."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TrainerBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hybridnet._native.TrainerBase",
    .tp_basicsize = sizeof(TrainerBaseObject),
    .tp_dealloc = trainer_base_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The base of gluon.Trainer: its step runs from C.",
    .tp_methods = trainer_base_methods,
};

/* ---- LoaderBatches ---------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  PyObject* loader; /* the hn_data_loader (a cffi pointer that frees it) */
  hn_data_loader* address;
  size_t num_fields;
  int finished;
} LoaderBatchesObject;


static PyObject* loader_batches_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* loader;
  Py_ssize_t num_fields;
  static char* positional_only[] = {"", "", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "On:LoaderBatches", positional_only, &loader,
                                   &num_fields))
    return NULL;
  if (num_fields < 1 || num_fields > MAX_LOADER_FIELDS) {
    PyErr_Format(PyExc_ValueError, "LoaderBatches: %zd fields (1 to %d)", num_fields,
                 MAX_LOADER_FIELDS);
    return NULL;
  }
  void* address = pointer_address(loader, "LoaderBatches");
  if (address == NULL) return NULL;
  LoaderBatchesObject* self = (LoaderBatchesObject*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  Py_INCREF(loader);
  self->loader = loader;
  self->address = (hn_data_loader*)address;
  self->num_fields = (size_t)num_fields;
  return (PyObject*)self;
}

static void loader_batches_dealloc(PyObject* op) {
  Py_XDECREF(((LoaderBatchesObject*)op)->loader);
  Py_TYPE(op)->tp_free(op);
}

/* The next batch: one NDArray for one field, else a list of them; the end of the epoch stops. */
static PyObject* loader_batches_next(PyObject* op) {
  LoaderBatchesObject* self = (LoaderBatchesObject*)op;
  if (self->finished) return NULL;
  if (bound(ndarray_class, "ndarray") == NULL) return NULL;
  hn_tensor* fields[MAX_LOADER_FIELDS];
  size_t count = 0;
  int status;
  Py_BEGIN_ALLOW_THREADS
  status = hn_data_loader_next(self->address, self->num_fields, fields, &count);
  Py_END_ALLOW_THREADS
  if (check_status(status) < 0) return NULL;
  if (count == 0) {
    self->finished = 1;
    return NULL;
  }
  return wrap_arrays(fields, count, 1);
}

static PyTypeObject LoaderBatchesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hybridnet._native.LoaderBatches",
    .tp_basicsize = sizeof(LoaderBatchesObject),
    .tp_dealloc = loader_batches_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "LoaderBatches(loader, num_fields): the batches of a library data loader (a cffi "
              "hn_data_loader*), as NDArrays (a list of them for several fields).",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = loader_batches_next,
    .tp_new = loader_batches_new,
};

/* ---- AutogradScope ---------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  int flags;    /* hn_autograd_flag bits set on entry */
  int mask;     /* the bits the scope sets */
  int previous; /* the bits before entry */
} AutogradScopeObject;

static PyObject* autograd_scope_enter(PyObject* op, PyObject* unused) {
  (void)unused;
  AutogradScopeObject* self = (AutogradScopeObject*)op;
  if (check_status(hn_autograd_set_flags(self->flags, self->mask, &self->previous)) < 0)
    return NULL;
  Py_RETURN_NONE;
}

/* Restores the bits the entry changed (one call, none when nothing changed); never swallows the
 * exception leaving the block. */
static PyObject* autograd_scope_exit(PyObject* op, PyObject* args) {
  (void)args;
  AutogradScopeObject* self = (AutogradScopeObject*)op;
  int changed = (self->previous ^ self->flags) & self->mask;
  if (changed != 0 && check_status(hn_autograd_set_flags(self->previous, changed, NULL)) < 0)
    return NULL;
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
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A scope of autograd.record() and its kin: sets the autograd flags in its mask on "
              "entry and restores those that changed on exit.",
    .tp_methods = autograd_scope_methods,
};

/* autograd's scopes: the flags each sets (by its train_mode argument) and which it restores. */
static PyObject* new_scope(int flags, int mask) {
  AutogradScopeObject* scope = PyObject_New(AutogradScopeObject, &AutogradScopeType);
  if (scope == NULL) return NULL;
  scope->flags = flags;
  scope->mask = mask;
  scope->previous = flags;
  return (PyObject*)scope;
}

/* The train_mode argument of record() and pause(), `fallback` when not given. */
static int train_mode_argument(PyObject* args, PyObject* kwargs, const char* format, int fallback) {
  int train_mode = fallback;
  static char* keywords[] = {"train_mode", NULL};
  return PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &train_mode) ? train_mode
                                                                                  : -1;
}

static PyObject* scope_record(PyObject* module, PyObject* args, PyObject* kwargs) {
  (void)module;
  int train_mode = train_mode_argument(args, kwargs, "|p:record", 1);
  if (train_mode < 0) return NULL;
  return new_scope(HN_AUTOGRAD_RECORDING | (train_mode ? HN_AUTOGRAD_TRAINING : 0),
                   HN_AUTOGRAD_RECORDING | HN_AUTOGRAD_TRAINING);
}

static PyObject* scope_pause(PyObject* module, PyObject* args, PyObject* kwargs) {
  (void)module;
  int train_mode = train_mode_argument(args, kwargs, "|p:pause", 0);
  if (train_mode < 0) return NULL;
  return new_scope(train_mode ? HN_AUTOGRAD_TRAINING : 0,
                   HN_AUTOGRAD_RECORDING | HN_AUTOGRAD_TRAINING);
}

static PyObject* scope_train_mode(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  return new_scope(HN_AUTOGRAD_TRAINING, HN_AUTOGRAD_TRAINING);
}

static PyObject* scope_predict_mode(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  return new_scope(0, HN_AUTOGRAD_TRAINING);
}

/* ---- NDArray.backward ------------------------------------------------------------------------- */

/* NDArray.backward(out_grad=None, retain_graph=False, train_mode=True): with ones as the head
 * gradient one hn_autograd_backward (the GIL released meanwhile); with out_grad,
 * autograd.backward([self], [out_grad], ...). */
static PyObject* array_backward(PyObject* module, PyObject* args, PyObject* kwargs) {
  (void)module;
  PyObject *self, *out_grad = Py_None;
  int retain_graph = 0, train_mode = 1;
  static char* keywords[] = {"", "out_grad", "retain_graph", "train_mode", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|Opp:backward", keywords, &self, &out_grad,
                                   &retain_graph, &train_mode))
    return NULL;
  if (bound(ndarray_class, "ndarray") == NULL) return NULL;
  if (!PyObject_TypeCheck(self, (PyTypeObject*)ndarray_class)) {
    PyErr_Format(PyExc_TypeError, "backward: an NDArray's method, called on %.100s",
                 Py_TYPE(self)->tp_name);
    return NULL;
  }
  if (out_grad != Py_None) {
    if (bound(autograd_backward_fn, "autograd_backward") == NULL) return NULL;
    return PyObject_CallFunction(autograd_backward_fn, "[O][O]OO", self, out_grad,
                                 retain_graph ? Py_True : Py_False,
                                 train_mode ? Py_True : Py_False);
  }
  hn_tensor* head = handle_address(self);
  if (head == NULL) return NULL;
  int status;
  Py_BEGIN_ALLOW_THREADS
  status = hn_autograd_backward(&head, 1, NULL, retain_graph, train_mode);
  Py_END_ALLOW_THREADS
  if (check_status(status) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyMethodDef array_backward_def = {
    "backward", (PyCFunction)(void (*)(void))array_backward, METH_VARARGS | METH_KEYWORDS,
    "backward(out_grad=None, retain_graph=False, train_mode=True)\n--\n\nComputes the "
    "gradients of this array (out_grad: its head gradient, None for ones) into the attached "
    "gradient arrays of the variables it was recorded from."};

/* ---- module ----------------------------------------------------------------------------------- */

static PyMethodDef native_functions[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_VARARGS | METH_KEYWORDS,
     "bind(name=object, ...): hands over the Python objects the paths use (ndarray, "
     "raise_error, tree_lock, tensor_pointer, address_of, tensor_free, autograd_backward)."},
    {"record", (PyCFunction)(void (*)(void))scope_record, METH_VARARGS | METH_KEYWORDS,
     "record(train_mode=True)\n--\n\nScope that records ops for backward; in training mode "
     "unless train_mode=False."},
    {"pause", (PyCFunction)(void (*)(void))scope_pause, METH_VARARGS | METH_KEYWORDS,
     "pause(train_mode=False)\n--\n\nScope in which nothing is recorded (in inference mode "
     "unless train_mode=True)."},
    {"train_mode", scope_train_mode, METH_NOARGS,
     "train_mode()\n--\n\nScope in which ops run in training mode (Dropout drops); recording "
     "is unchanged."},
    {"predict_mode", scope_predict_mode, METH_NOARGS,
     "predict_mode()\n--\n\nScope in which ops run in inference mode; recording is "
     "unchanged."},
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
      {&name_fast_inputs, "_fast_inputs"},
      {&name_call_general, "_call_general"},
      {&name_acquire, "acquire"},
      {&name_release, "release"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if ((*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL) return NULL;
  }
  PyObject* module = PyModule_Create(&native_module);
  if (module == NULL) return NULL;
  if (add_type(module, "Handle", &HandleType) < 0 ||
      add_type(module, "CallableBlock", &CallableBlockType) < 0 ||
      add_type(module, "TrainerBase", &TrainerBaseType) < 0 ||
      add_type(module, "LoaderBatches", &LoaderBatchesType) < 0 ||
      add_type(module, "AutogradScope", &AutogradScopeType) < 0 ||
      PyModule_AddIntConstant(module, "MAX_BLOCK_OUTPUTS", MAX_BLOCK_OUTPUTS) < 0 ||
      PyModule_AddIntConstant(module, "MAX_LOADER_FIELDS", MAX_LOADER_FIELDS) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  PyObject* function = PyCFunction_NewEx(&array_backward_def, NULL, NULL);
  PyObject* method = function != NULL ? PyInstanceMethod_New(function) : NULL;
  Py_XDECREF(function);
  if (method == NULL || PyModule_AddObject(module, "array_backward", method) < 0) {
    Py_XDECREF(method);
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
