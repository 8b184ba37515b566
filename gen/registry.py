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
        self.params = [Param(p, reg) for p in elem.findall("param")]
        self.origin = None        # feature (core) or extension name
        self.core = False

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
        for f in root.findall("feature"):
            for c in f.iter("command"):
                cmd = self.commands[c.get("name")]
                cmd.core, cmd.origin = True, f.get("name")
        self.platform_guard = {}
        for e in root.find("extensions"):
            for c in e.iter("command"):
                cmd = self.commands[c.get("name")]
                if cmd.origin is None:
                    cmd.origin = e.get("name")
                guard = tables.PLATFORM_EXTENSIONS.get(e.get("name"))
                if guard:
                    self.platform_guard[cmd.name] = guard
        foreign = {t.get("name") for t in root.find("types")
                   if t.get("category") == "include" and t.get("requires")}
        for cmd in self.commands.values():
            uses = {p.base for p in cmd.params} & foreign
            assert not uses or cmd.name in self.platform_guard, (
                "%s needs %s: add its extension to PLATFORM_EXTENSIONS"
                % (cmd.name, sorted(uses)))
        self.sorted = sorted(self.commands.values(), key=lambda c: c.name)
        self.extensions = [c for c in self.sorted if not c.core]

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
