package org.hybridnet;

import org.hybridnet.internal.HybridnetNativeConstants;

/** The error categories of the C API ({@code hn_status}), carried by {@link HybridnetException}. */
public enum Status {
  OK(HybridnetNativeConstants.HN_OK),
  INVALID_ARGUMENT(HybridnetNativeConstants.HN_ERR_INVALID_ARGUMENT),
  SHAPE(HybridnetNativeConstants.HN_ERR_SHAPE),
  DTYPE(HybridnetNativeConstants.HN_ERR_DTYPE),
  NOT_FOUND(HybridnetNativeConstants.HN_ERR_NOT_FOUND),
  IO(HybridnetNativeConstants.HN_ERR_IO),
  FORMAT(HybridnetNativeConstants.HN_ERR_FORMAT),
  UNSUPPORTED(HybridnetNativeConstants.HN_ERR_UNSUPPORTED),
  UNTRACEABLE(HybridnetNativeConstants.HN_ERR_UNTRACEABLE),
  OUT_OF_MEMORY(HybridnetNativeConstants.HN_ERR_OUT_OF_MEMORY),
  INTERNAL(HybridnetNativeConstants.HN_ERR_INTERNAL),
  /** A code this version of the binding does not know (from a newer library). */
  UNKNOWN(Integer.MIN_VALUE);

  private final int code;

  Status(int code) {
    this.code = code;
  }

  /** The C status value ({@code HN_ERR_SHAPE} is -2, ...). */
  public int code() {
    return code;
  }

  /** The C name, e.g. {@code "HN_ERR_SHAPE"}. */
  public String cName() {
    switch (this) {
      case OK:
        return "HN_OK";
      case UNKNOWN:
        return "HN_ERR_UNKNOWN";
      default:
        return "HN_ERR_" + name();
    }
  }

  /** The category of a C status value ({@link #UNKNOWN} for values this binding does not know). */
  public static Status fromCode(int code) {
    for (Status s : values()) {
      if (s.code == code) return s;
    }
    return UNKNOWN;
  }
}
