"""A model of the commands in the Khronos OpenCL registry (cl.xml).

Reads the XML once and answers what the generators need: each command's
C signature, where it comes from (a core version or an extension), how each
value is passed, which parameters are callbacks, and what the exception
tables in tables.py say about it.
"""

import re
import xml.etree.ElementTree as ET

import tables


def _text(elem):
    """An element's text with the registry's alignment spaces folded."""
    s = " ".join("".join(elem.itertext()).split())
    s = re.sub(r"\s*\*", " *", s)          # "cl_event* x" -> "cl_event *x"
    s = re.sub(r"\* (?=[\w(*])", "*", s)   # "char * *x" -> "char **x"
    s = s.replace("( ", "(").replace(" )", ")")
    return s.replace("(CL_CALLBACK *", "(CL_CALLBACK *")


def version_macro(extension):
    """The macro in which OpenCL-Headers releases from 2023 on give an
    extension's revision."""
    return extension.upper() + "_EXTENSION_VERSION"


def version_number(revision):
    """A revision "0.9.8" as CL_MAKE_VERSION computes it, written out:
    Debian 12's headers define CL_MAKE_VERSION only for target 300 and up,
    and an #if cannot name an undefined function-like macro."""
    major, minor, patch = revision.split(".")
    return "((%s << 22) | (%s << 12) | %s)" % (major, minor, patch)


def _depends(expr):
    """A registry `depends` expression ("CL_VERSION_2_0+cl_khr_semaphore",
    "," for or) as a preprocessor condition."""
    expr = re.sub(r"\w+", lambda m: "defined(%s)" % m.group(0), expr)
    return "(%s)" % expr.replace("+", " && ").replace(",", " || ")


class Param:
    def __init__(self, elem, reg):
        self.name = elem.find("name").text
        types = [t.text for t in elem.findall("type")]
        self.base = types[0] if types else None   # a callback has none
        decl = _text(elem)
        self.callback = "(CL_CALLBACK" in decl
        if decl.endswith("[]"):                # "void *svm_pointers[]"
            decl = decl[:-2].replace(self.name, "*" + self.name)
        self.decl = decl
        # The type alone, for casts, typedefs and struct members.
        self.type = re.sub(r"\b%s\b" % self.name, "", decl, count=1).strip()
        if self.callback:
            self.ctype = "FUNCTION"
            # The callback's own parameters, (type, name), from
            # "void (CL_CALLBACK *pfn)(cl_event event, void *user_data)".
            inner = decl[decl.index(")(") + 2:-1]
            self.cb_params = []
            for i, arg in enumerate(inner.split(", ")):
                if arg.endswith("*"):      # unnamed: "void *"
                    arg += "arg%d" % i
                m = re.match(r"(.*?)(\w+)(\[\])?$", arg)
                ctype = m.group(1).strip() + (" *" if m.group(3) else "")
                self.cb_params.append((ctype.replace("* *", "**"),
                                       m.group(2)))
        elif "*" in self.type:
            self.ctype = "POINTER"
        else:
            self.ctype = reg.ctype_of(self.base)


