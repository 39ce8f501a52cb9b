/* hybridnet_java.i: the Java (JNI) part of hybridnet.i. Included only under SWIGJAVA.
 *
 * The generated classes (org.hybridnet.internal.HybridnetNative, ...JNI, ...Constants) are an
 * internal layer: the public API is the hand-written facade in org.hybridnet, which owns every
 * handle (AutoCloseable + Cleaner), checks the closed state and serializes what must be.
 *
 * Mapping (no SWIG proxy classes, hence no finalize() and no SWIGTYPE_p_* types):
 *   hn_X* / const hn_X*                       Java long (the handle's address; 0 = NULL)
 *   hn_X** out                                long[] holder: [0] receives the new handle
 *   int* / int64_t* / size_t* out_...         int[] / long[] / long[] holders
 *   const char* (in)                          String, passed as real UTF-8 (not JNI's
 *                                             modified UTF-8, which differs for U+0000 and
 *                                             characters outside the BMP)
 *   const char* (returned), const char** out  String / String[] holder (decoded as UTF-8)
 *   char** out (new string)                   String[] holder; the C string is freed here
 *   const char* const** out_names + count     String[][] holder: [0] receives the names
 *   const int64_t* shape + int ndim           long[] (ndim = length)
 *   const int64_t** out_dims + int* out_ndim  long[][] holder: [0] receives the dims
 *   const hn_X* const* inputs + count         long[] of handles
 *   max_outputs + hn_tensor** outputs + count long[]: capacity = length, filled with handles,
 *                                             the rest stays 0
 *   const void* data / void* buffer + bytes   float[] (float32 elements; bytes = 4 * length)
 *   const void* nio_in / void* nio_out        direct java.nio.FloatBuffer (zero-copy)
 *   byte buffers (json, params)               byte[]
 *   uint64_t                                  long (two's complement)
 *
 * Errors: a negative status throws org.hybridnet.HybridnetException.fromNative(status, utf8
 * message) after every argument has been released (the "ret" typemap runs last), so no JNI
 * rule is broken (no JNI calls inside critical sections or with an exception pending).
 */

%include "enumsimple.swg"
%javaconst(1);

/* Nothing here is a proxy class, but keep SWIG from ever emitting finalize() (deprecated for
 * removal, JEP 421): the facade frees through AutoCloseable and a java.lang.ref.Cleaner. */
%typemap(javafinalize) SWIGTYPE ""

%pragma(java) jniclassclassmodifiers = "public final class"
%pragma(java) moduleclassmodifiers = "public final class"
%pragma(java) jniclasscode = %{
  static {
    NativeLoader.load();
  }

  private HybridnetNativeJNI() {}
%}
%pragma(java) modulecode = %{
  private HybridnetNative() {}
%}

/* The JNI support code the typemaps call (conversions, exceptions, JNI_OnLoad) is ordinary C++
 * in bindings/java/jni/hn_jni.{h,cc}, compiled with the project's warnings. */
%{
#include "hn_jni.h"
%}

/* ---- status -> exception (runs after every argument is released) -------------------------- */
%typemap(ret) int %{
  if ($1 < 0) hn_jni::ThrowStatus(jenv, $1);
%}
/* These return values, not statuses. */
%typemap(ret) int hn_last_error_code ""
%typemap(ret) int hn_abi_version ""

/* ---- strings ------------------------------------------------------------------------------- */
%typemap(jni) const char* "jstring"
%typemap(jtype) const char* "String"
%typemap(jstype) const char* "String"
%typemap(javain) const char* "$javainput"
%typemap(javaout) const char* { return $jnicall; }
%typemap(in) const char* (hn_jni::Utf8In utf8) %{
  if (!utf8.Init(jenv, $input)) return $null;
  $1 = ($1_ltype)utf8.get();
%}
%typemap(freearg) const char* ""
%typemap(out) const char* %{ $result = hn_jni::NewString(jenv, $1); %}

