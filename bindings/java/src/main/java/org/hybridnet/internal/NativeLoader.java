package org.hybridnet.internal;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Loads libhybridnet.so.0 and the JNI library once per class loader, in this order:
 *
 * <ol>
 *   <li>a folder of already-extracted libraries, {@code -Dhybridnet.native.dir=DIR} or else the
 *       environment variable {@code HYBRIDNET_NATIVE_DIR}: DIR/libhybridnet.so.0 then
 *       DIR/libhybridnet_jni.so, and nothing else is tried;
 *   <li>the copies inside the JAR ({@code /org/hybridnet/native/linux-x86_64/}), extracted to a
 *       private temporary folder under {@code -Dhybridnet.native.extract.dir}, else {@code
 *       HYBRIDNET_NATIVE_EXTRACT_DIR}, else {@code java.io.tmpdir} (hosts whose /tmp is {@code
 *       noexec} set one of the first two), loaded, and deleted at once (the mappings stay);
 *   <li>{@code System.loadLibrary("hybridnet_jni")} from {@code java.library.path}.
 * </ol>
 *
 * When nothing loads, the error lists every location tried and why each failed. Nothing is
 * downloaded. After loading, the library's ABI generation is compared with the one this JAR was
 * built for.
 */
public final class NativeLoader {
  /** The platform folder of the bundled libraries. */
  public static final String PLATFORM = "linux-x86_64";

  static final String CORE_LIB = "libhybridnet.so.0";
  static final String JNI_LIB = "libhybridnet_jni.so";
  private static final String RESOURCE_DIR = "/org/hybridnet/native/" + PLATFORM + "/";

  private static boolean loaded;
  private static boolean loading;
  private static String failure;
  private static String source = "(not loaded)";

  private NativeLoader() {}

  /**
   * Loads the native libraries if needed. Safe to call from any thread, any number of times.
   *
   * @throws UnsatisfiedLinkError with the platform, what was tried and what to do
   */
  public static synchronized void load() {
    if (loaded) return;
    if (failure != null) throw new UnsatisfiedLinkError(failure);
    if (loading) return; // re-entered from HybridnetNativeJNI's initializer during our own load
    loading = true;
    try {
      loadLibraries();
      checkAbi(HybridnetNativeJNI.hn_abi_version(), HybridnetNativeJNI.hn_version());
      loaded = true;
    } catch (UnsatisfiedLinkError e) {
      failure = e.getMessage();
      throw e;
    } finally {
      loading = false;
    }
  }

