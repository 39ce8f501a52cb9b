/* glue.c: argument checks, conversions, handles and errors for the SWIG-generated wrapper
 * (see glue.h). Plain C: R's longjmp never skips a destructor here, and every temporary is
 * R_alloc'ed, so raising an R error anywhere leaks nothing. */
#include "glue.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- kinds -------------------------------------------------------------------------------- */

/* "hn_tensor", ...: the tag of each kind's external pointers. */
#define HNR_KIND_TAG(kind) "hn_" #kind,
static const char* const kKindTags[HNR_NUM_KINDS] = {HN_HANDLE_KINDS(HNR_KIND_TAG)};

/* "tensor list" for HNR_KIND_tensor_list, for messages (R_alloc'ed). */
static const char* KindText(int kind) {
  const char* name = kKindTags[kind] + 3;
  char* text = R_alloc(strlen(name) + 1, 1);
  for (size_t i = 0; name[i] != '\0'; ++i) text[i] = name[i] == '_' ? ' ' : name[i];
  text[strlen(name)] = '\0';
  return text;
}

/* Handles made and not yet freed, per kind (R is single-threaded: plain ints suffice). */
static int g_live[HNR_NUM_KINDS];

static SEXP KindTag(int kind) {
  static SEXP tags[HNR_NUM_KINDS];
  if (tags[kind] == NULL) tags[kind] = Rf_install(kKindTags[kind]); /* symbols are never freed */
  return tags[kind];
}

/* A handle is an external pointer whose address is a Box living in a raw vector (the pointer's
 * "prot" field, so R's GC owns it). C functions write a new handle straight into box->address
 * (see hnr_slot), so nothing is unowned between the C call and R. */
typedef struct {
  void* address; /* the hn_* handle, NULL when none or freed */
  int counted;   /* counted in g_live */
} Box;

/* The kind named by the tag of an external pointer, or -1. */
static int TagKind(SEXP x) {
  if (TYPEOF(x) != EXTPTRSXP) return -1;
  SEXP tag = R_ExternalPtrTag(x);
  for (int k = 0; k < HNR_NUM_KINDS; ++k) {
    if (tag == KindTag(k)) return k;
  }
  return -1;
}

/* The kind of a usable handle, or -1 for any other object. A handle restored by unserialize()
 * keeps its tag but has a NULL address (R does not save addresses): not usable, not freed. */
static int KindOf(SEXP x) {
  int kind = TagKind(x);
  if (kind < 0) return -1;
  SEXP prot = R_ExternalPtrProtected(x);
  if (TYPEOF(prot) != RAWSXP || XLENGTH(prot) != (R_xlen_t)sizeof(Box) ||
      R_ExternalPtrAddr(x) != (void*)RAW(prot)) {
    return -1;
  }
  return kind;
}

static Box* BoxOf(SEXP x) { return (Box*)R_ExternalPtrAddr(x); }

#define HNR_FREE_CASE(kind)          \
  case HNR_KIND_##kind:              \
    hn_##kind##_free((hn_##kind*)p); \
    break;
static void FreeAddress(int kind, void* p) {
  switch (kind) {
    HN_HANDLE_KINDS(HNR_FREE_CASE)
    default:
      break;
  }
}

/* The C finalizer of every handle; also the explicit release. Idempotent. */
static void Finalize(SEXP x) {
  int kind = KindOf(x);
  if (kind < 0) return;
  Box* box = BoxOf(x);
  void* p = box->address;
  if (p == NULL) return;
  box->address = NULL;
  if (box->counted) --g_live[kind];
  box->counted = 0;
  FreeAddress(kind, p);
}

/* ---- errors ------------------------------------------------------------------------------- */

/* "hybridnet_error_shape" for HN_ERR_SHAPE. */
static SEXP ConditionClass(int status) {
  const char* name = hn_status_name(status);
  const char* prefix = "HN_ERR_";
  int known = strncmp(name, prefix, strlen(prefix)) == 0 && strcmp(name, "HN_ERR_UNKNOWN") != 0;
  SEXP cls = Rf_protect(Rf_allocVector(STRSXP, known ? 4 : 3));
  int i = 0;
  if (known) {
    char buf[96];
    snprintf(buf, sizeof buf, "hybridnet_error_%s", name + strlen(prefix));
    for (char* c = buf; *c; ++c) {
      if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    }
    SET_STRING_ELT(cls, i++, Rf_mkChar(buf));
  }
  SET_STRING_ELT(cls, i++, Rf_mkChar("hybridnet_error"));
  SET_STRING_ELT(cls, i++, Rf_mkChar("error"));
  SET_STRING_ELT(cls, i++, Rf_mkChar("condition"));
  Rf_unprotect(1);
  return cls;
}

SEXP hnr_condition(int status, const char* message) {
  if (message == NULL) message = "";
  SEXP msg = Rf_protect(Rf_ScalarString(Rf_mkCharCE(message, CE_UTF8)));
  SEXP cond = Rf_protect(Rf_allocVector(VECSXP, 4));
  SET_VECTOR_ELT(cond, 0, msg);
  SET_VECTOR_ELT(cond, 1, R_NilValue);
  SET_VECTOR_ELT(cond, 2, Rf_mkString(hn_status_name(status)));
  SET_VECTOR_ELT(cond, 3, Rf_ScalarInteger(status));
  SEXP names = Rf_protect(Rf_allocVector(STRSXP, 4));
  SET_STRING_ELT(names, 0, Rf_mkChar("message"));
  SET_STRING_ELT(names, 1, Rf_mkChar("call"));
  SET_STRING_ELT(names, 2, Rf_mkChar("status"));
  SET_STRING_ELT(names, 3, Rf_mkChar("code"));
  Rf_setAttrib(cond, R_NamesSymbol, names);
  Rf_setAttrib(cond, R_ClassSymbol, ConditionClass(status));
  Rf_unprotect(3);
  return cond;
}

void hnr_raise(int status, const char* message) {
  SEXP cond = Rf_protect(hnr_condition(status, message));
  SEXP call = Rf_protect(Rf_lang2(Rf_install("stop"), cond));
  Rf_eval(call, R_BaseEnv);
  Rf_error("%s", message); /* not reached: stop() does not return */
}

