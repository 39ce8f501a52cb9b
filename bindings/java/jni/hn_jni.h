// hn_jni.h: the JNI support code of the Java binding: argument conversions (real UTF-8 strings,
// arrays pinned or copied), Java exceptions for failed C calls, and the class cache filled by
// JNI_OnLoad. The typemaps of bindings/swig/hybridnet_java.i call only these; hn_jni.cc is
// compiled with the project's warnings (as errors) into libhybridnet_jni.so beside SWIG's
// wrapper.
#pragma once

#include <jni.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hybridnet/c_api.h"

static_assert(sizeof(void*) == sizeof(jlong), "handles are stored in Java longs");

namespace hn_jni {

/// Classes and methods looked up once, by JNI_OnLoad.
struct ClassCache {
  jclass exception = nullptr;  // org.hybridnet.HybridnetException
  jmethodID from_native = nullptr;
  jclass string_class = nullptr;  // java.lang.String
  jmethodID string_from_bytes = nullptr;
  jmethodID string_get_bytes = nullptr;
  jobject utf8 = nullptr;  // StandardCharsets.UTF_8
};
extern ClassCache g_cache;

/// A Java String from UTF-8 (NULL -> null). ASCII takes the fast path.
jstring NewString(JNIEnv* env, const char* s);

/// Throws the facade's exception for a failed call, unless a Java exception is pending already
/// (then that one, e.g. a NullPointerException from a typemap, is the better report).
void ThrowStatus(JNIEnv* env, int status);
/// Throws `java_class` with `message` unless an exception is pending.
void ThrowNew(JNIEnv* env, const char* java_class, const char* message);

/// A holder array (Java out-parameter): non-null with at least one element.
bool CheckHolder(JNIEnv* env, jarray holder, bool nullable = false);

/// A direct FloatBuffer: its address and size in bytes (capacity x 4).
bool DirectFloats(JNIEnv* env, jobject buffer, void** data, size_t* bytes);
/// The deleter of wrapped direct buffers: drops the global reference that kept the buffer (and
/// so its memory) alive. Runs on the thread that frees the last tensor sharing the storage.
void ReleaseGlobalRef(void* data, void* arg);

/// The argument holders below release what they hold when the wrapper returns: never copied.
class Scoped {
 public:
  Scoped() = default;
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;
};

/// A String argument as NUL-terminated standard UTF-8 (null -> NULL). Released on scope exit.
class Utf8In : Scoped {
 public:
  ~Utf8In();
  bool Init(JNIEnv* env, jstring str);
  const char* get() const { return use_owned_ ? owned_.c_str() : chars_; }

 private:
  JNIEnv* env_ = nullptr;
  jstring str_ = nullptr;
  const char* chars_ = nullptr;
  std::string owned_;
  bool use_owned_ = false;
};

/// A String[] argument as an array of C strings (null array -> NULL).
class Utf8ArrayIn {
 public:
  bool Init(JNIEnv* env, jobjectArray array);
  const char* const* get() const { return present_ ? ptrs_.data() : nullptr; }
  size_t size() const { return items_.size(); }

 private:
  std::vector<std::string> items_;
  std::vector<const char*> ptrs_;
  bool present_ = false;
};

/// A long[] argument as int64_t values (shape dims, handles); small arrays stay on the stack.
class LongsIn {
 public:
  bool Init(JNIEnv* env, jlongArray array, bool nullable);
  const int64_t* get() const { return data_; }
  jsize size() const { return n_; }

 private:
  static constexpr size_t kInline = 32;
  jlong inline_[kInline];
  std::vector<jlong> heap_;
  const int64_t* data_ = nullptr;
  jsize n_ = 0;
};

/// An int[] argument.
class IntsIn {
 public:
  bool Init(JNIEnv* env, jintArray array);
  const int* get() const { return present_ ? values_.data() : nullptr; }

 private:
  std::vector<int> values_;
  bool present_ = false;
};

/// A float[] pinned with Get/ReleasePrimitiveArrayCritical. No JNI function may be called while
/// it is held, so the "in" typemap only checks the argument, the "check" typemap (which runs
/// after every "in" typemap, right before the call) pins it, and the argout typemap (the first
/// JNI-calling code after the call, as the array precedes any out-parameter) releases it. The
/// destructor covers early returns.
class CriticalArray : Scoped {
 public:
  ~CriticalArray() { Release(JNI_ABORT); }
  bool Init(JNIEnv* env, jarray array, bool nullable);
  bool Pin();
  void Release(jint mode);
  void* get() const { return data_; }
  jsize length() const { return length_; }

 private:
  JNIEnv* env_ = nullptr;
  jarray array_ = nullptr;
  void* data_ = nullptr;
  jsize length_ = 0;
};

/// A byte[] copied out of the Java heap (for long native work such as parsing a model, which
/// must not run inside a critical section).
class BytesIn : Scoped {
 public:
  ~BytesIn();
  bool Init(JNIEnv* env, jbyteArray array);
  const void* get() const { return data_; }
  size_t size() const { return static_cast<size_t>(length_); }

 private:
  JNIEnv* env_ = nullptr;
  jbyteArray array_ = nullptr;
  jbyte* data_ = nullptr;
  jsize length_ = 0;
};

}  // namespace hn_jni