  /** Where the libraries were loaded from (a folder, "the JAR" or "java.library.path"). */
  public static synchronized String source() {
    return source;
  }

  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String o = os.startsWith("linux") ? "linux" : os.replaceAll("\\s+", "");
    String a = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64" : arch;
    return o + "-" + a;
  }

  /** A system property, else an environment variable; null when neither is set or both are empty. */
  private static String setting(String property, String variable) {
    String value = System.getProperty(property);
    if (value != null && !value.isEmpty()) return value;
    value = System.getenv(variable);
    return value != null && !value.isEmpty() ? value : null;
  }

  /** Where a setting came from, for messages. */
  private static String origin(String property, String variable) {
    String value = System.getProperty(property);
    return value != null && !value.isEmpty() ? "-D" + property : variable;
  }

  private static void loadLibraries() {
    String dir = setting("hybridnet.native.dir", "HYBRIDNET_NATIVE_DIR");
    if (dir != null) {
      File d = new File(dir).getAbsoluteFile();
      String from = origin("hybridnet.native.dir", "HYBRIDNET_NATIVE_DIR") + "=" + d;
      try {
        loadPair(new File(d, CORE_LIB), new File(d, JNI_LIB));
      } catch (UnsatisfiedLinkError e) {
        throw failure(List.of(from + ": " + e.getMessage()));
      }
      source = d.getPath();
      return;
    }
    List<String> tried = new ArrayList<>();
    String platform = platform();
    if (!PLATFORM.equals(platform)) {
      tried.add("the JAR: it holds native libraries for " + PLATFORM + " only, not " + platform);
    } else if (NativeLoader.class.getResource(RESOURCE_DIR + JNI_LIB) == null) {
      tried.add("the JAR: it does not contain " + RESOURCE_DIR + JNI_LIB);
    } else {
      String base = setting("hybridnet.native.extract.dir", "HYBRIDNET_NATIVE_EXTRACT_DIR");
      String baseOrigin =
          base != null
              ? origin("hybridnet.native.extract.dir", "HYBRIDNET_NATIVE_EXTRACT_DIR")
              : "java.io.tmpdir";
      if (base == null) base = System.getProperty("java.io.tmpdir");
      try {
        loadFromJar(base);
        return;
      } catch (IOException | UnsatisfiedLinkError | InvalidPathException e) {
        tried.add("the JAR's copies, extracted under " + baseOrigin + "=" + base + ": " + e.getMessage());
      }
    }
    try {
      System.loadLibrary("hybridnet_jni");
      source = "java.library.path";
    } catch (UnsatisfiedLinkError e) {
      tried.add(
          "System.loadLibrary(\"hybridnet_jni\") from java.library.path="
              + System.getProperty("java.library.path")
              + ": "
              + e.getMessage());
      throw failure(tried);
    }
  }

  private static UnsatisfiedLinkError failure(List<String> tried) {
    StringBuilder msg =
        new StringBuilder("hybridnet: cannot load the native library (" + platform() + "). Tried:");
    for (int i = 0; i < tried.size(); ++i) msg.append("\n  ").append(i + 1).append(". ").append(tried.get(i));
    msg.append(
        "\nSet -Dhybridnet.native.extract.dir=DIR or HYBRIDNET_NATIVE_EXTRACT_DIR=DIR to a writable"
            + " folder on a file system that allows executable mappings (not a noexec /tmp), or"
            + " -Dhybridnet.native.dir=DIR or HYBRIDNET_NATIVE_DIR=DIR to a folder holding "
            + CORE_LIB
            + " and "
            + JNI_LIB
            + ".");
    String all = String.join(" ", tried);
    if (all.contains("libopenblas") || all.contains("libgfortran")) {
      msg.append(
          " hybridnet needs the OpenBLAS runtime of the system: install it with"
              + " 'apt-get install libopenblas0' (Debian/Ubuntu) or 'dnf install openblas'"
              + " (Fedora/RHEL).");
    }
    if (all.contains("libprotobuf-lite")) {
      msg.append(
          " hybridnet needs the protobuf lite runtime of the system: install it with"
              + " 'apt-get install libprotobuf-lite32' (Debian/Ubuntu) or 'dnf install"
              + " protobuf-lite' (Fedora/RHEL).");
    }
    return new UnsatisfiedLinkError(msg.toString());
  }

  private static void loadFromJar(String base) throws IOException {
    Path dir = null;
    try {
      Path parent = Path.of(base);
      try {
        dir =
            Files.createTempDirectory(
                parent, "hybridnet-", PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
      } catch (UnsupportedOperationException e) {
        dir = Files.createTempDirectory(parent, "hybridnet-");
      }
      Path core = extract(CORE_LIB, dir);
      Path jni = extract(JNI_LIB, dir);
      loadPair(core.toFile(), jni.toFile());
      source = "the JAR";
    } finally {
      if (dir != null) deleteQuietly(dir);
    }
  }

  private static Path extract(String name, Path dir) throws IOException {
    Path target = dir.resolve(name);
    try (InputStream in = NativeLoader.class.getResourceAsStream(RESOURCE_DIR + name)) {
      if (in == null) throw new IOException("resource " + RESOURCE_DIR + name + " is missing");
      Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
    }
    return target;
  }

  private static void loadPair(File core, File jni) {
    // The core first: the JNI library's NEEDED libhybridnet.so.0 then resolves to this copy.
    System.load(core.getPath());
    System.load(jni.getPath());
  }

  /** Fails unless the loaded library has the ABI generation this JAR was built against. */
  static void checkAbi(int libraryAbi, String libraryVersion) {
    int expected = HybridnetNativeConstants.HN_ABI_VERSION;
    if (libraryAbi != expected) {
      throw new UnsatisfiedLinkError(
          "hybridnet: the native library loaded from "
              + source
              + " is version "
              + libraryVersion
              + " with ABI "
              + libraryAbi
              + ", but this hybridnet JAR was built for ABI "
              + expected
              + " (version "
              + HybridnetNativeConstants.HN_VERSION_STRING
              + "). Use the libraries bundled with the JAR (remove -Dhybridnet.native.dir,"
              + " HYBRIDNET_NATIVE_DIR or the stale libhybridnet_jni.so from java.library.path),"
              + " or a JAR matching the"
              + " installed library.");
    }
  }

  private static void deleteQuietly(Path dir) {
    try {
      File[] files = dir.toFile().listFiles();
      if (files != null) {
        for (File f : files) Files.deleteIfExists(f.toPath());
      }
      Files.deleteIfExists(dir);
    } catch (IOException | SecurityException e) {
      dir.toFile().deleteOnExit();
    }
  }
}
