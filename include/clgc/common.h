#ifndef CLGC_COMMON_H
#define CLGC_COMMON_H

/* Export macro, version and error codes shared by every clgc header. */

/* The OpenCL version the program targets: any the OpenCL headers accept
 * (100 to 300; 310 too in releases that know OpenCL 3.1, such as
 * v2026.05.29; older ones warn and fall back to 300). Left undefined, it is
 * 300, the newest that every supported header release knows, so that the
 * program sees the same API whichever headers are installed and the
 * headers print no note about a default. clgc/wrappers.h declares the
 * wrappers of the versions the target includes, from the CL_VERSION_x_y
 * macros the headers derive from it (docs/wrappers.md). */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif

#ifdef __cplusplus
#define CLGC_BEGIN_DECLS extern "C" {
#define CLGC_END_DECLS }
#else
#define CLGC_BEGIN_DECLS
#define CLGC_END_DECLS
#endif

#if defined(__GNUC__)
#define CLGC_EXTERN extern __attribute__((visibility("default")))
#else
#define CLGC_EXTERN extern
#endif

#define CLGC__STRINGIFY(x) #x
#define CLGC__VERSION(a, b, c)                                                 \
    CLGC__STRINGIFY(a) "." CLGC__STRINGIFY(b) "." CLGC__STRINGIFY(c)

/* The library's version. These three numbers are the only place it is
 * written: the string is made from them, and configure.ac reads them for
 * the package version (the tarball's name, clgc.pc). */
#define CLGC_VERSION_MAJOR 0
#define CLGC_VERSION_MINOR 1
#define CLGC_VERSION_PATCH 0
#define CLGC_VERSION_STRING                                                    \
    CLGC__VERSION(CLGC_VERSION_MAJOR, CLGC_VERSION_MINOR, CLGC_VERSION_PATCH)

CLGC_BEGIN_DECLS

/* Every clgc error, as XX(name, value, message). clgc's own calls return
 * CLGC_OK (0) or one of these negative codes (a call that counts returns
 * the count, never negative, or a code); the OpenCL wrappers and the
 * OpenCL-shaped calls return OpenCL's codes. See clgc.h. */
#define CLGC_ERRNO_MAP(XX)                                                     \
    XX(EALREADY, -1, "a runtime is already installed")                         \
    XX(EINUSE, -2,                                                             \
       "clgc was used before a runtime was installed; the "                    \
       "default runtime stays for the life of the process")                    \
    XX(EVERSION, -3, "unknown clgc_runtime_t version")                         \
    XX(EINVAL, -4, "invalid argument")                                         \
    XX(ENOTATTACHED, -5, "the calling thread is not attached to the runtime")  \
    XX(EATTACH, -6, "the runtime refused to attach the calling thread")        \
    XX(ENOMEM, -7, "out of memory")                                            \
    XX(EBUSY, -8, "completions are still to come")                             \
    XX(ESIGNATURE, -9, "malformed signature string")                           \
    XX(EARITY, -10, "wrong number of arguments")                               \
    XX(ETYPE, -11, "argument of the wrong type")                               \
    XX(ENOCOMMAND, -12, "no such OpenCL command")                              \
    XX(ECALLBACK, -13, "a callback's handler failed")                          \
    XX(EDRAINING, -14, "the queue is being drained")                           \
    XX(ESYSTEM, -15, "a system call failed (errno says which)")

typedef enum clgc_errno {
    CLGC_OK = 0,
#define CLGC__ERRNO_ENUM(name, value, message) CLGC_##name = value,
    CLGC_ERRNO_MAP(CLGC__ERRNO_ENUM)
#undef CLGC__ERRNO_ENUM
} clgc_errno_t;

/* Not an error, and so not in clgc_errno_t: the one other success value,
 * which clgc_thread_attach() and a runtime's attach_thread hook return
 * for a thread the runtime knew already (clgc/runtime.h). */
#define CLGC_KNOWN 1

/* A sentence describing code (any int: unknown codes get a generic text).
 * Never NULL; the string is static. Any thread. */
CLGC_EXTERN const char *clgc_strerror(int code);

/* The code's name without prefix ("EALREADY"), or "UNKNOWN". Any thread. */
CLGC_EXTERN const char *clgc_err_name(int code);

/* The library's version as CLGC_VERSION_STRING, fixed at build time. */
CLGC_EXTERN const char *clgc_version(void);

CLGC_END_DECLS

#endif /* CLGC_COMMON_H */