/* String[] inputs */
%define HN_JAVA_STRINGS_IN(DECL)
%typemap(jni) DECL "jobjectArray"
%typemap(jtype) DECL "String[]"
%typemap(jstype) DECL "String[]"
%typemap(javain) DECL "$javainput"
%typemap(in) DECL (hn_jni::Utf8ArrayIn strings) %{
  if (!strings.Init(jenv, $input)) return $null;
  $1 = ($1_ltype)strings.get();
%}
%enddef
HN_JAVA_STRINGS_IN(const char* const* attr_keys)
HN_JAVA_STRINGS_IN(const char* const* attr_values)
HN_JAVA_STRINGS_IN(const char* const* names)
HN_JAVA_STRINGS_IN(const char* const* dtype_names)

%typemap(jni) (const char* const* input_names, size_t num_inputs) "jobjectArray"
%typemap(jtype) (const char* const* input_names, size_t num_inputs) "String[]"
%typemap(jstype) (const char* const* input_names, size_t num_inputs) "String[]"
%typemap(javain) (const char* const* input_names, size_t num_inputs) "$javainput"
%typemap(in) (const char* const* input_names, size_t num_inputs) (hn_jni::Utf8ArrayIn strings) %{
  if (!strings.Init(jenv, $input)) return $null;
  $1 = ($1_ltype)strings.get();
  $2 = strings.size();
%}

/* New strings (char** out): copied into a String[] holder, then freed. */
%typemap(jni) char** out "jobjectArray"
%typemap(jtype) char** out "String[]"
%typemap(jstype) char** out "String[]"
%typemap(javain) char** out "$javainput"
%typemap(in) char** out (char* temp = nullptr) %{
  if (!hn_jni::CheckHolder(jenv, $input)) return $null;
  $1 = ($1_ltype)&temp;
%}
%typemap(argout) char** out %{
  if (temp$argnum != nullptr) {
    jstring s = hn_jni::NewString(jenv, temp$argnum);
    hn_string_free(temp$argnum);
    temp$argnum = nullptr;
    if (s != nullptr) jenv->SetObjectArrayElement($input, 0, s);
  }
%}

/* Borrowed strings (const char** out_...): String[] holder, may be null ("may be NULL"). */
%typemap(jni) const char** OUT_STR "jobjectArray"
%typemap(jtype) const char** OUT_STR "String[]"
%typemap(jstype) const char** OUT_STR "String[]"
%typemap(javain) const char** OUT_STR "$javainput"
%typemap(in) const char** OUT_STR (const char* temp = nullptr) %{
  if (!hn_jni::CheckHolder(jenv, $input, true)) return $null;
  $1 = $input != nullptr ? ($1_ltype)&temp : nullptr;
%}
%typemap(argout) const char** OUT_STR %{
  if (temp$argnum != nullptr) {
    jstring s = hn_jni::NewString(jenv, temp$argnum);
    if (s != nullptr) jenv->SetObjectArrayElement($input, 0, s);
  }
%}
%apply const char** OUT_STR {
  const char** out_name, const char** out_op, const char** out_description,
  const char** out_key, const char** out_type, const char** out_default, const char** out_alias,
  const char** out_limits, const char** out_onnx_op
};

/* Borrowed name lists (const char* const** out_names, size_t* out_count): String[][] holder. */
%typemap(jni) (const char* const** out_names, size_t* out_count) "jobjectArray"
%typemap(jtype) (const char* const** out_names, size_t* out_count) "String[][]"
%typemap(jstype) (const char* const** out_names, size_t* out_count) "String[][]"
%typemap(javain) (const char* const** out_names, size_t* out_count) "$javainput"
%typemap(in) (const char* const** out_names, size_t* out_count)
    (const char* const* names = nullptr, size_t count = 0) %{
  if (!hn_jni::CheckHolder(jenv, $input)) return $null;
  $1 = ($1_ltype)&names;
  $2 = &count;
%}
%typemap(argout) (const char* const** out_names, size_t* out_count) %{
  if (result == HN_OK) {
    jobjectArray list = jenv->NewObjectArray(static_cast<jsize>(count$argnum),
                                             hn_jni::g_cache.string_class, nullptr);
    for (size_t i = 0; list != nullptr && i < count$argnum; ++i) {
      jstring s = hn_jni::NewString(jenv, names$argnum[i]);
      if (s == nullptr) break;
      jenv->SetObjectArrayElement(list, static_cast<jsize>(i), s);
      jenv->DeleteLocalRef(s);
    }
    if (list != nullptr && !jenv->ExceptionCheck()) jenv->SetObjectArrayElement($input, 0, list);
  }
%}