/* The wrapper names are c_hn_x; messages use the C name hn_x. */
static const char* CName(const char* fn) { return strncmp(fn, "c_", 2) == 0 ? fn + 2 : fn; }

void hnr_arg_error(const char* fn, const char* arg, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  char* what = R_alloc((size_t)n + 1, 1);
  va_start(ap, fmt);
  vsnprintf(what, (size_t)n + 1, fmt, ap);
  va_end(ap);
  const char* name = CName(fn);
  size_t len = strlen(name) + strlen(arg) + strlen(what) + 32;
  char* message = R_alloc(len, 1);
  snprintf(message, len, "%s: argument '%s' %s", name, arg, what);
  hnr_raise(HN_ERR_INVALID_ARGUMENT, message);
}

void hnr_check(int status, const char* fn) {
  if (status == HN_OK) return;
  const char* message = hn_last_error();
  if (message == NULL || message[0] == '\0' || hn_last_error_code() != status) {
    size_t len = strlen(fn) + 64;
    char* text = R_alloc(len, 1);
    snprintf(text, len, "%s failed (%s)", CName(fn), hn_status_name(status));
    message = text;
  }
  hnr_raise(status, message);
}

/* "a double vector", "NULL", "a model handle", ... for messages. */
static const char* Describe(SEXP x) {
  int kind = TagKind(x);
  if (kind >= 0) {
    const char* text = KindText(kind);
    size_t len = strlen(text) + 16;
    char* s = R_alloc(len, 1);
    snprintf(s, len, "a %s handle", text);
    return s;
  }
  if (x == R_NilValue) return "NULL";
  if (IS_S4_OBJECT(x)) return "an S4 object";
  const char* type = Rf_type2char(TYPEOF(x));
  size_t len = strlen(type) + 48;
  char* s = R_alloc(len, 1);
  if (Rf_isVector(x)) {
    snprintf(s, len, "a %s vector of length %lld", type, (long long)XLENGTH(x));
  } else {
    snprintf(s, len, "an object of type %s", type);
  }
  return s;
}

/* ---- inputs ------------------------------------------------------------------------------- */

static void CheckTag(SEXP x, int kind, const char* fn, const char* arg) {
  if (TagKind(x) != kind) {
    hnr_arg_error(fn, arg, "must be a %s handle, not %s", KindText(kind), Describe(x));
  }
}

void* hnr_handle(SEXP x, int kind, const char* fn, const char* arg) {
  CheckTag(x, kind, fn, arg);
  if (KindOf(x) != kind) {
    hnr_arg_error(fn, arg,
                  "is a %s handle restored from a saved session: native objects are not "
                  "saved; load or build it again",
                  KindText(kind));
  }
  void* p = BoxOf(x)->address;
  if (p == NULL) hnr_arg_error(fn, arg, "is a closed %s handle (it was freed)", KindText(kind));
  return p;
}

void hnr_release(SEXP x, int kind, const char* fn, const char* arg) {
  if (x == R_NilValue) return;
  CheckTag(x, kind, fn, arg);
  Finalize(x); /* nothing for a closed or restored handle */
}

/* One number (integer, double or logical, not NA); whole when `whole`. */
static double Number(SEXP x, const char* fn, const char* arg) {
  int type = TYPEOF(x);
  if ((type != INTSXP && type != REALSXP && type != LGLSXP) || XLENGTH(x) != 1) {
    hnr_arg_error(fn, arg, "must be one number, not %s", Describe(x));
  }
  double v;
  if (type == REALSXP) {
    v = REAL(x)[0];
    if (ISNAN(v)) hnr_arg_error(fn, arg, "must not be NA or NaN");
  } else {
    int i = type == INTSXP ? INTEGER(x)[0] : LOGICAL(x)[0];
    if (i == NA_INTEGER) hnr_arg_error(fn, arg, "must not be NA");
    v = (double)i;
  }
  if (!isfinite(v) || v != floor(v)) hnr_arg_error(fn, arg, "must be a whole number, not %g", v);
  return v;
}

int hnr_int(SEXP x, const char* fn, const char* arg) {
  double v = Number(x, fn, arg);
  if (v < -2147483647.0 || v > 2147483647.0) hnr_arg_error(fn, arg, "is out of range: %.0f", v);
  return (int)v;
}

static const double kMaxExact = 9007199254740992.0; /* 2^53 */

size_t hnr_size(SEXP x, const char* fn, const char* arg) {
  double v = Number(x, fn, arg);
  if (v < 0 || v > kMaxExact) hnr_arg_error(fn, arg, "must be in [0, 2^53], not %.0f", v);
  return (size_t)v;
}

uint64_t hnr_uint64(SEXP x, const char* fn, const char* arg) {
  double v = Number(x, fn, arg);
  if (v < 0 || v > kMaxExact) hnr_arg_error(fn, arg, "must be in [0, 2^53], not %.0f", v);
  return (uint64_t)v;
}

int64_t hnr_int64(SEXP x, const char* fn, const char* arg) {
  double v = Number(x, fn, arg);
  if (v < -kMaxExact || v > kMaxExact)
    hnr_arg_error(fn, arg, "must be in [-2^53, 2^53], not %.0f", v);
  return (int64_t)v;
}

float hnr_float(SEXP x, const char* fn, const char* arg) {
  int type = TYPEOF(x);
  if ((type != INTSXP && type != REALSXP) || XLENGTH(x) != 1) {
    hnr_arg_error(fn, arg, "must be one number, not %s", Describe(x));
  }
  double v =
      type == REALSXP ? REAL(x)[0] : (INTEGER(x)[0] == NA_INTEGER ? NAN : (double)INTEGER(x)[0]);
  if (!isfinite(v) || fabs(v) > 3.4e38) {
    hnr_arg_error(fn, arg, "must be a finite float32 number, not %g", v);
  }
  return (float)v;
}

