/*
 * Compile-time checks of the v1 ABI layout on this platform. Built into every target that depends on SkillSDK,
 * so a change to skill_sdk.h that moves a field breaks the build instead of breaking plugins at run time.
 */
#include "skill_sdk.h"

#include <stddef.h>

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
_Static_assert(offsetof(skill_plugin, name) == 8, "skill_plugin.name moved");
_Static_assert(offsetof(skill_plugin, skill_count) == 32, "skill_plugin.skill_count moved");
_Static_assert(offsetof(skill_plugin, free_string) == 64, "skill_plugin.free_string moved");
_Static_assert(sizeof(skill_plugin) == 72, "skill_plugin v1.0 size changed");
_Static_assert(offsetof(skill_descriptor, id) == 8, "skill_descriptor.id moved");
_Static_assert(offsetof(skill_descriptor, risk) == 40, "skill_descriptor.risk moved");
_Static_assert(offsetof(skill_descriptor, invoke) == 56, "skill_descriptor.invoke moved");
_Static_assert(sizeof(skill_descriptor) == 80, "skill_descriptor v1.0 size changed");
_Static_assert(sizeof(skill_call_api) == 64, "skill_call_api v1.0 size changed");
_Static_assert(sizeof(skill_host) == 40, "skill_host v1.0 size changed");
#endif