/* ---- scalars ------------------------------------------------------------------------------- */
%typemap(jni) uint64_t "jlong"
%typemap(jtype) uint64_t "long"
%typemap(jstype) uint64_t "long"
%typemap(javain) uint64_t "$javainput"
%typemap(in) uint64_t %{ $1 = static_cast<uint64_t>($input); %}

%define HN_JAVA_SCALAR_OUT(CTYPE, JNITYPE, JNIARRAY, JARRAY, SETTER, NAME)
%typemap(jni) CTYPE* NAME #JNIARRAY
%typemap(jtype) CTYPE* NAME #JARRAY
%typemap(jstype) CTYPE* NAME #JARRAY
%typemap(javain) CTYPE* NAME "$javainput"
%typemap(in) CTYPE* NAME (CTYPE temp = 0) %{
  if (!hn_jni::CheckHolder(jenv, $input, true)) return $null;
  $1 = $input != nullptr ? ($1_ltype)&temp : nullptr;
%}
%typemap(argout) CTYPE* NAME %{
  if ($input != nullptr && result == HN_OK) {
    JNITYPE value = static_cast<JNITYPE>(temp$argnum);
    jenv->SETTER($input, 0, 1, &value);
  }
%}
%enddef
HN_JAVA_SCALAR_OUT(int, jint, jintArray, int[], SetIntArrayRegion, OUT_INT)
HN_JAVA_SCALAR_OUT(int64_t, jlong, jlongArray, long[], SetLongArrayRegion, OUT_I64)
HN_JAVA_SCALAR_OUT(size_t, jlong, jlongArray, long[], SetLongArrayRegion, OUT_SIZE)
%apply int* OUT_INT {
  int* out_num_threads, int* out_dtype, int* out_ndim, int* out_version, int* out_required,
  int* out_mxnet_version, int* out_legacy, int* out_complete, int* out_exportable
};
%apply int64_t* OUT_I64 { int64_t* out_dim, int64_t* out_size, int64_t* out_count, int64_t* out_value };
%apply size_t* OUT_SIZE {
  size_t* out_bytes, size_t* out_size, size_t* out_count, size_t* out_num_attrs,
  size_t* out_num_aliases, size_t* out_num_onnx_ops
};

/* ---- handles (every kind of hn_handle_kinds.h) ------------------------------------------ */
%define HN_JAVA_HANDLE(KIND)
%typemap(jni) hn_ ## KIND*, const hn_ ## KIND* "jlong"
%typemap(jtype) hn_ ## KIND*, const hn_ ## KIND* "long"
%typemap(jstype) hn_ ## KIND*, const hn_ ## KIND* "long"
%typemap(javain) hn_ ## KIND*, const hn_ ## KIND* "$javainput"
%typemap(in) hn_ ## KIND*, const hn_ ## KIND* %{ $1 = reinterpret_cast<$1_ltype>(static_cast<intptr_t>($input)); %}
%typemap(freearg) hn_ ## KIND*, const hn_ ## KIND* ""
%typemap(jni) hn_ ## KIND** out "jlongArray"
%typemap(jtype) hn_ ## KIND** out "long[]"
%typemap(jstype) hn_ ## KIND** out "long[]"
%typemap(javain) hn_ ## KIND** out "$javainput"
%typemap(in) hn_ ## KIND** out (hn_ ## KIND* temp = nullptr) %{
  if (!hn_jni::CheckHolder(jenv, $input)) return $null;
  $1 = ($1_ltype)&temp;
%}
%typemap(argout) hn_ ## KIND** out %{
  if (temp$argnum != nullptr) {
    jlong value = static_cast<jlong>(reinterpret_cast<intptr_t>(temp$argnum));
    jenv->SetLongArrayRegion($input, 0, 1, &value);
  }