const char* hnr_string(SEXP x, int allow_null, const char* fn, const char* arg) {
  if (x == R_NilValue && allow_null) return NULL;
  if (TYPEOF(x) != STRSXP || XLENGTH(x) != 1) {
    hnr_arg_error(fn, arg, "must be one string, not %s", Describe(x));
  }
  if (STRING_ELT(x, 0) == NA_STRING) hnr_arg_error(fn, arg, "must not be NA");
  return Rf_translateCharUTF8(STRING_ELT(x, 0));
}

static int64_t g_no_dims[1];

void hnr_shape(SEXP x, const char* fn, const char* arg, const int64_t** dims, int* ndim) {
  int type = TYPEOF(x);
  if (type != INTSXP && type != REALSXP && x != R_NilValue) {
    hnr_arg_error(fn, arg, "must be a numeric vector of dimensions, not %s", Describe(x));
  }
  R_xlen_t n = x == R_NilValue ? 0 : XLENGTH(x);
  if (n > 32) hnr_arg_error(fn, arg, "has %lld dimensions; at most 32 are supported", (long long)n);
  int64_t* out = n > 0 ? (int64_t*)R_alloc((size_t)n, sizeof(int64_t)) : g_no_dims;
  for (R_xlen_t i = 0; i < n; ++i) {
    double v;
    if (type == INTSXP) {
      v = INTEGER(x)[i] == NA_INTEGER ? NAN : (double)INTEGER(x)[i];
    } else {
      v = REAL(x)[i];
    }
    if (ISNAN(v) || !isfinite(v) || v != floor(v) || v < 0 || v > kMaxExact) {
      hnr_arg_error(fn, arg, "must hold whole numbers >= 0; element %lld is %g", (long long)i + 1,
                    v);
    }
    out[i] = (int64_t)v;
  }
  *dims = out;
  *ndim = (int)n;
}

void hnr_data(SEXP x, const char* fn, const char* arg, const void** data, size_t* bytes) {
  R_xlen_t n;
  switch (TYPEOF(x)) {
    case NILSXP:
      *data = NULL;
      *bytes = 0;
      return;
    case RAWSXP:
      *data = RAW(x);
      *bytes = (size_t)XLENGTH(x);
      return;
    case REALSXP: {
      n = XLENGTH(x);
      float* out = (float*)R_alloc(n > 0 ? (size_t)n : 1, sizeof(float));
      const double* in = REAL(x);
      for (R_xlen_t i = 0; i < n; ++i) out[i] = (float)in[i];
      *data = out;
      *bytes = (size_t)n * sizeof(float);
      return;
    }
    case INTSXP:
    case LGLSXP: {
      n = XLENGTH(x);
      float* out = (float*)R_alloc(n > 0 ? (size_t)n : 1, sizeof(float));
      const int* in = TYPEOF(x) == INTSXP ? INTEGER(x) : LOGICAL(x);
      for (R_xlen_t i = 0; i < n; ++i) out[i] = in[i] == NA_INTEGER ? NAN : (float)in[i];
      *data = out;
      *bytes = (size_t)n * sizeof(float);
      return;
    }
    default:
      hnr_arg_error(fn, arg, "must be a numeric or raw vector, not %s", Describe(x));
  }
}

void hnr_bytes(SEXP x, const char* fn, const char* arg, const void** data, size_t* bytes) {
  if (TYPEOF(x) == RAWSXP) {
    *data = RAW(x);
    *bytes = (size_t)XLENGTH(x);
    return;
  }
  const char* s = hnr_string(x, 0, fn, arg);
  *data = s;
  *bytes = strlen(s);
}

void hnr_strings(SEXP x, const char* fn, const char* arg, const char* const** out, size_t* n) {
  if (x == R_NilValue) {
    *out = NULL;
    *n = 0;
    return;
  }
  if (TYPEOF(x) != STRSXP) {
    hnr_arg_error(fn, arg, "must be a character vector, not %s", Describe(x));
  }
  R_xlen_t len = XLENGTH(x);
  const char** arr = (const char**)R_alloc(len > 0 ? (size_t)len : 1, sizeof(char*));
  for (R_xlen_t i = 0; i < len; ++i) {
    if (STRING_ELT(x, i) == NA_STRING) {
      hnr_arg_error(fn, arg, "must not contain NA (element %lld)", (long long)i + 1);
    }
    arr[i] = Rf_translateCharUTF8(STRING_ELT(x, i));
  }
  *out = arr;
  *n = (size_t)len;
}

void hnr_attrs(SEXP x, const char* fn, const char* arg, const char* const** keys,
               const char* const** values, size_t* n) {
  if (x == R_NilValue) {
    *keys = NULL;
    *values = NULL;
    *n = 0;
    return;
  }
  SEXP names = Rf_getAttrib(x, R_NamesSymbol);
  if (TYPEOF(x) != STRSXP || names == R_NilValue) {
    hnr_arg_error(fn, arg, "must be a named character vector, not %s", Describe(x));
  }
  hnr_strings(x, fn, arg, values, n);
  size_t count;
  hnr_strings(names, fn, arg, keys, &count);
  for (size_t i = 0; i < count; ++i) {
    if ((*keys)[i][0] == '\0') hnr_arg_error(fn, arg, "has an empty name (element %zu)", i + 1);
  }
}

void hnr_handles(SEXP x, int kind, const char* fn, const char* arg, void*** out, size_t* n) {
  if (x == R_NilValue) {
    *out = NULL;
    *n = 0;
    return;
  }
  if (TYPEOF(x) == EXTPTRSXP) {
    void** arr = (void**)R_alloc(1, sizeof(void*));
    arr[0] = hnr_handle(x, kind, fn, arg);
    *out = arr;
    *n = 1;
    return;
  }
  if (TYPEOF(x) != VECSXP) {
    hnr_arg_error(fn, arg, "must be a list of %s handles, not %s", KindText(kind), Describe(x));
  }
  R_xlen_t len = XLENGTH(x);
  void** arr = (void**)R_alloc(len > 0 ? (size_t)len : 1, sizeof(void*));
  for (R_xlen_t i = 0; i < len; ++i) {
    size_t alen = strlen(arg) + 32;
    char* elem = R_alloc(alen, 1);
    snprintf(elem, alen, "%s[[%lld]]", arg, (long long)i + 1);
    arr[i] = hnr_handle(VECTOR_ELT(x, i), kind, fn, elem);
  }
  *out = arr;
  *n = (size_t)len;
}

