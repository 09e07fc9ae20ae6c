/*
 * Compile-time checks of the v1 ABI layout on this platform. Built into every target that depends on SkillSDK,
 * so a change to skill_sdk.h that moves a field breaks the build instead of breaking plugins at run time.
 * Fields only ever grow at the end: the v1.0 fields keep their offsets, and each 1.1 field starts where the v1.0
 * struct ended (the host's minimum sizes are those v1.0 sizes).
 */
#include "skill_sdk.h"

#include <stddef.h>

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
/* v1.0 */
_Static_assert(offsetof(skill_plugin, name) == 8, "skill_plugin.name moved");
_Static_assert(offsetof(skill_plugin, skill_count) == 32, "skill_plugin.skill_count moved");
_Static_assert(offsetof(skill_plugin, free_string) == 64, "skill_plugin.free_string moved");
_Static_assert(offsetof(skill_descriptor, id) == 8, "skill_descriptor.id moved");
_Static_assert(offsetof(skill_descriptor, risk) == 40, "skill_descriptor.risk moved");
_Static_assert(offsetof(skill_descriptor, invoke) == 56, "skill_descriptor.invoke moved");
_Static_assert(offsetof(skill_call_api, skill_id) == 56, "skill_call_api.skill_id moved");
_Static_assert(offsetof(skill_host, log) == 32, "skill_host.log moved");
/* since 1.1: at the v1.0 ends (72, 80, 64, 40) */
_Static_assert(offsetof(skill_plugin, capabilities) == 72, "skill_plugin.capabilities moved");
_Static_assert(offsetof(skill_plugin, read_paths) == 80, "skill_plugin.read_paths moved");
_Static_assert(offsetof(skill_plugin, snapshot) == 88, "skill_plugin.snapshot moved");
/* (skill_plugin's v1.1 end: 96, where 1.4's fields start) */
_Static_assert(offsetof(skill_descriptor, output_schema) == 80, "skill_descriptor.output_schema moved");
_Static_assert(offsetof(skill_call_api, context) == 64, "skill_call_api.context moved");
_Static_assert(sizeof(skill_call_api) == 72, "skill_call_api v1.1 size changed");
_Static_assert(offsetof(skill_host, log_with) == 40, "skill_host.log_with moved");
_Static_assert(sizeof(skill_host) == 48, "skill_host v1.1 size changed");
/* since 1.2: a new record, handed to typed functions that report errors */
_Static_assert(offsetof(skill_error, code) == 4, "skill_error.code moved");
_Static_assert(offsetof(skill_error, message) == 8, "skill_error.message moved");
_Static_assert(sizeof(skill_error) == 520, "skill_error size changed");
/* since 1.3: at the v1.2 end of skill_descriptor (88) */
_Static_assert(offsetof(skill_descriptor, answer) == 88, "skill_descriptor.answer moved");
/* since 1.4: views — at the v1.3 ends of skill_descriptor (96) and skill_plugin (96), and a new record whose
   minimum (ViewValidator.minimumViewSize) is its 1.4 end up to flags */
_Static_assert(offsetof(skill_descriptor, view) == 96, "skill_descriptor.view moved");
_Static_assert(offsetof(skill_descriptor, audience) == 104, "skill_descriptor.audience moved");
_Static_assert(sizeof(skill_descriptor) == 112, "skill_descriptor v1.4 size changed");
_Static_assert(offsetof(skill_plugin, view_count) == 96, "skill_plugin.view_count moved");
_Static_assert(offsetof(skill_plugin, views) == 104, "skill_plugin.views moved");
_Static_assert(sizeof(skill_plugin) == 112, "skill_plugin v1.4 size changed");
_Static_assert(offsetof(skill_view, html) == 24, "skill_view.html moved");
_Static_assert(offsetof(skill_view, flags) == 48, "skill_view.flags moved");
_Static_assert(offsetof(skill_view, flags) + sizeof(uint32_t) == 52, "skill_view's 1.4 end moved");
#endif