%}
%enddef
HN_HANDLE_KINDS(HN_JAVA_HANDLE)

/* Arrays of handles in (long[]; null -> NULL with count 0). */
%define HN_JAVA_HANDLES_IN(DECL)
%typemap(jni) DECL "jlongArray"
%typemap(jtype) DECL "long[]"
%typemap(jstype) DECL "long[]"
%typemap(javain) DECL "$javainput"
%typemap(in) DECL (hn_jni::LongsIn handles) %{
  if (!handles.Init(jenv, $input, true)) return $null;
  $1 = reinterpret_cast<$1_ltype>(const_cast<int64_t*>(handles.get()));
  $2 = static_cast<$2_ltype>(handles.size());
%}
%enddef
HN_JAVA_HANDLES_IN((const hn_symbol* const* inputs, size_t num_inputs))
HN_JAVA_HANDLES_IN((hn_symbol* const* inputs, size_t num_inputs))
HN_JAVA_HANDLES_IN((const hn_symbol* const* symbols, size_t num_symbols))
HN_JAVA_HANDLES_IN((hn_symbol* const* symbols, size_t num_symbols))
HN_JAVA_HANDLES_IN((const hn_tensor* const* inputs, size_t num_inputs))
HN_JAVA_HANDLES_IN((hn_tensor* const* inputs, size_t num_inputs))

/* Tensor outputs: long[] whose length is the capacity; filled with new handles. */
%typemap(jni) (size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) "jlongArray"
%typemap(jtype) (size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) "long[]"
%typemap(jstype) (size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) "long[]"
%typemap(javain) (size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) "$javainput"
%typemap(in) (size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs)
    (std::vector<hn_tensor*> tensors, size_t count = 0) %{
  if (!hn_jni::CheckHolder(jenv, $input)) return $null;
  tensors.assign(static_cast<size_t>(jenv->GetArrayLength($input)), nullptr);
  $1 = tensors.size();
  $2 = tensors.data();
  $3 = &count;
%}
%typemap(argout) (size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) %{
  if (result == HN_OK) {
    for (size_t i = 0; i < count$argnum; ++i) {
      jlong value = static_cast<jlong>(reinterpret_cast<intptr_t>(tensors$argnum[i]));
      jenv->SetLongArrayRegion($input, static_cast<jsize>(i), 1, &value);
    }
  }
%}

/* ---- shapes -------------------------------------------------------------------------------- */
%typemap(jni) (const int64_t* shape, int ndim) "jlongArray"
%typemap(jtype) (const int64_t* shape, int ndim) "long[]"
%typemap(jstype) (const int64_t* shape, int ndim) "long[]"
%typemap(javain) (const int64_t* shape, int ndim) "$javainput"
%typemap(in) (const int64_t* shape, int ndim) (hn_jni::LongsIn dims) %{
  if (!dims.Init(jenv, $input, false)) return $null;
  $1 = ($1_ltype)dims.get();
  $2 = static_cast<int>(dims.size());
%}

%typemap(jni) const int64_t* dims "jlongArray"
%typemap(jtype) const int64_t* dims "long[]"
%typemap(jstype) const int64_t* dims "long[]"
%typemap(javain) const int64_t* dims "$javainput"
%typemap(in) const int64_t* dims (hn_jni::LongsIn values) %{
  if (!values.Init(jenv, $input, true)) return $null;
  $1 = ($1_ltype)values.get();
%}

%typemap(jni) const int* ndims "jintArray"
%typemap(jtype) const int* ndims "int[]"
%typemap(jstype) const int* ndims "int[]"
%typemap(javain) const int* ndims "$javainput"
%typemap(in) const int* ndims (hn_jni::IntsIn values) %{
  if (!values.Init(jenv, $input)) return $null;
  $1 = ($1_ltype)values.get();
%}

