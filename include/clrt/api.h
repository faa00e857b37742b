/* clrt/api.h — CLRT_API marks the functions the shared library exports.
 *
 * The library is built with hidden visibility: only declarations marked
 * CLRT_API in these public headers are part of libclrt's ABI; internal
 * clrt__ functions stay inside it. */
#ifndef CLRT_API_H
#define CLRT_API_H

#if defined(CLRT_BUILDING_LIBRARY) && defined(__GNUC__)
#define CLRT_API __attribute__((visibility("default")))
#else
#define CLRT_API
#endif

#endif
