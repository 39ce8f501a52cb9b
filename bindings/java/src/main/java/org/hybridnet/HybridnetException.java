package org.hybridnet;

import java.nio.charset.StandardCharsets;

/**
 * An error reported by the native library: the C status category ({@link #status()}) and the
 * library's message (naming the function and, where it applies, the op, node, file or parameter
 * and what was expected). Each category has its own subclass, so callers can catch exactly the
 * failures they handle, e.g. {@code catch (HybridnetException.NotFound e)}.
 *
 * <p>Unchecked, like {@link IllegalArgumentException}: most failures are programming or data
 * errors. Misuse of the Java objects themselves (a call after {@code close()}) is an {@link
 * IllegalStateException}, not a HybridnetException.
 */
public class HybridnetException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status status;
  private final int code;
  private final String nativeMessage;

  protected HybridnetException(int code, String nativeMessage) {
    super(Status.fromCode(code).cName() + ": " + nativeMessage);
    this.status = Status.fromCode(code);
    this.code = code;
    this.nativeMessage = nativeMessage;
  }

  /** The error category. */
  public Status status() {
    return status;
  }

  /** The raw C status value (negative). */
  public int code() {
    return code;
  }

  /** The native library's message without the category prefix. */
  public String nativeMessage() {
    return nativeMessage;
  }

  /** Builds the exception of a C status; called by the JNI glue with the UTF-8 message. */
  static HybridnetException fromNative(int code, byte[] utf8Message) {
    return create(code, new String(utf8Message, StandardCharsets.UTF_8));
  }

  static HybridnetException create(int code, String message) {
    switch (Status.fromCode(code)) {
      case INVALID_ARGUMENT:
        return new InvalidArgument(code, message);
      case SHAPE:
        return new Shape(code, message);
      case DTYPE:
        return new DType(code, message);
      case NOT_FOUND:
        return new NotFound(code, message);
      case IO:
        return new IO(code, message);
      case FORMAT:
        return new Format(code, message);
      case UNSUPPORTED:
        return new Unsupported(code, message);
      case UNTRACEABLE:
        return new Untraceable(code, message);
      case OUT_OF_MEMORY:
        return new OutOfMemory(code, message);
      default:
        return new Internal(code, message);
    }
  }

  /** A bad value: attribute, option, buffer size, out-of-range index. */
  public static class InvalidArgument extends HybridnetException {
    private static final long serialVersionUID = 1L;

    InvalidArgument(int code, String message) {
      super(code, message);
    }
  }

  /** Shapes do not fit together. */
  public static class Shape extends HybridnetException {
    private static final long serialVersionUID = 1L;

    Shape(int code, String message) {
      super(code, message);
    }
  }

  /** A dtype is unsupported or mismatched. */
  public static class DType extends HybridnetException {
    private static final long serialVersionUID = 1L;

    DType(int code, String message) {
      super(code, message);
    }
  }

  /** An unknown op, layer kind, name, file or key. */
  public static class NotFound extends HybridnetException {
    private static final long serialVersionUID = 1L;

    NotFound(int code, String message) {
      super(code, message);
    }
  }

  /** A file could not be opened, read or written. */
  public static class IO extends HybridnetException {
    private static final long serialVersionUID = 1L;

    IO(int code, String message) {
      super(code, message);
    }
  }

  /** A file or string is malformed, truncated or unsupported. */
  public static class Format extends HybridnetException {
    private static final long serialVersionUID = 1L;

    Format(int code, String message) {
      super(code, message);
    }
  }

  /** A valid request this build cannot do. */
  public static class Unsupported extends HybridnetException {
    private static final long serialVersionUID = 1L;

    Unsupported(int code, String message) {
      super(code, message);
    }
  }

  /** Forward code that hybridize cannot record into a graph. */
  public static class Untraceable extends HybridnetException {
    private static final long serialVersionUID = 1L;

    Untraceable(int code, String message) {
      super(code, message);
    }
  }

  /** A native allocation failed. */
  public static class OutOfMemory extends HybridnetException {
    private static final long serialVersionUID = 1L;

    OutOfMemory(int code, String message) {
      super(code, message);
    }
  }

  /** A bug in hybridnet (or a status this binding does not know): please report the message. */
  public static class Internal extends HybridnetException {
    private static final long serialVersionUID = 1L;

    Internal(int code, String message) {
      super(code, message);
    }
  }
}