/* hn_symbol_print_summary's column ends: double[] or null (MXNet's defaults). */
%typemap(jni) const double* positions "jdoubleArray"
%typemap(jtype) const double* positions "double[]"
%typemap(jstype) const double* positions "double[]"
%typemap(javain) const double* positions "$javainput"
%typemap(in) const double* positions (std::vector<double> position_values) %{
  if ($input != nullptr) {
    position_values.resize(static_cast<size_t>(jenv->GetArrayLength($input)));
    jenv->GetDoubleArrayRegion($input, 0, static_cast<jsize>(position_values.size()),
                               position_values.data());
    if (jenv->ExceptionCheck()) return $null;
    $1 = position_values.data();
  }
%}

/* hn_model_export_onnx's dtypes: int[] or null (NULL: float32 inputs). */
%typemap(jni) const int* dtypes "jintArray"
%typemap(jtype) const int* dtypes "int[]"
%typemap(jstype) const int* dtypes "int[]"
%typemap(javain) const int* dtypes "$javainput"
%typemap(in) const int* dtypes (hn_jni::IntsIn dtype_values) %{
  if (!dtype_values.Init(jenv, $input)) return $null;
  $1 = ($1_ltype)dtype_values.get();
%}

%typemap(jni) (const int64_t** out_dims, int* out_ndim) "jobjectArray"
%typemap(jtype) (const int64_t** out_dims, int* out_ndim) "long[][]"
%typemap(jstype) (const int64_t** out_dims, int* out_ndim) "long[][]"
%typemap(javain) (const int64_t** out_dims, int* out_ndim) "$javainput"
%typemap(in) (const int64_t** out_dims, int* out_ndim)
    (const int64_t* dims = nullptr, int ndim = 0) %{
  if (!hn_jni::CheckHolder(jenv, $input, true)) return $null;
  $1 = $input != nullptr ? ($1_ltype)&dims : nullptr;
  $2 = $input != nullptr ? &ndim : nullptr;
%}
%typemap(argout) (const int64_t** out_dims, int* out_ndim) %{
  if ($input != nullptr && result == HN_OK) {
    jlongArray values = jenv->NewLongArray(ndim$argnum);
    if (values != nullptr) {
      if (ndim$argnum > 0) {
        jenv->SetLongArrayRegion(values, 0, ndim$argnum, reinterpret_cast<const jlong*>(dims$argnum));
      }
      jenv->SetObjectArrayElement($input, 0, values);
      jenv->DeleteLocalRef(values);
    }
  }
%}

/* ---- element data: float[] (copied by the C function; pinned, not copied, by JNI) ---------- */
%typemap(jni) (const void* data, size_t data_bytes) "jfloatArray"
%typemap(jtype) (const void* data, size_t data_bytes) "float[]"
%typemap(jstype) (const void* data, size_t data_bytes) "float[]"
%typemap(javain) (const void* data, size_t data_bytes) "$javainput"
%typemap(in) (const void* data, size_t data_bytes) (hn_jni::CriticalArray pinned) %{
  if (!pinned.Init(jenv, $input, true)) return $null;
  $2 = static_cast<size_t>(pinned.length()) * sizeof(float);
%}
%typemap(check) (const void* data, size_t data_bytes) %{
  if (!pinned$argnum.Pin()) return $null;
  $1 = ($1_ltype)pinned$argnum.get();
%}
%typemap(argout) (const void* data, size_t data_bytes) %{ pinned$argnum.Release(JNI_ABORT); %}

%typemap(jni) (void* buffer, size_t buffer_bytes) "jfloatArray"
%typemap(jtype) (void* buffer, size_t buffer_bytes) "float[]"
%typemap(jstype) (void* buffer, size_t buffer_bytes) "float[]"
%typemap(javain) (void* buffer, size_t buffer_bytes) "$javainput"
%typemap(in) (void* buffer, size_t buffer_bytes) (hn_jni::CriticalArray pinned) %{
  if (!pinned.Init(jenv, $input, false)) return $null;
  $2 = static_cast<size_t>(pinned.length()) * sizeof(float);
%}
%typemap(check) (void* buffer, size_t buffer_bytes) %{
  if (!pinned$argnum.Pin()) return $null;
  $1 = ($1_ltype)pinned$argnum.get();
%}
%typemap(argout) (void* buffer, size_t buffer_bytes) %{ pinned$argnum.Release(0); %}

