package org.hybridnet.internal;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;

/**
 * Loads libhybridnet.so.0 and the JNI library once per class loader, in this order:
 *
 * <ol>
 *   <li>{@code -Dhybridnet.native.dir=DIR}: DIR/libhybridnet.so.0 then DIR/libhybridnet_jni.so;
 *   <li>the copies inside the JAR ({@code /org/hybridnet/native/linux-x86_64/}), extracted to a
 *       private temporary folder under {@code java.io.tmpdir} (or {@code
 *       -Dhybridnet.native.extract.dir}), loaded, and deleted at once (the mappings stay);
 *   <li>{@code System.loadLibrary("hybridnet_jni")} from {@code java.library.path}.
 * </ol>
 *
 * Nothing is downloaded and no environment variable is needed. After loading, the library's ABI
 * generation is compared with the one this JAR was built for.
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

  private static void loadLibraries() {
    String dir = System.getProperty("hybridnet.native.dir");
    if (dir != null && !dir.isEmpty()) {
      File d = new File(dir).getAbsoluteFile();
      loadPair(new File(d, CORE_LIB), new File(d, JNI_LIB), "-Dhybridnet.native.dir=" + d);
      source = d.getPath();
      return;
    }
    String platform = platform();
    if (PLATFORM.equals(platform)
        && NativeLoader.class.getResource(RESOURCE_DIR + JNI_LIB) != null) {
      loadFromJar();
      return;
    }
    try {
      System.loadLibrary("hybridnet_jni");
      source = "java.library.path";
    } catch (UnsatisfiedLinkError e) {
      String why =
          PLATFORM.equals(platform)
              ? "this JAR does not contain " + RESOURCE_DIR + JNI_LIB
              : "this JAR contains native libraries for " + PLATFORM + " only, not " + platform;
      throw new UnsatisfiedLinkError(
          "hybridnet: cannot load the native library: "
              + why
              + ", and System.loadLibrary(\"hybridnet_jni\") failed ("
              + e.getMessage()
              + "). Use a hybridnet JAR built for "
              + platform
              + ", or point -Dhybridnet.native.dir at a folder holding "
              + CORE_LIB
              + " and "
              + JNI_LIB
              + ".");
    }
  }

  private static void loadFromJar() {
    String base = System.getProperty("hybridnet.native.extract.dir", System.getProperty("java.io.tmpdir"));
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
      loadPair(core.toFile(), jni.toFile(), "the JAR (extracted to " + dir + ")");
      source = "the JAR";
    } catch (IOException e) {
      throw new UnsatisfiedLinkError(
          "hybridnet: cannot extract the native libraries from the JAR into "
              + base
              + ": "
              + e
              + ". Set -Dhybridnet.native.extract.dir=DIR (a writable folder on a file system"
              + " that allows executable mappings), or -Dhybridnet.native.dir=DIR with the"
              + " libraries already there.");
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

  private static void loadPair(File core, File jni, String from) {
    try {
      // The core first: the JNI library's NEEDED libhybridnet.so.0 then resolves to this copy.
      System.load(core.getPath());
      System.load(jni.getPath());
    } catch (UnsatisfiedLinkError e) {
      String msg = String.valueOf(e.getMessage());
      String hint = "";
      if (msg.contains("libopenblas") || msg.contains("libgfortran")) {
        hint =
            " hybridnet needs the OpenBLAS runtime of the system: install it with"
                + " 'apt-get install libopenblas0' (Debian/Ubuntu) or 'dnf install openblas'"
                + " (Fedora/RHEL).";
      }
      throw new UnsatisfiedLinkError(
          "hybridnet: cannot load the native library ("
              + platform()
              + ") from "
              + from
              + ": "
              + msg
              + "."
              + hint);
    }
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
              + "). Use the libraries bundled with the JAR (remove -Dhybridnet.native.dir or"
              + " the stale libhybridnet_jni.so from java.library.path), or a JAR matching the"
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
