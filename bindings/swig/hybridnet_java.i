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

%{
#include <jni.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

static_assert(sizeof(void*) == sizeof(jlong), "handles are stored in Java longs");

namespace hn_jni {

JavaVM* g_vm = nullptr;

struct ClassCache {
  jclass exception = nullptr;     /* org.hybridnet.HybridnetException */
  jmethodID from_native = nullptr;
  jclass string_class = nullptr;  /* java.lang.String */
  jmethodID string_from_bytes = nullptr;
  jmethodID string_get_bytes = nullptr;
  jobject utf8 = nullptr;         /* StandardCharsets.UTF_8 */
};

/* Filled in JNI_OnLoad (the class loader of the code calling System.load, i.e. the facade's). */
ClassCache g_cache;

jclass GlobalClass(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (local == nullptr) return nullptr;
  jclass global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

bool InitCache(JNIEnv* env) {
  ClassCache c;
  c.exception = GlobalClass(env, "org/hybridnet/HybridnetException");
  if (c.exception == nullptr) return false;
  c.from_native = env->GetStaticMethodID(c.exception, "fromNative",
                                         "(I[B)Lorg/hybridnet/HybridnetException;");
  if (c.from_native == nullptr) return false;
  c.string_class = GlobalClass(env, "java/lang/String");
  if (c.string_class == nullptr) return false;
  c.string_from_bytes =
      env->GetMethodID(c.string_class, "<init>", "([BLjava/nio/charset/Charset;)V");
  c.string_get_bytes =
      env->GetMethodID(c.string_class, "getBytes", "(Ljava/nio/charset/Charset;)[B");
  jclass charsets = env->FindClass("java/nio/charset/StandardCharsets");
  if (c.string_from_bytes == nullptr || c.string_get_bytes == nullptr || charsets == nullptr) {
    return false;
  }
  jfieldID utf8_field =
      env->GetStaticFieldID(charsets, "UTF_8", "Ljava/nio/charset/Charset;");
  if (utf8_field == nullptr) return false;
  jobject utf8 = env->GetStaticObjectField(charsets, utf8_field);
  if (utf8 == nullptr) return false;
  c.utf8 = env->NewGlobalRef(utf8);
  env->DeleteLocalRef(utf8);
  env->DeleteLocalRef(charsets);
  g_cache = c;
  return true;
}

bool IsAscii(const char* s) {
  for (; *s != '\0'; ++s)
    if (static_cast<unsigned char>(*s) >= 0x80) return false;
  return true;
}

jbyteArray NewBytes(JNIEnv* env, const char* s, size_t n) {
  jbyteArray bytes = env->NewByteArray(static_cast<jsize>(n));
  if (bytes != nullptr && n > 0)
    env->SetByteArrayRegion(bytes, 0, static_cast<jsize>(n), reinterpret_cast<const jbyte*>(s));
  return bytes;
}

/* A Java String from UTF-8 (NULL -> null). ASCII takes the fast path. */
jstring NewString(JNIEnv* env, const char* s) {
  if (s == nullptr) return nullptr;
  if (IsAscii(s)) return env->NewStringUTF(s);
  jbyteArray bytes = NewBytes(env, s, std::strlen(s));
  if (bytes == nullptr) return nullptr;
  jstring str = static_cast<jstring>(
      env->NewObject(g_cache.string_class, g_cache.string_from_bytes, bytes, g_cache.utf8));
  env->DeleteLocalRef(bytes);
  return str;
}

/* Throws the facade's exception for a failed call, unless a Java exception is pending already
 * (then that one, e.g. a NullPointerException from a typemap, is the better report). */
void ThrowStatus(JNIEnv* env, int status) {
  if (env->ExceptionCheck()) return;
  const char* msg = hn_last_error();
  jbyteArray bytes = NewBytes(env, msg, std::strlen(msg));
  if (bytes == nullptr) return;
  jobject ex = env->CallStaticObjectMethod(g_cache.exception, g_cache.from_native,
                                           static_cast<jint>(status), bytes);
  env->DeleteLocalRef(bytes);
  if (env->ExceptionCheck() || ex == nullptr) return;
  env->Throw(static_cast<jthrowable>(ex));
  env->DeleteLocalRef(ex);
}

void ThrowNew(JNIEnv* env, const char* java_class, const char* message) {
  if (env->ExceptionCheck()) return;
  jclass cls = env->FindClass(java_class);
  if (cls != nullptr) env->ThrowNew(cls, message);
}

/* A holder array (Java out-parameter): non-null with at least one element. */
bool CheckHolder(JNIEnv* env, jarray holder, bool nullable = false) {
  if (holder == nullptr) {
    if (nullable) return true;
    ThrowNew(env, "java/lang/NullPointerException", "hybridnet: output holder array is null");
    return false;
  }
  if (env->GetArrayLength(holder) < 1) {
    ThrowNew(env, "java/lang/IllegalArgumentException",
             "hybridnet: output holder array is empty");
    return false;
  }
  return true;
}

/* A String argument as NUL-terminated standard UTF-8 (null -> NULL). Released on scope exit. */
class Utf8In {
 public:
  Utf8In() = default;
  Utf8In(const Utf8In&) = delete;
  Utf8In& operator=(const Utf8In&) = delete;
  ~Utf8In() {
    if (chars_ != nullptr) env_->ReleaseStringUTFChars(str_, chars_);
  }
  bool Init(JNIEnv* env, jstring str) {
    env_ = env;
    str_ = str;
    if (str == nullptr) return true;
    chars_ = env->GetStringUTFChars(str, nullptr);
    if (chars_ == nullptr) return false;
    /* Modified UTF-8 equals UTF-8 unless it encodes U+0000 (C0 80) or surrogates (ED ..). */
    bool standard = true;
    for (const char* p = chars_; *p != '\0'; ++p) {
      unsigned char ch = static_cast<unsigned char>(*p);
      if (ch == 0xC0 || ch == 0xED) {
        standard = false;
        break;
      }
    }
    if (standard) return true;
    env->ReleaseStringUTFChars(str, chars_);
    chars_ = nullptr;
    jbyteArray bytes = static_cast<jbyteArray>(
        env->CallObjectMethod(str, g_cache.string_get_bytes, g_cache.utf8));
    if (bytes == nullptr || env->ExceptionCheck()) return false;
    jsize n = env->GetArrayLength(bytes);
    owned_.assign(static_cast<size_t>(n), '\0');
    if (n > 0) env->GetByteArrayRegion(bytes, 0, n, reinterpret_cast<jbyte*>(&owned_[0]));
    env->DeleteLocalRef(bytes);
    if (owned_.find('\0') != std::string::npos) {
      ThrowNew(env, "java/lang/IllegalArgumentException",
               "hybridnet: strings passed to the native library must not contain U+0000");
      return false;
    }
    use_owned_ = true;
    return true;
  }
  const char* get() const {
    if (use_owned_) return owned_.c_str();
    return chars_;
  }

 private:
  JNIEnv* env_ = nullptr;
  jstring str_ = nullptr;
  const char* chars_ = nullptr;
  std::string owned_;
  bool use_owned_ = false;
};

/* A String[] argument as an array of C strings (null array -> NULL). */
class Utf8ArrayIn {
 public:
  bool Init(JNIEnv* env, jobjectArray array) {
    if (array == nullptr) return true;
    jsize n = env->GetArrayLength(array);
    items_.resize(static_cast<size_t>(n));
    ptrs_.resize(static_cast<size_t>(n));
    for (jsize i = 0; i < n; ++i) {
      jstring s = static_cast<jstring>(env->GetObjectArrayElement(array, i));
      if (env->ExceptionCheck()) return false;
      if (s == nullptr) {
        ThrowNew(env, "java/lang/NullPointerException", "hybridnet: null element in a String[]");
        return false;
      }
      {
        Utf8In tmp;  // released before the local reference it reads from is deleted
        if (!tmp.Init(env, s)) return false;
        items_[static_cast<size_t>(i)] = tmp.get();
      }
      env->DeleteLocalRef(s);
    }
    for (size_t i = 0; i < items_.size(); ++i) ptrs_[i] = items_[i].c_str();
    present_ = true;
    return true;
  }
  const char* const* get() const { return present_ ? ptrs_.data() : nullptr; }
  size_t size() const { return items_.size(); }

 private:
  std::vector<std::string> items_;
  std::vector<const char*> ptrs_;
  bool present_ = false;
};

/* A long[] argument as int64_t values (shape dims); small arrays stay on the stack. */
class LongsIn {
 public:
  bool Init(JNIEnv* env, jlongArray array, bool nullable) {
    if (array == nullptr) {
      if (nullable) return true;
      ThrowNew(env, "java/lang/NullPointerException", "hybridnet: long[] argument is null");
      return false;
    }
    n_ = env->GetArrayLength(array);
    if (static_cast<size_t>(n_) > kInline) heap_.resize(static_cast<size_t>(n_));
    jlong* dst = static_cast<size_t>(n_) > kInline ? heap_.data() : inline_;
    if (n_ > 0) env->GetLongArrayRegion(array, 0, n_, dst);
    data_ = reinterpret_cast<const int64_t*>(dst);
    return !env->ExceptionCheck();
  }
  const int64_t* get() const { return data_; }
  jsize size() const { return n_; }

 private:
  static constexpr size_t kInline = 32;
  jlong inline_[kInline];
  std::vector<jlong> heap_;
  const int64_t* data_ = nullptr;
  jsize n_ = 0;
};

/* An int[] argument. */
class IntsIn {
 public:
  bool Init(JNIEnv* env, jintArray array) {
    if (array == nullptr) return true;
    jsize n = env->GetArrayLength(array);
    values_.resize(static_cast<size_t>(n));
    if (n > 0) env->GetIntArrayRegion(array, 0, n, values_.data());
    present_ = true;
    return !env->ExceptionCheck();
  }
  const int* get() const { return present_ ? reinterpret_cast<const int*>(values_.data()) : nullptr; }

 private:
  std::vector<jint> values_;
  bool present_ = false;
};

/* A float[] pinned with Get/ReleasePrimitiveArrayCritical. No JNI function may be called while
 * it is held, so the "in" typemap only checks the argument, the "check" typemap (which runs
 * after every "in" typemap, right before the call) pins it, and the argout typemap (the first
 * JNI-calling code after the call, as the array precedes any out-parameter) releases it. The
 * destructor covers early returns. */
class CriticalArray {
 public:
  CriticalArray() = default;
  CriticalArray(const CriticalArray&) = delete;
  CriticalArray& operator=(const CriticalArray&) = delete;
  ~CriticalArray() { Release(JNI_ABORT); }
  bool Init(JNIEnv* env, jarray array, bool nullable) {
    env_ = env;
    array_ = array;
    if (array == nullptr) {
      if (nullable) return true;
      ThrowNew(env, "java/lang/NullPointerException", "hybridnet: array argument is null");
      return false;
    }
    length_ = env->GetArrayLength(array);
    return true;
  }
  bool Pin() {
    if (array_ == nullptr) return true;
    data_ = env_->GetPrimitiveArrayCritical(array_, nullptr);
    if (data_ == nullptr) {
      ThrowNew(env_, "java/lang/OutOfMemoryError", "hybridnet: cannot pin a Java array");
      return false;
    }
    return true;
  }
  void Release(jint mode) {
    if (data_ != nullptr) {
      env_->ReleasePrimitiveArrayCritical(array_, data_, mode);
      data_ = nullptr;
    }
  }
  void* get() const { return data_; }
  jsize length() const { return length_; }

 private:
  JNIEnv* env_ = nullptr;
  jarray array_ = nullptr;
  void* data_ = nullptr;
  jsize length_ = 0;
};

/* A byte[] copied out of the Java heap (for long native work such as parsing a model, which
 * must not run inside a critical section). */
class BytesIn {
 public:
  BytesIn() = default;
  BytesIn(const BytesIn&) = delete;
  BytesIn& operator=(const BytesIn&) = delete;
  ~BytesIn() {
    if (data_ != nullptr) env_->ReleaseByteArrayElements(array_, data_, JNI_ABORT);
  }
  bool Init(JNIEnv* env, jbyteArray array) {
    env_ = env;
    array_ = array;
    if (array == nullptr) {
      ThrowNew(env, "java/lang/NullPointerException", "hybridnet: byte[] argument is null");
      return false;
    }
    length_ = env->GetArrayLength(array);
    data_ = env->GetByteArrayElements(array, nullptr);
    return data_ != nullptr;
  }
  const void* get() const { return data_; }
  size_t size() const { return static_cast<size_t>(length_); }

 private:
  JNIEnv* env_ = nullptr;
  jbyteArray array_ = nullptr;
  jbyte* data_ = nullptr;
  jsize length_ = 0;
};

/* A direct FloatBuffer: its address and size in bytes (capacity x 4). */
bool DirectFloats(JNIEnv* env, jobject buffer, void** data, size_t* bytes) {
  if (buffer == nullptr) {
    ThrowNew(env, "java/lang/NullPointerException", "hybridnet: FloatBuffer argument is null");
    return false;
  }
  void* address = env->GetDirectBufferAddress(buffer);
  jlong capacity = env->GetDirectBufferCapacity(buffer);
  if (address == nullptr || capacity < 0) {
    ThrowNew(env, "java/lang/IllegalArgumentException",
             "hybridnet: the FloatBuffer must be direct (ByteBuffer.allocateDirect(n)"
             ".order(ByteOrder.nativeOrder()).asFloatBuffer())");
    return false;
  }
  *data = address;
  *bytes = static_cast<size_t>(capacity) * sizeof(float);
  return true;
}

/* The deleter of wrapped direct buffers: drops the global reference that kept the buffer (and
 * so its memory) alive. Runs on the thread that frees the last tensor sharing the storage. */
void ReleaseGlobalRef(void* /*data*/, void* arg) {
  if (g_vm == nullptr || arg == nullptr) return;
  JNIEnv* env = nullptr;
  jint rc = g_vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8);
  if (rc == JNI_OK) {
    env->DeleteGlobalRef(static_cast<jobject>(arg));
  } else if (rc == JNI_EDETACHED &&
             g_vm->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), nullptr) == JNI_OK) {
    env->DeleteGlobalRef(static_cast<jobject>(arg));
    g_vm->DetachCurrentThread();
  }
}

}  // namespace hn_jni

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* /*reserved*/) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  hn_jni::g_vm = vm;
  if (!hn_jni::InitCache(env)) return JNI_ERR;
  return JNI_VERSION_1_8;
}
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