/* Direct FloatBuffers (zero-copy: the C function reads or writes the buffer's memory). */
%typemap(jni) (const void* nio_in, size_t nio_in_bytes), (void* nio_out, size_t nio_out_bytes) "jobject"
%typemap(jtype) (const void* nio_in, size_t nio_in_bytes), (void* nio_out, size_t nio_out_bytes) "java.nio.FloatBuffer"
%typemap(jstype) (const void* nio_in, size_t nio_in_bytes), (void* nio_out, size_t nio_out_bytes) "java.nio.FloatBuffer"
%typemap(javain) (const void* nio_in, size_t nio_in_bytes), (void* nio_out, size_t nio_out_bytes) "$javainput"
%typemap(in) (const void* nio_in, size_t nio_in_bytes) (void* address = nullptr, size_t bytes = 0) %{
  if (!hn_jni::DirectFloats(jenv, $input, &address, &bytes)) return $null;
  $1 = ($1_ltype)address;
  $2 = bytes;
%}
%typemap(in) (void* nio_out, size_t nio_out_bytes) (void* address = nullptr, size_t bytes = 0) %{
  if (!hn_jni::DirectFloats(jenv, $input, &address, &bytes)) return $null;
  $1 = ($1_ltype)address;
  $2 = bytes;
%}

/* Byte buffers: model JSON, .params bytes. */
%define HN_JAVA_BYTES_IN(DECL)
%typemap(jni) DECL "jbyteArray"
%typemap(jtype) DECL "byte[]"
%typemap(jstype) DECL "byte[]"
%typemap(javain) DECL "$javainput"
%typemap(in) DECL (hn_jni::BytesIn bytes) %{
  if (!bytes.Init(jenv, $input)) return $null;
  $1 = ($1_ltype)bytes.get();
  $2 = bytes.size();
%}
%enddef
HN_JAVA_BYTES_IN((const char* json, size_t json_bytes))
HN_JAVA_BYTES_IN((const void* params, size_t params_bytes))
HN_JAVA_BYTES_IN((const void* bytes, size_t num_bytes))

/* ---- training (autograd, optimizers, trainer, metrics, data loader) ------------------------ */
%typemap(jni) int64_t batch_size "jlong"
%typemap(jtype) int64_t batch_size "long"
%typemap(jstype) int64_t batch_size "long"
%typemap(javain) int64_t batch_size "$javainput"
%typemap(in) int64_t batch_size %{ $1 = static_cast<int64_t>($input); %}
HN_JAVA_STRINGS_IN(const char* const* keys)
HN_JAVA_STRINGS_IN(const char* const* values)
HN_JAVA_STRINGS_IN(const char* const* param_names)
HN_JAVA_SCALAR_OUT(float, jfloat, jfloatArray, float[], SetFloatArrayRegion, OUT_FLOAT)
HN_JAVA_SCALAR_OUT(double, jdouble, jdoubleArray, double[], SetDoubleArrayRegion, OUT_DOUBLE)
%apply int* OUT_INT {
  int* out_previous, int* out_recording, int* out_training, int* out_has_gradient,
  int* out_num_update, int* out_index_count
};
%apply int64_t* OUT_I64 { int64_t* out_num_batches };
/* The profiler's state and clock. */
%apply int64_t* OUT_I64 { int64_t* out_ns };
%apply const char** OUT_STR { const char** out_state };
%apply size_t* OUT_SIZE { size_t* out_num_values };
%apply float* OUT_FLOAT { float* out_lr, float* out_rescale_grad };
%apply double* OUT_DOUBLE { double* out_num_inst, double* out_sum_metric, double* out_value };
%apply const char** OUT_STR { const char** out_kind };
HN_JAVA_HANDLES_IN((hn_tensor* const* variables, size_t num_variables))
HN_JAVA_HANDLES_IN((hn_tensor* const* heads, size_t num_heads))
HN_JAVA_HANDLES_IN((hn_tensor* const* labels, size_t num_labels))
HN_JAVA_HANDLES_IN((hn_tensor* const* preds, size_t num_preds))
HN_JAVA_HANDLES_IN((hn_tensor* const* arrays, size_t num_arrays))