class Command:
    def __init__(self, elem, reg):
        proto = elem.find("proto")
        self.name = proto.find("name").text
        self.result = _text(proto).rsplit(self.name, 1)[0].strip()
        if self.result.endswith("*"):
            self.result_ctype = "POINTER"
        else:
            self.result_ctype = reg.ctype_of(proto.find("type").text)
        self.result_base = proto.find("type").text
        self.params = [Param(p, reg) for p in elem.findall("param")]
        self.origin = None        # feature (core) or extension name
        self.core = False
        # What the OpenCL headers must provide for clgc to declare the
        # wrapper: preprocessor conditions, all of which must hold (see
        # Registry.header_guard).
        self.needs = []

    @property
    def resolved(self):
        """Whether the wrapper takes the function from the platform
        (clGetExtensionFunctionAddressForPlatform) instead of calling the
        loader's symbol: every extension command, and core commands of a
        version newer than the loader clgc links against."""
        return not self.core or self.origin not in tables.LOADER_FEATURES

    @property
    def loop_back(self):
        """Whether the driver's dispatch slot for this command may be the
        loader's own function, which would dispatch back to the driver
        (tables.LOOP_BACK_FEATURES): then the wrapper must not call it."""
        return (self.core and self.origin in tables.LOOP_BACK_FEATURES and
                not self.resolved and self.name in tables.ICD_DISPATCH and
                self.dispatch_object() is not None)

    @property
    def callback(self):
        return any(p.callback for p in self.params)

    @property
    def lifetime(self):
        """How long a registration of its callback lives (tables.CALLBACKS),
        or None."""
        assert self.name in tables.CALLBACKS or not self.callback, (
            "%s takes a callback: add it to tables.CALLBACKS" % self.name)
        return tables.CALLBACKS.get(self.name)

    def callback_param(self):
        return next((p for p in self.params if p.callback), None)

    @property
    def may_block(self):
        return self.name in tables.MAY_BLOCK or any(
            p.name.startswith("blocking") for p in self.params)

    @property
    def handwritten(self):
        return self.name in tables.HANDWRITTEN

    @property
    def returns_void(self):
        return self.result == "void"

    def param(self, name):
        return next((p for p in self.params if p.name == name), None)

    def prototype(self, prefix):
        args = ", ".join(p.decl for p in self.params) or "void"
        sep = "" if self.result.endswith("*") else " "
        return "%s%sCL_API_CALL %s%s(%s)" % (self.result, sep, prefix,
                                             self.name, args)

    def dispatch_object(self):
        """The object the wrapper checks or resolves by: (C expression,
        error for an unknown one or "0", whether it must be an ICD object);
        None if the command has no object at all."""
        if self.name in tables.DISPATCH_OBJECT:
            expr, err = tables.DISPATCH_OBJECT[self.name]
            return expr, err, err != "0"
        for p in self.params:
            if "*" in p.type:
                continue
            if p.base in tables.ICD_OBJECTS:
                return p.name, tables.ICD_OBJECTS[p.base], True
            if p.base in tables.EXTENSION_OBJECTS:
                return p.name, tables.EXTENSION_OBJECTS[p.base], False
        return None