void hnr_named_handles(SEXP x, int kind, const char* fn, const char* arg, void*** handles,
                       const char* const** names, size_t* n) {
  SEXP list_names = Rf_getAttrib(x, R_NamesSymbol);
  if (TYPEOF(x) != VECSXP || list_names == R_NilValue) {
    hnr_arg_error(fn, arg, "must be a named list of %s handles, not %s", KindText(kind),
                  Describe(x));
  }
  size_t count;
  hnr_strings(list_names, fn, arg, names, &count);
  hnr_handles(x, kind, fn, arg, handles, n);
}

void hnr_ints(SEXP x, size_t n, const char* fn, const char* arg, const int** out) {
  if (TYPEOF(x) != INTSXP || (size_t)XLENGTH(x) != n) {
    hnr_arg_error(fn, arg, "must be an integer vector of length %zu, not %s", n, Describe(x));
  }
  for (size_t i = 0; i < n; ++i) {
    if (INTEGER(x)[i] == NA_INTEGER) hnr_arg_error(fn, arg, "must not contain NA");
  }
  *out = INTEGER(x);
}

void hnr_named_shapes(SEXP x, const char* fn, const char* arg, size_t* num,
                      const char* const** names, const int** ndims, const int64_t** dims) {
  if (x == R_NilValue) {
    *num = 0;
    *names = NULL;
    *ndims = NULL;
    *dims = g_no_dims;
    return;
  }
  SEXP list_names = Rf_getAttrib(x, R_NamesSymbol);
  if (TYPEOF(x) != VECSXP || list_names == R_NilValue) {
    hnr_arg_error(fn, arg, "must be a named list of shapes, not %s", Describe(x));
  }
  size_t count;
  hnr_strings(list_names, fn, arg, names, &count);
  int* nd = (int*)R_alloc(count > 0 ? count : 1, sizeof(int));
  int64_t* all = (int64_t*)R_alloc(count * 32 + 1, sizeof(int64_t));
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    const int64_t* d;
    hnr_shape(VECTOR_ELT(x, (R_xlen_t)i), fn, (*names)[i], &d, &nd[i]);
    memcpy(all + total, d, (size_t)nd[i] * sizeof(int64_t));
    total += (size_t)nd[i];
  }
  *num = count;
  *ndims = nd;
  *dims = all;
}

/* ---- outputs ------------------------------------------------------------------------------ */

SEXP hnr_holder(int kind) {
  SEXP raw = Rf_protect(Rf_allocVector(RAWSXP, (R_xlen_t)sizeof(Box)));
  memset(RAW(raw), 0, sizeof(Box));
  SEXP h = Rf_protect(R_MakeExternalPtr(RAW(raw), KindTag(kind), raw));
  R_RegisterCFinalizerEx(h, Finalize, TRUE);
  Rf_unprotect(2);
  return h;
}

void** hnr_slot(SEXP holder) { return &BoxOf(holder)->address; }

SEXP hnr_adopted(SEXP holder) {
  Box* box = BoxOf(holder);
  if (box->address == NULL) return R_NilValue;
  if (!box->counted) {
    box->counted = 1;
    ++g_live[KindOf(holder)];
  }
  return holder;
}

typedef struct {
  int kind;
  void** addresses;
  size_t n;
  size_t adopted;
} AdoptState;

static SEXP AdoptBody(void* data) {
  AdoptState* st = (AdoptState*)data;
  SEXP list = Rf_protect(Rf_allocVector(VECSXP, (R_xlen_t)st->n));
  for (size_t i = 0; i < st->n; ++i) {
    SEXP h = hnr_holder(st->kind);
    SET_VECTOR_ELT(list, (R_xlen_t)i, h);
    *hnr_slot(h) = st->addresses[i];
    st->adopted = i + 1;
    hnr_adopted(h);
  }
  Rf_unprotect(1);
  return list;
}

static void AdoptCleanup(void* data, Rboolean jump) {
  AdoptState* st = (AdoptState*)data;
  if (!jump) return;
  for (size_t i = st->adopted; i < st->n; ++i) FreeAddress(st->kind, st->addresses[i]);
}

SEXP hnr_adopt_all(int kind, void** addresses, size_t n) {
  AdoptState st = {kind, addresses, n, 0};
  SEXP token = Rf_protect(R_MakeUnwindCont());
  SEXP list = R_UnwindProtect(AdoptBody, &st, AdoptCleanup, &st, token);
  Rf_unprotect(1);
  return list;
}

SEXP hnr_string_out(const char* s) {
  if (s == NULL) return R_NilValue;
  return Rf_ScalarString(Rf_mkCharCE(s, CE_UTF8));
}

static SEXP OwnedStringBody(void* data) { return hnr_string_out((const char*)data); }
static void OwnedStringCleanup(void* data, Rboolean jump) {
  (void)jump;
  hn_string_free((char*)data);
}

SEXP hnr_owned_string_out(char* s) {
  if (s == NULL) return R_NilValue;
  SEXP token = Rf_protect(R_MakeUnwindCont());
  SEXP out = R_UnwindProtect(OwnedStringBody, s, OwnedStringCleanup, s, token);
  Rf_unprotect(1);
  return out;
}

SEXP hnr_strings_out(const char* const* names, size_t n) {
  SEXP out = Rf_protect(Rf_allocVector(STRSXP, (R_xlen_t)n));
  for (size_t i = 0; i < n; ++i) {
    SET_STRING_ELT(out, (R_xlen_t)i, Rf_mkCharCE(names[i] != NULL ? names[i] : "", CE_UTF8));
  }
  Rf_unprotect(1);
  return out;
}

SEXP hnr_dims_out(const int64_t* dims, int ndim) {
  SEXP out = Rf_allocVector(REALSXP, ndim > 0 ? ndim : 0);
  for (int i = 0; i < ndim; ++i) REAL(out)[i] = (double)dims[i];
  return out;
}

SEXP hnr_double_out(double v) { return Rf_ScalarReal(v); }

