#ifndef SKILLHOST_CFFI_SHIM_H
#define SKILLHOST_CFFI_SHIM_H
#include <ffi.h>

/* libffi's type descriptors are global variables; Swift 6 treats imported mutable globals as unsafe shared state,
   so hand out their (constant) addresses through functions. The descriptors are never written after startup. */
static inline ffi_type *skillhost_ffi_type_void(void) { return &ffi_type_void; }
static inline ffi_type *skillhost_ffi_type_uint8(void) { return &ffi_type_uint8; }
static inline ffi_type *skillhost_ffi_type_sint32(void) { return &ffi_type_sint32; }
static inline ffi_type *skillhost_ffi_type_sint64(void) { return &ffi_type_sint64; }
static inline ffi_type *skillhost_ffi_type_double(void) { return &ffi_type_double; }
static inline ffi_type *skillhost_ffi_type_pointer(void) { return &ffi_type_pointer; }
static inline ffi_abi skillhost_ffi_default_abi(void) { return FFI_DEFAULT_ABI; }
#endif
