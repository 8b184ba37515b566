"""The tables that the bindings share, read from the registry (cl.xml):
error names, info queries with their types, the enum groups of their
values and the kinds of OpenCL object. generate.py writes them as
src/gen/names.c; include/clgc/names.h declares them, src/names.c looks
them up.

The registry groups the enums a feature or an extension adds by require
blocks whose comments say what they are ("Error codes", "cl_device_info");
tables.py says which comments make each table, and gives the types of the
info values, which the registry lacks.
"""

import re
import sys
import xml.etree.ElementTree as ET

import tables


def _fail(message):
    sys.exit("generate.py: " + message)


def _number(text):
    """An enum's value as the registry writes it: "0x102B", "-30",
    "(0x1 << 24)"."""
    m = re.fullmatch(r"\((-?\w+) << (\d+)\)", text)
    try:
        if m:
            return int(m.group(1), 0) << int(m.group(2))
        return int(text, 0)
    except ValueError:
        return None             # a C expression: MiscNumbers' list ends


class Names:
    def __init__(self, path, reg):
        root = ET.parse(path).getroot()
        self.values = {}            # enum name -> int
        self.bitmask_blocks = set()
        self.blocks = {}            # <enums> name -> [enum names]
        for block in root.findall("enums"):
            names = self.blocks.setdefault(block.get("name").strip(), [])
            bitmask = block.get("type") == "bitmask"
            for e in block.findall("enum"):
                if e.get("bitpos") is not None:
                    value = 1 << int(e.get("bitpos"))
                else:
                    value = _number(e.get("value"))
                self.values[e.get("name")] = value
                names.append(e.get("name"))
            if bitmask:
                self.bitmask_blocks.add(block.get("name").strip())
        # (comment, enum name, origin) for every enum a feature or an
        # extension requires, in the registry's order.
        self.required = []
        for origin in (list(root.findall("feature")) +
                       list(root.find("extensions"))):
            for req in origin.findall("require"):
                comment = (req.get("comment") or "").strip()
                for e in req.findall("enum"):
                    self.required.append((comment, e.get("name"),
                                          origin.get("name")))
        self.reg = reg
        self.errors = self._errors()
        self.kinds = self._kinds()
        self.families = self._families()
        self.groups = self._groups()

    def value(self, name):
        """The number of enum `name`; stop if the registry has none."""
        if self.values.get(name) is None:
            _fail("the registry gives %s no numeric value" % name)
        return self.values[name]

    def _errors(self):
        out, seen = [], set()
        for comment, name, _ in self.required:
            if name not in seen and any(re.search(p, comment) for p in
                                        tables.ERROR_CODE_COMMENTS):
                seen.add(name)
                out.append((name, self.value(name)))
        for block, names in self.blocks.items():
            if not re.search(tables.ERROR_CODE_BLOCKS, block):
                continue
            for name in names:
                if name not in seen and not re.search(
                        tables.ERROR_CODE_PLACEHOLDERS, name):
                    seen.add(name)
                    out.append((name, self.value(name)))
        return out

    def _kinds(self):
        invalid = dict(tables.ICD_OBJECTS, **tables.EXTENSION_OBJECTS)
        out = []
        for kind, ctype, info, retain, release in tables.OBJECT_KINDS:
            for command in (info, retain, release):
                if command is not None and command not in self.reg.commands:
                    _fail("tables.OBJECT_KINDS names %s, which the registry"
                          " lacks" % command)
            err = invalid[ctype]
            out.append((kind, ctype, info, retain, release, err,
                        self.value(err)))
        return out

    def _families(self):
        kinds = {k[0] for k in self.kinds}
        out = []
        for name, command, kind, prefix, patterns in tables.INFO_FAMILIES:
            if command not in self.reg.commands or kind not in kinds:
                _fail("tables.INFO_FAMILIES: %s names an unknown command or"
                      " kind" % name)
            infos, seen = [], set()
            for comment, enum, origin in self.required:
                if enum in seen or not any(re.search(p, comment)
                                           for p in patterns):
                    continue
                seen.add(enum)
                infos.append([enum, self.value(enum), None, origin])
            self._type_family(name, infos)
            out.append((name, command, kind, prefix, infos))
        return out

    def _type_family(self, family, infos):
        """Each info's (type, group) from tables.INFO_TYPES, or else from a
        name of the family with the same value; stop at one without."""
        types = tables.INFO_TYPES.get(family, {})
        names = {i[0] for i in infos}
        stale = sorted(set(types) - names)
        if stale:
            _fail("tables.INFO_TYPES types names that %s lacks: %s"
                  % (family, ", ".join(stale)))
        by_value = {}
        for info in infos:
            if info[0] in types:
                by_value.setdefault(info[1], types[info[0]])
        untyped = []
        for info in infos:
            spec = types.get(info[0]) or by_value.get(info[1])
            if spec is None:
                untyped.append(info[0])
                continue
            info[2] = (spec.split() + [None])[:2]
        if untyped:
            _fail("no type for %s of %s: add it to tables.INFO_TYPES"
                  % (", ".join(untyped), family))

    def _groups(self):
        used = {i[2][1] for _, _, _, _, infos in self.families
                for i in infos
                if i[2][0] in ("BITFIELD", "ENUM", "ENUM_ARRAY")}
        if any(i[2][0] == "IMAGE_FORMAT" for _, _, _, _, infos in
               self.families for i in infos):
            used |= {"cl_channel_order", "cl_channel_type"}
        used = sorted(used)
        missing = [g for g in used if g not in tables.ENUM_GROUPS]
        if missing:
            _fail("tables.ENUM_GROUPS lacks %s" % ", ".join(missing))
        out = []
        for group in used:
            sources = tables.ENUM_GROUPS[group]
            bitfield = any(s.strip() in self.bitmask_blocks for s in sources)
            names = []
            for s in sources:
                names += self.blocks.get(s.strip(), [])
                names += [n for c, n, _ in self.required if c == s.strip()]
            values, seen = [], set()
            for n in names:
                if n in seen:
                    continue
                v = self.value(n)
                if bitfield and (v <= 0 or v & (v - 1)):
                    continue        # a mask of several bits, or none
                seen.add(n)
                values.append((n, v))
            if not values:
                _fail("tables.ENUM_GROUPS: %s has no values" % group)
            out.append((group, bitfield, values))
        return out