SEXP hnr_named_doubles_out(const char* const* names, const double* values, size_t n) {
  SEXP out = Rf_protect(Rf_allocVector(REALSXP, (R_xlen_t)n));
  for (size_t i = 0; i < n; ++i) REAL(out)[i] = values[i];
  Rf_setAttrib(out, R_NamesSymbol, hnr_strings_out(names, n));
  Rf_unprotect(1);
  return out;
}

void hnr_output(SEXP list, int index, const char* name, SEXP value) {
  Rf_protect(value);
  SEXP names = Rf_getAttrib(list, R_NamesSymbol);
  if (names == R_NilValue) {
    names = Rf_allocVector(STRSXP, XLENGTH(list));
    Rf_setAttrib(list, R_NamesSymbol, names);
  }
  const char* short_name = strncmp(name, "out_", 4) == 0 ? name + 4 : name;
  SET_STRING_ELT(names, index, Rf_mkChar(short_name));
  SET_VECTOR_ELT(list, index, value);
  Rf_unprotect(1);
}

SEXP hnr_outputs(SEXP ans) {
  /* SWIG's list: element 0 is the (empty) result, then one element per output. */
  if (TYPEOF(ans) != VECSXP || XLENGTH(ans) < 2 || VECTOR_ELT(ans, 0) != R_NilValue) return ans;
  R_xlen_t n = XLENGTH(ans) - 1;
  if (n == 1) return VECTOR_ELT(ans, 1);
  SEXP out = Rf_protect(Rf_allocVector(VECSXP, n));
  SEXP names = Rf_protect(Rf_allocVector(STRSXP, n));
  SEXP old_names = Rf_getAttrib(ans, R_NamesSymbol);
  for (R_xlen_t i = 0; i < n; ++i) {
    SET_VECTOR_ELT(out, i, VECTOR_ELT(ans, i + 1));
    SEXP name = old_names != R_NilValue ? STRING_ELT(old_names, i + 1) : R_BlankString;
    SET_STRING_ELT(names, i, name);
  }
  Rf_setAttrib(out, R_NamesSymbol, names);
  Rf_unprotect(2);
  return out;
}

/* ---- helpers wrapped for the R layer ------------------------------------------------------ */

static float HalfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  int exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  float v;
  if (exp == 0) {
    v = ldexpf((float)mant, -24);
  } else if (exp == 31) {
    v = mant != 0 ? NAN : INFINITY;
  } else {
    v = ldexpf((float)(mant | 0x400u), exp - 25);
  }
  return sign ? -v : v;
}

