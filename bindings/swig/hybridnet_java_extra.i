/* hybridnet_java_extra.i: Java-only entry points (direct NIO buffers, zero-copy), included by
 * hybridnet.i after c_api.h. They are compiled into the JNI library and call only hn_*
 * functions of the C ABI. */

/* ---- Java-only entry points (zero-copy direct buffers); they call only hn_* functions ----- */
%typemap(in, numinputs=0) JNIEnv* jenv %{ $1 = jenv; %}
%typemap(jni) jobject nio_buffer "jobject"
%typemap(jtype) jobject nio_buffer "java.nio.FloatBuffer"
%typemap(jstype) jobject nio_buffer "java.nio.FloatBuffer"
%typemap(javain) jobject nio_buffer "$javainput"
%typemap(in) jobject nio_buffer %{ $1 = $input; %}

%inline %{
/* A float32 tensor over a direct FloatBuffer's memory (no copy). The buffer stays reachable
 * (a JNI global reference) until the last tensor sharing the storage is freed. */
int hn_jni_tensor_wrap(JNIEnv* jenv, const int64_t* shape, int ndim, jobject nio_buffer,
                       hn_tensor** out) {
  void* data = nullptr;
  size_t bytes = 0;
  if (!hn_jni::DirectFloats(jenv, nio_buffer, &data, &bytes)) return HN_ERR_INVALID_ARGUMENT;
  jobject ref = jenv->NewGlobalRef(nio_buffer);
  if (ref == nullptr) return HN_ERR_OUT_OF_MEMORY;
  int rc = hn_tensor_wrap(HN_DTYPE_FLOAT32, shape, ndim, data, bytes, &hn_jni::ReleaseGlobalRef,
                          ref, out);
  if (rc != HN_OK) jenv->DeleteGlobalRef(ref);
  return rc;
}

int hn_jni_tensor_copy_to_nio(const hn_tensor* tensor, void* nio_out, size_t nio_out_bytes) {
  return hn_tensor_copy_to(tensor, nio_out, nio_out_bytes);
}

int hn_jni_tensor_copy_from_nio(hn_tensor* tensor, const void* nio_in, size_t nio_in_bytes) {
  return hn_tensor_copy_from(tensor, nio_in, nio_in_bytes);
}

int hn_jni_predictor_set_input_nio(hn_predictor* predictor, const char* name,
                                   const int64_t* shape, int ndim, const void* nio_in,
                                   size_t nio_in_bytes) {
  return hn_predictor_set_input(predictor, name, HN_DTYPE_FLOAT32, shape, ndim, nio_in,
                                nio_in_bytes);
}

int hn_jni_predictor_get_output_nio(const hn_predictor* predictor, size_t index, void* nio_out,
                                    size_t nio_out_bytes) {
  return hn_predictor_get_output(predictor, index, nio_out, nio_out_bytes);
}
%}

%inline %{
/* Reading `index` of hn_metric_get (its name, borrowed while the metric lives, and its value)
 * and the number of readings: Java asks for each reading by index, so no array of C strings
 * crosses JNI. An index past the count leaves the name and value unset. */
int hn_jni_metric_reading(const hn_metric* metric, int global, size_t index,
                          const char** out_name, double* out_value, size_t* out_count) {
  std::vector<const char*> names(index + 1, nullptr);
  std::vector<double> values(index + 1, 0.0);
  size_t count = 0;
  int rc = hn_metric_get(metric, global, index + 1, names.data(), values.data(), &count);
  if (rc != HN_OK) return rc;
  if (out_count != nullptr) *out_count = count;
  if (index < count) {
    if (out_name != nullptr) *out_name = names[index];
    if (out_value != nullptr) *out_value = values[index];
  }
  return HN_OK;
}
%}