class Registry:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.typedefs = {}
        self.type_order = [t.get("name") or t.findtext("name")
                           for t in root.find("types")]
        for t in root.find("types"):
            name = t.find("name")
            if t.get("category") != "define" or name is None:
                continue
            text = "".join(t.itertext())
            inner = t.find("type")
            before = text.rsplit(name.text, 1)[0]
            if "*" in before:
                self.typedefs[name.text] = ("POINTER", text)
            elif inner is not None:
                self.typedefs[name.text] = (inner.text, text)
            else:
                self.typedefs[name.text] = ("STRUCT", text)
        self.commands = {}
        for c in root.find("commands"):
            cmd = Command(c, self)
            self.commands[cmd.name] = cmd
        # Where each type comes from: the first feature or extension that
        # requires it.
        self.provider = {}
        for f in root.findall("feature"):
            for t in f.iter("type"):
                self.provider.setdefault(t.get("name"), f.get("name"))
            for c in f.iter("command"):
                cmd = self.commands[c.get("name")]
                cmd.core, cmd.origin = True, f.get("name")
        self.extension_info = {}
        self.platform_guard = {}
        for e in root.find("extensions"):
            name = e.get("name")
            self.extension_info[name] = (e.get("revision"),
                                         e.get("experimental") == "true")
            for t in e.iter("type"):
                self.provider.setdefault(t.get("name"), name)
            for req in e.findall("require"):
                for c in req.iter("command"):
                    cmd = self.commands[c.get("name")]
                    if cmd.origin is None:
                        cmd.origin = name
                        if req.get("depends"):
                            cmd.needs.append(_depends(req.get("depends")))
                    guard = tables.PLATFORM_EXTENSIONS.get(name)
                    if guard:
                        self.platform_guard[cmd.name] = guard
        foreign = {t.get("name") for t in root.find("types")
                   if t.get("category") == "include" and t.get("requires")}
        for cmd in self.commands.values():
            uses = {p.base for p in cmd.params} & foreign
            assert not uses or cmd.name in self.platform_guard, (
                "%s needs %s: add its extension to PLATFORM_EXTENSIONS"
                % (cmd.name, sorted(uses)))
            self._find_needs(cmd)
        self.sorted = sorted(self.commands.values(), key=lambda c: c.name)
        self.extensions = [c for c in self.sorted if not c.core]
        self.resolved = [c for c in self.sorted if c.resolved]

    def provides(self, origin):
        """The condition under which the OpenCL headers provide what
        `origin` (a feature or an extension) adds, or None when every
        header release does: a version the target includes, an extension
        the headers declare, and for an experimental extension a revision
        with the registry's signatures (CLGC_HAVE_<extension>, which
        clgc/wrappers.h defines): they change between revisions."""
        if origin in tables.ALWAYS_PROVIDED:
            return None
        if origin.startswith("CL_VERSION_"):
            return "defined(%s)" % origin
        _, experimental = self.extension_info[origin]
        if experimental:
            return "defined(CLGC_HAVE_%s)" % origin
        if origin in tables.OLD_HEADER_GUARDS:
            return "(defined(%s) || defined(%s))" % (
                origin, tables.OLD_HEADER_GUARDS[origin])
        return "defined(%s)" % origin

    def experimental(self):
        """(extension, its version macro, [revisions]) for each experimental
        extension, in registry order: the registry's revision and those
        tables.SAME_SIGNATURES adds."""
        return [(name, version_macro(name),
                 [revision] + tables.SAME_SIGNATURES.get(name, []))
                for name, (revision, experimental)
                in self.extension_info.items() if experimental]

    def type_condition(self, name):
        """The condition under which the OpenCL headers define type `name`,
        or None when every release does."""
        if name in tables.TYPE_SINCE:
            ext, revision = tables.TYPE_SINCE[name]
            return "(defined(%s) && %s >= %s)" % (
                version_macro(ext), version_macro(ext),
                version_number(revision))
        origin = self.provider.get(name)
        return self.provides(origin) if origin else None

    def fallback_types(self):
        """(condition, typedef) for each type from an extension that the
        commands use, for the library and the stub ICD, which define every
        wrapper whatever the headers they are built with declare. Where the
        condition fails the registry's typedef stands in (a structure only
        by its tag: the wrappers pass structures by pointer); where it holds
        the same typedef again is a harmless C11 redefinition."""
        used = {p.base for c in self.sorted if not self.guard(c)
                for p in c.params if p.base}
        used |= {c.result_base for c in self.sorted if not self.guard(c)}
        out = []
        for name in self.type_order:
            if name not in used or not self.provider.get(name, "").startswith(
                    "cl_"):
                continue
            cond = self.type_condition(name)
            if cond is None:
                continue
            if name in self.typedefs:
                text = " ".join(self.typedefs[name][1].split())
            else:
                text = "typedef struct _%s %s;" % (name, name)
            out.append((cond, text))
        return out

    def _find_needs(self, cmd):
        """What the headers must provide to declare cmd: its own feature
        (the target version) or experimental extension, and the origin of
        every type in its signature. A ratified extension's command needs
        only its types: headers that lack the extension but have the types
        (Debian 12's, for clSetContentSizeBufferPoCL) declare it."""
        own = self.provides(cmd.origin)
        if own and (cmd.core or self.extension_info[cmd.origin][1]):
            cmd.needs.insert(0, own)
        types = [p.base for p in cmd.params if p.base]
        types.append(cmd.result_base)
        for t in types:
            need = self.type_condition(t)
            if need and need not in cmd.needs:
                cmd.needs.append(need)
        # A version implies the earlier ones.
        versions = sorted(n for n in cmd.needs
                          if n.startswith("defined(CL_VERSION_"))
        cmd.needs = [n for n in cmd.needs
                     if n not in versions or n == versions[-1]]
        if cmd.name in self.platform_guard:
            cmd.needs.append("defined(%s)" % self.platform_guard[cmd.name])

    def header_guard(self, cmd):
        """The preprocessor condition under which clgc/wrappers.h declares
        cmd's wrapper (and clgc/dropin.h maps its name), or None."""
        return " && ".join(cmd.needs) or None

    def ctype_of(self, name):
        seen = 0
        while name not in tables.BASE_CTYPES:
            kind, _ = self.typedefs.get(name, ("POINTER", None))
            if kind in ("POINTER", "STRUCT"):
                return kind
            name = kind
            seen += 1
            assert seen < 16, name
        return tables.BASE_CTYPES[name]

    def guard(self, cmd):
        """The include guard a platform-only command is declared under."""
        return self.platform_guard.get(cmd.name)

    def foreign_types(self):
        """Typedefs that platform-only commands need and Linux lacks: the
        registry's own for CL types only they use, stand-ins for the rest."""
        used_elsewhere = {p.base for c in self.sorted if not self.guard(c)
                          for p in c.params}
        out = {}
        for c in self.sorted:
            if not self.guard(c):
                continue
            for p in c.params:
                b = p.base
                if b in used_elsewhere or b in out:
                    continue
                if b in tables.FOREIGN_TYPES:
                    out[b] = tables.FOREIGN_TYPES[b]
                elif b in self.typedefs:
                    out[b] = " ".join(self.typedefs[b][1].split())
                else:
                    out[b] = "typedef struct %s %s;" % (b, b)
        return out
