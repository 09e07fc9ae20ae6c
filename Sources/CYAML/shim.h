#ifndef SKILLHOST_CYAML_SHIM_H
#define SKILLHOST_CYAML_SHIM_H
/* libyaml (Debian libyaml-dev): the YAML front matter of SKILL.md files. */
#include <yaml.h>
#endif
