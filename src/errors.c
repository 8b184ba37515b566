/* Names and messages of clgc's error codes, from CLGC_ERRNO_MAP. */

#include "internal.h"

const char *
clgc_strerror(int code)
{
    switch (code) {
    case CLGC_OK:
        return "success";
#define CLGC__ERRNO_MSG(name, value, message)                                  \
    case CLGC_##name:                                                          \
        return message;
        CLGC_ERRNO_MAP(CLGC__ERRNO_MSG)
#undef CLGC__ERRNO_MSG
    }
    return "unknown clgc error";
}

const char *
clgc_err_name(int code)
{
    switch (code) {
    case CLGC_OK:
        return "OK";
#define CLGC__ERRNO_NAME(name, value, message)                                 \
    case CLGC_##name:                                                          \
        return #name;
        CLGC_ERRNO_MAP(CLGC__ERRNO_NAME)
#undef CLGC__ERRNO_NAME
    }
    return "UNKNOWN";
}

const char *
clgc_version(void)
{
    return CLGC_VERSION_STRING;
}