static float Bfloat16ToFloat(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* Element i of a buffer of `dtype` as a double; *ok = 0 for a dtype R cannot hold. */
static double ElementAsDouble(const void* buf, int dtype, int64_t i, int* ok) {
  switch (dtype) {
    case HN_DTYPE_FLOAT32:
      return ((const float*)buf)[i];
    case HN_DTYPE_FLOAT64:
      return ((const double*)buf)[i];
    case HN_DTYPE_FLOAT16:
      return HalfToFloat(((const uint16_t*)buf)[i]);
    case HN_DTYPE_BFLOAT16:
      return Bfloat16ToFloat(((const uint16_t*)buf)[i]);
    case HN_DTYPE_UINT8:
      return ((const uint8_t*)buf)[i];
    case HN_DTYPE_INT8:
      return ((const int8_t*)buf)[i];
    case HN_DTYPE_BOOL:
      return ((const uint8_t*)buf)[i] != 0;
    case HN_DTYPE_INT16:
      return ((const int16_t*)buf)[i];
    case HN_DTYPE_UINT16:
      return ((const uint16_t*)buf)[i];
    case HN_DTYPE_INT32:
      return ((const int32_t*)buf)[i];
    case HN_DTYPE_UINT32:
      return ((const uint32_t*)buf)[i];
    case HN_DTYPE_INT64:
      return (double)((const int64_t*)buf)[i];
    case HN_DTYPE_UINT64:
      return (double)((const uint64_t*)buf)[i];
    default:
      *ok = 0;
      return 0;
  }
}

/* Walks the elements of `shape` in row-major (C) order and tracks the column-major (R) offset
 * of each: how R arrays of dim = shape map onto row-major tensors ("rowmajor" layout). */
typedef struct {
  int ndim;
  const int64_t* shape;
  int64_t index[32];
  int64_t stride[32]; /* column-major strides */
  int64_t offset;     /* column-major offset of `index` */
} RowMajorWalk;

static void WalkStart(RowMajorWalk* w, const int64_t* shape, int ndim) {
  w->ndim = ndim;
  w->shape = shape;
  w->offset = 0;
  int64_t stride = 1;
  for (int d = 0; d < ndim; ++d) {
    w->index[d] = 0;
    w->stride[d] = stride;
    stride *= shape[d];
  }
}

static void WalkNext(RowMajorWalk* w) {
  for (int d = w->ndim - 1; d >= 0; --d) {
    w->offset += w->stride[d];
    if (++w->index[d] < w->shape[d]) return;
    w->offset -= w->stride[d] * w->shape[d];
    w->index[d] = 0;
  }
}

/* Whether the R and C orders of `shape` differ (more than one dimension above 1). */
static int NeedsTranspose(const int64_t* shape, int ndim) {
  int big = 0;
  for (int d = 0; d < ndim; ++d) big += shape[d] > 1;
  return big > 1;
}

/* The `size` elements of a row-major buffer of `dtype` as doubles, in R's column-major order
 * for `shape` when `transpose`. */
static void ToDoubles(const void* buf, int dtype, int64_t size, const int64_t* shape, int ndim,
                      int transpose, double* out) {
  int ok = 1;
  if (!transpose) {
    for (int64_t i = 0; i < size; ++i) out[i] = ElementAsDouble(buf, dtype, i, &ok);
  } else {
    RowMajorWalk w;
    WalkStart(&w, shape, ndim);
    for (int64_t i = 0; i < size; ++i, WalkNext(&w)) {
      out[w.offset] = ElementAsDouble(buf, dtype, i, &ok);
    }
  }
  if (!ok) {
    char msg[96];
    snprintf(msg, sizeof msg, "unsupported dtype %d", dtype);
    hnr_raise(HN_ERR_DTYPE, msg);
  }
}

SEXP hnr_tensor_values(const hn_tensor* tensor) {
  int dtype = 0;
  int64_t size = 0;
  size_t nbytes = 0;
  hnr_check(hn_tensor_dtype(tensor, &dtype), "hn_tensor_dtype");
  hnr_check(hn_tensor_size(tensor, &size), "hn_tensor_size");
  hnr_check(hn_tensor_nbytes(tensor, &nbytes), "hn_tensor_nbytes");
  void* buf = R_alloc(nbytes > 0 ? nbytes : 1, 1);
  hnr_check(hn_tensor_copy_to(tensor, buf, nbytes), "hn_tensor_copy_to");
  SEXP out = Rf_protect(Rf_allocVector(REALSXP, (R_xlen_t)size));
  ToDoubles(buf, dtype, size, NULL, 0, 0, REAL(out));
  Rf_unprotect(1);
  return out;
}

/* ---- predict()'s fast path ---------------------------------------------------------------- */

/* A predictor of a one-input model with its float32 input tensor, which the predictor shares:
 * predict() converts R's numbers straight into it (the one conversion R's doubles need) and
 * reads the outputs straight from the predictor's tensors. Made for a model by
 * hnr_fast_predictor, kept in the model's state until hn_free or the GC. */
typedef struct {
  hn_predictor* predictor;
  char* input_name;
  hn_tensor* input; /* NULL until the first call; remade when the input shape changes */
  int64_t shape[32];
  int ndim;
} FastPredictor;

static SEXP FastTag(void) {
  static SEXP tag = NULL;
  if (tag == NULL) tag = Rf_install("hnr_fast_predictor");
  return tag;
}

static FastPredictor* FastOf(SEXP x) {
  if (TYPEOF(x) != EXTPTRSXP || R_ExternalPtrTag(x) != FastTag()) return NULL;
  return (FastPredictor*)R_ExternalPtrAddr(x); /* NULL once freed or restored by readRDS */
}

static void FastFinalize(SEXP x) {
  FastPredictor* f = FastOf(x);
  if (f == NULL) return;
  R_ClearExternalPtr(x);
  hn_tensor_free(f->input);
  hn_predictor_free(f->predictor);
  free(f->input_name);
  free(f);
}

SEXP hnr_fast_predictor(const hn_model* model) {
  const char* const* names = NULL;
  size_t count = 0;
  hnr_check(hn_model_input_names(model, &names, &count), "hn_model_input_names");
  if (count != 1)
    hnr_raise(HN_ERR_INVALID_ARGUMENT, "hnr_fast_predictor: the model must have one input");
  /* The owner and its finalizer exist before anything is allocated. */
  SEXP owner = Rf_protect(R_MakeExternalPtr(NULL, FastTag(), R_NilValue));
  R_RegisterCFinalizerEx(owner, FastFinalize, TRUE);
  FastPredictor* f = (FastPredictor*)calloc(1, sizeof(FastPredictor));
  if (f == NULL) hnr_raise(HN_ERR_OUT_OF_MEMORY, "hnr_fast_predictor: out of memory");
  R_SetExternalPtrAddr(owner, f);
  f->input_name = (char*)malloc(strlen(names[0]) + 1);
  if (f->input_name == NULL) hnr_raise(HN_ERR_OUT_OF_MEMORY, "hnr_fast_predictor: out of memory");
  strcpy(f->input_name, names[0]);
  hnr_check(hn_predictor_create(model, &f->predictor), "hn_predictor_create");
  Rf_unprotect(1);
  return owner;
}

void hnr_fast_release(SEXP fast) { FastFinalize(fast); }

/* Makes the input tensor for `shape` unless the current one has it. */
static hn_tensor* FastInput(FastPredictor* f, const int64_t* shape, int ndim) {
  if (f->input != NULL && f->ndim == ndim &&
      (ndim == 0 || memcmp(f->shape, shape, (size_t)ndim * sizeof(int64_t)) == 0)) {
    return f->input;
  }
  hn_tensor* t = NULL;
  hnr_check(hn_tensor_create(HN_DTYPE_FLOAT32, shape, ndim, NULL, 0, &t), "hn_tensor_create");
  int rc = hn_predictor_set_input_tensor(f->predictor, f->input_name, t);
  if (rc != HN_OK) {
    hn_tensor_free(t);
    hnr_check(rc, "hn_predictor_set_input_tensor");
  }
  hn_tensor_free(f->input); /* the predictor now holds the new one */
  f->input = t;
  f->ndim = ndim;
  if (ndim > 0) memcpy(f->shape, shape, (size_t)ndim * sizeof(int64_t));
  return t;
}

/* Output `index` of the last forward as an R value laid out as `colmajor` says. */
static SEXP FastOutput(FastPredictor* f, size_t index, int colmajor) {
  const int64_t* dims = NULL;
  int ndim = 0;
  hnr_check(hn_predictor_output_shape(f->predictor, index, &dims, &ndim),
            "hn_predictor_output_shape");
  int64_t shape[32];
  int64_t size = 1;
  for (int d = 0; d < ndim; ++d) size *= shape[d] = dims[d];
  /* Every R allocation comes before the output tensor is taken, so nothing leaks on an error. */
  SEXP out = Rf_protect(Rf_allocVector(REALSXP, (R_xlen_t)size));
  if (ndim > 1) {
    SEXP dim = Rf_protect(Rf_allocVector(INTSXP, ndim));
    for (int d = 0; d < ndim; ++d) INTEGER(dim)[d] = (int)shape[colmajor ? ndim - 1 - d : d];
    Rf_setAttrib(out, R_DimSymbol, dim);
    Rf_unprotect(1);
  }
  hn_tensor* t = NULL;
  hnr_check(hn_predictor_output(f->predictor, index, &t), "hn_predictor_output");
  int dtype = 0;
  void* data = NULL;
  int rc = hn_tensor_dtype(t, &dtype);
  if (rc == HN_OK) rc = hn_tensor_data(t, &data);
  if (rc == HN_OK) {
    int ok = 1;
    if (size > 0) ElementAsDouble(data, dtype, 0, &ok); /* checked now: ToDoubles must not raise */
    if (ok)
      ToDoubles(data, dtype, size, shape, ndim, !colmajor && NeedsTranspose(shape, ndim),
                REAL(out));
    else
      rc = HN_ERR_DTYPE;
  }
  hn_tensor_free(t);
  if (rc == HN_ERR_DTYPE) hnr_raise(rc, "hnr_fast_predict: an output dtype R cannot hold");
  hnr_check(rc, "hn_tensor_data");
  Rf_unprotect(1);
  return out;
}

SEXP hnr_fast_predict(SEXP fast, SEXP x, SEXP layout) {
  static const char* const fn = "predict.HybridnetModel";
  FastPredictor* f = FastOf(fast);
  if (f == NULL) {
    hnr_raise(HN_ERR_INVALID_ARGUMENT,
              "predict.HybridnetModel: the model is closed (freed with "
              "hn_free(), or restored from a saved session)");
  }
  if (TYPEOF(layout) != STRSXP || XLENGTH(layout) < 1 || STRING_ELT(layout, 0) == NA_STRING ||
      (strcmp(CHAR(STRING_ELT(layout, 0)), "rowmajor") != 0 &&
       strcmp(CHAR(STRING_ELT(layout, 0)), "colmajor") != 0)) {
    hnr_arg_error(fn, "layout", "must be \"rowmajor\" or \"colmajor\", not %s", Describe(layout));
  }
  const int colmajor = CHAR(STRING_ELT(layout, 0))[0] == 'c';
  const int type = TYPEOF(x);
  if (type != REALSXP && type != INTSXP && type != LGLSXP) {
    hnr_arg_error(fn, "x", "must be a numeric vector, matrix or array, not %s", Describe(x));
  }
  /* The tensor's shape: (1, n) for a vector (one example), dim, or dim reversed (colmajor). */
  int64_t shape[32];
  int ndim;
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  if (dim == R_NilValue) {
    ndim = 2;
    shape[0] = 1;
    shape[1] = (int64_t)XLENGTH(x);
  } else {
    ndim = (int)XLENGTH(dim);
    if (ndim > 32) hnr_arg_error(fn, "x", "has %d dimensions; at most 32 are supported", ndim);
    for (int d = 0; d < ndim; ++d) shape[d] = INTEGER(dim)[colmajor ? ndim - 1 - d : d];
  }
  hn_tensor* input = FastInput(f, shape, ndim);
  float* data = NULL;
  hnr_check(hn_tensor_data(input, (void**)&data), "hn_tensor_data");
  const R_xlen_t n = XLENGTH(x);
  const int transpose = dim != R_NilValue && !colmajor && NeedsTranspose(shape, ndim);
  RowMajorWalk w;
  WalkStart(&w, shape, ndim);
  if (type == REALSXP) {
    const double* in = REAL(x);
    if (!transpose) {
      for (R_xlen_t i = 0; i < n; ++i) data[i] = (float)in[i];
    } else {
      for (R_xlen_t i = 0; i < n; ++i, WalkNext(&w)) data[i] = (float)in[w.offset];
    }
  } else {
    const int* in = type == INTSXP ? INTEGER(x) : LOGICAL(x);
    for (R_xlen_t i = 0; i < n; ++i) {
      const int v = in[transpose ? w.offset : i];
      data[i] = v == NA_INTEGER ? NAN : (float)v;
      if (transpose) WalkNext(&w);
    }
  }
  hnr_check(hn_predictor_forward(f->predictor), "hn_predictor_forward");
  size_t outputs = 0;
  hnr_check(hn_predictor_num_outputs(f->predictor, &outputs), "hn_predictor_num_outputs");
  if (outputs == 1) return FastOutput(f, 0, colmajor);
  SEXP list = Rf_protect(Rf_allocVector(VECSXP, (R_xlen_t)outputs));
  for (size_t i = 0; i < outputs; ++i)
    SET_VECTOR_ELT(list, (R_xlen_t)i, FastOutput(f, i, colmajor));
  Rf_unprotect(1);
  return list;
}

SEXP hnr_tensor_from_r(SEXP x, SEXP colmajor, SEXP vector_is_row) {
  static const char* const fn = "hn_tensor";
  const int type = TYPEOF(x);
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  /* Data frames, classed vectors and other types are the R layer's to convert or reject. */
  if ((type != REALSXP && type != INTSXP && type != LGLSXP) || (OBJECT(x) && dim == R_NilValue)) {
    return R_NilValue;
  }
  const int col = hnr_int(colmajor, fn, "colmajor");
  const R_xlen_t n = XLENGTH(x);
  int ndim =
      dim == R_NilValue ? (hnr_int(vector_is_row, fn, "vector_is_row") ? 2 : 1) : (int)XLENGTH(dim);
  if (ndim > 32) hnr_arg_error(fn, "x", "has %d dimensions; at most 32 are supported", ndim);
  int64_t shape[32];
  int64_t r_dims[32]; /* dim(x) in R's order, for the transposing walk */
  if (dim == R_NilValue) {
    shape[0] = 1;
    shape[ndim - 1] = (int64_t)n;
  } else {
    for (int d = 0; d < ndim; ++d) {
      r_dims[d] = (int64_t)INTEGER(dim)[d];
      shape[col ? ndim - 1 - d : d] = r_dims[d];
    }
  }
  /* "rowmajor": R's element [i, j, ...] is the tensor's [i, j, ...], so memory is transposed. */
  const int transpose = dim != R_NilValue && !col && NeedsTranspose(r_dims, ndim);
  /* The new tensor is owned (its finalizer registered) before anything can fail. */
  SEXP holder = Rf_protect(hnr_holder(HNR_KIND_tensor));
  hnr_check(hn_tensor_create(HN_DTYPE_FLOAT32, shape, ndim, NULL, 0, (hn_tensor**)hnr_slot(holder)),
            "hn_tensor_create");
  hnr_adopted(holder);
  float* data = NULL;
  hnr_check(hn_tensor_data((hn_tensor*)*hnr_slot(holder), (void**)&data), "hn_tensor_data");
  const double* real = type == REALSXP ? REAL(x) : NULL;
  const int* ints = type == REALSXP ? NULL : type == INTSXP ? INTEGER(x) : LOGICAL(x);
  RowMajorWalk w;
  if (transpose) WalkStart(&w, r_dims, ndim);
  for (R_xlen_t i = 0; i < n; ++i) {
    const R_xlen_t at = transpose ? (R_xlen_t)w.offset : i;
    data[i] = real ? (float)real[at] : ints[at] == NA_INTEGER ? NAN : (float)ints[at];
    if (transpose) WalkNext(&w);
  }
  Rf_unprotect(1);
  return holder;
}

/* `handle` as a HybridnetTensor: a shallow copy of the package's prototype with the slot set. */
static SEXP TensorObject(SEXP prototype, SEXP handle) {
  static SEXP handle_symbol = NULL;
  if (handle_symbol == NULL) handle_symbol = Rf_install("handle");
  SEXP t = Rf_protect(Rf_shallow_duplicate(prototype));
  Rf_setAttrib(t, handle_symbol, handle);
  Rf_unprotect(1);
  return t;
}

/* The tensor handle of a HybridnetTensor, or NULL for anything else. */
static SEXP TensorHandle(SEXP x) {
  static SEXP handle_symbol = NULL;
  if (handle_symbol == NULL) handle_symbol = Rf_install("handle");
  if (!IS_S4_OBJECT(x) || !Rf_inherits(x, "HybridnetTensor")) return NULL;
  return Rf_getAttrib(x, handle_symbol);
}

SEXP hnr_forward_tensors(SEXP block, SEXP x, SEXP prototype) {
  static const char* const fn = "hn_forward";
  SEXP one = TensorHandle(x);
  const R_xlen_t n = one != NULL ? 1 : TYPEOF(x) == VECSXP ? XLENGTH(x) : 0;
  if (n == 0) return R_NilValue;
  hn_tensor** inputs = (hn_tensor**)R_alloc((size_t)n, sizeof(hn_tensor*));
  for (R_xlen_t i = 0; i < n; ++i) {
    SEXP h = one != NULL ? one : TensorHandle(VECTOR_ELT(x, i));
    if (h == NULL) return R_NilValue; /* not all tensors: the R arrays path */
    inputs[i] = (hn_tensor*)hnr_handle(h, HNR_KIND_tensor, fn, "x");
  }
  hn_block* b = (hn_block*)hnr_handle(block, HNR_KIND_block, fn, "block");
  enum { kMaxOutputs = 64 };
  hn_tensor* outputs[kMaxOutputs];
  size_t count = 0;
  hnr_check(hn_block_forward(b, inputs, (size_t)n, kMaxOutputs, outputs, &count),
            "hn_block_forward");
  SEXP handles = Rf_protect(hnr_adopt_all(HNR_KIND_tensor, (void**)outputs, count));
  SEXP out;
  if (count == 1) {
    out = TensorObject(prototype, VECTOR_ELT(handles, 0));
  } else {
    out = Rf_protect(Rf_allocVector(VECSXP, (R_xlen_t)count));
    for (size_t i = 0; i < count; ++i) {
      SET_VECTOR_ELT(out, (R_xlen_t)i, TensorObject(prototype, VECTOR_ELT(handles, (R_xlen_t)i)));
    }
    Rf_unprotect(1);
  }
  Rf_unprotect(1);
  return out;
}

typedef struct {
  SEXP env;
  int flags;    /* hn_autograd_flag bits the scope set */
  int previous; /* every flag as it was before */
} ScopeState;

static SEXP ScopeBody(void* data) {
  ScopeState* st = (ScopeState*)data;
  return Rf_eval(Rf_install("expr"), st->env);
}

/* Restores the flags the scope changed, as MXNet's scopes do. */
static void ScopeCleanup(void* data, Rboolean jump) {
  ScopeState* st = (ScopeState*)data;
  (void)jump;
  const int changed = st->previous ^ st->flags;
  if (changed != 0) hn_autograd_set_flags(st->previous, changed, NULL);
}

static int ScopeFlag(SEXP value, const char* fn, const char* name, int bit) {
  const int on = hnr_int(value, fn, name);
  if (on != 0 && on != 1) hnr_arg_error(fn, name, "must be 0 or 1, not %d", on);
  return on ? bit : 0;
}

SEXP hnr_autograd_scope(SEXP env, SEXP recording, SEXP training) {
  static const char* const fn = "hn_autograd_record";
  if (TYPEOF(env) != ENVSXP)
    hnr_arg_error(fn, "env", "must be an environment, not %s", Describe(env));
  ScopeState st = {env, 0, 0};
  st.flags = ScopeFlag(recording, fn, "recording", HN_AUTOGRAD_RECORDING) |
             ScopeFlag(training, fn, "training", HN_AUTOGRAD_TRAINING);
  hnr_check(
      hn_autograd_set_flags(st.flags, HN_AUTOGRAD_RECORDING | HN_AUTOGRAD_TRAINING, &st.previous),
      "hn_autograd_set_flags");
  SEXP token = Rf_protect(R_MakeUnwindCont());
  SEXP value = R_UnwindProtect(ScopeBody, &st, ScopeCleanup, &st, token);
  Rf_unprotect(1);
  return value;
}

SEXP hnr_live_handles(void) {
  SEXP out = Rf_protect(Rf_allocVector(INTSXP, HNR_NUM_KINDS));
  SEXP names = Rf_protect(Rf_allocVector(STRSXP, HNR_NUM_KINDS));
  for (int k = 0; k < HNR_NUM_KINDS; ++k) {
    INTEGER(out)[k] = g_live[k];
    SET_STRING_ELT(names, k, Rf_mkChar(kKindTags[k] + 3));
  }
  Rf_setAttrib(out, R_NamesSymbol, names);
  Rf_unprotect(2);
  return out;
}

int hnr_header_abi_version(void) { return HN_ABI_VERSION; }

int hnr_handle_state(SEXP x, const char* kind) {
  int k = TagKind(x);
  if (k < 0 || kind == NULL || strcmp(kKindTags[k], kind) != 0) return -1;
  return KindOf(x) == k && BoxOf(x)->address != NULL ? 1 : 0;
}