def _str(s):
    return '"%s"' % s if s is not None else "NULL"


def names_c(reg, path):
    n = Names(path, reg)
    out = ['#include "names.h"', "",
           "/* Every error code the registry's features and extensions"
           " require, then",
           " * those only its error-code blocks list (%d). */" % len(n.errors),
           "const struct clgc__cl_error clgc__cl_errors[] = {"]
    out += ['    {%d, "%s"},' % (v, name) for name, v in n.errors]
    out += ["};", "const size_t clgc__n_cl_errors = %d;" % len(n.errors), ""]
    for name, _, _, _, infos in n.families:
        out.append("static const clgc_info_t clgc__i_%s[] = {" % name)
        for enum, value, (type_, group), origin in infos:
            out.append('    {"%s", 0x%X, CLGC_INFO_%s, %s, "%s"},' % (
                enum, value, type_, _str(group), origin))
        out += ["};", ""]
    out.append("const clgc_info_family_t clgc__info_families[] = {")
    for name, command, kind, prefix, infos in n.families:
        out.append('    {"%s", "%s", "%s", "%s", %d, clgc__i_%s},' % (
            name, command, kind, prefix, len(infos), name))
    out += ["};", "const size_t clgc__n_info_families = %d;"
            % len(n.families), ""]
    for group, _, values in n.groups:
        out.append("static const clgc_enum_value_t clgc__e_%s[] = {" % group)
        out += ['    {"%s", INT64_C(%s)},' % (name, hex(v) if v >= 0 else v)
                for name, v in values]
        out += ["};", ""]
    out.append("/* Sorted by name, for clgc_enum_group_find(). */")
    out.append("const clgc_enum_group_t clgc__enum_groups[] = {")
    for group, bitfield, values in n.groups:
        out.append('    {"%s", %d, %d, clgc__e_%s},' % (
            group, int(bitfield), len(values), group))
    out += ["};", "const size_t clgc__n_enum_groups = %d;" % len(n.groups),
            "", "const clgc_object_kind_t clgc__object_kinds[] = {"]
    for kind, ctype, info, retain, release, err, code in n.kinds:
        out.append('    {"%s", "%s", "%s", %s, %s, %d, "%s"},' % (
            kind, ctype, info, _str(retain), _str(release), code, err))
    out += ["};", "const size_t clgc__n_object_kinds = %d;" % len(n.kinds)]
    return "\n".join(out) + "\n"
