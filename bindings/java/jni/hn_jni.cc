// hn_jni.cc: see hn_jni.h.
#include "hn_jni.h"

#include <cstring>
#include <type_traits>

static_assert(std::is_same<jint, int>::value, "int[] arguments are passed as C ints");
static_assert(sizeof(jlong) == sizeof(int64_t), "long[] arguments are passed as int64_t");

namespace hn_jni {

ClassCache g_cache;

namespace {

JavaVM* g_vm = nullptr;

jclass GlobalClass(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (local == nullptr) return nullptr;
  auto global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

// Filled in JNI_OnLoad (the class loader of the code calling System.load, i.e. the facade's).
bool InitCache(JNIEnv* env) {
  ClassCache c;
  c.exception = GlobalClass(env, "org/hybridnet/HybridnetException");
  if (c.exception == nullptr) return false;
  c.from_native =
      env->GetStaticMethodID(c.exception, "fromNative", "(I[B)Lorg/hybridnet/HybridnetException;");
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
  jfieldID utf8_field = env->GetStaticFieldID(charsets, "UTF_8", "Ljava/nio/charset/Charset;");
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
  if (bytes != nullptr && n > 0) {
    env->SetByteArrayRegion(bytes, 0, static_cast<jsize>(n), reinterpret_cast<const jbyte*>(s));
  }
  return bytes;
}

}  // namespace

jstring NewString(JNIEnv* env, const char* s) {
  if (s == nullptr) return nullptr;
  if (IsAscii(s)) return env->NewStringUTF(s);
  jbyteArray bytes = NewBytes(env, s, std::strlen(s));
  if (bytes == nullptr) return nullptr;
  auto str = static_cast<jstring>(
      env->NewObject(g_cache.string_class, g_cache.string_from_bytes, bytes, g_cache.utf8));
  env->DeleteLocalRef(bytes);
  return str;
}

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

bool CheckHolder(JNIEnv* env, jarray holder, bool nullable) {
  if (holder == nullptr) {
    if (nullable) return true;
    ThrowNew(env, "java/lang/NullPointerException", "hybridnet: output holder array is null");
    return false;
  }
  if (env->GetArrayLength(holder) < 1) {
    ThrowNew(env, "java/lang/IllegalArgumentException", "hybridnet: output holder array is empty");
    return false;
  }
  return true;
}

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

// ---- argument holders -------------------------------------------------------------------------

Utf8In::~Utf8In() {
  if (chars_ != nullptr) env_->ReleaseStringUTFChars(str_, chars_);
}

bool Utf8In::Init(JNIEnv* env, jstring str) {
  env_ = env;
  str_ = str;
  if (str == nullptr) return true;
  chars_ = env->GetStringUTFChars(str, nullptr);
  if (chars_ == nullptr) return false;
  // Modified UTF-8 equals UTF-8 unless it encodes U+0000 (C0 80) or surrogates (ED ..).
  bool standard = true;
  for (const char* p = chars_; *p != '\0'; ++p) {
    auto ch = static_cast<unsigned char>(*p);
    if (ch == 0xC0 || ch == 0xED) {
      standard = false;
      break;
    }
  }
  if (standard) return true;
  env->ReleaseStringUTFChars(str, chars_);
  chars_ = nullptr;
  auto bytes =
      static_cast<jbyteArray>(env->CallObjectMethod(str, g_cache.string_get_bytes, g_cache.utf8));
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

bool Utf8ArrayIn::Init(JNIEnv* env, jobjectArray array) {
  if (array == nullptr) return true;
  jsize n = env->GetArrayLength(array);
  items_.resize(static_cast<size_t>(n));
  ptrs_.resize(static_cast<size_t>(n));
  for (jsize i = 0; i < n; ++i) {
    auto s = static_cast<jstring>(env->GetObjectArrayElement(array, i));
    if (env->ExceptionCheck()) return false;
    if (s == nullptr) {
      ThrowNew(env, "java/lang/NullPointerException", "hybridnet: null element in a String[]");
      return false;
    }
    {
      Utf8In item;  // released before the local reference it reads from is deleted
      if (!item.Init(env, s)) return false;
      items_[static_cast<size_t>(i)] = item.get();
    }
    env->DeleteLocalRef(s);
  }
  for (size_t i = 0; i < items_.size(); ++i) ptrs_[i] = items_[i].c_str();
  present_ = true;
  return true;
}

bool LongsIn::Init(JNIEnv* env, jlongArray array, bool nullable) {
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

bool IntsIn::Init(JNIEnv* env, jintArray array) {
  if (array == nullptr) return true;
  jsize n = env->GetArrayLength(array);
  values_.resize(static_cast<size_t>(n));
  if (n > 0) env->GetIntArrayRegion(array, 0, n, values_.data());
  present_ = true;
  return !env->ExceptionCheck();
}

bool CriticalArray::Init(JNIEnv* env, jarray array, bool nullable) {
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

bool CriticalArray::Pin() {
  if (array_ == nullptr) return true;
  data_ = env_->GetPrimitiveArrayCritical(array_, nullptr);
  if (data_ == nullptr) {
    ThrowNew(env_, "java/lang/OutOfMemoryError", "hybridnet: cannot pin a Java array");
    return false;
  }
  return true;
}

void CriticalArray::Release(jint mode) {
  if (data_ != nullptr) {
    env_->ReleasePrimitiveArrayCritical(array_, data_, mode);
    data_ = nullptr;
  }
}

BytesIn::~BytesIn() {
  if (data_ != nullptr) env_->ReleaseByteArrayElements(array_, data_, JNI_ABORT);
}

bool BytesIn::Init(JNIEnv* env, jbyteArray array) {
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

}  // namespace hn_jni

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* /*reserved*/) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  hn_jni::g_vm = vm;
  return hn_jni::InitCache(env) ? JNI_VERSION_1_8 : JNI_ERR;
}