/* Arrays of handles whose count is another argument's (long[] or null; 0 elements are NULL). */
%define HN_JAVA_HANDLE_ARRAY_IN(DECL)
%typemap(jni) DECL "jlongArray"
%typemap(jtype) DECL "long[]"
%typemap(jstype) DECL "long[]"
%typemap(javain) DECL "$javainput"
%typemap(in) DECL (hn_jni::LongsIn handles) %{
  if (!handles.Init(jenv, $input, true)) return $null;
  $1 = reinterpret_cast<$1_ltype>(const_cast<int64_t*>(handles.get()));
%}
%enddef
HN_JAVA_HANDLE_ARRAY_IN(hn_tensor* const* gradients)
HN_JAVA_HANDLE_ARRAY_IN(hn_tensor* const* head_grads)
HN_JAVA_HANDLE_ARRAY_IN(hn_block* const* blocks)

/* hn_autograd_mark_variables's grad_reqs: int[] (one per variable). */
%typemap(jni) const int* grad_reqs "jintArray"
%typemap(jtype) const int* grad_reqs "int[]"
%typemap(jstype) const int* grad_reqs "int[]"
%typemap(javain) const int* grad_reqs "$javainput"
%typemap(in) const int* grad_reqs (hn_jni::IntsIn req_values) %{
  if (!req_values.Init(jenv, $input)) return $null;
  $1 = ($1_ltype)req_values.get();
%}

/* hn_autograd_grad(_v2)'s out_grads: a long[] with one slot per variable, filled with new
 * handles. Its length must be num_variables (the C function writes that many). */
%typemap(jni) hn_tensor** out_grads "jlongArray"
%typemap(jtype) hn_tensor** out_grads "long[]"
%typemap(jstype) hn_tensor** out_grads "long[]"
%typemap(javain) hn_tensor** out_grads "$javainput"
%typemap(in) hn_tensor** out_grads (std::vector<hn_tensor*> grads) %{
  if (!hn_jni::CheckHolder(jenv, $input)) return $null;
  grads.assign(static_cast<size_t>(jenv->GetArrayLength($input)), nullptr);
  $1 = grads.data();
%}
%typemap(argout) hn_tensor** out_grads %{
  if (result == HN_OK) {
    for (size_t i = 0; i < grads$argnum.size(); ++i) {
      jlong value = static_cast<jlong>(reinterpret_cast<intptr_t>(grads$argnum[i]));
      jenv->SetLongArrayRegion($input, static_cast<jsize>(i), 1, &value);
    }
  }
%}

/* hn_data_loader_next's batch: as the tensor outputs above (capacity = the array's length). */
%typemap(jni) (size_t max_fields, hn_tensor** batch, size_t* out_num_fields) "jlongArray"
%typemap(jtype) (size_t max_fields, hn_tensor** batch, size_t* out_num_fields) "long[]"
%typemap(jstype) (size_t max_fields, hn_tensor** batch, size_t* out_num_fields) "long[]"
%typemap(javain) (size_t max_fields, hn_tensor** batch, size_t* out_num_fields) "$javainput"
%typemap(in) (size_t max_fields, hn_tensor** batch, size_t* out_num_fields)
    (std::vector<hn_tensor*> fields, size_t count = 0) %{
  if (!hn_jni::CheckHolder(jenv, $input)) return $null;
  fields.assign(static_cast<size_t>(jenv->GetArrayLength($input)), nullptr);
  $1 = fields.size();
  $2 = fields.data();
  $3 = &count;
%}
%typemap(argout) (size_t max_fields, hn_tensor** batch, size_t* out_num_fields) %{
  if (result == HN_OK) {
    for (size_t i = 0; i < fields$argnum.size(); ++i) {
      jlong value = static_cast<jlong>(reinterpret_cast<intptr_t>(fields$argnum[i]));
      jenv->SetLongArrayRegion($input, static_cast<jsize>(i), 1, &value);
    }
  }
%}