/* ---- handles ------------------------------------------------------------------------------- */
%define HN_JAVA_HANDLE(TYPE)
%typemap(jni) TYPE*, const TYPE* "jlong"
%typemap(jtype) TYPE*, const TYPE* "long"
%typemap(jstype) TYPE*, const TYPE* "long"
%typemap(javain) TYPE*, const TYPE* "$javainput"
%typemap(in) TYPE*, const TYPE* %{ $1 = reinterpret_cast<$1_ltype>(static_cast<intptr_t>($input)); %}
%typemap(freearg) TYPE*, const TYPE* ""
%typemap(jni) TYPE** out "jlongArray"
%typemap(jtype) TYPE** out "long[]"
%typemap(jstype) TYPE** out "long[]"
%typemap(javain) TYPE** out "$javainput"
%typemap(in) TYPE** out (TYPE* temp = nullptr) %{
  if (!hn_jni::CheckHolder(jenv, $input)) return $null;
  $1 = ($1_ltype)&temp;
%}
%typemap(argout) TYPE** out %{
  if (temp$argnum != nullptr) {
    jlong value = static_cast<jlong>(reinterpret_cast<intptr_t>(temp$argnum));
    jenv->SetLongArrayRegion($input, 0, 1, &value);
  }
%}
%enddef
HN_JAVA_HANDLE(hn_tensor)
HN_JAVA_HANDLE(hn_tensor_list)
HN_JAVA_HANDLE(hn_symbol)
HN_JAVA_HANDLE(hn_shape_info)
HN_JAVA_HANDLE(hn_block)
HN_JAVA_HANDLE(hn_model)
HN_JAVA_HANDLE(hn_predictor)

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
